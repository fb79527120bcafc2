package sqlite

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/decoy-mock/decoy"
)

// Quota counts are the fixed cost of every served read, so they are kept in
// memory, where one process (see lockDir) counts exactly under a mutex.
// Each change is made durable against a crash of the process before the
// call returns, by a line appended to a journal (through a shared mapping
// of its file, so with no system call: see mappedJournal); once a second
// (and at Close) the changed counts are folded into SQLite and a new
// journal is begun. Open replays the journals not folded yet.
//
// A journal is a text file, quota-SEQ.journal, of lines:
//
//	+ ID MONTH MS  a reservation, at MS (Unix milliseconds; absent for a
//	               workspace, and in journals of older versions)
//	- ID MONTH   a release
//	x ID         the mock was deleted: the lines about it before this one
//	             no longer count
//
// The settings row quotaFoldedKey holds the last SEQ folded into SQLite.
//
// An ID is a mock's, counted in quota_usage, or a workspace's, whose reads
// are counted against its monthly_reads limit (§6.2) in workspace_reads:
// ids are UUIDs, and no mock has the id of a workspace. A deleted workspace
// is an "x" line as a deleted mock is. A workspace's reservations carry no
// MS: they count against no rate limit.
//
// A journal is kept for a rate window (decoy.RateWindow) after its last
// line, folded or not: its reservations are the served reads of the last
// minute, which Open gives back (RecentReads) so that a restart, graceful
// or not, does not reset the per-mock rate limits.
//
// A write that fails (a full disk) may have written part of its line: that
// part is cut off before anything else is appended, so that the next line
// does not continue it, and the reservation is refused, counted neither in
// memory nor at a replay. Until a write succeeds again, Ping says why.

const (
	journalPrefix  = "quota-"
	journalSuffix  = ".journal"
	quotaFoldedKey = "quota_journal_folded"
	// foldInterval is how often changed counts are written to SQLite.
	foldInterval = time.Second
	// maxQuotaCounts is how many counts memory keeps, past which those
	// not used since the last fold leave (SQLite has them): without it,
	// every mock read in a month would stay until the month ends.
	maxQuotaCounts = 4096
)

type quotaKey struct{ id, month string }

// quotaCount is a count in memory.
type quotaCount struct {
	n int64
	// used is quota.epoch when the count was last used.
	used int64
	// workspace is set when the id is a workspace's, not a mock's.
	workspace bool
}

// quota is the in-memory count of served responses per mock, or workspace,
// and month.
type quota struct {
	mu     sync.Mutex
	counts map[quotaKey]quotaCount
	// epoch advances at each fold; see evict.
	epoch   int64
	dirty   map[quotaKey]struct{} // changed since the last fold
	journal journalFile
	seq     int64 // of journal
	// size is the length of the whole lines in journal: where a line
	// that failed part way is cut back to.
	size int64
	// torn is set while the journal ends in part of a line that could
	// not be cut off: nothing is appended after it.
	torn bool
	// failed is the error of the last write, nil once one succeeded.
	failed error
	// unjournaled are mocks deleted whose "x" line could not be written:
	// it is written before any other line, until a fold makes it needless
	// (the journals that hold what came before it are gone then).
	unjournaled []string
	line        []byte
	closed      bool

	stop chan struct{} // closed by Close: the folding loop ends
	done chan struct{} // closed when it has
}

// journalFile is the quota journal as quota uses it: an *os.File, which
// tests replace by one that fails.
type journalFile interface {
	Write(b []byte) (int, error)
	Truncate(size int64) error
	Close() error
	Name() string
}

func journalName(dir string, seq int64) string {
	return filepath.Join(dir, journalPrefix+strconv.FormatInt(seq, 10)+journalSuffix)
}

