package sqlite

import (
	"context"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/decoy-mock/decoy"
)

func openAt(t *testing.T, dir string) *DB {
	t.Helper()
	db, err := Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	return db
}

// crash abandons db as a killed process would: nothing is folded, the
// journal stays as written, and the lock goes.
func crash(db *DB) {
	close(db.quota.stop)
	<-db.quota.done
	db.quota.journal.Close()
	db.reads.Close()
	db.counts.Close()
	db.writes.Close()
	db.lock.Close()
}

func mockN(n int) *decoy.Mock {
	return &decoy.Mock{ID: "00000000-0000-4000-8000-00000000000" + string(rune('0'+n)), ContentType: "application/json", Status: 200}
}

// keepAll keeps every recent read of every mock (see RecentReads).
func keepAll(string) int { return 1 << 30 }

func used(t *testing.T, db *DB, id, month string) int64 {
	t.Helper()
	n, err := db.QuotaUsed(context.Background(), id, month)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// Counts acknowledged before a crash are all there after it: replayed from
// the journal, with releases and deletions applied in order.
func TestQuotaJournalReplay(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db := openAt(t, dir)
	a, b := mockN(1), mockN(2)
	for _, m := range []*decoy.Mock{a, b} {
		if _, err := db.CreateMock(ctx, m, decoy.Data{Bytes: []byte(`[]`)}); err != nil {
			t.Fatal(err)
		}
	}
	for range 5 {
		db.ReserveQuota(ctx, a.ID, "2026-11", 0)
	}
	db.ReleaseQuota(ctx, a.ID, "2026-11")
	db.ReserveQuota(ctx, a.ID, "2026-12", 0)
	// b is counted, deleted and made again: only what came after counts.
	for range 3 {
		db.ReserveQuota(ctx, b.ID, "2026-11", 0)
	}
	if err := db.fold(); err != nil { // some counts in SQLite, later ones only journaled
		t.Fatal(err)
	}
	db.ReserveQuota(ctx, b.ID, "2026-11", 0)
	if err := db.DeleteMock(ctx, b.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := db.CreateMock(ctx, b, decoy.Data{Bytes: []byte(`[]`)}); err != nil {
		t.Fatal(err)
	}
	db.ReserveQuota(ctx, b.ID, "2026-11", 0)
	db.ReserveQuota(ctx, a.ID, "2026-11", 0)
	crash(db)

	// A line cut short by the crash was never acknowledged.
	seqs, _ := journalSeqs(dir)
	if len(seqs) == 0 {
		t.Fatal("no journal left by the crash")
	}
	f, err := os.OpenFile(journalName(dir, seqs[len(seqs)-1]), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("+ " + a.ID + " 2026-1")
	f.Close()

	db = openAt(t, dir)
	for _, tc := range []struct {
		id, month string
		want      int64
	}{
		{a.ID, "2026-11", 5}, // 5 - 1 + 1
		{a.ID, "2026-12", 1},
		{b.ID, "2026-11", 1}, // 3 + 1 before the deletion do not count
	} {
		if got := used(t, db, tc.id, tc.month); got != tc.want {
			t.Errorf("%s %s: %d, want %d", tc.id, tc.month, got, tc.want)
		}
	}
	// Replayed into SQLite. The journals of the last minute stay, for the
	// rate limits (see RecentReads), and are not counted again.
	var n int64
	if err := db.reads.QueryRow(`SELECT used FROM quota_usage WHERE mock_id = ? AND month = '2026-11'`, a.ID).Scan(&n); err != nil || n != 5 {
		t.Errorf("SQLite holds %d, %v; want 5", n, err)
	}
	recent := db.RecentReads(keepAll)
	if len(recent[a.ID]) != 7 || len(recent[b.ID]) != 1 {
		t.Errorf("recent reads: %d of a, %d of b; want 7 (all its reservations) and 1 (since it was made again)", len(recent[a.ID]), len(recent[b.ID]))
	}
	if db.RecentReads(keepAll) != nil {
		t.Error("RecentReads gave them twice")
	}
	crash(db)
	db = openAt(t, dir)
	defer db.Close()
	if got := used(t, db, a.ID, "2026-11"); got != 5 {
		t.Errorf("after a second start: %d, want 5 (journals counted once)", got)
	}
	if len(db.RecentReads(keepAll)[a.ID]) != 7 {
		t.Error("the reads of the last minute were not there after a second start")
	}
}

// Journals stay a rate window after they were last written, then go.
func TestQuotaJournalsLeaveAfterTheWindow(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db := openAt(t, dir)
	defer db.Close()
	m := mockN(1)
	db.CreateMock(ctx, m, decoy.Data{Bytes: []byte(`[]`)})
	db.ReserveQuota(ctx, m.ID, "2026-11", 0)
	first := db.quota.seq
	if err := db.fold(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(journalName(dir, first)); err != nil {
		t.Fatalf("journal %d gone right after its fold: %v", first, err)
	}
	old := time.Now().Add(-decoy.RateWindow - time.Second)
	if err := os.Chtimes(journalName(dir, first), old, old); err != nil {
		t.Fatal(err)
	}
	if err := db.fold(); err != nil { // nothing changed: still tidies
		t.Fatal(err)
	}
	if _, err := os.Stat(journalName(dir, first)); !os.IsNotExist(err) {
		t.Errorf("journal %d still there a rate window after: %v", first, err)
	}
}

// A fold writes the changed counts into SQLite and drops the journal they
// were in; Close folds what is left.
func TestQuotaFold(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db := openAt(t, dir)
	m := mockN(1)
	db.CreateMock(ctx, m, decoy.Data{Bytes: []byte(`[]`)})
	for range 3 {
		db.ReserveQuota(ctx, m.ID, "2026-11", 0)
	}
	if err := db.fold(); err != nil {
		t.Fatal(err)
	}
	var n int64
	db.reads.QueryRow(`SELECT used FROM quota_usage WHERE mock_id = ?`, m.ID).Scan(&n)
	if n != 3 {
		t.Errorf("SQLite holds %d after the fold, want 3", n)
	}
	db.ReserveQuota(ctx, m.ID, "2026-11", 0)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	for range 2 { // the journals kept for the rate window count once
		db = openAt(t, dir)
		if got := used(t, db, m.ID, "2026-11"); got != 4 {
			t.Errorf("after reopening: %d, want 4", got)
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// Counts of past months leave memory once they are in SQLite, and are
// read back from it when asked for.
func TestQuotaEvictsPastMonths(t *testing.T) {
	ctx := context.Background()
	db := openAt(t, t.TempDir())
	defer db.Close()
	m := mockN(1)
	db.CreateMock(ctx, m, decoy.Data{Bytes: []byte(`[]`)})
	now := db.Now().UTC()
	last := decoy.Month(time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, time.UTC).Add(-time.Hour))
	db.ReserveQuota(ctx, m.ID, last, 0)
	db.ReserveQuota(ctx, m.ID, decoy.Month(now), 0)
	if err := db.fold(); err != nil {
		t.Fatal(err)
	}
	db.quota.mu.Lock()
	_, past := db.quota.counts[quotaKey{m.ID, last}]
	_, current := db.quota.counts[quotaKey{m.ID, decoy.Month(now)}]
	db.quota.mu.Unlock()
	if past || !current {
		t.Errorf("in memory after a fold: past month %v (want false), current %v (want true)", past, current)
	}
	if got := used(t, db, m.ID, last); got != 1 {
		t.Errorf("past month read back as %d, want 1", got)
	}
}

// Counts of months past decoy.MonthsKept are deleted once a newer month
// is counted: a row of every mock and workspace read stayed for every
// month, for ever (found by an audit).
func TestQuotaPrunesOldMonths(t *testing.T) {
	ctx := context.Background()
	db := openAt(t, t.TempDir())
	defer db.Close()
	m := mockN(1)
	db.CreateMock(ctx, m, decoy.Data{Bytes: []byte(`[]`)})
	rows := func() int {
		var n int
		if err := db.reads.QueryRowContext(ctx, `SELECT count(*) FROM quota_usage WHERE mock_id = ?`, m.ID).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	for _, month := range []string{"2026-07", "2026-08", "2026-09"} {
		db.ReserveQuota(ctx, m.ID, month, 0)
		if err := db.fold(); err != nil {
			t.Fatal(err)
		}
	}
	if n := rows(); n != 2 {
		t.Errorf("after counts in three months: %d rows, want the newest 2", n)
	}
	if got := used(t, db, m.ID, "2026-07"); got != 0 {
		t.Errorf("2026-07 after it was pruned: %d", got)
	}
	if got := used(t, db, m.ID, "2026-08"); got != 1 {
		t.Errorf("2026-08, the month before the newest: %d, want 1", got)
	}
	// An older month counted late (a replica behind) prunes nothing more.
	db.ReserveQuota(ctx, m.ID, "2026-08", 0)
	if err := db.fold(); err != nil {
		t.Fatal(err)
	}
	if got := used(t, db, m.ID, "2026-08"); got != 2 {
		t.Errorf("2026-08 counted again: %d, want 2", got)
	}
}

// One process per data directory: the counts are exact only in the memory
// of the one that counts.
func TestOneProcessPerDataDir(t *testing.T) {
	dir := t.TempDir()
	db := openAt(t, dir)
	_, err := Open(context.Background(), dir)
	if err == nil || !strings.Contains(err.Error(), "in use by another decoy process") {
		t.Fatalf("second Open on the same directory: %v", err)
	}
	db.Close()
	db2 := openAt(t, dir) // free again once closed
	db2.Close()
}

// Past maxQuotaCounts, the counts not used since the last fold leave
// memory; those in use stay, and every count reads back right.
func TestQuotaCountsBounded(t *testing.T) {
	ctx := context.Background()
	db := openAt(t, t.TempDir())
	defer db.Close()
	stopFolding(db) // the test folds
	const mocks = maxQuotaCounts + 500
	tx, err := db.writes.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := range mocks {
		if _, err := tx.ExecContext(ctx, `INSERT INTO mocks (id, content_type, size, etag, created_at, updated_at, data_file)
			VALUES (?, 'application/json', 0, '', 0, 0, 'none')`, bigMockN(i).ID); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	month := decoy.Month(db.Now())
	for i := range mocks {
		if _, ok, err := db.ReserveQuota(ctx, bigMockN(i).ID, month, 0); err != nil || !ok {
			t.Fatalf("mock %d: %v %v", i, ok, err)
		}
	}
	held := func() int {
		db.quota.mu.Lock()
		defer db.quota.mu.Unlock()
		return len(db.quota.counts)
	}
	if err := db.fold(); err != nil { // writes them: all were just used
		t.Fatal(err)
	}
	if n := held(); n != mocks {
		t.Fatalf("%d counts in memory after the fold that wrote them, want %d", n, mocks)
	}
	hot := bigMockN(7).ID
	db.ReserveQuota(ctx, hot, month, 0)
	if err := db.fold(); err != nil {
		t.Fatal(err)
	}
	if n := held(); n != 1 {
		t.Fatalf("%d counts in memory once the others were not used for a fold, want 1 (the one in use)", n)
	}
	for i := range mocks {
		want := int64(1)
		if bigMockN(i).ID == hot {
			want = 2
		}
		if got := used(t, db, bigMockN(i).ID, month); got != want {
			t.Fatalf("mock %d: %d, want %d", i, got, want)
		}
	}
}

// stopFolding stops db's folding loop, for a test that folds itself.
func stopFolding(db *DB) {
	close(db.quota.stop)
	<-db.quota.done
	db.quota.stop = make(chan struct{}) // for Close
}

// A workspace's reads (its monthly_reads) are journaled and folded as a
// mock's are, count against no rate limit, and go with the workspace.
func TestQuotaWorkspaceReplay(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db := openAt(t, dir)
	w, err := db.CreateWorkspace(ctx, &decoy.Workspace{Name: "acme"}, "")
	if err != nil {
		t.Fatal(err)
	}
	gone, err := db.CreateWorkspace(ctx, &decoy.Workspace{Name: "gone"}, "")
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		db.ReserveQuota(ctx, w.ID, "2026-11", 0)
		db.ReserveQuota(ctx, gone.ID, "2026-11", 0)
	}
	if err := db.fold(); err != nil {
		t.Fatal(err)
	}
	var n int64
	if err := db.reads.QueryRow(`SELECT used FROM workspace_reads WHERE workspace_id = ? AND month = '2026-11'`, w.ID).Scan(&n); err != nil || n != 3 {
		t.Errorf("SQLite holds %d, %v; want 3", n, err)
	}
	db.ReserveQuota(ctx, w.ID, "2026-11", 0) // journaled only
	db.ReserveQuota(ctx, gone.ID, "2026-11", 0)
	if _, err := db.DeleteWorkspace(ctx, gone.ID); err != nil {
		t.Fatal(err)
	}
	crash(db)

	db = openAt(t, dir)
	defer db.Close()
	if got := used(t, db, w.ID, "2026-11"); got != 4 {
		t.Errorf("after the crash: %d, want 4", got)
	}
	if got := used(t, db, gone.ID, "2026-11"); got != 0 {
		t.Errorf("a deleted workspace: %d, want 0", got)
	}
	if err := db.reads.QueryRow(`SELECT COUNT(*) FROM workspace_reads WHERE workspace_id = ?`, gone.ID).Scan(&n); err != nil || n != 0 {
		t.Errorf("rows of a deleted workspace: %d, %v", n, err)
	}
	if recent := db.RecentReads(keepAll); len(recent) != 0 {
		t.Errorf("a workspace's reads count against rate limits: %v", recent)
	}
}

// After a restart, a mock's reads of the last minute are restored up to
// its rate limit, the most recent of them, and none of a mock without a
// limit, however many the journals hold: what a start holds is bounded
// by the limits, not by the traffic before it.
func TestRecentReadsBounded(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db := openAt(t, dir)
	clock := time.Now().Add(-30 * time.Second)
	db.Now = func() time.Time { return clock }
	limited, unlimited, deleted := mockN(1), mockN(2), mockN(3)
	for _, m := range []*decoy.Mock{limited, unlimited, deleted} {
		if _, err := db.CreateMock(ctx, m, decoy.Data{Bytes: []byte(`[]`)}); err != nil {
			t.Fatal(err)
		}
	}
	const reads, limit = 5000, 7
	var written []int64
	for i := range reads {
		// Out of order by a few milliseconds, as concurrent reads append.
		clock = clock.Add(time.Millisecond)
		at := clock
		if i%3 == 0 {
			at = clock.Add(-2 * time.Millisecond)
		}
		db.Now = func() time.Time { return at }
		written = append(written, at.UnixMilli())
		for _, m := range []*decoy.Mock{limited, unlimited, deleted} {
			if _, _, err := db.ReserveQuota(ctx, m.ID, decoy.Month(clock), 0); err != nil {
				t.Fatal(err)
			}
		}
	}
	db.Now = time.Now
	if err := db.DeleteMock(ctx, deleted.ID); err != nil {
		t.Fatal(err)
	}
	crash(db)

	db = openAt(t, dir)
	defer db.Close()
	asked := map[string]int{}
	recent := db.RecentReads(func(id string) int {
		asked[id]++
		if id == limited.ID {
			return limit
		}
		return 0
	})
	if len(recent) != 1 || asked[limited.ID] != 1 || asked[unlimited.ID] != 1 {
		t.Fatalf("restored the reads of %d mocks, asked %v: want only the limited one's, each mock asked once", len(recent), asked)
	}
	got := recent[limited.ID]
	if len(got) != limit {
		t.Fatalf("%d reads restored, want the limit, %d", len(got), limit)
	}
	slices.Sort(written)
	want := written[len(written)-limit:]
	for i, at := range got {
		if at.UnixMilli() != want[i] {
			t.Fatalf("restored %v, want the most recent, in order: %v", got, want)
		}
	}
}

// A line longer than any a journal writes (a damaged file) is skipped, and
// the lines after it are replayed: the store still opens.
func TestQuotaJournalLongLine(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db := openAt(t, dir)
	m := mockN(1)
	if _, err := db.CreateMock(ctx, m, decoy.Data{Bytes: []byte(`[]`)}); err != nil {
		t.Fatal(err)
	}
	crash(db)
	seqs, _ := journalSeqs(dir)
	damaged := strings.Repeat("+", 200<<10) + "\n+ " + m.ID + " 2026-11\n+ " + m.ID + " 2026-11 " + strconv.FormatInt(time.Now().UnixMilli(), 10) + "\n"
	if err := os.WriteFile(journalName(dir, seqs[len(seqs)-1]+1), []byte(damaged), 0o600); err != nil {
		t.Fatal(err)
	}
	db = openAt(t, dir)
	defer db.Close()
	if got := used(t, db, m.ID, "2026-11"); got != 2 {
		t.Errorf("%d counted, want the 2 lines after the long one", got)
	}
	if got := len(db.RecentReads(keepAll)[m.ID]); got != 1 {
		t.Errorf("%d recent reads, want 1", got)
	}
}
