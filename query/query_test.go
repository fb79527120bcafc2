package query_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/decoy-mock/decoy"
	"github.com/decoy-mock/decoy/jsondoc"
	"github.com/decoy-mock/decoy/query"
)

// people is the document most filter cases run against. Element 4 is not an
// object, so every path is missing in it.
const people = `[
 {"id":0,"name":"Alice","age":30,"address":{"city":"Paris","geo":{"lat":48.85}},"tags":["red","blue"],"active":true,"score":null,"items":[{"sku":"A1"},{"sku":"B2"}]},
 {"id":1,"name":"bob","age":25.0,"address":{"city":"london"},"tags":["green"],"active":false,"score":7,"items":[{"sku":"C3"}]},
 {"id":2,"name":"\u00c9lodie","age":"30","address":{"city":"PARIS"},"tags":[],"active":"true","score":3e0,"items":[]},
 {"id":3,"name":"Dan","age":3e1,"address":null,"tags":"blue","nested":{"a":{"b":{"c":"deep"}}},"caf\u00e9":"yes"},
 "not an object",
 {"id":5,"name":"Eve","age":-1,"address":{"city":"Paris"},"tags":[["blue"]],"items":{"sku":"A1"},"name":"Eve2"}
]`

// run compiles rawQuery (an outer query string) and runs it over doc,
// returning the selected element indices or the error text.
func run(t *testing.T, doc, rawQuery string) ([]int32, int, string) {
	t.Helper()
	d, err := jsondoc.Parse([]byte(doc))
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	q, err := query.Compile(query.ParseParams(rawQuery))
	if err != nil {
		var de *decoy.Error
		if !errors.As(err, &de) || de.Code != decoy.EINVALID {
			t.Fatalf("error %v is not an EINVALID *decoy.Error", err)
		}
		return nil, 0, de.Message
	}
	r := q.Run(d)
	return r.Records, r.Total, ""
}

type selectCase struct {
	name  string
	query string // the raw outer query string
	want  []int32
}

func checkSelect(t *testing.T, doc string, cases []selectCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, _, errText := run(t, doc, tc.query)
			if errText != "" {
				t.Fatalf("query %q: unexpected error %q", tc.query, errText)
			}
			if !slices.Equal(got, tc.want) && !(len(got) == 0 && len(tc.want) == 0) {
				t.Errorf("query %q: got %v, want %v", tc.query, got, tc.want)
			}
		})
	}
}

type errorCase struct {
	name  string
	query string
	want  string
}

func checkErrors(t *testing.T, doc string, cases []errorCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, _, errText := run(t, doc, tc.query)
			if errText != tc.want {
				t.Errorf("query %q: got error %q (records %v), want %q", tc.query, errText, got, tc.want)
			}
		})
	}
}

// CONTRACT §1.2: how the query string and the filters value are decoded.
func TestQueryStringDecoding(t *testing.T) {
	checkSelect(t, people, []selectCase{
		{"encoded condition", "filters=name%3DAlice", []int32{0}},
		{"unencoded equals in value", "filters=name=Alice", []int32{0}},
		{"unencoded ampersand keeps only the first condition", "filters=name=Alice&age=25", []int32{0}},
		{"encoded ampersand joins conditions", "filters=address.city%3DParis%26age%3D30", []int32{0}},
		{"brackets and dollar encoded", "filters=name%5B%24eqi%5D%3Dalice", []int32{0}},
		{"plus is a space at the outer level", "filters=name%3DBob+Smith", nil},
		{"inner plus stays a plus", "filters=age%3D%2B30", nil},
		{"double encoding decoded once more", "filters=address.city%3DPa%2572is", []int32{0, 5}},
		{"invalid inner escape stays as written", "filters=name%3DA%zz", nil},
		{"semicolon is an ordinary character", "filters=name%3DAlice;limit=0", nil},
		{"first occurrence wins", "limit=1&limit=0", []int32{0}},
		{"empty first occurrence is absent", "limit=&limit=0", []int32{0, 1, 2, 3, 4, 5}},
		{"empty filters is absent", "filters=", []int32{0, 1, 2, 3, 4, 5}},
		{"empty parts of filters are skipped", "filters=name%3DAlice%26%26", []int32{0}},
		{"encoded parameter name", "%6Cimit=1", []int32{0}},
		{"unknown parameters are ignored", "foo=bar&Limit=0&page=2", []int32{0, 1, 2, 3, 4, 5}},
		{"invalid outer escape stays as written", "limit=1&x=%zz", []int32{0}},
	})
}

