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
	"strconv"
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
	// appendStmts are the statements of a write's append, prepared on
	// writes' connection, and fast those of appendFast, prepared on its
	// driver connection, under writeMu (live.go).
	appendStmts appendStmts
	fast        *fastStmts
	// counts holds the one connection that folds quota counts into the
	// database, with synchronous=NORMAL: the journals keep the counts
	// until then (see quota.go).
	counts *sql.DB
	// reads is a pool of read-only connections; WAL lets them run beside
	// the writer.
	reads *sql.DB

	// writeMu is SQLite's one write lock, taken in the process first: a
	// fold of quota counts waiting for an admin write's fsync then queues
	// here and goes as soon as it is done, instead of polling SQLite's lock
	// with sleeps (its busy handler waits up to 100 ms at a time).
	writeMu sync.Mutex
	// quotaPrunedFor is the newest month whose counts' writing pruned
	// those of the months past decoy.MonthsKept (writeCounts); under
	// writeMu, or before Open returns.
	quotaPrunedFor string

	dir   string
	lock  *os.File // held while open: one process per data directory
	quota *quota
	// recent holds, from Open until RecentReads reads them, the journals
	// of the reads counted in the last rate window before Open.
	recent *recentJournals

	// stopSweep ends the sweep of orphan files (see sweepDocs); swept is
	// closed when it has ended.
	stopSweep context.CancelFunc
	swept     chan struct{}

	closeOnce sync.Once
	closeErr  error

	// Now returns the current time. Tests replace it.
	Now func() time.Time
	// MaxVersions is how many versions of its data each mock keeps, the
	// current one included (see versions.go); decoy.DefaultMaxVersions
	// unless set before use.
	MaxVersions int
	// MaxLiveWrites is how many writes a mock's log holds after its base
	// (see live.go); decoy.DefaultMaxLiveWrites unless set before use.
	MaxLiveWrites int
	// appends queues the calls of AppendWrite for a commit (see live.go).
	appends appends
	// pending names the files of docs/ being placed outside the write
	// lock, which the sweep of orphans must leave (see placePending).
	pendingMu sync.Mutex
	pending   map[string]bool
	// reserved is set while the reserve file is in place (see
	// ReserveFile), under writeMu.
	reserved bool

	// freeSpace returns the bytes free on the file system of a folder,
	// and whether it could tell. Tests replace it.
	freeSpace func(dir string) (int64, bool)
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
	db := &DB{Now: time.Now, MaxVersions: decoy.DefaultMaxVersions, dir: dir, freeSpace: freeSpace}
	var err error
	if db.lock, err = lockDir(dir); err != nil {
		return nil, err
	}
	fail := func(err error) (*DB, error) {
		for _, c := range []*sql.DB{db.reads, db.counts, db.writes} {
			if c != nil {
				c.Close()
			}
		}
		db.lock.Close()
		return nil, err
	}
	if db.writes, err = open("FULL", 1, false); err != nil {
		return fail(err)
	}
	if err := db.migrate(ctx); err != nil {
		return fail(fmt.Errorf("migrate %s: %w", path, err))
	}
	if db.counts, err = open("NORMAL", 1, false); err != nil {
		return fail(err)
	}
	if db.reads, err = open("NORMAL", 4, true); err != nil {
		return fail(err)
	}
	if err := db.openDocs(ctx); err != nil {
		return fail(err)
	}
	if err := db.openQuota(ctx); err != nil {
		return fail(err)
	}
	db.writeMu.Lock()
	db.keepReserve()
	db.writeMu.Unlock()
	sweepCtx, stop := context.WithCancel(context.WithoutCancel(ctx))
	db.stopSweep, db.swept = stop, make(chan struct{})
	go func() {
		defer close(db.swept)
		_ = db.sweepDocs(sweepCtx) // what is left is swept after the next Open
	}()
	return db, nil
}

