package sqlite

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/decoy-mock/decoy"
)

// DocsDir is the folder of the data directory that holds the documents,
// one file per version of a mock's data. A file is written and synced
// before the row naming it is committed, and removed after the commit that
// stops naming it, so a crash leaves at most files that no row names:
// Open removes them.
const DocsDir = "docs"

func (db *DB) docPath(name string) string { return filepath.Join(db.dir, DocsDir, name) }

// placeDoc puts data into a new file of the docs folder, synced, and
// returns its name. The file data.File is moved there when it can be (same
// file system), else the bytes are written.
func (db *DB) placeDoc(id string, data decoy.Data) (string, error) {
	var rnd [8]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		return "", err
	}
	name := id + "-" + hex.EncodeToString(rnd[:])
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
// for the next Open to remove.
func (db *DB) removeDoc(name string) {
	if name != "" {
		_ = os.Remove(db.docPath(name))
	}
}

// openDocs makes the docs folder, moves the documents of older data
// directories out of the database into it, and removes the files no row
// names (left by a crash between writing a file and committing its row).
func (db *DB) openDocs(ctx context.Context) error {
	if err := os.MkdirAll(filepath.Join(db.dir, DocsDir), 0o700); err != nil {
		return err
	}
	if err := db.moveBlobs(ctx); err != nil {
		return fmt.Errorf("move documents into %s: %w", DocsDir, err)
	}
	named := map[string]bool{}
	rows, err := db.writes.QueryContext(ctx, `SELECT data_file FROM mocks WHERE data_file IS NOT NULL`)
	if err != nil {
		return err
	}
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
	entries, err := os.ReadDir(filepath.Join(db.dir, DocsDir))
	if err != nil {
		return err
	}
	for _, e := range entries {
		if !named[e.Name()] {
			db.removeDoc(e.Name())
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
