package generate

import (
	"fmt"
	"math"
	"mime"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/decoy-mock/decoy"
)

// IsSchema reports whether a template's content type says it is a JSON
// Schema.
func IsSchema(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	return err == nil && mt == SchemaContentType
}

// ParseSchema compiles a JSON Schema into a template whose every output
// validates against it. The keywords that shape the output: type (one or
// several), enum, const, properties, required, items, minItems, maxItems,
// minimum, maximum, exclusiveMinimum, exclusiveMaximum, multipleOf,
// minLength, maxLength, pattern (Go's regular expressions), format (email,
// uuid, date, date-time, uri, hostname, ipv4, ipv6), allOf (its schemas
// merged), anyOf, oneOf (from the branches no other branch's values can
// match), uniqueItems (of scalars), and $ref within the document. A
// keyword that would constrain the output in a way not generated (not,
// patternProperties, ...) is an error, rather than an output that fails
// the schema. Compiling (merging allOf, anyOf and oneOf, following $refs)
// stops at lim's Deadline, or once its Done is closed.
func ParseSchema(body []byte, lim Limits) (*Template, error) {
	return newSchemaCompiler(lim).parse(body)
}

func newSchemaCompiler(lim Limits) *schemaCompiler {
	return &schemaCompiler{refs: map[string]*refNode{}, bound: newBound(lim)}
}

// parse is ParseSchema with c.
func (c *schemaCompiler) parse(body []byte) (*Template, error) {
	if err := c.bound.check(); err != nil {
		return nil, err
	}
	doc, err := decodeJSON(body, &c.bound)
	if err != nil {
		return nil, err
	}
	c.doc = c.lastOfEachKey(doc)
	root, err := c.compile(c.doc, "$", "")
	if c.bound.check() != nil {
		// Past the bound, whatever else the compile said: cut short, or
		// done late after a long step between two looks at the clock.
		return nil, c.bound.err
	}
	if err != nil {
		return nil, err
	}
	return &Template{root: root, size: len(body)}, nil
}

// lastOfEachKey returns v with, in each object, only the last member of
// each name: what JSON Schema validators read when a key is repeated.
// Past the bound it returns what it has (the compile then stops).
func (c *schemaCompiler) lastOfEachKey(v jsonValue) jsonValue {
	switch v.kind {
	case 'a':
		elems := make([]jsonValue, len(v.elems))
		for i, e := range v.elems {
			elems[i] = c.lastOfEachKey(e)
		}
		v.elems = elems
	case 'o':
		var members []member
		for i, m := range v.members {
			if c.bound.tick(len(v.members)-i) != nil {
				break
			}
			later := false
			for _, n := range v.members[i+1:] {
				if n.key == m.key {
					later = true
					break
				}
			}
			if !later {
				members = append(members, member{m.key, c.lastOfEachKey(m.val)})
			}
		}
		v.members = members
	}
	return v
}

// Depths of schema recursion: past softDepth, $refs deep, generation takes
// the fewest items and no optional properties, so that recursive schemas
// end; past maxRefDepth it gives up.
const (
	softDepth   = 3
	maxRefDepth = 24
)

type schemaCompiler struct {
	doc  jsonValue
	refs map[string]*refNode
	// depth is the nesting of compile calls, and merges the count of
	// schemas merged, both bounded.
	depth  int
	merges int
	// bound ends the compile at its deadline or request.
	bound bound
}

// tick counts n units of the compile's work (see bound).
func (c *schemaCompiler) tick(n int) error { return c.bound.tick(n) }

// maxCompileDepth bounds the nesting of schemas compiled, which merging a
// $ref into an allOf could make endless.
const maxCompileDepth = 256

func (v jsonValue) get(key string) (jsonValue, bool) {
	for _, m := range v.members {
		if m.key == key {
			return m.val, true
		}
	}
	return jsonValue{}, false
}

// unsupported are the keywords that constrain values in ways the
// generator does not follow.
var unsupported = []string{"not", "if", "then", "else", "patternProperties", "propertyNames",
	"dependentRequired", "dependentSchemas", "dependencies", "contains", "prefixItems", "minProperties",
	"maxProperties", "unevaluatedItems", "unevaluatedProperties", "$dynamicRef", "$recursiveRef"}

