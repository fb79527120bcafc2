package query

import (
	"bytes"
	"slices"
	"sort"

	"github.com/decoy-mock/decoy/budget"
	"github.com/decoy-mock/decoy/jsondoc"
)

// Carrying structures over a write (§12 of the contract): a document one
// write made from another (jsondoc.Document.Origin) gets the equality
// indexes and the next id of the one before changed where the record
// changed, rather than built again: a write costs about its record, and so
// does the read after it. A sort order (and its ranks) is carried over
// every write of one record too: shared when a replace leaves the record's
// value at the order's path as written (the order is the same), else
// copied with the record taken out where it was and put in where the build
// puts it (see carryOrder): a copy of the order and a few comparisons, not
// a sort. Over an edit of several records, or new data, they are built
// again when asked for.

// maxDepth is how many deletes an index is carried over before it folds
// them in. Tests lower it.
var maxDepth = 16

// carryOrders is whether a sort order is carried over a write that
// changes its records' keys (see carryOrder). A benchmark unsets it, to
// compare with building it again.
var carryOrders = true

// maxOver is how many values an index carried over holds apart from the
// postings it shares, at least, before it folds them in (flatten: a copy
// of every posting); past it, up to an eighth of the records' count, so
// that the copy comes once in so many writes. Tests lower it.
var maxOver = 1024

// overlay is what an index carried over holds apart from the postings it
// shares: the postings of the values whose records changed, in levels, the
// newest first (its entries win). A write puts a level of what it changed
// on top, and a level as large as the one under it merges with it, as a
// binary counter carries: a value is copied O(log n) times over n writes,
// rather than the whole overlay at each. Levels do not change once made.
type overlay struct {
	m    map[string]*posting
	next *overlay
	// total counts the entries of this level and those under it (a value
	// in two levels counts twice).
	total int
}

// get returns the newest posting of k in the overlay.
func (o *overlay) get(k string) (*posting, bool) {
	for l := o; l != nil; l = l.next {
		if p, ok := l.m[k]; ok {
			return p, true
		}
	}
	return nil, false
}

// size is the number of entries in the overlay, counting a value once per
// level it is in.
func (o *overlay) size() int {
	if o == nil {
		return 0
	}
	return o.total
}

// with returns the overlay with changed on top.
func (o *overlay) with(changed map[string]*posting) *overlay {
	top := &overlay{m: changed, next: o}
	for top.next != nil && len(top.m) >= len(top.next.m) {
		under := top.next
		m := make(map[string]*posting, len(top.m)+len(under.m))
		for k, p := range under.m {
			m[k] = p
		}
		for k, p := range top.m {
			m[k] = p
		}
		top = &overlay{m: m, next: under.next}
	}
	top.total = len(top.m) + top.next.size()
	return top
}

// each calls f once for each value of the overlay, with its newest
// posting.
func (o *overlay) each(f func(string, *posting)) {
	if o != nil && o.next == nil {
		for k, p := range o.m {
			f(k, p)
		}
		return
	}
	seen := map[string]struct{}{}
	for l := o; l != nil; l = l.next {
		for k, p := range l.m {
			if _, ok := seen[k]; !ok {
				seen[k] = struct{}{}
				f(k, p)
			}
		}
	}
}

