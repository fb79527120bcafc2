package query_test

import (
	"strings"
	"testing"

	"github.com/decoy-mock/decoy/budget"
	"github.com/decoy-mock/decoy/jsondoc"
	"github.com/decoy-mock/decoy/query"
)

func TestFindRecord(t *testing.T) {
	data := `[{"id":1},{"id":"2"},{"id":3.0},{"id":"a7"},{"id":"\u00e9"},{"id":null},{"id":true},{"id":[8,9]},` +
		`{"id":{"x":1}},{"meta":{"id":"m"}},{"id":"a7","second":true},{"名前":"太郎"},{"id":"A7"}]`
	tests := []struct {
		field, key string
		want       int // -1: none
	}{
		{"id", "1", 0},
		{"id", `"1"`, 0},
		{"id", "2", 1},
		{"id", `"2"`, 1},
		{"id", "3", 2},
		{"id", "3e0", 2},
		{"id", `"a7"`, 3},
		{"id", `"A7"`, 12},
		{"id", `"é"`, 4},
		{"id", `"\u00e9"`, 4},
		{"id", "null", 5},
		{"id", "true", 6},
		{"id", "9", 7},
		{"meta.id", `"m"`, 9},
		{"名前", `"太郎"`, 11},
		{"id", "4", -1},
		{"id", `{"x":1}`, -1},
		{"id", `[8,9]`, -1},
		{"id", ``, -1},
		{"id", `nope`, -1},
		{"id", ` 1 `, 0},
		{"", "1", -1},
	}
	for _, indexed := range []bool{false, true} {
		doc, err := jsondoc.Parse([]byte(data))
		if err != nil {
			t.Fatal(err)
		}
		if !indexed {
			set, _ := budget.NewPool(1).NewSet(1, func() {})
			doc.SetStructures(set) // no room: nothing kept, the records scanned
		}
		for _, tt := range tests {
			var field []string
			if tt.field != "" {
				field = strings.Split(tt.field, ".")
			}
			i, ok := query.FindRecord(doc, field, []byte(tt.key))
			if !ok {
				i = -1
			}
			if i != tt.want {
				t.Errorf("indexed %v: FindRecord(%s, %s) = %d, want %d", indexed, tt.field, tt.key, i, tt.want)
			}
		}
	}
}

func TestNextIntID(t *testing.T) {
	tests := []struct {
		data  string
		field string
		next  int64
		ok    bool
	}{
		{`[]`, "id", 1, true},
		{`[{"id":1},{"id":7},{"id":3}]`, "id", 8, true},
		{`[{"id":-5}]`, "id", -4, true},
		{`[{"id":7.0},{"id":2e1}]`, "id", 21, true},
		{`[{"id":1},{"id":"2"}]`, "id", 0, false},
		{`[{"id":1},{"x":2}]`, "id", 0, false},
		{`[{"id":1.5}]`, "id", 0, false},
		{`[{"id":[1]}]`, "id", 0, false},
		{`[{"id":1e300}]`, "id", 0, false},
		{`[{"k":{"n":4}},{"k":{"n":2}}]`, "k.n", 5, true},
	}
	for _, tt := range tests {
		doc, err := jsondoc.Parse([]byte(tt.data))
		if err != nil {
			t.Fatal(err)
		}
		for range 2 { // worked out, then kept
			next, ok := query.NextIntID(doc, strings.Split(tt.field, "."))
			if next != tt.next || ok != tt.ok {
				t.Errorf("NextIntID(%s) = %d, %v; want %d, %v", tt.data, next, ok, tt.next, tt.ok)
			}
		}
	}
}
