package sqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"sync"

	"github.com/decoy-mock/decoy"
)

// A mock's live data (§12 of the contract) is its base with the writes of
// its log applied in order (see decoy.LiveStore). A write through a route
// is a row appended to mock_writes in one small transaction on the write
// connection, whose synchronous=FULL makes it durable at the commit; the
// mock's row gives the compare-and-set its number (live_seq). A base a
// compaction wrote is a document in docs/ as versions' are, named by
// base_file (migration 0020_live_writes.sql).

var _ decoy.LiveStore = (*DB)(nil)

// liveRow is what a mock's row says of its live data.
type liveRow struct {
	workspaceID string
	size        int64 // the current version's
	seq         int64 // live_seq
	baseSeq     int64
	liveSize    int64 // what the live data counts toward max_bytes
	baseFile    sql.NullString
}

// live reports whether the live data is apart from the current version's:
// writes since the base, or a base a compaction wrote.
func (r *liveRow) live() bool { return r.seq > r.baseSeq || r.baseFile.Valid }

// dataSize is the live data's size.
func (r *liveRow) dataSize() int64 {
	if r.live() {
		return r.liveSize
	}
	return r.size
}

func readLiveRow(ctx context.Context, q queryer, id string) (*liveRow, error) {
	return scanLiveRow(q.QueryRowContext(ctx, selectLiveRow, id))
}

// scanLiveRow reads the row of selectLiveRow.
func scanLiveRow(row *sql.Row) (*liveRow, error) {
	var r liveRow
	err := row.Scan(&r.workspaceID, &r.size, &r.seq, &r.baseSeq, &r.liveSize, &r.baseFile)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound()
	}
	if err != nil {
		return nil, err
	}
	return &r, nil
}

// maxLiveWrites is the bound of a mock's log after its base.
func (db *DB) maxLiveWrites() int64 {
	if db.MaxLiveWrites > 0 {
		return int64(db.MaxLiveWrites)
	}
	return decoy.DefaultMaxLiveWrites
}

// AppendWrite appends w to the mock's log when the live data is number
// w.Seq-1. The check and the append run in one transaction under the
// write lock, so that no other writer, of this process (writeMu) or
// another (SQLite's lock, taken at BEGIN IMMEDIATE), comes between them.
//
// Appends called while another commits share the next transaction (see
// appends): each is checked and appended in the order of the calls, as
// if alone, and the commit, whose sync is most of a write's cost, is paid
// once for them all. A write refused (ECONFLICT, a limit, the bound)
// changes nothing and leaves the others be; a failure of the transaction
// fails every write of it, none of them stored.
func (db *DB) AppendWrite(ctx context.Context, id string, w *decoy.Write, size int64) error {
	if err := decoy.CheckWrite(w, size); err != nil {
		return err
	}
	at := db.now()
	if !w.At.IsZero() {
		at = w.At.UnixMilli()
	}
	req := &appendReq{ctx: ctx, id: id, w: w, size: size, at: at, done: make(chan struct{})}
	a := &db.appends
	a.mu.Lock()
	a.queue = append(a.queue, req)
	lead := !a.leading
	a.leading = true
	a.mu.Unlock()
	if !lead {
		<-req.done
		if !req.lead {
			return req.err
		}
	}
	// This call commits the queue: its own write and those queued since
	// the last commit began.
	a.mu.Lock()
	batch := a.queue
	a.queue = nil
	a.mu.Unlock()
	defer func() {
		for _, r := range batch {
			if r.err == nil && !r.stored { // a panic on the way
				r.err = errors.New("sqlite: append abandoned")
			}
			if r != req {
				close(r.done)
			}
		}
		// The next queued call commits what came meanwhile.
		a.mu.Lock()
		if len(a.queue) > 0 {
			next := a.queue[0]
			next.lead = true
			close(next.done)
		} else {
			a.leading = false
		}
		a.mu.Unlock()
	}()
	db.commitAppends(context.WithoutCancel(ctx), batch)
	return req.err
}

