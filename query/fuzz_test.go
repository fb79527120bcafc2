package query_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/decoy-mock/decoy"
	"github.com/decoy-mock/decoy/budget"
	"github.com/decoy-mock/decoy/jsondoc"
	"github.com/decoy-mock/decoy/query"
)

var seedQueries = []string{
	"filters=name%3DAlice", "filters=a.b%5B%24eqi%5D%3Dx%26c%5B%24ne%5D%3D1", "filters=a%5B%24gt%5D%3D1",
	"filters=items.sku%3DA1&order_by=age&order_direction=desc&offset=1&limit=2", "order_by=v", "limit=-1",
	"filters=a..b%3D1", "filters=a%5B%24eq", "offset=99999999999999999999", "order_direction=DESC&order_by=x.0.y",
	"filters=tags%3Dblue%26tags%5B%24nei%5D%3DRED", "filters=%25zz%3D%2B",
	"order_by=name", "order_by=name&order_direction=desc", "order_by=address.city&order_direction=desc",
	"order_by=age", "order_by=age&order_direction=desc&limit=3", "order_by=score", "order_by=tags",
	"order_by=items.0.sku", "order_by=items.sku", "filters=age%3D30", "filters=age%3D3e1%26active%5B%24ne%5D%3Dtrue",
	"filters=score%3Dnull", "filters=score%5B%24ne%5D%3Dnull&order_by=id&order_direction=desc",
	"filters=name%5B%24eqi%5D%3D%C3%A9LODIE", "filters=address.geo.lat%3D48.85", "filters=items.1.sku%3DB2",
	"filters=nested.a.b.c%3Ddeep", "filters=address%3DParis", "filters=caf%C3%A9%3Dyes", "offset=2&limit=2&order_by=name",
}

// FuzzCompile: the parameter and filter parser never panics, and every
// refusal is an EINVALID error with one of the contract's texts.
func FuzzCompile(f *testing.F) {
	for _, q := range seedQueries {
		f.Add(q)
	}
	prefixes := []string{"Unsupported operator: ", "Invalid filter: ", "order_direction must be asc or desc",
		"Limit must be ", "Offset must be ", "Too many filter conditions: "}
	f.Fuzz(func(t *testing.T, raw string) {
		q, err := query.Compile(query.ParseParams(raw))
		if err != nil {
			var de *decoy.Error
			if !errors.As(err, &de) || de.Code != decoy.EINVALID {
				t.Fatalf("%q: error %v is not EINVALID", raw, err)
			}
			for _, p := range prefixes {
				if strings.HasPrefix(de.Message, p) {
					return
				}
			}
			t.Fatalf("%q: unexpected error text %q", raw, de.Message)
		}
		for _, c := range q.Filters {
			if len(c.Path) == 0 || slices.Contains(c.Path, "") {
				t.Fatalf("%q: accepted a path with an empty segment: %q", raw, c.Path)
			}
		}
		if q.Offset < 0 || q.Limit < -1 {
			t.Fatalf("%q: offset %d limit %d", raw, q.Offset, q.Limit)
		}
	})
}

// FuzzRunMatchesReference runs queries over arbitrary JSON arrays and checks
// the engine against a plain reference evaluator written on encoding/json.
func FuzzRunMatchesReference(f *testing.F) {
	for _, q := range seedQueries {
		f.Add([]byte(people), q)
	}
	f.Add([]byte(`[{"v":2},{"v":"b"},{"v":true},{"v":null},{},{"v":10},{"v":"a"},{"v":false},{"v":{"x":1}},{"v":[1]},{"v":1.5}]`), "order_by=v&order_direction=desc")
	f.Add([]byte(`[{"a":[{"b":1},{"b":[2,"2"]}]},{"a":{"b":"1"}},[1],{"a":[]}]`), "filters=a.b%3D2")
	f.Add([]byte(`[{"d":"2024-03-01"},{"d":"2023-12-31"},{"d":"caf\u00e9"},{"d":"cafe"},{"d":"Zed"},{"d":"\u00e9t\u00e9"}]`), "order_by=d")
	f.Add([]byte(`[{"n":12345678901234567890},{"n":12345678901234567891},{"n":-0.5},{"n":1e-7},{"n":"7"},{"n":7.0}]`), "order_by=n&order_direction=desc")
	f.Fuzz(func(t *testing.T, doc []byte, raw string) {
		if !utf8.Valid(doc) || !utf8.ValidString(raw) {
			return // encoding/json would replace invalid bytes; the engine keeps them
		}
		d, err := jsondoc.Parse(doc)
		if err != nil || !d.IsArray() {
			return
		}
		q, err := query.Compile(query.ParseParams(raw))
		if err != nil {
			return
		}
		var elems []any
		dec := json.NewDecoder(bytes.NewReader(doc))
		dec.UseNumber()
		if err := dec.Decode(&elems); err != nil {
			t.Fatalf("encoding/json refuses what Parse took: %v", err)
		}
		want, wantTotal, ok := reference(elems, q)
		if !ok {
			return // numbers beyond what the reference can compare cheaply
		}
		got := q.Run(d)
		if got.Total != wantTotal || !slices.Equal(got.Records, want) {
			t.Fatalf("doc %s\nquery %q\n got %v (total %d)\nwant %v (total %d)", doc, raw, got.Records, got.Total, want, wantTotal)
		}
		// The same without a structure kept: scans, a heap, a sort.
		bare, _ := jsondoc.Parse(doc)
		bare.SetStructures(noRoom(t))
		if got := q.Run(bare); got.Total != wantTotal || !slices.Equal(got.Records, want) {
			t.Fatalf("nothing kept: doc %s\nquery %q\n got %v (total %d)\nwant %v (total %d)", doc, raw, got.Records, got.Total, want, wantTotal)
		}
	})
}

