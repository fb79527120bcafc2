package generate

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/decoy-mock/decoy"
)

// ParseTemplate compiles a JSON template: any JSON, in which an object
// {"$repeat": N or [min, max], "$item": T} becomes an array of N items made
// from T, and a string holding {{ expression }} is filled in (see
// Functions). It stops at lim's Deadline, or once its Done is closed.
func ParseTemplate(body []byte, lim Limits) (*Template, error) {
	return parseTemplate(body, lim, false)
}

// ParseRequestTemplate compiles the template of a rule (§13.1 of the
// contract): a JSON template, as ParseTemplate compiles one, whose
// expressions may also read the request the rule answers:
// {{ request.method }}, {{ request.path.id }}, {{ request.query.page }},
// {{ request.header.x-user }}, {{ request.body.customer.name }} (see
// Request). Template.RequestReads lists what it reads; RunRequest runs it
// for a request.
func ParseRequestTemplate(body []byte, lim Limits) (*Template, error) {
	return parseTemplate(body, lim, true)
}

func parseTemplate(body []byte, lim Limits, request bool) (*Template, error) {
	c := &compiler{bound: newBound(lim), request: request}
	if err := c.bound.check(); err != nil {
		return nil, err
	}
	v, err := decodeJSON(body, &c.bound)
	if err != nil {
		return nil, err
	}
	root, err := c.compile(v, "$", 0, false)
	if c.bound.check() != nil {
		return nil, c.bound.err
	}
	if err != nil {
		return nil, err
	}
	return &Template{root: root, size: len(body), reads: c.reads}, nil
}

// jsonValue is a JSON value with its objects' members in order: the key
// order of a template is kept in its output.
type jsonValue struct {
	kind    byte // 'o' object, 'a' array, 's' string, 'l' other literal (number, true, false, null)
	members []member
	elems   []jsonValue
	str     string
	raw     []byte // the literal's JSON text
}

type member struct {
	key string
	val jsonValue
}

// decodeJSON reads one JSON value, nothing after it, within b.
func decodeJSON(body []byte, b *bound) (jsonValue, error) {
	if !utf8.Valid(body) {
		return jsonValue{}, decoy.Errorf(decoy.EINVALID, "Invalid JSON: not valid UTF-8 (%s)", decoy.BadUTF8At(body))
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	v, err := decodeValue(dec, 0, b)
	if err == nil {
		if _, err2 := dec.Token(); err2 != io.EOF {
			err = errors.New("data after the end of the JSON value")
		}
	}
	if err != nil {
		var de *decoy.Error
		if errors.As(err, &de) {
			return v, err
		}
		return v, decoy.Errorf(decoy.EINVALID, "Invalid JSON: %v", err)
	}
	return v, nil
}

func decodeValue(dec *json.Decoder, depth int, b *bound) (jsonValue, error) {
	if err := b.tick(decodeStep); err != nil {
		return jsonValue{}, err
	}
	if depth > maxDepth {
		return jsonValue{}, decoy.Errorf(decoy.EINVALID, "Template nested too deeply: at most %d levels of arrays and objects", maxDepth)
	}
	tok, err := dec.Token()
	if err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return jsonValue{}, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			v := jsonValue{kind: 'o'}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return v, err
				}
				key, _ := kt.(string)
				val, err := decodeValue(dec, depth+1, b)
				if err != nil {
					return v, err
				}
				v.members = append(v.members, member{key, val})
			}
			_, err := dec.Token()
			return v, err
		case '[':
			v := jsonValue{kind: 'a'}
			for dec.More() {
				val, err := decodeValue(dec, depth+1, b)
				if err != nil {
					return v, err
				}
				v.elems = append(v.elems, val)
			}
			_, err := dec.Token()
			return v, err
		}
		return jsonValue{}, errors.New("unexpected " + t.String())
	case string:
		return jsonValue{kind: 's', str: t, raw: appendString(nil, t)}, nil
	case json.Number:
		return jsonValue{kind: 'l', raw: []byte(t)}, nil
	case bool:
		return jsonValue{kind: 'l', raw: []byte(strconv.FormatBool(t))}, nil
	default: // nil
		return jsonValue{kind: 'l', raw: []byte("null")}, nil
	}
}

