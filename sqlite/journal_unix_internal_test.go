//go:build unix

package sqlite

import (
	"bytes"
	"context"
	"os"
	"testing"

	"github.com/decoy-mock/decoy"
	"golang.org/x/sys/unix"
)

// abandon leaves db's journal as a killed process leaves it: mapped lines
// in the page cache, the zeros after them, the file never cut to its lines.
func abandon(t *testing.T, db *DB) {
	t.Helper()
	j, ok := db.quota.journal.(*mappedJournal)
	if !ok {
		t.Fatalf("journal %T, want a mapped one", db.quota.journal)
	}
	close(db.quota.stop)
	<-db.quota.done
	unix.Munmap(j.m)
	j.f.Close()
	db.reads.Close()
	db.counts.Close()
	db.writes.Close()
	db.lock.Close()
}

// Counts acknowledged before a crash are there after it, from a journal
// that grew past its first room several times and was left with zeros
// after its lines.
func TestMappedJournalCrash(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db := openAt(t, dir)
	m := mockN(1)
	if _, err := db.CreateMock(ctx, m, decoy.Data{Bytes: []byte(`[]`)}); err != nil {
		t.Fatal(err)
	}
	const n = 5000 // about 300 KiB of lines: three growths
	for range n {
		if _, ok, err := db.ReserveQuota(ctx, m.ID, "2026-11", 0); !ok || err != nil {
			t.Fatal(ok, err)
		}
	}
	db.ReleaseQuota(ctx, m.ID, "2026-11")
	path := db.quota.journal.Name()
	abandon(t, db)

	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	end := bytes.LastIndexByte(b, '\n') + 1
	if len(b) <= end || len(bytes.Trim(b[end:], "\x00")) != 0 {
		t.Fatalf("journal of %d bytes, lines up to %d: want zeros after the lines", len(b), end)
	}
	if got := bytes.Count(b, []byte("\n")); got != n+1 {
		t.Fatalf("%d lines, want %d", got, n+1)
	}

	db = openAt(t, dir)
	defer db.Close()
	if got := used(t, db, m.ID, "2026-11"); got != n-1 {
		t.Errorf("after the crash: %d, want %d", got, n-1)
	}
	if got := len(db.RecentReads(keepAll)[m.ID]); got != n {
		t.Errorf("%d recent reads, want %d", got, n)
	}
}

// A line cut off is zeroed; the lines before it stay, and only zeros
// follow them.
func TestMappedJournalCut(t *testing.T) {
	dir := t.TempDir()
	j, err := openJournal(dir + "/j")
	if err != nil {
		t.Fatal(err)
	}
	want := bytes.Repeat([]byte("+ x 2026-11 1\n"), 10000)
	for i := 0; i < len(want); i += 14 {
		if n, err := j.Write(want[i : i+14]); n != 14 || err != nil {
			t.Fatal(n, err)
		}
	}
	if err := j.Truncate(int64(len(want) - 14)); err != nil { // the last line cut off
		t.Fatal(err)
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(dir + "/j")
	lines := len(want) - 14
	if err != nil || len(got) < lines || !bytes.Equal(got[:lines], want[:lines]) || len(bytes.Trim(got[lines:], "\x00")) != 0 {
		t.Fatalf("journal: %d bytes, %v; want its %d bytes of lines, then zeros", len(got), err, lines)
	}
	deltas := map[quotaKey]int64{}
	if err := replayJournal(dir+"/j", deltas); err != nil || deltas[quotaKey{"x", "2026-11"}] != 9999 {
		t.Fatalf("replayed %v, %v; want 9999", deltas, err)
	}
}

// A store that faults (here, into a mapping whose file was cut under it)
// fails the reservation, which counts nowhere; the next fold begins a new
// journal, and counting goes on.
func TestMappedJournalFault(t *testing.T) {
	ctx := context.Background()
	db := openAt(t, t.TempDir())
	defer db.Close()
	m := mockN(1)
	if _, err := db.CreateMock(ctx, m, decoy.Data{Bytes: []byte(`[]`)}); err != nil {
		t.Fatal(err)
	}
	db.ReserveQuota(ctx, m.ID, "2026-11", 0)
	j := db.quota.journal.(*mappedJournal)
	if err := j.f.Truncate(0); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, ok, err := db.ReserveQuota(ctx, m.ID, "2026-11", 0); ok || decoy.ErrorCode(err) != decoy.EUNAVAILABLE {
			t.Fatalf("reserved into a faulting journal: %v, %v", ok, err)
		}
	}
	if err := db.Ping(ctx); err == nil {
		t.Error("Ping: nil while the journal cannot be written")
	}
	if got := used(t, db, m.ID, "2026-11"); got != 1 {
		t.Fatalf("%d counted, want 1", got)
	}
	if err := db.fold(); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := db.ReserveQuota(ctx, m.ID, "2026-11", 0); !ok || err != nil {
		t.Fatalf("after a fold: %v, %v", ok, err)
	}
	if err := db.Ping(ctx); err != nil {
		t.Errorf("Ping after a fold: %v", err)
	}
	if got := used(t, db, m.ID, "2026-11"); got != 2 {
		t.Errorf("%d counted, want 2", got)
	}
}

// BenchmarkReserveQuota counts a read, as every read of a mock with a
// quota does: into the mapped journal, and, for reference, into a journal
// written with a write(2) per line as before.
func BenchmarkReserveQuota(b *testing.B) {
	for _, kind := range []string{"mapped", "write"} {
		b.Run(kind, func(b *testing.B) {
			ctx := context.Background()
			db, err := Open(ctx, b.TempDir())
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			m := mockN(1)
			if _, err := db.CreateMock(ctx, m, decoy.Data{Bytes: []byte(`[]`)}); err != nil {
				b.Fatal(err)
			}
			if kind == "write" {
				f, err := os.OpenFile(db.quota.journal.Name()+".write", os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
				if err != nil {
					b.Fatal(err)
				}
				db.quota.mu.Lock()
				mapped := db.quota.journal
				db.quota.journal = f
				db.quota.mu.Unlock()
				defer func() {
					db.quota.mu.Lock()
					f.Close()
					db.quota.journal = mapped
					db.quota.mu.Unlock()
				}()
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, ok, err := db.ReserveQuota(ctx, m.ID, "2026-11", 0); !ok || err != nil {
					b.Fatal(ok, err)
				}
			}
		})
	}
}
