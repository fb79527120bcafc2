// Package sqlite implements decoy.Store and decoy.QuotaCounter on an embedded
// SQLite database (the pure-Go modernc.org/sqlite driver), in WAL mode, with
// migrations embedded in the binary and applied at open.
package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/decoy-mock/decoy"
	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

//go:embed migration/*.sql
var migrationFS embed.FS

// FileName is the database file inside the data directory.
const FileName = "decoy.db"

// DB is the SQLite store.
type DB struct {
	// writes holds the one connection for admin writes, with synchronous=FULL
	// so an acknowledged write survives power loss.
	writes *sql.DB
	// counts holds the one connection for quota counts, with
	// synchronous=NORMAL: each count survives a crash of the process, and a
	// read request does not wait for an fsync.
	counts *sql.DB
	// reads is a pool of read-only connections; WAL lets them run beside
	// the writer.
	reads *sql.DB

	// writeMu is SQLite's one write lock, taken in the process first: a
	// count batch waiting for an admin write's fsync then queues here and
	// goes as soon as it is done, instead of polling SQLite's lock with
	// sleeps (its busy handler waits up to 100 ms at a time).
	writeMu sync.Mutex

	// Quota counts wait in pending; the caller that finds no leader
	// becomes it and commits what waits, a batch at a time (see count).
	countsMu     sync.Mutex
	pending      []*countOp
	leading      bool
	countsClosed bool
	inFlight     sync.WaitGroup
	stmts        *countStmts

	// Now returns the current time. Tests replace it.
	Now func() time.Time
}

var (
	_ decoy.Store        = (*DB)(nil)
	_ decoy.QuotaCounter = (*DB)(nil)
)

// Open opens (creating if needed) the database in dir and applies pending
// migrations.
func Open(ctx context.Context, dir string) (*DB, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create data dir: %w", err)
	}
	path := filepath.Join(dir, FileName)
	open := func(sync string, conns int, readOnly bool) (*sql.DB, error) {
		q := url.Values{}
		q.Set("_busy_timeout", "10000")
		q.Set("_journal_mode", "WAL")
		q.Set("_foreign_keys", "1")
		q.Set("_synchronous", sync)
		q.Set("_txlock", "immediate")
		if readOnly {
			q.Set("_query_only", "1")
		}
		db, err := sql.Open("sqlite", "file:"+path+"?"+q.Encode())
		if err != nil {
			return nil, err
		}
		db.SetMaxOpenConns(conns)
		db.SetMaxIdleConns(conns)
		db.SetConnMaxIdleTime(0)
		return db, nil
	}
	db := &DB{Now: time.Now}
	var err error
	if db.writes, err = open("FULL", 1, false); err != nil {
		return nil, err
	}
	if err := db.migrate(ctx); err != nil {
		db.writes.Close()
		return nil, fmt.Errorf("migrate %s: %w", path, err)
	}
	if db.counts, err = open("NORMAL", 1, false); err != nil {
		db.writes.Close()
		return nil, err
	}
	if db.reads, err = open("NORMAL", 4, true); err != nil {
		db.writes.Close()
		db.counts.Close()
		return nil, err
	}
	if db.stmts, err = prepareCounts(ctx, db.counts); err != nil {
		db.Close()
		return nil, fmt.Errorf("prepare quota statements: %w", err)
	}
	return db, nil
}

// Close closes the database.
func (db *DB) Close() error {
	db.countsMu.Lock()
	db.countsClosed = true
	db.countsMu.Unlock()
	db.inFlight.Wait() // counts handed over before Close are committed
	return errors.Join(db.reads.Close(), db.counts.Close(), db.writes.Close())
}

// Ping reports whether the database answers.
func (db *DB) Ping(ctx context.Context) error {
	var n int
	return db.reads.QueryRowContext(ctx, `SELECT 1`).Scan(&n)
}