func schemaError(path, format string, args ...any) error {
	return decoy.Errorf(decoy.EINVALID, "%s: %s", path, fmt.Sprintf(format, args...))
}

// compile compiles the schema s found at path; name is the property it
// describes, if any (a hint for realistic strings).
func (c *schemaCompiler) compile(s jsonValue, path, name string) (node, error) {
	// Each keyword looked for reads the schema's members.
	if err := c.tick((len(unsupported) + 8) * (1 + len(s.members))); err != nil {
		return nil, err
	}
	switch {
	case s.kind == 'l' && string(s.raw) == "true":
		return anyValue{}, nil
	case s.kind == 'l' && string(s.raw) == "false":
		return nil, schemaError(path, "the schema false admits no value")
	case s.kind != 'o':
		return nil, schemaError(path, "a schema must be an object or a boolean")
	}
	for _, k := range unsupported {
		if _, ok := s.get(k); ok {
			return nil, schemaError(path, "the keyword %q is not supported in schemas used as templates", k)
		}
	}
	if ref, ok := s.get("$ref"); ok {
		return c.ref(ref, path)
	}
	if c.depth++; c.depth > maxCompileDepth {
		return nil, schemaError(path, "the schema recurses through allOf without end")
	}
	defer func() { c.depth-- }()
	if v, ok := s.get("allOf"); ok {
		return c.compileAllOf(s, v, path, name)
	}
	_, hasAny := s.get("anyOf")
	_, hasOne := s.get("oneOf")
	if hasAny || hasOne {
		return c.compileChoice(s, path, name)
	}
	// The value of const, and those of enum, must also satisfy the
	// keywords beside them ({"type":"string","const":5} admits nothing).
	checks := valueChecks(s)
	if v, ok := s.get("const"); ok {
		if !c.admits(checks, v, 0) {
			return nil, schemaError(path+".const", "the value is not allowed by the schema's other keywords")
		}
		return literal(encodeValue(v)), nil
	}
	if v, ok := s.get("enum"); ok {
		if v.kind != 'a' || len(v.elems) == 0 {
			return nil, schemaError(path+".enum", "must be a non-empty array")
		}
		n := &choiceNode{}
		for i, e := range v.elems {
			if err := c.tick(1 + i); err != nil {
				return nil, err
			}
			// Equal values once, so that uniqueItems can tell values
			// apart by their bytes; values the other keywords refuse
			// never.
			if !slices.ContainsFunc(v.elems[:i], c.equalTo(e)) && c.admits(checks, e, 0) {
				n.options = append(n.options, literal(encodeValue(e)))
			}
		}
		if len(n.options) == 0 {
			return nil, schemaError(path+".enum", "no value is allowed by the schema's other keywords")
		}
		return n, nil
	}
	types, err := schemaTypes(s, path)
	if err != nil {
		return nil, err
	}
	if len(types) == 1 {
		return c.compileType(s, types[0], path, name)
	}
	n := &choiceNode{}
	for _, t := range types {
		if err := c.tick(runStep); err != nil {
			return nil, err
		}
		o, err := c.compileType(s, t, path, name)
		if err != nil {
			return nil, err
		}
		n.options = append(n.options, o)
	}
	return n, nil
}

// valueChecks is the part of schema s that the values of its const and
// enum are checked against: its type and the bounds of strings, numbers
// and arrays (other keywords, and formats, are left to the values as
// written).
func valueChecks(s jsonValue) jsonValue {
	out := jsonValue{kind: 'o'}
	for _, m := range s.members {
		switch m.key {
		case "type", "minLength", "maxLength", "pattern", "minimum", "maximum", "exclusiveMinimum",
			"exclusiveMaximum", "multipleOf", "minItems", "maxItems":
			out.members = append(out.members, m)
		}
	}
	return out
}

