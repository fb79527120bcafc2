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
	if m1 < m0+1000*int64(unsafe.Sizeof(Value{})) || grew != 1 || grewBy != m1-m0 {
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