// Close folds the quota counts into the database and closes it. Calls
// after the first return what it returned.
func (db *DB) Close() error {
	db.closeOnce.Do(func() {
		db.stopSweep()
		<-db.swept
		err := db.closeQuota()
		db.closeFast()
		db.closeErr = errors.Join(err, db.reads.Close(), db.counts.Close(), db.writes.Close(), db.lock.Close())
	})
	return db.closeErr
}

// minFreeSpace is the free space of the data directory's file system
// under which Ping reports the store unready. Writes would soon fail below
// it: a read of a mock with a quota appends about 50 bytes to the quota
// journal (a server reading 10,000 a second, half a MiB between two
// folds), a write a few pages of 4 KiB to SQLite's log besides its
// document. The margin is fixed rather than a share of the disk: 1% of a
// terabyte would send traffic away with 10 GB free, while 1 MiB of a
// small volume (a 5 MiB tmpfs) leaves the rest of it usable.
const minFreeSpace = 1 << 20

// Ping reports whether the store can serve: the database answers, its
// file system has minFreeSpace free, and the quota journal takes lines
// (else every read of a mock with a quota would be refused; see
// quota.check).
func (db *DB) Ping(ctx context.Context) error {
	var n int
	if err := db.reads.QueryRowContext(ctx, `SELECT 1`).Scan(&n); err != nil {
		return err
	}
	if free, ok := db.freeSpace(db.dir); ok && free < minFreeSpace {
		return decoy.Errorf(decoy.ENOSPACE, "the data directory's file system is full (%s free; ready again from %s)", sizeText(free), sizeText(minFreeSpace))
	}
	if err := db.quota.check(); err != nil {
		if decoy.ErrorCode(err) == decoy.ENOSPACE {
			return fmt.Errorf("%w (%w)", decoy.Errorf(decoy.ENOSPACE, "the quota journal cannot be written: the data directory's file system is full"), err)
		}
		return err
	}
	return nil
}

// migrate applies, in name order, each embedded migration not applied yet,
// and each step of goMigrations among them, each in its own transaction.
// The transactions take the write lock at BEGIN, so processes starting
// together apply each migration once.
func (db *DB) migrate(ctx context.Context) error {
	if _, err := db.writes.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS migrations (name TEXT PRIMARY KEY)`); err != nil {
		return err
	}
	names, err := fs.Glob(migrationFS, "migration/*.sql")
	if err != nil {
		return err
	}
	steps := make(map[string]func(ctx context.Context, tx *sql.Tx) error, len(names)+len(goMigrations))
	for _, name := range names {
		steps[name] = func(ctx context.Context, tx *sql.Tx) error {
			body, err := fs.ReadFile(migrationFS, name)
			if err != nil {
				return err
			}
			_, err = tx.ExecContext(ctx, string(body))
			return err
		}
	}
	for name, step := range goMigrations {
		names, steps[name] = append(names, name), step
	}
	sort.Strings(names)
	for _, name := range names {
		if err := db.migrateStep(ctx, name, steps[name]); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	return nil
}

// goMigrations are the steps of the schema's history that SQL cannot
// take, by name: each runs once, in name order among the files of
// migration/, as a file does.
var goMigrations = map[string]func(ctx context.Context, tx *sql.Tx) error{
	"migration/0016_project_slugs": deriveSlugs,
}

func (db *DB) migrateStep(ctx context.Context, name string, step func(ctx context.Context, tx *sql.Tx) error) error {
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
	if err := step(ctx, tx); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO migrations (name) VALUES (?)`, name); err != nil {
		return err
	}
	return tx.Commit()
}

const mockColumns = `id, name, private, token_hash, content_type, status, delay_ms,
	rate_limit, monthly_quota, size, etag, version, created_at, updated_at,
	COALESCE(template_mode, ''), workspace_id, project_id, live_seq`

type scanner interface{ Scan(...any) error }