// appends is the queue of AppendWrite's calls waiting for a commit.
type appends struct {
	mu      sync.Mutex
	queue   []*appendReq
	leading bool // a call is committing; the first queued leads next
	commits int  // transactions committed, for tests
	fast    int  // of them, by appendFast
}

// appendReq is a call of AppendWrite: its write, and once done is
// closed, its error or, when lead is set, its turn to commit the queue.
type appendReq struct {
	ctx    context.Context
	id     string
	w      *decoy.Write
	size   int64
	at     int64
	err    error
	stored bool // committed
	lead   bool
	done   chan struct{}
}

// commitAppends appends the writes of batch in one transaction, setting
// each one's err: in the transaction of appendFast when every write of
// the batch passes the checks that one statement makes, else (nothing of
// that one kept) in a transaction that checks them step by step.
func (db *DB) commitAppends(ctx context.Context, batch []*appendReq) {
	db.writeMu.Lock()
	defer db.writeMu.Unlock()
	if db.appendFast(ctx, batch) {
		for _, r := range batch {
			r.stored = r.err == nil
		}
		db.countCommit()
		db.appends.mu.Lock()
		db.appends.fast++
		db.appends.mu.Unlock()
		return
	}
	for _, r := range batch {
		r.err = nil
	}
	db.commitChecked(ctx, batch)
}

// countCommit counts a transaction of appends committed.
func (db *DB) countCommit() {
	db.appends.mu.Lock()
	db.appends.commits++
	db.appends.mu.Unlock()
}

// commitChecked appends the writes of batch in one transaction, each
// checked step by step (appendWrite), setting each one's err.
func (db *DB) commitChecked(ctx context.Context, batch []*appendReq) {
	fail := func(err error) {
		for _, r := range batch {
			if r.err == nil {
				r.err = classify(err)
			}
		}
	}
	db.prepareAppends(ctx)
	tx, err := db.writes.BeginTx(ctx, nil)
	if err != nil {
		fail(err)
		return
	}
	defer tx.Rollback()
	for _, r := range batch {
		if r.err = r.ctx.Err(); r.err != nil {
			continue // its caller gave up: not written
		}
		r.err = db.appendWrite(ctx, tx, r)
		var de *decoy.Error
		if r.err != nil && !errors.As(r.err, &de) {
			// The transaction may hold part of it: none of the batch
			// is stored. The writes refused before keep their answer.
			err := r.err
			r.err = nil
			fail(err)
			return
		}
	}
	if err := tx.Commit(); err != nil {
		fail(err)
		return
	}
	for _, r := range batch {
		r.stored = r.err == nil
	}
	db.countCommit()
}

// fastStmts are the statements of appendFast, prepared on the driver
// connection they run on (conn): a transaction's BEGIN and COMMIT too, which
// database/sql's transactions have SQLite parse each time, beside its own
// work for each statement.
type fastStmts struct {
	conn                             any
	begin, commit, rollback, advance driver.Stmt
	insert                           driver.Stmt
}

// errNotFast ends appendFast's transaction when a write needs its checks
// step by step.
var errNotFast = errors.New("sqlite: append checked step by step")