// openQuota replays the journals not folded yet into SQLite, removes them,
// and begins a new journal.
func (db *DB) openQuota(ctx context.Context) error {
	folded, err := db.foldedSeq(ctx)
	if err != nil {
		return err
	}
	seqs, err := journalSeqs(db.dir)
	if err != nil {
		return err
	}
	last := folded
	deltas := map[quotaKey]int64{}
	for _, seq := range seqs {
		last = max(last, seq)
		if seq <= folded {
			continue // folded, but not removed before a crash
		}
		if err := replayJournal(journalName(db.dir, seq), deltas); err != nil {
			return err
		}
	}
	rows := make([]countRow, 0, len(deltas))
	for k, d := range deltas {
		if d != 0 {
			rows = append(rows, countRow{k, d})
		}
	}
	if err := db.writeCounts(ctx, rows, true, last); err != nil {
		return fmt.Errorf("replay quota journals: %w", err)
	}
	for _, seq := range seqs {
		if err := db.removeJournal(seq, true); err != nil {
			return err
		}
	}
	db.recent = &recentJournals{seqs: seqs, since: db.Now().Add(-decoy.RateWindow)}
	db.quota = &quota{
		counts: map[quotaKey]quotaCount{},
		dirty:  map[quotaKey]struct{}{},
		seq:    last + 1,
		stop:   make(chan struct{}),
		done:   make(chan struct{}),
	}
	if db.quota.journal, err = createJournal(db.dir, db.quota.seq); err != nil {
		return err
	}
	go db.foldLoop()
	return nil
}

func createJournal(dir string, seq int64) (journalFile, error) {
	f, err := openJournal(journalName(dir, seq))
	if err != nil {
		return nil, fmt.Errorf("quota journal: %w", err)
	}
	return f, nil
}

// journalSeqs returns the sequence numbers of the journals in dir, in order.
func journalSeqs(dir string) ([]int64, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var seqs []int64
	for _, e := range entries {
		name := e.Name()
		if !strings.HasPrefix(name, journalPrefix) || !strings.HasSuffix(name, journalSuffix) {
			continue
		}
		seq, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimPrefix(name, journalPrefix), journalSuffix), 10, 64)
		if err == nil && seq > 0 {
			seqs = append(seqs, seq)
		}
	}
	slices.Sort(seqs)
	return seqs, nil
}

