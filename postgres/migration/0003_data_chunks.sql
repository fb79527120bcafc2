-- Documents are kept in chunks of at most 1 MiB (chunkSize in data.go), in
-- order of n from 0, so that they are written and read as streams: a bytea
-- value is sent and received whole, and a 256 MiB document in one would be
-- held whole in memory by the server and by every replica reading it. An
-- empty document has no chunks.
CREATE TABLE mock_chunks (
	mock_id text    NOT NULL REFERENCES mocks (id) ON DELETE CASCADE,
	n       integer NOT NULL CHECK (n >= 0),
	data    bytea   NOT NULL,
	PRIMARY KEY (mock_id, n)
);

INSERT INTO mock_chunks (mock_id, n, data)
SELECT d.mock_id, g.n, substring(d.data FROM g.n * 1048576 + 1 FOR 1048576)
FROM mock_data d
CROSS JOIN LATERAL generate_series(0, (length(d.data) - 1) / 1048576) AS g(n)
WHERE length(d.data) > 0;

DROP TABLE mock_data;