// decodeStep is the units of work (see bound) of decoding one JSON value.
const decodeStep = 8

// compiler turns a template's JSON into nodes.
type compiler struct {
	bound bound
	// request is set for a rule's template, which may read the request
	// (ParseRequestTemplate); reads are the paths it reads.
	request bool
	reads   [][]string
}

// compile compiles v, found at path; inRepeat says whether index has a
// meaning there.
func (c *compiler) compile(v jsonValue, path string, depth int, inRepeat bool) (node, error) {
	if err := c.bound.tick(runStep + len(v.str)/64); err != nil {
		return nil, err
	}
	switch v.kind {
	case 's':
		return c.compileString(v.str, path, inRepeat)
	case 'l':
		return literal(v.raw), nil
	case 'a':
		elems := make([]node, len(v.elems))
		for i, e := range v.elems {
			n, err := c.compile(e, path+"["+strconv.Itoa(i)+"]", depth+1, inRepeat)
			if err != nil {
				return nil, err
			}
			elems[i] = n
		}
		return fold(&arrayNode{elems: elems}), nil
	}
	// An object.
	if rep, item, ok := repeatMembers(v); ok {
		return c.compileRepeat(rep, item, v, path, depth)
	}
	fields := make([]field, len(v.members))
	for i, m := range v.members {
		if m.key == "$item" {
			return nil, decoy.Errorf(decoy.EINVALID, "%s: $item without $repeat", path)
		}
		n, err := c.compile(m.val, childPath(path, m.key), depth+1, inRepeat)
		if err != nil {
			return nil, err
		}
		fields[i] = field{key: append(appendString(nil, m.key), ':'), val: n}
	}
	return fold(&objectNode{fields: fields}), nil
}

// repeatMembers returns the $repeat and $item members of an object, if it
// has a $repeat.
func repeatMembers(v jsonValue) (rep, item *jsonValue, ok bool) {
	for i := range v.members {
		switch v.members[i].key {
		case "$repeat":
			rep, ok = &v.members[i].val, true
		case "$item":
			item = &v.members[i].val
		}
	}
	return rep, item, ok
}

func (c *compiler) compileRepeat(rep, item *jsonValue, v jsonValue, path string, depth int) (node, error) {
	for _, m := range v.members {
		if m.key != "$repeat" && m.key != "$item" {
			return nil, decoy.Errorf(decoy.EINVALID, "%s: an object with $repeat has only $repeat and $item, not %q", path, m.key)
		}
	}
	if item == nil {
		return nil, decoy.Errorf(decoy.EINVALID, "%s: $repeat without $item", path)
	}
	const what = "a count of 0 or more, or [min, max]"
	var lo, hi int64
	var err error
	switch rep.kind {
	case 'l':
		lo, err = parseCount(rep.raw)
		hi = lo
	case 'a':
		if len(rep.elems) != 2 || rep.elems[0].kind != 'l' || rep.elems[1].kind != 'l' {
			err = errors.New(what)
			break
		}
		if lo, err = parseCount(rep.elems[0].raw); err == nil {
			hi, err = parseCount(rep.elems[1].raw)
		}
		if err == nil && lo > hi {
			err = errors.New("[min, max] with min greater than max")
		}
	default:
		err = errors.New(what)
	}
	if err != nil {
		return nil, decoy.Errorf(decoy.EINVALID, "%s.$repeat: must be %s", path, what)
	}
	n, err := c.compile(*item, path, depth+1, true)
	if err != nil {
		return nil, err
	}
	return &repeatNode{min: lo, max: hi, item: n}, nil
}

// maxRepeat is the largest count a $repeat takes: far more than
// --max-data-bytes lets through, and small enough to add without overflow.
const maxRepeat = 1 << 40

func parseCount(raw []byte) (int64, error) {
	n, err := strconv.ParseInt(string(raw), 10, 64)
	if err != nil || n < 0 || n > maxRepeat {
		return 0, errors.New("not a count")
	}
	return n, nil
}

var plainKey = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// childPath is the path of member key of the object at path.
func childPath(path, key string) string {
	if plainKey.MatchString(key) {
		return path + "." + key
	}
	return path + "[" + string(appendString(nil, key)) + "]"
}

