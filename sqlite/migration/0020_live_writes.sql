-- Live data (§12 of the contract): a mock's base with its writes applied
-- in order. A write through a route is a row of mock_writes, appended in
-- a small transaction, never a rewrite of the document.
--
-- live_seq is the number of the live data: of the last write, or of the
-- last reset (ResetLive, new data), which takes a number of its own so
-- that numbers never go back. base_seq is the number of the base: the
-- writes up to it are gone from mock_writes, held by the base. base_file
-- names the base a compaction wrote, a document in docs/ as data_file
-- names the current one; NULL when the base is the current version's
-- data. live_size is the live data's size once writes or a base set it
-- apart from the current version (what it counts toward max_bytes), 0
-- until then.
ALTER TABLE mocks ADD COLUMN live_seq INTEGER NOT NULL DEFAULT 0;
ALTER TABLE mocks ADD COLUMN live_size INTEGER NOT NULL DEFAULT 0;
ALTER TABLE mocks ADD COLUMN base_seq INTEGER NOT NULL DEFAULT 0;
ALTER TABLE mocks ADD COLUMN base_file TEXT;

-- A write as decoy.Write keeps it: op (create, replace, update, delete),
-- the collection's path (items), the id field and the record's id as JSON
-- text (field, key), the record byte for byte (NULL for a delete), and
-- when, in Unix milliseconds (at).
CREATE TABLE mock_writes (
	mock_id TEXT    NOT NULL REFERENCES mocks (id) ON DELETE CASCADE,
	seq     INTEGER NOT NULL,
	op      TEXT    NOT NULL,
	items   TEXT    NOT NULL,
	field   TEXT    NOT NULL,
	key     TEXT    NOT NULL,
	record  BLOB,
	at      INTEGER NOT NULL,
	PRIMARY KEY (mock_id, seq)
);
