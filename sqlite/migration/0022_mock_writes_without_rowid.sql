-- mock_writes without a rowid: its rows are kept in the order of their
-- key (mock_id, seq), so that an append writes one page of it, not a page
-- of the table and one of the key's index (a write's commit writes each
-- page it changed to the WAL, and syncs it).
CREATE TABLE mock_writes_by_key (
	mock_id TEXT    NOT NULL REFERENCES mocks (id) ON DELETE CASCADE,
	seq     INTEGER NOT NULL,
	op      TEXT    NOT NULL,
	items   TEXT    NOT NULL,
	field   TEXT    NOT NULL,
	key     TEXT    NOT NULL,
	record  BLOB,
	at      INTEGER NOT NULL,
	PRIMARY KEY (mock_id, seq)
) WITHOUT ROWID;
INSERT INTO mock_writes_by_key (mock_id, seq, op, items, field, key, record, at)
	SELECT mock_id, seq, op, items, field, key, record, at FROM mock_writes;
DROP TABLE mock_writes;
ALTER TABLE mock_writes_by_key RENAME TO mock_writes;
