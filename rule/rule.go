// Package rule is routes' rules (§13.1 of the contract): answers a route
// gives instead of its normal one to the requests they match. It checks
// rules as the admin API takes them (Check), compiles a route's rules once,
// when its project's routes are loaded (Compile), and asks them of a
// request (Set.Eval).
//
// A rule's when is filter conditions (§1.3) over the request seen as one
// JSON object:
//
//	{"method":"GET","path":{"id":"7"},"query":{"page":"2"},"header":{"x-mode":"slow"},"body":{…}}
//
// path holds the route's parameters, decoded; query each parameter's first
// value, decoded as the read endpoint decodes them; header each header's
// first value under its lower-case name (the Host included); body the
// request's body when it is JSON. The request is made a document of one
// record (package jsondoc) and the conditions are asked of that record by
// package query: the same parser and the same equality as the read
// endpoint's filters, not a second condition language. The document is
// built on the first rule that has conditions, with only the parts the
// route's conditions reach (the body read only when one reaches into it),
// so that rules cost a request next to nothing until one holds.
//
// It is pure: no net/http and no I/O. The server counts the rules that
// have times (decoy.RuleCounter) and writes the answers.
package rule

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/decoy-mock/decoy"
	"github.com/decoy-mock/decoy/generate"
	"github.com/decoy-mock/decoy/jsondoc"
	"github.com/decoy-mock/decoy/query"
	"github.com/decoy-mock/decoy/route"
)

// Set is a route's rules, compiled. It never changes: a change to the
// route's rules makes a new one.
type Set struct {
	rules []Compiled
	// reach is what of the request the rules' conditions read.
	reach reach
}

// Compiled is one rule of a Set.
type Compiled struct {
	// Rule is the rule as stored. Read only.
	Rule *decoy.Rule
	// Index is the rule's place among its route's rules, from 0.
	Index int

	when query.Conditions
	// broken is set for a rule stored under older checks whose
	// conditions no longer parse: it never holds.
	broken bool
	tmpl   atomic.Pointer[generate.Template]
}

// Label names the rule in the journal and the logs: its name, else its
// place among the route's rules, from 1 ("2" for the second).
func (c *Compiled) Label() string {
	if c.Rule.Name != "" {
		return c.Rule.Name
	}
	return strconv.Itoa(c.Index + 1)
}

// Template returns the rule's template compiled, compiling it within lim
// on its first use and keeping it; nil for a rule without one.
func (c *Compiled) Template(lim generate.Limits) (*generate.Template, error) {
	if len(c.Rule.Template) == 0 {
		return nil, nil
	}
	if t := c.tmpl.Load(); t != nil {
		return t, nil
	}
	t, err := generate.ParseRequestTemplate(c.Rule.Template, lim)
	if err != nil {
		return nil, err
	}
	c.tmpl.Store(t)
	return t, nil
}

// Compile compiles a route's rules: their conditions, and what of a
// request they read. Templates are compiled on their first use
// (Compiled.Template), in a turn of the server's generation. A route
// without rules has no Set (nil). rules must not change afterwards.
func Compile(rules []decoy.Rule) *Set {
	if len(rules) == 0 {
		return nil
	}
	s := &Set{rules: make([]Compiled, len(rules))}
	for i := range rules {
		c := &s.rules[i]
		c.Rule, c.Index = &rules[i], i
		when, err := query.ParseConditions(rules[i].When)
		if err != nil {
			c.broken = true
			continue
		}
		c.when = when
		for _, p := range when.Paths() {
			s.reach.add(p)
		}
	}
	return s
}

// Len returns the number of rules.
func (s *Set) Len() int { return len(s.rules) }

// Rule returns rule i.
func (s *Set) Rule(i int) *Compiled { return &s.rules[i] }

// reach is what of a request conditions (or a template) read.
type reach struct {
	method, path, body bool
	// query and header name the parameters and headers read (header
	// names in lower case, with canonical the same in canonical form, as
	// net/http keys them); all* read every one.
	query, header, canonical []string
	allQuery, allHeader      bool
}

// everything is the reach of a template, which may read any part.
var everything = reach{method: true, path: true, body: true, allQuery: true, allHeader: true}