// appendFast appends the writes of batch in one transaction, when each
// passes the checks of advanceIfFits, and reports whether it did: else
// (a write refused, or that its checks do not settle, or any failure) the
// transaction is rolled back, and nothing of the batch is kept. A write
// whose caller gave up is left out, its err set.
func (db *DB) appendFast(ctx context.Context, batch []*appendReq) bool {
	c, err := db.writes.Conn(ctx)
	if err != nil {
		return false
	}
	defer c.Close()
	err = c.Raw(func(dc any) (err error) {
		st, err := db.prepareFast(ctx, dc)
		if err != nil {
			return err
		}
		exec := func(s driver.Stmt, args ...driver.NamedValue) (int64, error) {
			res, err := s.(driver.StmtExecContext).ExecContext(ctx, args)
			if err != nil {
				return 0, err
			}
			return res.RowsAffected()
		}
		if _, err := exec(st.begin); err != nil {
			return err
		}
		committed := false
		defer func() {
			if committed {
				return
			}
			if _, rerr := exec(st.rollback); rerr != nil {
				// Not to be used again, in a transaction: database/sql
				// closes it, once its statements are.
				st.close()
				db.fast = nil
				err = driver.ErrBadConn
			}
		}()
		now := db.now()
		for _, r := range batch {
			if r.err = r.ctx.Err(); r.err != nil {
				continue // its caller gave up: not written
			}
			w := r.w
			n, err := exec(st.advance, arg(1, w.Seq), arg(2, r.size), arg(3, now), arg(4, r.id), arg(5, w.Seq-1),
				arg(6, db.maxLiveWrites()), arg(7, r.size))
			if err != nil {
				return err
			}
			if n == 0 {
				return errNotFast
			}
			// A nil record (a delete's) is stored as NULL, as database/sql
			// binds it.
			if _, err := exec(st.insert, arg(1, r.id), arg(2, w.Seq), arg(3, w.Op), arg(4, w.Items), arg(5, w.Field),
				arg(6, w.Key), arg(7, w.Record), arg(8, r.at)); err != nil {
				return err
			}
		}
		if _, err := exec(st.commit); err != nil {
			return err
		}
		committed = true
		return nil
	})
	return err == nil
}

// closeFast finalizes appendFast's statements on their connection, before
// it closes: a connection closed with statements of its own still open
// would stay open until they are (holding its files, and the log SQLite
// removes when the last connection closes).
func (db *DB) closeFast() {
	db.writeMu.Lock()
	defer db.writeMu.Unlock()
	st := db.fast
	if st == nil {
		return
	}
	db.fast = nil
	c, err := db.writes.Conn(context.Background())
	if err != nil {
		return
	}
	defer c.Close()
	_ = c.Raw(func(dc any) error {
		if dc == st.conn {
			st.close()
		}
		return nil
	})
}

// close finalizes the statements, within a Raw call on their connection.
func (st *fastStmts) close() {
	for _, s := range []driver.Stmt{st.begin, st.commit, st.rollback, st.advance, st.insert} {
		s.Close()
	}
}

// arg is the argument of a statement's parameter i.
func arg(i int, v any) driver.NamedValue { return driver.NamedValue{Ordinal: i, Value: v} }

// prepareFast returns appendFast's statements prepared on dc, the writing
// connection's driver connection, preparing them when it is new (those of
// a connection database/sql closed, which appendFast did not close first,
// are dropped: it closed with them).
func (db *DB) prepareFast(ctx context.Context, dc any) (*fastStmts, error) {
	if st := db.fast; st != nil && st.conn == dc {
		return st, nil
	}
	pc, ok := dc.(driver.ConnPrepareContext)
	if !ok {
		return nil, errors.New("sqlite: the driver does not prepare statements with a context")
	}
	st := &fastStmts{conn: dc}
	var prepared []driver.Stmt
	for _, p := range []struct {
		s    *driver.Stmt
		text string
	}{
		{&st.begin, "BEGIN IMMEDIATE"}, {&st.commit, "COMMIT"}, {&st.rollback, "ROLLBACK"},
		{&st.advance, advanceIfFits}, {&st.insert, insertWrite},
	} {
		s, err := pc.PrepareContext(ctx, p.text)
		if err != nil {
			for _, s := range prepared {
				s.Close()
			}
			return nil, err
		}
		*p.s = s
		prepared = append(prepared, s)
	}
	db.fast = st
	return st, nil
}