// removeJournal removes journal seq, unless it was written to within the
// last rate window and keep is set; a journal already gone is no error.
func (db *DB) removeJournal(seq int64, keep bool) error {
	path := journalName(db.dir, seq)
	if keep {
		if st, err := os.Stat(path); err == nil && db.Now().Sub(st.ModTime()) < decoy.RateWindow {
			return nil
		}
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// recentJournals are the journals Open found, which hold the reads of the
// last rate window before it: until RecentReads reads them.
type recentJournals struct {
	seqs  []int64
	since time.Time
}

// RecentReads returns, once, the times of the reads of each mock counted
// in the last rate window before Open (decoy.RateWindow), from the quota
// journals, so that the rate limiter can hold them again. It keeps at
// most keep(id) of each mock's, the most recent (keep is asked once a
// mock; 0 or less: none): a limiter of n a window needs no more than the
// n most recent, the rest of a window that held more than n being full
// until they have left. What it holds is so bounded by the mocks' limits,
// as the limiter's own windows are, however many reads the journals hold.
func (db *DB) RecentReads(keep func(id string) int) map[string][]time.Time {
	r := db.recent
	db.recent = nil
	if r == nil {
		return nil
	}
	return recentReads(db.dir, r.seqs, r.since, keep)
}

// recentReads returns, per mock, the keep(id) most recent times of the
// reservations since since in the journals seqs (a mock deleted after
// them has none), reading each journal a line at a time.
func recentReads(dir string, seqs []int64, since time.Time, keep func(id string) int) map[string][]time.Time {
	kept := map[string]*recentTimes{}
	limits := map[string]int{}
	for _, seq := range seqs {
		f, err := os.Open(journalName(dir, seq))
		if err != nil {
			continue // removed as too old: nothing recent in it
		}
		_ = scanJournal(f, func(f [][]byte) { // what could not be read is not restored
			switch {
			case len(f) == 4 && string(f[0]) == "+" && isMonth(string(f[2])):
				ms, err := strconv.ParseInt(string(f[3]), 10, 64)
				if err != nil || !time.UnixMilli(ms).After(since) {
					return
				}
				id := string(f[1])
				n, ok := limits[id]
				if !ok {
					n = max(keep(id), 0)
					limits[id] = n
				}
				if n == 0 {
					return
				}
				r := kept[id]
				if r == nil {
					r = &recentTimes{n: n}
					kept[id] = r
				}
				r.add(ms)
			case len(f) == 2 && string(f[0]) == "x":
				delete(kept, string(f[1]))
			}
		})
		f.Close()
	}
	recent := make(map[string][]time.Time, len(kept))
	for id, r := range kept {
		slices.Sort(r.ms)
		times := make([]time.Time, len(r.ms))
		for i, ms := range r.ms {
			times[i] = time.UnixMilli(ms)
		}
		recent[id] = times
	}
	return recent
}

// scanJournal calls line with the fields of each whole line of a journal,
// a line at a time, up to its end or the zeros after its lines (see
// mappedJournal). The last line, without its newline, was cut short by a
// crash and never acknowledged: it is left out. A line too long to be one
// a journal writes is skipped.
func scanJournal(f *os.File, line func(fields [][]byte)) error {
	br := bufio.NewReaderSize(f, 64<<10)
	long := false
	for {
		b, err := br.ReadSlice('\n')
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			long = true
			continue
		case errors.Is(err, io.EOF):
			return nil
		case err != nil:
			return err
		case long:
			long = false
			continue
		case len(b) > 0 && b[0] == 0:
			return nil // the zeros after the lines
		}
		line(bytes.Fields(b))
	}
}

// recentTimes keeps the n most recent of the times it is given, in
// milliseconds: a min-heap, the least at ms[0].
type recentTimes struct {
	n  int
	ms []int64
}

func (r *recentTimes) add(ms int64) {
	if len(r.ms) < r.n {
		r.ms = append(r.ms, ms)
		for i := len(r.ms) - 1; i > 0; {
			p := (i - 1) / 2
			if r.ms[p] <= r.ms[i] {
				break
			}
			r.ms[p], r.ms[i] = r.ms[i], r.ms[p]
			i = p
		}
		return
	}
	if ms <= r.ms[0] {
		return
	}
	r.ms[0] = ms
	for i := 0; ; {
		l, least := 2*i+1, i
		if l < len(r.ms) && r.ms[l] < r.ms[least] {
			least = l
		}
		if l+1 < len(r.ms) && r.ms[l+1] < r.ms[least] {
			least = l + 1
		}
		if least == i {
			return
		}
		r.ms[i], r.ms[least] = r.ms[least], r.ms[i]
		i = least
	}
}

// replayJournal adds the changes a journal records to deltas. A line cut
// short by a crash (the last, without its newline) was never acknowledged
// and is skipped, as is any line that does not parse: a journal written
// before lines that failed part way were cut off may hold one continued
// by the next line, which never parses as a count (too many fields, or a
// month that is not one).
func replayJournal(path string, deltas map[quotaKey]int64) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return scanJournal(f, func(f [][]byte) {
		switch {
		case (len(f) == 3 || len(f) == 4) && string(f[0]) == "+" && isMonth(string(f[2])):
			deltas[quotaKey{string(f[1]), string(f[2])}]++
		case len(f) == 3 && string(f[0]) == "-" && isMonth(string(f[2])):
			deltas[quotaKey{string(f[1]), string(f[2])}]--
		case len(f) == 2 && string(f[0]) == "x":
			for k := range deltas {
				if k.id == string(f[1]) {
					delete(deltas, k)
				}
			}
		}
	})
}

// isMonth reports whether s is a month as decoy.Month writes it, YYYY-MM.
func isMonth(s string) bool {
	if len(s) != 7 || s[4] != '-' {
		return false
	}
	for i, c := range []byte(s) {
		if i != 4 && (c < '0' || c > '9') {
			return false
		}
	}
	return true
}

func (db *DB) foldedSeq(ctx context.Context) (int64, error) {
	var v []byte
	err := db.writes.QueryRowContext(ctx, `SELECT value FROM settings WHERE key = ?`, quotaFoldedKey).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(string(v), 10, 64)
}

type countRow struct {
	key quotaKey
	n   int64 // the count, or a change to it (see writeCounts)
}

