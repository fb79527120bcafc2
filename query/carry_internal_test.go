package query

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
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
		for _, fold := range []bool{false, true} {
			got, want := carriedAndAfresh(t, d, path, fold, step)
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

// A sort order and its ranks are carried over every write of one record
// (shared, as the write's CarryOver makes them, before any read asks,
// when a replace leaves the record's value at their path as written and
// reached alike; changed where the record changed otherwise), never
// sorted again; either way they are those of the data built afresh.
func TestCarryOrder(t *testing.T) {
	for _, tc := range []struct {
		name, data, path string
		writes           []orderWrite
	}{
		{"age", `[{"id":1,"age":30,"n":"c"},{"id":2,"age":20,"n":"a"},{"id":3,"age":30,"n":"b"},{"id":4}]`, "age", []orderWrite{
			{jsondoc.EditReplace, 0, `{"id":1,"age":30,"n":"z"}`, true},
			{jsondoc.EditReplace, 2, `{"n":"y","age":30,"id":3}`, true},
			{jsondoc.EditReplace, 3, `{"id":4,"n":"x"}`, true},
			{jsondoc.EditReplace, 1, `{"id":2,"age":31}`, false},
			{jsondoc.EditReplace, 1, `{"id":2,"age":31.0}`, false}, // equal, written otherwise
			{jsondoc.EditAppend, 0, `{"id":5,"age":1}`, false},
			{jsondoc.EditDelete, 0, ``, false},
			{jsondoc.EditReplace, 0, `{"id":2,"age":31.0,"n":"w"}`, true},
			{jsondoc.EditAppend, 0, `{"id":6,"age":30}`, false}, // ties: after the 30s before it
			{jsondoc.EditAppend, 0, `{"id":7,"age":null}`, false},
			{jsondoc.EditAppend, 0, `{"id":8}`, false},
			{jsondoc.EditAppend, 0, `{"id":9,"age":"30"}`, false},
			{jsondoc.EditAppend, 0, `{"id":10,"age":[1]}`, false},
			{jsondoc.EditAppend, 0, `{"id":11,"age":true}`, false},
			{jsondoc.EditAppend, 0, `{"id":12,"age":123456789012345678901234567890}`, false},
			{jsondoc.EditReplace, 0, `{"id":2,"age":-1}`, false},
			{jsondoc.EditReplace, 4, `{"id":6,"age":"\u0041"}`, false},
			{jsondoc.EditDelete, 5, ``, false},
			{jsondoc.EditDelete, 0, ``, false},
			{jsondoc.EditReplace, 0, `5`, false}, // not an object: reaches nothing
		}},
		{"stored order", `[{"id":1,"t":1},{"id":2,"t":2},{"id":3}]`, "t", []orderWrite{
			{jsondoc.EditAppend, 0, `{"id":4}`, false}, // still the stored order
			{jsondoc.EditReplace, 2, `{"id":3,"t":3}`, false},
			{jsondoc.EditAppend, 0, `{"id":5,"t":0}`, false}, // no longer
			{jsondoc.EditDelete, 4, ``, false},               // again
			{jsondoc.EditReplace, 0, `{"id":1,"t":9}`, false},
			{jsondoc.EditReplace, 0, `{"id":1,"t":1}`, false},
			{jsondoc.EditDelete, 1, ``, false},
		}},
		{"fan-out", `[{"id":1,"a":{"b":2}},{"id":2,"a":{"b":1}},{"id":3,"a":[{"b":0}]}]`, "a.b", []orderWrite{
			{jsondoc.EditReplace, 0, `{"id":1,"a":[{"b":2}]}`, false}, // the same value, reached through an array
			{jsondoc.EditReplace, 0, `{"a":[{"b":2}],"id":1}`, true},
			{jsondoc.EditReplace, 2, `{"id":3,"a":{"b":0}}`, false},
			{jsondoc.EditAppend, 0, `{"id":4,"a":[{"b":-1},{"b":5}]}`, false},
			{jsondoc.EditAppend, 0, `{"id":5,"a":{"b":-1}}`, false},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := jsondoc.Parse([]byte(tc.data))
			if err != nil {
				t.Fatal(err)
			}
			path := jsondoc.NewPath(strings.Split(tc.path, "."))
			for step, w := range tc.writes {
				d = checkCarryOrder(t, fmt.Sprintf("step %d", step), d, path, w)
			}
		})
	}
}

// orderWrite is a write of TestCarryOrder, and whether the order before it
// holds after it as it is (shared).
type orderWrite struct {
	op     jsondoc.EditOp
	at     int
	rec    string
	shared bool
}

// checkCarryOrder has d's orders and ranks by path built, makes w over d,
// and checks they were carried over it (shared when w.shared), without a
// sort, as the data built afresh has them. It returns the document w
// made.
func checkCarryOrder(t *testing.T, name string, d *jsondoc.Document, path jsondoc.Path, w orderWrite) *jsondoc.Document {
	t.Helper()
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
	builds := orderBuilds.Load()
	d.CarryOver()
	var got [2]*order
	var gotRanks [2]*ranks
	for i, desc := range []bool{false, true} {
		if d.Structures().Get(orderKey(d, path, desc)) == nil {
			t.Fatalf("%s, desc %v: order not kept at the write", name, desc)
		}
		got[i], gotRanks[i] = sortOrder(d, path, desc), sortRanks(d, path, desc)
	}
	if n := orderBuilds.Load() - builds; n != 0 {
		t.Fatalf("%s: %d orders sorted again", name, n)
	}
	fresh, err := jsondoc.Parse(d.Whole())
	if err != nil {
		t.Fatal(err)
	}
	for i, desc := range []bool{false, true} {
		want, wantRanks := sortOrder(fresh, path, desc), sortRanks(fresh, path, desc)
		if (got[i] == prev[i]) != w.shared || (gotRanks[i] == prevRanks[i]) != w.shared {
			t.Errorf("%s, desc %v: order shared %v, ranks shared %v; want %v", name, desc, got[i] == prev[i], gotRanks[i] == prevRanks[i], w.shared)
		}
		if (got[i].perm == nil) != (want.perm == nil) || !slices.Equal(got[i].perm, want.perm) {
			t.Fatalf("%s, desc %v: order %v, afresh %v", name, desc, got[i].perm, want.perm)
		}
		if (gotRanks[i].r == nil) != (wantRanks.r == nil) || !slices.Equal(gotRanks[i].r, wantRanks.r) {
			t.Fatalf("%s, desc %v: ranks %v, afresh %v", name, desc, gotRanks[i].r, wantRanks.r)
		}
	}
	return d
}

// Orders and ranks carried over many random writes (appends, replaces,
// deletes down to no record) of values of every kind, duplicates, missing
// ones and ones reached through arrays are those of the data built afresh
// after each, ascending and descending.
func TestCarryOrderRandom(t *testing.T) {
	values := []string{``, `"v":null`, `"v":true`, `"v":false`, `"v":1`, `"v":1.0`, `"v":-2`, `"v":2.5e3`,
		`"v":123456789012345678901234567890`, `"v":123456789012345678901234567891`, `"v":"a"`, `"v":"b"`,
		`"v":"\u0061"`, `"v":"\u00e9t\u00e9"`, `"v":""`, `"v":{"w":1}`, `"v":{"w":"a"}`, `"v":{"w":null}`,
		`"v":[1,2]`, `"v":[{"w":3}]`, `"v":[{"w":1},{"w":2}]`, `"v":{}`, `"v":[]`}
	for seed := range uint64(6) {
		rng := rand.New(rand.NewPCG(seed, 99))
		pool := values
		if seed%3 == 0 {
			pool = values[:3] // mostly nothing: the stored order comes and goes
		}
		path := jsondoc.NewPath([]string{"v"})
		if seed%2 == 1 {
			path = jsondoc.NewPath([]string{"v", "w"})
		}
		d, err := jsondoc.Parse([]byte(`[{"id":0}]`))
		if err != nil {
			t.Fatal(err)
		}
		for step := range 300 {
			v := pool[rng.IntN(len(pool))]
			if v != `` {
				v = "," + v
			}
			w := orderWrite{rec: fmt.Sprintf(`{"id":%d%s}`, step, v)}
			switch op := rng.IntN(5); {
			case op < 2 || d.Len() == 0:
				w.op = jsondoc.EditAppend
			case op < 4:
				w.op, w.at = jsondoc.EditReplace, rng.IntN(d.Len())
			default:
				w.op, w.at = jsondoc.EditDelete, rng.IntN(d.Len())
			}
			w.shared = w.op == jsondoc.EditReplace && unchangedAfter(d, w, path)
			d = checkCarryOrder(t, fmt.Sprintf("seed %d, step %d", seed, step), d, path, w)
		}
	}
}

// unchangedAfter reports whether replace w leaves the record's value at p
// as written, and reached alike.
func unchangedAfter(d *jsondoc.Document, w orderWrite, p jsondoc.Path) bool {
	one, err := jsondoc.Parse([]byte("[" + w.rec + "]"))
	if err != nil {
		panic(err)
	}
	before, err := jsondoc.Parse([]byte("[" + string(d.Record(w.at)) + "]"))
	if err != nil {
		panic(err)
	}
	return sameValues(before, one, 0, p) && before.PeekColumn(p).Fanned(0) == one.PeekColumn(p).Fanned(0)
}

// carriedAndAfresh returns the index of path over d, which must have been
// carried over, and the one built afresh over d's text.
func carriedAndAfresh(t *testing.T, d *jsondoc.Document, path jsondoc.Path, fold bool, step int) (got, want *index) {
	t.Helper()
	fresh, err := jsondoc.Parse(d.Whole())
	if err != nil {
		t.Fatal(err)
	}
	got, want = equalityIndex(d, path, fold), equalityIndex(fresh, path, fold)
	if !got.carried {
		t.Fatalf("step %d: index not carried", step)
	}
	return got, want
}

// An index of values nearly all distinct (a collection's ids), carried
// over creates, replaces and deletes, with the overlay flattened at its
// bound or not, lists what an index built afresh lists.
func TestCarryIndexManyValues(t *testing.T) {
	for _, bounds := range [][2]int{{4, 3}, {1 << 20, 1 << 20}} {
		oldOver, oldDepth := maxOver, maxDepth
		maxOver, maxDepth = bounds[0], bounds[1]
		var b strings.Builder
		b.WriteByte('[')
		for i := range 64 {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `{"id":%d}`, i)
		}
		b.WriteByte(']')
		d, err := jsondoc.Parse([]byte(b.String()))
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(3, 4))
		path := jsondoc.NewPath([]string{"id"})
		next := 64
		for step := range 600 {
			equalityIndex(d, path, false)
			ed, _ := d.Editor(nil)
			switch op := rng.IntN(6); {
			case op < 3 || ed.Len() < 2:
				ed.Append(fmt.Appendf(nil, `{"id":%d}`, next), true)
				next++
			case op < 5:
				id := next
				if rng.IntN(2) == 0 {
					id = rng.IntN(next) // an id some record has, or had
				} else {
					next++
				}
				ed.Replace(rng.IntN(ed.Len()), fmt.Appendf(nil, `{"id":%d}`, id), true)
			default:
				ed.Delete(rng.IntN(ed.Len()))
			}
			d = ed.Document()
			got, want := carriedAndAfresh(t, d, path, false, step)
			if got.over.size() > max(maxOver, got.n/8) {
				t.Fatalf("step %d: %d values apart, past the bound", step, got.over.size())
			}
			for range 8 {
				c, err := parseCondition(fmt.Sprintf("id=%d", rng.IntN(next+2)))
				if err != nil {
					t.Fatal(err)
				}
				g, _ := got.lookup(&c)
				w, _ := want.lookup(&c)
				if !slices.Equal(g, w) {
					t.Fatalf("bounds %v, step %d, %+v: %v, afresh %v", bounds, step, c, g, w)
				}
			}
		}
		maxOver, maxDepth = oldOver, oldDepth
	}
}

