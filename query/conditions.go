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

// Holds reports whether every condition holds for record i of the array
// document d: the values its path reaches there include one equal to its
// value ($eq, $eqi), or include none ($ne, $nei).
func (cs Conditions) Holds(d *jsondoc.Document, i int) bool {
	if len(cs) == 0 {
		return true
	}
	var buf [4]jsondoc.Value
	var m matcher
	for k := range cs {
		c := &cs[k]
		m.c, m.fold = c, c.Op.folded()
		vals := d.AppendValues(buf[:0], i, c.path)
		if m.anyEqual(d, vals) == c.Op.negated() {
			return false
		}
	}
	return true
}
