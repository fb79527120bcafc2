package admin

import (
	"testing"

	"github.com/decoy-mock/decoy"
)

// parseBody says what is wrong with a body before what is asked for,
// naming fields as the body does (found by a review: a field of the wrong
// type itself was "each value" of it, an embedded struct's Go name came
// out, a type embedding itself overflowed the stack, and text after the
// object passed).
func TestParseBodyErrors(t *testing.T) {
	type inner struct {
		Upstream *string `json:"upstream"`
	}
	type rec struct {
		*rec
		A int `json:"a"`
	}
	var withMap struct {
		Name   string            `json:"name"`
		Limits map[string]*int64 `json:"limits"`
	}
	var embedding struct {
		inner
		Name string `json:"name"`
	}
	for _, tc := range []struct {
		v          any
		body, want string
	}{
		{&withMap, `{"limits":"x"}`, "limits must be an object; the body must be a JSON object with F"},
		{&withMap, `{"limits":{"max_mocks":"x"}}`, "Each value of limits must be an integer; the body must be a JSON object with F"},
		{&withMap, `{"name":7}`, "name must be a string; the body must be a JSON object with F"},
		{&embedding, `{"name":"inner","upstream":5}`, "upstream must be a string; the body must be a JSON object with F"},
		{&rec{rec: nil}, `{"a":"x"}`, "a must be an integer; the body must be a JSON object with F"},
		{&withMap, `{"nom":1}`, `Unknown field "nom"; the body must be a JSON object with F`},
		{&withMap, `{"name":"x"}]`, "Invalid JSON at line 1, column 13: unexpected ']' after the top-level value; the body must be a JSON object with F"},
		{&withMap, `{"name":"x"} {}`, "Invalid JSON at line 1, column 14: unexpected '{' after the top-level value; the body must be a JSON object with F"},
		{&withMap, `[]`, "The body must be a JSON object with F"},
	} {
		err := parseBody([]byte(tc.body), tc.v, "F")
		if got := decoy.ErrorMessage(err); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.body, got, tc.want)
		}
	}
	if err := parseBody([]byte(" {\"name\":\"x\"}\n "), &withMap, "F"); err != nil {
		t.Errorf("an object with spaces around: %v", err)
	}
}
