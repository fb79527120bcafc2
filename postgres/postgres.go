// Package postgres implements decoy.Store and decoy.QuotaCounter on
// PostgreSQL through a pgx connection pool, so that several replicas of the
// server can share one store.
//
// Migrations are embedded in the binary and applied at Open, in one
// transaction that first takes an advisory lock: replicas starting together
// against an empty database wait for each other and apply each migration
// once.
//
// Errors follow the sqlite package code for code. In addition, failures to
// reach the server (refused or reset connections, timeouts, a closed pool, a
// server shutting down) carry decoy.EUNAVAILABLE, so the HTTP server answers
// 503 rather than 500 while the database is away.
package postgres

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"path"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/decoy-mock/decoy"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/puddle/v2"
)

//go:embed migration/*.sql
var migrationFS embed.FS

// DefaultConnectTimeout bounds each new connection when the URL sets no
// connect_timeout, so that a request fails with EUNAVAILABLE instead of
// hanging while the server is unreachable.
const DefaultConnectTimeout = 5 * time.Second

// migrationLock is the advisory lock key held while migrating. Any constant
// works as long as every replica uses the same one; this is "decoymig" in
// ASCII.
const migrationLock int64 = 0x6465636f796d6967

// DB is the PostgreSQL store.
type DB struct {
	pool *pgxpool.Pool

	// SpillDir, when set, is the folder documents read from the
	// database are written to, each in a file removed from it at once
	// and gone when closed, so that they are mapped from there rather
	// than held in the Go heap (see data.go). Set it before use.
	SpillDir string
	// SpillMinSize is the smallest document written to SpillDir: smaller
	// ones are read into memory, where the server would read them from
	// the file anyway (see docfile.MinMapSize).
	SpillMinSize int64
	// SpillFailed, when set, is told when a document could not be
	// written to SpillDir and was read into memory instead.
	SpillFailed func(err error)

	// MaxVersions is how many versions of its data each mock keeps, the
	// current one included (see versions.go); decoy.DefaultMaxVersions
	// unless set before use.
	MaxVersions int
	// MaxLiveWrites is how many writes a mock's log holds after its base
	// (see live.go); decoy.DefaultMaxLiveWrites unless set before use.
	MaxLiveWrites int

	// Now returns the current time. Tests replace it.
	Now func() time.Time

	// newestMonth is the newest month a reservation counted in since the
	// process started; a newer one prunes the counts of the months past
	// decoy.MonthsKept (pruneMonths), pruning being one at a time.
	newestMonth atomic.Pointer[string]
	pruning     atomic.Bool
}

var (
	_ decoy.Store        = (*DB)(nil)
	_ decoy.QuotaCounter = (*DB)(nil)
)

// Open connects to the database at url (a postgres:// URL or a key=value
// connection string, as pgx accepts) and applies pending migrations. Unknown
// URL parameters are sent to the server as run-time settings, so
// ?search_path=name keeps the tables in schema name.
func Open(ctx context.Context, url string) (*DB, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("parse database url: %w", err)
	}
	// Zero means neither the URL nor PGCONNECT_TIMEOUT set a timeout (or
	// one set 0, "wait forever", which a server answering requests should
	// not do either).
	if cfg.ConnConfig.ConnectTimeout == 0 {
		cfg.ConnConfig.ConnectTimeout = DefaultConnectTimeout
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, classify(fmt.Errorf("open pool: %w", err))
	}
	db := &DB{pool: pool, Now: time.Now, MaxVersions: decoy.DefaultMaxVersions}
	if err := db.migrate(ctx); err != nil {
		pool.Close()
		return nil, classify(fmt.Errorf("migrate: %w", err))
	}
	return db, nil
}

// Close closes every connection of the pool, waiting for those in use to be
// returned.
func (db *DB) Close() {
	db.pool.Close()
}