// fold turns an array or object whose parts are all literals into one
// literal.
func fold(n node) node {
	var parts []node
	switch n := n.(type) {
	case *arrayNode:
		parts = n.elems
	case *objectNode:
		for _, f := range n.fields {
			parts = append(parts, f.val)
		}
	}
	for _, p := range parts {
		if _, ok := p.(literal); !ok {
			return n
		}
	}
	g := &gen{}
	_ = n.gen(g) // literals cannot fail
	return literal(g.buf)
}

type field struct {
	key []byte // "key":
	val node
}

type objectNode struct{ fields []field }

func (o *objectNode) gen(g *gen) error {
	g.buf = append(g.buf, '{')
	for i, f := range o.fields {
		if i > 0 {
			g.buf = append(g.buf, ',')
		}
		g.buf = append(g.buf, f.key...)
		if err := f.val.gen(g); err != nil {
			return err
		}
		if err := g.check(); err != nil {
			return err
		}
	}
	g.buf = append(g.buf, '}')
	return nil
}

type arrayNode struct{ elems []node }

func (a *arrayNode) gen(g *gen) error {
	g.buf = append(g.buf, '[')
	for i, e := range a.elems {
		if i > 0 {
			g.buf = append(g.buf, ',')
		}
		if err := e.gen(g); err != nil {
			return err
		}
		if err := g.check(); err != nil {
			return err
		}
	}
	g.buf = append(g.buf, ']')
	return nil
}

type repeatNode struct {
	min, max int64
	item     node
}

func (r *repeatNode) gen(g *gen) error {
	n := r.min
	if r.max > r.min {
		n = g.intRange(r.min, r.max)
	}
	outer := g.index
	g.buf = append(g.buf, '[')
	for i := int64(0); i < n; i++ {
		if i > 0 {
			g.buf = append(g.buf, ',')
		}
		g.index = int(i)
		if err := r.item.gen(g); err != nil {
			return err
		}
		if err := g.check(); err != nil {
			return err
		}
	}
	g.buf = append(g.buf, ']')
	g.index = outer
	return nil
}

// compileString compiles a template string: a literal, one expression
// (which gives its own JSON type), or text with expressions in it (a
// string).
func (c *compiler) compileString(s, path string, inRepeat bool) (node, error) {
	if !strings.Contains(s, "{{") {
		return literal(appendString(nil, s)), nil
	}
	var parts []textPart
	rest := s
	for {
		i := strings.Index(rest, "{{")
		if i < 0 {
			if rest != "" {
				parts = append(parts, textPart{lit: appendStringContent(nil, rest)})
			}
			break
		}
		if i > 0 {
			parts = append(parts, textPart{lit: appendStringContent(nil, rest[:i])})
		}
		x, n, err := parseExpr(rest[i+2:], inRepeat)
		if err == nil && x.request != nil {
			if !c.request {
				err = errors.New("request is only known to the template of a rule, which answers a request")
			} else {
				c.reads = append(c.reads, x.request)
			}
		}
		if err != nil {
			return nil, decoy.Errorf(decoy.EINVALID, "%s: %s", path, err.Error())
		}
		parts = append(parts, textPart{expr: x})
		rest = rest[i+2+n:]
	}
	if len(parts) == 1 && parts[0].expr != nil {
		return &exprNode{x: parts[0].expr}, nil
	}
	return &textNode{parts: parts}, nil
}

// textPart is a piece of a template string: literal text (escaped for a
// JSON string) or an expression.
type textPart struct {
	lit  []byte
	expr *expr
}

// textNode is a string with expressions in it.
type textNode struct{ parts []textPart }

func (t *textNode) gen(g *gen) error {
	g.buf = append(g.buf, '"')
	for _, p := range t.parts {
		if p.expr == nil {
			g.buf = append(g.buf, p.lit...)
			continue
		}
		var err error
		if g.buf, err = p.expr.appendText(g, g.buf); err != nil {
			return err
		}
		if err := g.check(); err != nil {
			return err
		}
	}
	g.buf = append(g.buf, '"')
	return nil
}

// exprNode is a string that is exactly one expression: its value, with its
// own JSON type.
type exprNode struct{ x *expr }

func (e *exprNode) gen(g *gen) (err error) {
	g.buf, err = e.x.appendJSON(g, g.buf)
	return err
}