// carryIndex returns the index of p over d carried over from the index of
// d's origin, when that is kept and the change keeps every other record in
// its place (a replace, an append); nil otherwise (the caller builds it).
func carryIndex(b *budget.Build, d *jsondoc.Document, key budget.Key, p jsondoc.Path, fold bool) *index {
	o := d.Origin()
	if o == nil {
		return nil
	}
	prev, _ := o.Doc.Structures().Get(key).(*index)
	if prev == nil {
		return nil
	}
	if o.Op == jsondoc.EditDelete {
		if prev.over.size() > maxOver {
			// Each fold of deletes copies the overlay, cut: past
			// maxOver, it is folded in first, once.
			flat := *prev
			flat.flatten()
			prev = &flat
		}
		ix := &index{n: d.Len(), parent: prev, cut: int32(o.Index), depth: prev.depth + 1, bytes: prev.bytes, carried: true}
		if ix.depth > maxDepth {
			ix.fold()
			ix.bound()
		}
		if !b.Reserve(ix.bytes) {
			return nil
		}
		return ix
	}
	if o.Op == jsondoc.EditReplace && sameValues(o.Doc, d, o.Index, p) {
		// The record's values at p are as they were (most writes change
		// other fields): the index before holds, for as many records.
		ix := *prev
		ix.n, ix.carried = d.Len(), true
		if !b.Reserve(ix.bytes) {
			return nil
		}
		return &ix
	}
	var old []string
	if o.Op == jsondoc.EditReplace {
		old = valueKeys(nil, o.Doc, o.Index, p, fold)
	}
	cur := valueKeys(nil, d, o.Index, p, fold)
	ix := &index{n: d.Len(), postings: prev.postings, over: prev.over, bytes: prev.bytes, carried: true,
		parent: prev.parent, cut: prev.cut, depth: prev.depth, remap: prev.remap}
	id := int32(o.Index)
	changed := map[string]*posting{}
	for _, k := range old {
		if !slices.Contains(cur, k) && changed[k] == nil {
			ids := ix.get(k).ids
			if at, ok := slices.BinarySearch(ids, id); ok {
				changed[k] = &posting{ids: slices.Delete(slices.Clone(ids), at, at+1)}
			}
		}
	}
	for _, k := range cur {
		if slices.Contains(old, k) || changed[k] != nil {
			continue
		}
		var ids []int32
		if p := ix.get(k); p != nil {
			ids = p.ids
		}
		at, ok := slices.BinarySearch(ids, id)
		if ok {
			continue
		}
		ids = slices.Insert(slices.Clone(ids), at, id)
		changed[k] = &posting{ids: ids}
		if ix.get(k) == nil {
			ix.bytes += int64(len(k)) + postingOverhead
		}
		ix.bytes += 4
	}
	if len(changed) > 0 {
		ix.over = ix.over.with(changed)
		ix.bound()
	}
	if !b.Reserve(ix.bytes) {
		return nil
	}
	return ix
}

// bound flattens ix when its overlay holds more values than maxOver, and
// than an eighth of its records.
func (ix *index) bound() {
	if ix.over.size() > max(maxOver, ix.n/8) {
		ix.flatten()
	}
}

// flatten makes the postings of ix its own, with what over, its remap and
// the deletes of its parents hold in them.
func (ix *index) flatten() {
	bottom := ix
	for bottom.parent != nil {
		bottom = bottom.parent
	}
	all := make(map[string]*posting, len(bottom.postings)+ix.over.size())
	ix.eachKey(func(k string) {
		// A list get gives as it is is shared: lists never change once
		// made, and ix stays carried, so that no bitset is kept on them.
		if p := ix.get(k); p != nil && len(p.ids) > 0 {
			all[k] = p
		}
	})
	ix.postings, ix.over, ix.parent, ix.cut, ix.depth, ix.remap = all, nil, nil, 0, 0, nil
	ix.bytes = ix.memoryBytes()
}

// fold folds the deletes of ix's parents into a remap of the postings
// they share (a word a record, not a copy of every list), and their
// values apart into one map.
func (ix *index) fold() {
	var levels []*index // ix, its parent, …, the one with postings
	for l := ix; l != nil; l = l.parent {
		levels = append(levels, l)
	}
	bottom := levels[len(levels)-1]
	remap := slices.Clone(bottom.remap)
	if remap == nil {
		remap = make([]int32, bottom.n)
		for i := range remap {
			remap[i] = int32(i)
		}
	}
	cuts := make([]int32, 0, len(levels)-1)
	for i := len(levels) - 2; i >= 0; i-- {
		cuts = append(cuts, levels[i].cut)
	}
	applyCuts(remap, cuts)
	over := map[string]*posting{}
	for j := len(levels) - 1; j >= 0; j-- { // the upper levels' win
		levels[j].over.each(func(k string, p *posting) {
			ids := slices.Clone(p.ids)
			for i := j - 1; i >= 0; i-- {
				ids = cutOut(ids, levels[i].cut)
			}
			over[k] = &posting{ids: ids}
		})
	}
	ix.postings, ix.remap, ix.over, ix.parent, ix.cut, ix.depth = bottom.postings, remap, nil, nil, 0, 0
	if len(over) > 0 {
		ix.over = ix.over.with(over)
	}
	ix.bytes = bottom.bytes + 4*int64(len(remap))
}

