-- Documents are kept as files in the data directory (docs/), not in the
-- database: uploads can then be moved into place rather than copied, and
-- the server maps and sends them straight from their files. data_file is
-- the name of a mock's file; Open moves what mock_data still holds into
-- files, then drops it.
ALTER TABLE mocks ADD COLUMN data_file TEXT;