// Levels merge as a binary counter carries: after n writes of one new
// value each, at most log2(n)+1 levels, the newest entry of a value wins,
// and each value is listed once.
func TestOverlayLevels(t *testing.T) {
	var o *overlay
	const n = 1000
	for i := range n {
		o = o.with(map[string]*posting{fmt.Sprint(i % 700): {ids: []int32{int32(i)}}})
		levels := 0
		for l := o; l != nil; l = l.next {
			levels++
		}
		if bound := bitsLen(i+1) + 1; levels > bound {
			t.Fatalf("after %d writes, %d levels, want at most %d", i+1, levels, bound)
		}
	}
	seen := 0
	o.each(func(k string, p *posting) {
		seen++
		var v int
		fmt.Sscan(k, &v)
		if want := v + 700; v < n-700 && p.ids[0] != int32(want) {
			t.Errorf("value %s: posting %v, want the newest, %d", k, p.ids, want)
		}
	})
	if seen != 700 {
		t.Errorf("%d values listed, want 700", seen)
	}
	if p, ok := o.get("5"); !ok || p.ids[0] != 705 {
		t.Errorf("get 5: %v %v", p, ok)
	}
}

func bitsLen(n int) int {
	b := 0
	for ; n > 0; n >>= 1 {
		b++
	}
	return b
}

// applyCuts in one pass gives what a pass over remap for each cut gives.
func TestApplyCuts(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for range 2000 {
		n := 1 + rng.IntN(40)
		remap := make([]int32, n)
		places := int32(0)
		for j := range remap {
			if rng.IntN(4) == 0 {
				remap[j] = -1 // deleted by an earlier fold
			} else {
				remap[j] = places
				places++
			}
		}
		var cuts []int32
		for left := places; left > 0 && rng.IntN(6) > 0; left-- {
			cuts = append(cuts, int32(rng.IntN(int(left))))
		}
		want := slices.Clone(remap)
		for _, c := range cuts {
			for j, r := range want {
				switch {
				case r == c:
					want[j] = -1
				case r > c:
					want[j] = r - 1
				}
			}
		}
		got := slices.Clone(remap)
		applyCuts(got, cuts)
		if !slices.Equal(got, want) {
			t.Fatalf("remap %v, cuts %v: %v, want %v", remap, cuts, got, want)
		}
	}
}
