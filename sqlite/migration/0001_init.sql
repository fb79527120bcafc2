-- Mocks and their settings. seq gives the listing order and its cursor.
CREATE TABLE mocks (
	seq           INTEGER PRIMARY KEY AUTOINCREMENT,
	id            TEXT    NOT NULL UNIQUE,
	name          TEXT    NOT NULL DEFAULT '',
	private       INTEGER NOT NULL DEFAULT 0,
	token_hash    BLOB,
	content_type  TEXT    NOT NULL,
	status        INTEGER NOT NULL DEFAULT 200,
	delay_ms      INTEGER NOT NULL DEFAULT 0,
	rate_limit    INTEGER,
	monthly_quota INTEGER,
	size          INTEGER NOT NULL,
	etag          TEXT    NOT NULL,
	version       INTEGER NOT NULL DEFAULT 1,
	created_at    INTEGER NOT NULL,
	updated_at    INTEGER NOT NULL
);

-- The stored data, apart so that listing mocks never reads it.
CREATE TABLE mock_data (
	mock_id TEXT NOT NULL PRIMARY KEY REFERENCES mocks (id) ON DELETE CASCADE,
	data    BLOB NOT NULL
);

-- Served responses per mock and UTC month ("YYYY-MM").
CREATE TABLE quota_usage (
	mock_id TEXT    NOT NULL REFERENCES mocks (id) ON DELETE CASCADE,
	month   TEXT    NOT NULL,
	used    INTEGER NOT NULL,
	PRIMARY KEY (mock_id, month)
) WITHOUT ROWID;

-- Server-wide secrets and state, such as the admin token hash.
CREATE TABLE settings (
	key   TEXT NOT NULL PRIMARY KEY,
	value BLOB NOT NULL
);
