package query

import (
	"bytes"
	"slices"

	"github.com/decoy-mock/decoy/jsondoc"
)

// Result is what a query selects from an array document.
type Result struct {
	// Records are the indices of the selected elements, in answer order.
	Records []int32
	// Total is the number of elements that passed the filters, before
	// offset and limit.
	Total int
}

// Run applies the query to the elements of an array document: filter, then
// order, then offset, then limit.
func (q *Query) Run(d *jsondoc.Document) Result {
	n := d.Len()
	idx := make([]int32, 0, n)
	if len(q.Filters) == 0 {
		for i := 0; i < n; i++ {
			idx = append(idx, int32(i))
		}
	} else {
		m := matcher{d: d}
		cols := make([]*jsondoc.Column, len(q.Filters))
		for k := range q.Filters {
			cols[k] = d.Column(q.Filters[k].Path)
		}
	records:
		for i := 0; i < n; i++ {
			for k := range q.Filters {
				if !m.holds(&q.Filters[k], cols[k].Values(i)) {
					continue records
				}
			}
			idx = append(idx, int32(i))
		}
	}
	total := len(idx)
	if q.OrderBy != nil && len(idx) > 1 {
		sortRecords(d, idx, d.Column(q.OrderBy), q.Desc)
	}
	if q.Offset >= int64(len(idx)) {
		idx = idx[:0]
	} else {
		idx = idx[q.Offset:]
	}
	if q.Limit >= 0 && q.Limit < int64(len(idx)) {
		idx = idx[:q.Limit]
	}
	return Result{Records: idx, Total: total}
}

// matcher evaluates conditions; it keeps scratch space between calls.
type matcher struct {
	d       *jsondoc.Document
	scratch []byte
	elems   []jsondoc.Value
}

// holds reports whether a record whose path reaches vals satisfies c.
func (m *matcher) holds(c *Condition, vals []jsondoc.Value) bool {
	eq := false
	for _, v := range vals {
		if m.equal(c, v, true) {
			eq = true
			break
		}
	}
	return eq != c.Op.negated()
}

// equal applies the equality rules of the contract to one reached value.
// Arrays are equal when one of their scalar elements is (only at the top:
// nested arrays and objects are never equal).
func (m *matcher) equal(c *Condition, v jsondoc.Value, top bool) bool {
	fold := c.Op.folded()
	switch v.Kind {
	case jsondoc.String:
		s := m.d.StringContent(v, &m.scratch)
		if fold {
			return bytes.EqualFold(s, []byte(c.Value))
		}
		return string(s) == c.Value
	case jsondoc.Number:
		if !c.isNum {
			return false
		}
		n, _ := jsondoc.ParseNumber(m.d.Text(v))
		return jsondoc.CompareDecimal(n, c.num) == 0
	case jsondoc.True:
		return literalEqual(c.Value, "true", fold)
	case jsondoc.False:
		return literalEqual(c.Value, "false", fold)
	case jsondoc.Null:
		return literalEqual(c.Value, "null", fold)
	case jsondoc.Array:
		if !top {
			return false
		}
		m.elems = m.d.AppendElements(m.elems[:0], v)
		for _, e := range m.elems {
			if m.equal(c, e, false) {
				return true
			}
		}
	}
	return false
}

func literalEqual(text, lit string, fold bool) bool {
	if fold {
		return bytes.EqualFold([]byte(text), []byte(lit))
	}
	return text == lit
}

// Ranks of values in ascending order; null and missing stay last in both
// directions.
const (
	rankNumber = iota
	rankString
	rankFalse
	rankTrue
	rankObject
	rankArray
	rankNull
	rankMissing
)

var kindRank = [...]uint8{
	jsondoc.Missing: rankMissing,
	jsondoc.Null:    rankNull,
	jsondoc.False:   rankFalse,
	jsondoc.True:    rankTrue,
	jsondoc.Number:  rankNumber,
	jsondoc.String:  rankString,
	jsondoc.Object:  rankObject,
	jsondoc.Array:   rankArray,
}

type sortKey struct {
	rank uint8
	num  jsondoc.Decimal
	str  []byte
}

// sortRecords orders idx stably by the value col holds for each record.
func sortRecords(d *jsondoc.Document, idx []int32, col *jsondoc.Column, desc bool) {
	keys := make([]sortKey, d.Len())
	var arena []byte
	for _, i := range idx {
		k := &keys[i]
		vals := col.Values(int(i))
		if len(vals) != 1 || col.Fanned(int(i)) {
			k.rank = rankMissing // absent, or reached through a fan-out
			continue
		}
		v := vals[0]
		k.rank = kindRank[v.Kind]
		switch v.Kind {
		case jsondoc.Number:
			k.num, _ = jsondoc.ParseNumber(d.Text(v))
		case jsondoc.String:
			if v.Escaped {
				start := len(arena)
				arena = d.AppendString(arena, v)
				k.str = arena[start:len(arena):len(arena)]
			} else {
				t := d.Text(v)
				k.str = t[1 : len(t)-1]
			}
		}
	}
	slices.SortStableFunc(idx, func(a, b int32) int {
		ka, kb := &keys[a], &keys[b]
		if ka.rank != kb.rank {
			c := int(ka.rank) - int(kb.rank)
			if desc && ka.rank < rankNull && kb.rank < rankNull {
				c = -c
			}
			return c
		}
		c := 0
		switch ka.rank {
		case rankNumber:
			c = jsondoc.CompareDecimal(ka.num, kb.num)
		case rankString:
			c = bytes.Compare(ka.str, kb.str)
		}
		if desc {
			c = -c
		}
		return c
	})
}
