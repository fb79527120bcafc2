package query

import (
	"slices"
	"sync/atomic"
	"unicode"
	"unicode/utf8"
	"unsafe"

	"github.com/decoy-mock/decoy/budget"
	"github.com/decoy-mock/decoy/jsondoc"
)

// The structures here are built once per path, on the first query that
// needs them, and kept with the document (jsondoc.Document.Structures), so
// that later queries on the same path cost what their answer costs, not
// what the document costs. Each counts its memory before allocating it,
// and is not kept when it does not fit the cache's bound: the query then
// does without (see run.go), more slowly.

// Kinds of the structures kept over a document, named by their path.
const (
	kindOrderAsc    = "order-asc"
	kindOrderDesc   = "order-desc"
	kindRanksAsc    = "ranks-asc"
	kindRanksDesc   = "ranks-desc"
	kindIndex       = "index"
	kindIndexFolded = "index-folded"
)

// order is the stable sorted order of every record of a document by the
// value a path reaches in it. A nil perm is the stored order: every record
// reaches nothing (or the same value), or the records were stored sorted.
type order struct {
	perm []int32 // record ids, in order
}

// ranks is the inverse of an order: the position of each record in it.
// Only a query that sorts a few matches needs it, so it is built apart.
type ranks struct {
	r []int32
}

// sortOrder returns the kept order of the records by path p, ascending or
// descending (the descending order is not the ascending one reversed: ties
// keep their stored order in both, and null and missing stay last), or nil
// when it cannot be kept.
func sortOrder(d *jsondoc.Document, p jsondoc.Path, desc bool) *order {
	o, _ := d.Structures().Load(orderKey(d, p, desc), func(b *budget.Build) any {
		return carryOrBuildOrder(b, d, p, desc)
	}).(*order)
	return o
}

// carryOrBuildOrder returns the order of d by p carried over from d's
// origin (shared, see carried, or changed, see carryOrder), else built;
// either way, carried over the writes to come.
func carryOrBuildOrder(b *budget.Build, d *jsondoc.Document, p jsondoc.Path, desc bool) any {
	d.Carrier(orderKey(d, p, desc), func(n *jsondoc.Document) { sortOrder(n, p, desc) })
	if prev, _ := carried(b, d, orderKey(d, p, desc), p).(*order); prev != nil {
		return prev
	}
	if o := carryOrder(b, d, p, desc); o != nil {
		return o
	}
	return buildOrder(b, d, p, desc)
}

func orderKey(d *jsondoc.Document, p jsondoc.Path, desc bool) budget.Key {
	if desc {
		return d.Key(kindOrderDesc, p.Key)
	}
	return d.Key(kindOrderAsc, p.Key)
}

// sortKeySize is the size of a record's key while records are sorted.
const sortKeySize = int64(unsafe.Sizeof(sortKey{}))

// orderBuilds counts order builds (sorts), for tests.
var orderBuilds atomic.Int64

// buildOrder builds the order of the records by p within b: while it
// sorts, a key per record (and the decoded content of escaped strings) on
// top of the order itself.
func buildOrder(b *budget.Build, d *jsondoc.Document, p jsondoc.Path, desc bool) any {
	orderBuilds.Add(1)
	n := int64(d.Len())
	if !b.Fits((sortKeySize + 4) * n) {
		return nil
	}
	col := d.PeekColumn(p)
	if col.Empty() {
		return &order{} // every record reaches nothing: the stored order
	}
	if !b.Reserve((sortKeySize + 4) * n) {
		return nil
	}
	keys := make([]sortKey, n)
	a := arena{b: b}
	for i := range keys {
		if !setKey(&keys[i], d, col, int32(i), &a) {
			return nil
		}
	}
	raw := d.Bytes()
	slices.SortFunc(keys, func(x, y sortKey) int { return compareKeys(&x, &y, a.buf, a.buf, raw, desc) })
	o := &order{perm: make([]int32, n)}
	identity := true
	for pos := range keys {
		o.perm[pos] = keys[pos].id
		identity = identity && int(keys[pos].id) == pos
	}
	keys = nil
	b.Free(sortKeySize*n + int64(cap(a.buf)))
	if identity {
		o.perm = nil
		b.Free(4 * n)
	}
	return o
}