// CONTRACT §1.3: filter forms and operators.
func TestFilterOperators(t *testing.T) {
	checkSelect(t, people, []selectCase{
		{"implicit equality is case-sensitive", "filters=name%3Dalice", nil},
		{"$eq", "filters=name%5B%24eq%5D%3DAlice", []int32{0}},
		{"$eq is case-sensitive", "filters=name%5B%24eq%5D%3DALICE", nil},
		{"$eqi", "filters=name%5B%24eqi%5D%3DALICE", []int32{0}},
		{"$eqi folds non-ASCII", "filters=name%5B%24eqi%5D%3D%C3%A9LODIE", []int32{2}},
		{"$ne keeps missing and non-objects", "filters=name%5B%24ne%5D%3DAlice", []int32{1, 2, 3, 4, 5}},
		{"$nei", "filters=name%5B%24nei%5D%3DALICE", []int32{1, 2, 3, 4, 5}},
		{"and of conditions", "filters=address.city%5B%24eqi%5D%3Dparis%26id%5B%24ne%5D%3D0", []int32{2, 5}},
		{"same path twice", "filters=age%5B%24ne%5D%3D30%26age%5B%24ne%5D%3D25", []int32{4, 5}},
		{"empty value matches empty strings only", "filters=name%3D", nil},
		{"last duplicate key wins", "filters=name%3DEve2", []int32{5}},
	})
}

// CONTRACT §1.3: paths, array index and fan-out.
func TestFilterPaths(t *testing.T) {
	checkSelect(t, people, []selectCase{
		{"nested", "filters=address.city%3DParis", []int32{0, 5}},
		{"three levels", "filters=address.geo.lat%3D48.85", []int32{0}},
		{"deep", "filters=nested.a.b.c%3Ddeep", []int32{3}},
		{"through null", "filters=address.city%5B%24ne%5D%3DParis", []int32{1, 2, 3, 4}},
		{"fan-out over array elements", "filters=items.sku%3DA1", []int32{0, 5}},
		{"fan-out any element", "filters=items.sku%3DB2", []int32{0}},
		{"index selects one element", "filters=items.1.sku%3DB2", []int32{0}},
		{"index zero", "filters=items.0.sku%3DB2", nil},
		{"index out of range", "filters=items.9.sku%5B%24ne%5D%3Dx", []int32{0, 1, 2, 3, 4, 5}},
		{"fan-out negated", "filters=items.sku%5B%24ne%5D%3DA1", []int32{1, 2, 3, 4}},
		{"escaped key", "filters=caf%C3%A9%3Dyes", []int32{3}},
		{"path into a scalar is missing", "filters=name.first%5B%24ne%5D%3Dx", []int32{0, 1, 2, 3, 4, 5}},
	})
}

// CONTRACT §1.3: equality of reached values with the query text.
func TestFilterTypes(t *testing.T) {
	checkSelect(t, people, []selectCase{
		{"number equals integer text", "filters=age%3D30", []int32{0, 2, 3}},
		{"number equals decimal text", "filters=age%3D30.0", []int32{0, 3}},
		{"number equals exponent text", "filters=age%3D3e1", []int32{0, 3}},
		{"number equals upper exponent", "filters=age%3D3E%2B1", []int32{0, 3}},
		{"stored decimal equals integer text", "filters=age%3D25", []int32{1}},
		{"negative number", "filters=age%3D-1", []int32{5}},
		{"plus sign is not JSON", "filters=age%3D%2B30", nil},
		{"leading dot is not JSON", "filters=score%3D.7e1", nil},
		{"hex is not JSON", "filters=score%3D0x7", nil},
		{"NaN is not JSON", "filters=score%3DNaN", nil},
		{"true", "filters=active%3Dtrue", []int32{0, 2}},
		{"true is case-sensitive", "filters=active%3DTrue", nil},
		{"true under $eqi", "filters=active%5B%24eqi%5D%3DTRUE", []int32{0, 2}},
		{"false", "filters=active%3Dfalse", []int32{1}},
		{"null", "filters=score%3Dnull", []int32{0}},
		{"null under $eqi", "filters=score%5B%24eqi%5D%3DNULL", []int32{0}},
		{"missing is not null", "filters=score%5B%24ne%5D%3Dnull", []int32{1, 2, 3, 4, 5}},
		{"array holds a scalar", "filters=tags%3Dblue", []int32{0, 3}},
		{"array under $eqi", "filters=tags%5B%24eqi%5D%3DBLUE", []int32{0, 3}},
		{"array negated", "filters=tags%5B%24ne%5D%3Dblue", []int32{1, 2, 4, 5}},
		{"objects are never equal", "filters=address%3DParis", nil},
		{"objects are never equal to their text", "filters=address%3D%7B%22city%22%3A%22Paris%22%7D", nil},
	})
}

