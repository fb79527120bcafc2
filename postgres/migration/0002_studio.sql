-- Decoy Studio: sign-in sessions and the usage history of its charts.

-- Sessions: id is the public half of the cookie; only the SHA-256 of the
-- secret half is kept.
CREATE TABLE studio_sessions (
	id           text        NOT NULL PRIMARY KEY,
	secret_hash  bytea       NOT NULL,
	admin_hash   bytea       NOT NULL,
	created_at   timestamptz NOT NULL,
	last_seen_at timestamptz NOT NULL,
	expires_at   timestamptz NOT NULL
);

-- Served and refused reads per mock and UTC minute (Unix seconds of its
-- start), kept for two hours; every replica adds its own counts.
CREATE TABLE usage_minutes (
	mock_id text   NOT NULL REFERENCES mocks (id) ON DELETE CASCADE,
	minute  bigint NOT NULL,
	served  bigint NOT NULL DEFAULT 0,
	refused bigint NOT NULL DEFAULT 0,
	PRIMARY KEY (mock_id, minute)
);
CREATE INDEX usage_minutes_minute ON usage_minutes (minute);

-- The same per UTC day (Unix seconds of its midnight), kept for 62 days.
CREATE TABLE usage_days (
	mock_id text   NOT NULL REFERENCES mocks (id) ON DELETE CASCADE,
	day     bigint NOT NULL,
	served  bigint NOT NULL DEFAULT 0,
	refused bigint NOT NULL DEFAULT 0,
	PRIMARY KEY (mock_id, day)
);
CREATE INDEX usage_days_day ON usage_days (day);