// sortRanks returns the kept ranks of the records in the order by p, or
// nil when they cannot be kept. The ranks of the stored order are nil.
func sortRanks(d *jsondoc.Document, p jsondoc.Path, desc bool) *ranks {
	key := d.Key(kindRanksAsc, p.Key)
	if desc {
		key.Kind = kindRanksDesc
	}
	r, _ := d.Structures().Load(key, func(b *budget.Build) any {
		d.Carrier(key, func(n *jsondoc.Document) {
			// Made again from the order, carried too, not sorted again.
			if o := n.Origin(); o != nil && (unchangedAt(n, p) || o.Doc.Structures().Get(orderKey(o.Doc, p, desc)) != nil) {
				sortRanks(n, p, desc)
			}
		})
		if prev, _ := carried(b, d, key, p).(*ranks); prev != nil {
			return prev
		}
		ord, _ := b.Use(orderKey(d, p, desc), func(b *budget.Build) any { return carryOrBuildOrder(b, d, p, desc) }).(*order)
		if ord == nil {
			return nil
		}
		if ord.perm == nil {
			return &ranks{}
		}
		n := int64(len(ord.perm))
		if !b.Fits(4*n) || !b.Reserve(4*n) {
			return nil
		}
		r := &ranks{r: make([]int32, len(ord.perm))}
		for pos, id := range ord.perm {
			r.r[id] = int32(pos)
		}
		return r
	}).(*ranks)
	return r
}

// index maps each value a path reaches to the records that reach it, in
// stored order: equality conditions look their records up instead of
// scanning. Keys are typed (see appendValueKey). A top-level array reached
// by the path contributes its scalar elements, as equality does.
type index struct {
	n        int // records in the document
	postings map[string]*posting
	// over holds, on an index carried over from the document's origin
	// (see carryIndex), the postings of the values whose records changed
	// since postings was built, in place of postings' (an empty one:
	// none). postings is then shared, never changed.
	over *overlay
	// bytes is what the index holds.
	bytes int64
	// carried is set on an index carried over: its postings may be
	// shared with indexes of documents of other lengths, whose bitsets
	// would not fit it.
	carried bool
	// parent is set, instead of postings, on an index carried over a
	// delete: its lists are parent's without record cut, the records after
	// it one place earlier. depth counts the parents.
	parent *index
	cut    int32
	depth  int
	// remap, when set, gives the place now of each record postings lists
	// (-1: deleted since): deletes folded in (see fold).
	remap []int32
}

// get returns the posting of key k, or nil.
func (ix *index) get(k string) *posting {
	if p, ok := ix.over.get(k); ok {
		return p
	}
	if ix.parent != nil {
		p := ix.parent.get(k)
		if p == nil {
			return nil
		}
		at, _ := slices.BinarySearch(p.ids, ix.cut)
		if at == len(p.ids) {
			return p // all before the cut: unchanged
		}
		return &posting{ids: cutOut(slices.Clone(p.ids), ix.cut)}
	}
	p := ix.postings[k]
	if p == nil || ix.remap == nil {
		return p
	}
	ids := make([]int32, 0, len(p.ids))
	for _, id := range p.ids {
		if r := ix.remap[id]; r >= 0 {
			ids = append(ids, r)
		}
	}
	return &posting{ids: ids}
}

// cutOut takes record cut out of ids (ascending), in place: the records
// after it come one place earlier.
func cutOut(ids []int32, cut int32) []int32 {
	at, found := slices.BinarySearch(ids, cut)
	if found {
		ids = slices.Delete(ids, at, at+1)
	}
	for i := at; i < len(ids); i++ {
		ids[i]--
	}
	return ids
}

// posting is the records of one value. A large one also keeps them as a
// bitset, built on first need: an ordered query walks the cached order and
// tests each record against it.
type posting struct {
	ids []int32
	// bits is set once built; two readers building it at once keep the
	// first. A pointer, not a sync.Once and a slice: a posting is 32
	// bytes, not 64, and an index of unique values (an item route's ids)
	// holds one a record.
	bits atomic.Pointer[bitset]
}

// largePosting is the share of a document's records from which a posting
// keeps a bitset: at most that many bitsets per index, however many values.
const largePosting = 16

// postingOverhead is about what a value costs an index besides its key
// and records: its slot in the map (a key header, a pointer and its share
// of the buckets) and its posting.
const postingOverhead = 48 + 32

