package jsondoc

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"unsafe"

	"github.com/decoy-mock/decoy/budget"
)

// Concurrent first queries on a path share one build of its column: each
// build holds a column of the whole document.
func TestColumnBuiltOnce(t *testing.T) {
	doc, err := Parse([]byte("[" + strings.Repeat(`{"a":{"b":1}},`, 999) + `{"a":{"b":2}}]`))
	if err != nil {
		t.Fatal(err)
	}
	before := columnBuilds.Load()
	var wg sync.WaitGroup
	cols := make([]*Column, 32)
	for i := range cols {
		wg.Go(func() { cols[i] = doc.Column(NewPath([]string{"a", "b"})) })
	}
	wg.Wait()
	if n := columnBuilds.Load() - before; n != 1 {
		t.Errorf("%d builds of one column for %d concurrent callers", n, len(cols))
	}
	for _, c := range cols {
		if c != cols[0] || c.Len() != 1000 {
			t.Fatal("callers got different columns")
		}
	}
}

// What a column holds is what its build reserved: the registry of the
// document counts it, with the overhead of its entry, and a column that
// does not fit is not kept.
func TestColumnCounted(t *testing.T) {
	var b strings.Builder
	b.WriteString("[")
	for i := range 1000 {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `{"a":%d,"b":"x%d","c":[%d,%d]}`, i, i, i, i)
	}
	b.WriteString("]")
	for _, path := range []string{"a", "c", "c.x", "z"} {
		d, err := Parse([]byte(b.String()))
		if err != nil {
			t.Fatal(err)
		}
		pool := budget.NewPool(0)
		set, _ := pool.NewSet(d.MemoryBytes(), nil)
		d.SetStructures(set)
		p := NewPath(strings.Split(path, "."))
		c := d.Column(p)
		if c.walk != nil {
			t.Fatalf("%s: not kept without a bound", path)
		}
		if got, want := set.Bytes()-d.MemoryBytes(), c.bytes+budget.Overhead(d.columnKey(p)); got != want || pool.Used() != set.Bytes() {
			t.Errorf("%s: the registry counts %d bytes for the column (pool %d, set %d), it holds %d", path, got, pool.Used(), set.Bytes(), want)
		}
		// Within a bound too small for it, it is not kept, and the
		// column that walks gives the same values.
		small := budget.NewPool(d.MemoryBytes() + c.bytes/2)
		set, ok := small.NewSet(d.MemoryBytes(), nil)
		if !ok {
			t.Fatal("no room for the document")
		}
		d2, _ := Parse(d.Bytes())
		d2.SetStructures(set)
		w := d2.Column(p)
		if c.bytes > 4096 && w.walk == nil {
			t.Errorf("%s: a column of %d bytes kept within %d", path, c.bytes, small.Max())
		}
		if small.Used() > small.Max() {
			t.Errorf("%s: %d bytes used, bound %d", path, small.Used(), small.Max())
		}
		for i := range d.Len() {
			vals := c.AppendValues(nil, i)
			if !slices.Equal(w.AppendValues(nil, i), vals) || len(vals) > 0 && w.Fanned(i) != c.Fanned(i) {
				t.Fatalf("%s, element %d: walking %v %v, kept %v %v", path, i, w.AppendValues(nil, i), w.Fanned(i), c.AppendValues(nil, i), c.Fanned(i))
			}
		}
	}
}