// noRoom returns a registry that keeps nothing: its pool has no room for
// what it would keep.
func noRoom(t testing.TB) *budget.Set {
	t.Helper()
	set, ok := budget.NewPool(1).NewSet(2, nil)
	if ok {
		t.Fatal("a set of 2 bytes fit a pool of 1")
	}
	return set
}

// tight returns a registry for d with room for a few of the structures
// queries build over it, not all.
func tight(t testing.TB, d *jsondoc.Document, room int64) (*budget.Pool, *budget.Set) {
	t.Helper()
	pool := budget.NewPool(d.MemoryBytes() + room)
	set, ok := pool.NewSet(d.MemoryBytes(), nil)
	if !ok {
		t.Fatal("no room for the document")
	}
	return pool, set
}

// reference evaluates q over decoded elements the slow, obvious way.
func reference(elems []any, q *query.Query) ([]int32, int, bool) {
	ok := true
	var idx []int32
	for i, e := range elems {
		keep := true
		for _, c := range q.Filters {
			eq := false
			for _, v := range refResolve(e, c.Path, true) {
				if refEqual(v, c.Value, c.Op == query.OpEqi || c.Op == query.OpNei, true, &ok) {
					eq = true
				}
			}
			if neg := c.Op == query.OpNe || c.Op == query.OpNei; eq == neg {
				keep = false
			}
		}
		if keep {
			idx = append(idx, int32(i))
		}
	}
	total := len(idx)
	if q.OrderBy != nil {
		key := func(i int32) (int, any) {
			vs := refResolve(elems[i], q.OrderBy, false)
			if len(vs) != 1 || vs[0] == errFanned {
				return 7, nil
			}
			return refRank(vs[0]), vs[0]
		}
		slices.SortStableFunc(idx, func(a, b int32) int {
			ra, va := key(a)
			rb, vb := key(b)
			if ra != rb {
				if q.Desc && ra < 6 && rb < 6 {
					return rb - ra
				}
				return ra - rb
			}
			c := 0
			switch ra {
			case 0:
				x, okx := refRat(va.(json.Number))
				y, oky := refRat(vb.(json.Number))
				if !okx || !oky {
					ok = false
					return 0
				}
				c = x.Cmp(y)
			case 1:
				c = strings.Compare(va.(string), vb.(string))
			}
			if q.Desc {
				c = -c
			}
			return c
		})
	}
	if q.Offset >= int64(len(idx)) {
		idx = nil
	} else {
		idx = idx[q.Offset:]
	}
	if q.Limit >= 0 && q.Limit < int64(len(idx)) {
		idx = idx[:q.Limit]
	}
	return idx, total, ok
}

var errFanned = struct{ fanned bool }{true}

// refResolve returns the values path reaches in v. With fan set, a
// non-numeric segment on an array applies to each element; without it, such
// a path reaches a marker that sorts as missing.
func refResolve(v any, path []string, fan bool) []any {
	if _, isObj := v.(map[string]any); !isObj {
		return nil
	}
	var out []any
	fanned := false
	var walk func(v any, path []string)
	walk = func(v any, path []string) {
		if len(path) == 0 {
			out = append(out, v)
			return
		}
		switch x := v.(type) {
		case map[string]any:
			if m, ok := x[path[0]]; ok {
				walk(m, path[1:])
			}
		case []any:
			if isIndex(path[0]) {
				n, ok := new(big.Int).SetString(path[0], 10)
				if ok && n.IsInt64() && n.Int64() < int64(len(x)) {
					walk(x[n.Int64()], path[1:])
				}
				return
			}
			fanned = true
			for _, e := range x {
				walk(e, path)
			}
		}
	}
	walk(v, path)
	if fanned && !fan {
		return []any{errFanned}
	}
	return out
}

func isIndex(s string) bool {
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return s != ""
}

