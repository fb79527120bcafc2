package sqlite

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/decoy-mock/decoy"
)

// TestCreateMocksRefusedLeavesNoFiles: the files of a batch that does not
// commit are removed with it.
func TestCreateMocksRefusedLeavesNoFiles(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	nm := func(id string) decoy.NewMock {
		return decoy.NewMock{Mock: &decoy.Mock{ID: id, ContentType: "application/json", Status: 200}, Data: decoy.Data{Bytes: []byte("[1]")}}
	}
	const taken = "00000000-0000-4000-8000-000000000009"
	if _, err := db.CreateMock(ctx, nm(taken).Mock, nm(taken).Data); err != nil {
		t.Fatal(err)
	}
	_, err = db.CreateMocks(ctx, []decoy.NewMock{nm("00000000-0000-4000-8000-000000000001"), nm("00000000-0000-4000-8000-000000000002"), nm(taken)})
	if decoy.ErrorCode(err) != decoy.ECONFLICT {
		t.Fatalf("err = %v", err)
	}
	files, err := os.ReadDir(filepath.Join(db.dir, DocsDir))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 1 {
		t.Errorf("%d files in %s after a refused batch, want the one of the mock in the way", len(files), DocsDir)
	}
}

// TestWriteImportRefusedLeavesNoFiles: the documents of an import that does
// not commit, of the mocks it creates and of the data it replaces, are
// removed with it.
func TestWriteImportRefusedLeavesNoFiles(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	const old = "00000000-0000-4000-8000-000000000009"
	if _, err := db.CreateMock(ctx, &decoy.Mock{ID: old, ContentType: "application/json", Status: 200}, decoy.Data{Bytes: []byte("[1]")}); err != nil {
		t.Fatal(err)
	}
	route := func(path, mockID string) *decoy.Route {
		return &decoy.Route{Method: "GET", Path: path, MockID: mockID, Action: decoy.ActionRead}
	}
	if _, err := db.CreateRoute(ctx, &decoy.Route{ProjectID: decoy.DefaultProjectID, Method: "GET", Path: "/taken", MockID: old, Action: decoy.ActionRead}, 10); err != nil {
		t.Fatal(err)
	}
	const created = "00000000-0000-4000-8000-000000000001"
	_, err = db.WriteImport(ctx, decoy.ImportBatch{
		ProjectID: decoy.DefaultProjectID,
		MaxRoutes: 10,
		Create:    []decoy.NewMock{{Mock: &decoy.Mock{ID: created, ContentType: "application/json", Status: 200}, Data: decoy.Data{Bytes: []byte("[2]")}}},
		Replace:   []decoy.MockReplacement{{ID: old, Data: decoy.MockData{ContentType: "application/json", Data: decoy.Data{Bytes: []byte("[3]")}}}},
		Routes:    []*decoy.Route{route("/new", created), route("/taken", created)},
	})
	if decoy.ErrorCode(err) != decoy.ECONFLICT {
		t.Fatalf("err = %v", err)
	}
	files, err := os.ReadDir(filepath.Join(db.dir, DocsDir))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 1 {
		t.Errorf("%d files in %s after a refused import, want the one of the mock it would have replaced", len(files), DocsDir)
	}
}
