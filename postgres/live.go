package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/decoy-mock/decoy"
	"github.com/jackc/pgx/v5"
)

// A mock's live data (§12 of the contract) is its base with the writes of
// its log applied in order (see decoy.LiveStore). A write through a route
// is a row appended to mock_writes in one small transaction, which locks
// the mock's row to compare its number (live_seq) and set it: writers on
// any number of replicas take turns there, and the loser of a race finds
// the number moved. A base a compaction wrote is stored as documents are,
// in chunks, in mock_base_chunks (migration 0020_live_writes.sql).
//
// Lock order. The writes of live data lock the mock's row (lockLive) and,
// when one grows a workspace's bytes, the workspace's row after it, as
// replacing a mock's data does (see checkLimits); none locks a project.
// DeleteMock and the writes of routes lock the project first, then the
// mock (by deleting it) or routes; the writes of teams lock workspaces
// without locking mocks. No transaction takes a mock after its workspace,
// so none waits on another in a cycle. FOR NO KEY UPDATE, rather than FOR
// UPDATE, excludes the other writers of the mock and leaves alone the KEY
// SHARE locks that rows referencing it take: a read's quota reservation
// (quota_usage) does not wait on a write.

var _ decoy.LiveStore = (*DB)(nil)

// liveRow is what a mock's row says of its live data.
type liveRow struct {
	workspaceID string
	size        int64 // the current version's
	seq         int64 // live_seq
	baseSeq     int64
	liveSize    int64  // what the live data counts toward max_bytes
	baseSize    *int64 // nil: the base is the current version's data
}

// live reports whether the live data is apart from the current version's:
// writes since the base, or a base a compaction wrote.
func (r *liveRow) live() bool { return r.seq > r.baseSeq || r.baseSize != nil }

// dataSize is the live data's size.
func (r *liveRow) dataSize() int64 {
	if r.live() {
		return r.liveSize
	}
	return r.size
}

const liveColumns = `workspace_id, size, live_seq, base_seq, live_size, base_size`

func scanLiveRow(row pgx.Row) (*liveRow, error) {
	var r liveRow
	err := row.Scan(&r.workspaceID, &r.size, &r.seq, &r.baseSeq, &r.liveSize, &r.baseSize)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, notFound()
	}
	if err != nil {
		return nil, err
	}
	return &r, nil
}

// lockLive locks a mock's row for a change of its data or live data
// until the transaction ends, and returns what it says of them.
func lockLive(ctx context.Context, tx pgx.Tx, id string) (*liveRow, error) {
	return scanLiveRow(tx.QueryRow(ctx, `SELECT `+liveColumns+` FROM mocks WHERE id = $1 FOR NO KEY UPDATE`, id))
}

// maxLiveWrites is the bound of a mock's log after its base.
func (db *DB) maxLiveWrites() int64 {
	if db.MaxLiveWrites > 0 {
		return int64(db.MaxLiveWrites)
	}
	return decoy.DefaultMaxLiveWrites
}

