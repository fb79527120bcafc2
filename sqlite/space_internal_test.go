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

// fullJournal is a quota journal on a disk with room bytes left: a write
// past them writes what fits and fails, as write(2) does on a full disk.
// With cutFails, cutting a file back fails too (as it may on a
// copy-on-write file system).
type fullJournal struct {
	journalFile
	room     int // -1: space returned
	cutFails bool
}

func (j *fullJournal) Write(b []byte) (int, error) {
	if j.room < 0 {
		return j.journalFile.Write(b)
	}
	if len(b) <= j.room {
		j.room -= len(b)
		return j.journalFile.Write(b)
	}
	n, _ := j.journalFile.Write(b[:j.room])
	j.room = 0
	return n, &os.PathError{Op: "write", Path: j.Name(), Err: syscall.ENOSPC}
}

func (j *fullJournal) Truncate(size int64) error {
	if j.cutFails {
		return &os.PathError{Op: "truncate", Path: j.Name(), Err: syscall.ENOSPC}
	}
	return j.journalFile.Truncate(size)
}

// A reservation the journal has no room for is refused, naming the cause,
// and counted nowhere: part of its line may be written, but it is cut off,
// so that the line written once space returns is not glued to it (the
// replay then skipped both, losing a served read). Ping says the journal
// cannot be written until it can, finding out by itself.
func TestQuotaJournalFullDisk(t *testing.T) {
	for _, tc := range []struct {
		name     string
		room     int
		cutFails bool
	}{
		{"nothing written", 0, false},
		{"part of a line written", 20, false},
		{"part of a line written, and cutting it off fails", 20, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			dir := t.TempDir()
			db := openAt(t, dir)
			stopFolding(db)
			m := mockN(1)
			if _, err := db.CreateMock(ctx, m, decoy.Data{Bytes: []byte(`[]`)}); err != nil {
				t.Fatal(err)
			}
			reserve := func() error {
				_, ok, err := db.ReserveQuota(ctx, m.ID, "2026-11", 10)
				if err == nil && !ok {
					t.Fatal("refused for the quota")
				}
				return err
			}
			for range 2 {
				if err := reserve(); err != nil {
					t.Fatal(err)
				}
			}
			db.quota.mu.Lock()
			j := &fullJournal{journalFile: db.quota.journal, room: tc.room, cutFails: tc.cutFails}
			db.quota.journal = j
			db.quota.mu.Unlock()

			err := reserve()
			if decoy.ErrorCode(err) != decoy.ENOSPACE || decoy.ErrorMessage(err) != errJournalNoSpace.Message {
				t.Fatalf("reservation on a full disk: %v (code %q), want %q", err, decoy.ErrorCode(err), errJournalNoSpace.Message)
			}
			if got := used(t, db, m.ID, "2026-11"); got != 2 {
				t.Errorf("%d counted after the refusal, want 2", got)
			}
			for range 2 { // still full: refused again, and Ping says why
				if err := reserve(); decoy.ErrorCode(err) != decoy.ENOSPACE {
					t.Fatalf("second reservation: %v", err)
				}
				err := db.Ping(ctx)
				if decoy.ErrorCode(err) != decoy.ENOSPACE || !strings.Contains(decoy.ErrorMessage(err), "quota journal cannot be written: the data directory's file system is full") {
					t.Fatalf("Ping on a full disk: %v", err)
				}
			}

			j.room, j.cutFails = -1, false // space returns
			if err := reserve(); err != nil {
				t.Fatalf("reservation once space returned: %v", err)
			}
			if err := db.Ping(ctx); err != nil {
				t.Fatalf("Ping once space returned: %v", err)
			}
			if got := used(t, db, m.ID, "2026-11"); got != 3 {
				t.Errorf("%d counted, want 3", got)
			}
			crash(db)
			db = openAt(t, dir)
			defer db.Close()
			if got := used(t, db, m.ID, "2026-11"); got != 3 {
				t.Errorf("%d counted after a crash and replay, want 3", got)
			}
		})
	}
}