// schemaTypes returns the types a schema allows, inferred from its
// keywords when it has no type.
func schemaTypes(s jsonValue, path string) ([]string, error) {
	known := []string{"object", "array", "string", "number", "integer", "boolean", "null"}
	t, ok := s.get("type")
	switch {
	case ok && t.kind == 's':
		if !slices.Contains(known, t.str) {
			return nil, schemaError(path+".type", "unknown type %q", t.str)
		}
		return []string{t.str}, nil
	case ok && t.kind == 'a' && len(t.elems) > 0:
		var out []string
		for _, e := range t.elems {
			if e.kind != 's' || !slices.Contains(known, e.str) {
				return nil, schemaError(path+".type", "unknown type %s", e.raw)
			}
			out = append(out, e.str)
		}
		return out, nil
	case ok:
		return nil, schemaError(path+".type", "must be a type name or an array of them")
	}
	has := func(keys ...string) bool {
		for _, k := range keys {
			if _, ok := s.get(k); ok {
				return true
			}
		}
		return false
	}
	switch {
	case has("properties", "required", "additionalProperties"):
		return []string{"object"}, nil
	case has("items", "minItems", "maxItems"):
		return []string{"array"}, nil
	case has("minLength", "maxLength", "pattern", "format"):
		return []string{"string"}, nil
	case has("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"):
		return []string{"number"}, nil
	}
	return []string{"any"}, nil
}

func (c *schemaCompiler) compileType(s jsonValue, t, path, name string) (node, error) {
	switch t {
	case "object":
		return c.compileObject(s, path)
	case "array":
		return c.compileArray(s, path)
	case "string":
		return compileStringSchema(s, path, name)
	case "number", "integer":
		return compileNumber(s, t == "integer", path)
	case "boolean":
		return boolNode{}, nil
	case "null":
		return literal("null"), nil
	}
	return anyValue{}, nil
}

// ref compiles a $ref: a JSON pointer into this document. Each target is
// compiled once, so that recursive schemas compile.
func (c *schemaCompiler) ref(ref jsonValue, path string) (node, error) {
	if ref.kind != 's' || !strings.HasPrefix(ref.str, "#") {
		return nil, schemaError(path+".$ref", "only references within the document (#/...) are supported")
	}
	ptr := ref.str[1:]
	if n := c.refs[ptr]; n != nil {
		return n, nil
	}
	target, tpath, ok := c.resolve(ptr)
	if !ok {
		return nil, schemaError(path+".$ref", "%q points to nothing in the document", ref.str)
	}
	n := &refNode{}
	c.refs[ptr] = n
	t, err := c.compile(target, tpath, "")
	if err != nil {
		return nil, err
	}
	n.target = t
	return n, nil
}