func refEqual(v any, text string, fold, top bool, ok *bool) bool {
	eq := func(a, b string) bool {
		if fold {
			return strings.EqualFold(a, b)
		}
		return a == b
	}
	switch x := v.(type) {
	case string:
		return eq(x, text)
	case json.Number:
		if !json.Valid([]byte(text)) || text == "" || (text[0] != '-' && (text[0] < '0' || text[0] > '9')) || strings.ContainsAny(text, " \t\r\n") {
			return false
		}
		a, okA := refRat(x)
		b, okB := refRat(json.Number(text))
		if !okA || !okB {
			*ok = false
			return false
		}
		return a.Cmp(b) == 0
	case bool:
		if x {
			return eq("true", text)
		}
		return eq("false", text)
	case nil:
		return eq("null", text)
	case []any:
		if !top {
			return false
		}
		for _, e := range x {
			if refEqual(e, text, fold, false, ok) {
				return true
			}
		}
	}
	return false
}

func refRank(v any) int {
	switch x := v.(type) {
	case json.Number:
		return 0
	case string:
		return 1
	case bool:
		if x {
			return 3
		}
		return 2
	case map[string]any:
		return 4
	case []any:
		return 5
	}
	return 6 // null
}

// refRat parses a JSON number exactly; huge exponents are refused so that the
// reference stays fast.
func refRat(n json.Number) (*big.Rat, bool) {
	s := string(n)
	if i := strings.IndexAny(s, "eE"); i >= 0 && len(s)-i > 5 {
		return nil, false
	}
	r, ok := new(big.Rat).SetString(s)
	return r, ok
}

// The engine agrees with the reference on documents large enough for every
// path of Run: one condition, several, negations only, few and many matches
// under an order, offsets and limits past the end.
func TestRunMatchesReferenceOnLargeDocuments(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	values := []string{`1`, `1.0`, `2`, `"1"`, `"a"`, `"A"`, `"ſ"`, `"S"`, `"s"`, `true`, `false`, `null`, `[1,"a"]`, `{"x":1}`, `"K"`, `"\u212a"`}
	pick := func() string { return values[rng.IntN(len(values))] }
	params := []string{"v", "w", "v.x", "v.0"}
	ops := []string{"", "%5B%24eq%5D", "%5B%24eqi%5D", "%5B%24ne%5D", "%5B%24nei%5D"}
	rawValues := []string{"1", "a", "A", "s", "S", "true", "TRUE", "null", "k", "x", "2"}
	for round := range 300 {
		n := 50 + rng.IntN(400)
		var b strings.Builder
		b.WriteByte('[')
		for i := range n {
			if i > 0 {
				b.WriteByte(',')
			}
			switch rng.IntN(12) {
			case 0:
				b.WriteString(`7`) // not an object: every path is missing
			case 1:
				b.WriteString(`{}`)
			default:
				fmt.Fprintf(&b, `{"v":%s,"w":%s}`, pick(), pick())
			}
		}
		b.WriteByte(']')
		doc := []byte(b.String())
		d, err := jsondoc.Parse(doc)
		if err != nil {
			t.Fatal(err)
		}
		// The same document with no structure kept, and with room for
		// a few: a query that finds its structures missing does without.
		bare, _ := jsondoc.Parse(doc)
		bare.SetStructures(noRoom(t))
		few, _ := jsondoc.Parse(doc)
		pool, set := tight(t, few, int64(8*n))
		few.SetStructures(set)
		var elems []any
		dec := json.NewDecoder(bytes.NewReader(doc))
		dec.UseNumber()
		if err := dec.Decode(&elems); err != nil {
			t.Fatal(err)
		}
		for range 20 {
			var conds []string
			for range rng.IntN(4) {
				conds = append(conds, params[rng.IntN(len(params))]+ops[rng.IntN(len(ops))]+"%3D"+rawValues[rng.IntN(len(rawValues))])
			}
			raw := "filters=" + strings.Join(conds, "%26")
			if rng.IntN(3) > 0 {
				raw += "&order_by=" + params[rng.IntN(len(params))]
				if rng.IntN(2) == 0 {
					raw += "&order_direction=desc"
				}
			}
			if rng.IntN(2) == 0 {
				raw += fmt.Sprintf("&offset=%d", rng.IntN(n+10))
			}
			if rng.IntN(2) == 0 {
				raw += fmt.Sprintf("&limit=%d", rng.IntN(n/2+2))
			}
			q, err := query.Compile(query.ParseParams(raw))
			if err != nil {
				t.Fatalf("%s: %v", raw, err)
			}
			want, wantTotal, _ := reference(elems, q)
			docs := []*jsondoc.Document{d}
			if round%3 == 0 { // a third of the rounds are enough for these
				docs = append(docs, bare, few)
			}
			for _, d := range docs {
				got := q.Run(d)
				if got.Total != wantTotal || !slices.Equal(got.Records, want) {
					t.Fatalf("round %d, %d records, query %q\n got %v (total %d)\nwant %v (total %d)", round, n, raw, got.Records, got.Total, want, wantTotal)
				}
			}
			if pool.Used() > pool.Max() {
				t.Fatalf("round %d: %d bytes kept, bound %d", round, pool.Used(), pool.Max())
			}
		}
	}
}