// Statements of an append, prepared once on the writing connection: a
// write is a few small statements, which SQLite would otherwise parse
// again each time (about a tenth of a write's CPU).
//
// Most writes are checked in the statement that stores them (appendFast):
// advanceIfFits moves the live data on when it is where the write was
// computed, the log has room, and the write does not grow the data or the
// workspace has no max_bytes (the column values in WHERE are the row's
// before the change). Others are checked step by step (appendWrite:
// selectLiveRow, then the workspace's limits), and refused or advanced
// with updateLiveSeq.
const (
	selectLiveRow = `SELECT workspace_id, size, live_seq, base_seq, live_size, base_file FROM mocks WHERE id = ?`
	insertWrite   = `INSERT INTO mock_writes (mock_id, seq, op, items, field, key, record, at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`
	updateLiveSeq = `UPDATE mocks SET live_seq = ?, live_size = ?, updated_at = ? WHERE id = ?`
	advanceIfFits = `UPDATE mocks SET live_seq = ?, live_size = ?, updated_at = ?
		WHERE id = ? AND live_seq = ? AND live_seq - base_seq < ?
		AND (? <= CASE WHEN live_seq > base_seq OR base_file IS NOT NULL THEN live_size ELSE size END
			OR (SELECT max_bytes FROM workspaces w WHERE w.id = mocks.workspace_id) IS NULL)`
)

// appendStmts are the append's statements, prepared on first use; nil
// when they could not be (each is then parsed as it runs).
type appendStmts struct {
	once                        sync.Once
	selectLive, insert, advance *sql.Stmt
}

// prepareAppends prepares the append's statements, once, before a
// transaction holds the writing connection (a statement is prepared on a
// connection of its own choosing, which would wait for the transaction).
func (db *DB) prepareAppends(ctx context.Context) {
	st := &db.appendStmts
	st.once.Do(func() {
		prepare := func(q string) *sql.Stmt {
			s, err := db.writes.PrepareContext(context.WithoutCancel(ctx), q)
			if err != nil {
				return nil
			}
			return s
		}
		st.selectLive, st.insert, st.advance = prepare(selectLiveRow), prepare(insertWrite), prepare(updateLiveSeq)
	})
}

// inTx returns the prepared statement s for tx (on the same connection:
// not prepared again), or nil when it could not be prepared.
func inTx(ctx context.Context, tx *sql.Tx, s *sql.Stmt) *sql.Stmt {
	if s == nil {
		return nil
	}
	return tx.StmtContext(ctx, s)
}

// execAppend runs one of the append's statements in tx: prepared, its
// text when it could not be.
func execAppend(ctx context.Context, tx *sql.Tx, prepared *sql.Stmt, text string, args ...any) error {
	var err error
	if s := inTx(ctx, tx, prepared); s != nil {
		_, err = s.ExecContext(ctx, args...)
	} else {
		_, err = tx.ExecContext(ctx, text, args...)
	}
	return err
}

// appendWrite appends r's write in tx, when its number follows the live
// data's. A refusal is a *decoy.Error returned before any change.
func (db *DB) appendWrite(ctx context.Context, tx *sql.Tx, r *appendReq) error {
	w := r.w
	var lr *liveRow
	var err error
	if s := inTx(ctx, tx, db.appendStmts.selectLive); s != nil {
		lr, err = scanLiveRow(s.QueryRowContext(ctx, r.id))
	} else {
		lr, err = readLiveRow(ctx, tx, r.id)
	}
	if err != nil {
		return err
	}
	if w.Seq != lr.seq+1 {
		return decoy.ErrLiveChanged(lr.seq)
	}
	if n := lr.seq - lr.baseSeq; n >= db.maxLiveWrites() {
		return decoy.ErrLogFull(n)
	}
	// Only a write that grows the live data is held to max_bytes; what
	// it adds to the count is its size less what the live data counted
	// before (nothing while it was the current version's).
	if r.size > lr.dataSize() {
		counted := int64(0)
		if lr.live() {
			counted = lr.liveSize
		}
		if err := checkLimits(ctx, tx, lr.workspaceID, 0, r.size-counted); err != nil {
			return err
		}
	}
	if err := execAppend(ctx, tx, db.appendStmts.insert, insertWrite, r.id, w.Seq, w.Op, w.Items, w.Field, w.Key, w.Record, r.at); err != nil {
		return err
	}
	return execAppend(ctx, tx, db.appendStmts.advance, updateLiveSeq, w.Seq, r.size, db.now(), r.id)
}