// resolve follows a JSON pointer (RFC 6901) from the document's root.
func (c *schemaCompiler) resolve(ptr string) (jsonValue, string, bool) {
	v, path := c.doc, "$"
	if ptr == "" {
		return v, path, true
	}
	if !strings.HasPrefix(ptr, "/") {
		return v, path, false
	}
	for _, tok := range strings.Split(ptr[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch v.kind {
		case 'o':
			next, ok := v.get(tok)
			if !ok {
				return v, path, false
			}
			v, path = next, childPath(path, tok)
		case 'a':
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(v.elems) {
				return v, path, false
			}
			v, path = v.elems[i], path+"["+tok+"]"
		default:
			return v, path, false
		}
	}
	return v, path, true
}

func (c *schemaCompiler) compileObject(s jsonValue, path string) (node, error) {
	n := &objectSchema{}
	required := map[string]bool{}
	if r, ok := s.get("required"); ok {
		if r.kind != 'a' {
			return nil, schemaError(path+".required", "must be an array of names")
		}
		for _, e := range r.elems {
			if e.kind != 's' {
				return nil, schemaError(path+".required", "must be an array of names")
			}
			required[e.str] = true
		}
	}
	seen := map[string]bool{}
	if p, ok := s.get("properties"); ok {
		if p.kind != 'o' {
			return nil, schemaError(path+".properties", "must be an object")
		}
		for _, m := range p.members {
			if seen[m.key] {
				continue
			}
			seen[m.key] = true
			v, err := c.compile(m.val, childPath(path+".properties", m.key), m.key)
			if err != nil {
				return nil, err
			}
			n.props = append(n.props, prop{key: append(appendString(nil, m.key), ':'), val: v, required: required[m.key]})
		}
	}
	// Required names with no schema of their own: whatever
	// additionalProperties allows.
	r, _ := s.get("required")
	for _, e := range r.elems {
		if seen[e.str] {
			continue
		}
		seen[e.str] = true
		var v node = anyValue{}
		if ap, ok := s.get("additionalProperties"); ok {
			var err error
			if v, err = c.compile(ap, path+".additionalProperties", e.str); err != nil {
				return nil, err
			}
		}
		n.props = append(n.props, prop{key: append(appendString(nil, e.str), ':'), val: v, required: true})
	}
	return n, nil
}

func (c *schemaCompiler) compileArray(s jsonValue, path string) (node, error) {
	n := &arraySchema{}
	var err error
	if n.min, err = intKeyword(s, "minItems", path, 0); err != nil {
		return nil, err
	}
	if n.max, err = intKeyword(s, "maxItems", path, -1); err != nil {
		return nil, err
	}
	if n.max < 0 {
		n.max = n.min + 4
	}
	if n.max < n.min {
		return nil, schemaError(path, "maxItems is less than minItems")
	}
	n.item = anyValue{}
	if it, ok := s.get("items"); ok {
		if n.item, err = c.compile(it, path+".items", ""); err != nil {
			return nil, err
		}
	}
	if u, ok := s.get("uniqueItems"); ok && string(u.raw) == "true" {
		if !scalar(n.item) {
			return nil, schemaError(path+".uniqueItems", "supported only for arrays of strings, numbers, booleans or enums")
		}
		if c, ok := n.item.(*choiceNode); ok && allLiteral(c) && int64(len(c.options)) < n.min {
			return nil, schemaError(path, "minItems is more than the enum's %d distinct values", len(c.options))
		}
		n.unique = true
	}
	return n, nil
}

// intKeyword reads a keyword that is a count: def when absent.
func intKeyword(s jsonValue, key, path string, def int64) (int64, error) {
	v, ok := s.get(key)
	if !ok {
		return def, nil
	}
	f, err := strconv.ParseFloat(string(v.raw), 64)
	if v.kind != 'l' || err != nil || f < 0 || f != math.Trunc(f) || f > maxRepeat {
		return 0, schemaError(path+"."+key, "must be a count of 0 or more")
	}
	return int64(f), nil
}

// numKeyword reads a numeric keyword.
func numKeyword(s jsonValue, key, path string) (float64, bool, error) {
	v, ok := s.get(key)
	if !ok {
		return 0, false, nil
	}
	f, err := strconv.ParseFloat(string(v.raw), 64)
	if v.kind != 'l' || err != nil {
		return 0, false, schemaError(path+"."+key, "must be a number")
	}
	return f, true, nil
}

// formats are the string formats generated, and how.
var formats = map[string]func(g *gen) string{
	"email":     func(g *gen) string { return g.f.Email() },
	"uuid":      func(g *gen) string { return g.f.UUID() },
	"date":      func(g *gen) string { return randomTime(g, defaultDates).Format(dateLayout) },
	"date-time": func(g *gen) string { return randomTime(g, defaultDates).Format(time.RFC3339) },
	"uri":       func(g *gen) string { return g.f.URL() },
	"url":       func(g *gen) string { return g.f.URL() },
	"hostname":  func(g *gen) string { return g.f.DomainName() },
	"ipv4":      func(g *gen) string { return g.f.IPv4Address() },
	"ipv6":      func(g *gen) string { return g.f.IPv6Address() },
}

// hints are the fake-data functions that give realistic strings for
// properties of these names (lower case, without - and _).
var hints = map[string]string{
	"name": "name", "fullname": "name", "firstname": "firstName", "lastname": "lastName",
	"email": "email", "username": "username", "phone": "phone", "city": "city", "country": "country",
	"street": "street", "address": "street", "zip": "zip", "zipcode": "zip", "postalcode": "zip",
	"state": "state", "company": "company", "url": "url", "website": "url", "color": "color",
	"description": "sentence", "title": "productName", "product": "productName", "category": "productCategory",
	"jobtitle": "jobTitle", "gender": "gender", "currency": "currency",
}

func compileStringSchema(s jsonValue, path, name string) (node, error) {
	n := &stringSchema{}
	var err error
	if n.min, err = intKeyword(s, "minLength", path, 0); err != nil {
		return nil, err
	}
	if n.max, err = intKeyword(s, "maxLength", path, -1); err != nil {
		return nil, err
	}
	if n.max >= 0 && n.max < n.min {
		return nil, schemaError(path, "maxLength is less than minLength")
	}
	if n.min > 1<<20 {
		return nil, schemaError(path+".minLength", "at most %d", 1<<20)
	}
	if p, ok := s.get("pattern"); ok {
		if p.kind != 's' {
			return nil, schemaError(path+".pattern", "must be a string")
		}
		if f, ok := s.get("format"); ok && f.kind == 's' && formats[f.str] != nil {
			// A string made to match the pattern is seldom of the
			// format too: refused rather than made invalid.
			return nil, schemaError(path, "format %q and pattern together are not supported: keep one", f.str)
		}
		if n.pattern, err = regexp.Compile(p.str); err != nil {
			return nil, schemaError(path+".pattern", "not a pattern Decoy can generate from: %v", err)
		}
		return n, nil
	}
	if f, ok := s.get("format"); ok && f.kind == 's' {
		n.format = formats[f.str]
	}
	if n.format == nil {
		if fn := registry[hints[strings.NewReplacer("_", "", "-", "").Replace(strings.ToLower(name))]]; fn != nil {
			n.hint = fn
		}
	}
	return n, nil
}

func compileNumber(s jsonValue, isInt bool, path string) (node, error) {
	lo, hasLo, err := numKeyword(s, "minimum", path)
	if err != nil {
		return nil, err
	}
	hi, hasHi, err := numKeyword(s, "maximum", path)
	if err != nil {
		return nil, err
	}
	n := &numberSchema{integer: isInt}
	// exclusiveMinimum is a number (2019-09 and later) or, in draft 4, a
	// boolean that makes minimum exclusive.
	for _, k := range []struct {
		key   string
		bound *float64
		has   *bool
		excl  *bool
	}{{"exclusiveMinimum", &lo, &hasLo, &n.exclLo}, {"exclusiveMaximum", &hi, &hasHi, &n.exclHi}} {
		v, ok := s.get(k.key)
		switch {
		case !ok:
		case string(v.raw) == "true":
			*k.excl = *k.has
		case string(v.raw) == "false":
		default:
			f, err := strconv.ParseFloat(string(v.raw), 64)
			if v.kind != 'l' || err != nil {
				return nil, schemaError(path+"."+k.key, "must be a number")
			}
			lower := k.key == "exclusiveMinimum"
			if !*k.has || (lower && f >= *k.bound) || (!lower && f <= *k.bound) {
				*k.bound, *k.has, *k.excl = f, true, true
			}
		}
	}
	switch {
	case !hasLo && !hasHi:
		lo, hi = 0, 1000
	case !hasLo:
		lo = hi - 1000
	case !hasHi:
		hi = lo + 1000
	}
	n.lo, n.hi = lo, hi
	if m, ok := s.get("multipleOf"); ok {
		f, err := strconv.ParseFloat(string(m.raw), 64)
		if m.kind != 'l' || err != nil || f <= 0 {
			return nil, schemaError(path+".multipleOf", "must be a number greater than 0")
		}
		n.step, n.decimals = f, decimalsOf(string(m.raw))
	}
	if isInt && n.step == 0 {
		n.step = 1
	}
	if n.step > 0 {
		// Multiples k*step with k from klo to khi.
		n.klo, n.khi = math.Ceil(lo/n.step), math.Floor(hi/n.step)
		if n.exclLo && n.klo*n.step <= lo {
			n.klo++
		}
		if n.exclHi && n.khi*n.step >= hi {
			n.khi--
		}
		if isInt && n.step != math.Trunc(n.step) {
			return nil, schemaError(path+".multipleOf", "an integer's multipleOf must be an integer")
		}
		if n.klo > n.khi || math.Abs(n.klo) > 1<<53 || math.Abs(n.khi) > 1<<53 {
			return nil, schemaError(path, "no number fits minimum, maximum and multipleOf")
		}
		return n, nil
	}
	if lo > hi || (lo == hi && (n.exclLo || n.exclHi)) {
		return nil, schemaError(path, "no number fits minimum and maximum")
	}
	return n, nil
}

// decimalsOf returns how many digits a JSON number has after its point.
func decimalsOf(raw string) int {
	raw, exp, _ := strings.Cut(strings.ToLower(raw), "e")
	d := 0
	if _, frac, ok := strings.Cut(raw, "."); ok {
		d = len(frac)
	}
	if e, err := strconv.Atoi(exp); err == nil {
		d -= e
	}
	return max(d, 0)
}

// encodeValue re-encodes a JSON value compactly.
func encodeValue(v jsonValue) []byte {
	switch v.kind {
	case 's', 'l':
		return v.raw
	case 'a':
		b := []byte{'['}
		for i, e := range v.elems {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, encodeValue(e)...)
		}
		return append(b, ']')
	}
	b := []byte{'{'}
	for i, m := range v.members {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, m.key)
		b = append(b, ':')
		b = append(b, encodeValue(m.val)...)
	}
	return append(b, '}')
}