// CONTRACT §1.3: malformed conditions and unsupported operators.
func TestFilterErrors(t *testing.T) {
	checkErrors(t, people, []errorCase{
		{"greater-than", "filters=age%5B%24gt%5D%3D30", "Unsupported operator: $gt"},
		{"bracket notation for nesting", "filters=address%5Bcity%5D%3DParis", "Unsupported operator: city"},
		{"operator case matters", "filters=name%5B%24EQ%5D%3DAlice", "Unsupported operator: $EQ"},
		{"empty brackets", "filters=name%5B%5D%3DAlice", "Unsupported operator: "},
		{"no equals", "filters=name", "Invalid filter: name"},
		{"no equals, decoded", "filters=name%253DAlice", "Invalid filter: name=Alice"},
		{"empty path", "filters=%3DAlice", "Invalid filter: =Alice"},
		{"empty path with operator", "filters=%5B%24eq%5D%3D1", "Invalid filter: [$eq]=1"},
		{"empty segment", "filters=a..b%3D1", "Invalid filter: a..b=1"},
		{"leading dot", "filters=.a%3D1", "Invalid filter: .a=1"},
		{"trailing dot", "filters=a.%3D1", "Invalid filter: a.=1"},
		{"unclosed bracket", "filters=a%5B%24eq%3D1", "Invalid filter: a[$eq=1"},
		{"text after bracket", "filters=a%5B%24eq%5Dx%3D1", "Invalid filter: a[$eq]x=1"},
		{"two bracket pairs", "filters=a%5B%24eq%5D%5B%24ne%5D%3D1", "Invalid filter: a[$eq][$ne]=1"},
		{"nested brackets", "filters=a%5B%5B%24eq%5D%5D%3D1", "Invalid filter: a[[$eq]]=1"},
		{"first bad condition answers", "filters=a%3D1%26b%5B%24gt%5D%3D2%26c", "Unsupported operator: $gt"},
		{"filters before order_direction", "filters=x%5B%24lt%5D%3D1&order_direction=up", "Unsupported operator: $lt"},
	})
}

// CONTRACT §1.4: ordering.
func TestOrdering(t *testing.T) {
	const mixed = `[
 {"v":2},{"v":"b"},{"v":true},{"v":null},{},{"v":10},{"v":"a"},{"v":false},
 {"v":{"x":1}},{"v":[1]},{"v":1.5},{"v":"B"},{"v":"\u0061"},{"v":1.50},{"v":{}},"scalar"
]`
	checkSelect(t, mixed, []selectCase{
		{"ascending by type then value, stable", "order_by=v",
			[]int32{10, 13, 0, 5, 11, 6, 12, 1, 7, 2, 8, 14, 9, 3, 4, 15}},
		{"descending keeps null and missing last, stable", "order_by=v&order_direction=desc",
			[]int32{9, 8, 14, 2, 7, 1, 6, 12, 11, 5, 0, 10, 13, 3, 4, 15}},
		{"direction in any case", "order_by=v&order_direction=DeSc",
			[]int32{9, 8, 14, 2, 7, 1, 6, 12, 11, 5, 0, 10, 13, 3, 4, 15}},
		{"explicit asc", "order_by=v&order_direction=ASC",
			[]int32{10, 13, 0, 5, 11, 6, 12, 1, 7, 2, 8, 14, 9, 3, 4, 15}},
		{"direction alone has no effect", "order_direction=desc",
			[]int32{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}},
	})
	const nested = `[
 {"n":"c","a":{"b":"2024-03-01"},"l":[{"x":3}]},
 {"n":"a","a":{"b":"2023-12-31"},"l":[{"x":1}]},
 {"n":"b","a":{"b":"2024-01-15"},"l":[{"x":2},{"x":0}]},
 {"n":"d","a":{},"l":[]}
]`
	checkSelect(t, nested, []selectCase{
		{"nested path, dates as strings", "order_by=a.b", []int32{1, 2, 0, 3}},
		{"nested path descending", "order_by=a.b&order_direction=desc", []int32{0, 2, 1, 3}},
		{"index path", "order_by=l.0.x", []int32{1, 2, 0, 3}},
		{"fan-out path sorts as missing", "order_by=l.x", []int32{0, 1, 2, 3}},
		{"unknown path keeps the order", "order_by=nope", []int32{0, 1, 2, 3}},
		{"malformed path reaches nothing", "order_by=a..b", []int32{0, 1, 2, 3}},
	})
	const numbers = `[{"v":1e400},{"v":-1e400},{"v":12345678901234567890},{"v":12345678901234567891},{"v":0.1},{"v":-0},{"v":1e-400},{"v":0}]`
	checkSelect(t, numbers, []selectCase{
		{"exact numeric order beyond float64", "order_by=v", []int32{1, 5, 7, 6, 4, 2, 3, 0}},
	})
}

