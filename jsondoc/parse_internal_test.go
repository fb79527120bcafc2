package jsondoc

import (
	"bytes"
	"fmt"
	"runtime"
	"strings"
	"testing"
)

// A parsed array's spans are in chunks of chunkMax (flat when one chunk
// holds them): every record is where it was stored, whatever the number of
// records against the chunk size, and edits share the chunks without
// changing the parsed document.
func TestParseChunks(t *testing.T) {
	old := chunkMax
	t.Cleanup(func() { chunkMax = old })
	for _, size := range []int{1, 2, 3, 1024} {
		for _, n := range []int{0, 1, 2, 3, 4, 7, 2049} {
			t.Run(fmt.Sprintf("chunk %d, %d records", size, n), func(t *testing.T) {
				chunkMax = size
				recs := make([]string, n)
				for i := range recs {
					recs[i] = fmt.Sprintf(`{"id":%d}`, i)
				}
				raw := []byte("[ " + strings.Join(recs, " ,\n") + " ]")
				d, err := Parse(raw)
				if err != nil {
					t.Fatal(err)
				}
				check := func(what string) {
					t.Helper()
					if d.Len() != n {
						t.Fatalf("%s: %d records, want %d", what, d.Len(), n)
					}
					for i, want := range recs {
						if got := string(d.Record(i)); got != want {
							t.Fatalf("%s: record %d is %s, want %s", what, i, got, want)
						}
					}
				}
				check("parsed")
				if flat := d.spans.chunks == nil; flat != (n <= size) {
					t.Errorf("flat %v for %d records in chunks of %d", flat, n, size)
				}
				for i, c := range d.spans.chunks {
					if i < len(d.spans.chunks)-1 && len(c) != size {
						t.Errorf("chunk %d holds %d, want %d", i, len(c), size)
					}
				}
				if n == 0 {
					return
				}
				for k := range 3 {
					ed, ok := d.Editor(nil)
					if !ok {
						t.Fatal("no editor")
					}
					switch k {
					case 0:
						ed.Replace(n/2, []byte(`{"id":"new"}`), true)
					case 1:
						ed.Delete(0)
					default:
						ed.Append([]byte(`{"id":"new"}`), true)
					}
					e := ed.Document()
					check(fmt.Sprintf("after edit %d", k))
					if k == 0 && string(e.Record(n/2)) != `{"id":"new"}` {
						t.Fatalf("the edit reads %s", e.Record(n/2))
					}
				}
			})
		}
	}
}

// Parsing allocates a large array's spans once: no copy is joined from
// them. It allocated twice the spans before, 16 bytes an element of
// [0,0,…], twice the document.
func TestParseAllocatesSpansOnce(t *testing.T) {
	raw := append(append([]byte("["), bytes.Repeat([]byte("0,"), 1<<20)...), '0', ']')
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	d, err := Parse(raw)
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	alloc, held := after.TotalAlloc-before.TotalAlloc, d.MemoryBytes()
	if alloc > uint64(held)+uint64(held)/16 {
		t.Errorf("parsing %d elements allocated %d bytes, for %d held", d.Len(), alloc, held)
	}
	runtime.KeepAlive(d)
}