// Ping reports whether the database answers; EUNAVAILABLE when it cannot be
// reached.
func (db *DB) Ping(ctx context.Context) error {
	return classify(db.pool.Ping(ctx))
}

// migrate applies, in name order, each embedded migration not applied yet,
// and each step of goMigrations among them.
// All of it runs in one transaction holding an advisory lock, so replicas
// starting together take turns: the first applies the migrations, the others
// find them recorded. Even the CREATE TABLE IF NOT EXISTS of the tracking
// table needs the lock, as two of them racing on an empty database can fail.
func (db *DB) migrate(ctx context.Context) error {
	names, err := fs.Glob(migrationFS, "migration/*.sql")
	if err != nil {
		return err
	}
	// Read committed whatever the server default, so that statements after
	// the lock see what the previous lock holder committed.
	opts := pgx.TxOptions{IsoLevel: pgx.ReadCommitted}
	return pgx.BeginTxFunc(ctx, db.pool, opts, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, migrationLock); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
			name       text        NOT NULL PRIMARY KEY,
			applied_at timestamptz NOT NULL DEFAULT now()
		)`); err != nil {
			return err
		}
		steps := make(map[string]func(ctx context.Context, tx pgx.Tx) error, len(names)+len(goMigrations))
		bases := make([]string, 0, len(names)+len(goMigrations))
		for _, name := range names {
			base := path.Base(name)
			bases, steps[base] = append(bases, base), func(ctx context.Context, tx pgx.Tx) error {
				body, err := fs.ReadFile(migrationFS, name)
				if err != nil {
					return err
				}
				// Without arguments pgx uses the simple protocol, which
				// runs a file of several statements.
				_, err = tx.Exec(ctx, string(body))
				return err
			}
		}
		for name, step := range goMigrations {
			bases, steps[name] = append(bases, name), step
		}
		sort.Strings(bases)
		for _, base := range bases {
			var applied bool
			if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM schema_migrations WHERE name = $1)`, base).Scan(&applied); err != nil {
				return err
			}
			if applied {
				continue
			}
			if err := steps[base](ctx, tx); err != nil {
				return fmt.Errorf("%s: %w", base, err)
			}
			if _, err := tx.Exec(ctx, `INSERT INTO schema_migrations (name) VALUES ($1)`, base); err != nil {
				return err
			}
		}
		return nil
	})
}

// goMigrations are the steps of the schema's history that SQL cannot
// take, by name: each runs once, in name order among the files of
// migration/, as a file does.
var goMigrations = map[string]func(ctx context.Context, tx pgx.Tx) error{
	"0016_project_slugs": deriveSlugs,
}

// classify gives err the code the HTTP server acts on: the *decoy.Error it
// already carries, EUNAVAILABLE when the database could not be reached, and
// otherwise none (EINTERNAL).
func classify(err error) error {
	var de *decoy.Error
	if err == nil || errors.As(err, &de) || !unreachable(err) {
		return err
	}
	// Both are wrapped: the client sees only the message, the log the cause.
	return fmt.Errorf("%w: %w", decoy.Errorf(decoy.EUNAVAILABLE, "The database is unavailable; try again later"), err)
}

// unreachable reports whether err means the database could not be reached or
// was lost, rather than that it refused the statement.
func unreachable(err error) bool {
	if errors.Is(err, context.Canceled) {
		return false // the caller gave up; nothing says the database is away
	}
	var connectErr *pgconn.ConnectError
	if errors.As(err, &connectErr) {
		return true // includes the server refusing us, e.g. too many clients
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch pgErr.Code {
		case "57P01", "57P02", "57P03": // shutting down, crashed, starting up
			return true
		case "25006": // read-only transaction: we reached a standby after a failover
			return true
		case "57014": // canceled: a statement timeout, or our deadline's cancel request
			return true
		}
		return strings.HasPrefix(pgErr.Code, "08") // connection exceptions
	}
	var netErr net.Error
	return errors.As(err, &netErr) || // dial errors, resets, network timeouts
		errors.Is(err, context.DeadlineExceeded) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, puddle.ErrClosedPool) ||
		pgconn.SafeToRetry(err) // failed before the statement was sent, e.g. conn closed
}

