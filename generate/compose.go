package generate

import (
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Composition: allOf is compiled as one schema, the merge of its
// subschemas (and of the keywords beside it); anyOf and oneOf merge each
// branch with the keywords beside them. A merge keeps every constraint of
// both sides or, where two cannot both hold, is an error that says which.
//
// Merging n schemas one after the other costs about n² (each merge reads
// what the ones before made), and telling oneOf branches apart n² pairs:
// every loop here counts its work against the compile's bound (tick), so
// that a hostile allOf of thousands of branches ends at the deadline, or
// when its client leaves, rather than minutes later. The checks that
// answer a bool (admits, disjoint, equal) answer false once it passed;
// ParseSchema then reports the bound, not what they made of it.

// maxMerges bounds the work of merging, which $refs inside allOf could
// otherwise make exponential.
const maxMerges = 10000

// patternCost is the units of work (see bound) of compiling a pattern.
const patternCost = 256

// annotations are keywords that do not constrain a value.
var annotations = map[string]bool{"title": true, "description": true, "default": true, "example": true,
	"examples": true, "readOnly": true, "writeOnly": true, "deprecated": true, "$comment": true,
	"discriminator": true, "xml": true, "externalDocs": true, "$schema": true, "$id": true, "$anchor": true,
	"$defs": true, "definitions": true, "components": true, "nullable": true}

// constraining reports whether a schema constrains a value at all.
func constraining(s jsonValue) bool {
	if s.kind != 'o' {
		return string(s.raw) != "true"
	}
	for _, m := range s.members {
		if !annotations[m.key] {
			return true
		}
	}
	return false
}

// without returns the object schema s without the keys given.
func without(s jsonValue, keys ...string) jsonValue {
	out := jsonValue{kind: 'o'}
	for _, m := range s.members {
		if !slices.Contains(keys, m.key) {
			out.members = append(out.members, m)
		}
	}
	return out
}

// set sets a key of an object schema.
func (v *jsonValue) set(key string, val jsonValue) {
	for i, m := range v.members {
		if m.key == key {
			v.members[i].val = val
			return
		}
	}
	v.members = append(v.members, member{key, val})
}

// flatten returns s with its $ref followed and its allOf merged in, so
// that what is left has neither at its top.
func (c *schemaCompiler) flatten(s jsonValue, path string, depth int) (jsonValue, error) {
	// The paths of messages are built as it goes: long keys make them
	// long.
	if err := c.tick(1 + len(s.members) + len(path)/16); err != nil {
		return s, err
	}
	if c.merges++; c.merges > maxMerges || depth > maxRefDepth {
		return s, schemaError(path, "the allOf (with its $refs) expands too far to be generated from")
	}
	if s.kind == 'l' && string(s.raw) == "true" {
		return jsonValue{kind: 'o'}, nil
	}
	if s.kind != 'o' {
		if s.kind == 'l' && string(s.raw) == "false" {
			return s, schemaError(path, "the schema false admits no value")
		}
		return s, schemaError(path, "a schema must be an object or a boolean")
	}
	if ref, ok := s.get("$ref"); ok {
		if ref.kind != 's' || !strings.HasPrefix(ref.str, "#") {
			return s, schemaError(path+".$ref", "only references within the document (#/...) are supported")
		}
		// Resolving reads the pointer, and compares its keys.
		if err := c.tick(len(ref.str)); err != nil {
			return s, err
		}
		target, tpath, ok := c.resolve(ref.str[1:])
		if !ok {
			return s, schemaError(path+".$ref", "%q points to nothing in the document", ref.str)
		}
		return c.flatten(target, tpath, depth+1)
	}
	all, ok := s.get("allOf")
	if !ok {
		return s, nil
	}
	if all.kind != 'a' || len(all.elems) == 0 {
		return s, schemaError(path+".allOf", "must be a non-empty array")
	}
	out := without(s, "allOf")
	for i, e := range all.elems {
		p := path + ".allOf[" + strconv.Itoa(i) + "]"
		f, err := c.flatten(e, p, depth+1)
		if err != nil {
			return s, err
		}
		if out, err = c.merge(out, f, path+".allOf"); err != nil {
			return s, err
		}
	}
	return out, nil
}

// merge returns a schema that admits exactly the values both a and b
// admit (both flattened), or an error naming what cannot hold together.
func (c *schemaCompiler) merge(a, b jsonValue, path string) (jsonValue, error) {
	if c.merges++; c.merges > maxMerges {
		return a, schemaError(path, "the allOf (with its $refs) expands too far to be generated from")
	}
	a, b = normalizeBounds(a), normalizeBounds(b)
	out := jsonValue{kind: 'o'}
	keys := []string{}
	for _, s := range []jsonValue{a, b} {
		for _, m := range s.members {
			if err := c.tick(1 + len(keys)); err != nil {
				return a, err
			}
			if !slices.Contains(keys, m.key) {
				keys = append(keys, m.key)
			}
		}
	}
	conflict := func(format string, args ...any) (jsonValue, error) {
		return a, schemaError(path, format, args...)
	}
	for _, k := range keys {
		if err := c.tick(1 + len(a.members) + len(b.members) + len(out.members)); err != nil {
			return a, err
		}
		va, inA := a.get(k)
		vb, inB := b.get(k)
		if !inA || !inB {
			if inA {
				out.set(k, va)
			} else {
				out.set(k, vb)
			}
			continue
		}
		switch k {
		case "type":
			t, ok := c.intersectTypes(va, vb)
			if !ok {
				return conflict("no type is allowed by all the schemas (%s and %s)", va.raw2(), vb.raw2())
			}
			out.set(k, t)
		case "minimum", "exclusiveMinimum", "minLength", "minItems",
			"maximum", "exclusiveMaximum", "maxLength", "maxItems":
			fa, errA := strconv.ParseFloat(string(va.raw), 64)
			fb, errB := strconv.ParseFloat(string(vb.raw), 64)
			if errA != nil || errB != nil {
				return conflict("%s must be a number", k)
			}
			lower := strings.HasPrefix(k, "min") || k == "exclusiveMinimum"
			if lower && fb > fa || !lower && fb < fa {
				va = vb
			}
			out.set(k, va)
		case "multipleOf":
			m, ok := mergeMultiples(va, vb)
			if !ok {
				return conflict("multipleOf %s and %s cannot be combined", va.raw, vb.raw)
			}
			out.set(k, m)
		case "pattern", "format":
			if va.kind != 's' || vb.kind != 's' || va.str != vb.str {
				return conflict("two different %ss (%s and %s) cannot be generated from together", k, va.raw2(), vb.raw2())
			}
			out.set(k, va)
		case "enum", "const":
			out.set(k, va) // intersected below
		case "uniqueItems":
			if string(vb.raw) == "true" {
				va = vb
			}
			out.set(k, va)
		case "required":
			r := va
			if va.kind != 'a' || vb.kind != 'a' {
				return conflict("required must be an array of names")
			}
			r.elems = slices.Clone(va.elems)
			for _, e := range vb.elems {
				if err := c.tick(1 + len(r.elems)); err != nil {
					return a, err
				}
				if !slices.ContainsFunc(r.elems, func(x jsonValue) bool { return x.str == e.str }) {
					r.elems = append(r.elems, e)
				}
			}
			out.set(k, r)
		case "items":
			out.set(k, allOf(va, vb))
		case "properties", "additionalProperties":
			// Done below, together.
		case "anyOf", "oneOf":
			return conflict("only one of the schemas combined may have anyOf or oneOf")
		default:
			if !annotations[k] && k != "$ref" {
				if _, ok := out.get(k); !ok {
					out.set(k, va) // an unsupported keyword: compile will say so
				}
				continue
			}
			out.set(k, va)
		}
	}
	if _, ok := a.get("anyOf"); ok {
		if _, ok := b.get("oneOf"); ok {
			return conflict("only one of the schemas combined may have anyOf or oneOf")
		}
	}
	if _, ok := a.get("oneOf"); ok {
		if _, ok := b.get("anyOf"); ok {
			return conflict("only one of the schemas combined may have anyOf or oneOf")
		}
	}
	if err := c.mergeProperties(&out, a, b, path); err != nil {
		return a, err
	}
	// enum and const: the values both allow, and that the rest of the
	// merged schema admits for certain.
	var values []jsonValue
	restricted := false
	for _, s := range []jsonValue{a, b} {
		var vs []jsonValue
		if e, ok := s.get("enum"); ok && e.kind == 'a' {
			vs = e.elems
		} else if ok {
			return conflict("enum must be a non-empty array")
		}
		if cv, ok := s.get("const"); ok {
			vs = []jsonValue{cv}
			if e, ok := s.get("enum"); ok && !slices.ContainsFunc(e.elems, c.equalTo(cv)) {
				vs = nil
			}
		}
		if vs == nil {
			if _, ok := s.get("enum"); !ok {
				if _, ok := s.get("const"); !ok {
					continue
				}
			}
		}
		if !restricted {
			values, restricted = slices.Clone(vs), true
			continue
		}
		values = slices.DeleteFunc(values, func(v jsonValue) bool { return !slices.ContainsFunc(vs, c.equalTo(v)) })
	}
	if restricted {
		rest := without(out, "enum", "const")
		values = slices.DeleteFunc(values, func(v jsonValue) bool { return !c.admits(rest, v, 0) })
		if c.bound.stopped() {
			return a, c.bound.err
		}
		if len(values) == 0 {
			return conflict("no value of the enum or const is allowed by all the schemas")
		}
		out = without(out, "const")
		out.set("enum", jsonValue{kind: 'a', elems: values})
	}
	return out, nil
}

// raw2 is a value's JSON text, for messages.
func (v jsonValue) raw2() string { return string(encodeValue(v)) }

// allOf returns the schema {"allOf":[a, b]}.
func allOf(a, b jsonValue) jsonValue {
	return jsonValue{kind: 'o', members: []member{{"allOf", jsonValue{kind: 'a', elems: []jsonValue{a, b}}}}}
}

// mergeProperties merges properties and additionalProperties: a property
// one side names and the other does not must also satisfy the other's
// additionalProperties (and is left out when that is false, unless it is
// required, which is a conflict).
func (c *schemaCompiler) mergeProperties(out *jsonValue, a, b jsonValue, path string) error {
	pa, _ := a.get("properties")
	pb, _ := b.get("properties")
	apA, hasApA := a.get("additionalProperties")
	apB, hasApB := b.get("additionalProperties")
	if len(pa.members) == 0 && len(pb.members) == 0 && !(hasApA && hasApB) {
		return nil
	}
	if (len(pa.members) > 0 && pa.kind != 'o') || (len(pb.members) > 0 && pb.kind != 'o') {
		return schemaError(path, "properties must be an object")
	}
	req, _ := out.get("required")
	required := func(k string) bool {
		return slices.ContainsFunc(req.elems, func(x jsonValue) bool { return x.str == k })
	}
	props := jsonValue{kind: 'o'}
	var keys []string
	for _, m := range append(slices.Clone(pa.members), pb.members...) {
		if err := c.tick(1 + len(keys)); err != nil {
			return err
		}
		if !slices.Contains(keys, m.key) {
			keys = append(keys, m.key)
		}
	}
	for _, k := range keys {
		if err := c.tick(1 + len(pa.members) + len(pb.members) + len(props.members) + len(req.elems)); err != nil {
			return err
		}
		var parts []jsonValue
		for _, side := range []struct {
			props    jsonValue
			ap       jsonValue
			hasAp    bool
			sideName string
		}{{pa, apA, hasApA, "first"}, {pb, apB, hasApB, "second"}} {
			if v, ok := side.props.get(k); ok {
				parts = append(parts, v)
			} else if side.hasAp {
				parts = append(parts, side.ap)
			}
		}
		if slices.ContainsFunc(parts, func(v jsonValue) bool { return v.kind == 'l' && string(v.raw) == "false" }) {
			if required(k) {
				return schemaError(path, "the property %q is required by one schema and not allowed by another", k)
			}
			continue
		}
		v := parts[0]
		if len(parts) == 2 {
			v = allOf(parts[0], parts[1])
		}
		props.set(k, v)
	}
	for _, r := range req.elems {
		if err := c.tick(1 + len(props.members) + len(keys)); err != nil {
			return err
		}
		_, named := props.get(r.str)
		if !named && !slices.Contains(keys, r.str) && (string(apA.raw) == "false" || string(apB.raw) == "false") {
			return schemaError(path, "the property %q is required by one schema and not allowed by another", r.str)
		}
	}
	out.set("properties", props)
	switch {
	case hasApA && hasApB:
		if string(apA.raw) == "false" || string(apB.raw) == "false" {
			out.set("additionalProperties", jsonValue{kind: 'l', raw: []byte("false")})
		} else {
			out.set("additionalProperties", allOf(apA, apB))
		}
	}
	return nil
}

// normalizeBounds writes draft 4's boolean exclusiveMinimum and
// exclusiveMaximum as the numbers of later drafts, so that bounds merge.
func normalizeBounds(s jsonValue) jsonValue {
	for _, k := range [][2]string{{"minimum", "exclusiveMinimum"}, {"maximum", "exclusiveMaximum"}} {
		ex, ok := s.get(k[1])
		if !ok || ex.kind != 'l' || (string(ex.raw) != "true" && string(ex.raw) != "false") {
			continue
		}
		bound, hasBound := s.get(k[0])
		s = without(s, k[1])
		if string(ex.raw) == "true" && hasBound {
			s = without(s, k[0])
			s.set(k[1], bound)
		}
	}
	return s
}

// typeList reads a type keyword.
func typeList(t jsonValue) []string {
	if t.kind == 's' {
		return []string{t.str}
	}
	var out []string
	for _, e := range t.elems {
		out = append(out, e.str)
	}
	return out
}

// intersectTypes returns the types both type keywords allow (an integer
// is a number), in a's order, each once. Past the bound, none.
func (c *schemaCompiler) intersectTypes(a, b jsonValue) (jsonValue, bool) {
	ta, tb := typeList(a), typeList(b)
	inB := make(map[string]bool, len(tb))
	for _, t := range tb {
		inB[t] = true
	}
	out := jsonValue{kind: 'a'}
	seen := map[string]bool{}
	for _, t := range ta {
		if c.tick(1) != nil {
			return jsonValue{kind: 'a'}, false
		}
		switch {
		case inB[t]:
		case t == "integer" && inB["number"]:
		case t == "number" && inB["integer"]:
			t = "integer"
		default:
			continue
		}
		if !seen[t] {
			seen[t] = true
			out.elems = append(out.elems, jsonValue{kind: 's', str: t, raw: appendString(nil, t)})
		}
	}
	return out, len(out.elems) > 0
}

// mergeMultiples returns a multipleOf that implies both, when one divides
// the other or both are integers.
func mergeMultiples(a, b jsonValue) (jsonValue, bool) {
	fa, errA := strconv.ParseFloat(string(a.raw), 64)
	fb, errB := strconv.ParseFloat(string(b.raw), 64)
	if errA != nil || errB != nil || fa <= 0 || fb <= 0 {
		return a, false
	}
	if fa < fb {
		a, b, fa, fb = b, a, fb, fa
	}
	if r := fa / fb; r == math.Trunc(r) {
		return a, true
	}
	if fa == math.Trunc(fa) && fb == math.Trunc(fb) && fa < 1<<40 && fb < 1<<40 {
		x, y := int64(fa), int64(fb)
		for y != 0 {
			x, y = y, x%y
		}
		l := int64(fa) / x * int64(fb)
		if l < 1<<53 {
			return jsonValue{kind: 'l', raw: strconv.AppendInt(nil, l, 10)}, true
		}
	}
	return a, false
}

// equal reports whether two JSON values are equal as JSON Schema compares
// them: numbers by value, objects whatever their key order. Past the
// bound, false.
func (c *schemaCompiler) equal(v, w jsonValue) bool {
	if v.kind != w.kind || c.tick(1) != nil {
		return false
	}
	switch v.kind {
	case 's':
		return v.str == w.str
	case 'l':
		fv, errV := strconv.ParseFloat(string(v.raw), 64)
		fw, errW := strconv.ParseFloat(string(w.raw), 64)
		if errV == nil && errW == nil {
			return fv == fw && !math.IsInf(fv, 0)
		}
		return string(v.raw) == string(w.raw)
	case 'a':
		return slices.EqualFunc(v.elems, w.elems, c.equal)
	}
	if len(v.members) != len(w.members) {
		return false
	}
	for _, m := range v.members {
		if c.tick(len(w.members)) != nil {
			return false
		}
		x, ok := w.get(m.key)
		if !ok || !c.equal(m.val, x) {
			return false
		}
	}
	return true
}

// equalTo returns a function that reports whether a value equals v.
func (c *schemaCompiler) equalTo(v jsonValue) func(jsonValue) bool {
	return func(w jsonValue) bool { return c.equal(v, w) }
}

// jsonType is the JSON Schema type of a value ("integer" for whole
// numbers).
func (v jsonValue) jsonType() string {
	switch v.kind {
	case 's':
		return "string"
	case 'a':
		return "array"
	case 'o':
		return "object"
	}
	switch r := string(v.raw); r {
	case "true", "false":
		return "boolean"
	case "null":
		return "null"
	default:
		if f, err := strconv.ParseFloat(r, 64); err == nil && f == math.Trunc(f) {
			return "integer"
		}
		return "number"
	}
}

// admits reports whether schema s surely admits the value v: false when
// it does not, and also whenever s has a keyword it does not check.
func (c *schemaCompiler) admits(s jsonValue, v jsonValue, depth int) bool {
	if depth > maxRefDepth || c.tick(1+len(s.members)) != nil {
		return false
	}
	if s.kind == 'l' {
		return string(s.raw) == "true"
	}
	if s.kind != 'o' {
		return false
	}
	num := func(k string) (float64, bool) {
		x, ok := s.get(k)
		if !ok {
			return 0, false
		}
		f, err := strconv.ParseFloat(string(x.raw), 64)
		return f, err == nil
	}
	vt := v.jsonType()
	var f float64
	if vt == "integer" || vt == "number" {
		f, _ = strconv.ParseFloat(string(v.raw), 64)
	}
	length := int64(-1)
	switch vt {
	case "string":
		length = int64(len([]rune(v.str)))
	case "array":
		length = int64(len(v.elems))
	}
	for _, m := range s.members {
		k, x := m.key, m.val
		if annotations[k] {
			continue
		}
		ok := true
		switch k {
		case "type":
			if c.tick(len(x.elems)) != nil {
				return false
			}
			ok = slices.ContainsFunc(typeList(x), func(t string) bool {
				return t == vt || (t == "number" && vt == "integer")
			})
		case "enum":
			ok = slices.ContainsFunc(x.elems, c.equalTo(v))
		case "const":
			ok = c.equal(x, v)
		case "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum":
			b, isNum := num(k)
			if vt != "integer" && vt != "number" {
				continue
			}
			switch {
			case x.kind == 'l' && (string(x.raw) == "true" || string(x.raw) == "false"):
				ok = false // draft 4: normalized before merging; not checked here
			case !isNum:
				ok = false
			case k == "minimum":
				ok = f >= b
			case k == "maximum":
				ok = f <= b
			case k == "exclusiveMinimum":
				ok = f > b
			default:
				ok = f < b
			}
		case "multipleOf":
			b, isNum := num(k)
			if vt == "integer" || vt == "number" {
				r := f / b
				ok = isNum && b > 0 && r == math.Trunc(r) && !math.IsInf(r, 0)
			}
		case "minLength", "maxLength":
			if vt == "string" {
				b, isNum := num(k)
				ok = isNum && (k == "minLength" && float64(length) >= b || k == "maxLength" && float64(length) <= b)
			}
		case "minItems", "maxItems":
			if vt == "array" {
				b, isNum := num(k)
				ok = isNum && (k == "minItems" && float64(length) >= b || k == "maxItems" && float64(length) <= b)
			}
		case "pattern":
			if vt == "string" {
				if c.tick(patternCost+len(x.str)+len(v.str)) != nil {
					return false
				}
				re, err := regexp.Compile(x.str)
				ok = err == nil && re.MatchString(v.str)
			}
		case "format":
			ok = vt != "string"
		case "items":
			if vt == "array" {
				for _, e := range v.elems {
					ok = ok && c.admits(x, e, depth+1)
				}
			}
		case "required":
			if vt == "object" {
				for _, r := range x.elems {
					if c.tick(1+len(v.members)) != nil {
						return false
					}
					_, has := v.get(r.str)
					ok = ok && has
				}
			}
		case "properties", "additionalProperties":
			if vt == "object" {
				props, _ := s.get("properties")
				ap, hasAp := s.get("additionalProperties")
				for _, pm := range v.members {
					if c.tick(1+len(props.members)) != nil {
						return false
					}
					if ps, isProp := props.get(pm.key); isProp {
						ok = ok && c.admits(ps, pm.val, depth+1)
					} else if hasAp {
						ok = ok && c.admits(ap, pm.val, depth+1)
					}
				}
			}
		case "uniqueItems":
			if vt == "array" && string(x.raw) == "true" {
				for i, e := range v.elems {
					ok = ok && !slices.ContainsFunc(v.elems[:i], c.equalTo(e))
				}
			}
		case "$ref":
			if c.tick(len(x.str)) != nil {
				return false
			}
			target, _, found := c.resolve(strings.TrimPrefix(x.str, "#"))
			ok = x.kind == 's' && strings.HasPrefix(x.str, "#") && found && c.admits(target, v, depth+1)
		case "allOf", "anyOf":
			any := false
			for _, e := range x.elems {
				a := c.admits(e, v, depth+1)
				if k == "allOf" && !a {
					ok = false
				}
				any = any || a
			}
			ok = ok && (k == "allOf" || any)
		default:
			ok = false
		}
		if !ok {
			return false
		}
	}
	return true
}

// disjoint reports whether no value can be valid against both schemas a
// and b (flattened), as far as can be told for certain: by their types,
// their enums, or a property both require whose schemas are disjoint (a
// discriminator), or one requires that the other forbids.
func (c *schemaCompiler) disjoint(a, b jsonValue, depth int) bool {
	if depth > maxRefDepth || a.kind != 'o' || b.kind != 'o' || c.tick(1+len(a.members)+len(b.members)) != nil {
		return false
	}
	ta, okA := a.get("type")
	tb, okB := b.get("type")
	if okA && okB {
		if _, ok := c.intersectTypes(ta, tb); !ok {
			return true
		}
	}
	values := func(s jsonValue) ([]jsonValue, bool) {
		if v, ok := s.get("const"); ok {
			return []jsonValue{v}, true
		}
		v, ok := s.get("enum")
		return v.elems, ok
	}
	va, okA := values(a)
	vb, okB := values(b)
	if okA && !slices.ContainsFunc(va, func(x jsonValue) bool { return !c.rejectsSurely(b, x) }) {
		return true
	}
	if okB && !slices.ContainsFunc(vb, func(x jsonValue) bool { return !c.rejectsSurely(a, x) }) {
		return true
	}
	// Objects: a property both require, with disjoint schemas; or one
	// that one requires and the other forbids.
	if okA || okB {
		return false
	}
	isObject := func(t jsonValue, ok bool) bool { return ok && slices.Equal(typeList(t), []string{"object"}) }
	if !isObject(ta, true) && !isObject(tb, true) {
		return false
	}
	ra, _ := a.get("required")
	rb, _ := b.get("required")
	pa, _ := a.get("properties")
	pb, _ := b.get("properties")
	for _, r := range ra.elems {
		if c.tick(1+len(rb.elems)+len(pa.members)+len(pb.members)) != nil {
			return false
		}
		if !slices.ContainsFunc(rb.elems, func(x jsonValue) bool { return x.str == r.str }) {
			if ap, ok := b.get("additionalProperties"); ok && string(ap.raw) == "false" {
				if _, named := pb.get(r.str); !named {
					return true
				}
			}
			continue
		}
		sa, okA := pa.get(r.str)
		sb, okB := pb.get(r.str)
		if !okA || !okB {
			continue
		}
		fa, errA := c.flatten(sa, "$", depth+1)
		fb, errB := c.flatten(sb, "$", depth+1)
		if errA == nil && errB == nil && c.disjoint(fa, fb, depth+1) {
			return true
		}
	}
	for _, r := range rb.elems {
		if c.tick(1+len(ra.elems)+len(pa.members)) != nil {
			return false
		}
		if ap, ok := a.get("additionalProperties"); ok && string(ap.raw) == "false" && !slices.ContainsFunc(ra.elems, func(x jsonValue) bool { return x.str == r.str }) {
			if _, named := pa.get(r.str); !named {
				return true
			}
		}
	}
	return false
}

// rejectsSurely reports whether schema s (flattened) rejects v by its
// type, enum or const alone.
func (c *schemaCompiler) rejectsSurely(s, v jsonValue) bool {
	if t, ok := s.get("type"); ok {
		vt := v.jsonType()
		if !slices.ContainsFunc(typeList(t), func(t string) bool { return t == vt || (t == "number" && vt == "integer") }) {
			return true
		}
	}
	if e, ok := s.get("enum"); ok && !slices.ContainsFunc(e.elems, c.equalTo(v)) {
		return true
	}
	if cv, ok := s.get("const"); ok && !c.equal(cv, v) {
		return true
	}
	return false
}

// compileAllOf compiles a schema with allOf. An allOf of one schema with
// nothing else that constrains (a $ref with a description) is that
// schema, so that recursion through $refs stays compiled once; anything
// more is merged into one schema.
func (c *schemaCompiler) compileAllOf(s, all jsonValue, path, name string) (node, error) {
	if all.kind != 'a' || len(all.elems) == 0 {
		return nil, schemaError(path+".allOf", "must be a non-empty array")
	}
	var only []int
	for i, e := range all.elems {
		if err := c.tick(1 + len(e.members)); err != nil {
			return nil, err
		}
		if constraining(e) {
			only = append(only, i)
		}
	}
	if len(only) <= 1 && !constraining(without(s, "allOf")) {
		if len(only) == 0 {
			return anyValue{}, nil
		}
		return c.compile(all.elems[only[0]], path+".allOf["+strconv.Itoa(only[0])+"]", name)
	}
	merged, err := c.flatten(s, path, 0)
	if err != nil {
		return nil, err
	}
	return c.compile(merged, path, name)
}

// compileChoice compiles a schema with anyOf or oneOf: each branch merged
// with the keywords beside it. Of a oneOf, only the branches that no
// value of another branch can match are generated from, so that every
// output matches exactly one.
func (c *schemaCompiler) compileChoice(s jsonValue, path, name string) (node, error) {
	key := "anyOf"
	if _, ok := s.get("oneOf"); ok {
		if _, ok := s.get("anyOf"); ok {
			return nil, schemaError(path, "anyOf and oneOf together are not supported in schemas used as templates")
		}
		key = "oneOf"
	}
	v, _ := s.get(key)
	kpath := path + "." + key
	if v.kind != 'a' || len(v.elems) == 0 {
		return nil, schemaError(kpath, "must be a non-empty array")
	}
	base := without(s, key)
	merge := constraining(base)
	// The branches as schemas of their own (flat), or nil when a branch
	// admits no value beside base.
	flat := make([]*jsonValue, len(v.elems))
	var firstErr error
	if merge || key == "oneOf" {
		for i, e := range v.elems {
			if c.bound.stopped() {
				return nil, c.bound.err
			}
			bpath := kpath + "[" + strconv.Itoa(i) + "]"
			f, err := c.flatten(e, bpath, 0)
			if err == nil && merge {
				f, err = c.merge(base, f, bpath)
			}
			if err != nil && key == "oneOf" {
				// A branch not understood may overlap the others.
				return nil, err
			}
			if err != nil {
				if firstErr == nil {
					firstErr = err
				}
				continue
			}
			flat[i] = &f
		}
	}
	n := &choiceNode{}
	var overlap [2]int
	for i, e := range v.elems {
		bpath := kpath + "[" + strconv.Itoa(i) + "]"
		if (merge || key == "oneOf") && flat[i] == nil {
			continue
		}
		if key == "oneOf" {
			alone := true
			for j, g := range flat {
				if err := c.tick(1); err != nil {
					return nil, err
				}
				if j != i && g != nil && !c.disjoint(*flat[i], *g, 0) {
					alone, overlap = false, [2]int{i, j}
					break
				}
			}
			if !alone {
				continue
			}
		}
		var o node
		var err error
		if merge {
			o, err = c.compile(*flat[i], bpath, name)
		} else {
			o, err = c.compile(e, bpath, name)
		}
		if err != nil {
			return nil, err
		}
		n.options = append(n.options, o)
	}
	switch {
	case len(n.options) > 0:
		return n, nil
	case key == "oneOf" && firstErr == nil && c.merges > maxMerges:
		// The branches may well be disjoint: telling it took more merges
		// than allowed, and each check past them answered "not for certain".
		return nil, schemaError(kpath, "the oneOf has too many branches (%d) to tell that a value of one matches no other: give it fewer", len(v.elems))
	case key == "oneOf" && firstErr == nil:
		return nil, schemaError(kpath, "no branch can be generated so that it matches only one: a value of branch %d could also match branch %d (give the branches different types, or a required property with different const or enum values)", overlap[0], overlap[1])
	case firstErr != nil:
		return nil, firstErr
	}
	return nil, schemaError(kpath, "no branch admits a value")
}
