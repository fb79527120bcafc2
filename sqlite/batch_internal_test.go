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