// migrate applies, in name order, each embedded migration not applied yet,
// each in its own transaction. The transactions take the write lock at
// BEGIN, so processes starting together apply each migration once.
func (db *DB) migrate(ctx context.Context) error {
	if _, err := db.writes.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS migrations (name TEXT PRIMARY KEY)`); err != nil {
		return err
	}
	names, err := fs.Glob(migrationFS, "migration/*.sql")
	if err != nil {
		return err
	}
	sort.Strings(names)
	for _, name := range names {
		if err := db.migrateFile(ctx, name); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	return nil
}

func (db *DB) migrateFile(ctx context.Context, name string) error {
	tx, err := db.writes.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM migrations WHERE name = ?`, name).Scan(&n); err != nil {
		return err
	}
	if n > 0 {
		return nil
	}
	body, err := fs.ReadFile(migrationFS, name)
	if err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, string(body)); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO migrations (name) VALUES (?)`, name); err != nil {
		return err
	}
	return tx.Commit()
}

const mockColumns = `id, name, private, token_hash, content_type, status, delay_ms,
	rate_limit, monthly_quota, size, etag, version, created_at, updated_at`

type scanner interface{ Scan(...any) error }

func scanMock(s scanner, extra ...any) (*decoy.Mock, error) {
	var m decoy.Mock
	var rate, quota sql.NullInt64
	var created, updated int64
	dest := append([]any{&m.ID, &m.Name, &m.Private, &m.TokenHash, &m.ContentType, &m.Status, &m.DelayMS,
		&rate, &quota, &m.Size, &m.ETag, &m.Version, &created, &updated}, extra...)
	if err := s.Scan(dest...); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return nil, notFound()
		}
		return nil, err
	}
	if rate.Valid {
		m.RateLimit = &rate.Int64
	}
	if quota.Valid {
		m.MonthlyQuota = &quota.Int64
	}
	m.CreatedAt = time.UnixMilli(created).UTC()
	m.UpdatedAt = time.UnixMilli(updated).UTC()
	return &m, nil
}

func notFound() error { return decoy.Errorf(decoy.ENOTFOUND, "Mock api not found") }

func nullable(p *int64) any {
	if p == nil {
		return nil
	}
	return *p
}

func (db *DB) now() int64 { return db.Now().UnixMilli() }

// CreateMock stores a new mock with its data.
func (db *DB) CreateMock(ctx context.Context, m *decoy.Mock, data []byte) (*decoy.Mock, error) {
	db.writeMu.Lock()
	defer db.writeMu.Unlock()
	tx, err := db.writes.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM mocks WHERE id = ?`, m.ID).Scan(&n); err != nil {
		return nil, err
	}
	if n > 0 {
		return nil, decoy.Errorf(decoy.ECONFLICT, "A mock with id %s already exists", m.ID)
	}
	now := db.now()
	row := tx.QueryRowContext(ctx, `
		INSERT INTO mocks (id, name, private, token_hash, content_type, status, delay_ms,
			rate_limit, monthly_quota, size, etag, version, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1, ?, ?)
		RETURNING `+mockColumns,
		m.ID, m.Name, m.Private, m.TokenHash, m.ContentType, m.Status, m.DelayMS,
		nullable(m.RateLimit), nullable(m.MonthlyQuota), len(data), m.ETag, now, now)
	created, err := scanMock(row)
	if err != nil {
		return nil, err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO mock_data (mock_id, data) VALUES (?, ?)`, m.ID, data); err != nil {
		return nil, err
	}
	return created, tx.Commit()
}

// FindMock returns a mock without its data.
func (db *DB) FindMock(ctx context.Context, id string) (*decoy.Mock, error) {
	return scanMock(db.reads.QueryRowContext(ctx, `SELECT `+mockColumns+` FROM mocks WHERE id = ?`, id))
}

// FindMockData returns a mock and its data, read in one transaction.
func (db *DB) FindMockData(ctx context.Context, id string) (*decoy.Mock, []byte, error) {
	var data []byte
	m, err := scanMock(db.reads.QueryRowContext(ctx, `
		SELECT `+mockColumns+`, d.data FROM mocks JOIN mock_data d ON d.mock_id = mocks.id
		WHERE mocks.id = ?`, id), &data)
	if err != nil {
		return nil, nil, err
	}
	if data == nil {
		data = []byte{}
	}
	return m, data, nil
}

// ListMocks returns a page of mocks in creation order.
func (db *DB) ListMocks(ctx context.Context, cursor string, limit int) ([]*decoy.Mock, string, error) {
	if limit < 1 {
		return nil, "", decoy.Errorf(decoy.EINVALID, "limit must be 1 or more")
	}
	var after int64
	if cursor != "" {
		if _, err := fmt.Sscanf(cursor, "%d", &after); err != nil || after < 0 || fmt.Sprint(after) != cursor {
			return nil, "", decoy.Errorf(decoy.EINVALID, "Invalid cursor")
		}
	}
	rows, err := db.reads.QueryContext(ctx, `SELECT `+mockColumns+`, seq FROM mocks WHERE seq > ? ORDER BY seq LIMIT ?`, after, limit+1)
	if err != nil {
		return nil, "", err
	}
	defer rows.Close()
	var mocks []*decoy.Mock
	var seqs []int64
	for rows.Next() {
		var seq int64
		m, err := scanMock(rows, &seq)
		if err != nil {
			return nil, "", err
		}
		mocks = append(mocks, m)
		seqs = append(seqs, seq)
	}
	if err := rows.Err(); err != nil {
		return nil, "", err
	}
	next := ""
	if len(mocks) > limit {
		mocks = mocks[:limit]
		next = fmt.Sprint(seqs[limit-1])
	}
	return mocks, next, nil
}

// UpdateMock applies upd to a mock.
func (db *DB) UpdateMock(ctx context.Context, id string, upd decoy.MockUpdate) (*decoy.Mock, error) {
	db.writeMu.Lock()
	defer db.writeMu.Unlock()
	sets := []string{"version = version + 1", "updated_at = ?"}
	args := []any{db.now()}
	set := func(col string, v any) {
		sets = append(sets, col+" = ?")
		args = append(args, v)
	}
	if upd.Name != nil {
		set("name", *upd.Name)
	}
	if upd.Private != nil {
		set("private", *upd.Private)
	}
	if upd.Status != nil {
		set("status", *upd.Status)
	}
	if upd.DelayMS != nil {
		set("delay_ms", *upd.DelayMS)
	}
	if upd.RateLimit != nil {
		set("rate_limit", nullable(upd.RateLimit.Value))
	}
	if upd.MonthlyQuota != nil {
		set("monthly_quota", nullable(upd.MonthlyQuota.Value))
	}
	if upd.TokenHash != nil {
		set("token_hash", *upd.TokenHash)
	}
	args = append(args, id)
	return scanMock(db.writes.QueryRowContext(ctx,
		`UPDATE mocks SET `+strings.Join(sets, ", ")+` WHERE id = ? RETURNING `+mockColumns, args...))
}

// ReplaceMockData replaces a mock's data.
func (db *DB) ReplaceMockData(ctx context.Context, id string, d decoy.MockData) (*decoy.Mock, error) {
	db.writeMu.Lock()
	defer db.writeMu.Unlock()
	tx, err := db.writes.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	m, err := scanMock(tx.QueryRowContext(ctx, `
		UPDATE mocks SET content_type = ?, size = ?, etag = ?, version = version + 1, updated_at = ?
		WHERE id = ? RETURNING `+mockColumns, d.ContentType, len(d.Data), d.ETag, db.now(), id))
	if err != nil {
		return nil, err
	}
	if _, err := tx.ExecContext(ctx, `UPDATE mock_data SET data = ? WHERE mock_id = ?`, d.Data, id); err != nil {
		return nil, err
	}
	return m, tx.Commit()
}

// DeleteMock deletes a mock with its data and counts.
func (db *DB) DeleteMock(ctx context.Context, id string) error {
	db.writeMu.Lock()
	defer db.writeMu.Unlock()
	res, err := db.writes.ExecContext(ctx, `DELETE FROM mocks WHERE id = ?`, id)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil {
		return err
	} else if n == 0 {
		return notFound()
	}
	return nil
}

const adminTokenKey = "admin_token_sha256"

// AdminTokenHash returns the stored admin token hash, or nil.
func (db *DB) AdminTokenHash(ctx context.Context) ([]byte, error) {
	var h []byte
	err := db.reads.QueryRowContext(ctx, `SELECT value FROM settings WHERE key = ?`, adminTokenKey).Scan(&h)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	return h, err
}

// SetAdminTokenHash stores the admin token hash.
func (db *DB) SetAdminTokenHash(ctx context.Context, hash []byte) error {
	db.writeMu.Lock()
	defer db.writeMu.Unlock()
	res, err := db.writes.ExecContext(ctx, `
		INSERT INTO settings (key, value) VALUES (?, ?)
		ON CONFLICT (key) DO NOTHING`, adminTokenKey, hash)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil {
		return err
	} else if n == 0 {
		return decoy.Errorf(decoy.ECONFLICT, "An admin token is stored already")
	}
	return nil
}

// ReserveQuota counts one served response when fewer than limit were counted.
// The single statement is atomic, and the counts connection serialises
// ReserveQuota counts one served response when fewer than limit were counted.
// Each statement is atomic, and the counts connection runs them one after
// the other, so no more than limit are ever granted. They run in batches: a
// transaction per batch of concurrent calls, so that one commit serves many
// reads (group commit); each call returns once its batch is committed.
func (db *DB) ReserveQuota(ctx context.Context, id, month string, limit int64) (int64, bool, error) {
	op := &countOp{ctx: ctx, id: id, month: month, limit: limit, reserve: true}
	if err := db.count(op); err != nil {
		return 0, false, err
	}
	return op.used, op.ok, op.err
}

// ReleaseQuota takes back one reservation.
func (db *DB) ReleaseQuota(ctx context.Context, id, month string) error {
	op := &countOp{ctx: ctx, id: id, month: month}
	if err := db.count(op); err != nil {
		return err
	}
	return op.err
}

// countOp is one reservation or release, waiting for its batch.
type countOp struct {
	ctx       context.Context
	id, month string
	limit     int64
	reserve   bool // else release

	used int64
	ok   bool
	err  error
	done chan struct{} // closed once committed
	lead chan struct{} // closed when it is this op's turn to commit a batch
}

// maxBatch bounds the counts committed together.
const maxBatch = 256

var errClosed = errors.New("sqlite: store closed")

// count commits op with the others that wait at the same time. The caller
// that finds nobody committing leads: it commits what waits, its own op
// first, as one batch, then hands the lead to the first op that came in
// meanwhile. A lone read thus commits on its own goroutine, with no
// hand-over, and concurrent reads share commits.
func (db *DB) count(op *countOp) error {
	op.done, op.lead = make(chan struct{}), make(chan struct{})
	db.countsMu.Lock()
	if db.countsClosed {
		db.countsMu.Unlock()
		return errClosed
	}
	db.inFlight.Add(1)
	defer db.inFlight.Done()
	db.pending = append(db.pending, op)
	if db.leading {
		db.countsMu.Unlock()
		select {
		case <-op.done:
			return nil
		case <-op.lead:
		}
		db.countsMu.Lock()
	}
	db.leading = true
	n := min(len(db.pending), maxBatch)
	batch := db.pending[:n:n]
	db.pending = db.pending[n:]
	db.countsMu.Unlock()

	db.commitBatch(batch)

	db.countsMu.Lock()
	if len(db.pending) > 0 {
		close(db.pending[0].lead)
	} else {
		db.leading = false
		db.pending = nil
	}
	db.countsMu.Unlock()
	return nil
}

func (db *DB) commitBatch(batch []*countOp) {
	defer func() {
		for _, op := range batch {
			close(op.done)
		}
	}()
	db.writeMu.Lock()
	defer db.writeMu.Unlock()
	if len(batch) == 1 {
		// Alone: one statement, its own transaction, no BEGIN and COMMIT
		// round trips.
		db.runCount(nil, batch[0])
		return
	}
	tx, err := db.counts.BeginTx(context.Background(), nil)
	if err != nil {
		for _, op := range batch {
			op.err = err
		}
		return
	}
	for _, op := range batch {
		db.runCount(tx, op)
	}
	if err := tx.Commit(); err != nil {
		for _, op := range batch {
			op.used, op.ok, op.err = 0, false, err
		}
	}
}

// countStmts are the statements of quota counts, prepared once on the
// counts connection: parsing SQL was a fifth of a small read's cost.
type countStmts struct {
	reserve, used, release *sql.Stmt
}

func prepareCounts(ctx context.Context, conn *sql.DB) (*countStmts, error) {
	var s countStmts
	var err error
	prep := func(q string) *sql.Stmt {
		if err != nil {
			return nil
		}
		var st *sql.Stmt
		st, err = conn.PrepareContext(ctx, q)
		return st
	}
	// ?3 is the limit; 0 or less: unlimited.
	s.reserve = prep(`INSERT INTO quota_usage (mock_id, month, used) VALUES (?1, ?2, 1)
		ON CONFLICT (mock_id, month) DO UPDATE SET used = used + 1 WHERE ?3 <= 0 OR used < ?3
		RETURNING used`)
	s.used = prep(`SELECT used FROM quota_usage WHERE mock_id = ? AND month = ?`)
	s.release = prep(`UPDATE quota_usage SET used = used - 1 WHERE mock_id = ? AND month = ? AND used > 0`)
	return &s, err
}

// runCount runs one count, in tx when not nil.
func (db *DB) runCount(tx *sql.Tx, op *countOp) {
	if err := op.ctx.Err(); err != nil {
		op.err = err
		return
	}
	stmt := func(s *sql.Stmt) *sql.Stmt {
		if tx != nil {
			return tx.Stmt(s)
		}
		return s
	}
	if !op.reserve {
		_, op.err = stmt(db.stmts.release).Exec(op.id, op.month)
		return
	}
	err := stmt(db.stmts.reserve).QueryRow(op.id, op.month, op.limit).Scan(&op.used)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		op.err = stmt(db.stmts.used).QueryRow(op.id, op.month).Scan(&op.used)
	case err != nil && strings.Contains(err.Error(), "FOREIGN KEY"):
		op.err = notFound() // deleted while the request ran
	case err != nil:
		op.err = err
	default:
		op.ok = true
	}
}

// QuotaUsed returns the count of a mock in a month.
func (db *DB) QuotaUsed(ctx context.Context, id, month string) (int64, error) {
	var used int64
	err := db.reads.QueryRowContext(ctx, `SELECT used FROM quota_usage WHERE mock_id = ? AND month = ?`, id, month).Scan(&used)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	return used, err
}
