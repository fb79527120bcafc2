package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/decoy-mock/decoy"
)

// A version of a mock's data is a file of the docs folder that is kept: a
// write places the new document in a file of its own (see placeDoc) and,
// where it used to remove the file it replaced, now leaves it named by the
// version's row in mock_versions (migration 0011_versions.sql). Nothing is
// copied to keep a version. The rows and files past MaxVersions go in the
// same write: the rows in its transaction, the files after its commit, so
// that a crash leaves at most files no row names, which the sweep after
// the next Open removes (see sweepDocs).

var _ decoy.VersionStore = (*DB)(nil)

// execer is what writing a version's row needs: the write connection or a
// transaction on it.
type execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// addVersion records version n of mock id's data, held in file, written now
// by the actor of ctx, and forgets the versions past db.MaxVersions. It
// returns the files of the versions forgotten, for the caller to remove
// once the transaction is committed.
func (db *DB) addVersion(ctx context.Context, tx execer, id string, n int64, ct string, size int64, etag string, now int64, file string) ([]string, error) {
	a := decoy.ActorFrom(ctx)
	if _, err := tx.ExecContext(ctx, `
		INSERT INTO mock_versions (mock_id, version, content_type, size, etag, created_at, actor_kind, actor_id, actor_label, data_file)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, id, n, ct, size, etag, now, a.Kind, a.ID, a.Label, file); err != nil {
		return nil, err
	}
	keep := int64(max(db.MaxVersions, 1))
	rows, err := tx.QueryContext(ctx, `DELETE FROM mock_versions WHERE mock_id = ? AND version <= ? RETURNING data_file`, id, n-keep)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var gone []string
	for rows.Next() {
		var f sql.NullString
		if err := rows.Scan(&f); err != nil {
			return nil, err
		}
		if f.Valid {
			gone = append(gone, f.String)
		}
	}
	return gone, rows.Err()
}

// versionColumns are the columns of mock_versions that make a decoy.Version,
// as scanVersion reads them.
const versionColumns = `v.version, v.content_type, v.size, v.etag, v.created_at, v.actor_kind, v.actor_id, v.actor_label`

func scanVersion(s scanner, extra ...any) (*decoy.Version, error) {
	var v decoy.Version
	var created int64
	dest := append([]any{&v.Version, &v.ContentType, &v.Size, &v.ETag, &created, &v.Actor.Kind, &v.Actor.ID, &v.Actor.Label}, extra...)
	if err := s.Scan(dest...); err != nil {
		return nil, err
	}
	v.CreatedAt = time.UnixMilli(created).UTC()
	return &v, nil
}

// MockVersions returns the kept versions of a mock's data, newest first,
// read in one statement so that the current one is marked as it was.
func (db *DB) MockVersions(ctx context.Context, id string) ([]decoy.Version, error) {
	rows, err := db.reads.QueryContext(ctx, `
		SELECT `+versionColumns+`, m.data_version
		FROM mocks m JOIN mock_versions v ON v.mock_id = m.id
		WHERE m.id = ? ORDER BY v.version DESC`, id)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []decoy.Version
	for rows.Next() {
		var current int64
		v, err := scanVersion(rows, &current)
		if err != nil {
			return nil, err
		}
		v.Current = v.Version == current
		out = append(out, *v)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(out) == 0 { // every mock has its current version: no mock
		return nil, notFound()
	}
	return out, nil
}

// FindVersionData returns a version of a mock's data, as its open file.
func (db *DB) FindVersionData(ctx context.Context, id string, version int64) (*decoy.Version, decoy.Data, error) {
	var current int64
	var file sql.NullString
	v, err := scanVersion(db.reads.QueryRowContext(ctx, `
		SELECT `+versionColumns+`, m.data_version, v.data_file
		FROM mock_versions v JOIN mocks m ON m.id = v.mock_id
		WHERE v.mock_id = ? AND v.version = ?`, id, version), &current, &file)
	if errors.Is(err, sql.ErrNoRows) {
		if _, err := db.FindMock(ctx, id); err != nil {
			return nil, decoy.Data{}, err
		}
		return nil, decoy.Data{}, decoy.ErrVersionNotFound()
	}
	if err != nil {
		return nil, decoy.Data{}, err
	}
	if !file.Valid {
		return nil, decoy.Data{}, errors.New("sqlite: mock " + id + ": a version has no data file")
	}
	f, err := db.openDoc(file.String)
	if docMissing(err) {
		// Forgotten (a write went past the bound) since its row was read.
		return nil, decoy.Data{}, decoy.ErrVersionNotFound()
	}
	if err != nil {
		return nil, decoy.Data{}, err
	}
	v.Current = v.Version == current
	return v, decoy.Data{File: f}, nil
}

// VersionBytes returns the bytes of a mock's kept versions.
func (db *DB) VersionBytes(ctx context.Context, id string) (int64, error) {
	var n int
	var total int64
	if err := db.reads.QueryRowContext(ctx, `SELECT COUNT(*), COALESCE(SUM(size), 0) FROM mock_versions WHERE mock_id = ?`, id).Scan(&n, &total); err != nil {
		return 0, err
	}
	if n == 0 {
		return 0, notFound()
	}
	return total, nil
}

// deleteMock deletes a mock, its versions and its live data in one
// transaction, and returns the files they named, for the caller to remove once it is
// committed. It returns sql.ErrNoRows when there is no mock.
func (db *DB) deleteMock(ctx context.Context, id string) ([]string, error) {
	tx, err := db.writes.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	rows, err := tx.QueryContext(ctx, `DELETE FROM mock_versions WHERE mock_id = ? RETURNING data_file`, id)
	if err != nil {
		return nil, err
	}
	var files []string
	for rows.Next() {
		var f sql.NullString
		if err := rows.Scan(&f); err != nil {
			rows.Close()
			return nil, err
		}
		if f.Valid {
			files = append(files, f.String)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	// Its writes go by the foreign key's cascade.
	var current, base sql.NullString
	if err := tx.QueryRowContext(ctx, `DELETE FROM mocks WHERE id = ? RETURNING data_file, base_file`, id).Scan(&current, &base); err != nil {
		return nil, err
	}
	for _, f := range []sql.NullString{current, base} {
		if f.Valid {
			files = append(files, f.String)
		}
	}
	return files, tx.Commit()
}