// choiceNode gives one of its options.
type choiceNode struct{ options []node }

func (c *choiceNode) gen(g *gen) error {
	return c.options[g.intRange(0, int64(len(c.options)-1))].gen(g)
}

// refNode is a $ref: it counts the depth of the references followed.
type refNode struct{ target node }

func (r *refNode) gen(g *gen) error {
	if g.depth >= maxRefDepth {
		return decoy.Errorf(decoy.EINVALID, "The schema's $refs recurse more than %d deep without an end", maxRefDepth)
	}
	g.depth++
	err := r.target.gen(g)
	g.depth--
	return err
}

// anyValue is what a schema that allows anything gives: a word.
type anyValue struct{}

func (anyValue) gen(g *gen) error {
	g.buf = append(g.appendWord(append(g.buf, '"'), loremWords), '"')
	return nil
}

type boolNode struct{}

func (boolNode) gen(g *gen) error {
	g.buf = strconv.AppendBool(g.buf, g.f.Bool())
	return nil
}

type prop struct {
	key      []byte
	val      node
	required bool
}

type objectSchema struct{ props []prop }

func (o *objectSchema) gen(g *gen) error {
	g.buf = append(g.buf, '{')
	first := true
	for _, p := range o.props {
		// Optional properties appear three times in four, none past
		// softDepth (so that recursive schemas end).
		if !p.required && (g.depth > softDepth || g.intN(4) == 0) {
			continue
		}
		if !first {
			g.buf = append(g.buf, ',')
		}
		first = false
		g.buf = append(g.buf, p.key...)
		if err := p.val.gen(g); err != nil {
			return err
		}
		if err := g.check(); err != nil {
			return err
		}
	}
	g.buf = append(g.buf, '}')
	return g.check()
}

