package sqlite

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/decoy-mock/decoy"
)

func docFiles(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(dir, DocsDir))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

func appendCreates(t *testing.T, db *DB, id string, from, to int64) {
	t.Helper()
	for seq := from + 1; seq <= to; seq++ {
		w := &decoy.Write{Seq: seq, Op: decoy.WriteCreate, Field: "id", Key: strconv.FormatInt(seq, 10), Record: fmt.Appendf(nil, `{"id":%d}`, seq)}
		if err := db.AppendWrite(context.Background(), id, w, 10*seq); err != nil {
			t.Fatalf("AppendWrite(%d): %v", seq, err)
		}
	}
}

// A base is a file of docs/ while it is the base, and no longer: a newer
// base, a reset, new data and the mock's deletion remove it, and a stale
// compaction leaves none.
func TestLiveBaseFiles(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db := openAt(t, dir)
	defer db.Close()
	m := mockN(1)
	if _, err := db.CreateMock(ctx, m, decoy.Data{Bytes: []byte(`[]`)}); err != nil {
		t.Fatal(err)
	}
	want := func(n int, what string) {
		t.Helper()
		if files := docFiles(t, dir); len(files) != n {
			t.Errorf("%s: %d files in docs/, want %d: %v", what, len(files), n, files)
		}
	}
	compact := func(seq int64) {
		t.Helper()
		if err := db.Compact(ctx, m.ID, seq, decoy.Data{Bytes: fmt.Appendf(nil, "base %d", seq)}); err != nil {
			t.Fatal(err)
		}
	}
	appendCreates(t, db, m.ID, 0, 4)
	want(1, "writes")
	compact(2)
	want(2, "a base")
	compact(4)
	want(2, "a newer base")
	compact(3)
	want(2, "a stale compaction")
	if _, err := db.ResetLive(ctx, m.ID); err != nil {
		t.Fatal(err)
	}
	want(1, "a reset")
	appendCreates(t, db, m.ID, 5, 6)
	compact(6)
	want(2, "a base after the reset")
	if _, err := db.ReplaceMockData(ctx, m.ID, decoy.MockData{ContentType: "application/json", Data: decoy.Data{Bytes: []byte(`[1]`)}}); err != nil {
		t.Fatal(err)
	}
	want(2, "new data (two versions)")
	appendCreates(t, db, m.ID, 7, 8)
	compact(8)
	want(3, "a base of the new data")
	if err := db.DeleteMock(ctx, m.ID); err != nil {
		t.Fatal(err)
	}
	want(0, "the mock deleted")
	var n int
	if err := db.reads.QueryRow(`SELECT COUNT(*) FROM mock_writes`).Scan(&n); err != nil || n != 0 {
		t.Errorf("%d writes left after the mock's deletion (%v)", n, err)
	}
}

// The sweep after Open keeps the base of a mock's live data, and leaves a
// base being placed.
func TestSweepKeepsBase(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db := openAt(t, dir)
	m := mockN(1)
	if _, err := db.CreateMock(ctx, m, decoy.Data{Bytes: []byte(`[]`)}); err != nil {
		t.Fatal(err)
	}
	appendCreates(t, db, m.ID, 0, 3)
	if err := db.Compact(ctx, m.ID, 2, decoy.Data{Bytes: []byte(`[1,2]`)}); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, DocsDir, m.ID+"-00000000000000ff"), []byte("x"), 0o600) // an orphan
	db.Close()

	db = openAt(t, dir)
	defer db.Close()
	<-db.swept
	if files := docFiles(t, dir); len(files) != 2 {
		t.Errorf("files after the sweep: %v, want the data's and the base's", files)
	}
	d, seq, ok, err := db.LiveBase(ctx, m.ID)
	if err != nil || !ok || seq != 2 {
		t.Fatalf("LiveBase after the sweep: %d, %v, %v", seq, ok, err)
	}
	b, _ := io.ReadAll(d.File)
	d.File.Close()
	if string(b) != `[1,2]` {
		t.Errorf("base after the sweep = %q", b)
	}

	// A base placed but not yet committed is left; once given up, swept.
	name, err := db.placePending(m.ID, []byte(`[1,2,3]`))
	if err != nil {
		t.Fatal(err)
	}
	if err := db.sweepNames(ctx, []string{name}); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(docFiles(t, dir), name) {
		t.Error("the sweep removed a base being placed")
	}
	db.unpend(name)
	if err := db.sweepNames(ctx, []string{name}); err != nil {
		t.Fatal(err)
	}
	if slices.Contains(docFiles(t, dir), name) {
		t.Error("the sweep left an orphan base")
	}
}

