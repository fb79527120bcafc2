package journal

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/decoy-mock/decoy"
)

// write keeps its map and a bounded number of emptied slices from one
// batch to the next, and flush the buffers of the records written, for
// NewBuffer: each batch's records reach their projects, runs of one
// project or not, and none stays referenced once written, by the slices
// nor by the queue's arrays.
func TestWriteReuse(t *testing.T) {
	ring := NewRing(RingConfig{Size: 100})
	j := New(Config{Store: ring, Batch: 16})
	for round := range 3 {
		queuedAll := 0
		for p := range 2 * maxSpare {
			for i := range p%3 + 1 {
				// Two projects interleaved, then a run of one.
				project := fmt.Sprint("p", p)
				if i == 0 && p%2 == 1 {
					project = fmt.Sprint("p", p-1)
				}
				b := j.NewBuffer()
				b.B = (&decoy.JournalEntry{Path: fmt.Sprintf("/%s/%d/%d", project, round, i)}).AppendRecord(b.B)
				j.Queue(project, b)
				queuedAll++
			}
		}
		queued := j.queued
		j.flush()
		if len(j.byProject) != 0 {
			t.Fatalf("round %d: %d projects left in the map", round, len(j.byProject))
		}
		if len(j.spare) == 0 || len(j.spare) > maxSpare {
			t.Fatalf("round %d: %d spare slices, want some, within the bound %d", round, len(j.spare), maxSpare)
		}
		for _, s := range j.spare {
			if len(s) != 0 || s[:cap(s)][0] != nil {
				t.Fatalf("round %d: a spare slice still holds a record", round)
			}
		}
		for _, it := range queued[:cap(queued)] {
			if it != (item{}) {
				t.Fatalf("round %d: the queue's array still holds a record of %s", round, it.project)
			}
		}
		if want := min(queuedAll, 2*j.cfg.Batch); len(j.free) != want {
			t.Fatalf("round %d: %d buffers kept, want %d (the bound: %d)", round, len(j.free), want, 2*j.cfg.Batch)
		}
	}
	// A burst past the bound of kept buffers: the rest are the collector's.
	for i := range 5 * j.cfg.Batch {
		b := j.NewBuffer()
		b.B = (&decoy.JournalEntry{Path: fmt.Sprint("/burst/", i)}).AppendRecord(b.B)
		j.Queue("burst", b)
	}
	j.flush()
	if len(j.free) != 2*j.cfg.Batch {
		t.Fatalf("after a burst: %d buffers kept, want the bound %d", len(j.free), 2*j.cfg.Batch)
	}
	for p := range 2 * maxSpare {
		got, _, err := ring.List(context.Background(), fmt.Sprint("p", p), decoy.JournalFilter{}, "", 100)
		if err != nil {
			t.Fatal(err)
		}
		want := p%3 + 1 // p's own, less the first of an odd one, plus the next one's first
		if p%2 == 1 {
			want--
		} else if p+1 < 2*maxSpare {
			want++
		}
		if len(got) != 3*want {
			t.Fatalf("p%d: %d entries, want %d", p, len(got), 3*want)
		}
		for _, e := range got {
			if strings.Split(e.Path, "/")[1] != fmt.Sprint("p", p) {
				t.Errorf("p%d holds %s, another project's", p, e.Path)
			}
		}
	}
}