// CONTRACT §1.4: order_direction, offset and limit values.
func TestOffsetLimit(t *testing.T) {
	const doc = `[{"i":0},{"i":1},{"i":2},{"i":3},{"i":4}]`
	checkSelect(t, doc, []selectCase{
		{"limit", "limit=2", []int32{0, 1}},
		{"limit zero", "limit=0", nil},
		{"minus zero is zero", "limit=-0", nil},
		{"plus sign", "limit=%2B3", []int32{0, 1, 2}},
		{"leading zeros", "limit=002", []int32{0, 1}},
		{"limit above count", "limit=10", []int32{0, 1, 2, 3, 4}},
		{"too large means all", "limit=99999999999999999999999", []int32{0, 1, 2, 3, 4}},
		{"offset", "offset=3", []int32{3, 4}},
		{"offset and limit", "offset=1&limit=2", []int32{1, 2}},
		{"offset beyond", "offset=5", nil},
		{"huge offset", "offset=99999999999999999999999", nil},
		{"order then offset then limit", "order_by=i&order_direction=desc&offset=1&limit=2", []int32{3, 2}},
		{"filter before limit", "filters=i%5B%24ne%5D%3D0&limit=2", []int32{1, 2}},
	})
	checkErrors(t, doc, []errorCase{
		{"negative limit", "limit=-1", "Limit must be 0 or greater"},
		{"huge negative limit", "limit=-99999999999999999999999", "Limit must be 0 or greater"},
		{"word limit", "limit=abc", "Limit must be an integer"},
		{"fractional limit", "limit=1.5", "Limit must be an integer"},
		{"exponent limit", "limit=1e3", "Limit must be an integer"},
		{"sign only", "limit=-", "Limit must be an integer"},
		{"space", "limit=+1+", "Limit must be an integer"},
		{"negative offset", "offset=-2", "Offset must be 0 or greater"},
		{"word offset", "offset=x", "Offset must be an integer"},
		{"offset checked before limit", "offset=-1&limit=abc", "Offset must be 0 or greater"},
		{"bad direction", "order_by=i&order_direction=up", "order_direction must be asc or desc"},
		{"bad direction without order_by", "order_direction=descending", "order_direction must be asc or desc"},
		{"non-ASCII fold is not asc", "order_by=i&order_direction=a%C5%BFc", "order_direction must be asc or desc"},
		{"direction before offset", "order_direction=x&offset=-1", "order_direction must be asc or desc"},
		{"filters before all", "filters=a&order_direction=x&offset=-1&limit=-1", "Invalid filter: a"},
		{"too many conditions", "filters=" + strings.Repeat("i%3D1%26", query.MaxConditions) + "i%3D1", "Too many filter conditions: at most 32"},
		{"too many conditions, then a bad one", "filters=" + strings.Repeat("i%3D1%26", query.MaxConditions) + "bad", "Too many filter conditions: at most 32"},
	})
}

func TestTotalCountsFilteredRecords(t *testing.T) {
	_, total, _ := run(t, people, "filters=address.city%3DParis&limit=1&offset=1")
	if total != 2 {
		t.Errorf("total = %d, want 2 (after filtering, before offset and limit)", total)
	}
}