// The connection that writes makes each commit durable before it
// returns: SQLite's write-ahead log, synced at every commit (FULL), with
// the foreign keys that take a mock's writes with it.
func TestWriteConnectionSettings(t *testing.T) {
	db := openAt(t, t.TempDir())
	defer db.Close()
	var journal string
	var sync, fk int
	if err := db.writes.QueryRow(`PRAGMA journal_mode`).Scan(&journal); err != nil {
		t.Fatal(err)
	}
	if err := db.writes.QueryRow(`PRAGMA synchronous`).Scan(&sync); err != nil {
		t.Fatal(err)
	}
	if err := db.writes.QueryRow(`PRAGMA foreign_keys`).Scan(&fk); err != nil {
		t.Fatal(err)
	}
	if journal != "wal" || sync != 2 || fk != 1 {
		t.Errorf("write connection: journal_mode %s, synchronous %d, foreign_keys %d; want wal, 2 (FULL), 1", journal, sync, fk)
	}
}

// killDirEnv names, in the child process of TestLiveWriteSurvivesKill,
// the data directory it writes to.
const killDirEnv = "DECOY_TEST_LIVE_KILL_DIR"

// A write acknowledged (AppendWrite returned) survives the process's
// kill -9: a child process appends and compacts, saying which writes it
// was told were stored, until it is killed; every one of them is there
// when the directory is opened again.
func TestLiveWriteSurvivesKill(t *testing.T) {
	ctx := context.Background()
	if dir := os.Getenv(killDirEnv); dir != "" {
		liveKillChild(ctx, dir)
		return
	}
	if testing.Short() {
		t.Skip("starts a process")
	}
	dir := t.TempDir()
	db := openAt(t, dir)
	m := mockN(1)
	if _, err := db.CreateMock(ctx, m, decoy.Data{Bytes: []byte(`[]`)}); err != nil {
		t.Fatal(err)
	}
	db.Close()

	cmd := exec.Command(os.Args[0], "-test.run=^TestLiveWriteSurvivesKill$", "-test.count=1")
	cmd.Env = append(os.Environ(), killDirEnv+"="+dir)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var acked int64
	lines := bufio.NewScanner(out)
	for lines.Scan() {
		s, ok := strings.CutPrefix(lines.Text(), "acked ")
		if !ok {
			continue
		}
		if acked, err = strconv.ParseInt(s, 10, 64); err != nil {
			t.Fatal(err)
		}
		if acked == 300 {
			cmd.Process.Kill() // SIGKILL: no deferred function, no Close
		}
	}
	cmd.Wait()
	if acked < 300 {
		t.Fatalf("the child acknowledged %d writes before it ended", acked)
	}

	db = openAt(t, dir)
	defer db.Close()
	st, err := db.Live(ctx, m.ID)
	if err != nil {
		t.Fatal(err)
	}
	if st.Seq < acked {
		t.Fatalf("live data at %d after the kill, but write %d was acknowledged", st.Seq, acked)
	}
	ws, err := db.Writes(ctx, m.ID, st.BaseSeq, int(st.Seq))
	if err != nil {
		t.Fatal(err)
	}
	for i, w := range ws {
		if w.Seq != st.BaseSeq+int64(i)+1 {
			t.Fatalf("write %d follows %d", w.Seq, st.BaseSeq+int64(i))
		}
	}
	if int64(len(ws)) != st.Seq-st.BaseSeq {
		t.Errorf("%d writes after the base at %d, live data at %d", len(ws), st.BaseSeq, st.Seq)
	}
	if st.BaseSeq > 0 {
		d, seq, ok, err := db.LiveBase(ctx, m.ID)
		if err != nil || !ok || seq != st.BaseSeq {
			t.Fatalf("LiveBase after the kill: %d, %v, %v", seq, ok, err)
		}
		b, _ := io.ReadAll(d.File)
		d.File.Close()
		if want := fmt.Sprintf("base %d", seq); string(b) != want {
			t.Errorf("base after the kill = %q, want %q", b, want)
		}
	}
	t.Logf("%d writes acknowledged, %d found (base at %d)", acked, st.Seq, st.BaseSeq)
}

