package redis

import (
	"context"
	"crypto/rand"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/decoy-mock/decoy"
	"github.com/decoy-mock/decoy/internal/testservice"
	goredis "github.com/redis/go-redis/v9"
)

// FuzzJournalEntries reads arbitrary messages, as another program or a
// damaged Redis may hold: never a panic, never more entries than a
// message holds, and a message packed from records reads back as them,
// each with an ID that gives its place back.
func FuzzJournalEntries(f *testing.F) {
	rec := (&decoy.JournalEntry{At: time.Unix(1, 0), Method: "GET", Path: "/x", Status: 200}).AppendRecord(nil)
	f.Add("1700000000000-3", pack(nil, [][]byte{rec, rec}), 2)
	f.Add("1-0", []byte{0xff, 0xff, 0xff}, 0)
	f.Add("18446744073709551615-18014398509481983", pack(nil, [][]byte{rec}), 1)
	f.Fuzz(func(t *testing.T, id string, b []byte, n int) {
		es := journalEntries(goredis.XMessage{ID: id, Values: map[string]any{"b": string(b)}})
		if len(es) > 1<<packBits || len(es) > len(b) {
			t.Fatalf("%d entries from %d bytes", len(es), len(b))
		}
		for i, e := range es {
			if e == nil {
				continue
			}
			p, ok := parsePlace(e.ID)
			ms, seq, _ := decoy.ParseJournalID(id) // Redis's IDs are canonical: "00-0" is not one
			if !ok || p.msg != fmt.Sprintf("%d-%d", ms, seq) || p.index != i {
				t.Fatalf("entry %d of %q: ID %q reads as %+v %v", i, id, e.ID, p, ok)
			}
		}
		// Packed records read back.
		n = (n%8+8)%8 + 1
		records := make([][]byte, n)
		for i := range records {
			records[i] = (&decoy.JournalEntry{Method: "GET", Path: fmt.Sprint("/", i), Query: string(b)}).AppendRecord(nil)
		}
		msg := goredis.XMessage{ID: "1700000000000-5", Values: map[string]any{"b": string(pack(nil, records))}}
		es = journalEntries(msg)
		if len(es) != n {
			t.Fatalf("%d records packed, %d read", n, len(es))
		}
		for i, e := range es {
			if e == nil || e.Path != fmt.Sprint("/", i) || e.Query != string(b) {
				t.Fatalf("record %d read as %+v", i, e)
			}
		}
	})
}

// A Journal keeps its buffer of packed records for the next batch, up to
// keptPack: a batch of large bodies leaves none kept.
func TestJournalKeptBuffer(t *testing.T) {
	ctx := context.Background()
	c, err := Open(ctx, testservice.RedisURL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	j := NewJournal(c, "decoytest:"+rand.Text()+":", 10)
	defer j.Clear(ctx, "p")
	small := (&decoy.JournalEntry{Path: "/small"}).AppendRecord(nil)
	if err := j.Append(ctx, map[string][][]byte{"p": {small}}); err != nil {
		t.Fatal(err)
	}
	if cap(j.buf) == 0 || cap(j.buf) > keptPack {
		t.Errorf("after a small batch, a buffer of %d kept", cap(j.buf))
	}
	large := (&decoy.JournalEntry{Path: "/large", Body: strings.Repeat("b", 512<<10)}).AppendRecord(nil)
	if err := j.Append(ctx, map[string][][]byte{"p": {large, large, large}}); err != nil {
		t.Fatal(err)
	}
	if j.buf != nil {
		t.Errorf("after a batch of 1.5 MiB, a buffer of %d kept", cap(j.buf))
	}
}
