package query_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/decoy-mock/decoy/jsondoc"
	"github.com/decoy-mock/decoy/query"
)

// wrapped is a collection wrapped as many APIs answer theirs, with odd
// spacing that an answer must keep around the array.
const wrapped = `{"links": {"next" : null},
  "data": [ {"id":1,"team":"a","n":"x"} ,{"id":"2","team":"b","n":"y"},
  {"id":3,"team":"a","n":"z"}, "no object" ], "meta":{"v":1.0} }`

func TestWithin(t *testing.T) {
	doc, err := jsondoc.Parse([]byte(wrapped))
	if err != nil {
		t.Fatal(err)
	}
	data := []string{"data"}
	id := func(v string) query.Condition { return query.Bound(query.NewField([]string{"id"}), v) }
	team := func(v string) query.Condition { return query.Bound(query.NewField([]string{"team"}), v) }
	cases := []struct {
		name  string
		raw   string // the request's query string
		scope query.Scope
		want  string // the answer's body; "" for not found
		total int
	}{
		{"items alone, no processing", "", query.Scope{Items: data}, "", -2},
		{"items, order", "order_by=n&order_direction=desc", query.Scope{Items: data},
			`{"links": {"next" : null},
  "data": [{"id":3,"team":"a","n":"z"},{"id":"2","team":"b","n":"y"},{"id":1,"team":"a","n":"x"},"no object"], "meta":{"v":1.0} }`, 4},
		{"param before filters", "filters=n%3Dz", query.Scope{Items: data, Conditions: []query.Condition{team("a")}},
			`{"links": {"next" : null},
  "data": [{"id":3,"team":"a","n":"z"}], "meta":{"v":1.0} }`, 1},
		{"param, nothing", "", query.Scope{Items: data, Conditions: []query.Condition{team("c")}},
			`{"links": {"next" : null},
  "data": [], "meta":{"v":1.0} }`, 0},
		{"one, number id as text", "", query.Scope{Items: data, One: true, Conditions: []query.Condition{id("1.0")}}, `{"id":1,"team":"a","n":"x"}`, -1},
		{"one, string id", "", query.Scope{Items: data, One: true, Conditions: []query.Condition{id("2")}}, `{"id":"2","team":"b","n":"y"}`, -1},
		{"one ignores the request's query", "limit=0&filters=n%3Dnone&offset=9", query.Scope{Items: data, One: true, Conditions: []query.Condition{team("a")}},
			`{"id":1,"team":"a","n":"x"}`, -1},
		{"one, not found", "", query.Scope{Items: data, One: true, Conditions: []query.Condition{id("9")}}, "", -1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			base, err := query.Compile(query.ParseParams(tc.raw))
			if err != nil {
				t.Fatal(err)
			}
			q := base.Within(tc.scope)
			if tc.total == -2 {
				if q.Processing() {
					t.Fatal("a scope with items alone processes: the stored bytes would not be answered unchanged")
				}
				return
			}
			view, ok := doc.Items(q.Items)
			if !ok {
				t.Fatal("no items")
			}
			res := q.Run(view)
			if tc.want == "" {
				if res.Found() {
					t.Fatalf("found %v, want nothing", res.Records)
				}
				return
			}
			var b bytes.Buffer
			if _, err := res.WriteTo(&b); err != nil {
				t.Fatal(err)
			}
			if b.String() != tc.want {
				t.Errorf("answer\n%s\nwant\n%s", b.String(), tc.want)
			}
			if res.Size() != b.Len() {
				t.Errorf("Size() = %d, wrote %d", res.Size(), b.Len())
			}
			if tc.total >= 0 && res.Total != tc.total {
				t.Errorf("Total = %d, want %d", res.Total, tc.total)
			}
			if base.Processing() && q == base {
				t.Error("Within changed nothing")
			}
		})
	}
}

