package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/decoy-mock/decoy"
	"github.com/jackc/pgx/v5"
)

// A version of a mock's data is its chunks, kept: mock_chunks rows carry
// the number of the version they belong to (migration 0011_versions.sql),
// a write adds the chunks of its version beside the others, and nothing is
// copied to keep one. The versions past MaxVersions, their rows and their
// chunks, are deleted in the transaction of the write that passes the
// bound, so that a crash leaves none behind.

var _ decoy.VersionStore = (*DB)(nil)

// addVersion records version v of mock id's data, written at now by the
// actor of ctx, and deletes the versions past db.MaxVersions with their
// chunks.
func (db *DB) addVersion(ctx context.Context, tx pgx.Tx, id string, v int64, ct string, size int64, etag string, now time.Time) error {
	a := decoy.ActorFrom(ctx)
	if _, err := tx.Exec(ctx, `
		INSERT INTO mock_versions (mock_id, version, content_type, size, etag, created_at, actor_kind, actor_id, actor_label)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`, id, v, ct, size, etag, now, a.Kind, a.ID, a.Label); err != nil {
		return err
	}
	oldest := v - int64(max(db.MaxVersions, 1)) // the newest version forgotten
	if oldest < 1 {
		return nil
	}
	if _, err := tx.Exec(ctx, `DELETE FROM mock_versions WHERE mock_id = $1 AND version <= $2`, id, oldest); err != nil {
		return err
	}
	_, err := tx.Exec(ctx, `DELETE FROM mock_chunks WHERE mock_id = $1 AND version <= $2`, id, oldest)
	return err
}

// versionColumns are the columns of mock_versions that make a decoy.Version,
// as scanVersion reads them.
const versionColumns = `v.version, v.content_type, v.size, v.etag, v.created_at, v.actor_kind, v.actor_id, v.actor_label`

func scanVersion(s scanner, extra ...any) (*decoy.Version, error) {
	var v decoy.Version
	dest := append([]any{&v.Version, &v.ContentType, &v.Size, &v.ETag, &v.CreatedAt, &v.Actor.Kind, &v.Actor.ID, &v.Actor.Label}, extra...)
	if err := s.Scan(dest...); err != nil {
		return nil, err
	}
	v.CreatedAt = v.CreatedAt.UTC()
	return &v, nil
}

// MockVersions returns the kept versions of a mock's data, newest first,
// read in one statement so that the current one is marked as it was.
func (db *DB) MockVersions(ctx context.Context, id string) ([]decoy.Version, error) {
	rows, err := db.pool.Query(ctx, `
		SELECT `+versionColumns+`, m.data_version
		FROM mocks m JOIN mock_versions v ON v.mock_id = m.id
		WHERE m.id = $1 ORDER BY v.version DESC`, id)
	if err != nil {
		return nil, classify(err)
	}
	defer rows.Close()
	var out []decoy.Version
	for rows.Next() {
		var current int64
		v, err := scanVersion(rows, &current)
		if err != nil {
			return nil, classify(err)
		}
		v.Current = v.Version == current
		out = append(out, *v)
	}
	if err := rows.Err(); err != nil {
		return nil, classify(err)
	}
	if len(out) == 0 { // every mock has its current version: no mock
		return nil, notFound()
	}
	return out, nil
}

// FindVersionData returns a version of a mock's data: as a File with
// SpillDir set, else as Bytes, read in one snapshot with its row.
func (db *DB) FindVersionData(ctx context.Context, id string, version int64) (*decoy.Version, decoy.Data, error) {
	var v *decoy.Version
	var data decoy.Data
	opts := pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}
	err := pgx.BeginTxFunc(ctx, db.pool, opts, func(tx pgx.Tx) error {
		var current int64
		var err error
		v, err = scanVersion(tx.QueryRow(ctx, `
			SELECT `+versionColumns+`, m.data_version
			FROM mock_versions v JOIN mocks m ON m.id = v.mock_id
			WHERE v.mock_id = $1 AND v.version = $2`, id, version), &current)
		if errors.Is(err, pgx.ErrNoRows) {
			var found bool
			if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM mocks WHERE id = $1)`, id).Scan(&found); err != nil {
				return err
			}
			if !found {
				return notFound()
			}
			return decoy.ErrVersionNotFound()
		}
		if err != nil {
			return err
		}
		v.Current = v.Version == current
		data, err = db.readDoc(ctx, tx, versionChunks, id, v.Version, v.Size)
		return err
	})
	if err != nil {
		if data.File != nil {
			data.File.Close() // read, but the snapshot failed to end
		}
		return nil, decoy.Data{}, classify(err)
	}
	return v, data, nil
}

// VersionBytes returns the bytes of a mock's kept versions.
func (db *DB) VersionBytes(ctx context.Context, id string) (int64, error) {
	var n, total int64
	err := db.pool.QueryRow(ctx, `SELECT count(*), COALESCE(sum(size), 0)::bigint FROM mock_versions WHERE mock_id = $1`, id).Scan(&n, &total)
	if err != nil {
		return 0, classify(err)
	}
	if n == 0 {
		return 0, notFound()
	}
	return total, nil
}
