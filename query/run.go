package query

import (
	"bytes"
	"cmp"
	"math/bits"
	"slices"
	"sync"
	"unsafe"

	"github.com/decoy-mock/decoy/budget"
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
// order, then offset, then limit.
//
// Filters look their records up in the equality index of their path; an
// order comes from the kept sort order of its path. So a query costs about
// its answer: a word per 64 records to combine several conditions, then the
// records it returns, and no allocation proportional to the document besides
// the answer.
//
// When a structure cannot be kept (the cache's bound has no room for it),
// the query does without: it scans the records for a condition, and picks
// the records an order wants with a heap of offset+limit of them, or sorts
// the matches. That costs a pass over the document, and runs a few at a
// time (budget.Set.Turn), as its memory grows with the document.
//
// For a query with Items, d is the item view Items reaches
// (jsondoc.Document.Items), which the caller resolves.
func (q *Query) Run(d *jsondoc.Document) Result {
	var t turn
	defer t.release()
	res := q.run(d, &t)
	res.doc, res.one = d, q.One
	return res
}

// turn is the turn a query takes, once, when it must do without a
// structure.
type turn struct{ done func() }

// take waits for a turn of d's pool, unless the query has one.
func (t *turn) take(d *jsondoc.Document) {
	if t.done == nil {
		t.done = d.Structures().Turn()
	}
}

func (t *turn) release() {
	if t.done != nil {
		t.done()
	}
}

func (q *Query) run(d *jsondoc.Document, t *turn) Result {
	n := d.Len()
	sel := q.selectRecords(d, t)
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
	var ord *order
	if q.OrderBy != nil {
		if ord = sortOrder(d, q.orderPath, q.Desc); ord == nil {
			t.take(d)
			return Result{Records: q.sortWithout(d, &sel, start, want), Total: total}
		}
	}
	if ord == nil || ord.perm == nil { // the stored order
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

	if sel.all {
		return Result{Records: ord.perm[start : start+want], Total: total}
	}
	if total*16 < n {
		// Few matches: sort them by their rank in the kept order.
		rank := sortRanks(d, q.orderPath, q.Desc)
		if rank == nil {
			t.take(d)
			return Result{Records: q.sortWithout(d, &sel, start, want), Total: total}
		}
		out := sel.ids()
		if r := rank.r; r != nil {
			slices.SortFunc(out, func(a, b int32) int { return int(r[a]) - int(r[b]) })
		}
		return Result{Records: out[start : start+want], Total: total}
	}
	// Many matches: walk the kept order and keep the matching ones.
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
	temp   bitset   // pooled scratch, when used
	scans  []bitset // pooled: the records of conditions without an index
}

// selectRecords evaluates the filters.
func (q *Query) selectRecords(d *jsondoc.Document, t *turn) selection {
	n := d.Len()
	if len(q.Filters) == 0 {
		return selection{all: true, count: n}
	}
	lists := make([][]int32, len(q.Filters))
	var cached bitset
	var scans []bitset // by condition, for those scanned
	var counts []int
	for k := range q.Filters {
		c := &q.Filters[k]
		if ix := equalityIndex(d, c.path, c.Op.folded()); ix != nil {
			lists[k], cached = ix.lookup(c)
			continue
		}
		t.take(d)
		if scans == nil {
			scans, counts = make([]bitset, len(q.Filters)), make([]int, len(q.Filters))
		}
		scans[k] = getBitset(n)
		counts[k] = scan(d, d.Column(c.path), c, scans[k])
	}
	if scans == nil && len(q.Filters) == 1 && !q.Filters[0].Op.negated() {
		return selection{list: lists[0], shared: cached, count: len(lists[0])}
	}
	size := func(k int) int {
		if scans != nil && scans[k] != nil {
			return counts[k]
		}
		return len(lists[k])
	}

	// Start from the smallest set of a positive condition, or from every
	// record; intersect the other positive sets; take out the negative ones.
	s := selection{scans: scans}
	s.bits = getBitset(n)
	base := -1
	for k := range q.Filters {
		if !q.Filters[k].Op.negated() && (base < 0 || size(k) < size(base)) {
			base = k
		}
	}
	switch {
	case base < 0:
		s.bits.fill(n)
	case scans != nil && scans[base] != nil:
		copy(s.bits, scans[base])
	default:
		s.bits.setAll(lists[base])
	}
	for k := range q.Filters {
		scanned := scans != nil && scans[k] != nil
		switch {
		case k == base:
		case q.Filters[k].Op.negated() && scanned:
			s.bits.andNot(scans[k])
		case q.Filters[k].Op.negated():
			s.bits.clearAll(lists[k])
		case scanned:
			s.bits.and(scans[k])
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

// each calls f with each selected record of a document of n, ascending.
func (s *selection) each(n int, f func(id int32)) {
	switch {
	case s.all:
		for id := range n {
			f(int32(id))
		}
	case s.bits == nil:
		for _, id := range s.list {
			f(id)
		}
	default:
		for i, w := range s.bits {
			for w != 0 {
				t := bits.TrailingZeros64(w)
				w &= w - 1
				f(int32(i*64 + t))
			}
		}
	}
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
	for _, b := range s.scans {
		putBitset(b)
	}
}

// sortWithout returns the records at [start, start+want) of the selection
// ordered by q's path, without the path's kept order: with a heap of the
// first start+want records when they are fewer than half the selection,
// else by sorting the selection. Its keys are counted in the pool while
// they are held, when they fit (it runs on a turn either way).
func (q *Query) sortWithout(d *jsondoc.Document, sel *selection, start, want int) []int32 {
	col := d.Column(q.orderPath)
	raw, desc := d.Bytes(), q.Desc
	set := d.Structures()
	if k := start + want; 2*k < sel.count {
		h := topK{raw: raw, desc: desc, entries: make([]heapEntry, 0, k)}
		borrowed := int64(k) * int64(unsafe.Sizeof(heapEntry{}))
		if set.Borrow(borrowed) {
			defer set.Repay(borrowed)
		}
		var cand heapEntry
		var a arena
		sel.each(d.Len(), func(id int32) {
			a.buf = cand.text[:0]
			setKey(&cand.key, d, col, id, &a)
			cand.text = a.buf
			if len(h.entries) < k {
				h.push(&cand)
				cand.text = nil
			} else if h.less(&cand, &h.entries[0]) {
				cand.text = h.replaceTop(&cand)
			}
		})
		slices.SortFunc(h.entries, func(x, y heapEntry) int {
			return compareKeys(&x.key, &y.key, x.text, y.text, raw, desc)
		})
		out := make([]int32, want)
		for i := range out {
			out[i] = h.entries[start+i].key.id
		}
		return out
	}
	keys := make([]sortKey, 0, sel.count)
	borrowed := sortKeySize * int64(sel.count)
	if set.Borrow(borrowed) {
		defer set.Repay(borrowed)
	}
	var a arena
	sel.each(d.Len(), func(id int32) {
		keys = append(keys, sortKey{})
		setKey(&keys[len(keys)-1], d, col, id, &a)
	})
	slices.SortFunc(keys, func(x, y sortKey) int { return compareKeys(&x, &y, a.buf, a.buf, raw, desc) })
	out := make([]int32, want)
	for i := range out {
		out[i] = keys[start+i].id
	}
	return out
}

// heapEntry is a record in a topK: its key, and the decoded content of an
// escaped string (the key's arena).
type heapEntry struct {
	key  sortKey
	text []byte
}

// topK keeps the records that come first in an order, the last of them
// on top.
type topK struct {
	raw     []byte
	desc    bool
	entries []heapEntry
}

func (h *topK) less(a, b *heapEntry) bool {
	return compareKeys(&a.key, &b.key, a.text, b.text, h.raw, h.desc) < 0
}

// push adds e.
func (h *topK) push(e *heapEntry) {
	h.entries = append(h.entries, *e)
	for i := len(h.entries) - 1; i > 0; {
		parent := (i - 1) / 2
		if !h.less(&h.entries[parent], &h.entries[i]) {
			break
		}
		h.entries[parent], h.entries[i] = h.entries[i], h.entries[parent]
		i = parent
	}
}

// replaceTop puts e in place of the top entry, and returns the buffer of
// the entry it replaced, for reuse.
func (h *topK) replaceTop(e *heapEntry) []byte {
	old := h.entries[0].text
	h.entries[0] = *e
	for i := 0; ; {
		big, l, r := i, 2*i+1, 2*i+2
		if l < len(h.entries) && h.less(&h.entries[big], &h.entries[l]) {
			big = l
		}
		if r < len(h.entries) && h.less(&h.entries[big], &h.entries[r]) {
			big = r
		}
		if big == i {
			break
		}
		h.entries[big], h.entries[i] = h.entries[i], h.entries[big]
		i = big
	}
	return old
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
		// Boxed here, not by taking b's address: that moved b to the heap
		// on every call, nil or not (an allocation per query).
		p := new(bitset)
		*p = b
		bitsets.Put(p)
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

func (b bitset) andNot(o bitset) {
	for i := range b {
		b[i] &^= o[i]
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
	id   int32   // the record
	rank uint8
	// inexact: a number f does not order exactly (parsed again to
	// compare); arena: a string's content is in the arena (it had escapes).
	inexact, arena bool
}

// arena holds the decoded content of escaped strings for sort keys,
// reserving its growth in b when set.
type arena struct {
	buf []byte
	b   *budget.Build
}

// setKey sets k to the key of record id by the values of col, and reports
// whether the arena could hold what it needed.
func setKey(k *sortKey, d *jsondoc.Document, col *jsondoc.Column, id int32, a *arena) bool {
	*k = sortKey{id: id}
	v, one := col.Value(int(id))
	if !one || col.Fanned(int(id)) {
		k.rank = rankMissing // absent, or reached through a fan-out
		return true
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
			if need := len(a.buf) + int(v.End-v.Start); need > cap(a.buf) && a.b != nil {
				old := cap(a.buf)
				size := max(2*old, need, 4096)
				if !a.b.Reserve(int64(size)) {
					return false
				}
				a.buf = append(make([]byte, 0, size), a.buf...)
				a.b.Free(int64(old))
			}
			start := len(a.buf)
			a.buf = d.AppendString(a.buf, v)
			k.s, k.n, k.arena = uint32(start), uint32(len(a.buf)-start), true
		} else {
			k.s, k.n = v.Start+1, v.End-v.Start-2
		}
	}
	return true
}

// compareKeys orders two records: by rank, then by value, then by their
// place in the document (a stable order, in both directions). A key's
// text is in raw, or in its arena (arenaA, arenaB) when it had escapes.
func compareKeys(ka, kb *sortKey, arenaA, arenaB, raw []byte, desc bool) int {
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
			na, _ := jsondoc.ParseNumber(raw[ka.s : ka.s+ka.n])
			nb, _ := jsondoc.ParseNumber(raw[kb.s : kb.s+kb.n])
			c = jsondoc.CompareDecimal(na, nb)
		} else {
			c = cmp.Compare(ka.f, kb.f)
		}
	case rankString:
		ta, tb := raw, raw
		if ka.arena {
			ta = arenaA
		}
		if kb.arena {
			tb = arenaB
		}
		c = bytes.Compare(ta[ka.s:ka.s+ka.n], tb[kb.s:kb.s+kb.n])
	}
	if desc {
		c = -c
	}
	if c == 0 {
		return cmp.Compare(ka.id, kb.id)
	}
	return c
}