const mockColumns = `id, name, private, token_hash, content_type, status, delay_ms,
	rate_limit, monthly_quota, size, etag, version, created_at, updated_at,
	COALESCE(template_mode, ''), workspace_id, project_id, live_seq`

type scanner interface{ Scan(...any) error }

// readPage reads the rows of a page query, which asks for limit+1 rows
// ordered by seq: each row is scanned by scan, which also gives its seq.
// next is the cursor of the page after this one, "" when this is the last.
func readPage[T any](rows pgx.Rows, limit int, scan func(s scanner, seq *int64) (T, error)) (page []T, next string, err error) {
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
	dest := append([]any{&m.ID, &m.Name, &m.Private, &m.TokenHash, &m.ContentType, &m.Status, &m.DelayMS,
		&m.RateLimit, &m.MonthlyQuota, &m.Size, &m.ETag, &m.Version, &m.CreatedAt, &m.UpdatedAt, &m.TemplateMode, &m.WorkspaceID, &m.ProjectID, &m.LiveSeq}, extra...)
	if err := s.Scan(dest...); err != nil {
		if errors.Is(err, pgx.ErrNoRows) {
			return nil, notFound()
		}
		return nil, err
	}
	// pgx gives timestamptz in the local zone; the other stores give UTC.
	m.CreatedAt = m.CreatedAt.UTC()
	m.UpdatedAt = m.UpdatedAt.UTC()
	return &m, nil
}

func notFound() error { return decoy.Errorf(decoy.ENOTFOUND, "Mock api not found") }

// now returns the time to store, truncated to milliseconds as the sqlite
// store keeps it: timestamptz holds microseconds, so a millisecond value
// round-trips exactly and both stores hand back the same times.
func (db *DB) now() time.Time { return db.Now().UTC().Truncate(time.Millisecond) }

// CreateMock stores a new mock with its data: a batch of one (see
// CreateMocks).
func (db *DB) CreateMock(ctx context.Context, m *decoy.Mock, d decoy.Data) (*decoy.Mock, error) {
	created, err := db.CreateMocks(ctx, []decoy.NewMock{{Mock: m, Data: d}})
	if err != nil {
		return nil, err
	}
	return created[0], nil
}

// FindMock returns a mock without its data.
func (db *DB) FindMock(ctx context.Context, id string) (*decoy.Mock, error) {
	m, err := scanMock(db.pool.QueryRow(ctx, `SELECT `+mockColumns+` FROM mocks WHERE id = $1`, id))
	return m, classify(err)
}

// FindMockData returns a mock and its data: as a File with SpillDir set,
// else as Bytes. Both are read in one snapshot, so that they match.
func (db *DB) FindMockData(ctx context.Context, id string) (*decoy.Mock, decoy.Data, error) {
	var m *decoy.Mock
	var data decoy.Data
	opts := pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}
	err := pgx.BeginTxFunc(ctx, db.pool, opts, func(tx pgx.Tx) error {
		var err error
		var v int64
		if m, err = scanMock(tx.QueryRow(ctx, `SELECT `+mockColumns+`, data_version FROM mocks WHERE id = $1`, id), &v); err != nil {
			return err
		}
		data, err = db.readDoc(ctx, tx, versionChunks, id, v, m.Size)
		return err
	})
	if err != nil {
		if data.File != nil {
			data.File.Close() // read, but the snapshot failed to end
		}
		return nil, decoy.Data{}, classify(err)
	}
	return m, data, nil
}

