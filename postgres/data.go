package postgres

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"runtime"

	"github.com/decoy-mock/decoy"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
)

// Documents are stored in chunks (see migration 0003_data_chunks.sql): they
// are written with COPY, a chunk at a time from the caller's bytes, and read
// a chunk at a time into a file of the replica's own (SpillDir), which the
// server maps and sends from, as it does the sqlite store's files. Neither
// holds a document in the Go heap, let alone twice.

// chunkSize is the most bytes of a document one row holds.
const chunkSize = 1 << 20

// chunkCount is how many chunks a document of size bytes takes.
func chunkCount(size int) int { return (size + chunkSize - 1) / chunkSize }

// chunkSet is a table of documents' chunks: mock_chunks, those of the
// versions of mocks' data, numbered by version, and mock_base_chunks,
// those of their live data's bases (see live.go), numbered by the seq of
// the base.
type chunkSet struct{ table, key string }

var (
	versionChunks = chunkSet{"mock_chunks", "version"}
	baseChunks    = chunkSet{"mock_base_chunks", "seq"}
)

// writeChunks stores data as the chunks of document v of mock id in set
// c, which has none.
func writeChunks(ctx context.Context, tx pgx.Tx, c chunkSet, id string, v int64, data []byte) error {
	n := chunkCount(len(data))
	if n == 0 {
		return nil
	}
	_, err := tx.CopyFrom(ctx, pgx.Identifier{c.table}, []string{"mock_id", c.key, "n", "data"},
		pgx.CopyFromSlice(n, func(i int) ([]any, error) {
			return []any{id, v, int32(i), data[i*chunkSize : min((i+1)*chunkSize, len(data))]}, nil
		}))
	return err
}

// spillable reports whether a document can be read into a file that is
// removed at once and lives on while open: not on Windows, where an open
// file cannot be removed.
var spillable = runtime.GOOS != "windows"

// spillError is a failure to write a document to SpillDir: the document
// is then read into memory instead.
type spillError struct{ err error }

func (e *spillError) Error() string { return "postgres: spill document: " + e.err.Error() }
func (e *spillError) Unwrap() error { return e.err }

// spillFile returns a new file in dir, removed from it at once (the open
// file lives on, and nothing is left after a crash). dir is made again if
// it went (a temporary folder cleaned while the server ran).
func spillFile(dir string) (*os.File, error) {
	f, err := os.CreateTemp(dir, "doc-*")
	if errors.Is(err, fs.ErrNotExist) {
		if err = os.MkdirAll(dir, 0o700); err == nil {
			f, err = os.CreateTemp(dir, "doc-*")
		}
	}
	if err != nil {
		return nil, err
	}
	_ = os.Remove(f.Name())
	return f, nil
}

// readDoc reads the chunks of document v of mock id in set c, of size
// bytes, in tx: into a file in db.SpillDir when there is one and the
// document is large enough (see SpillMinSize), else, or when that file
// cannot be written, into memory.
func (db *DB) readDoc(ctx context.Context, tx pgx.Tx, c chunkSet, id string, v, size int64) (decoy.Data, error) {
	spill := db.SpillDir != "" && spillable && size >= db.SpillMinSize
	data, err := db.readChunks(ctx, tx, c, id, v, size, spill)
	var se *spillError
	if spill && errors.As(err, &se) {
		// A full disk or a folder gone must not fail reads: memory
		// holds the document instead.
		if db.SpillFailed != nil {
			db.SpillFailed(se)
		}
		data, err = db.readChunks(ctx, tx, c, id, v, size, false)
	}
	return data, err
}

// readChunks reads the chunks of document v of mock id in set c, in tx:
// into a file in db.SpillDir (see spillFile) when spill is set, else into
// memory. It checks that they add up to size, which the row of the mock or
// the version gives. A failure to write the file is a *spillError.
func (db *DB) readChunks(ctx context.Context, tx pgx.Tx, c chunkSet, id string, v, size int64, spill bool) (decoy.Data, error) {
	var w io.Writer
	var file *os.File
	var buf *bytes.Buffer
	if spill {
		f, err := spillFile(db.SpillDir)
		if err != nil {
			return decoy.Data{}, &spillError{err}
		}
		file, w = f, f
	} else {
		buf = bytes.NewBuffer(make([]byte, 0, size))
		w = buf
	}
	fail := func(err error) (decoy.Data, error) {
		if file != nil {
			file.Close()
		}
		return decoy.Data{}, err
	}
	rows, err := tx.Query(ctx, `SELECT data FROM `+c.table+` WHERE mock_id = $1 AND `+c.key+` = $2 ORDER BY n`, id, v)
	if err != nil {
		return fail(err)
	}
	defer rows.Close()
	var total int64
	var scratch []byte
	for rows.Next() {
		// In binary format a bytea's raw value is its bytes: written
		// from pgx's buffer, with no copy of their own.
		raw := rows.RawValues()[0]
		if rows.FieldDescriptions()[0].Format != pgtype.BinaryFormatCode {
			if err := rows.Scan(&scratch); err != nil {
				return fail(err)
			}
			raw = scratch
		}
		k, err := w.Write(raw)
		total += int64(k)
		if err != nil {
			return fail(&spillError{err})
		}
	}
	if err := rows.Err(); err != nil {
		return fail(err)
	}
	if total != size {
		return fail(fmt.Errorf("postgres: mock %s, %s %s %d: its chunks hold %d bytes, its row says %d", id, c.table, c.key, v, total, size))
	}
	if file == nil {
		return decoy.Data{Bytes: buf.Bytes()}, nil
	}
	if _, err := file.Seek(0, io.SeekStart); err != nil {
		return fail(&spillError{err})
	}
	return decoy.Data{File: file}, nil
}