// A column is packed (8 bytes an element) while no element has two values
// and at least a third have one, and general otherwise; either way each
// element's values and fan-out are the path's, the form chosen is the
// smaller, and its size is what it holds.
func TestColumnForms(t *testing.T) {
	rec := func(n int, f func(i int) string) string {
		parts := make([]string, n)
		for i := range parts {
			parts[i] = f(i)
		}
		return "[" + strings.Join(parts, ",") + "]"
	}
	// first k of 90 elements have path a.
	firstK := func(k int) string {
		return rec(90, func(i int) string {
			if i < k {
				return fmt.Sprintf(`{"a":%d}`, i)
			}
			return `{"b":1}`
		})
	}
	const packed, general, empty = "packed", "general", "empty"
	tests := []struct {
		name string
		doc  string
		path []string
		form string
	}{
		{"every element", rec(90, func(i int) string { return fmt.Sprintf(`{"a":%d}`, i) }), []string{"a"}, packed},
		{"most elements", rec(90, func(i int) string {
			if i%5 == 0 {
				return `{"b":1}`
			}
			return fmt.Sprintf(`{"a":"s%d"}`, i)
		}), []string{"a"}, packed},
		{"a third", firstK(30), []string{"a"}, packed},
		{"under a third", firstK(29), []string{"a"}, general},
		{"few elements", firstK(9), []string{"a"}, general},
		{"escaped strings", rec(90, func(i int) string { return fmt.Sprintf(`{"a":"x\\n%d"}`, i) }), []string{"a"}, packed},
		{"every kind", rec(90, func(i int) string {
			return []string{`{"a":null}`, `{"a":true}`, `{"a":false}`, `{"a":-1.5e3}`, `{"a":"s"}`, `{"a":{"b":[1]}}`, `{"a":[]}`, `{}`}[i%8]
		}), []string{"a"}, packed},
		{"no element", firstK(0), []string{"a"}, empty},
		{"one element without", `[{}]`, []string{"a"}, empty},
		{"not objects", rec(90, func(i int) string { return fmt.Sprint(i) }), []string{"a"}, empty},
		{"empty array", `[]`, []string{"a"}, empty},
		{"not an array", `{"a":1}`, []string{"a"}, empty},
		{"two values late", rec(90, func(i int) string {
			if i == 70 {
				return `{"a":[{"x":1},{"x":2}]}`
			}
			if i%3 == 0 {
				return `[1]`
			}
			return fmt.Sprintf(`{"a":[{"x":%d}]}`, i)
		}), []string{"a", "x"}, general},
		{"two values last", rec(90, func(i int) string {
			if i == 89 {
				return `{"a":[{"x":1},{"x":2},{"x":3}]}`
			}
			return fmt.Sprintf(`{"a":[{"x":%d}]}`, i)
		}), []string{"a", "x"}, general},
		{"two values first", rec(90, func(i int) string { return `{"a":[{"x":1},{"x":null}]}` }), []string{"a", "x"}, general},
		{"fanned, one value each", rec(90, func(i int) string { return fmt.Sprintf(`{"a":[{"x":%d}]}`, i) }), []string{"a", "x"}, packed},
		{"fanned, some without", rec(90, func(i int) string {
			if i%10 == 0 {
				return `{"a":[]}`
			}
			return fmt.Sprintf(`{"a":[{"x":%d}]}`, i)
		}), []string{"a", "x"}, packed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := Parse([]byte(tt.doc))
			if err != nil {
				t.Fatal(err)
			}
			c := d.buildColumn(nil, tt.path)
			form := general
			switch {
			case c.Empty():
				form = empty
			case c.off == nil:
				form = packed
			}
			if form != tt.form {
				t.Errorf("%s, want %s", form, tt.form)
			}
			n := d.spans.len()
			if c.Len() != n {
				t.Fatalf("Len %d, want %d", c.Len(), n)
			}
			values, found := 0, 0
			for i, s := range d.spans.all() {
				w := walker{b: d.raw}
				if d.raw[s.start] == '{' {
					w.walk(int(s.start), tt.path)
				}
				values += len(w.vals)
				if len(w.vals) > 0 {
					found++
				}
				got := c.AppendValues(nil, i)
				if len(got) != len(w.vals) {
					t.Fatalf("element %d: %d values, want %d", i, len(got), len(w.vals))
				}
				for j := range got {
					if got[j] != w.vals[j] {
						t.Fatalf("element %d value %d: %+v, want %+v", i, j, got[j], w.vals[j])
					}
				}
				if v, one := c.Value(i); one != (len(w.vals) == 1) || (one && v != w.vals[0]) {
					t.Fatalf("element %d: Value %+v, %v; values %+v", i, v, one, w.vals)
				}
				if len(w.vals) > 0 && c.Fanned(i) != w.fanned {
					t.Fatalf("element %d: fanned %v, want %v", i, c.Fanned(i), w.fanned)
				}
			}
			const vsize = int64(unsafe.Sizeof(Value{}))
			fixed := int64(unsafe.Sizeof(*c)) + 8*int64(len(c.fanned))
			generalSize := fixed + vsize*int64(values) + 4*int64(n+1)
			denseSize := fixed + 8*int64(n)
			want := generalSize
			switch tt.form {
			case empty:
				want = fixed
				if values > 0 {
					t.Errorf("empty with %d values", values)
				}
			case packed:
				want = denseSize
				if values == found && denseSize > generalSize {
					t.Errorf("packed at %d bytes, the general form takes %d", denseSize, generalSize)
				}
			default:
				if values == found && denseSize < generalSize {
					t.Errorf("general at %d bytes, the packed form takes %d", generalSize, denseSize)
				}
			}
			if got := c.bytes; got != want {
				t.Errorf("counted %d bytes, holds %d (no spare room)", got, want)
			}
		})
	}
}

// A value too long to pack turns a packed column general, with the values
// before it kept.
func TestColumnValueTooLongToPack(t *testing.T) {
	defer func(n uint32) { maxPackedLen = n }(maxPackedLen)
	maxPackedLen = 10
	d, err := Parse([]byte(`[{"a":1},{},{"a":"short"},{"a":"a longer string"},{"a":2}]`))
	if err != nil {
		t.Fatal(err)
	}
	c := d.buildColumn(nil, []string{"a"})
	if c.off == nil {
		t.Fatal("still packed")
	}
	want := []string{`1`, ``, `"short"`, `"a longer string"`, `2`}
	for i, w := range want {
		got := ""
		for _, v := range c.AppendValues(nil, i) {
			got += string(d.Text(v))
		}
		if got != w {
			t.Errorf("element %d: %q, want %q", i, got, w)
		}
	}
	if _, ok := pack(Value{Start: 5, End: 5 + 11, Kind: String}); ok {
		t.Error("packed a value longer than maxPackedLen")
	}
	for _, v := range []Value{{Start: 1<<32 - 3, End: 1<<32 - 1, Kind: Array, Escaped: true}, {Start: 0, End: 10, Kind: Number}} {
		if p, ok := pack(v); !ok || unpack(p) != v {
			t.Errorf("pack(%+v) = %x, %v: unpacks to %+v", v, p, ok, unpack(p))
		}
	}
}
