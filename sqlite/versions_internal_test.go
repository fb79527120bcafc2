package sqlite

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/decoy-mock/decoy"
)

// The sweep after Open keeps the files of kept versions: a row of
// mock_versions names them.
func TestSweepKeepsVersions(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db := openAt(t, dir)
	m := mockN(1)
	if _, err := db.CreateMock(ctx, m, decoy.Data{Bytes: []byte(`[1]`)}); err != nil {
		t.Fatal(err)
	}
	for _, data := range []string{`[2]`, `[3]`} {
		if _, err := db.ReplaceMockData(ctx, m.ID, decoy.MockData{ContentType: "application/json", Data: decoy.Data{Bytes: []byte(data)}}); err != nil {
			t.Fatal(err)
		}
	}
	// An orphan of the same mock, as a crash before a commit leaves.
	os.WriteFile(filepath.Join(dir, DocsDir, m.ID+"-00000000000000ff"), []byte("x"), 0o600)
	db.Close()

	db = openAt(t, dir)
	defer db.Close()
	<-db.swept
	if entries, _ := os.ReadDir(filepath.Join(dir, DocsDir)); len(entries) != 3 {
		t.Errorf("%d files after the sweep, want the 3 versions'", len(entries))
	}
	for v, want := range map[int64]string{1: `[1]`, 2: `[2]`, 3: `[3]`} {
		_, d, err := db.FindVersionData(ctx, m.ID, v)
		if err != nil {
			t.Fatalf("version %d: %v", v, err)
		}
		b := make([]byte, 8)
		n, _ := d.File.Read(b)
		d.File.Close()
		if string(b[:n]) != want {
			t.Errorf("version %d = %q", v, b[:n])
		}
	}
}

// A data directory of an older Decoy, with documents in the database, has
// them moved into files at Open: its version 1, made by the migration,
// names the file too.
func TestMoveBlobsNamesVersion(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db := openAt(t, dir)
	m := mockN(1)
	if _, err := db.CreateMock(ctx, m, decoy.Data{Bytes: []byte(`[]`)}); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`CREATE TABLE mock_data (mock_id TEXT NOT NULL PRIMARY KEY REFERENCES mocks (id) ON DELETE CASCADE, data BLOB NOT NULL)`,
		`INSERT INTO mock_data (mock_id, data) VALUES ('` + m.ID + `', '[{"old":"blob"}]')`,
		`UPDATE mocks SET data_file = NULL`,
		`UPDATE mock_versions SET data_file = NULL`,
	} {
		if _, err := db.writes.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	db = openAt(t, dir)
	defer db.Close()
	<-db.swept
	_, d, err := db.FindVersionData(ctx, m.ID, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer d.File.Close()
	b := make([]byte, 64)
	n, _ := d.File.Read(b)
	if string(b[:n]) != `[{"old":"blob"}]` {
		t.Errorf("version 1 = %q", b[:n])
	}
}

// A data directory of a Decoy before versions opens with each mock's
// data file as its version 1, kept by the sweep.
func TestMigrateToVersions(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db := openAt(t, dir)
	m := mockN(1)
	if _, err := db.CreateMock(ctx, m, decoy.Data{Bytes: []byte(`[1]`)}); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{ // as before migration 0011
		`DROP TABLE mock_versions`,
		`ALTER TABLE mocks DROP COLUMN data_version`,
		`DELETE FROM migrations WHERE name = 'migration/0011_versions.sql'`,
	} {
		if _, err := db.writes.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	db.Close()
	db = openAt(t, dir)
	defer db.Close()
	<-db.swept
	vs, err := db.MockVersions(ctx, m.ID)
	if err != nil || len(vs) != 1 || vs[0].Version != 1 || !vs[0].Current || vs[0].Size != 3 {
		t.Fatalf("versions after the migration: %+v, %v", vs, err)
	}
	if _, err := db.ReplaceMockData(ctx, m.ID, decoy.MockData{ContentType: "application/json", Data: decoy.Data{Bytes: []byte(`[2]`)}}); err != nil {
		t.Fatal(err)
	}
	_, d, err := db.FindVersionData(ctx, m.ID, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer d.File.Close()
	b := make([]byte, 8)
	n, _ := d.File.Read(b)
	if string(b[:n]) != `[1]` {
		t.Errorf("version 1 = %q", b[:n])
	}
}