// add adds what path (a condition's, checked or not) reads.
func (r *reach) add(path []string) {
	switch path[0] {
	case "method":
		r.method = true
	case "path":
		r.path = true
	case "body":
		r.body = true
	case "query":
		if len(path) > 1 && !slices.Contains(r.query, path[1]) {
			r.query = append(r.query, path[1])
		}
	case "header":
		// Names are lower case in the document: another never matches.
		if len(path) > 1 && !slices.Contains(r.header, path[1]) && strings.ToLower(path[1]) == path[1] {
			r.header = append(r.header, path[1])
			r.canonical = append(r.canonical, canonicalKey(path[1]))
		}
	}
}

// canonicalKey is the form net/http keys a header name by
// (textproto.CanonicalMIMEHeaderKey): each word after a '-' capitalised.
func canonicalKey(name string) string {
	b := []byte(name)
	upper := true
	for i, c := range b {
		switch {
		case upper && 'a' <= c && c <= 'z':
			b[i] = c - ('a' - 'A')
		case !upper && 'A' <= c && c <= 'Z':
			b[i] = c + ('a' - 'A')
		}
		upper = c == '-'
	}
	return string(b)
}

// Request is a request's parts, as the server hands them over; Eval reads
// only those the rules reach.
type Request struct {
	Method string
	// Params are the route's path parameters, decoded.
	Params []route.Param
	// RawQuery is the query string as sent.
	RawQuery string
	// Host is the request's Host (net/http keeps it apart from Header).
	Host string
	// Header is the request's headers, by canonical name (an
	// http.Header).
	Header map[string][]string
	// Body returns the request's body, read on the first need of it: nil
	// when there is none (or it is not to be read: too large, say).
	Body func() []byte
}

// Eval asks a Set's rules about one request. It builds the request's
// document on the first need of it and keeps it for the next rule. Not
// safe for concurrent use. An Eval may be used again for another request
// (Reset), keeping its buffers.
type Eval struct {
	set *Set
	req *Request
	doc *jsondoc.Document
	// full is set once doc holds all of the request (for a template).
	full bool
	body []byte
	read bool // body read
	// buf holds the document's bytes; scratch is what the conditions are
	// asked with, from rule to rule.
	buf     []byte
	scratch query.Scratch
}

// Eval returns an Eval of s's rules over req.
func (s *Set) Eval(req *Request) Eval { return Eval{set: s, req: req} }

// Reset makes e an Eval of s's rules over req, keeping the buffers it
// grew, up to a size. What e made for the request before (its document) is no longer
// to be used.
// A buffer grown past maxKeptBuf (by a large body) is let go, not kept
// for a request that needs none of it.
func (e *Eval) Reset(s *Set, req *Request) {
	buf, scratch := e.buf[:0], e.scratch
	if cap(buf) > maxKeptBuf {
		// The scratch points at the document made over the buffer: let
		// go of both.
		buf, scratch = nil, query.Scratch{}
	}
	*e = Eval{set: s, req: req, buf: buf, scratch: scratch}
}

// maxKeptBuf is the largest buffer an Eval keeps from one request to the
// next.
const maxKeptBuf = 64 << 10

// Next returns the first rule from index from on whose conditions hold
// for the request, or -1 when none does.
func (e *Eval) Next(from int) int {
	for i := from; i < len(e.set.rules); i++ {
		c := &e.set.rules[i]
		switch {
		case c.broken:
			continue
		case len(c.when) == 0:
			return i
		}
		if e.doc == nil {
			e.build(&e.set.reach)
		}
		if c.when.Holds(e.doc, 0, &e.scratch) {
			return i
		}
	}
	return -1
}

// Prepare makes the whole request's document now (reading the body), so
// that a template run for the request later reads nothing.
func (e *Eval) Prepare() {
	if !e.full {
		e.build(&everything)
		e.full = true
	}
}

// Built reports whether Prepare would build the request's document a
// second time (the rules built one with only what they read): with the
// body, a second copy of it.
func (e *Eval) Built() bool { return e.doc != nil && !e.full }

