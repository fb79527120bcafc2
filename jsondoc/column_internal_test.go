package jsondoc

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"unsafe"
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
		wg.Go(func() { cols[i] = doc.Column([]string{"a", "b"}) })
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

type sized int64

func (s sized) MemoryBytes() int64 { return int64(s) }

// MemoryBytes counts the columns built over a document and what was built
// from them (when it says its size), and OnGrow hears each growth; columns
// dropped past maxColumns stop counting.
func TestMemoryBytes(t *testing.T) {
	var b strings.Builder
	b.WriteString("[")
	for i := range 1000 {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `{"a":%d,"b":"x%d"}`, i, i)
	}
	b.WriteString("]")
	d, err := Parse([]byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	grew, grewBy := 0, int64(0)
	d.OnGrow(func(n int64) { grew++; grewBy += n })
	m0 := d.MemoryBytes()
	if m0 < 8*1000 {
		t.Errorf("MemoryBytes %d before any column, want at least the spans (8000)", m0)
	}
	col := d.Column([]string{"a"})
	m1 := d.MemoryBytes()
	if m1 < m0+1000*8 || grew != 1 || grewBy != m1-m0 { // packed: 8 bytes a record
		t.Errorf("after a column: %d (was %d), grew %d times by %d", m1, m0, grew, grewBy)
	}
	col.Derived("order", func() any { return sized(50000) })
	m2 := d.MemoryBytes()
	if m2 < m1+50000 || grew != 2 || grewBy != m2-m0 {
		t.Errorf("after a derived structure of 50000 bytes: %d (was %d), grew %d times by %d", m2, m1, grew, grewBy)
	}
	d.RecordSums()
	if m := d.MemoryBytes(); m != m2+8*1000 || grew != 3 || grewBy != m-m0 {
		t.Errorf("after the record digests: %d (was %d), grew %d times by %d", m, m2, grew, grewBy)
	}
	m2 = d.MemoryBytes()
	col.Derived("opaque", func() any { return "no size" })
	if m3 := d.MemoryBytes(); m3 != m2 || grew != 3 {
		t.Errorf("a structure without a size changed MemoryBytes to %d (was %d) or grew (%d)", m3, m2, grew)
	}
	// Past maxColumns, "a" (the oldest) and its structures go.
	for i := range maxColumns {
		d.Column([]string{fmt.Sprintf("c%d", i)})
	}
	if _, ok := d.columns["a"]; ok {
		t.Fatal("column a kept past maxColumns")
	}
	if m := d.MemoryBytes(); m > m0+8*1000+int64(maxColumns)*(m1-m0+2) {
		t.Errorf("MemoryBytes %d with %d empty columns: a's 50000 bytes still counted?", m, maxColumns)
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
	tests := []struct {
		name  string
		doc   string
		path  []string
		dense bool
	}{
		{"every element", rec(90, func(i int) string { return fmt.Sprintf(`{"a":%d}`, i) }), []string{"a"}, true},
		{"most elements", rec(90, func(i int) string {
			if i%5 == 0 {
				return `{"b":1}`
			}
			return fmt.Sprintf(`{"a":"s%d"}`, i)
		}), []string{"a"}, true},
		{"a third", firstK(30), []string{"a"}, true},
		{"under a third", firstK(29), []string{"a"}, false},
		{"few elements", firstK(9), []string{"a"}, false},
		{"escaped strings", rec(90, func(i int) string { return fmt.Sprintf(`{"a":"x\\n%d"}`, i) }), []string{"a"}, true},
		{"every kind", rec(90, func(i int) string {
			return []string{`{"a":null}`, `{"a":true}`, `{"a":false}`, `{"a":-1.5e3}`, `{"a":"s"}`, `{"a":{"b":[1]}}`, `{"a":[]}`, `{}`}[i%8]
		}), []string{"a"}, true},
		{"no element", firstK(0), []string{"a"}, false},
		{"one element without", `[{}]`, []string{"a"}, false},
		{"not objects", rec(90, func(i int) string { return fmt.Sprint(i) }), []string{"a"}, false},
		{"empty array", `[]`, []string{"a"}, true},
		{"not an array", `{"a":1}`, []string{"a"}, true},
		{"two values late", rec(90, func(i int) string {
			if i == 70 {
				return `{"a":[{"x":1},{"x":2}]}`
			}
			if i%3 == 0 {
				return `[1]`
			}
			return fmt.Sprintf(`{"a":[{"x":%d}]}`, i)
		}), []string{"a", "x"}, false},
		{"two values last", rec(90, func(i int) string {
			if i == 89 {
				return `{"a":[{"x":1},{"x":2},{"x":3}]}`
			}
			return fmt.Sprintf(`{"a":[{"x":%d}]}`, i)
		}), []string{"a", "x"}, false},
		{"two values first", rec(90, func(i int) string { return `{"a":[{"x":1},{"x":null}]}` }), []string{"a", "x"}, false},
		{"fanned, one value each", rec(90, func(i int) string { return fmt.Sprintf(`{"a":[{"x":%d}]}`, i) }), []string{"a", "x"}, true},
		{"fanned, some without", rec(90, func(i int) string {
			if i%10 == 0 {
				return `{"a":[]}`
			}
			return fmt.Sprintf(`{"a":[{"x":%d}]}`, i)
		}), []string{"a", "x"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := Parse([]byte(tt.doc))
			if err != nil {
				t.Fatal(err)
			}
			c := d.buildColumn(tt.path)
			if dense := c.off == nil; dense != tt.dense {
				t.Errorf("packed %v, want %v", dense, tt.dense)
			}
			n := len(d.spans)
			if c.Len() != n {
				t.Fatalf("Len %d, want %d", c.Len(), n)
			}
			values, found := 0, 0
			for i, s := range d.spans {
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
				if c.Fanned(i) != w.fanned {
					t.Fatalf("element %d: fanned %v, want %v", i, c.Fanned(i), w.fanned)
				}
			}
			const vsize = int64(unsafe.Sizeof(Value{}))
			fixed := int64(unsafe.Sizeof(*c)) + 8*int64(len(c.fanned))
			general := fixed + vsize*int64(values) + 4*int64(n+1)
			denseSize := fixed + 8*int64(n)
			want := general
			if tt.dense {
				want = denseSize
				if values == found && denseSize > general {
					t.Errorf("packed at %d bytes, the general form takes %d", denseSize, general)
				}
			} else if values == found && denseSize < general {
				t.Errorf("general at %d bytes, the packed form takes %d", general, denseSize)
			}
			if got := c.bytes.Load(); got != want {
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
	c := d.buildColumn([]string{"a"})
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
