package query

import (
	"math"
	"strings"

	"github.com/decoy-mock/decoy"
	"github.com/decoy-mock/decoy/jsondoc"
)

// Op is a filter operator.
type Op uint8

// Filter operators.
const (
	OpEq  Op = iota // equals, case-sensitive
	OpEqi           // equals, case-insensitive
	OpNe            // not equals, case-sensitive
	OpNei           // not equals, case-insensitive
)

var opNames = map[string]Op{"$eq": OpEq, "$eqi": OpEqi, "$ne": OpNe, "$nei": OpNei}

// negated reports whether op keeps the records that do not match.
func (op Op) negated() bool { return op == OpNe || op == OpNei }

// folded reports whether op compares with Unicode simple case folding.
func (op Op) folded() bool { return op == OpEqi || op == OpNei }

// Condition is one filter condition: the values its path reaches must (or,
// negated, must not) include one equal to Value.
type Condition struct {
	Path  []string
	Op    Op
	Value string

	num   jsondoc.Decimal // Value as a number, when isNum
	isNum bool
	path  jsondoc.Path
	// keys are the index keys of the values equal to Value (see
	// appendValueKey): as a string, as a number, as a literal.
	keys []string
}

// Query is a compiled set of read parameters.
type Query struct {
	Filters []Condition
	OrderBy []string // nil: keep the stored order
	Desc    bool
	Offset  int64
	Limit   int64 // -1: no limit
	// Items is the path of the array the query runs over (see Within);
	// nil: the document itself.
	Items []string
	// One: the answer is the first selected record alone (see Within).
	One bool

	processing bool
	orderPath  jsondoc.Path
}

// Processing reports whether the query selects or reorders records, so that
// the answer is built from the selected elements rather than being the stored
// document unchanged.
func (q *Query) Processing() bool { return q.processing }

// MaxConditions is the most filter conditions a request may have. Each
// condition on a new path costs a pass over the document, so an unbounded
// number would let one request keep a core busy.
const MaxConditions = 32

// Compile validates p and returns the query it describes. Validation runs in
// the order filters, order_direction, offset, limit; the first failure is
// returned as a *decoy.Error with code EINVALID and the client-facing text.
// The query is never changed afterwards: it may be shared.
func Compile(p Params) (*Query, error) {
	q := &Query{Limit: -1}
	q.processing = p.Filters != "" || p.OrderBy != "" || p.Offset != "" || p.Limit != ""
	if p.Filters != "" {
		var err error
		if q.Filters, err = parseFilters(p.Filters); err != nil {
			return nil, err
		}
	}
	switch d := p.OrderDirection; {
	case d == "" || asciiEqualFold(d, "asc"):
	case asciiEqualFold(d, "desc"):
		q.Desc = true
	default:
		return nil, decoy.Errorf(decoy.EINVALID, "order_direction must be asc or desc")
	}
	if p.OrderBy != "" {
		// order_by never fails: a path that reaches nothing sorts as missing.
		q.OrderBy = strings.Split(p.OrderBy, ".")
		q.orderPath = jsondoc.NewPath(q.OrderBy)
	}
	var err error
	if q.Offset, err = parseCount(p.Offset, "Offset", 0); err != nil {
		return nil, err
	}
	if q.Limit, err = parseCount(p.Limit, "Limit", -1); err != nil {
		return nil, err
	}
	return q, nil
}

// parseFilters parses the decoded value of filters: conditions split on
// '&' (an empty one between separators is nothing), at most
// MaxConditions of them.
func parseFilters(filters string) ([]Condition, error) {
	var cs []Condition
	for _, raw := range strings.Split(filters, "&") {
		if raw == "" {
			continue // "a=1&" or "a=1&&b=2": nothing between the separators
		}
		if len(cs) == MaxConditions {
			return nil, decoy.Errorf(decoy.EINVALID, "Too many filter conditions: at most %d", MaxConditions)
		}
		c, err := parseCondition(raw)
		if err != nil {
			return nil, err
		}
		cs = append(cs, c)
	}
	return cs, nil
}

// parseCondition parses one condition: path=value or path[$op]=value. Both
// sides are percent-decoded once more, keeping '+' as it is.
func parseCondition(raw string) (Condition, error) {
	lhs, rhs, ok := strings.Cut(raw, "=")
	if !ok {
		return Condition{}, invalidFilter(Unescape(raw, false))
	}
	lhs, rhs = Unescape(lhs, false), Unescape(rhs, false)
	c := Condition{Value: rhs, Op: OpEq}
	path := lhs
	opText, hasOp := "", false
	if open := strings.IndexByte(lhs, '['); open >= 0 {
		rest := lhs[open+1:]
		end := strings.IndexByte(rest, ']')
		if end < 0 || strings.IndexByte(rest[:end], '[') >= 0 || end != len(rest)-1 {
			// Unclosed, nested, repeated, or followed by text.
			return Condition{}, invalidFilter(lhs + "=" + rhs)
		}
		path, opText, hasOp = lhs[:open], rest[:end], true
	}
	segs, ok := parsePath(path)
	if !ok {
		return Condition{}, invalidFilter(lhs + "=" + rhs)
	}
	if hasOp {
		op, ok := opNames[opText]
		if !ok {
			return Condition{}, decoy.Errorf(decoy.EINVALID, "Unsupported operator: %s", opText)
		}
		c.Op = op
	}
	c.Path = segs
	c.path = jsondoc.NewPath(segs)
	c.num, c.isNum = jsondoc.ParseNumber([]byte(rhs))
	c.keys = conditionKeys(&c)
	return c, nil
}

func invalidFilter(cond string) error {
	return decoy.Errorf(decoy.EINVALID, "Invalid filter: %s", cond)
}

// parsePath splits a filter path into its segments; none may be empty.
func parsePath(path string) ([]string, bool) {
	if path == "" {
		return nil, false
	}
	segs := strings.Split(path, ".")
	for _, s := range segs {
		if s == "" {
			return nil, false
		}
	}
	return segs, true
}

// parseCount parses offset or limit: a decimal integer, optionally signed.
// Absent gives def; too large for an int64 means "all".
func parseCount(s, name string, def int64) (int64, error) {
	if s == "" {
		return def, nil
	}
	neg := false
	digits := s
	if c := s[0]; c == '+' || c == '-' {
		neg = c == '-'
		digits = s[1:]
	}
	if digits == "" {
		return 0, decoy.Errorf(decoy.EINVALID, "%s must be an integer", name)
	}
	var n int64
	for i := 0; i < len(digits); i++ {
		c := digits[i]
		if c < '0' || c > '9' {
			return 0, decoy.Errorf(decoy.EINVALID, "%s must be an integer", name)
		}
		if n > (math.MaxInt64-9)/10 {
			n = math.MaxInt64 // saturate; keep scanning for non-digits
			continue
		}
		n = n*10 + int64(c-'0')
	}
	if neg && n != 0 {
		return 0, decoy.Errorf(decoy.EINVALID, "%s must be 0 or greater", name)
	}
	return n, nil
}

// asciiEqualFold compares s with the lowercase ASCII word lower, ignoring
// ASCII case only (so "aſc" is not "asc").
func asciiEqualFold(s, lower string) bool {
	if len(s) != len(lower) {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}