// AppendWrite appends w to the mock's log when the live data is number
// w.Seq-1, under the lock of the mock's row, and is durable once
// committed.
func (db *DB) AppendWrite(ctx context.Context, id string, w *decoy.Write, size int64) error {
	if err := decoy.CheckWrite(w, size); err != nil {
		return err
	}
	at := db.now()
	if !w.At.IsZero() {
		at = stamp(w.At)
	}
	return db.write(ctx, func(tx pgx.Tx) error {
		r, err := lockLive(ctx, tx, id)
		if err != nil {
			return err
		}
		if w.Seq != r.seq+1 {
			return decoy.ErrLiveChanged(r.seq)
		}
		if n := r.seq - r.baseSeq; n >= db.maxLiveWrites() {
			return decoy.ErrLogFull(n)
		}
		if _, err := tx.Exec(ctx, `
			WITH w AS (
				INSERT INTO mock_writes (mock_id, seq, op, items, field, key, record, at)
				VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
			)
			UPDATE mocks SET live_seq = $2, live_size = $9, updated_at = $10 WHERE id = $1`,
			id, w.Seq, w.Op, w.Items, w.Field, w.Key, w.Record, at, size, db.now()); err != nil {
			return err
		}
		// Only a write that grows the live data is held to max_bytes,
		// and only a workspace with a limit is locked for it: writes
		// to mocks of a workspace without one do not take turns on its
		// row. A limit set meanwhile holds for the writes after it.
		if size <= r.dataSize() {
			return nil
		}
		var maxBytes *int64
		if err := tx.QueryRow(ctx, `SELECT max_bytes FROM workspaces WHERE id = $1`, r.workspaceID).Scan(&maxBytes); err != nil {
			return err
		}
		if maxBytes == nil {
			return nil
		}
		return checkLimits(ctx, tx, r.workspaceID, false, true)
	})
}

// Writes returns the writes after a number, read with the mock's base in
// one statement (one snapshot), so that a compaction between them cannot
// hide a gap. The writes are a lateral subquery, so that the page is read
// in the order of the primary key, never sorted from all of the log.
func (db *DB) Writes(ctx context.Context, id string, after int64, limit int) ([]*decoy.Write, error) {
	if limit < 1 {
		return nil, decoy.Errorf(decoy.EINVALID, "Invalid limit")
	}
	rows, err := db.pool.Query(ctx, `
		SELECT m.base_seq, w.seq, w.op, w.items, w.field, w.key, w.record, w.at
		FROM mocks m LEFT JOIN LATERAL (
			SELECT * FROM mock_writes w WHERE w.mock_id = m.id AND w.seq > $1 ORDER BY w.seq LIMIT $3
		) w ON true
		WHERE m.id = $2 ORDER BY w.seq`, after, id, limit)
	if err != nil {
		return nil, classify(err)
	}
	defer rows.Close()
	found := false
	out := []*decoy.Write{}
	for rows.Next() {
		var baseSeq int64
		var seq *int64
		var op, items, field, key *string
		var record []byte
		var at *time.Time
		if err := rows.Scan(&baseSeq, &seq, &op, &items, &field, &key, &record, &at); err != nil {
			return nil, classify(err)
		}
		if !found && after < baseSeq {
			return nil, decoy.Errorf(decoy.ECONFLICT, "The writes after number %d were compacted: the base is at %d", after, baseSeq)
		}
		found = true
		if seq == nil {
			break // the mock, without writes after
		}
		out = append(out, &decoy.Write{Seq: *seq, Op: *op, Items: *items, Field: *field, Key: *key, Record: record, At: at.UTC()})
	}
	if err := rows.Err(); err != nil {
		return nil, classify(err)
	}
	if !found {
		return nil, notFound()
	}
	return out, nil
}

// Live returns where a mock's live data stands.
func (db *DB) Live(ctx context.Context, id string) (decoy.LiveState, error) {
	r, err := scanLiveRow(db.pool.QueryRow(ctx, `SELECT `+liveColumns+` FROM mocks WHERE id = $1`, id))
	if err != nil {
		return decoy.LiveState{}, classify(err)
	}
	return decoy.LiveState{Seq: r.seq, BaseSeq: r.baseSeq, Size: r.dataSize()}, nil
}

// LiveBase returns the base a compaction wrote, read in one snapshot with
// its number: as a File with SpillDir set, else as Bytes.
func (db *DB) LiveBase(ctx context.Context, id string) (decoy.Data, int64, bool, error) {
	var data decoy.Data
	var r *liveRow
	opts := pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}
	err := pgx.BeginTxFunc(ctx, db.pool, opts, func(tx pgx.Tx) (err error) {
		if r, err = scanLiveRow(tx.QueryRow(ctx, `SELECT `+liveColumns+` FROM mocks WHERE id = $1`, id)); err != nil || r.baseSize == nil {
			return err
		}
		data, err = db.readDoc(ctx, tx, baseChunks, id, r.baseSeq, *r.baseSize)
		return err
	})
	if err != nil {
		if data.File != nil {
			data.File.Close() // read, but the snapshot failed to end
		}
		return decoy.Data{}, 0, false, classify(err)
	}
	return data, r.baseSeq, r.baseSize != nil, nil
}

