package query

import (
	"bytes"
	"cmp"
	"math/bits"
	"slices"
	"sync"

	"github.com/decoy-mock/decoy/jsondoc"
)

// Result is what a query selects from an array document.
type Result struct {
	// Records are the indices of the selected elements, in answer order.
	// They may be shared with the document's caches: read them only.
	Records []int32
	// Total is the number of elements that passed the filters, before
	// offset and limit.
	Total int

	doc *jsondoc.Document
	one bool // the answer is the first record alone (Query.One)
}

// Run applies the query to the elements of an array document: filter, then
// order, then offset, then limit. For a query with Items, d is the item
// view Items reaches (jsondoc.Document.Items), which the caller resolves.
//
// Filters look their records up in the equality index of their path; an
// order comes from the cached sort order of its path. So a query costs about
// its answer: a word per 64 records to combine several conditions, then the
// records it returns, and no allocation proportional to the document besides
// the answer.
func (q *Query) Run(d *jsondoc.Document) Result {
	res := q.run(d)
	res.doc, res.one = d, q.One
	return res
}

func (q *Query) run(d *jsondoc.Document) Result {
	n := d.Len()
	sel := q.selectRecords(d)
	defer sel.release()
	total := sel.count
	start := int(min(q.Offset, int64(total)))
	want := total - start
	if q.Limit >= 0 && q.Limit < int64(want) {
		want = int(q.Limit)
	}
	if want == 0 {
		return Result{Records: []int32{}, Total: total}
	}
	if q.OrderBy == nil {
		var out []int32
		switch {
		case sel.all:
			out = make([]int32, want)
			for k := range out {
				out[k] = int32(start + k)
			}
		case sel.bits == nil:
			out = sel.list[start : start+want]
		default:
			out = sel.bits.collect(nil, start, want)
		}
		return Result{Records: out, Total: total}
	}

	col := d.Column(q.OrderBy)
	ord := sortOrder(d, col, q.Desc)
	if sel.all {
		return Result{Records: ord.perm[start : start+want], Total: total}
	}
	if total*16 < n {
		// Few matches: sort them by their rank in the cached order.
		out := sel.ids()
		rank := sortRanks(ord, col, q.Desc)
		slices.SortFunc(out, func(a, b int32) int { return int(rank[a]) - int(rank[b]) })
		return Result{Records: out[start : start+want], Total: total}
	}
	// Many matches: walk the cached order and keep the matching ones.
	bits := sel.membership(n)
	out := make([]int32, 0, want)
	skip := start
	for _, id := range ord.perm {
		if !bits.has(id) {
			continue
		}
		if skip > 0 {
			skip--
			continue
		}
		out = append(out, id)
		if len(out) == want {
			break
		}
	}
	return Result{Records: out, Total: total}
}

// selection is the set of records that pass the filters: all of them, a
// shared posting list (one condition), or a bitset.
type selection struct {
	all    bool
	list   []int32 // ascending; shared, read only
	shared bitset  // list as a bitset, when cached with it; read only
	bits   bitset  // when not nil; pooled
	count  int
	temp   bitset // pooled scratch, when used
}

// selectRecords evaluates the filters.
func (q *Query) selectRecords(d *jsondoc.Document) selection {
	n := d.Len()
	if len(q.Filters) == 0 {
		return selection{all: true, count: n}
	}
	lists := make([][]int32, len(q.Filters))
	var cached bitset
	for k := range q.Filters {
		c := &q.Filters[k]
		lists[k], cached = equalityIndex(d, d.Column(c.Path), c.Op.folded()).lookup(c)
	}
	if len(q.Filters) == 1 && !q.Filters[0].Op.negated() {
		return selection{list: lists[0], shared: cached, count: len(lists[0])}
	}

	// Start from the shortest list of a positive condition, or from every
	// record; intersect the other positive lists; take out the negative ones.
	var s selection
	s.bits = getBitset(n)
	base := -1
	for k := range q.Filters {
		if !q.Filters[k].Op.negated() && (base < 0 || len(lists[k]) < len(lists[base])) {
			base = k
		}
	}
	if base >= 0 {
		s.bits.setAll(lists[base])
	} else {
		s.bits.fill(n)
	}
	for k := range q.Filters {
		switch {
		case k == base:
		case q.Filters[k].Op.negated():
			s.bits.clearAll(lists[k])
		default:
			if s.temp == nil {
				s.temp = getBitset(n)
			} else {
				clear(s.temp)
			}
			s.temp.setAll(lists[k])
			s.bits.and(s.temp)
		}
	}
	s.count = s.bits.count()
	return s
}