// memoryBytes is about how much memory the index holds. It counts the
// bitsets of large postings, built on first need, as built.
func (ix *index) memoryBytes() int64 {
	n := int64(64)
	for k, p := range ix.postings {
		n += int64(len(k)) + postingOverhead + 4*int64(cap(p.ids))
		if len(p.ids)*largePosting >= ix.n {
			n += 8 * int64((ix.n+63)/64)
		}
	}
	return n
}

// membership returns the posting as a bitset when it is large, else nil.
func (p *posting) membership(n int) bitset {
	if len(p.ids)*largePosting < n {
		return nil
	}
	if b := p.bits.Load(); b != nil {
		return *b
	}
	b := make(bitset, (n+63)/64)
	b.setAll(p.ids)
	if !p.bits.CompareAndSwap(nil, &b) {
		return *p.bits.Load()
	}
	return b
}

// equalityIndex returns the kept index of p, folded for $eqi and $nei, or
// nil when it cannot be kept.
func equalityIndex(d *jsondoc.Document, p jsondoc.Path, fold bool) *index {
	key := d.Key(kindIndex, p.Key)
	if fold {
		key.Kind = kindIndexFolded
	}
	ix, _ := d.Structures().Load(key, func(b *budget.Build) any {
		d.Carrier(key, func(n *jsondoc.Document) { equalityIndex(n, p, fold) })
		if ix := carryIndex(b, d, key, p, fold); ix != nil {
			return ix
		}
		return buildIndex(b, d, p, fold)
	}).(*index)
	return ix
}

// meter counts a structure whose size grows as it is built, in b: its
// estimate is reserved ahead, a chunk at a time.
type meter struct {
	b             *budget.Build
	est, reserved int64
}

// meterChunk is how far ahead a meter reserves.
const meterChunk = 64 << 10

// ensure reserves what the estimate and extra bytes need.
func (m *meter) ensure(extra int64) bool {
	if need := m.est + extra; need > m.reserved {
		n := max(need-m.reserved, meterChunk)
		if !m.b.Reserve(n) {
			return false
		}
		m.reserved += n
	}
	return true
}

// settle makes what is reserved the structure's size.
func (m *meter) settle(size int64) bool {
	switch {
	case size > m.reserved:
		return m.b.Reserve(size - m.reserved)
	case size < m.reserved:
		m.b.Free(m.reserved - size)
	}
	return true
}

// buildIndex builds the index of p within b, or returns nil when it does
// not fit.
func buildIndex(b *budget.Build, d *jsondoc.Document, p jsondoc.Path, fold bool) any {
	col := d.PeekColumn(p)
	ix := &index{n: d.Len(), postings: make(map[string]*posting)}
	m := meter{b: b, est: 64}
	var scratch, k []byte
	var elems []jsondoc.Value
	add := func(v jsondoc.Value, id int32) bool {
		var ok bool
		if k, ok = appendValueKey(k[:0], d, v, fold, &scratch); !ok {
			return true // objects and nested arrays equal nothing
		}
		p := ix.postings[string(k)]
		if p == nil {
			if !m.ensure(int64(len(k)) + postingOverhead) {
				return false
			}
			m.est += int64(len(k)) + postingOverhead
			p = new(posting)
			ix.postings[string(k)] = p
		}
		if l := len(p.ids); l == 0 || p.ids[l-1] != id {
			if old := cap(p.ids); l == old {
				// Appending at most doubles the array.
				if !m.ensure(4 * int64(max(old, 4))) {
					return false
				}
				p.ids = append(p.ids, id)
				m.est += 4 * int64(cap(p.ids)-old)
			} else {
				p.ids = append(p.ids, id)
			}
		}
		return true
	}
	var vals []jsondoc.Value
	for i := range col.Len() {
		vals = col.AppendValues(vals[:0], i)
		for _, v := range vals {
			if v.Kind != jsondoc.Array {
				if !add(v, int32(i)) {
					return nil
				}
				continue
			}
			elems = d.AppendElements(elems[:0], v)
			for _, e := range elems {
				if !add(e, int32(i)) {
					return nil
				}
			}
		}
	}
	ix.bytes = ix.memoryBytes()
	if !m.settle(ix.bytes) {
		return nil
	}
	return ix
}