// ListMocks returns a page of mocks in creation order. The cursor is the
// decimal seq of the last mock of the previous page, as in the sqlite store.
func (db *DB) ListMocks(ctx context.Context, cursor string, limit int) ([]*decoy.Mock, string, error) {
	var after int64
	if cursor != "" {
		var err error
		// Only the canonical form is accepted: one cursor per position.
		if after, err = strconv.ParseInt(cursor, 10, 64); err != nil || after < 0 || strconv.FormatInt(after, 10) != cursor {
			return nil, "", decoy.Errorf(decoy.EINVALID, "Invalid cursor")
		}
	}
	if limit < 1 {
		return nil, "", decoy.Errorf(decoy.EINVALID, "Invalid limit")
	}
	rows, err := db.pool.Query(ctx, `SELECT `+mockColumns+`, seq FROM mocks WHERE seq > $1 ORDER BY seq LIMIT $2`, after, limit+1)
	if err != nil {
		return nil, "", classify(err)
	}
	mocks, next, err := readPage(rows, limit, scanMockSeq)
	return mocks, next, classify(err)
}

// UpdateMock applies upd to a mock.
func (db *DB) UpdateMock(ctx context.Context, id string, upd decoy.MockUpdate) (*decoy.Mock, error) {
	sets := []string{"version = version + 1", "updated_at = $1"}
	args := []any{db.now()}
	set := func(col string, v any) {
		args = append(args, v)
		sets = append(sets, fmt.Sprintf("%s = $%d", col, len(args)))
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
		set("rate_limit", upd.RateLimit.Value) // a nil *int64 is NULL
	}
	if upd.MonthlyQuota != nil {
		set("monthly_quota", upd.MonthlyQuota.Value)
	}
	if upd.TokenHash != nil {
		set("token_hash", *upd.TokenHash) // a nil []byte is NULL
	}
	args = append(args, id)
	m, err := scanMock(db.pool.QueryRow(ctx, fmt.Sprintf(`UPDATE mocks SET %s WHERE id = $%d RETURNING %s`,
		strings.Join(sets, ", "), len(args), mockColumns), args...))
	return m, classify(err)
}

// ReplaceMockData replaces a mock's data, as a new version: the chunks of
// the data it replaces are kept, and those of the versions past
// MaxVersions deleted, in the same transaction. The live data is reset
// (see replaceData).
func (db *DB) ReplaceMockData(ctx context.Context, id string, d decoy.MockData) (*decoy.Mock, error) {
	var m *decoy.Mock
	err := db.write(ctx, func(tx pgx.Tx) (err error) {
		g := growth{}
		if m, err = db.replaceData(ctx, tx, id, d, g); err != nil {
			return err
		}
		return g.check(ctx, tx)
	})
	if err != nil {
		return nil, err
	}
	return m, nil
}

// replaceData gives mock id the data d as its next version, in the
// transaction tx, resets its live data (see resetLive), and adds it to g:
// the data it replaces stays, as a version, so the workspace's bytes grow
// unless the live data dropped held as much.
func (db *DB) replaceData(ctx context.Context, tx pgx.Tx, id string, d decoy.MockData, g growth) (*decoy.Mock, error) {
	r, err := lockLive(ctx, tx, id)
	if err != nil {
		return nil, err
	}
	if d.IfLiveSeq != nil && *d.IfLiveSeq != r.seq {
		return nil, decoy.ErrLiveChanged(r.seq)
	}
	if err := resetLive(ctx, tx, id); err != nil {
		return nil, err
	}
	var v int64
	now := db.now()
	m, err := scanMock(tx.QueryRow(ctx, `
		UPDATE mocks SET content_type = $1, size = $2, etag = $3, data_version = data_version + 1,
			version = version + 1, updated_at = $4
		WHERE id = $5 RETURNING `+mockColumns+`, data_version`, d.ContentType, len(d.Data.Bytes), d.ETag, now, id), &v)
	if err != nil {
		return nil, err
	}
	if err := db.addVersion(ctx, tx, id, v, d.ContentType, int64(len(d.Data.Bytes)), d.ETag, now); err != nil {
		return nil, err
	}
	if err := writeChunks(ctx, tx, versionChunks, id, v, d.Data.Bytes); err != nil {
		return nil, err
	}
	g.add(r.workspaceID, false, int64(len(d.Data.Bytes)) > r.liveSize)
	return m, nil
}

