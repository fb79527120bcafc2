package journal

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/decoy-mock/decoy"
)

// write keeps its map and a bounded number of emptied slices from one
// batch to the next: each batch's records reach their projects, and none
// stays referenced once written, by the slices nor by the batch.
func TestWriteReuse(t *testing.T) {
	ring := NewRing(RingConfig{Size: 100})
	j := New(Config{Store: ring})
	for round := range 3 {
		var batch []item
		for p := range 2 * maxSpare {
			for i := range p%3 + 1 {
				b := NewBuffer()
				b.B = (&decoy.JournalEntry{Path: fmt.Sprintf("/%d/%d/%d", round, p, i)}).AppendRecord(b.B)
				batch = append(batch, item{project: fmt.Sprint("p", p), buf: b})
			}
		}
		j.write(batch)
		if len(j.byProject) != 0 {
			t.Fatalf("round %d: %d projects left in the map", round, len(j.byProject))
		}
		if len(j.spare) != maxSpare {
			t.Fatalf("round %d: %d spare slices, want the bound %d", round, len(j.spare), maxSpare)
		}
		for _, s := range j.spare {
			if len(s) != 0 || s[:cap(s)][0] != nil {
				t.Fatalf("round %d: a spare slice still holds a record", round)
			}
		}
		for _, it := range batch {
			if it != (item{}) {
				t.Fatalf("round %d: the batch still holds a record of %s", round, it.project)
			}
		}
	}
	for p := range 2 * maxSpare {
		got, _, err := ring.List(context.Background(), fmt.Sprint("p", p), decoy.JournalFilter{}, "", 100)
		if err != nil {
			t.Fatal(err)
		}
		if want := 3 * (p%3 + 1); len(got) != want {
			t.Fatalf("p%d: %d entries, want %d", p, len(got), want)
		}
		for _, e := range got {
			if strings.Split(e.Path, "/")[2] != fmt.Sprint(p) {
				t.Errorf("p%d holds %s, another project's", p, e.Path)
			}
		}
	}
}
