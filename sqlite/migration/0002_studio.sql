-- Decoy Studio: sign-in sessions and the usage history of its charts.

-- Sessions: id is the public half of the cookie; only the SHA-256 of the
-- secret half is kept. Times are Unix milliseconds.
CREATE TABLE studio_sessions (
	id           TEXT    NOT NULL PRIMARY KEY,
	secret_hash  BLOB    NOT NULL,
	admin_hash   BLOB    NOT NULL,
	created_at   INTEGER NOT NULL,
	last_seen_at INTEGER NOT NULL,
	expires_at   INTEGER NOT NULL
) WITHOUT ROWID;

-- Served and refused reads per mock and UTC minute (Unix seconds of its
-- start), kept for two hours.
CREATE TABLE usage_minutes (
	mock_id TEXT    NOT NULL REFERENCES mocks (id) ON DELETE CASCADE,
	minute  INTEGER NOT NULL,
	served  INTEGER NOT NULL DEFAULT 0,
	refused INTEGER NOT NULL DEFAULT 0,
	PRIMARY KEY (mock_id, minute)
) WITHOUT ROWID;
CREATE INDEX usage_minutes_minute ON usage_minutes (minute);

-- The same per UTC day (Unix seconds of its midnight), kept for 62 days.
CREATE TABLE usage_days (
	mock_id TEXT    NOT NULL REFERENCES mocks (id) ON DELETE CASCADE,
	day     INTEGER NOT NULL,
	served  INTEGER NOT NULL DEFAULT 0,
	refused INTEGER NOT NULL DEFAULT 0,
	PRIMARY KEY (mock_id, day)
) WITHOUT ROWID;
CREATE INDEX usage_days_day ON usage_days (day);
