package query

import (
	"slices"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/decoy-mock/decoy/jsondoc"
)

// The structures here are built once per column, on the first query that
// needs them, and kept with the column (jsondoc.Column.Derived), so that
// later queries on the same path cost what their answer costs, not what the
// document costs.

// order is the stable sorted order of every record of a document by the
// value a path reaches in it.
type order struct {
	perm []int32 // record ids, in order
}

// ranks is the inverse of an order: the position of each record in it.
// Only a query that sorts a few matches needs it, so it is built apart.
type ranks []int32

// sortOrder returns the cached order of the records by col, ascending or
// descending (the descending order is not the ascending one reversed: ties
// keep their stored order in both, and null and missing stay last).
func sortOrder(d *jsondoc.Document, col *jsondoc.Column, desc bool) *order {
	return col.Derived(orderKey(desc), func() any {
		o := &order{perm: make([]int32, d.Len())}
		for i := range o.perm {
			o.perm[i] = int32(i)
		}
		sortRecords(d, o.perm, col, desc)
		return o
	}).(*order)
}

// sortRanks returns the cached ranks of the records in ord, col's order.
func sortRanks(ord *order, col *jsondoc.Column, desc bool) ranks {
	key := "order-asc-rank" // constant: no string built on every read
	if desc {
		key = "order-desc-rank"
	}
	return col.Derived(key, func() any {
		r := make(ranks, len(ord.perm))
		for pos, id := range ord.perm {
			r[id] = int32(pos)
		}
		return r
	}).(ranks)
}

func orderKey(desc bool) string {
	if desc {
		return "order-desc"
	}
	return "order-asc"
}

// MemoryBytes implements jsondoc.Sizer.
func (o *order) MemoryBytes() int64 { return 48 + 4*int64(len(o.perm)) }

// MemoryBytes implements jsondoc.Sizer.
func (r ranks) MemoryBytes() int64 { return 24 + 4*int64(len(r)) }

// MemoryBytes implements jsondoc.Sizer. It counts the bitsets of large
// postings, built on first need, as built.
func (ix *index) MemoryBytes() int64 {
	n := int64(64)
	for k, p := range ix.postings {
		// A map entry is about a key header, a pointer and its share of
		// the buckets.
		n += int64(len(k)) + 48 + 64 + 4*int64(cap(p.ids))
		if len(p.ids)*largePosting >= ix.n {
			n += 8 * int64((ix.n+63)/64)
		}
	}
	return n
}

// index maps each value a path reaches to the records that reach it, in
// stored order: equality conditions look their records up instead of
// scanning. Keys are typed: "s" and a string's content (case-folded in a
// folded index), "n" and a number's key (jsondoc.Decimal.AppendKey), and "t",
// "f", "z" for true, false and null. A top-level array reached by the path
// contributes its scalar elements, as equality does.
type index struct {
	n        int // records in the document
	postings map[string]*posting
}

// posting is the records of one value. A large one also keeps them as a
// bitset, built on first need: an ordered query walks the cached order and
// tests each record against it.
type posting struct {
	ids      []int32
	bitsOnce sync.Once
	bits     bitset
}

// largePosting is the share of a document's records from which a posting
// keeps a bitset: at most that many bitsets per index, however many values.
const largePosting = 16

// membership returns the posting as a bitset when it is large, else nil.
func (p *posting) membership(n int) bitset {
	if len(p.ids)*largePosting < n {
		return nil
	}
	p.bitsOnce.Do(func() {
		p.bits = make(bitset, (n+63)/64)
		p.bits.setAll(p.ids)
	})
	return p.bits
}

// equalityIndex returns the cached index of col, folded for $eqi and $nei.
func equalityIndex(d *jsondoc.Document, col *jsondoc.Column, fold bool) *index {
	key := "index"
	if fold {
		key = "index-folded"
	}
	return col.Derived(key, func() any {
		ix := &index{n: d.Len(), postings: make(map[string]*posting)}
		var scratch, k []byte
		var elems []jsondoc.Value
		add := func(v jsondoc.Value, id int32) {
			k = k[:0]
			switch v.Kind {
			case jsondoc.String:
				s := d.StringContent(v, &scratch)
				if fold {
					k = appendFolded(append(k, 's'), s)
				} else {
					k = append(append(k, 's'), s...)
				}
			case jsondoc.Number:
				n, _ := jsondoc.ParseNumber(d.Text(v))
				k = n.AppendKey(append(k, 'n'))
			case jsondoc.True:
				k = append(k, 't')
			case jsondoc.False:
				k = append(k, 'f')
			case jsondoc.Null:
				k = append(k, 'z')
			default:
				return // objects and nested arrays equal nothing
			}
			p := ix.postings[string(k)]
			if p == nil {
				p = new(posting)
				ix.postings[string(k)] = p
			}
			if l := len(p.ids); l == 0 || p.ids[l-1] != id {
				p.ids = append(p.ids, id)
			}
		}
		var vals []jsondoc.Value
		for i := range col.Len() {
			vals = col.AppendValues(vals[:0], i)
			for _, v := range vals {
				if v.Kind != jsondoc.Array {
					add(v, int32(i))
					continue
				}
				elems = d.AppendElements(elems[:0], v)
				for _, e := range elems {
					add(e, int32(i))
				}
			}
		}
		return ix
	}).(*index)
}

// lookup returns the records that reach a value equal to c.Value, in stored
// order, and the same as a bitset when it is large and cached (else nil).
// Both may be shared: the caller must not change them.
func (ix *index) lookup(c *Condition) ([]int32, bitset) {
	fold := c.Op.folded()
	var lists []*posting
	var k []byte
	if fold {
		k = appendFolded([]byte{'s'}, []byte(c.Value))
	} else {
		k = append([]byte{'s'}, c.Value...)
	}
	if p := ix.postings[string(k)]; p != nil {
		lists = append(lists, p)
	}
	if c.isNum {
		if p := ix.postings[string(c.num.AppendKey([]byte{'n'}))]; p != nil {
			lists = append(lists, p)
		}
	}
	for _, lit := range [...]struct{ text, key string }{{"true", "t"}, {"false", "f"}, {"null", "z"}} {
		if literalEqual(c.Value, lit.text, fold) {
			if p := ix.postings[lit.key]; p != nil {
				lists = append(lists, p)
			}
		}
	}
	switch len(lists) {
	case 0:
		return nil, nil
	case 1:
		return lists[0].ids, lists[0].membership(ix.n)
	}
	// A value that is both a string and a number ("30"): rare, merged.
	var all []int32
	for _, l := range lists {
		all = append(all, l.ids...)
	}
	slices.Sort(all)
	return slices.Compact(all), nil
}

// appendFolded appends s with every rune replaced by the smallest rune of its
// simple case-folding orbit, so that two strings fold to the same bytes
// exactly when bytes.EqualFold holds between them (invalid UTF-8 decodes to
// U+FFFD, as there).
func appendFolded(dst, s []byte) []byte {
	for len(s) > 0 {
		if c := s[0]; c < utf8.RuneSelf {
			if 'a' <= c && c <= 'z' {
				c -= 'a' - 'A'
			}
			dst = append(dst, c)
			s = s[1:]
			continue
		}
		r, size := utf8.DecodeRune(s)
		s = s[size:]
		least := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			least = min(least, f)
		}
		dst = utf8.AppendRune(dst, least)
	}
	return dst
}
