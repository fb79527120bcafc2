package query

import (
	"slices"

	"github.com/decoy-mock/decoy/jsondoc"
)

// Scope is what a route adds to a request's query (§11.4 of the
// contract): the conditions of its path parameters, the array inside the
// document it works on, and, for an item route, that its answer is one
// record alone.
type Scope struct {
	// Conditions are ANDed before the request's own filters: each path
	// parameter is an $eq condition on its bound field (see Bound).
	Conditions []Condition
	// Items is the path of the array the query runs over (see
	// jsondoc.Document.Items); nil: the document itself.
	Items []string
	// One makes the answer the first record that passes Conditions,
	// alone; the request's filters, order, offset and limit are ignored.
	One bool
}

// Field is a field path that path parameters bind, compiled once.
type Field struct {
	segs []string
	path jsondoc.Path
}

// NewField compiles a field path of the §1.3 syntax, split into segments.
func NewField(segs []string) Field { return Field{segs: segs, path: jsondoc.NewPath(segs)} }

// Segs returns the field's path, split into segments.
func (f Field) Segs() []string { return f.segs }

// Bound returns the $eq condition of a path parameter: the field f equals
// value, compared as a filter's value is (§1.3).
func Bound(f Field, value string) Condition {
	c := Condition{Path: f.segs, Op: OpEq, Value: value, path: f.path}
	c.num, c.isNum = jsondoc.ParseNumber([]byte(value))
	c.keys = conditionKeys(&c)
	return c
}

// ParsePath splits a field path of the §1.3 syntax into its segments, and
// reports whether it is one (no segment empty).
func ParsePath(path string) ([]string, bool) { return parsePath(path) }

// Item returns the query of an item route: the first record that passes
// s.Conditions, alone.
func Item(s Scope) *Query {
	return &Query{Filters: s.Conditions, Items: s.Items, One: true, Limit: 1, processing: true}
}

// Within returns q narrowed by what a route adds. q is not changed: it may
// be shared (see Compile). With s.One it is Item(s): the request's own
// query does not count.
func (q *Query) Within(s Scope) *Query {
	if s.One {
		return Item(s)
	}
	if len(s.Conditions) == 0 && s.Items == nil {
		return q
	}
	nq := *q
	if len(s.Conditions) > 0 {
		nq.Filters = append(slices.Clip(s.Conditions), q.Filters...)
		nq.processing = true
	}
	nq.Items = s.Items
	return &nq
}
