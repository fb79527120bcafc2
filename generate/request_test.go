package generate_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/decoy-mock/decoy"
	"github.com/decoy-mock/decoy/generate"
)

// request is a request as a rule's template reads it: JSON texts by path.
type request map[string]string

func (r request) Lookup(path []string) ([]byte, bool) {
	v, ok := r[strings.Join(path, ".")]
	return []byte(v), ok
}

// TestRequestTemplate: a rule's template reads the request it answers,
// with the value's own JSON type where an expression is the whole string
// and as text within text; what the request lacks is null, or nothing.
func TestRequestTemplate(t *testing.T) {
	req := request{
		"method":        `"GET"`,
		"path.id":       `"42"`,
		"header.x-user": `"bob \"the\" builder"`,
		"body.n":        `12.50`,
		"body.o":        `{"a":[1,"x"]}`,
		"body.bad":      "\"caf\xff\"",
	}
	src := `{"id":"{{ request.path.id }}","who":"user {{request.header.x-user}} via {{ request.method }}",
		"n":"{{ request.body.n }}","o":"{{ request.body.o }}","in":"o={{ request.body.o }}",
		"none":"{{ request.query.page }}","in-none":"[{{ request.query.page }}]","bad":"{{ request.body.bad }}",
		"list":{"$repeat":2,"$item":"{{ request.path.id }}-{{ index }}"}}`
	tp, err := generate.ParseRequestTemplate([]byte(src), generate.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	var reads []string
	for _, r := range tp.RequestReads() {
		reads = append(reads, strings.Join(r, "."))
	}
	want := []string{"path.id", "header.x-user", "method", "body.n", "body.o", "body.o", "query.page", "query.page", "body.bad", "path.id"}
	if !slices.Equal(reads, want) {
		t.Errorf("reads %q, want %q", reads, want)
	}
	out, err := tp.RunRequest(1, generate.Limits{MaxBytes: 1 << 20}, req)
	if err != nil {
		t.Fatal(err)
	}
	const wantOut = `{"id":"42","who":"user bob \"the\" builder via GET","n":12.50,"o":{"a":[1,"x"]},"in":"o={\"a\":[1,\"x\"]}",` +
		`"none":null,"in-none":"[]","bad":"caf` + "\ufffd" + `","list":["42-0","42-1"]}`
	if string(out) != wantOut || !json.Valid(out) {
		t.Errorf("output\n%s\nwant\n%s", out, wantOut)
	}
	// Without a request, as a preview has none: nulls and nothing.
	out, err = tp.RunRequest(1, generate.Limits{}, nil)
	if err != nil || !json.Valid(out) || !strings.HasPrefix(string(out), `{"id":null,"who":"user  via ",`) {
		t.Errorf("without a request: %s, %v", out, err)
	}
}

func TestRequestTemplateErrors(t *testing.T) {
	for src, msg := range map[string]string{
		`{"a":"{{ request.path.id }}"}`: `$.a: request is only known to the template of a rule, which answers a request`,
	} {
		_, err := generate.ParseTemplate([]byte(src), generate.Limits{})
		if decoy.ErrorCode(err) != decoy.EINVALID || decoy.ErrorMessage(err) != msg {
			t.Errorf("ParseTemplate(%s): %v, want %q", src, err, msg)
		}
	}
	for src, msg := range map[string]string{
		`"{{ request }}"`:                 `$: request is read as request.<path>: request.path.id, request.header.x-user`,
		`"{{ request.path..id }}"`:        `$: request.path..id: a path has no empty segment`,
		`"{{ request.path.id. }}"`:        `$: request.path.id.: a path has no empty segment`,
		`"{{ upper request.path.id }}"`:   `$: request.path.id is read alone, without a function or arguments`,
		`"{{ name request.path.id }}"`:    `$: request.path.id is read alone, without a function or arguments`,
		`"{{ request.path.id 1 }}"`:       `$: request.path.id is read alone, without a function or arguments`,
		`"{{ request.path.id name }}"`:    `$: request.path.id is read alone, without a function or arguments`,
		`"{{ request.path.id }"`:          `$: unexpected '}' in expression`,
		`{"$repeat":1,"$item":"{{ x }}"}`: `$: unknown function "x"`,
	} {
		_, err := generate.ParseRequestTemplate([]byte(src), generate.Limits{})
		if decoy.ErrorCode(err) != decoy.EINVALID || decoy.ErrorMessage(err) != msg {
			t.Errorf("ParseRequestTemplate(%s): %v, want %q", src, err, msg)
		}
	}
}