// errStale ends the transaction of a compaction that another made
// unneeded.
var errStale = errors.New("stale compaction")

// Compact writes the chunks of the base under its own number before it
// locks the mock's row, so that writes do not wait on them, then drops the
// base before it and the writes it holds, in the same transaction.
func (db *DB) Compact(ctx context.Context, id string, seq int64, data decoy.Data) error {
	check := func(r *liveRow) error {
		switch {
		case seq > r.seq:
			return decoy.Errorf(decoy.EINVALID, "There is no write %d: the live data is at %d", seq, r.seq)
		case seq <= r.baseSeq:
			return errStale
		}
		return nil
	}
	if data.Bytes == nil && data.File != nil {
		return errors.New("postgres: Compact takes the base's bytes")
	}
	r, err := scanLiveRow(db.pool.QueryRow(ctx, `SELECT `+liveColumns+` FROM mocks WHERE id = $1`, id))
	if err == nil {
		err = check(r)
	}
	if err == nil {
		err = db.write(ctx, func(tx pgx.Tx) error {
			if err := writeChunks(ctx, tx, baseChunks, id, seq, data.Bytes); err != nil {
				return err
			}
			r, err := lockLive(ctx, tx, id)
			if err != nil {
				return err
			}
			if err := check(r); err != nil {
				return err
			}
			_, err = tx.Exec(ctx, `
				WITH b AS (DELETE FROM mock_base_chunks WHERE mock_id = $1 AND seq <> $2),
				w AS (DELETE FROM mock_writes WHERE mock_id = $1 AND seq <= $2)
				UPDATE mocks SET base_seq = $2, base_size = $3 WHERE id = $1`, id, seq, len(data.Bytes))
			return err
		})
	}
	switch {
	case errors.Is(err, errStale), pgCode(err) == uniqueViolation: // a compaction to seq made meanwhile
		return nil
	case pgCode(err) == foreignKeyViolation: // the mock went meanwhile
		return notFound()
	}
	return classify(err)
}

// ResetLive drops a mock's writes and base under a new number.
func (db *DB) ResetLive(ctx context.Context, id string) (*decoy.Mock, error) {
	var m *decoy.Mock
	err := db.write(ctx, func(tx pgx.Tx) error {
		r, err := lockLive(ctx, tx, id)
		if err != nil {
			return err
		}
		if !r.live() {
			m, err = scanMock(tx.QueryRow(ctx, `SELECT `+mockColumns+` FROM mocks WHERE id = $1`, id))
			return err
		}
		if err := resetLive(ctx, tx, id); err != nil {
			return err
		}
		m, err = scanMock(tx.QueryRow(ctx, `UPDATE mocks SET version = version + 1, updated_at = $2 WHERE id = $1 RETURNING `+mockColumns, id, db.now()))
		return err
	})
	if err != nil {
		return nil, err
	}
	return m, nil
}

// resetLive drops the writes and base of mock id, locked by lockLive,
// and gives its live data a number of its own: the current version's data
// is its base again. The caller changes the mock's version.
func resetLive(ctx context.Context, tx pgx.Tx, id string) error {
	_, err := tx.Exec(ctx, `
		WITH b AS (DELETE FROM mock_base_chunks WHERE mock_id = $1),
		w AS (DELETE FROM mock_writes WHERE mock_id = $1)
		UPDATE mocks SET live_seq = live_seq + 1, base_seq = live_seq + 1, live_size = 0, base_size = NULL WHERE id = $1`, id)
	return err
}
