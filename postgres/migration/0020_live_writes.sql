-- Live data (§12 of the contract): a mock's base with its writes applied
-- in order. A write through a route is a row of mock_writes, appended in
-- a small transaction, never a rewrite of the document.
--
-- live_seq is the number of the live data: of the last write, or of the
-- last reset (ResetLive, new data), which takes a number of its own so
-- that numbers never go back. base_seq is the number of the base: the
-- writes up to it are gone from mock_writes, held by the base. base_size
-- is the size of the base a compaction wrote, whose chunks are in
-- mock_base_chunks; NULL when the base is the current version's data.
-- live_size is the live data's size once writes or a base set it apart
-- from the current version (what it counts toward max_bytes), 0 until
-- then.
ALTER TABLE mocks ADD COLUMN live_seq bigint NOT NULL DEFAULT 0;
ALTER TABLE mocks ADD COLUMN live_size bigint NOT NULL DEFAULT 0;
ALTER TABLE mocks ADD COLUMN base_seq bigint NOT NULL DEFAULT 0;
ALTER TABLE mocks ADD COLUMN base_size bigint;

-- A write as decoy.Write keeps it: op (create, replace, update, delete),
-- the collection's path (items), the id field and the record's id as JSON
-- text (field, key), the record byte for byte (NULL for a delete), and
-- when (at).
CREATE TABLE mock_writes (
	mock_id text        NOT NULL REFERENCES mocks (id) ON DELETE CASCADE,
	seq     bigint      NOT NULL,
	op      text        NOT NULL,
	items   text        NOT NULL,
	field   text        NOT NULL,
	key     text        NOT NULL,
	record  bytea,
	at      timestamptz NOT NULL,
	PRIMARY KEY (mock_id, seq)
);

-- A base is stored as documents are (0003_data_chunks.sql), under the
-- number it holds: a compaction writes the chunks of its base beside
-- those of the base before it, then deletes those.
CREATE TABLE mock_base_chunks (
	mock_id text    NOT NULL REFERENCES mocks (id) ON DELETE CASCADE,
	seq     bigint  NOT NULL,
	n       integer NOT NULL CHECK (n >= 0),
	data    bytea   NOT NULL,
	PRIMARY KEY (mock_id, seq, n)
);
