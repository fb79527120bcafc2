package query

import (
	"github.com/decoy-mock/decoy/jsondoc"
)

// Conditions are filter conditions (§1.3) asked of one record at a time
// rather than run over an array: a rule's when (§13.1 of the contract),
// which holds or not for a request seen as a document of one record. They
// are parsed as filters are, and compared as filters are: the same
// equality (matcher) as the index and the scan of a query, so that a
// condition holds for a record exactly when the filters of the same text
// keep it.
type Conditions []Condition

// ParseConditions parses conditions in the decoded form of the filters
// parameter (§1.2): split on '&', each condition on its first '=', both
// sides percent-decoded once more ('+' stays a '+'). Its errors are those
// of filters (EINVALID "Unsupported operator: $gt", "Invalid filter: …",
// "Too many filter conditions: …"). An empty text is no condition: it
// always holds.
func ParseConditions(text string) (Conditions, error) {
	if text == "" {
		return nil, nil
	}
	cs, err := parseFilters(text)
	return Conditions(cs), err
}

// Paths returns the path of each condition, in order (segments as
// parsed; the caller must not change them).
func (cs Conditions) Paths() [][]string {
	paths := make([][]string, len(cs))
	for k := range cs {
		paths[k] = cs[k].Path
	}
	return paths
}

// Scratch holds what Holds works with, for a caller that asks many
// conditions of one record in a row (the rules of a route, of one
// request): its buffers, and the values each path reached in the record,
// so that the conditions of several rules on one path (header.x-mode, say)
// walk the record once between them. For one goroutine at a time.
type Scratch struct {
	m matcher
	// doc and rec are the record the values were reached in; keys[:n]
	// name the paths (jsondoc.Path.Key) whose values are vals[:n]. The
	// arrays past n are kept for reuse.
	doc  *jsondoc.Document
	rec  int
	n    int
	keys []string
	vals [][]jsondoc.Value
}

// values returns the values p reaches in record i of d.
func (s *Scratch) values(d *jsondoc.Document, i int, p jsondoc.Path) []jsondoc.Value {
	if s.doc != d || s.rec != i {
		s.doc, s.rec, s.n = d, i, 0
	}
	for k := range s.n {
		if s.keys[k] == p.Key {
			return s.vals[k]
		}
	}
	if s.n == len(s.vals) {
		s.keys, s.vals = append(s.keys, ""), append(s.vals, nil)
	}
	s.keys[s.n], s.vals[s.n] = p.Key, d.AppendValues(s.vals[s.n][:0], i, p)
	s.n++
	return s.vals[s.n-1]
}

// Holds reports whether every condition holds for record i of the array
// document d: the values its path reaches there include one equal to its
// value ($eq, $eqi), or include none ($ne, $nei). s, when not nil, is
// scratch space to reuse, and remembers what each path reached in the
// record for the next call about it.
func (cs Conditions) Holds(d *jsondoc.Document, i int, s *Scratch) bool {
	if len(cs) == 0 {
		return true
	}
	if s == nil {
		s = new(Scratch)
	}
	for k := range cs {
		c := &cs[k]
		s.m.c, s.m.fold = c, c.Op.folded()
		if s.m.anyEqual(d, s.values(d, i, c.path)) == c.Op.negated() {
			return false
		}
	}
	return true
}