// writeCounts writes counts into SQLite in one transaction, and records
// that the journals up to seq are in: absolute counts, or, with add, changes
// to the stored ones. Counts of mocks and workspaces deleted meanwhile are
// left out. A count goes to the table of what its id is (a replayed one
// does not say): each statement writes only the ids of its table.
func (db *DB) writeCounts(ctx context.Context, rows []countRow, add bool, seq int64) error {
	tx, err := db.counts.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var stmts []*sql.Stmt
	for _, t := range []struct{ table, col, parent string }{
		{"quota_usage", "mock_id", "mocks"},
		{"workspace_reads", "workspace_id", "workspaces"},
	} {
		q := `INSERT INTO ` + t.table + ` (` + t.col + `, month, used)
			SELECT ?1, ?2, ?3 WHERE EXISTS (SELECT 1 FROM ` + t.parent + ` WHERE id = ?1)
			ON CONFLICT (` + t.col + `, month) DO UPDATE SET used = excluded.used`
		if add {
			q = `INSERT INTO ` + t.table + ` (` + t.col + `, month, used)
				SELECT ?1, ?2, max(?3, 0) WHERE EXISTS (SELECT 1 FROM ` + t.parent + ` WHERE id = ?1)
				ON CONFLICT (` + t.col + `, month) DO UPDATE SET used = max(used + ?3, 0)`
		}
		stmt, err := tx.PrepareContext(ctx, q)
		if err != nil {
			return err
		}
		defer stmt.Close()
		stmts = append(stmts, stmt)
	}
	for _, r := range rows {
		for _, stmt := range stmts {
			if _, err := stmt.ExecContext(ctx, r.key.id, r.key.month, r.n); err != nil {
				return err
			}
		}
	}
	// The first counts of a newer month (once a month, and once at a
	// start) delete the counts of the months past decoy.MonthsKept:
	// without it, a row of every mock and workspace read stayed for every
	// month, for ever.
	newest := ""
	for _, r := range rows {
		newest = max(newest, r.key.month)
	}
	oldest := decoy.OldestKeptMonth(newest)
	if newest > db.quotaPrunedFor && oldest != "" {
		for _, table := range []string{"quota_usage", "workspace_reads"} {
			if _, err := tx.ExecContext(ctx, `DELETE FROM `+table+` WHERE month < ?1`, oldest); err != nil {
				return err
			}
		}
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO settings (key, value) VALUES (?1, ?2)
		ON CONFLICT (key) DO UPDATE SET value = excluded.value`, quotaFoldedKey, []byte(strconv.FormatInt(seq, 10))); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	db.quotaPrunedFor = max(db.quotaPrunedFor, newest)
	return nil
}

func (db *DB) foldLoop() {
	defer close(db.quota.done)
	t := time.NewTicker(foldInterval)
	defer t.Stop()
	for {
		select {
		case <-db.quota.stop:
			return
		case <-t.C:
			// An error leaves the counts changed, for the next fold; the
			// journals keep them meanwhile.
			_ = db.fold()
			db.writeMu.Lock()
			db.keepReserve()
			db.writeMu.Unlock()
		}
	}
}

// fold writes the counts changed since the last fold into SQLite and
// begins a new journal; once they are in, the journals before it go. It
// holds the write lock throughout, so that no mock is deleted or created
// between taking the counts and writing them.
func (db *DB) fold() error {
	db.writeMu.Lock()
	defer db.writeMu.Unlock()
	q := db.quota
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return nil
	}
	if len(q.dirty) == 0 {
		q.evict(db.Now())
		folded := q.seq - 1 // every journal before the current one
		q.mu.Unlock()
		return db.dropJournals(folded)
	}
	// The counts taken are in the journals up to oldSeq. An empty journal
	// goes on (a fold that fails, on a full disk, would otherwise leave a
	// new file every second); any other is closed and a new one begun.
	oldSeq := q.seq - 1
	var old journalFile
	if q.size > 0 || q.torn {
		next, err := createJournal(db.dir, q.seq+1)
		if err != nil {
			q.mu.Unlock()
			return err
		}
		old, oldSeq = q.journal, q.seq
		q.journal, q.seq, q.size, q.torn = next, q.seq+1, 0, false
	}
	rows := make([]countRow, 0, len(q.dirty))
	for k := range q.dirty {
		rows = append(rows, countRow{k, q.counts[k].n})
	}
	q.dirty = map[quotaKey]struct{}{} // not clear: it would keep the room of a burst
	q.mu.Unlock()
	if old != nil {
		old.Close()
	}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := db.writeCounts(ctx, rows, false, oldSeq); err != nil {
		// Taken as changed again: the next fold writes them, as they are
		// then. Until one succeeds, no journal is removed.
		q.mu.Lock()
		for _, r := range rows {
			if _, ok := q.counts[r.key]; ok {
				q.dirty[r.key] = struct{}{}
			}
		}
		q.mu.Unlock()
		return err
	}
	q.mu.Lock()
	q.evict(db.Now())
	// The lines the deletions' "x" would have followed left with their
	// journals; the counts of the mocks are not in SQLite.
	q.unjournaled = nil
	q.mu.Unlock()
	return db.dropJournals(oldSeq)
}

// dropJournals removes the journals up to seq, all folded, once they are
// older than the rate window.
func (db *DB) dropJournals(seq int64) error {
	seqs, err := journalSeqs(db.dir)
	if err != nil {
		return err
	}
	for _, s := range seqs {
		if s <= seq {
			_ = db.removeJournal(s, true) // tried again at the next fold
		}
	}
	return nil
}

// evict forgets counts that SQLite holds already: those of past months,
// and, past maxQuotaCounts, those not used since the last eviction, so
// that memory holds the counts in use and not one per mock read this
// month. It is called under q.mu by fold, which holds the write lock:
// no fold is writing, so every count not dirty is in SQLite.
func (q *quota) evict(now time.Time) {
	month := decoy.Month(now)
	crowded := len(q.counts) > maxQuotaCounts
	dropped := 0
	for k, c := range q.counts {
		if _, dirty := q.dirty[k]; !dirty && (k.month < month || crowded && c.used < q.epoch) {
			delete(q.counts, k)
			dropped++
		}
	}
	if dropped > maxQuotaCounts && dropped > 3*len(q.counts) {
		// A map keeps the room of its largest size (maps.Clone too):
		// after a burst of mocks read, that would stay for good.
		counts := make(map[quotaKey]quotaCount, len(q.counts))
		maps.Copy(counts, q.counts)
		q.counts = counts
	}
	q.epoch++
}

// closeQuota stops folding, folds what is left and closes the journal.
func (db *DB) closeQuota() error {
	q := db.quota
	if q == nil {
		return nil
	}
	close(q.stop)
	<-q.done
	err := db.fold()
	q.mu.Lock()
	q.closed = true
	if err == nil {
		err = q.journal.Close()
		if len(q.dirty) == 0 {
			os.Remove(q.journal.Name()) // empty, or folded
		}
	} else {
		q.journal.Close()
	}
	q.mu.Unlock()
	return err
}

// load returns the count of key, read from SQLite on first use, and
// whether its mock or workspace exists. It is called with q.mu held: a
// first read of a mock in a month waits for one indexed read (WAL readers
// never wait for the writer).
func (db *DB) load(ctx context.Context, key quotaKey) (quotaCount, bool, error) {
	q := db.quota
	if c, ok := q.counts[key]; ok {
		if c.used != q.epoch {
			c.used = q.epoch
			q.counts[key] = c
		}
		return c, true, nil
	}
	var mock, workspace bool
	var used sql.NullInt64
	err := db.reads.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM mocks WHERE id = ?1),
		EXISTS (SELECT 1 FROM workspaces WHERE id = ?1),
		coalesce((SELECT used FROM quota_usage WHERE mock_id = ?1 AND month = ?2),
			(SELECT used FROM workspace_reads WHERE workspace_id = ?1 AND month = ?2))`,
		key.id, key.month).Scan(&mock, &workspace, &used)
	if err != nil || !mock && !workspace {
		return quotaCount{}, false, err
	}
	c := quotaCount{n: used.Int64, used: q.epoch, workspace: !mock}
	q.counts[key] = c
	return c, true, nil
}