// Writes returns the writes after a number, read with the mock's base in
// one statement (one snapshot), so that a compaction between them cannot
// hide a gap.
func (db *DB) Writes(ctx context.Context, id string, after int64, limit int) ([]*decoy.Write, error) {
	if limit < 1 {
		return nil, decoy.Errorf(decoy.EINVALID, "limit must be 1 or more")
	}
	rows, err := db.reads.QueryContext(ctx, `
		SELECT m.base_seq, w.seq, w.op, w.items, w.field, w.key, w.record, w.at
		FROM mocks m LEFT JOIN mock_writes w ON w.mock_id = m.id AND w.seq > ?
		WHERE m.id = ? ORDER BY w.seq LIMIT ?`, after, id, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	found := false
	out := []*decoy.Write{}
	for rows.Next() {
		var baseSeq int64
		var seq, at sql.NullInt64
		var op, items, field, key sql.NullString
		var record []byte
		if err := rows.Scan(&baseSeq, &seq, &op, &items, &field, &key, &record, &at); err != nil {
			return nil, err
		}
		if !found && after < baseSeq {
			return nil, decoy.Errorf(decoy.ECONFLICT, "The writes after number %d were compacted: the base is at %d", after, baseSeq)
		}
		found = true
		if !seq.Valid {
			break // the mock, without writes after
		}
		out = append(out, &decoy.Write{Seq: seq.Int64, Op: op.String, Items: items.String, Field: field.String, Key: key.String,
			Record: record, At: fromMillis(at.Int64)})
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if !found {
		return nil, notFound()
	}
	return out, nil
}

// Live returns where a mock's live data stands.
func (db *DB) Live(ctx context.Context, id string) (decoy.LiveState, error) {
	r, err := readLiveRow(ctx, db.reads, id)
	if err != nil {
		return decoy.LiveState{}, err
	}
	return decoy.LiveState{Seq: r.seq, BaseSeq: r.baseSeq, Size: r.dataSize()}, nil
}

// LiveBase returns the base a compaction wrote, as its open file.
func (db *DB) LiveBase(ctx context.Context, id string) (decoy.Data, int64, bool, error) {
	var missing string
	for {
		r, err := readLiveRow(ctx, db.reads, id)
		if err != nil {
			return decoy.Data{}, 0, false, err
		}
		if !r.baseFile.Valid {
			return decoy.Data{}, r.baseSeq, false, nil
		}
		f, err := db.openDoc(r.baseFile.String)
		if docMissing(err) && r.baseFile.String != missing {
			// A compaction or a reset replaced it since its name was
			// read: read the new name (a name missing twice is lost).
			missing = r.baseFile.String
			continue
		}
		if err != nil {
			return decoy.Data{}, 0, false, err
		}
		return decoy.Data{File: f}, r.baseSeq, true, nil
	}
}

// errStale ends the transaction of a compaction that another made
// unneeded.
var errStale = errors.New("stale compaction")

// Compact writes the base to a file of docs/ before taking the write
// lock, so that writes do not wait on a document's write and sync, then
// names it in the mock's row and drops the writes it holds in one
// transaction. The file is marked pending meanwhile, so that the sweep of
// orphans leaves it be (see sweepNames).
func (db *DB) Compact(ctx context.Context, id string, seq int64, data decoy.Data) (err error) {
	defer func() { err = classify(err) }()
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
		return errors.New("sqlite: Compact takes the base's bytes")
	}
	r, err := readLiveRow(ctx, db.reads, id)
	if err == nil {
		err = check(r)
	}
	if errors.Is(err, errStale) {
		return nil
	}
	if err != nil {
		return err
	}
	// The bytes are written, never the file moved: a file given could be
	// one the caller still needs as it is (a version's, read from here).
	name, err := db.placePending(id, data.Bytes)
	if err != nil {
		return err
	}
	defer db.unpend(name)
	err = db.writeDocs(ctx, func(tx *sql.Tx, w *docWrite) error {
		w.placed = append(w.placed, name)
		r, err := readLiveRow(ctx, tx, id)
		if err != nil {
			return err
		}
		if err := check(r); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM mock_writes WHERE mock_id = ? AND seq <= ?`, id, seq); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE mocks SET base_seq = ?, base_file = ? WHERE id = ?`, seq, name, id); err != nil {
			return err
		}
		if r.baseFile.Valid {
			w.gone = append(w.gone, r.baseFile.String)
		}
		return nil
	})
	if errors.Is(err, errStale) {
		return nil
	}
	return err
}

