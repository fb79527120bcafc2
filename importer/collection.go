package importer

import (
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
)

// A GET operation whose data is a list of records owns a collection
// (§11.5 of the contract): its mock is shared by the routes that read and
// write those records. Its data is a collection when it is an array of
// objects (a bare collection), or an object with exactly one member that
// is an array of objects (a wrapped one, {"data":[…],"links":{…}}), whose
// name becomes the routes' items.
//
// Data made from an example is judged by the example itself: the records
// are its objects. An empty array holds records unless the schema written
// for it says its items are something else. Data generated from a schema
// is judged by the schema alone (generated data is random): an array whose
// items are objects (type object, or properties, or an allOf with one),
// or an object with exactly one property of that kind; that property is
// then made required in the schema given to the generator, so that the
// items are always there.

// maxSchemaDepth bounds how deep the schemas of a response are followed
// to tell its shape.
const maxSchemaDepth = 32

// collection is what a GET operation's data says about its records.
type collection struct {
	// items is the member holding the records; "" for a bare array.
	items string
	// minRecords, when not 0, is the fewest records generated from the
	// schema (its array sets no minItems): a fake list is not empty.
	minRecords uint64
	// fields are the members of the example's records; schema is the
	// records' schema, if any: together, the names the records have.
	fields map[string]bool
	schema *openapi3.Schema
}

// itemsPath is the routes' items: nil for a bare array.
func (c *collection) itemsPath() *string {
	if c.items == "" {
		return nil
	}
	s := c.items
	return &s
}

// idField is the field an item route's parameter binds to: the field of
// the parameter's name when the records have it (and a field path can
// name it), else "id".
func (c *collection) idField(param string) string {
	if validField(param) && (c.fields[param] || hasField(c.schema, param, map[*openapi3.Schema]bool{}, 0)) {
		return param
	}
	return "id"
}

// validField reports whether a member name can be a one-segment field path
// (§1.3): not empty, no '.' (which splits paths).
func validField(name string) bool { return name != "" && !strings.Contains(name, ".") }

// collectionOfExample judges an example's value; schema is the one
// written for it, or nil.
func collectionOfExample(v any, schema *openapi3.Schema) *collection {
	switch v := v.(type) {
	case []any:
		items := itemsSchema(schema)
		if !records(v, schema, items) {
			return nil
		}
		c := &collection{fields: map[string]bool{}}
		c.add(v, items)
		return c
	case map[string]any:
		props := properties(schema)
		var found []string
		for name, m := range v {
			if arr, ok := m.([]any); ok {
				s := schemaOf(props[name])
				if records(arr, s, itemsSchema(s)) {
					found = append(found, name)
				}
			}
		}
		if len(found) != 1 || !validField(found[0]) {
			return nil
		}
		s := schemaOf(props[found[0]])
		c := &collection{items: found[0], fields: map[string]bool{}}
		c.add(v[found[0]].([]any), itemsSchema(s))
		return c
	}
	return nil
}

// records reports whether an example's array holds records: objects, or
// nothing when its schema (if any) does not say its items are something
// else.
func records(arr []any, schema, items *openapi3.Schema) bool {
	for _, e := range arr {
		if _, ok := e.(map[string]any); !ok {
			return false
		}
	}
	if len(arr) > 0 || schema == nil {
		return true
	}
	if t := schema.Type; t != nil && !t.IsEmpty() && !t.Includes(openapi3.TypeArray) {
		return false
	}
	return items == nil || isObjectSchema(items) || !hasType(items)
}

// add keeps the fields of an example's records, and their schema.
func (c *collection) add(recs []any, items *openapi3.Schema) {
	for _, r := range recs {
		for k := range r.(map[string]any) {
			c.fields[k] = true
		}
	}
	c.schema = items
}

// hasField reports whether every record of a schema may have the member
// name: a property of its own or of an allOf member, or of every branch
// of its oneOf, or of its anyOf (a record is one of them: a walkthrough
// found a collection of oneOf records, each with uuid, bound to id). Each
// schema is walked once (memo); one met again while it is walked (a
// cycle) says no.
func hasField(s *openapi3.Schema, name string, memo map[*openapi3.Schema]bool, depth int) bool {
	if s == nil || depth > maxSchemaDepth {
		return false
	}
	if v, ok := memo[s]; ok {
		return v
	}
	memo[s] = false
	_, v := s.Properties[name]
	for _, m := range s.AllOf {
		v = v || hasField(schemaOf(m), name, memo, depth+1)
	}
	for _, branches := range []openapi3.SchemaRefs{s.OneOf, s.AnyOf} {
		if v || len(branches) == 0 {
			continue
		}
		all := true
		for _, b := range branches {
			all = all && hasField(schemaOf(b), name, memo, depth+1)
		}
		v = all
	}
	memo[s] = v
	return v
}

