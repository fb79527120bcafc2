package query

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/decoy-mock/decoy/jsondoc"
)

// An index carried over write after write (appends, replaces, deletes),
// folded now and then, lists what an index built afresh lists.
func TestCarryIndex(t *testing.T) {
	for _, bounds := range [][2]int{{3, 2}, {1000, 3}, {5, 1000}} {
		testCarryIndex(t, bounds[0], bounds[1])
	}
}

func testCarryIndex(t *testing.T, over, depth int) {
	oldOver, oldDepth := maxOver, maxDepth
	maxOver, maxDepth = over, depth
	t.Cleanup(func() { maxOver, maxDepth = oldOver, oldDepth })
	d, err := jsondoc.Parse([]byte(`[{"id":1,"c":"a"},{"id":2,"c":"b"},{"id":3,"c":["a","B"]},{"id":4}]`))
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(7, 8))
	path := jsondoc.NewPath([]string{"c"})
	for step := range 400 {
		for _, fold := range []bool{false, true} {
			equalityIndex(d, path, fold) // kept, to be carried
		}
		ed, _ := d.Editor(nil)
		rec := fmt.Appendf(nil, `{"id":%d,"c":%q}`, 10+step, []string{"a", "b", "A", "c"}[rng.IntN(4)])
		if rng.IntN(5) == 0 {
			rec = fmt.Appendf(nil, `{"id":%d,"c":["b","c"]}`, 10+step)
		}
		switch op := rng.IntN(5); {
		case op < 2 || ed.Len() < 2:
			ed.Append(rec, true)
		case op < 4:
			ed.Replace(rng.IntN(ed.Len()), rec, true)
		default:
			ed.Delete(rng.IntN(ed.Len()))
		}
		d = ed.Document()
		fresh, err := jsondoc.Parse(d.Whole())
		if err != nil {
			t.Fatal(err)
		}
		for _, fold := range []bool{false, true} {
			got, want := equalityIndex(d, path, fold), equalityIndex(fresh, path, fold)
			if !got.carried {
				t.Fatalf("step %d: index not carried", step)
			}
			for _, v := range []string{"a", "b", "c", "A", "B", "z"} {
				c, err := parseCondition("c=" + v)
				if fold {
					c, err = parseCondition("c[$eqi]=" + v)
				}
				if err != nil {
					t.Fatal(err)
				}
				g, _ := got.lookup(&c)
				w, _ := want.lookup(&c)
				if !slices.Equal(g, w) {
					t.Fatalf("bounds %d %d, step %d, fold %v, %s: %v, afresh %v", over, depth, step, fold, v, g, w)
				}
			}
		}
	}
}