// A deletion whose "x" line finds the journal full still deletes (the mock
// and its file are gone, and answering otherwise would be wrong); the line
// is written before the next one, so that a mock made again under the id
// does not inherit the counts of the deleted one at a replay.
func TestQuotaDeletionJournaledLater(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db := openAt(t, dir)
	stopFolding(db)
	m := mockN(1)
	if _, err := db.CreateMock(ctx, m, decoy.Data{Bytes: []byte(`[]`)}); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		db.ReserveQuota(ctx, m.ID, "2026-11", 0)
	}
	db.quota.mu.Lock()
	j := &fullJournal{journalFile: db.quota.journal}
	db.quota.journal = j
	db.quota.mu.Unlock()
	if err := db.DeleteMock(ctx, m.ID); err != nil {
		t.Fatalf("delete with the journal full: %v", err)
	}
	j.room = -1
	if _, err := db.CreateMock(ctx, m, decoy.Data{Bytes: []byte(`[]`)}); err != nil {
		t.Fatal(err)
	}
	db.ReserveQuota(ctx, m.ID, "2026-11", 0)
	crash(db)
	db = openAt(t, dir)
	defer db.Close()
	if got := used(t, db, m.ID, "2026-11"); got != 1 {
		t.Errorf("the mock made again counts %d after a replay, want 1", got)
	}
}

// A line continued by the next one (left by a version that did not cut
// off a failed write) never counts under a key that is not one.
func TestReplaySkipsContinuedLines(t *testing.T) {
	const a, b = "00000000-0000-4000-8000-00000000000a", "00000000-0000-4000-8000-00000000000b"
	path := filepath.Join(t.TempDir(), "quota-1.journal")
	journal := "+ " + a + " 2026-11\n" +
		"+ " + "x " + b + "\n" + // "+ " then "x B"
		"+ " + a + "x " + b + "\n" + // "+ A" then "x B"
		"+ " + a + " 2026-1" + "+ " + a + " 2026-11\n" +
		"- " + a + " 2026-11" + "- " + a + " 2026-11\n" +
		"\n" + // a probe of the journal
		"+ " + a + " 2026-11\n"
	if err := os.WriteFile(path, []byte(journal), 0o600); err != nil {
		t.Fatal(err)
	}
	deltas := map[quotaKey]int64{}
	if err := replayJournal(path, deltas); err != nil {
		t.Fatal(err)
	}
	want := map[quotaKey]int64{{a, "2026-11"}: 2}
	if fmt.Sprint(deltas) != fmt.Sprint(want) {
		t.Errorf("replayed %v, want %v", deltas, want)
	}
}

// Ping reports the store unready while its file system has less than
// minFreeSpace free, saying how much is, and ready again once it has.
func TestPingFreeSpace(t *testing.T) {
	ctx := context.Background()
	db := openAt(t, t.TempDir())
	defer db.Close()
	stopFolding(db) // it reads freeSpace, which the test replaces
	for _, tc := range []struct {
		name string
		free int64
		ok   bool
		msg  string
	}{
		{"full", 12 << 10, true, "the data directory's file system is full (12 KiB free; ready again from 1 MiB)"},
		{"nothing free", 0, true, "the data directory's file system is full (0 B free; ready again from 1 MiB)"},
		{"just under the margin", minFreeSpace - 1, true, "the data directory's file system is full (1023 KiB free; ready again from 1 MiB)"},
		{"at the margin", minFreeSpace, true, ""},
		{"plenty", 40 << 30, true, ""},
		{"cannot tell", 0, false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db.freeSpace = func(string) (int64, bool) { return tc.free, tc.ok }
			err := db.Ping(ctx)
			if tc.msg == "" {
				if err != nil {
					t.Errorf("Ping: %v", err)
				}
				return
			}
			if decoy.ErrorCode(err) != decoy.ENOSPACE || decoy.ErrorMessage(err) != tc.msg {
				t.Errorf("Ping: %v (code %q), want %q", err, decoy.ErrorCode(err), tc.msg)
			}
		})
	}
}

func TestSizeText(t *testing.T) {
	for n, want := range map[int64]string{0: "0 B", 1023: "1023 B", 1024: "1 KiB", 12<<10 + 5: "12 KiB", 1 << 20: "1 MiB", 3 << 19: "1.5 MiB", 40 << 30: "40 GiB", 5 << 39: "2.5 TiB"} {
		if got := sizeText(n); got != want {
			t.Errorf("sizeText(%d) = %q, want %q", n, got, want)
		}
	}
}