// applyCuts takes out of remap the places cuts name, in order, each among
// the places those before it left, and moves the places after each one
// earlier: as a pass over remap for each cut would, in one pass. remap's
// places (-1 aside) are 0, 1, 2, … in order, as fold makes them.
func applyCuts(remap, cuts []int32) {
	var gone []int32 // the places cut, as remap numbers them now, ascending
	for _, c := range cuts {
		for _, g := range gone {
			if g > c {
				break
			}
			c++ // a place cut before: c is one further in remap's numbering
		}
		at, _ := slices.BinarySearch(gone, c)
		gone = slices.Insert(gone, at, c)
	}
	for j, r := range remap {
		if r < 0 {
			continue
		}
		if at, cut := slices.BinarySearch(gone, r); cut {
			remap[j] = -1
		} else {
			remap[j] = r - int32(at)
		}
	}
}

// eachKey calls f with every key ix may list records under, some more
// than once.
func (ix *index) eachKey(f func(string)) {
	ix.over.each(func(k string, _ *posting) { f(k) })
	if ix.parent != nil {
		ix.parent.eachKey(f)
		return
	}
	for k := range ix.postings {
		f(k)
	}
}

// unchangedAt reports whether d was made by replacing a record of its
// origin by one with the same values at p, written alike, and reached
// alike (through an array fan-out or not): its sort key is the same, and
// so is every order by p.
func unchangedAt(d *jsondoc.Document, p jsondoc.Path) bool {
	o := d.Origin()
	return o != nil && o.Op == jsondoc.EditReplace && sameValues(o.Doc, d, o.Index, p) &&
		o.Doc.PeekColumn(p).Fanned(o.Index) == d.PeekColumn(p).Fanned(o.Index)
}

// carried returns the structure named key kept over d's origin, reserved
// in b for d, when d's change leaves every record's sort key at p as it
// was (see unchangedAt), so that it holds for d as it is; nil otherwise.
// Its size is what it holds: a sort order's or its ranks' list of ids.
func carried(b *budget.Build, d *jsondoc.Document, key budget.Key, p jsondoc.Path) any {
	if !unchangedAt(d, p) {
		return nil
	}
	o := d.Origin()
	prev := o.Doc.Structures().Get(key)
	var n int64
	switch x := prev.(type) {
	case *order:
		n = 4 * int64(len(x.perm))
	case *ranks:
		n = 4 * int64(len(x.r))
	default:
		return nil
	}
	if !b.Reserve(n) {
		return nil
	}
	return prev
}

// carryOrder returns the order of d by p carried over from the order of
// d's origin, when that is kept: the record deleted taken out (the ones
// after it one place earlier), the record appended or replaced put where
// the build puts it, found by a binary search with the build's comparison
// (compareKeys, its tie-break included). It costs a copy of the order and
// a few records' keys, not a sort, and gives what the build gives. nil
// when the origin's order is not kept or the copy does not fit (the caller
// builds it).
func carryOrder(b *budget.Build, d *jsondoc.Document, p jsondoc.Path, desc bool) *order {
	o := d.Origin()
	if o == nil || !carryOrders {
		return nil
	}
	prev, _ := o.Doc.Structures().Get(orderKey(o.Doc, p, desc)).(*order)
	if prev == nil {
		return nil
	}
	id := int32(o.Index)
	var pr *probe
	if o.Op != jsondoc.EditDelete {
		pr = newProbe(d, p, id, desc)
	}
	if prev.perm == nil { // the stored order
		// It stays so when the record changed goes back to its place
		// among the others (a delete leaves them in place).
		if pr == nil || pr.position(d.Len()-1, func(i int) int32 { return int32(i) + b2i(int32(i) >= id) }) == int(id) {
			return &order{}
		}
	}
	n := int64(d.Len())
	if !b.Fits(4*n) || !b.Reserve(4*n) {
		return nil
	}
	perm := make([]int32, 0, n)
	switch o.Op {
	case jsondoc.EditAppend:
		perm = appendOrder(perm, prev, o.Doc.Len(), -1, false)
	case jsondoc.EditReplace:
		perm = appendOrder(perm, prev, o.Doc.Len(), id, false)
	default:
		perm = appendOrder(perm, prev, o.Doc.Len(), id, true)
	}
	if pr != nil {
		perm = slices.Insert(perm, pr.position(len(perm), func(i int) int32 { return perm[i] }), id)
	}
	if isIdentity(perm) {
		b.Free(4 * n)
		return &order{}
	}
	return &order{perm: perm}
}