// ids returns the selected records in a new slice, ascending.
func (s *selection) ids() []int32 {
	if s.bits == nil {
		return slices.Clone(s.list)
	}
	return s.bits.collect(make([]int32, 0, s.count), 0, s.count)
}

// membership returns the selection as a bitset over n records.
func (s *selection) membership(n int) bitset {
	if s.bits == nil && s.shared != nil {
		return s.shared
	}
	if s.bits == nil {
		s.bits = getBitset(n)
		s.bits.setAll(s.list)
	}
	return s.bits
}

// release gives pooled bitsets back.
func (s *selection) release() {
	putBitset(s.bits)
	putBitset(s.temp)
}

// bitset is a set of record ids.
type bitset []uint64

var bitsets sync.Pool

// getBitset returns an empty bitset for n records, from the pool when one
// of the right size is there.
func getBitset(n int) bitset {
	words := (n + 63) / 64
	if p, ok := bitsets.Get().(*bitset); ok && cap(*p) >= words {
		b := (*p)[:words]
		clear(b)
		return b
	}
	return make(bitset, words)
}

func putBitset(b bitset) {
	if b != nil {
		bitsets.Put(&b)
	}
}

func (b bitset) has(id int32) bool { return b[id>>6]&(1<<(id&63)) != 0 }

func (b bitset) setAll(ids []int32) {
	for _, id := range ids {
		b[id>>6] |= 1 << (id & 63)
	}
}

func (b bitset) clearAll(ids []int32) {
	for _, id := range ids {
		b[id>>6] &^= 1 << (id & 63)
	}
}

// fill sets the first n bits.
func (b bitset) fill(n int) {
	for i := range b {
		b[i] = ^uint64(0)
	}
	if r := n % 64; r != 0 {
		b[len(b)-1] = 1<<r - 1
	}
}

func (b bitset) and(o bitset) {
	for i := range b {
		b[i] &= o[i]
	}
}

func (b bitset) count() int {
	c := 0
	for _, w := range b {
		c += bits.OnesCount64(w)
	}
	return c
}

// collect appends to dst the ids in the set, ascending, skipping the first
// skip and stopping after want.
func (b bitset) collect(dst []int32, skip, want int) []int32 {
	if dst == nil {
		dst = make([]int32, 0, want)
	}
	for i, w := range b {
		for w != 0 {
			t := bits.TrailingZeros64(w)
			w &= w - 1
			if skip > 0 {
				skip--
				continue
			}
			dst = append(dst, int32(i*64+t))
			if len(dst) == want {
				return dst
			}
		}
	}
	return dst
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

// sortKey is a record's key in a sort, compact (24 bytes): a sort of a
// million records builds a million of them.
type sortKey struct {
	f    float64 // a number, when exact
	s, n uint32  // a number's text, or a string's content, at [s, s+n)
	rank uint8
	// inexact: a number f does not order exactly (parsed again to
	// compare); arena: a string's content is in the arena (it had escapes).
	inexact, arena bool
}

// sortRecords orders idx stably by the value col holds for each record.
func sortRecords(d *jsondoc.Document, idx []int32, col *jsondoc.Column, desc bool) {
	keys := make([]sortKey, d.Len())
	raw := d.Bytes()
	var arena []byte
	for _, i := range idx {
		k := &keys[i]
		v, one := col.Value(int(i))
		if !one || col.Fanned(int(i)) {
			k.rank = rankMissing // absent, or reached through a fan-out
			continue
		}
		k.rank = kindRank[v.Kind]
		switch v.Kind {
		case jsondoc.Number:
			num, _ := jsondoc.ParseNumber(d.Text(v))
			var exact bool
			k.f, exact = num.Float()
			k.inexact = !exact
			k.s, k.n = v.Start, v.End-v.Start
		case jsondoc.String:
			if v.Escaped {
				start := len(arena)
				arena = d.AppendString(arena, v)
				k.s, k.n, k.arena = uint32(start), uint32(len(arena)-start), true
			} else {
				k.s, k.n = v.Start+1, v.End-v.Start-2
			}
		}
	}
	text := func(k *sortKey) []byte {
		if k.arena {
			return arena[k.s : k.s+k.n]
		}
		return raw[k.s : k.s+k.n]
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
			if ka.inexact || kb.inexact { // rare: beyond float64's exactness
				na, _ := jsondoc.ParseNumber(text(ka))
				nb, _ := jsondoc.ParseNumber(text(kb))
				c = jsondoc.CompareDecimal(na, nb)
			} else {
				c = cmp.Compare(ka.f, kb.f)
			}
		case rankString:
			c = bytes.Compare(text(ka), text(kb))
		}
		if desc {
			c = -c
		}
		return c
	})
}
