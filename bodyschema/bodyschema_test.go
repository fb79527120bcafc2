package bodyschema_test

import (
	"strings"
	"testing"

	"github.com/decoy-mock/decoy"
	"github.com/decoy-mock/decoy/bodyschema"
)

const book = `{"$ref":"#/components/schemas/Book","components":{"schemas":{"Book":{"type":"object","required":["isbn","title"],
"properties":{"isbn":{"type":"string"},"title":{"type":"string","minLength":1},"price":{"type":"number"},
"tags":{"type":"array","items":{"type":"string"}}}}}}}`

func TestCheck(t *testing.T) {
	s, err := bodyschema.Compile([]byte(book))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, body, want string }{
		{"valid", `{"isbn":"1","title":"A","price":3.5,"tags":["x"]}`, ""},
		{"missing", `{"isbn":"1"}`, "Invalid body: /: missing property 'title'"},
		{"wrong type", `{"isbn":"1","title":"A","price":"cheap"}`, "Invalid body: /price: got string, want number"},
		{"nested", `{"isbn":"1","title":"A","tags":["x",2]}`, "Invalid body: /tags/1: got number, want string"},
		{"constraint", `{"isbn":"1","title":""}`, "Invalid body: /title: minLength: got 0, want 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := s.Check([]byte(tc.body))
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("%v", err)
			case tc.want != "" && (err == nil || decoy.ErrorMessage(err) != tc.want || decoy.ErrorCode(err) != decoy.EINVALID):
				t.Errorf("got %v, want %s", err, tc.want)
			}
		})
	}
}

func TestCompileRefusesOutside(t *testing.T) {
	for _, doc := range []string{
		`{"$ref":"http://127.0.0.1:1/schema.json"}`,
		`{"$ref":"file:///etc/passwd"}`,
		`{"type":"object","properties":{"a":{"$ref":"other.json#/x"}}}`,
	} {
		if _, err := bodyschema.Compile([]byte(doc)); err == nil {
			t.Errorf("%s compiled", doc)
		}
	}
	if _, err := bodyschema.Compile([]byte(`not json`)); err == nil || !strings.Contains(err.Error(), "not JSON") {
		t.Errorf("not JSON: %v", err)
	}
}
