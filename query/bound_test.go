package query_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/decoy-mock/decoy/budget"
	"github.com/decoy-mock/decoy/jsondoc"
	"github.com/decoy-mock/decoy/query"
)

// fieldsDoc returns n records, each with fields f0 to f63: record i holds
// (i*(f+1)*7919)%n in field f, so that each field orders the records
// differently.
func fieldsDoc(n int) []byte {
	var b strings.Builder
	b.WriteByte('[')
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('{')
		for f := range 64 {
			if f > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `"f%d":%d`, f, (i*(f+1)*7919)%n)
		}
		b.WriteByte('}')
	}
	b.WriteByte(']')
	return []byte(b.String())
}

// answer runs raw over d and returns its body, total and ETag.
func answer(t *testing.T, d *jsondoc.Document, raw string) (string, int, string) {
	t.Helper()
	q, err := query.Compile(query.ParseParams(raw))
	if err != nil {
		t.Fatal(err)
	}
	res := q.Run(d)
	var b bytes.Buffer
	if _, err := res.WriteTo(&b); err != nil {
		t.Fatal(err)
	}
	return b.String(), res.Total, res.ETag()
}

// Queries ordering and filtering a document by each of 64 fields, whose
// structures together pass the bound, keep the bound after every read:
// the structures least recently used leave (those of the document being
// read included), one query asked for again and again keeps its own, and
// every answer is the one given with room for everything.
func TestQueriesWithinBound(t *testing.T) {
	const n = 1000
	doc := fieldsDoc(n)
	roomy, err := jsondoc.Parse(doc)
	if err != nil {
		t.Fatal(err)
	}
	d, _ := jsondoc.Parse(doc)
	// Room for the record digests and a few paths' columns, orders and
	// indexes (one order of 1000 records takes 4 KB kept, 28 KB while it
	// is sorted).
	pool, set := tight(t, d, 8*n+50<<10)
	d.SetStructures(set)
	hot := "order_by=f0&limit=3"
	for f := range 32 {
		for _, raw := range []string{
			fmt.Sprintf("order_by=f%d&limit=5", f),
			fmt.Sprintf("order_by=f%d&order_direction=desc&offset=10&limit=20", f),
			fmt.Sprintf("filters=f%d%%3D%d&order_by=f%d", f, f, (f+1)%64),
			fmt.Sprintf("filters=f%d%%5B%%24ne%%5D%%3D0&order_by=f%d&limit=7", f, f),
			hot,
		} {
			body, total, etag := answer(t, d, raw)
			wantBody, wantTotal, wantETag := answer(t, roomy, raw)
			if body != wantBody || total != wantTotal || etag != wantETag {
				t.Fatalf("%s: %.100s (total %d, %s), want %.100s (total %d, %s)", raw, body, total, etag, wantBody, wantTotal, wantETag)
			}
			if used := pool.Used(); used > pool.Max() {
				t.Fatalf("after %s: %d bytes used, bound %d", raw, used, pool.Max())
			}
		}
	}
	if _, items := pool.Evicted(); items == 0 {
		t.Error("nothing left the bound: the test has room for everything")
	}
	// The hot query's order is still kept, those of the first paths
	// (asked for once, long ago) are not.
	if set.Get(budget.Key{Kind: "order-asc", Name: "f0"}) == nil {
		t.Error("the order asked for after every other query left")
	}
	if set.Get(budget.Key{Kind: "order-asc", Name: "f1"}) != nil || set.Get(budget.Key{Kind: "column", Name: "f1"}) != nil {
		t.Error("the structures of a path used once, long ago, are still kept")
	}
	if used := pool.Used(); used != set.Bytes() {
		t.Errorf("the pool counts %d bytes, the document's registry %d", used, set.Bytes())
	}
}

