package route

import (
	"errors"
	"fmt"
	"math/bits"
	"strings"

	"github.com/decoy-mock/decoy"
)

// Methods is a set of route methods (decoy.RouteMethods), as in an Allow
// header. HEAD has no bit of its own: a set holds it when it holds GET.
type Methods uint8

// The methods of decoy.RouteMethods, in the order of an Allow header.
const (
	GET Methods = 1 << iota
	POST
	PUT
	PATCH
	DELETE

	numMethods = iota
)

// methodNames are the names of the bits of Methods, in bit order.
var methodNames = [numMethods]string{"GET", "POST", "PUT", "PATCH", "DELETE"}

// allowHeaders holds String of every set, so that an answer's Allow costs
// no allocation.
var allowHeaders = func() (h [1 << numMethods]string) {
	for m := range h {
		var names []string
		for i, name := range methodNames {
			if m&(1<<i) != 0 {
				names = append(names, name)
				if name == "GET" {
					names = append(names, "HEAD")
				}
			}
		}
		h[m] = strings.Join(names, ", ")
	}
	return h
}()

// methodBit is the bit of a route method, 0 for any other.
func methodBit(method string) Methods {
	for i, name := range methodNames {
		if method == name {
			return 1 << i
		}
	}
	return 0
}

// requestBit is the bit of the routes that answer a request's method: a
// GET route answers HEAD.
func requestBit(method string) Methods {
	if method == "HEAD" {
		return GET
	}
	return methodBit(method)
}

// String is the set as an Allow header: "GET, HEAD, POST, PUT, PATCH,
// DELETE" with the methods not in it left out; "" for none.
func (m Methods) String() string { return allowHeaders[m&(1<<numMethods-1)] }

// Has reports whether a request of that method would find a route: HEAD
// when GET is in the set.
func (m Methods) Has(method string) bool {
	b := requestBit(method)
	return b != 0 && m&b != 0
}

// Table is a project's routes, compiled into a tree for matching. It is
// immutable, so that any number of requests match against it at once; a
// change to the routes compiles a new one. A nil *Table has no routes.
type Table struct {
	root node
	n    int
}

// node is a position in the tree: the path of segments that leads to it
// from the root.
type node struct {
	// Literal children, by decoded text: in keys and kids while there are
	// few (a linear scan beats hashing), in lits past maxSlice.
	keys []string
	kids []*node
	lits map[string]*node
	// param is the child for any segment, the one parameter child: all
	// parameter names at one position share it, as they share a shape.
	param *node
	// routes ending here, by method bit index.
	routes [numMethods]*entry
	here   Methods // the methods of routes
	below  Methods // the methods of routes here and in every descendant
}

// maxSlice is the most literal children a node keeps in a slice.
const maxSlice = 8

type entry struct {
	route *decoy.Route
	tmpl  *Template
}

func (n *node) literal(s string) *node {
	if n.lits != nil {
		return n.lits[s]
	}
	for i, k := range n.keys {
		if k == s {
			return n.kids[i]
		}
	}
	return nil
}

func (n *node) addLiteral(s string) *node {
	if c := n.literal(s); c != nil {
		return c
	}
	c := &node{}
	if n.lits == nil && len(n.keys) < maxSlice {
		n.keys = append(n.keys, s)
		n.kids = append(n.kids, c)
		return c
	}
	if n.lits == nil {
		n.lits = make(map[string]*node, 2*maxSlice)
		for i, k := range n.keys {
			n.lits[k] = n.kids[i]
		}
		n.keys, n.kids = nil, nil
	}
	n.lits[s] = c
	return c
}

// Compile builds the table of a project's routes, once per change to them.
//
// It always returns a usable table, so that one bad route does not take a
// project's others down: a route it cannot place is left out and named in
// the error, for the caller to log. That is a route whose method or path
// does not validate (the stores refuse those, but a route stored under
// older rules could be one), or the second of two routes of one method and
// shape (which the stores refuse with 409): the first in routes stays,
// which is the older as RouteStore.ListRoutes lists them. Nil routes are
// skipped.
func Compile(routes []*decoy.Route) (*Table, error) {
	t := &Table{}
	var errs []error
	for _, r := range routes {
		if r == nil {
			continue
		}
		bit := methodBit(r.Method)
		if bit == 0 {
			errs = append(errs, fmt.Errorf("route %s left out: invalid method %q", r.ID, r.Method))
			continue
		}
		tmpl, err := Parse(r.Path)
		if err != nil {
			errs = append(errs, fmt.Errorf("route %s left out: %w", r.ID, err))
			continue
		}
		n := &t.root
		for i, s := range tmpl.segs {
			if tmpl.param[i] {
				if n.param == nil {
					n.param = &node{}
				}
				n = n.param
			} else {
				n = n.addLiteral(s)
			}
		}
		i := bitIndex(bit)
		if e := n.routes[i]; e != nil {
			errs = append(errs, fmt.Errorf("route %s left out: %s %s has the shape of route %s (%s)", r.ID, r.Method, r.Path, e.route.ID, e.route.Path))
			continue
		}
		n.routes[i] = &entry{route: r, tmpl: tmpl}
		n.here |= bit
		t.n++
	}
	t.root.fillBelow()
	return t, errors.Join(errs...)
}

// fillBelow sets below in n and its descendants, and returns n's.
func (n *node) fillBelow() Methods {
	n.below = n.here
	for _, c := range n.kids {
		n.below |= c.fillBelow()
	}
	for _, c := range n.lits {
		n.below |= c.fillBelow()
	}
	if n.param != nil {
		n.below |= n.param.fillBelow()
	}
	return n.below
}