// appendOrder appends to dst the records of prev, an order of n records,
// but record cut (none when negative); with shift, the records after cut
// come one place earlier (cut was deleted).
func appendOrder(dst []int32, prev *order, n int, cut int32, shift bool) []int32 {
	if prev.perm == nil { // the stored order
		for id := range int32(n) {
			if id != cut {
				dst = append(dst, id-b2i(shift && id > cut))
			}
		}
		return dst
	}
	at := len(prev.perm)
	if cut >= 0 {
		at = slices.Index(prev.perm, cut)
	}
	dst = append(dst, prev.perm[:at]...)
	if at < len(prev.perm) {
		dst = append(dst, prev.perm[at+1:]...)
	}
	if shift {
		for i, id := range dst {
			// Without a branch (id > cut is as likely as not):
			// cut-id < 0 exactly when id is after cut.
			dst[i] = id - int32(uint32(cut-id)>>31)
		}
	}
	return dst
}

// isIdentity reports whether perm is the stored order (its records in
// place), as a build leaves it nil.
func isIdentity(perm []int32) bool {
	for pos, id := range perm {
		if int(id) != pos {
			return false
		}
	}
	return true
}

func b2i(b bool) int32 {
	if b {
		return 1
	}
	return 0
}

// probe is a record's sort key, to find its place among others in an
// order as the build sorts them.
type probe struct {
	d          *jsondoc.Document
	col        *jsondoc.Column
	key        sortKey
	own, other arena
	desc       bool
}

// newProbe returns the probe of record id of d by p; it reads the
// records it compares, not the whole column (see PeekColumn).
func newProbe(d *jsondoc.Document, p jsondoc.Path, id int32, desc bool) *probe {
	pr := &probe{d: d, col: d.PeekColumn(p), desc: desc}
	setKey(&pr.key, d, pr.col, id, &pr.own)
	return pr
}

// position returns the place of the probe's record among m records in
// order, the record at place i being at(i): the first place whose record
// comes after it.
func (pr *probe) position(m int, at func(int) int32) int {
	raw := pr.d.Bytes()
	var k sortKey
	return sort.Search(m, func(i int) bool {
		pr.other.buf = pr.other.buf[:0]
		setKey(&k, pr.d, pr.col, at(i), &pr.other)
		return compareKeys(&k, &pr.key, pr.other.buf, pr.own.buf, raw, pr.desc) > 0
	})
}

// sameValues reports whether record i of a and of b hold the same values
// at p, written alike (and so listed under the same keys).
func sameValues(a, b *jsondoc.Document, i int, p jsondoc.Path) bool {
	var bufA, bufB [4]jsondoc.Value
	va, vb := a.AppendValues(bufA[:0], i, p), b.AppendValues(bufB[:0], i, p)
	if len(va) != len(vb) {
		return false
	}
	for k := range va {
		if !bytes.Equal(a.Text(va[k]), b.Text(vb[k])) {
			return false
		}
	}
	return true
}

// valueKeys appends to dst the index keys of the values p reaches in
// record i of d, as buildIndex lists the record under them.
func valueKeys(dst []string, d *jsondoc.Document, i int, p jsondoc.Path, fold bool) []string {
	var scratch, k []byte
	var elems []jsondoc.Value
	add := func(v jsondoc.Value) {
		var ok bool
		if k, ok = appendValueKey(k[:0], d, v, fold, &scratch); ok && !slices.Contains(dst, string(k)) {
			dst = append(dst, string(k))
		}
	}
	for _, v := range d.AppendValues(nil, i, p) {
		if v.Kind != jsondoc.Array {
			add(v)
			continue
		}
		elems = d.AppendElements(elems[:0], v)
		for _, e := range elems {
			add(e)
		}
	}
	return dst
}
