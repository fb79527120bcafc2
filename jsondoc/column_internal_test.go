package jsondoc

import (
	"strings"
	"sync"
	"testing"
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