// bitIndex is the index of a set of one method in node.routes.
func bitIndex(b Methods) int { return bits.TrailingZeros8(uint8(b)) }

// Len is the number of routes in the table.
func (t *Table) Len() int {
	if t == nil {
		return 0
	}
	return t.n
}

// Param is a path parameter of a matched route and its value, the request's
// segment percent-decoded.
type Param struct {
	Name, Value string
}

// Match is the outcome of matching a request.
type Match struct {
	// Route is the route that answers, nil when none does.
	Route *decoy.Route
	// Template is Route's parsed path.
	Template *Template
	// Params are Route's parameters, in the order of its path.
	Params []Param
	// Allowed, on a miss, are the methods of the routes whose path matches
	// the request's: none is a 404 (§11.3: "No route for …"), some a 405
	// with Allow: Allowed.String(). It is not filled in on a hit.
	Allowed Methods
}

// Match finds the route that answers method at escapedPath: the path after
// the project's prefix (/p/{slug}) as it came on the wire, still escaped.
// A GET route answers HEAD. An empty path is the root "/".
//
// A trailing '/' is ignored; segments are split on '/' and each is
// percent-decoded once ("%2F" is a '/' inside the segment). A path with an
// empty segment ("/a//b"), an invalid escape ("%zz"; net/http refuses those
// before a handler runs) or more than MaxSegments segments matches nothing.
//
// Among the routes of the method whose templates match the path, the one
// with a literal at the leftmost position where their templates differ
// wins. Routes of other methods do not take part: with GET /users/me and
// DELETE /users/{id}, DELETE /users/me matches the second.
func (t *Table) Match(method, escapedPath string) Match {
	var buf [MaxSegments]string
	segs, ok := split(escapedPath, &buf)
	if !ok || t == nil {
		return Match{}
	}
	if want := requestBit(method); want != 0 {
		if e := t.root.find(segs, want); e != nil {
			m := Match{Route: e.route, Template: e.tmpl}
			if len(e.tmpl.names) > 0 {
				m.Params = make([]Param, len(e.tmpl.names))
				for k, name := range e.tmpl.names {
					m.Params[k] = Param{Name: name, Value: segs[e.tmpl.at[k]]}
				}
			}
			return m
		}
	}
	var allowed Methods
	t.root.allowed(segs, &allowed)
	return Match{Allowed: allowed}
}

// Allowed returns the methods of the routes whose path matches escapedPath
// (as Match reads it): what a CORS preflight there allows, none when no
// route's path matches.
func (t *Table) Allowed(escapedPath string) Methods {
	var buf [MaxSegments]string
	segs, ok := split(escapedPath, &buf)
	if !ok || t == nil {
		return 0
	}
	var allowed Methods
	t.root.allowed(segs, &allowed)
	return allowed
}

// find returns the route of a method in want that matches segs from n:
// depth first, the literal child before the parameter child, so that the
// first found is the one with a literal leftmost where two differ. A
// subtree with no route of the method is not entered.
func (n *node) find(segs []string, want Methods) *entry {
	if len(segs) == 0 {
		if n.here&want == 0 {
			return nil
		}
		return n.routes[bitIndex(want)]
	}
	if c := n.literal(segs[0]); c != nil && c.below&want != 0 {
		if e := c.find(segs[1:], want); e != nil {
			return e
		}
	}
	if c := n.param; c != nil && c.below&want != 0 {
		return c.find(segs[1:], want)
	}
	return nil
}

// allowed adds to m the methods of every route that matches segs from n.
func (n *node) allowed(segs []string, m *Methods) {
	if len(segs) == 0 {
		*m |= n.here
		return
	}
	if c := n.literal(segs[0]); c != nil {
		c.allowed(segs[1:], m)
	}
	if c := n.param; c != nil {
		c.allowed(segs[1:], m)
	}
}

// split splits an escaped request path into its decoded segments, in buf.
// It reports false when the path matches no template: it does not start
// with '/', has an empty segment or an invalid escape, or has more than
// MaxSegments segments. Without escapes, segments are substrings of p;
// with some, they share one allocation.
func split(p string, buf *[MaxSegments]string) ([]string, bool) {
	if p == "" || p == "/" {
		return buf[:0], true
	}
	if p[0] != '/' {
		return nil, false
	}
	p = p[1:]
	if p[len(p)-1] == '/' {
		p = p[:len(p)-1] // a trailing '/' is ignored; "//" leaves one empty segment
	}
	// One pass over the bytes, rather than a search per segment: segments
	// are short.
	n, start, escaped := 0, 0, false
	for i := 0; i <= len(p); i++ {
		if i < len(p) && p[i] != '/' {
			escaped = escaped || p[i] == '%'
			continue
		}
		if i == start || n == MaxSegments {
			return nil, false
		}
		buf[n] = p[start:i]
		n++
		start = i + 1
	}
	if escaped {
		var dec strings.Builder
		dec.Grow(len(p))
		var ends [MaxSegments]int
		for i, s := range buf[:n] {
			if !unescape(&dec, s) {
				return nil, false
			}
			ends[i] = dec.Len()
		}
		d, start := dec.String(), 0
		for i := range n {
			buf[i] = d[start:ends[i]]
			start = ends[i]
		}
	}
	return buf[:n], true
}

// unescape writes s percent-decoded to b; false when an escape is not '%'
// and two hex digits.
func unescape(b *strings.Builder, s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '%' {
			b.WriteByte(c)
			continue
		}
		if i+2 >= len(s) {
			return false
		}
		hi, ok1 := unhex(s[i+1])
		lo, ok2 := unhex(s[i+2])
		if !ok1 || !ok2 {
			return false
		}
		b.WriteByte(hi<<4 | lo)
		i += 2
	}
	return true
}

func unhex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}
