package importer

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strconv"
	"strings"

	"github.com/decoy-mock/decoy"
)

// A route made from an OpenAPI operation keeps the operation's request
// body schema, against which bodies written through it are validated
// (§12.3 of the contract). The schema is made one JSON Schema document
// that stands on its own: the schema as the description writes it, its
// $refs unchanged, with what they point at copied beside it at the same
// JSON pointer ("#/components/schemas/Pet" resolves within the document),
// and nothing else of the description. Then, for a request:
//
//   - readOnly members are not required: a name is dropped from a schema's
//     required when its property (through $refs, and in the schema's allOf
//     members) is readOnly; the members of an allOf written in place lose
//     it too, for their schema reads them together.
//   - What OpenAPI 3.0 says otherwise than JSON Schema is said as JSON
//     Schema (draft 2020-12, which 3.1 uses, is how the document reads):
//     in a 3.0 description, "nullable: true" adds "null" to a single type
//     (3.1 has no nullable: there it stays a keyword of no effect); in
//     either, a boolean exclusiveMinimum or exclusiveMaximum, which 2020-12
//     refuses (a 3.1 description written as 3.0 ones are), becomes the
//     number it makes exclusive.
//
// The description is read as JSON values (rawDescription) rather than
// through kin-openapi, whose types keep the keywords they know.

// schemaDocs makes and keeps the request schemas of one import: routes
// with the same schema share one document, made once, and the documents
// the routes store together, one per route that has one, are bounded by
// Limits.MaxUnpackedBytes, as is the work of making them (in values
// copied, a document made or not).
type schemaDocs struct {
	raw    any
	v30    bool
	made   map[string][]byte
	bytes  int64
	copied int64
	limit  int64
}

// tooLarge is the error of an import whose request schemas pass the bound.
func (d *schemaDocs) tooLarge() error {
	return decoy.Errorf(decoy.ETOOLARGE, "The request schemas of the file's operations take more than %d bytes", d.limit)
}

// requestSchema returns the document of the request body schema written
// at ptr (following $refs on the way, as kin-openapi does); nil when the
// description has none there, or one whose $refs do not resolve.
func (d *schemaDocs) requestSchema(ptr []string) ([]byte, error) {
	root, ok := lookup(d.raw, ptr, true)
	if !ok {
		return nil, nil
	}
	key, err := json.Marshal(root)
	if err != nil {
		return nil, nil
	}
	if doc, ok := d.made[string(key)]; ok {
		// Made once, but stored with each route that takes it, and
		// compiled for each when the routes are loaded: counted again.
		if d.bytes += int64(len(doc)); d.bytes > d.limit {
			return nil, d.tooLarge()
		}
		return doc, nil
	}
	doc := d.document(root)
	// Each value copied is at least a byte of the document; most are more.
	if d.bytes += int64(len(doc)); d.bytes > d.limit || d.copied > d.limit {
		return nil, d.tooLarge()
	}
	if d.made == nil {
		d.made = map[string][]byte{}
	}
	d.made[string(key)] = doc
	return doc, nil
}

