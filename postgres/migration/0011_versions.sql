-- Versions of each mock's data (§9 of the contract): every write of the
-- data adds a version and keeps the one it replaces, up to the store's
-- bound. A row per kept version, the current data included, so that
-- summing size over a set of mocks gives all the data they hold.
-- data_version is the number of the mock's current version: 1, the
-- data it is created with, unless the store says otherwise.
ALTER TABLE mocks ADD COLUMN data_version bigint NOT NULL DEFAULT 1;

-- A version's document is its chunks, kept: mock_chunks gains the number
-- of the version they belong to, so that a write adds the chunks of its
-- version beside the others rather than copying any.
ALTER TABLE mock_chunks ADD COLUMN version bigint NOT NULL DEFAULT 1;
ALTER TABLE mock_chunks DROP CONSTRAINT mock_chunks_pkey;
ALTER TABLE mock_chunks ADD PRIMARY KEY (mock_id, version, n);
ALTER TABLE mock_chunks ALTER COLUMN version DROP DEFAULT;

-- actor_* is who wrote the version (decoy.Actor).
CREATE TABLE mock_versions (
	mock_id      text        NOT NULL REFERENCES mocks (id) ON DELETE CASCADE,
	version      bigint      NOT NULL,
	content_type text        NOT NULL,
	size         bigint      NOT NULL,
	etag         text        NOT NULL,
	created_at   timestamptz NOT NULL,
	actor_kind   text        NOT NULL,
	actor_id     text        NOT NULL DEFAULT '',
	actor_label  text        NOT NULL DEFAULT '',
	PRIMARY KEY (mock_id, version)
);

-- The data of every existing mock is its version 1, written when it was
-- last changed, by the server administrator (the only writer there was).
INSERT INTO mock_versions (mock_id, version, content_type, size, etag, created_at, actor_kind)
SELECT id, 1, content_type, size, etag, updated_at, 'server_admin' FROM mocks;