func TestProcessing(t *testing.T) {
	for _, tc := range []struct {
		query string
		want  bool
	}{
		{"", false},
		{"order_direction=desc", false},
		{"auth_token=x&foo=1", false},
		{"limit=", false},
		{"limit=5", true},
		{"offset=0", true},
		{"order_by=a", true},
		{"filters=a%3D1", true},
	} {
		q, err := query.Compile(query.ParseParams(tc.query))
		if err != nil {
			t.Fatal(err)
		}
		if q.Processing() != tc.want {
			t.Errorf("%q: Processing() = %v, want %v", tc.query, q.Processing(), tc.want)
		}
	}
}

func TestParseParams(t *testing.T) {
	for _, tc := range []struct {
		raw  string
		want query.Params
	}{
		{"auth_token=a%2Bb&auth_token=c", query.Params{AuthToken: "a+b"}},
		{"auth%5Ftoken=x+y", query.Params{AuthToken: "x y"}},
		{"order_by=a.b;c&order_direction=desc", query.Params{OrderBy: "a.b;c", OrderDirection: "desc"}},
		{"&&limit&offset=%", query.Params{Offset: "%"}},
		{"filters=a%3D1%26b%3D2", query.Params{Filters: "a=1&b=2"}},
	} {
		if got := query.ParseParams(tc.raw); got != tc.want {
			t.Errorf("ParseParams(%q) = %+v, want %+v", tc.raw, got, tc.want)
		}
	}
}

func TestRedact(t *testing.T) {
	for _, tc := range []struct{ raw, want string }{
		{"auth_token=secret&limit=1", "auth_token=REDACTED&limit=1"},
		{"limit=1&auth%5Ftoken=secret", "limit=1&auth%5Ftoken=REDACTED"},
		{"auth_token", "auth_token=REDACTED"},
		{"limit=1", "limit=1"},
		{"x=auth_token", "x=auth_token"},
		{"AUTH_TOKEN=secret", "AUTH_TOKEN=REDACTED"},
		{"Auth_Token=secret&limit=2", "Auth_Token=REDACTED&limit=2"},
		{"auth_token+=secret", "auth_token+=REDACTED"},
		{"x=1;auth_token=secret&y=2", "x=1;auth_token=REDACTED&y=2"},
		{"token=a&refresh_token=b&tokens=c", "token=REDACTED&refresh_token=REDACTED&tokens=REDACTED"},
		{"auth%5FTOKEN=secret", "auth%5FTOKEN=REDACTED"},
		{"/mock/0b0c;auth_token=secret", "/mock/0b0c;auth_token=REDACTED"},
		{"/mock/0b0c;auth_token=secret/x", "/mock/0b0c;auth_token=REDACTED/x"},
		{"/mock/0b0c", "/mock/0b0c"},
		{"/admin/v1/auth/token", "/admin/v1/auth/token"},
		{"/admin/v1/mocks/0b0c/token", "/admin/v1/mocks/0b0c/token"},
		{"/admin/v1/mocks/0b0c/token=x", "/admin/v1/mocks/0b0c/token=REDACTED"},
		{"filters=a%3D1&order_by=k", "filters=a%3D1&order_by=k"},
		{"filters=a%3D1&to%6Ben=secret", "filters=a%3D1&to%6Ben=REDACTED"},
		{"to%4Ben=secret&filters=a%3D1", "to%4Ben=REDACTED&filters=a%3D1"},
		{"auth_to%6ben=secret", "auth_to%6ben=REDACTED"},
		{"filters=status%5B%24eqi%5D%3Dactive&order_by=age&limit=10", "filters=status%5B%24eqi%5D%3Dactive&order_by=age&limit=10"},
		{"", ""},
	} {
		if got := query.Redact(tc.raw); got != tc.want {
			t.Errorf("Redact(%q) = %q, want %q", tc.raw, got, tc.want)
		}
	}
}

// MaxConditions conditions are fine; empty ones do not count.
func TestMaxConditions(t *testing.T) {
	raw := "filters=" + strings.Repeat("i%5B%24ne%5D%3D9%26%26", query.MaxConditions)
	if _, err := query.Compile(query.ParseParams(raw)); err != nil {
		t.Errorf("%d conditions: %v", query.MaxConditions, err)
	}
}