func TestWithinKeepsShared(t *testing.T) {
	base, _ := query.Compile(query.ParseParams("filters=a%3D1"))
	before := len(base.Filters)
	_ = base.Within(query.Scope{Conditions: []query.Condition{query.Bound(query.NewField([]string{"b"}), "2")}})
	if len(base.Filters) != before || base.Items != nil {
		t.Fatal("Within changed the shared query")
	}
}

func TestETagsOfShapes(t *testing.T) {
	// The same records alone, in an array, and spliced into a document
	// are different bodies: their tags differ.
	doc, _ := jsondoc.Parse([]byte(`{"data":[{"id":1}]}`))
	arr, _ := jsondoc.Parse([]byte(`[{"id":1}]`))
	view, _ := doc.Items([]string{"data"})
	all, _ := query.Compile(query.ParseParams("limit=5"))
	one := all.Within(query.Scope{One: true, Conditions: []query.Condition{query.Bound(query.NewField([]string{"id"}), "1")}})
	tags := map[string]string{
		"array":   all.Run(arr).ETag(),
		"spliced": all.Run(view).ETag(),
		"one":     one.Run(view).ETag(),
	}
	seen := map[string]string{}
	for k, v := range tags {
		if o, ok := seen[v]; ok {
			t.Errorf("%s and %s have the same tag %s", k, o, v)
		}
		seen[v] = k
	}
}

func TestItemsPaths(t *testing.T) {
	doc, _ := jsondoc.Parse([]byte(`{"a":{"b":[1,[{"x":1}]]},"s":"t","arr":[{"y":[]}]}`))
	for _, tc := range []struct {
		path []string
		n    int // -1: no array there
	}{
		{[]string{"a", "b"}, 2},
		{[]string{"a", "b", "1"}, 1},
		{[]string{"arr", "0", "y"}, 0},
		{[]string{"arr", "y"}, -1}, // no fan-out
		{[]string{"s"}, -1},
		{[]string{"missing"}, -1},
		{[]string{"a"}, -1},
	} {
		v, ok := doc.Items(tc.path)
		if ok != (tc.n >= 0) || ok && v.Len() != tc.n {
			t.Errorf("Items(%v) = %v, %v; want %d records", tc.path, v, ok, tc.n)
		}
	}
}

// An item view is counted against the cache's bound like any structure,
// and its queries answer the same with room for everything, with room for
// little, and with none (a view made for the one read).
func TestItemsWithinBound(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"meta":{"n":2000},"data":[`)
	for i := range 2000 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"id":%d,"g":%d}`, i, (i*7919)%97)
	}
	b.WriteString(`],"links":{}}`)
	raw := []byte(b.String())
	roomy, _ := jsondoc.Parse(raw)
	q, _ := query.Compile(query.ParseParams("order_by=g&order_direction=desc&limit=5&filters=g%5B%24ne%5D%3D3"))
	q = q.Within(query.Scope{Items: []string{"data"}})
	one := query.Item(query.Scope{Items: []string{"data"}, Conditions: []query.Condition{query.Bound(query.NewField([]string{"id"}), "1234")}})
	run := func(d *jsondoc.Document, q *query.Query) string {
		view, ok := d.Items(q.Items)
		if !ok {
			t.Fatal("no items")
		}
		res := q.Run(view)
		var out bytes.Buffer
		res.WriteTo(&out)
		return out.String() + " " + res.ETag()
	}
	want, wantOne := run(roomy, q), run(roomy, one)
	for _, room := range []int64{64 << 10, 4 << 10, 0} {
		d, _ := jsondoc.Parse(raw)
		pool, set := tight(t, d, room)
		d.SetStructures(set)
		for range 3 {
			if got := run(d, q); got != want {
				t.Errorf("room %d: %s, want %s", room, got, want)
			}
			if got := run(d, one); got != wantOne {
				t.Errorf("room %d: %s, want %s", room, got, wantOne)
			}
			if pool.Max() > 0 && pool.Used() > pool.Max() {
				t.Errorf("room %d: %d bytes used, bound %d", room, pool.Used(), pool.Max())
			}
		}
	}
}