// document makes the document of one schema.
func (d *schemaDocs) document(root any) []byte {
	out := d.deepCopy(root, 0)
	obj, isObj := out.(map[string]any)
	if !isObj {
		b, _ := json.Marshal(out) // a boolean schema
		return b
	}
	// Copy what each $ref points at, and what those point at.
	var schemas []any // every schema of the document, to fix below
	schemas = append(schemas, out)
	defs := map[string]any{}
	done := map[string]bool{}
	queue := refsIn(root, nil, 0)
	for len(queue) > 0 {
		ref := queue[0]
		queue = queue[1:]
		if done[ref] {
			continue
		}
		done[ref] = true
		segs, ok := pointerOf(ref)
		if !ok || len(segs) == 0 || segs[0] == "" {
			return nil // not within the description, or its root
		}
		target, ok := lookup(d.raw, segs, false)
		if !ok {
			return nil
		}
		c := d.deepCopy(target, 0)
		if d.copied > d.limit {
			return nil
		}
		if !setAt(defs, segs, c) {
			return nil
		}
		schemas = append(schemas, c)
		queue = refsIn(target, queue, 0)
	}
	for k, v := range defs {
		if _, taken := obj[k]; taken {
			return nil // the schema has a member where its $refs lead: no document holds both
		}
		obj[k] = v
	}
	for _, s := range schemas {
		d.fix(out, s, 0)
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if enc.Encode(out) != nil {
		return nil
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// Keywords whose values are schemas, one or many.
var (
	schemaKeywords    = []string{"items", "additionalProperties", "not", "if", "then", "else", "contains", "propertyNames", "unevaluatedItems", "unevaluatedProperties", "additionalItems"}
	schemaListKeyword = []string{"allOf", "anyOf", "oneOf", "prefixItems", "items"}
	schemaMapKeywords = []string{"properties", "patternProperties", "dependentSchemas", "$defs", "definitions"}
)

// fix makes one schema, and those in it, read as a request's (see the top
// of the file); doc is the document, to follow $refs in.
func (d *schemaDocs) fix(doc, schema any, depth int) {
	s, ok := schema.(map[string]any)
	if !ok || depth > maxDepth {
		return
	}
	openAPI30(s, d.v30)
	if ro := readOnlyNames(doc, s, map[uintptr]bool{}, 0); len(ro) > 0 {
		dropRequired(s, ro)
		if all, ok := s["allOf"].([]any); ok {
			for _, m := range all {
				if m, ok := m.(map[string]any); ok && m["$ref"] == nil {
					dropRequired(m, ro)
				}
			}
		}
	}
	for _, k := range schemaKeywords {
		d.fix(doc, s[k], depth+1)
	}
	for _, k := range schemaListKeyword {
		if list, ok := s[k].([]any); ok {
			for _, m := range list {
				d.fix(doc, m, depth+1)
			}
		}
	}
	for _, k := range schemaMapKeywords {
		if m, ok := s[k].(map[string]any); ok {
			for _, v := range m {
				d.fix(doc, v, depth+1)
			}
		}
	}
}

// openAPI30 rewrites what OpenAPI 3.0 says otherwise than JSON Schema;
// nullable only in a 3.0 description (v30).
func openAPI30(s map[string]any, v30 bool) {
	if v30 && s["nullable"] == true {
		if t, ok := s["type"].(string); ok {
			s["type"] = []any{t, "null"}
		}
	}
	for _, k := range [][2]string{{"exclusiveMinimum", "minimum"}, {"exclusiveMaximum", "maximum"}} {
		switch s[k[0]] {
		case true:
			if bound, ok := s[k[1]]; ok {
				s[k[0]] = bound
			} else {
				delete(s, k[0])
			}
		case false:
			delete(s, k[0])
		}
	}
}

// identity is what tells two objects of a document apart: a walk through
// $refs and allOf visits each once (a cycle ends, and diamonds cost no
// more than once each).
func identity(m map[string]any) uintptr { return reflect.ValueOf(m).Pointer() }

// readOnlyNames returns the names of a schema's properties that are
// readOnly, its allOf members' included.
func readOnlyNames(doc any, s map[string]any, seen map[uintptr]bool, depth int) map[string]bool {
	if s == nil || seen[identity(s)] || depth > maxRefChain {
		return nil
	}
	seen[identity(s)] = true
	names := map[string]bool{}
	if props, ok := s["properties"].(map[string]any); ok {
		for name, p := range props {
			if readOnly(doc, p, map[uintptr]bool{}, 0) {
				names[name] = true
			}
		}
	}
	if all, ok := s["allOf"].([]any); ok {
		for _, m := range all {
			for n := range readOnlyNames(doc, resolve(doc, m), seen, depth+1) {
				names[n] = true
			}
		}
	}
	return names
}

// readOnly reports whether a property's schema says readOnly: itself,
// where its $ref leads, or one of its allOf members.
func readOnly(doc, p any, seen map[uintptr]bool, depth int) bool {
	s, ok := p.(map[string]any)
	if !ok || s == nil || seen[identity(s)] || depth > maxRefChain {
		return false
	}
	seen[identity(s)] = true
	if s["readOnly"] == true {
		return true
	}
	if _, isRef := s["$ref"]; isRef && readOnly(doc, resolve(doc, s), seen, depth+1) {
		return true
	}
	if all, ok := s["allOf"].([]any); ok {
		for _, m := range all {
			if readOnly(doc, m, seen, depth+1) {
				return true
			}
		}
	}
	return false
}

// resolve returns the schema a $ref leads to within doc (after a chain of
// them), or s itself when it is no $ref.
func resolve(doc, s any) map[string]any {
	for range maxRefChain {
		m, ok := s.(map[string]any)
		if !ok {
			return nil
		}
		ref, isRef := m["$ref"].(string)
		if !isRef {
			return m
		}
		segs, ok := pointerOf(ref)
		if !ok {
			return nil
		}
		if s, ok = lookup(doc, segs, false); !ok {
			return nil
		}
	}
	return nil
}

// dropRequired removes names from a schema's required.
func dropRequired(s map[string]any, names map[string]bool) {
	req, ok := s["required"].([]any)
	if !ok {
		return
	}
	kept := make([]any, 0, len(req))
	for _, r := range req {
		if n, ok := r.(string); !ok || !names[n] {
			kept = append(kept, r)
		}
	}
	s["required"] = kept
}

// notSchemas are the keywords whose values are data, not schemas: a
// "$ref" member inside them is no reference.
var notSchemas = map[string]bool{"example": true, "examples": true, "default": true, "const": true, "enum": true}

// refsIn appends the local $refs found in v to refs.
func refsIn(v any, refs []string, depth int) []string {
	if depth > maxDepth {
		return refs
	}
	switch v := v.(type) {
	case map[string]any:
		if ref, ok := v["$ref"].(string); ok && strings.HasPrefix(ref, "#") {
			refs = append(refs, ref)
		}
		for k, c := range v {
			if !notSchemas[k] && !strings.HasPrefix(k, "x-") {
				refs = refsIn(c, refs, depth+1)
			}
		}
	case []any:
		for _, c := range v {
			refs = refsIn(c, refs, depth+1)
		}
	}
	return refs
}

// lookup returns the value at a JSON pointer of a description read as
// JSON values. With follow, an object on the way that is a $ref stands for
// what it leads to, as kin-openapi resolves it.
func lookup(v any, segs []string, follow bool) (any, bool) {
	root := v
	for _, seg := range segs {
		if m, ok := v.(map[string]any); ok && follow && m["$ref"] != nil {
			r := resolve(root, m)
			if r == nil {
				return nil, false
			}
			v = r
		}
		switch c := v.(type) {
		case map[string]any:
			var ok bool
			if v, ok = c[seg]; !ok {
				return nil, false
			}
		case []any:
			i, err := strconv.Atoi(seg)
			if err != nil || i < 0 || i >= len(c) {
				return nil, false
			}
			v = c[i]
		default:
			return nil, false
		}
	}
	return v, true
}

// setAt sets the value at a JSON pointer of defs, making objects on the
// way; false when something else is in the way.
func setAt(defs map[string]any, segs []string, v any) bool {
	var cur any = defs
	for i, seg := range segs {
		last := i == len(segs)-1
		switch c := cur.(type) {
		case map[string]any:
			if last {
				c[seg] = v
				return true
			}
			next, ok := c[seg]
			if !ok {
				next = map[string]any{}
				c[seg] = next
			}
			cur = next
		case []any:
			n, err := strconv.Atoi(seg)
			if err != nil || n < 0 || n >= len(c) {
				return false
			}
			if last {
				c[n] = v
				return true
			}
			cur = c[n]
		default:
			return false
		}
	}
	return false
}

// deepCopy copies a tree of JSON values, so that a document can be changed
// without changing the description, or the other documents. It counts the
// values it copies, and stops past the bound.
func (d *schemaDocs) deepCopy(v any, depth int) any {
	if d.copied++; depth > maxDepth || d.copied > d.limit {
		return nil
	}
	switch v := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(v))
		for k, c := range v {
			m[k] = d.deepCopy(c, depth+1)
		}
		return m
	case []any:
		s := make([]any, len(v))
		for i, c := range v {
			s[i] = d.deepCopy(c, depth+1)
		}
		return s
	}
	return v
}