type arraySchema struct {
	min, max int64
	item     node
	// unique: no two items equal (items are scalars, whose bytes tell
	// their values apart).
	unique bool
}

func (a *arraySchema) gen(g *gen) error {
	n := a.min
	if a.max > a.min && g.depth <= softDepth {
		n = g.intRange(a.min, a.max)
	}
	g.buf = append(g.buf, '[')
	var starts []int // of the items, when unique
	for i := int64(0); i < n; i++ {
		mark := len(g.buf)
		if i > 0 {
			g.buf = append(g.buf, ',')
		}
		start := len(g.buf)
		if err := a.item.gen(g); err != nil {
			return err
		}
		if a.unique {
			tries := 0
			for a.seen(g.buf, starts, start) {
				if tries++; tries > 32 {
					break
				}
				// Each look compares the item with all before it.
				if err := g.bound.tick(len(starts)); err != nil {
					return err
				}
				g.buf = g.buf[:start]
				if err := a.item.gen(g); err != nil {
					return err
				}
			}
			if tries > 32 {
				if i < a.min {
					return decoy.Errorf(decoy.EINVALID, "Could not generate %d different items for an array with uniqueItems", a.min)
				}
				g.buf = g.buf[:mark]
				break
			}
			starts = append(starts, start)
		}
		if err := g.check(); err != nil {
			return err
		}
	}
	g.buf = append(g.buf, ']')
	return nil
}

// seen reports whether the item written from start equals an earlier one.
func (a *arraySchema) seen(buf []byte, starts []int, start int) bool {
	item := buf[start:]
	for i, s := range starts {
		end := start - 1 // the comma before this item
		if i+1 < len(starts) {
			end = starts[i+1] - 1
		}
		if sameScalar(buf[s:end], item) {
			return true
		}
	}
	return false
}

// sameScalar reports whether two scalar JSON texts are equal values:
// numbers by value (1.50 and 1.5), anything else by its bytes.
func sameScalar(a, b []byte) bool {
	if string(a) == string(b) {
		return true
	}
	if len(a) == 0 || len(b) == 0 || a[0] == '"' || b[0] == '"' {
		return false
	}
	fa, errA := strconv.ParseFloat(string(a), 64)
	fb, errB := strconv.ParseFloat(string(b), 64)
	return errA == nil && errB == nil && fa == fb
}