// Lookup reads path in the whole request (generate.Request): the JSON text
// of the first value it reaches, or false.
func (e *Eval) Lookup(path []string) ([]byte, bool) {
	e.Prepare()
	vals := e.doc.AppendValues(nil, 0, jsondoc.Path{Segs: path})
	if len(vals) == 0 {
		return nil, false
	}
	return e.doc.Text(vals[0]), true
}

// Body returns the request's body, as read for the rules (read now if it
// was not): nil when none.
func (e *Eval) Body() []byte {
	if !e.read {
		e.read = true
		if e.req.Body != nil {
			e.body = e.req.Body()
		}
	}
	return e.body
}

// build makes the request's document with the parts r reads.
func (e *Eval) build(r *reach) {
	req := e.req
	b := e.buf[:0]
	if e.doc != nil {
		b = nil // the bytes of the document made before are its for good
	}
	b = append(b, "[{"...)
	member := func(name string) {
		if len(b) > 2 {
			b = append(b, ',')
		}
		b = append(append(append(b, '"'), name...), `":`...)
	}
	if r.method {
		member("method")
		b = jsondoc.AppendQuoted(b, req.Method)
	}
	if r.path {
		member("path")
		b = append(b, '{')
		for k, p := range req.Params {
			if k > 0 {
				b = append(b, ',')
			}
			b = append(jsondoc.AppendQuoted(b, p.Name), ':')
			b = jsondoc.AppendQuoted(b, p.Value)
		}
		b = append(b, '}')
	}
	if r.allQuery || len(r.query) > 0 {
		member("query")
		b = appendQuery(b, req.RawQuery, r)
	}
	if r.allHeader || len(r.header) > 0 {
		member("header")
		b = appendHeaders(b, req, r)
	}
	withBody := len(b)
	if r.body {
		if body := e.Body(); len(body) > 0 && json.Valid(body) {
			member("body")
			b = append(b, body...)
		}
	}
	b = append(b, "}]"...)
	e.buf = b
	doc, err := jsondoc.Parse(b)
	if err != nil {
		// Only a body nested as deep as a document may be, one level
		// deeper here: left out.
		b = append(b[:withBody], "}]"...)
		if doc, err = jsondoc.Parse(b); err != nil {
			panic("rule: the request's document does not parse: " + err.Error())
		}
	}
	e.doc = doc
}

// appendQuery appends the query object: each parameter r reads (or every
// one) at its first value, names and values decoded as the read endpoint
// decodes them ('+' a space, an invalid escape kept as written).
func appendQuery(b []byte, raw string, r *reach) []byte {
	b = append(b, '{')
	first := true
	var seen []string
	for rest := raw; rest != ""; {
		var piece string
		piece, rest, _ = strings.Cut(rest, "&")
		if piece == "" {
			continue
		}
		k, v, _ := strings.Cut(piece, "=")
		name := query.Unescape(k, true)
		if !r.allQuery && !slices.Contains(r.query, name) || slices.Contains(seen, name) {
			continue
		}
		seen = append(seen, name)
		if !first {
			b = append(b, ',')
		}
		first = false
		b = append(jsondoc.AppendQuoted(b, name), ':')
		b = jsondoc.AppendQuoted(b, query.Unescape(v, true))
		if !r.allQuery && len(seen) == len(r.query) {
			break
		}
	}
	return append(b, '}')
}

// appendHeaders appends the header object: each header r reads (or every
// one) at its first value, under its lower-case name; the Host among
// them.
func appendHeaders(b []byte, req *Request, r *reach) []byte {
	b = append(b, '{')
	first := true
	add := func(name, value string) {
		if !first {
			b = append(b, ',')
		}
		first = false
		b = append(jsondoc.AppendQuoted(b, name), ':')
		b = jsondoc.AppendQuoted(b, value)
	}
	if !r.allHeader {
		for k, name := range r.header {
			if name == "host" {
				if req.Host != "" {
					add(name, req.Host)
				}
				continue
			}
			if vs := req.Header[r.canonical[k]]; len(vs) > 0 {
				add(name, vs[0])
			}
		}
		return append(b, '}')
	}
	if req.Host != "" {
		add("host", req.Host)
	}
	for name, vs := range req.Header {
		if lower := strings.ToLower(name); len(vs) > 0 && lower != "host" {
			add(lower, vs[0])
		}
	}
	return append(b, '}')
}