var errClosed = errors.New("sqlite: store closed")

// record appends a journal line, under q.mu, after the "x" lines not
// written yet.
func (q *quota) record(op byte, id, month string, at int64) error {
	if q.closed {
		return errClosed
	}
	for len(q.unjournaled) > 0 {
		if err := q.append('x', q.unjournaled[0], "", 0); err != nil {
			return err
		}
		q.unjournaled = q.unjournaled[1:]
	}
	return q.append(op, id, month, at)
}

// append writes one line to the journal, under q.mu. A write that fails
// part way is cut off, so that the line counts nowhere: neither in memory
// (the caller changes no count) nor at a replay.
func (q *quota) append(op byte, id, month string, at int64) error {
	if err := q.mend(); err != nil {
		return err
	}
	q.line = q.line[:0]
	if op != 0 {
		q.line = append(q.line, op)
	}
	if id != "" {
		q.line = append(q.line, ' ')
		q.line = append(q.line, id...)
	}
	if month != "" {
		q.line = append(q.line, ' ')
		q.line = append(q.line, month...)
	}
	if at != 0 {
		q.line = append(q.line, ' ')
		q.line = strconv.AppendInt(q.line, at, 10)
	}
	q.line = append(q.line, '\n')
	n, err := q.journal.Write(q.line)
	if err != nil {
		q.failed, q.torn = err, n > 0
		_ = q.mend() // else before the next line
		return journalError(err)
	}
	q.size += int64(n)
	q.failed = nil
	return nil
}