// readPage reads the rows of a page query, which asks for limit+1 rows
// ordered by seq: each row is scanned by scan, which also gives its seq.
// next is the cursor of the page after this one, "" when this is the last.
func readPage[T any](rows *sql.Rows, limit int, scan func(s scanner, seq *int64) (T, error)) (page []T, next string, err error) {
	defer rows.Close()
	var seqs []int64
	for rows.Next() {
		var seq int64
		v, err := scan(rows, &seq)
		if err != nil {
			return nil, "", err
		}
		page, seqs = append(page, v), append(seqs, seq)
	}
	if err := rows.Err(); err != nil {
		return nil, "", err
	}
	if len(page) > limit {
		page, next = page[:limit], strconv.FormatInt(seqs[limit-1], 10)
	}
	return page, next, nil
}

// scanMockSeq scans a mock followed by its seq.
func scanMockSeq(s scanner, seq *int64) (*decoy.Mock, error) { return scanMock(s, seq) }

func scanMock(s scanner, extra ...any) (*decoy.Mock, error) {
	var m decoy.Mock
	var rate, quota sql.NullInt64
	var created, updated int64
	dest := append([]any{&m.ID, &m.Name, &m.Private, &m.TokenHash, &m.ContentType, &m.Status, &m.DelayMS,
		&rate, &quota, &m.Size, &m.ETag, &m.Version, &created, &updated, &m.TemplateMode, &m.WorkspaceID, &m.ProjectID, &m.LiveSeq}, extra...)
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

// CreateMock stores a new mock with its data, in a file of its own: a
// batch of one (see CreateMocks).
func (db *DB) CreateMock(ctx context.Context, m *decoy.Mock, data decoy.Data) (*decoy.Mock, error) {
	created, err := db.CreateMocks(ctx, []decoy.NewMock{{Mock: m, Data: data}})
	if err != nil {
		return nil, err
	}
	return created[0], nil
}

// FindMock returns a mock without its data.
func (db *DB) FindMock(ctx context.Context, id string) (*decoy.Mock, error) {
	return scanMock(db.reads.QueryRowContext(ctx, `SELECT `+mockColumns+` FROM mocks WHERE id = ?`, id))
}

// FindMockData returns a mock and its data, as its open file.
func (db *DB) FindMockData(ctx context.Context, id string) (*decoy.Mock, decoy.Data, error) {
	for {
		var file sql.NullString
		m, err := scanMock(db.reads.QueryRowContext(ctx, `SELECT `+mockColumns+`, data_file FROM mocks WHERE id = ?`, id), &file)
		if err != nil {
			return nil, decoy.Data{}, err
		}
		if !file.Valid {
			return nil, decoy.Data{}, fmt.Errorf("sqlite: mock %s has no data file", id)
		}
		f, err := db.openDoc(file.String)
		if docMissing(err) && ctx.Err() == nil {
			continue // replaced since its name was read: read the new one
		}
		if err != nil {
			return nil, decoy.Data{}, err
		}
		return m, decoy.Data{File: f}, nil
	}
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
	return readPage(rows, limit, scanMockSeq)
}

// UpdateMock applies upd to a mock.
func (db *DB) UpdateMock(ctx context.Context, id string, upd decoy.MockUpdate) (_ *decoy.Mock, err error) {
	defer func() { err = classify(err) }()
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

// ReplaceMockData replaces a mock's data with a new file, as a new
// version: the old file is kept as the previous version, and the files of
// the versions past MaxVersions are removed once the change is committed.
// The live data is reset (see replaceData).
func (db *DB) ReplaceMockData(ctx context.Context, id string, d decoy.MockData) (*decoy.Mock, error) {
	var m *decoy.Mock
	err := db.writeDocs(ctx, func(tx *sql.Tx, w *docWrite) error {
		workspaceID, _, err := mockPlace(ctx, tx, id)
		if err != nil {
			return err
		}
		g := growth{}
		if err := g.addData(ctx, tx, workspaceID, id, int64(len(d.Data.Bytes))); err != nil {
			return err
		}
		if err := g.check(ctx, tx); err != nil {
			return err
		}
		m, err = db.replaceData(ctx, tx, w, id, d)
		return err
	})
	if err != nil {
		return nil, err
	}
	return m, nil
}

// mockPlace returns the workspace and project of mock id, notFound when
// there is none.
func mockPlace(ctx context.Context, q queryer, id string) (workspaceID, projectID string, err error) {
	err = q.QueryRowContext(ctx, `SELECT workspace_id, project_id FROM mocks WHERE id = ?`, id).Scan(&workspaceID, &projectID)
	if errors.Is(err, sql.ErrNoRows) {
		return "", "", notFound()
	}
	return workspaceID, projectID, err
}

// replaceData gives mock id the data d, in a new file, as its next
// version, and resets its live data (see resetLive). The data it replaces
// stays as a version, so its workspace grows by all of d, less the live
// data dropped: the caller checks the limits first (see growth.addData;
// the versions the write may prune are not counted off, so a workspace at
// its limit makes room by deleting).
func (db *DB) replaceData(ctx context.Context, tx *sql.Tx, w *docWrite, id string, d decoy.MockData) (*decoy.Mock, error) {
	r, err := readLiveRow(ctx, tx, id)
	if err != nil {
		return nil, err
	}
	if d.IfLiveSeq != nil && *d.IfLiveSeq != r.seq {
		return nil, decoy.ErrLiveChanged(r.seq)
	}
	if err := resetLive(ctx, tx, w, id, r); err != nil {
		return nil, err
	}
	file, err := db.placeDoc(id, d.Data)
	if err != nil {
		return nil, err
	}
	w.placed = append(w.placed, file)
	now := db.now()
	var version int64
	m, err := scanMock(tx.QueryRowContext(ctx, `
		UPDATE mocks SET content_type = ?, size = ?, etag = ?, data_file = ?, data_version = data_version + 1,
			version = version + 1, updated_at = ?
		WHERE id = ? RETURNING `+mockColumns+`, data_version`, d.ContentType, len(d.Data.Bytes), d.ETag, file, now, id), &version)
	if err != nil {
		return nil, err
	}
	gone, err := db.addVersion(ctx, tx, id, version, d.ContentType, int64(len(d.Data.Bytes)), d.ETag, now, file)
	if err != nil {
		return nil, err
	}
	w.gone = append(w.gone, gone...)
	return m, nil
}

// DeleteMock deletes a mock with its data and counts.
func (db *DB) DeleteMock(ctx context.Context, id string) (err error) {
	defer func() { err = classify(err) }()
	db.writeMu.Lock()
	defer db.writeMu.Unlock()
	files, err := db.deleteMock(ctx, id)
	if noSpace(err) && db.freeReserve() {
		// What the reserve is for: a deletion gives back more than it
		// takes. A failed one changed nothing (SQLite rolled it back, and
		// the files go only after the commit): trying again is safe.
		files, err = db.deleteMock(ctx, id)
	}
	if errors.Is(err, sql.ErrNoRows) {
		return notFound()
	}
	if err != nil {
		return err
	}
	for _, f := range files {
		db.removeDoc(f)
	}
	err = db.forgetCounts(id)
	// At once if the document gave back room for it; a document still
	// mapped gives it back when released, and the fold loop makes it then.
	db.keepReserve()
	return err
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
func (db *DB) SetAdminTokenHash(ctx context.Context, hash []byte) (err error) {
	defer func() { err = classify(err) }()
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

// ResetAdminTokenHash stores hash in place of the stored admin token hash.
func (db *DB) ResetAdminTokenHash(ctx context.Context, hash []byte) (err error) {
	defer func() { err = classify(err) }()
	db.writeMu.Lock()
	defer db.writeMu.Unlock()
	_, err = db.writes.ExecContext(ctx, `
		INSERT INTO settings (key, value) VALUES (?, ?)
		ON CONFLICT (key) DO UPDATE SET value = excluded.value`, adminTokenKey, hash)
	return err
}