// ResetLive drops a mock's writes and base under a new number.
func (db *DB) ResetLive(ctx context.Context, id string) (*decoy.Mock, error) {
	var m *decoy.Mock
	err := db.writeDocs(ctx, func(tx *sql.Tx, w *docWrite) error {
		r, err := readLiveRow(ctx, tx, id)
		if err != nil {
			return err
		}
		if !r.live() {
			m, err = scanMock(tx.QueryRowContext(ctx, `SELECT `+mockColumns+` FROM mocks WHERE id = ?`, id))
			return err
		}
		if err := resetLive(ctx, tx, w, id, r); err != nil {
			return err
		}
		m, err = scanMock(tx.QueryRowContext(ctx, `UPDATE mocks SET version = version + 1, updated_at = ? WHERE id = ? RETURNING `+mockColumns, db.now(), id))
		return err
	})
	if err != nil {
		return nil, err
	}
	return m, nil
}

// resetLive drops the writes and base of mock id, whose row said r, and
// gives its live data a number of its own: the current version's data is
// its base again. The base's file goes once tx commits. The caller changes
// the mock's version.
func resetLive(ctx context.Context, tx *sql.Tx, w *docWrite, id string, r *liveRow) error {
	if _, err := tx.ExecContext(ctx, `DELETE FROM mock_writes WHERE mock_id = ?`, id); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `UPDATE mocks SET live_seq = live_seq + 1, base_seq = live_seq + 1, live_size = 0, base_file = NULL WHERE id = ?`, id); err != nil {
		return err
	}
	if r.baseFile.Valid {
		w.gone = append(w.gone, r.baseFile.String)
	}
	return nil
}

// placePending places b in a new file of docs/ for mock id (see placeDoc)
// and marks it pending until unpend.
func (db *DB) placePending(id string, b []byte) (string, error) {
	name, err := docName(id)
	if err != nil {
		return "", err
	}
	db.pendingMu.Lock()
	if db.pending == nil {
		db.pending = map[string]bool{}
	}
	db.pending[name] = true
	db.pendingMu.Unlock()
	path := db.docPath(name)
	err = writeFile(path, b)
	if err == nil {
		err = syncDir(db.docPath(""))
	}
	if err != nil {
		db.removeDoc(name)
		db.unpend(name)
		return "", fmt.Errorf("place base: %w", err)
	}
	return name, nil
}

func (db *DB) unpend(name string) {
	db.pendingMu.Lock()
	delete(db.pending, name)
	db.pendingMu.Unlock()
}

// isPending reports whether a file of docs/ is being placed.
func (db *DB) isPending(name string) bool {
	db.pendingMu.Lock()
	defer db.pendingMu.Unlock()
	return db.pending[name]
}
