// Package bodyschema checks the bodies written through routes against the
// request schemas an OpenAPI import kept (§12.3 of the contract): a body
// that does not validate is refused, naming where and why. Schemas are
// compiled once (santhosh-tekuri/jsonschema, draft 2020-12 by default);
// $refs resolve within the schema document alone: nothing is read from
// the disk or the network.
package bodyschema

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/decoy-mock/decoy"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// Schema is a compiled request schema.
type Schema struct {
	s *jsonschema.Schema
}

// resource is the name the schema document is compiled under.
const resource = "decoy:request-schema.json"

// Compile compiles a JSON Schema document. Its errors name why it does
// not compile.
func Compile(doc []byte) (*Schema, error) {
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return nil, fmt.Errorf("the schema is not JSON: %w", err)
	}
	c := jsonschema.NewCompiler()
	c.UseLoader(noLoader{})
	c.DefaultDraft(jsonschema.Draft2020)
	if err := c.AddResource(resource, v); err != nil {
		return nil, err
	}
	s, err := c.Compile(resource)
	if err != nil {
		return nil, err
	}
	return &Schema{s: s}, nil
}

// noLoader refuses every resource outside the schema document.
type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("%s is outside the schema: only references within it are followed", url)
}

var printer = message.NewPrinter(language.English)

// Check validates a body (valid JSON) against the schema: nil when it
// validates, else an EINVALID error "Invalid body: <JSON pointer>: <why>"
// naming the first place that fails.
func (s *Schema) Check(body []byte) error {
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		return decoy.Errorf(decoy.EINVALID, "Invalid body: not JSON")
	}
	err = s.s.Validate(v)
	if err == nil {
		return nil
	}
	ve, ok := err.(*jsonschema.ValidationError)
	if !ok {
		return decoy.Errorf(decoy.EINVALID, "Invalid body: %v", err)
	}
	leaf := first(ve)
	return decoy.Errorf(decoy.EINVALID, "Invalid body: %s: %s", pointer(leaf.InstanceLocation), leaf.ErrorKind.LocalizedString(printer))
}

// first returns the first error that has no causes: the most precise.
func first(e *jsonschema.ValidationError) *jsonschema.ValidationError {
	for len(e.Causes) > 0 {
		e = e.Causes[0]
	}
	return e
}

// pointer is a JSON pointer (RFC 6901) of an instance location: "" is the
// body itself.
func pointer(tokens []string) string {
	var b strings.Builder
	for _, t := range tokens {
		b.WriteByte('/')
		b.WriteString(strings.NewReplacer("~", "~0", "/", "~1").Replace(t))
	}
	if b.Len() == 0 {
		return "/"
	}
	return b.String()
}
