package jsondoc_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/decoy-mock/decoy/jsondoc"
)

// memberTextByMaps is MemberText as encoding/json answers it: each object
// decoded into a map of raw values.
func memberTextByMaps(obj []byte, path []string) ([]byte, bool) {
	cur := json.RawMessage(obj)
	for _, seg := range path {
		var m map[string]json.RawMessage
		if json.Unmarshal(cur, &m) != nil {
			return nil, false
		}
		v, ok := m[seg]
		if !ok {
			return nil, false
		}
		cur = v
	}
	return bytes.TrimSpace(cur), true
}

func TestMemberText(t *testing.T) {
	for _, tc := range []struct {
		obj  string
		path string
		want string // "-": none
	}{
		{`{"id":1,"name":"a"}`, "id", `1`},
		{` { "id" : "x\"y" , "n" : 2 } `, "id", `"x\"y"`},
		{`{"a":{"b":[1,{"c":"}"}]},"d":null}`, "a.b", `[1,{"c":"}"}]`},
		{`{"a":{"b":{"c":true}}}`, "a.b.c", `true`},
		{`{"a":1,"a":2}`, "a", `2`},
		{`{"\u0069d":7}`, "id", `7`},
		{`{"caf\u00e9":1}`, "café", `1`},
		{`{"a":"b"}`, "b", "-"},
		{`{}`, "a", "-"},
		{`{"a":1}`, "a.b", "-"},
		{`{"a":null}`, "a.b", "-"},
		{`{"a":[{"b":1}]}`, "a.b", "-"},
		// Not JSON objects: none, and no panic.
		{`[1]`, "a", "-"},
		{`{"a":1`, "a", "-"},
		{`{"a"`, "a", "-"},
		{`{"a":"\u12"}`, "a", `"\u12"`},
		{`{"\u12":1}`, "a", "-"},
		{`{"a" 1}`, "a", "-"},
		{``, "a", "-"},
	} {
		got, ok := jsondoc.MemberText([]byte(tc.obj), strings.Split(tc.path, "."))
		if !ok && tc.want != "-" || ok && string(got) != tc.want {
			t.Errorf("MemberText(%s, %s) = %s, %v; want %s", tc.obj, tc.path, got, ok, tc.want)
		}
	}
}

func TestAppendMembers(t *testing.T) {
	obj := []byte(` { "a" : 1 ,"b\u0063":{"x":[1,2]}, "d":"s,}" } `)
	var keys []byte
	ms, ok := jsondoc.AppendMembers(nil, &keys, obj)
	if !ok || len(ms) != 3 {
		t.Fatalf("AppendMembers: %d members, %v", len(ms), ok)
	}
	for i, want := range [][3]string{{`"a"`, "a", "1"}, {`"b\u0063"`, "bc", `{"x":[1,2]}`}, {`"d"`, "d", `"s,}"`}} {
		m := ms[i]
		if string(m.RawKey) != want[0] || string(m.Key) != want[1] || string(m.Value) != want[2] {
			t.Errorf("member %d: %s %s %s, want %v", i, m.RawKey, m.Key, m.Value, want)
		}
	}
	for _, bad := range []string{`[]`, `{"a":}`, `{"a":1,}`, `{"a":1 "b":2}`, `{a:1}`, `{"a":1`} {
		if _, ok := jsondoc.AppendMembers(nil, nil, []byte(bad)); ok {
			t.Errorf("AppendMembers(%s): ok", bad)
		}
	}
}

// MemberText answers what encoding/json's maps answer, over any object of
// valid UTF-8 (encoding/json reads other bytes of a key as U+FFFD).
func FuzzMemberText(f *testing.F) {
	f.Add(`{"id":1,"a":{"b":[1,2]}}`, "a.b")
	f.Add(`{"\u0069d":"x","id":2}`, "id")
	f.Add(`{"a":{"a":{"a":null}}}`, "a.a.a")
	f.Fuzz(func(t *testing.T, obj, path string) {
		if !json.Valid([]byte(obj)) || !utf8.ValidString(obj) || !utf8.ValidString(path) {
			return
		}
		segs := strings.Split(path, ".")
		got, ok := jsondoc.MemberText([]byte(obj), segs)
		want, wantOK := memberTextByMaps([]byte(obj), segs)
		if ok != wantOK || ok && !bytes.Equal(got, want) {
			t.Fatalf("MemberText(%s, %q) = %s, %v; encoding/json: %s, %v", obj, path, got, ok, want, wantOK)
		}
	})
}
