package sqlite

import (
	"context"
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
	} {
		if _, err := db.writes.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()

	db = openAt(t, dir)
	defer db.Close()
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
// row) are removed at Open; replaced and deleted data leave no file.
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
	if entries, _ := os.ReadDir(filepath.Join(dir, DocsDir)); len(entries) != 1 {
		t.Errorf("%d files after a replace and a delete, want 1", len(entries))
	}
	os.WriteFile(filepath.Join(dir, DocsDir, "stray-from-a-crash"), []byte("x"), 0o600)
	db.Close()

	db = openAt(t, dir)
	defer db.Close()
	if _, err := os.Stat(filepath.Join(dir, DocsDir, "stray-from-a-crash")); !os.IsNotExist(err) {
		t.Errorf("orphan file still there: %v", err)
	}
	if got := readFound(t, db, a.ID); got != `[3]` {
		t.Errorf("data = %q after reopening", got)
	}
}