// mend cuts off what a failed write left of a line.
func (q *quota) mend() error {
	if !q.torn {
		return nil
	}
	if err := q.journal.Truncate(q.size); err != nil {
		return journalError(err)
	}
	q.torn = false
	return nil
}

// errJournalNoSpace is the answer to a count the journal has no room for.
var errJournalNoSpace = decoy.Errorf(decoy.ENOSPACE, "The quota journal cannot be written: the data directory's file system is full")

func journalError(err error) error {
	if noSpace(err) {
		return fmt.Errorf("%w (%w)", errJournalNoSpace, err)
	}
	return decoy.Errorf(decoy.EUNAVAILABLE, "The quota journal cannot be written: %v", err)
}

// check returns the error of the journal's last write if it failed and
// none succeeded since. It then tries again with a line no replay counts
// (an empty one), so that the answer changes once the cause is gone,
// without waiting for a read: while it lasts, /readyz sends reads away.
func (q *quota) check() error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.failed == nil || q.closed {
		return nil
	}
	return q.append(0, "", "", 0)
}

// ReserveQuota counts one served response of a mock, or one read of a
// workspace's mocks (id is then the workspace's), when fewer than limit
// were counted (limit 0: always). The count is exact: one process counts,
// under one mutex; it is durable against a crash of the process once this
// returns.
func (db *DB) ReserveQuota(ctx context.Context, id, month string, limit int64) (int64, bool, error) {
	q := db.quota
	key := quotaKey{id, month}
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return 0, false, errClosed
	}
	c, exists, err := db.load(ctx, key)
	switch {
	case err != nil:
		return 0, false, err
	case !exists:
		return 0, false, notFound()
	case limit > 0 && c.n >= limit:
		return c.n, false, nil
	}
	var at int64 // a workspace's reads count against no rate limit
	if !c.workspace {
		at = db.Now().UnixMilli()
	}
	if err := q.record('+', id, month, at); err != nil {
		return c.n, false, err
	}
	c.n++
	q.counts[key] = c
	q.dirty[key] = struct{}{}
	return c.n, true, nil
}

// ReleaseQuota takes back one reservation; a count never goes below zero.
func (db *DB) ReleaseQuota(ctx context.Context, id, month string) error {
	q := db.quota
	key := quotaKey{id, month}
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return errClosed
	}
	c, exists, err := db.load(ctx, key)
	if err != nil || !exists || c.n == 0 {
		return err
	}
	if err := q.record('-', id, month, 0); err != nil {
		return err
	}
	c.n--
	q.counts[key] = c
	q.dirty[key] = struct{}{}
	return nil
}

// QuotaUsed returns the count of a mock or workspace in a month (0 for a
// missing one).
func (db *DB) QuotaUsed(ctx context.Context, id, month string) (int64, error) {
	q := db.quota
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return 0, errClosed
	}
	c, _, err := db.load(ctx, quotaKey{id, month})
	return c.n, err
}

// forgetCounts drops the counts of a deleted mock or workspace, after its
// rows went from SQLite, and journals the deletion, so that a replay does
// not count what came before it against a mock made again under the same
// id.
func (db *DB) forgetCounts(id string) error {
	q := db.quota
	q.mu.Lock()
	defer q.mu.Unlock()
	for k := range q.counts {
		if k.id == id {
			delete(q.counts, k)
			delete(q.dirty, k)
		}
	}
	if err := q.record('x', id, "", 0); err != nil {
		// The mock is gone, and its counts with it; the line is written
		// before the next one, or made needless by the next fold.
		q.unjournaled = append(q.unjournaled, id)
	}
	return nil
}