// liveKillChild appends writes until it is killed, compacting every 50,
// and prints "acked N" once write N is acknowledged.
func liveKillChild(ctx context.Context, dir string) {
	db, err := Open(ctx, dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	id := mockN(1).ID
	for seq := int64(1); seq < 100_000; seq++ {
		w := &decoy.Write{Seq: seq, Op: decoy.WriteCreate, Field: "id", Key: strconv.FormatInt(seq, 10), Record: fmt.Appendf(nil, `{"id":%d}`, seq)}
		if err := db.AppendWrite(ctx, id, w, 10*seq); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		fmt.Printf("acked %d\n", seq)
		if seq%50 == 0 {
			if err := db.Compact(ctx, id, seq-10, decoy.Data{Bytes: fmt.Appendf(nil, "base %d", seq-10)}); err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(2)
			}
		}
	}
	os.Exit(3) // never killed
}

// Appends made at once share commits, and each is answered as if alone:
// those refused change nothing, and the others are stored.
func TestAppendsShareCommits(t *testing.T) {
	ctx := context.Background()
	db := openAt(t, t.TempDir())
	defer db.Close()
	const mocks, each = 16, 10
	ids := make([]string, mocks)
	for i := range ids {
		ids[i] = fmt.Sprintf("00000000-0000-4000-8000-%012d", i)
		if _, err := db.CreateMock(ctx, &decoy.Mock{ID: ids[i], ContentType: "application/json", Status: 200}, decoy.Data{Bytes: []byte(`[]`)}); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	for _, id := range ids {
		wg.Go(func() {
			for seq := int64(1); seq <= each; seq++ {
				// A stale write first: refused, in whatever batch.
				stale := &decoy.Write{Seq: seq - 1 + 100, Op: decoy.WriteDelete, Field: "id", Key: "0"}
				if err := db.AppendWrite(ctx, id, stale, 0); decoy.ErrorCode(err) != decoy.ECONFLICT {
					t.Errorf("a stale write: %v, want ECONFLICT", err)
				}
				w := &decoy.Write{Seq: seq, Op: decoy.WriteCreate, Field: "id", Key: fmt.Sprint(seq), Record: fmt.Appendf(nil, `{"id":%d}`, seq)}
				if err := db.AppendWrite(ctx, id, w, 10*seq); err != nil {
					t.Errorf("AppendWrite(%s, %d): %v", id, seq, err)
				}
			}
		})
	}
	wg.Wait()
	for _, id := range ids {
		ws, err := db.Writes(ctx, id, 0, 100)
		if err != nil || len(ws) != each {
			t.Errorf("%s: %d writes, %v", id, len(ws), err)
		}
	}
	db.appends.mu.Lock()
	commits := db.appends.commits
	db.appends.mu.Unlock()
	if commits >= mocks*each {
		t.Errorf("%d commits for %d writes made at once", commits, mocks*each)
	}
	t.Logf("%d writes in %d commits", mocks*each, commits)
}

// A base whose file is lost is an error, not a wait: LiveBase reads a
// name again only when the file it named was replaced.
func TestLiveBaseLost(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db := openAt(t, dir)
	defer db.Close()
	m := mockN(1)
	if _, err := db.CreateMock(ctx, m, decoy.Data{Bytes: []byte(`[]`)}); err != nil {
		t.Fatal(err)
	}
	appendCreates(t, db, m.ID, 0, 1)
	if err := db.Compact(ctx, m.ID, 1, decoy.Data{Bytes: []byte(`[1]`)}); err != nil {
		t.Fatal(err)
	}
	var name string
	if err := db.reads.QueryRow(`SELECT base_file FROM mocks WHERE id = ?`, m.ID).Scan(&name); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(dir, DocsDir, name))
	if _, _, _, err := db.LiveBase(ctx, m.ID); err == nil {
		t.Error("LiveBase of a lost file: no error")
	}
}