// A query whose structures cannot fit at all is answered as with room for
// them (the same bytes, total and ETag), and keeps nothing.
func TestQueryWithoutRoom(t *testing.T) {
	doc := fieldsDoc(2000)
	roomy, err := jsondoc.Parse(doc)
	if err != nil {
		t.Fatal(err)
	}
	d, _ := jsondoc.Parse(doc)
	pool, set := tight(t, d, 1<<10) // room for no structure over 2000 records
	d.SetStructures(set)
	base := set.Bytes()
	for _, raw := range []string{
		"order_by=f3&limit=1",
		"order_by=f3&order_direction=desc",
		"order_by=f5&offset=1990",
		"filters=f1%3D7",
		"filters=f1%5B%24ne%5D%3D7&order_by=f2&order_direction=desc&limit=100",
		"filters=f1%3D7%26f2%5B%24eqi%5D%3D14&order_by=f9",
		"filters=nothing%3D1",
		"order_by=nothing&limit=3",
	} {
		body, total, etag := answer(t, d, raw)
		wantBody, wantTotal, wantETag := answer(t, roomy, raw)
		if body != wantBody || total != wantTotal || etag != wantETag {
			t.Fatalf("%s: %.100s (total %d, %s), want %.100s (total %d, %s)", raw, body, total, etag, wantBody, wantTotal, wantETag)
		}
		if used := pool.Used(); used > pool.Max() || set.Bytes() > base+1<<10 {
			t.Fatalf("after %s: %d bytes used (bound %d), %d kept for the document (its own %d)", raw, used, pool.Max(), set.Bytes(), base)
		}
	}
}

// A path that reaches nothing in any record (an array of numbers ordered
// by a field) keeps nothing per record: its column is empty and its order
// the stored one.
func TestOrderByNothingIsCheap(t *testing.T) {
	const n = 100000
	d, err := jsondoc.Parse([]byte("[" + strings.Repeat("0,", n-1) + "0]"))
	if err != nil {
		t.Fatal(err)
	}
	pool, set := tight(t, d, 8*n+64<<10) // the record digests, and little more
	d.SetStructures(set)
	for i := range 64 {
		if body, total, _ := answer(t, d, fmt.Sprintf("order_by=k%d&limit=1", i)); body != "[0]" || total != n {
			t.Fatalf("order_by=k%d: %s (total %d)", i, body, total)
		}
	}
	if _, items := pool.Evicted(); items != 0 {
		t.Errorf("%d structures dropped: paths that reach nothing took room", items)
	}
	if per := (set.Bytes() - d.MemoryBytes() - 8*n - int64(budget.Overhead(budget.Key{Kind: "sums"}))) / 64; per > 1024 {
		t.Errorf("%d bytes kept per path that reaches nothing", per)
	}
}

// An order or an index is built from a walk of the records, and keeps no
// column of its path beside it: what a query keeps is the structure it
// uses (an order of n records holds 4n bytes; the column it was sorted
// from held 8n more), and the answers are those of a document that keeps
// its columns (one a scan built first).
func TestStructuresKeepNoColumn(t *testing.T) {
	const n = 5000
	doc := fieldsDoc(n)
	for _, tc := range []struct {
		name, raw, kind string
		most            int64 // bytes kept over the record digests
	}{
		{"order", "order_by=f3&limit=5", "order-asc", 4*n + 1<<10},
		{"order desc", "order_by=f3&order_direction=desc&limit=5", "order-desc", 4*n + 1<<10},
		{"index", "filters=f3%3D17", "index", 4*n + 64*n},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, _ := jsondoc.Parse(doc)
			pool, set := tight(t, d, 1<<30)
			d.SetStructures(set)
			answer(t, d, "filters=f0%3D1") // the record digests, and f0's structures
			base := pool.Used()
			body, total, etag := answer(t, d, tc.raw)
			if set.Get(budget.Key{Kind: "column", Name: "f3"}) != nil {
				t.Errorf("%s keeps the column of f3", tc.raw)
			}
			if set.Get(budget.Key{Kind: tc.kind, Name: "f3"}) == nil {
				t.Fatalf("%s keeps no %s", tc.raw, tc.kind)
			}
			if kept := pool.Used() - base; kept > tc.most {
				t.Errorf("%s keeps %d bytes, want at most %d", tc.raw, kept, tc.most)
			}
			withColumn, _ := jsondoc.Parse(doc)
			withColumn.Column(jsondoc.NewPath([]string{"f3"})) // kept, then used by the build
			wantBody, wantTotal, wantETag := answer(t, withColumn, tc.raw)
			if body != wantBody || total != wantTotal || etag != wantETag {
				t.Errorf("%s: %.80s (total %d, %s), want %.80s (total %d, %s)", tc.raw, body, total, etag, wantBody, wantTotal, wantETag)
			}
		})
	}
}
