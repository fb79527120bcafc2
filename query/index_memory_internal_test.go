package query

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/decoy-mock/decoy/internal/memtest"
	"github.com/decoy-mock/decoy/jsondoc"
)

// What an index counts against --max-cache-bytes is what it holds: built
// over 100,000 records, of unique values (an item route's id) and of few
// (a status), its count and the heap it takes are within a fifth of each
// other.
func TestIndexCountsWhatItHolds(t *testing.T) {
	var b strings.Builder
	b.WriteByte('[')
	for i := range 100_000 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"id":%d,"status":%q}`, i, []string{"active", "inactive", "banned"}[i%3])
	}
	b.WriteByte(']')
	d, err := jsondoc.Parse([]byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	for _, field := range []string{"id", "status"} {
		path := jsondoc.NewPath([]string{field})
		d.PeekColumn(path) // not the index's
		before := memtest.LiveHeap()
		ix := equalityIndex(d, path, false)
		after := memtest.LiveHeap()
		if ix == nil {
			t.Fatalf("%s: no index", field)
		}
		runtime.KeepAlive(ix)
		took := float64(after) - float64(before)
		t.Logf("%s: counts %d bytes, takes %.0f (%.2f×)", field, ix.bytes, took, float64(ix.bytes)/took)
		if r := float64(ix.bytes) / took; r < 0.8 || r > 1.25 {
			t.Errorf("%s: the index counts %d bytes and takes %.0f of heap", field, ix.bytes, took)
		}
	}
}
