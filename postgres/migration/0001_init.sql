-- Mocks and their settings. seq gives the listing order and its cursor.
-- Times are timestamptz holding whole milliseconds (see DB.now).
CREATE TABLE mocks (
	seq           bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	id            text        NOT NULL UNIQUE,
	name          text        NOT NULL DEFAULT '',
	private       boolean     NOT NULL DEFAULT false,
	token_hash    bytea,
	content_type  text        NOT NULL,
	status        integer     NOT NULL DEFAULT 200,
	delay_ms      integer     NOT NULL DEFAULT 0,
	rate_limit    bigint,
	monthly_quota bigint,
	size          bigint      NOT NULL,
	etag          text        NOT NULL,
	version       bigint      NOT NULL DEFAULT 1,
	created_at    timestamptz NOT NULL,
	updated_at    timestamptz NOT NULL
);

-- The stored data, apart so that listing mocks never reads it.
CREATE TABLE mock_data (
	mock_id text  NOT NULL PRIMARY KEY REFERENCES mocks (id) ON DELETE CASCADE,
	data    bytea NOT NULL
);

-- Served responses per mock and UTC month ("YYYY-MM").
CREATE TABLE quota_usage (
	mock_id text   NOT NULL REFERENCES mocks (id) ON DELETE CASCADE,
	month   text   NOT NULL,
	used    bigint NOT NULL CHECK (used >= 0),
	PRIMARY KEY (mock_id, month)
);

-- Server-wide secrets and state, such as the admin token hash.
CREATE TABLE settings (
	key   text  NOT NULL PRIMARY KEY,
	value bytea NOT NULL
);
