package sqlite

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/decoy-mock/decoy"
)

// DocsDir is the folder of the data directory that holds the documents,
// one file per version of a mock's data, the current one and those kept
// (see versions.go), and the bases of their live data (see live.go). A file is written and synced
// before the row naming it is committed, and removed after the commit that
// stops naming it, so a crash leaves at most files that no row names:
// they are removed in the background after Open (see sweepDocs).
const DocsDir = "docs"

func (db *DB) docPath(name string) string { return filepath.Join(db.dir, DocsDir, name) }

// placeDoc puts data into a new file of the docs folder, synced, and
// returns its name. The file data.File is moved there when it can be (same
// file system), else the bytes are written.
func (db *DB) placeDoc(id string, data decoy.Data) (string, error) {
	name, err := docName(id)
	if err != nil {
		return "", err
	}
	path := db.docPath(name)
	if data.File != nil && os.Rename(data.File.Name(), path) == nil {
		if err := data.File.Sync(); err != nil {
			os.Remove(path)
			return "", err
		}
	} else if err := writeFile(path, data.Bytes); err != nil {
		os.Remove(path)
		return "", err
	}
	if err := syncDir(filepath.Dir(path)); err != nil {
		os.Remove(path)
		return "", err
	}
	return name, nil
}

// docName is a new name for a document of mock id: its id first, which
// the sweep reads back (see sweepNames), and 64 random bits.
func docName(id string) (string, error) {
	var rnd [8]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		return "", err
	}
	return id + "-" + hex.EncodeToString(rnd[:]), nil
}

func writeFile(path string, b []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// syncDir makes the names in dir durable (a new or moved file).
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, os.ErrInvalid) { // some platforms cannot sync a folder
		return err
	}
	return nil
}

// removeDoc removes a file no row names any more. Failing leaves an orphan
// for the sweep after the next Open to remove.
func (db *DB) removeDoc(name string) {
	if name != "" {
		_ = os.Remove(db.docPath(name))
	}
}

// openDocs makes the docs folder and moves the documents of older data
// directories out of the database into it. The files no row names are
// removed after Open, by sweepDocs: looking at every file and every row
// would make the start as slow as there are mocks.
func (db *DB) openDocs(ctx context.Context) error {
	if err := os.MkdirAll(filepath.Join(db.dir, DocsDir), 0o700); err != nil {
		return err
	}
	if err := db.moveBlobs(ctx); err != nil {
		return fmt.Errorf("move documents into %s: %w", DocsDir, err)
	}
	return nil
}

// sweepBatch is how many files of the docs folder sweepDocs looks at under
// one hold of the write lock.
const sweepBatch = 256

// sweepDocs removes the files of the docs folder that no row names, left
// by a crash between writing a file and committing its row, in the
// background until done or ctx ends; what it misses is removed at the next
// start. It reads the folder a batch at a time, so that its memory does
// not grow with the mocks, and decides on each batch under the write lock:
// a write places its file and commits the row naming it under that lock,
// so a file the sweep sees is either named by a committed row or an
// orphan, never one a write just placed.
func (db *DB) sweepDocs(ctx context.Context) error {
	d, err := os.Open(filepath.Join(db.dir, DocsDir))
	if err != nil {
		return err
	}
	defer d.Close()
	for ctx.Err() == nil {
		entries, err := d.ReadDir(sweepBatch)
		names := make([]string, 0, len(entries))
		for _, e := range entries {
			names = append(names, e.Name())
		}
		if len(names) > 0 {
			if err := db.sweepNames(ctx, names); err != nil {
				return err
			}
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
	return ctx.Err()
}

// sweepNames removes the files of the docs folder among names that no
// row names, of mocks (their current data and their live data's base) or
// of their kept versions, but those being placed outside the write lock
// (a compaction's base: see placePending), which the write naming them
// will commit, or remove.
func (db *DB) sweepNames(ctx context.Context, names []string) error {
	// A file's name starts with its mock's id (see placeDoc): the rows are
	// found by primary key.
	ids := make([]any, len(names))
	marks := make([]string, len(names))
	for i, name := range names {
		id := name
		if k := strings.LastIndexByte(name, '-'); k > 0 {
			id = name[:k]
		}
		ids[i], marks[i] = id, "?"
	}
	db.writeMu.Lock()
	defer db.writeMu.Unlock()
	in := `(` + strings.Join(marks, ",") + `)`
	rows, err := db.reads.QueryContext(ctx, `SELECT data_file FROM mocks WHERE id IN `+in+` AND data_file IS NOT NULL
		UNION ALL SELECT base_file FROM mocks WHERE id IN `+in+` AND base_file IS NOT NULL
		UNION ALL SELECT data_file FROM mock_versions WHERE mock_id IN `+in+` AND data_file IS NOT NULL`, append(append(ids, ids...), ids...)...)
	if err != nil {
		return err
	}
	named := make(map[string]bool, len(names))
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			rows.Close()
			return err
		}
		named[name] = true
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, name := range names {
		if !named[name] && !db.isPending(name) {
			db.removeDoc(name)
		}
	}
	return nil
}

// moveBlobs moves each document still in the mock_data table into a file,
// a mock per transaction, then drops the table.
func (db *DB) moveBlobs(ctx context.Context) error {
	var n int
	if err := db.writes.QueryRowContext(ctx, `SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = 'mock_data'`).Scan(&n); err != nil || n == 0 {
		return err
	}
	for {
		var id string
		var data []byte
		err := db.writes.QueryRowContext(ctx, `SELECT mock_id, data FROM mock_data LIMIT 1`).Scan(&id, &data)
		if errors.Is(err, sql.ErrNoRows) {
			break
		}
		if err != nil {
			return err
		}
		name, err := db.placeDoc(id, decoy.Data{Bytes: data})
		if err != nil {
			return err
		}
		tx, err := db.writes.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `UPDATE mocks SET data_file = ? WHERE id = ?`, name, id)
		if err == nil { // its one version, made by migration 0011_versions.sql
			_, err = tx.ExecContext(ctx, `UPDATE mock_versions SET data_file = ? WHERE mock_id = ? AND data_file IS NULL`, name, id)
		}
		if err == nil {
			_, err = tx.ExecContext(ctx, `DELETE FROM mock_data WHERE mock_id = ?`, id)
		}
		if err == nil {
			err = tx.Commit()
		}
		if err != nil {
			tx.Rollback()
			return err
		}
	}
	_, err := db.writes.ExecContext(ctx, `DROP TABLE mock_data`)
	return err
}

// openDoc opens the file of a document.
func (db *DB) openDoc(name string) (*os.File, error) {
	return os.Open(db.docPath(name))
}

// docMissing reports whether opening a document failed because its file
// went: the data was replaced between reading its name and opening it.
func docMissing(err error) bool { return errors.Is(err, fs.ErrNotExist) }