// scalar reports whether a node writes only strings, numbers, booleans or
// null, or literals (whose bytes differ if their values do).
func scalar(n node) bool {
	switch n := n.(type) {
	case *stringSchema, *numberSchema, boolNode, anyValue, literal:
		return true
	case *choiceNode:
		if allLiteral(n) {
			return true
		}
		for _, o := range n.options {
			// Two literal objects may be equal in another key order.
			if l, ok := o.(literal); (ok && (l[0] == '{' || l[0] == '[')) || !scalar(o) {
				return false
			}
		}
		return true
	}
	return false
}

func allLiteral(c *choiceNode) bool {
	for _, o := range c.options {
		if _, ok := o.(literal); !ok {
			return false
		}
	}
	return true
}

type stringSchema struct {
	min, max int64 // max -1: none
	pattern  *regexp.Regexp
	format   func(g *gen) string
	hint     *Function
}

// fits reports whether s has a length the schema allows.
func (s *stringSchema) fits(v string) bool {
	n := int64(utf8.RuneCountInString(v))
	return n >= s.min && (s.max < 0 || n <= s.max)
}

func (s *stringSchema) gen(g *gen) error {
	switch {
	case s.pattern != nil:
		for range 20 {
			v := g.f.Regex(s.pattern.String())
			if s.pattern.MatchString(v) && s.fits(v) {
				g.buf = appendString(g.buf, v)
				return nil
			}
		}
		return decoy.Errorf(decoy.EINVALID, "Could not generate a string of the schema's length that matches the pattern %q", s.pattern.String())
	case s.format != nil:
		// A format's value must fit the lengths too: a few tries, then
		// an error rather than a value the schema refuses.
		for range 20 {
			if v := s.format(g); s.fits(v) {
				g.buf = appendString(g.buf, v)
				return nil
			}
		}
		return decoy.Errorf(decoy.EINVALID, "Could not generate a string of the schema's format within its minLength and maxLength")
	case s.hint != nil && s.hint.text != nil:
		mark := len(g.buf)
		g.buf = s.hint.text(g, append(g.buf, '"'), nil)
		if s.fits(unescapeContent(g.buf[mark+1:])) {
			g.buf = append(g.buf, '"')
			return nil
		}
		g.buf = g.buf[:mark]
	case s.hint != nil:
		if v := s.hint.run(g, nil); s.fits(v.s) {
			g.buf = appendString(g.buf, v.s)
			return nil
		}
	}
	hi := s.max
	if hi < 0 {
		hi = max(s.min, 8) + 16
	}
	n := g.intRange(s.min, hi)
	g.buf = append(g.buf, '"')
	for w := int64(0); w < n; {
		if w > 0 {
			g.buf = append(g.buf, ' ')
			w++
			if w == n {
				break
			}
		}
		word := g.pick(loremWords)
		if int64(len(word)) > n-w {
			word = word[:n-w]
		}
		g.buf = append(g.buf, word...)
		w += int64(len(word))
		if err := g.check(); err != nil {
			return err
		}
	}
	g.buf = append(g.buf, '"')
	return nil
}

type numberSchema struct {
	integer        bool
	lo, hi         float64
	exclLo, exclHi bool
	// step, when not 0, makes the number a multiple of it: k*step, k from
	// klo to khi, written with decimals digits after the point.
	step, klo, khi float64
	decimals       int
}

func (n *numberSchema) gen(g *gen) error {
	if n.step > 0 {
		k := g.intRange(int64(n.klo), int64(n.khi))
		if n.decimals == 0 {
			g.buf = strconv.AppendFloat(g.buf, float64(k)*n.step, 'f', 0, 64)
		} else {
			g.buf = strconv.AppendFloat(g.buf, float64(k)*n.step, 'f', n.decimals, 64)
		}
		return nil
	}
	x := round(g.float64Range(n.lo, n.hi), 2)
	if x < n.lo || x > n.hi || (n.exclLo && x <= n.lo) || (n.exclHi && x >= n.hi) {
		x = n.lo/2 + n.hi/2
	}
	g.buf = strconv.AppendFloat(g.buf, x, 'f', -1, 64)
	return nil
}
