package sqlite_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/decoy-mock/decoy"
	"github.com/decoy-mock/decoy/sqlite"
	"github.com/decoy-mock/decoy/storetest"
)

func TestVersionStore(t *testing.T) {
	storetest.RunVersions(t, func(t *testing.T, maxVersions int) storetest.VersionBackend {
		db := open(t, t.TempDir())
		db.MaxVersions = maxVersions
		t.Cleanup(func() { db.Close() })
		return db
	})
}

// docFiles returns the names of the files in the docs folder of dir.
func docFiles(t *testing.T, dir string) map[string]bool {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(dir, sqlite.DocsDir))
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, e := range entries {
		names[e.Name()] = true
	}
	return names
}

// At the default bound, 21 writes keep 20 versions: the file of the first
// goes with its row, the 20 others stay, and a deleted mock leaves none.
func TestVersionBoundFiles(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db := open(t, dir)
	defer db.Close()
	if db.MaxVersions != decoy.DefaultMaxVersions || decoy.DefaultMaxVersions != 20 {
		t.Fatalf("MaxVersions = %d by default, want 20", db.MaxVersions)
	}
	if _, err := db.CreateMock(ctx, &testMock, decoy.Data{Bytes: []byte(`"v1"`)}); err != nil {
		t.Fatal(err)
	}
	first := docFiles(t, dir)
	for i := 2; i <= 21; i++ {
		if _, err := db.ReplaceMockData(ctx, testMock.ID, decoy.MockData{ContentType: "application/json", Data: decoy.Data{Bytes: []byte(fmt.Sprintf(`"v%d"`, i))}}); err != nil {
			t.Fatal(err)
		}
	}
	vs, err := db.MockVersions(ctx, testMock.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) != 20 || vs[0].Version != 21 || vs[19].Version != 2 {
		t.Errorf("%d versions kept, from %d to %d; want 20, from 21 to 2", len(vs), vs[0].Version, vs[len(vs)-1].Version)
	}
	files := docFiles(t, dir)
	if len(files) != 20 {
		t.Errorf("%d files in %s, want 20", len(files), sqlite.DocsDir)
	}
	for name := range first {
		if files[name] {
			t.Errorf("the file of version 1, %s, is still there", name)
		}
	}
	if _, _, err := db.FindVersionData(ctx, testMock.ID, 1); decoy.ErrorMessage(err) != "Version not found" {
		t.Errorf("version 1: %v", err)
	}
	if err := db.DeleteMock(ctx, testMock.ID); err != nil {
		t.Fatal(err)
	}
	if files := docFiles(t, dir); len(files) != 0 {
		t.Errorf("%d files left after the mock was deleted", len(files))
	}
}

// Kept versions survive a reopen, and its sweep of orphan files.
func TestVersionsReopen(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db := open(t, dir)
	if _, err := db.CreateMock(ctx, &testMock, decoy.Data{Bytes: []byte(`[1]`)}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ReplaceMockData(ctx, testMock.ID, decoy.MockData{ContentType: "text/plain", Data: decoy.Data{Bytes: []byte(`two`)}}); err != nil {
		t.Fatal(err)
	}
	db.Close()
	db = open(t, dir)
	defer db.Close()
	v, d, err := db.FindVersionData(ctx, testMock.ID, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer d.File.Close()
	b := make([]byte, 8)
	n, _ := d.File.Read(b)
	if string(b[:n]) != "[1]" || v.ContentType != "application/json" || v.Current {
		t.Errorf("version 1 after reopen = %+v, %q", v, b[:n])
	}
}