// A write that passes its checks is stored by the statement that checks
// it, in appendFast's transaction; one refused, or whose growth the
// workspace's max_bytes must weigh, is checked step by step, and answered
// as it would be alone.
func TestAppendsFast(t *testing.T) {
	ctx := context.Background()
	db := openAt(t, t.TempDir())
	defer db.Close()
	m := mockN(1)
	if _, err := db.CreateMock(ctx, m, decoy.Data{Bytes: []byte(`[]`)}); err != nil {
		t.Fatal(err)
	}
	fast := func(want int) {
		t.Helper()
		db.appends.mu.Lock()
		n := db.appends.fast
		db.appends.mu.Unlock()
		if n != want {
			t.Errorf("%d appends by the one statement, want %d", n, want)
		}
	}
	appendCreates(t, db, m.ID, 0, 3) // growing, no max_bytes: one statement
	fast(3)
	stale := &decoy.Write{Seq: 2, Op: decoy.WriteDelete, Field: "id", Key: "1"}
	if err := db.AppendWrite(ctx, m.ID, stale, 20); decoy.ErrorCode(err) != decoy.ECONFLICT {
		t.Errorf("a stale write: %v, want ECONFLICT", err)
	}
	fast(3)
	del := &decoy.Write{Seq: 4, Op: decoy.WriteDelete, Field: "id", Key: "1"}
	if err := db.AppendWrite(ctx, m.ID, del, 20); err != nil {
		t.Fatal(err)
	}
	fast(4)
	if ws, err := db.Writes(ctx, m.ID, 3, 10); err != nil || len(ws) != 1 || ws[0].Record != nil || ws[0].Op != decoy.WriteDelete {
		t.Errorf("the delete stored: %+v, %v", ws, err)
	}
	max := int64(100)
	if _, err := db.UpdateWorkspace(ctx, decoy.DefaultWorkspaceID, decoy.WorkspaceUpdate{Limits: map[string]*int64{"max_bytes": &max}}); err != nil {
		t.Fatal(err)
	}
	grow := func(seq, size int64) error {
		return db.AppendWrite(ctx, m.ID, &decoy.Write{Seq: seq, Op: decoy.WriteCreate, Field: "id", Key: "9", Record: []byte(`{"id":9}`)}, size)
	}
	if err := grow(5, 30); err != nil { // grows: checked step by step, within the limit
		t.Fatal(err)
	}
	fast(4)
	if err := grow(6, 10_000); decoy.ErrorCode(err) != decoy.EFORBIDDEN {
		t.Errorf("a write past max_bytes: %v", err)
	}
	shrink := &decoy.Write{Seq: 6, Op: decoy.WriteDelete, Field: "id", Key: "9"}
	if err := db.AppendWrite(ctx, m.ID, shrink, 25); err != nil { // does not grow: one statement
		t.Fatal(err)
	}
	fast(5)
	if st, err := db.Live(ctx, m.ID); err != nil || st.Seq != 6 || st.Size != 25 {
		t.Errorf("Live = %+v, %v; want number 6, 25 bytes", st, err)
	}
}

// Closing the store closes its database whole, appendFast's statements
// too: the last connection to close removes SQLite's log.
func TestCloseAfterAppends(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db := openAt(t, dir)
	m := mockN(1)
	if _, err := db.CreateMock(ctx, m, decoy.Data{Bytes: []byte(`[]`)}); err != nil {
		t.Fatal(err)
	}
	appendCreates(t, db, m.ID, 0, 3)
	if db.fast == nil {
		t.Fatal("no appendFast statements")
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, FileName+"-wal")); !os.IsNotExist(err) {
		t.Errorf("the log is left after Close: %v", err)
	}
}
