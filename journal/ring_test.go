package journal_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/decoy-mock/decoy"
	"github.com/decoy-mock/decoy/journal"
	"github.com/decoy-mock/decoy/journal/journaltest"
)

func TestRing(t *testing.T) {
	journaltest.Run(t, func(t testing.TB, size int) decoy.JournalStore {
		return journal.NewRing(journal.RingConfig{Size: size})
	})
}

// clock is a manual clock; it never sleeps.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Add(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

// IDs keep increasing when the clock stands still or goes back.
func TestRingIDs(t *testing.T) {
	c := &clock{t: time.UnixMilli(5000)}
	r := journal.NewRing(journal.RingConfig{Size: 10, Now: c.Now})
	var ids []string
	for _, step := range []time.Duration{0, 0, time.Millisecond, -time.Second, 2 * time.Second} {
		c.Add(step)
		e := &decoy.JournalEntry{}
		journaltest.Append(context.Background(), r, map[string][]*decoy.JournalEntry{"p": {e}})
		ids = append(ids, e.ID)
	}
	if want := "[5000-0 5000-1 5001-0 5001-1 6001-0]"; fmt.Sprint(ids) != want {
		t.Errorf("IDs %v, want %s", ids, want)
	}
}

// The memory of all rings stays within MaxBytes: 10,000 projects each
// recorded to leave the journals of the projects recorded to last, and
// those of the others are dropped, least recently recorded first.
func TestRingMemoryBound(t *testing.T) {
	const maxBytes = 4 << 20
	r := journal.NewRing(journal.RingConfig{Size: 1000, MaxBytes: maxBytes})
	ctx := context.Background()
	body := strings.Repeat("x", 1000)
	for i := range 10000 {
		var es []*decoy.JournalEntry
		for range 5 {
			es = append(es, &decoy.JournalEntry{Method: "GET", Path: "/x", Body: body, Headers: map[string]string{"Accept": "*/*"}})
		}
		if err := r.Append(ctx, journaltest.Records(map[string][]*decoy.JournalEntry{fmt.Sprint("p", i): es})); err != nil {
			t.Fatal(err)
		}
		if b, _ := r.Footprint(); b > maxBytes {
			t.Fatalf("after %d projects: %d bytes, past the bound of %d", i+1, b, maxBytes)
		}
	}
	b, projects := r.Footprint()
	t.Logf("%d bytes in the journals of %d projects", b, projects)
	if projects < 100 || projects > 1000 || b < maxBytes*3/4 {
		t.Errorf("%d projects in %d bytes: the bound is not used", projects, b)
	}
	for _, p := range []string{"p9999", fmt.Sprint("p", 10000-projects)} {
		if n, _ := r.Count(ctx, p, decoy.JournalFilter{}); n != 5 {
			t.Errorf("%s, recorded to lately, keeps %d entries", p, n)
		}
	}
	if n, _ := r.Count(ctx, fmt.Sprint("p", 9999-projects), decoy.JournalFilter{}); n != 0 {
		t.Errorf("the newest project dropped still keeps %d entries", n)
	}
	// A project recorded to again is the newest: the next to be dropped
	// is the oldest of the others.
	oldest := fmt.Sprint("p", 10000-projects)
	r.Append(ctx, journaltest.Records(map[string][]*decoy.JournalEntry{oldest: {{Method: "GET", Path: "/again"}}}))
	r.Append(ctx, journaltest.Records(map[string][]*decoy.JournalEntry{"new": {{Method: "GET", Path: "/x", Body: strings.Repeat("y", 20000)}}}))
	if n, _ := r.Count(ctx, oldest, decoy.JournalFilter{}); n != 6 {
		t.Errorf("the project recorded to again keeps %d entries, want 6", n)
	}
	if n, _ := r.Count(ctx, fmt.Sprint("p", 10001-projects), decoy.JournalFilter{}); n != 0 {
		t.Errorf("the least recently recorded project keeps %d entries", n)
	}

	// One project alone past the bound keeps its newest entries.
	one := journal.NewRing(journal.RingConfig{Size: 1000, MaxBytes: 100 << 10})
	for i := range 500 {
		one.Append(ctx, journaltest.Records(map[string][]*decoy.JournalEntry{"p": {{Path: fmt.Sprint("/", i), Body: body}}}))
	}
	es, _, _ := one.List(ctx, "p", decoy.JournalFilter{}, "", 1000)
	if b, _ := one.Footprint(); b > 100<<10 || len(es) < 50 || es[0].Path != "/499" {
		t.Errorf("one project past the bound: %d entries in %d bytes, newest %s", len(es), b, es[0].Path)
	}
}
