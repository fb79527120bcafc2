package sqlite

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/decoy-mock/decoy"
)

func readFound(t *testing.T, db *DB, id string) string {
	t.Helper()
	_, d, err := db.FindMockData(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	defer d.File.Close()
	b, err := io.ReadAll(d.File)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A data directory of an older Decoy, with documents in the database, has
// them moved into files at Open.
func TestOpenMovesBlobsToFiles(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db := openAt(t, dir)
	m := mockN(1)
	if _, err := db.CreateMock(ctx, m, decoy.Data{Bytes: []byte(`[]`)}); err != nil {
		t.Fatal(err)
	}
	// Put it back as an older version kept it.
	for _, q := range []string{
		`CREATE TABLE mock_data (mock_id TEXT NOT NULL PRIMARY KEY REFERENCES mocks (id) ON DELETE CASCADE, data BLOB NOT NULL)`,
		`INSERT INTO mock_data (mock_id, data) VALUES ('` + m.ID + `', '[{"old":"blob"}]')`,
		`UPDATE mocks SET data_file = NULL`,
		`UPDATE mock_versions SET data_file = NULL`, // as migration 0011 made it
	} {
		if _, err := db.writes.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()

	db = openAt(t, dir)
	defer db.Close()
	<-db.swept
	if got := readFound(t, db, m.ID); got != `[{"old":"blob"}]` {
		t.Errorf("moved data = %q", got)
	}
	var n int
	db.writes.QueryRow(`SELECT COUNT(*) FROM sqlite_master WHERE name = 'mock_data'`).Scan(&n)
	if n != 0 {
		t.Error("mock_data still there after the move")
	}
	if entries, _ := os.ReadDir(filepath.Join(dir, DocsDir)); len(entries) != 1 {
		t.Errorf("%d files in %s, want 1 (the old one of the first create is an orphan, removed)", len(entries), DocsDir)
	}
}

// Files no row names (a crash between writing a file and committing its
// row) are removed after Open; deleted data leaves no file, and replaced
// data only the file of its version, kept.
func TestDocFilesFollowRows(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db := openAt(t, dir)
	a, b := mockN(1), mockN(2)
	db.CreateMock(ctx, a, decoy.Data{Bytes: []byte(`[1]`)})
	db.CreateMock(ctx, b, decoy.Data{Bytes: []byte(`[2]`)})
	if _, err := db.ReplaceMockData(ctx, a.ID, decoy.MockData{ContentType: "application/json", Data: decoy.Data{Bytes: []byte(`[3]`)}}); err != nil {
		t.Fatal(err)
	}
	if err := db.DeleteMock(ctx, b.ID); err != nil {
		t.Fatal(err)
	}
	if entries, _ := os.ReadDir(filepath.Join(dir, DocsDir)); len(entries) != 2 {
		t.Errorf("%d files after a replace and a delete, want 2 (a's data and its previous version)", len(entries))
	}
	os.WriteFile(filepath.Join(dir, DocsDir, "stray-from-a-crash"), []byte("x"), 0o600)
	db.Close()

	db = openAt(t, dir)
	defer db.Close()
	<-db.swept
	if _, err := os.Stat(filepath.Join(dir, DocsDir, "stray-from-a-crash")); !os.IsNotExist(err) {
		t.Errorf("orphan file still there: %v", err)
	}
	if got := readFound(t, db, a.ID); got != `[3]` {
		t.Errorf("data = %q after reopening", got)
	}
}

// The sweep after Open goes through a folder of many files a batch at a
// time, keeping every file a row names, including those of mocks created
// while it runs, and removing the others.
func TestSweepDocs(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db := openAt(t, dir)
	const mocks = 100 // with their orphans, files for several batches
	for i := range mocks {
		if _, err := db.CreateMock(ctx, bigMockN(i), decoy.Data{Bytes: []byte(fmt.Sprint(i))}); err != nil {
			t.Fatal(err)
		}
		// Orphans of the same mock, as a crash before the commit of a
		// replace leaves, and of a mock never created.
		for k := range 2 {
			os.WriteFile(filepath.Join(dir, DocsDir, fmt.Sprintf("%s-00000000000000f%d", bigMockN(i).ID, k)), []byte("x"), 0o600)
			os.WriteFile(filepath.Join(dir, DocsDir, fmt.Sprintf("%s-00000000000000f%d", bigMockN(mocks+i).ID, k)), []byte("x"), 0o600)
		}
	}
	os.WriteFile(filepath.Join(dir, DocsDir, "stray"), []byte("x"), 0o600)
	db.Close()

	db = openAt(t, dir)
	defer db.Close()
	// Writes go on while the sweep runs.
	for i := range 20 {
		if _, err := db.CreateMock(ctx, bigMockN(2*mocks+i), decoy.Data{Bytes: []byte("new")}); err != nil {
			t.Fatal(err)
		}
		if _, err := db.ReplaceMockData(ctx, bigMockN(i).ID, decoy.MockData{ContentType: "application/json", Data: decoy.Data{Bytes: []byte("replaced")}}); err != nil {
			t.Fatal(err)
		}
	}
	<-db.swept
	for i := range mocks {
		want := fmt.Sprint(i)
		if i < 20 {
			want = "replaced"
		}
		if got := readFound(t, db, bigMockN(i).ID); got != want {
			t.Fatalf("mock %d: %q", i, got)
		}
	}
	for i := range 20 {
		if got := readFound(t, db, bigMockN(2*mocks+i).ID); got != "new" {
			t.Fatalf("mock created during the sweep: %q", got)
		}
	}
	if entries, _ := os.ReadDir(filepath.Join(dir, DocsDir)); len(entries) != mocks+40 {
		t.Errorf("%d files after the sweep, want one per version kept (%d)", len(entries), mocks+40)
	}
}

// The sweep decides under the write lock: a file placed by a write that
// holds it, not yet named by a committed row, stays.
func TestSweepWaitsForWrites(t *testing.T) {
	ctx := context.Background()
	db := openAt(t, t.TempDir())
	defer db.Close()
	<-db.swept
	m := bigMockN(1)
	db.writeMu.Lock() // a write in progress: its file placed, its row not yet committed
	name, err := db.placeDoc(m.ID, decoy.Data{Bytes: []byte("[1]")})
	if err != nil {
		t.Fatal(err)
	}
	swept := make(chan error)
	go func() { swept <- db.sweepNames(ctx, []string{name}) }()
	if _, err := db.writes.ExecContext(ctx, `INSERT INTO mocks (id, name, private, content_type, status, delay_ms, size, etag, version, created_at, updated_at, data_file)
		VALUES (?, '', 0, 'application/json', 200, 0, 3, '', 1, 0, 0, ?)`, m.ID, name); err != nil {
		t.Fatal(err)
	}
	db.writeMu.Unlock()
	if err := <-swept; err != nil {
		t.Fatal(err)
	}
	if got := readFound(t, db, m.ID); got != "[1]" {
		t.Errorf("data = %q after a sweep during its write", got)
	}
}

// bigMockN is mockN for any n.
func bigMockN(n int) *decoy.Mock {
	return &decoy.Mock{ID: fmt.Sprintf("00000000-0000-4000-8000-%012d", n), ContentType: "application/json", Status: 200}
}