// DeleteMock deletes a mock; its data, its versions, its live data (writes
// and base), its counts and its routes go with it (ON DELETE CASCADE). Its
// project's row is locked first, as every write of routes locks it (see
// routes.go): the routes it takes with it advance the project's
// routes_version.
func (db *DB) DeleteMock(ctx context.Context, id string) error {
	return db.write(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT 1 FROM projects WHERE id = (SELECT project_id FROM mocks WHERE id = $1) FOR NO KEY UPDATE`, id); err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, `DELETE FROM mocks WHERE id = $1`, id)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return notFound()
		}
		return nil
	})
}

const adminTokenKey = "admin_token_sha256"

// AdminTokenHash returns the stored admin token hash, or nil.
func (db *DB) AdminTokenHash(ctx context.Context) ([]byte, error) {
	var h []byte
	err := db.pool.QueryRow(ctx, `SELECT value FROM settings WHERE key = $1`, adminTokenKey).Scan(&h)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	return h, classify(err)
}

// SetAdminTokenHash stores the admin token hash.
func (db *DB) SetAdminTokenHash(ctx context.Context, hash []byte) error {
	tag, err := db.pool.Exec(ctx, `
		INSERT INTO settings (key, value) VALUES ($1, $2)
		ON CONFLICT (key) DO NOTHING`, adminTokenKey, hash)
	if err != nil {
		return classify(err)
	}
	if tag.RowsAffected() == 0 {
		return decoy.Errorf(decoy.ECONFLICT, "An admin token is stored already")
	}
	return nil
}

// ResetAdminTokenHash stores hash in place of the stored admin token hash.
func (db *DB) ResetAdminTokenHash(ctx context.Context, hash []byte) error {
	_, err := db.pool.Exec(ctx, `
		INSERT INTO settings (key, value) VALUES ($1, $2)
		ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value`, adminTokenKey, hash)
	return classify(err)
}

// ReserveQuota counts one served response of a mock, or one read of a
// workspace's mocks (id is then the workspace's, counted in
// workspace_reads), when fewer than limit were counted (limit 0 or less:
// always, as in the sqlite store). Each upsert is one statement:
// PostgreSQL locks the row and evaluates the WHERE on its latest version,
// so concurrent reservations from any number of processes never grant more
// than limit. The first reservation of a month always succeeds, as it
// inserts. Of the two upserts, the one whose parent row has not the id
// inserts nothing, so it fails no foreign key; the foreign key of the
// other fails when its mock or workspace is deleted meanwhile.
func (db *DB) ReserveQuota(ctx context.Context, id, month string, limit int64) (int64, bool, error) {
	var used int64
	err := db.pool.QueryRow(ctx, `
		WITH m AS (
			INSERT INTO quota_usage AS q (mock_id, month, used)
			SELECT $1, $2, 1 WHERE EXISTS (SELECT 1 FROM mocks WHERE id = $1)
			ON CONFLICT (mock_id, month) DO UPDATE SET used = q.used + 1
			WHERE $3::bigint <= 0 OR q.used < $3::bigint
			RETURNING used
		), w AS (
			INSERT INTO workspace_reads AS q (workspace_id, month, used)
			SELECT $1, $2, 1 WHERE EXISTS (SELECT 1 FROM workspaces WHERE id = $1)
			ON CONFLICT (workspace_id, month) DO UPDATE SET used = q.used + 1
			WHERE $3::bigint <= 0 OR q.used < $3::bigint
			RETURNING used
		)
		SELECT used FROM m UNION ALL SELECT used FROM w`, id, month, limit).Scan(&used)
	var pgErr *pgconn.PgError
	switch {
	case errors.Is(err, pgx.ErrNoRows): // at the limit, or no such id
		var exists bool
		err = db.pool.QueryRow(ctx, `
			SELECT EXISTS (SELECT 1 FROM mocks WHERE id = $1) OR EXISTS (SELECT 1 FROM workspaces WHERE id = $1),
				coalesce((SELECT used FROM quota_usage WHERE mock_id = $1 AND month = $2),
					(SELECT used FROM workspace_reads WHERE workspace_id = $1 AND month = $2), 0)`,
			id, month).Scan(&exists, &used)
		switch {
		case err != nil:
			return 0, false, classify(err)
		case !exists:
			return 0, false, notFound()
		}
		return used, false, nil
	case errors.As(err, &pgErr) && pgErr.Code == "23503": // foreign_key_violation
		return 0, false, notFound() // deleted while the request ran
	case err != nil:
		return 0, false, classify(err)
	}
	db.pruneMonths(month)
	return used, true, nil
}

// pruneMonths deletes, in the background, the counts of the months before
// decoy.OldestKeptMonth(month) when month is newer than any counted in
// since the process started (so once a month, and once at a start):
// without it, a row of every mock and workspace read stayed for every
// month, for ever.
func (db *DB) pruneMonths(month string) {
	for {
		p := db.newestMonth.Load()
		if p != nil && month <= *p {
			return
		}
		if db.newestMonth.CompareAndSwap(p, &month) {
			break
		}
	}
	if !db.pruning.CompareAndSwap(false, true) {
		return // the prune running looks at the newest month once done
	}
	go func() {
		for {
			m := *db.newestMonth.Load()
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			_ = db.PruneQuota(ctx, m) // else at the next month, or start
			cancel()
			db.pruning.Store(false)
			if *db.newestMonth.Load() == m || !db.pruning.CompareAndSwap(false, true) {
				return
			}
		}
	}()
}

// PruneQuota deletes the counts of mocks and workspaces of the months
// before decoy.OldestKeptMonth(month), and before the month before the
// database's own: a replica whose clock runs months ahead does not delete
// the counts the others are still using.
func (db *DB) PruneQuota(ctx context.Context, month string) error {
	oldest := decoy.OldestKeptMonth(month)
	if oldest == "" {
		return nil
	}
	_, err := db.pool.Exec(ctx, `
		WITH bound AS (
			SELECT least($1::text, to_char(now() AT TIME ZONE 'UTC' - interval '1 month', 'YYYY-MM')) AS oldest
		), m AS (DELETE FROM quota_usage WHERE month < (SELECT oldest FROM bound))
		DELETE FROM workspace_reads WHERE month < (SELECT oldest FROM bound)`, oldest)
	return classify(err)
}

// ReleaseQuota takes back one reservation, never going below zero.
func (db *DB) ReleaseQuota(ctx context.Context, id, month string) error {
	_, err := db.pool.Exec(ctx, `
		WITH m AS (
			UPDATE quota_usage SET used = used - 1 WHERE mock_id = $1 AND month = $2 AND used > 0
		)
		UPDATE workspace_reads SET used = used - 1 WHERE workspace_id = $1 AND month = $2 AND used > 0`, id, month)
	return classify(err)
}

// QuotaUsed returns the count of a mock or workspace in a month.
func (db *DB) QuotaUsed(ctx context.Context, id, month string) (int64, error) {
	var used int64
	err := db.pool.QueryRow(ctx, `
		SELECT coalesce((SELECT used FROM quota_usage WHERE mock_id = $1 AND month = $2),
			(SELECT used FROM workspace_reads WHERE workspace_id = $1 AND month = $2), 0)`, id, month).Scan(&used)
	return used, classify(err)
}
