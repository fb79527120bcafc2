package sqlite_test

import (
	"context"
	"io"
	"testing"

	"github.com/decoy-mock/decoy"
	"github.com/decoy-mock/decoy/sqlite"
	"github.com/decoy-mock/decoy/storetest"
)

func open(t *testing.T, dir string) *sqlite.DB {
	t.Helper()
	db, err := sqlite.Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	return db
}

func TestStore(t *testing.T) {
	storetest.Run(t, func(t *testing.T) storetest.Backend {
		db := open(t, t.TempDir())
		t.Cleanup(func() { db.Close() })
		return db
	})
}

func TestBatch(t *testing.T) {
	storetest.RunBatch(t, func(t *testing.T) storetest.BatchBackend {
		db := open(t, t.TempDir())
		t.Cleanup(func() { db.Close() })
		return db
	})
}

// Counts and data survive closing and reopening the database, and
// migrations are not applied twice.
func TestReopen(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db := open(t, dir)
	if _, err := db.CreateMock(ctx, &testMock, decoy.Data{Bytes: []byte(`[1]`)}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		db.ReserveQuota(ctx, testMock.ID, "2026-11", 3)
	}
	db.Close()

	db = open(t, dir)
	defer db.Close()
	if _, ok, _ := db.ReserveQuota(ctx, testMock.ID, "2026-11", 3); ok {
		t.Error("quota count lost on reopen")
	}
	_, d, err := db.FindMockData(ctx, testMock.ID)
	if err != nil {
		t.Fatal(err)
	}
	defer d.File.Close()
	if b, _ := io.ReadAll(d.File); string(b) != "[1]" {
		t.Errorf("data after reopen = %q", b)
	}
}

var testMock = decoy.Mock{ID: "11111111-1111-4111-8111-111111111111", ContentType: "application/json", Status: 200}
