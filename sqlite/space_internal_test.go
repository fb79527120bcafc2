package sqlite

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/decoy-mock/decoy"
)

// fillDatabase caps the database of db at the pages it has, as a full disk
// would: SQLite then answers a write that needs a new page SQLITE_FULL.
func fillDatabase(t *testing.T, db *DB) {
	t.Helper()
	var pages int64
	if err := db.writes.QueryRow(`PRAGMA page_count`).Scan(&pages); err != nil {
		t.Fatal(err)
	}
	// The writes pool is one connection, kept: the cap stays on it.
	if _, err := db.writes.Exec(fmt.Sprintf(`PRAGMA max_page_count = %d`, pages)); err != nil {
		t.Fatal(err)
	}
}

// sqliteFull returns a real SQLITE_FULL of the driver.
func sqliteFull(t *testing.T) error {
	t.Helper()
	db := openAt(t, t.TempDir())
	defer db.Close()
	fillDatabase(t, db)
	_, err := db.writes.Exec(`INSERT INTO settings (key, value) VALUES ('filler', zeroblob(1000000))`)
	if err == nil {
		t.Fatal("no SQLITE_FULL past max_page_count")
	}
	return err
}

func TestClassify(t *testing.T) {
	full := sqliteFull(t)
	enospc := &os.PathError{Op: "write", Path: "/data/docs/x", Err: syscall.ENOSPC}
	for _, tc := range []struct {
		name string
		err  error
		code string
	}{
		{"nil", nil, ""},
		{"SQLite: database or disk is full", full, decoy.ENOSPACE},
		{"SQLite, wrapped", fmt.Errorf("insert: %w", full), decoy.ENOSPACE},
		{"ENOSPC of a file", enospc, decoy.ENOSPACE},
		{"ENOSPC, wrapped", fmt.Errorf("place document: %w", enospc), decoy.ENOSPACE},
		{"ENOSPC of a rename", &os.LinkError{Op: "rename", Old: "a", New: "b", Err: syscall.ENOSPC}, decoy.ENOSPACE},
		{"another SQLite error", errors.New("SQL logic error"), decoy.EINTERNAL},
		{"another file error", &os.PathError{Op: "fsync", Path: "/data/docs/x", Err: syscall.EIO}, decoy.EINTERNAL},
		{"a decoy.Error stays", decoy.Errorf(decoy.ENOTFOUND, "Mock api not found"), decoy.ENOTFOUND},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := classify(tc.err)
			if code := decoy.ErrorCode(err); code != tc.code {
				t.Fatalf("code %q (%v), want %q", code, err, tc.code)
			}
			if tc.code == decoy.ENOSPACE {
				if msg := decoy.ErrorMessage(err); msg != errNoSpace.Message {
					t.Errorf("message %q", msg)
				}
				if !errors.Is(err, tc.err) {
					t.Errorf("the cause left the chain: %v", err)
				}
				if classify(err) != err {
					t.Error("classified twice")
				}
			}
		})
	}
}

// Every write of the store answers a full database with ENOSPACE (a 507,
// not a 500), changes nothing, and leaves no document behind.
func TestWritesOnFullDatabase(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db := openAt(t, dir)
	defer db.Close()
	m := mockN(1)
	if _, err := db.CreateMock(ctx, m, decoy.Data{Bytes: []byte(`[1]`)}); err != nil {
		t.Fatal(err)
	}
	fillDatabase(t, db)
	big := strings.Repeat("n", 200<<10) // past the pages there are
	now := time.Now()
	for _, tc := range []struct {
		name  string
		write func() error
	}{
		{"CreateMock", func() error {
			_, err := db.CreateMock(ctx, &decoy.Mock{ID: mockN(2).ID, Name: big, ContentType: "application/json"}, decoy.Data{Bytes: []byte(`[2]`)})
			return err
		}},
		{"UpdateMock", func() error {
			_, err := db.UpdateMock(ctx, m.ID, decoy.MockUpdate{Name: &big})
			return err
		}},
		{"ReplaceMockData", func() error {
			_, err := db.ReplaceMockData(ctx, m.ID, decoy.MockData{ContentType: big, Data: decoy.Data{Bytes: []byte(`[3]`)}})
			return err
		}},
		{"CreateSession", func() error {
			return db.CreateSession(ctx, &decoy.Session{ID: "s", SecretHash: []byte(big), AdminHash: []byte("a"), CreatedAt: now, LastSeenAt: now, ExpiresAt: now})
		}},
		{"SetAdminTokenHash", func() error { return db.SetAdminTokenHash(ctx, []byte(big)) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.write()
			if decoy.ErrorCode(err) != decoy.ENOSPACE {
				t.Fatalf("got %v (code %q), want ENOSPACE", err, decoy.ErrorCode(err))
			}
		})
	}
	got, d, err := db.FindMockData(ctx, m.ID)
	if err != nil {
		t.Fatal(err)
	}
	defer d.File.Close()
	if got.Name != "" || got.Version != 1 {
		t.Errorf("the mock changed: %+v", got)
	}
	if _, err := db.FindMock(ctx, mockN(2).ID); decoy.ErrorCode(err) != decoy.ENOTFOUND {
		t.Errorf("the refused mock exists: %v", err)
	}
	files, _ := os.ReadDir(filepath.Join(dir, DocsDir))
	if len(files) != 1 {
		t.Errorf("%d documents in %s, want the one of the mock", len(files), DocsDir)
	}
}