// appendValueKey appends to dst the index key of a scalar value: "s" and a
// string's content (case-folded when fold), "n" and a number's key
// (jsondoc.Decimal.AppendKey), and "t", "f", "z" for true, false and
// null. Objects and arrays have none (false). Two values are equal for a
// condition exactly when their keys are; the index and the scan without
// one (see scan) both go by it.
func appendValueKey(dst []byte, d *jsondoc.Document, v jsondoc.Value, fold bool, scratch *[]byte) ([]byte, bool) {
	switch v.Kind {
	case jsondoc.String:
		s := d.StringContent(v, scratch)
		if fold {
			return appendFolded(append(dst, 's'), s), true
		}
		return append(append(dst, 's'), s...), true
	case jsondoc.Number:
		n, _ := jsondoc.ParseNumber(d.Text(v))
		return n.AppendKey(append(dst, 'n')), true
	case jsondoc.True:
		return append(dst, 't'), true
	case jsondoc.False:
		return append(dst, 'f'), true
	case jsondoc.Null:
		return append(dst, 'z'), true
	}
	return dst, false
}

// conditionKeys returns the index keys of the values equal to c.Value: as
// a string, as a number when it is one, and as a literal when it spells
// one.
func conditionKeys(c *Condition) []string {
	fold := c.Op.folded()
	var keys []string
	if fold {
		keys = append(keys, string(appendFolded([]byte{'s'}, []byte(c.Value))))
	} else {
		keys = append(keys, "s"+c.Value)
	}
	if c.isNum {
		keys = append(keys, string(c.num.AppendKey([]byte{'n'})))
	}
	for _, lit := range [...]struct{ text, key string }{{"true", "t"}, {"false", "f"}, {"null", "z"}} {
		if literalEqual(c.Value, lit.text, fold) {
			keys = append(keys, lit.key)
		}
	}
	return keys
}

// lookup returns the records that reach a value equal to c.Value, in stored
// order, and the same as a bitset when it is large and cached (else nil).
// Both may be shared: the caller must not change them.
func (ix *index) lookup(c *Condition) ([]int32, bitset) {
	var lists [3]*posting
	n := 0
	for _, k := range c.keys {
		if p := ix.get(k); p != nil && len(p.ids) > 0 {
			lists[n] = p
			n++
		}
	}
	switch {
	case n == 0:
		return nil, nil
	case n == 1 && ix.carried:
		// Postings are shared with indexes of other lengths: their
		// bitsets would be of the wrong one.
		return lists[0].ids, nil
	case n == 1:
		return lists[0].ids, lists[0].membership(ix.n)
	}
	// A value that is both a string and a number ("30"): rare, merged.
	var all []int32
	for _, l := range lists[:n] {
		all = append(all, l.ids...)
	}
	slices.Sort(all)
	return slices.Compact(all), nil
}

// scan sets in bits the records whose values of col include one equal to
// c.Value, as the index of its path would list them, and returns how many
// it set: a condition whose index cannot be kept.
func scan(d *jsondoc.Document, col *jsondoc.Column, c *Condition, bits bitset) int {
	m := matcher{c: c, fold: c.Op.folded()}
	var vals []jsondoc.Value
	count := 0
	for i := range col.Len() {
		vals = col.AppendValues(vals[:0], i)
		if m.anyEqual(d, vals) {
			bits[i>>6] |= 1 << (i & 63)
			count++
		}
	}
	return count
}

// matcher tells whether the values a condition's path reaches in a record
// include one equal to the condition's value, exactly as the index of the
// path would list the record: by the index keys of the values (see
// appendValueKey), a top-level array by its scalar elements. scan runs it
// over every record of a column, Conditions.Holds over one record. Its
// buffers are reused from one record to the next.
type matcher struct {
	c            *Condition
	fold         bool
	scratch, key []byte
	elems        []jsondoc.Value
}

// anyEqual reports whether one of vals, values of d, is equal to the
// condition's value.
func (m *matcher) anyEqual(d *jsondoc.Document, vals []jsondoc.Value) bool {
	for _, v := range vals {
		if v.Kind != jsondoc.Array {
			if m.equal(d, v) {
				return true
			}
			continue
		}
		m.elems = d.AppendElements(m.elems[:0], v)
		for _, e := range m.elems {
			if m.equal(d, e) {
				return true
			}
		}
	}
	return false
}

// equal reports whether the scalar v is equal to the condition's value.
func (m *matcher) equal(d *jsondoc.Document, v jsondoc.Value) bool {
	var ok bool
	if m.key, ok = appendValueKey(m.key[:0], d, v, m.fold, &m.scratch); !ok {
		return false // objects and nested arrays equal nothing
	}
	for _, key := range m.c.keys {
		if string(m.key) == key {
			return true
		}
	}
	return false
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
