package mergepatch_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/decoy-mock/decoy/mergepatch"
)

func TestApply(t *testing.T) {
	for _, tc := range []struct{ name, target, patch, want string }{
		// RFC 7396, appendix A, where both are objects.
		{"replace", `{"a":"b"}`, `{"a":"c"}`, `{"a":"c"}`},
		{"add", `{"a":"b"}`, `{"b":"c"}`, `{"a":"b","b":"c"}`},
		{"remove", `{"a":"b"}`, `{"a":null}`, `{}`},
		{"remove one of two", `{"a":"b","b":"c"}`, `{"a":null}`, `{"b":"c"}`},
		{"array replaced", `{"a":["b"]}`, `{"a":"c"}`, `{"a":"c"}`},
		{"by an array", `{"a":"c"}`, `{"a":["b"]}`, `{"a":["b"]}`},
		{"nested", `{"a":{"b":"c"}}`, `{"a":{"b":"d","c":null}}`, `{"a":{"b":"d"}}`},
		{"array of objects replaced", `{"a":[{"b":"c"}]}`, `{"a":[1]}`, `{"a":[1]}`},
		{"nested null in a new object", `{"e":null}`, `{"a":1}`, `{"e":null,"a":1}`},
		{"new object drops its nulls", `{}`, `{"a":{"bb":{"ccc":null}}}`, `{"a":{"bb":{}}}`},
		// Decoy's own: the target's text is kept where the patch leaves it.
		{"order and spelling kept", `{ "id" : 1, "price":30.0, "name":"caf\u00e9", "tags":[ "x" ] }`, `{"price":31.5}`,
			`{"id":1,"price":31.5,"name":"caf\u00e9","tags":[ "x" ]}`},
		{"new members last, in the patch's order", `{"b":1}`, `{"z":1,"a":2}`, `{"b":1,"z":1,"a":2}`},
		{"escaped key matches", `{"caf\u00e9":1}`, `{"café":2}`, `{"caf\u00e9":2}`},
		{"duplicate patch key: the last wins", `{"a":1}`, `{"a":2,"a":3}`, `{"a":3}`},
		{"duplicate target key patched once", `{"a":1,"b":0,"a":2}`, `{"a":9}`, `{"a":9,"b":0}`},
		{"empty patch", `{"a":1}`, `{}`, `{"a":1}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := mergepatch.Apply([]byte(tc.target), []byte(tc.patch))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("got %s, want %s", got, tc.want)
			}
		})
	}
	for _, bad := range [][2]string{{`[1]`, `{}`}, {`{}`, `[1]`}, {`1`, `{}`}, {`{}`, `null`}} {
		if _, err := mergepatch.Apply([]byte(bad[0]), []byte(bad[1])); err != mergepatch.ErrNotObject {
			t.Errorf("Apply(%s, %s): %v", bad[0], bad[1], err)
		}
	}
}

// reference is RFC 7396's algorithm over decoded values.
func reference(target, patch any) any {
	p, ok := patch.(map[string]any)
	if !ok {
		return patch
	}
	t, ok := target.(map[string]any)
	if !ok {
		t = map[string]any{}
	}
	for k, v := range p {
		if v == nil {
			delete(t, k)
			continue
		}
		t[k] = reference(t[k], v)
	}
	return t
}

func FuzzApply(f *testing.F) {
	f.Add(`{"a":1,"b":{"c":2}}`, `{"b":{"c":null,"d":[1]},"e":"x"}`)
	f.Add(`{"a":{"b":{"c":1}}}`, `{"a":{"b":null}}`)
	f.Add(`{"a":1,"a":2}`, `{"a":null}`)
	f.Fuzz(func(t *testing.T, target, patch string) {
		var tv, pv any
		if json.Unmarshal([]byte(target), &tv) != nil || json.Unmarshal([]byte(patch), &pv) != nil {
			return
		}
		_, tObj := tv.(map[string]any)
		_, pObj := pv.(map[string]any)
		got, err := mergepatch.Apply([]byte(target), []byte(patch))
		if !tObj || !pObj {
			if err == nil {
				t.Fatalf("Apply(%s, %s) = %s, want an error", target, patch, got)
			}
			return
		}
		if err != nil {
			t.Fatalf("Apply(%s, %s): %v", target, patch, err)
		}
		var gv any
		if err := json.Unmarshal(got, &gv); err != nil {
			t.Fatalf("Apply(%s, %s) = %s: not JSON: %v", target, patch, got, err)
		}
		if want := reference(tv, pv); !reflect.DeepEqual(gv, want) {
			t.Fatalf("Apply(%s, %s) = %s, want %v", target, patch, got, want)
		}
		// Patching again changes nothing (a merge patch is idempotent).
		again, err := mergepatch.Apply(got, []byte(patch))
		if err != nil || string(again) != string(got) {
			t.Fatalf("Apply twice: %s, then %s (%v)", got, again, err)
		}
	})
}
