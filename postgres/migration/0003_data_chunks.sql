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

-- Each document is read (decompressed) once: substring() on the stored
-- value would decompress all of it for every chunk.
DO $$
DECLARE
	id  text;
	doc bytea;
BEGIN
	FOR id IN SELECT mock_id FROM mock_data LOOP
		SELECT data || ''::bytea INTO doc FROM mock_data WHERE mock_id = id;
		IF length(doc) > 0 THEN
			FOR n IN 0 .. (length(doc) - 1) / 1048576 LOOP
				INSERT INTO mock_chunks (mock_id, n, data)
				VALUES (id, n, substring(doc FROM n * 1048576 + 1 FOR 1048576));
			END LOOP;
		END IF;
	END LOOP;
END
$$;

DROP TABLE mock_data;
