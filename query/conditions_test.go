package query_test

import (
	"bytes"
	"encoding/json"
	"slices"
	"testing"
	"unicode/utf8"

	"github.com/decoy-mock/decoy"
	"github.com/decoy-mock/decoy/jsondoc"
	"github.com/decoy-mock/decoy/query"
)

// TestConditionsHold: conditions asked of one record hold exactly as the
// filters of the same text keep it (§1.3), for every operator and kind of
// value, a missing path included.
func TestConditionsHold(t *testing.T) {
	const doc = `[{"method":"GET","s":"Paris","n":30,"t":true,"z":null,"tags":["red","blue"],
		"o":{"a":{"b":"deep"}},"items":[{"sku":"A1"},{"sku":"B2"}],"esc":"caf\u00e9","empty":""}]`
	d, err := jsondoc.Parse([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		when string
		want bool
	}{
		{"", true},
		{"method=GET", true},
		{"method=get", false},
		{"method[$eqi]=get", true},
		{"method[$ne]=GET", false},
		{"method[$nei]=get", false},
		{"method[$nei]=post", true},
		{"s=Paris&n=30", true},
		{"s=Paris&n=31", false},
		{"n=3e1", true},
		{"n=30.0", true},
		{"n=%2B30", false},
		{"t=true", true},
		{"t[$eqi]=TRUE", true},
		{"z=null", true},
		{"tags=blue", true},
		{"tags[$ne]=blue", false},
		{"tags[$ne]=green", true},
		{"o.a.b=deep", true},
		{"o=deep", false},
		{"items.sku=B2", true},
		{"items.1.sku=A1", false},
		{"esc=café", true},
		{"esc[$eqi]=CAFÉ", true},
		{"empty=", true},
		{"missing=x", false},
		{"missing[$ne]=x", true},
		{"missing[$nei]=x", true},
		{"missing=", false},
		{"s=a%26b", false},
	}
	for _, tc := range cases {
		cs, err := query.ParseConditions(tc.when)
		if err != nil {
			t.Fatalf("%q: %v", tc.when, err)
		}
		if got := cs.Holds(d, 0, nil); got != tc.want {
			t.Errorf("%q holds: %v, want %v", tc.when, got, tc.want)
		}
		q, err := query.Compile(query.Params{Filters: tc.when})
		if err != nil {
			t.Fatal(err)
		}
		if kept := q.Run(d).Total == 1; kept != tc.want {
			t.Errorf("%q: the filters keep the record: %v, the conditions hold: %v", tc.when, kept, tc.want)
		}
	}
}

func TestParseConditionsErrors(t *testing.T) {
	for when, msg := range map[string]string{
		"a[$gt]=1":  "Unsupported operator: $gt",
		"a[city]=1": "Unsupported operator: city",
		"a":         "Invalid filter: a",
		"a..b=1":    "Invalid filter: a..b=1",
		"a[$eq=1":   "Invalid filter: a[$eq=1",
		"=1":        "Invalid filter: =1",
	} {
		_, err := query.ParseConditions(when)
		if decoy.ErrorCode(err) != decoy.EINVALID || decoy.ErrorMessage(err) != msg {
			t.Errorf("%q: %v, want %q", when, err, msg)
		}
	}
}

// FuzzConditionsMatchReference asks conditions of each record of arbitrary
// JSON arrays, one at a time, and checks the answer against the plain
// reference evaluator of the filters (reference).
func FuzzConditionsMatchReference(f *testing.F) {
	f.Add([]byte(people), "name=Alice&age[$ne]=30")
	f.Add([]byte(`[{"a":[{"b":1},{"b":[2,"2"]}]},{"a":{"b":"1"}},[1],{"a":[]}]`), "a.b=2")
	f.Add([]byte(`[{"header":{"x-mode":"slow"},"method":"GET"},{"body":{"n":[1,2]}}]`), "header.x-mode[$eqi]=SLOW&method=GET")
	f.Add([]byte(`[{"n":12345678901234567890},{"n":-0.5},{"n":"7"},{"n":7.0}]`), "n=7")
	f.Fuzz(func(t *testing.T, doc []byte, when string) {
		if !utf8.Valid(doc) || !utf8.ValidString(when) {
			return // encoding/json would replace invalid bytes; the engine keeps them
		}
		d, err := jsondoc.Parse(doc)
		if err != nil || !d.IsArray() {
			return
		}
		cs, err := query.ParseConditions(when)
		q, qerr := query.Compile(query.Params{Filters: when})
		if (err == nil) != (qerr == nil) {
			t.Fatalf("%q: conditions %v, filters %v", when, err, qerr)
		}
		if err != nil {
			return
		}
		var elems []any
		dec := json.NewDecoder(bytes.NewReader(doc))
		dec.UseNumber()
		if err := dec.Decode(&elems); err != nil {
			t.Fatalf("encoding/json refuses what Parse took: %v", err)
		}
		want, _, ok := reference(elems, q)
		if !ok {
			return
		}
		var scratch query.Scratch
		for i := range d.Len() {
			if got := cs.Holds(d, i, &scratch); got != slices.Contains(want, int32(i)) {
				t.Fatalf("doc %s\nwhen %q\nrecord %d: holds %v, the reference keeps %v", doc, when, i, got, want)
			}
		}
	})
}