// collectionOfSchema judges a response's schema.
func collectionOfSchema(schema *openapi3.Schema) *collection {
	if items, ok := arrayOfObjects(schema); ok {
		c := &collection{fields: map[string]bool{}, minRecords: minRecords(schema)}
		c.add(nil, items)
		return c
	}
	if !isObjectSchema(schema) {
		return nil
	}
	props := properties(schema)
	var found []string
	var items *openapi3.Schema
	for name, p := range props {
		if s, ok := arrayOfObjects(schemaOf(p)); ok {
			found, items = append(found, name), s
		}
	}
	if len(found) != 1 || !validField(found[0]) {
		return nil
	}
	c := &collection{items: found[0], fields: map[string]bool{}, minRecords: minRecords(schemaOf(props[found[0]]))}
	c.add(nil, items)
	return c
}

// generatedRecords is how many records a collection generated from its
// schema has at least, when the schema does not say: enough to look like a
// list.
const generatedRecords = 3

// minRecords is the minItems a collection's array of records is generated
// with: 0 when it sets one, else generatedRecords within its maxItems.
func minRecords(array *openapi3.Schema) uint64 {
	if array == nil || array.MinItems > 0 {
		return 0
	}
	if array.MaxItems != nil && *array.MaxItems < generatedRecords {
		return *array.MaxItems
	}
	return generatedRecords
}

func schemaOf(r *openapi3.SchemaRef) *openapi3.Schema {
	if r == nil {
		return nil
	}
	return r.Value
}

func hasType(s *openapi3.Schema) bool { return s.Type != nil && !s.Type.IsEmpty() }

// The schemas below are followed through kin-openapi's pointers, which
// may make cycles (a schema whose allOf names itself) and diamonds: each
// walk visits a schema once, and at most maxSchemaDepth deep, so that a
// hostile description cannot make it exponential.

// isObjectSchema reports whether a schema describes objects: its type is
// (or includes) object, or, without a type, it has properties, or an
// allOf member that describes objects, or only oneOf or anyOf branches
// that do.
func isObjectSchema(s *openapi3.Schema) bool {
	return objectSchema(s, map[*openapi3.Schema]bool{}, 0)
}

func objectSchema(s *openapi3.Schema, memo map[*openapi3.Schema]bool, depth int) bool {
	if s == nil || depth > maxSchemaDepth {
		return false
	}
	if v, ok := memo[s]; ok {
		return v
	}
	memo[s] = false // while it is walked: a cycle says no
	v := false
	switch {
	case hasType(s):
		v = s.Type.Includes(openapi3.TypeObject)
	case len(s.Properties) > 0:
		v = true
	default:
		for _, m := range s.AllOf {
			v = v || objectSchema(schemaOf(m), memo, depth+1)
		}
		for _, branches := range []openapi3.SchemaRefs{s.OneOf, s.AnyOf} {
			if v || len(branches) == 0 {
				continue
			}
			all := true
			for _, b := range branches {
				all = all && objectSchema(schemaOf(b), memo, depth+1)
			}
			v = all
		}
	}
	memo[s] = v
	return v
}

// itemsSchema returns the schema of an array schema's items: its own, or
// that of an allOf member.
func itemsSchema(s *openapi3.Schema) *openapi3.Schema {
	return items(s, map[*openapi3.Schema]bool{}, 0)
}

func items(s *openapi3.Schema, seen map[*openapi3.Schema]bool, depth int) *openapi3.Schema {
	if s == nil || seen[s] || depth > maxSchemaDepth {
		return nil
	}
	seen[s] = true
	if s.Items != nil && s.Items.Value != nil {
		return s.Items.Value
	}
	for _, m := range s.AllOf {
		if it := items(schemaOf(m), seen, depth+1); it != nil {
			return it
		}
	}
	return nil
}

// arrayOfObjects reports whether a schema describes arrays of objects,
// and returns the schema of their items.
func arrayOfObjects(s *openapi3.Schema) (*openapi3.Schema, bool) {
	if s == nil || hasType(s) && !s.Type.Includes(openapi3.TypeArray) {
		return nil, false
	}
	it := itemsSchema(s)
	return it, it != nil && isObjectSchema(it)
}

// properties returns a schema's properties, with those of its allOf
// members.
func properties(s *openapi3.Schema) openapi3.Schemas {
	if s == nil {
		return nil
	}
	if len(s.AllOf) == 0 {
		return s.Properties
	}
	out := openapi3.Schemas{}
	addProperties(out, s, map[*openapi3.Schema]bool{}, 0)
	return out
}

func addProperties(out openapi3.Schemas, s *openapi3.Schema, seen map[*openapi3.Schema]bool, depth int) {
	if s == nil || seen[s] || depth > maxSchemaDepth {
		return
	}
	seen[s] = true
	for _, m := range s.AllOf {
		addProperties(out, schemaOf(m), seen, depth+1)
	}
	for k, v := range s.Properties {
		out[k] = v // its own win over its members'
	}
}
