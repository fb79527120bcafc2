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

// A sort order and its ranks are carried over a replace that leaves the
// record's value at their path as written (shared, as the write's
// CarryOver makes them, before any read asks), and built again over any
// other write; either way they are those of the data built afresh.
func TestCarryOrder(t *testing.T) {
	d, err := jsondoc.Parse([]byte(`[{"id":1,"age":30,"n":"c"},{"id":2,"age":20,"n":"a"},{"id":3,"age":30,"n":"b"},{"id":4}]`))
	if err != nil {
		t.Fatal(err)
	}
	path := jsondoc.NewPath([]string{"age"})
	for step, w := range []struct {
		op     jsondoc.EditOp
		at     int
		rec    string
		shared bool
	}{
		{jsondoc.EditReplace, 0, `{"id":1,"age":30,"n":"z"}`, true},
		{jsondoc.EditReplace, 2, `{"n":"y","age":30,"id":3}`, true},
		{jsondoc.EditReplace, 3, `{"id":4,"n":"x"}`, true},
		{jsondoc.EditReplace, 1, `{"id":2,"age":31}`, false},
		{jsondoc.EditReplace, 1, `{"id":2,"age":31.0}`, false}, // equal, written otherwise
		{jsondoc.EditAppend, 0, `{"id":5,"age":1}`, false},
		{jsondoc.EditDelete, 0, ``, false},
		{jsondoc.EditReplace, 0, `{"id":2,"age":31.0,"n":"w"}`, true},
	} {
		var prev [2]*order
		var prevRanks [2]*ranks
		for i, desc := range []bool{false, true} {
			prev[i], prevRanks[i] = sortOrder(d, path, desc), sortRanks(d, path, desc)
		}
		ed, _ := d.Editor(nil)
		switch w.op {
		case jsondoc.EditAppend:
			ed.Append([]byte(w.rec), true)
		case jsondoc.EditReplace:
			ed.Replace(w.at, []byte(w.rec), true)
		default:
			ed.Delete(w.at)
		}
		d = ed.Document()
		d.CarryOver()
		fresh, err := jsondoc.Parse(d.Whole())
		if err != nil {
			t.Fatal(err)
		}
		for i, desc := range []bool{false, true} {
			kept := d.Structures().Get(orderKey(d, path, desc)) != nil
			got, want := sortOrder(d, path, desc), sortOrder(fresh, path, desc)
			if kept != w.shared || (got == prev[i]) != w.shared {
				t.Errorf("step %d, desc %v: order kept at the write %v, shared %v; want %v", step, desc, kept, got == prev[i], w.shared)
			}
			if !slices.Equal(got.perm, want.perm) {
				t.Fatalf("step %d, desc %v: order %v, afresh %v", step, desc, got.perm, want.perm)
			}
			gotRanks, wantRanks := sortRanks(d, path, desc), sortRanks(fresh, path, desc)
			if (gotRanks == prevRanks[i]) != w.shared || !slices.Equal(gotRanks.r, wantRanks.r) {
				t.Fatalf("step %d, desc %v: ranks %v (shared %v), afresh %v", step, desc, gotRanks.r, gotRanks == prevRanks[i], wantRanks.r)
			}
		}
	}
}
