-- Versions of each mock's data (§9 of the contract): every write of the
-- data adds a version and keeps the one it replaces, up to the store's
-- bound. A row per kept version, the current data included, so that
-- summing size over a set of mocks gives all the data they hold.
-- data_version is the number of the mock's current version: 1, the
-- data it is created with, unless the store says otherwise.
ALTER TABLE mocks ADD COLUMN data_version INTEGER NOT NULL DEFAULT 1;

-- data_file names the version's document in docs/, as mocks.data_file does
-- the current one (the current version's row names the same file). actor_*
-- is who wrote it (decoy.Actor); created_at is in Unix milliseconds.
CREATE TABLE mock_versions (
	mock_id      TEXT    NOT NULL REFERENCES mocks (id) ON DELETE CASCADE,
	version      INTEGER NOT NULL,
	content_type TEXT    NOT NULL,
	size         INTEGER NOT NULL,
	etag         TEXT    NOT NULL,
	created_at   INTEGER NOT NULL,
	actor_kind   TEXT    NOT NULL,
	actor_id     TEXT    NOT NULL DEFAULT '',
	actor_label  TEXT    NOT NULL DEFAULT '',
	data_file    TEXT,
	PRIMARY KEY (mock_id, version)
) WITHOUT ROWID;

-- The data of every existing mock is its version 1, written when it was
-- last changed, by the server administrator (the only writer there was).
-- The data_file of a mock whose document is still in mock_data is set
-- when Open moves it into a file (moveBlobs).
INSERT INTO mock_versions (mock_id, version, content_type, size, etag, created_at, actor_kind, data_file)
SELECT id, 1, content_type, size, etag, updated_at, 'server_admin', data_file FROM mocks;
