package query

import (
	"slices"

	"github.com/decoy-mock/decoy/budget"
	"github.com/decoy-mock/decoy/jsondoc"
)

// Carrying structures over a write (§12 of the contract): a document one
// write made from another (jsondoc.Document.Origin) gets the equality
// indexes and the next id of the one before changed where the record
// changed, rather than built again: a write costs about its record, and so
// does the read after it. Sort orders are built again when asked for.

// maxOver is how many values an index carried over holds apart from the
// postings it shares, before it folds them in (a copy of the map).
const maxOver = 1024

// carryIndex returns the index of p over d carried over from the index of
// d's origin, when that is kept and the change keeps every other record in
// its place (a replace, an append); nil otherwise (the caller builds it).
func carryIndex(b *budget.Build, d *jsondoc.Document, key budget.Key, p jsondoc.Path, fold bool) *index {
	o := d.Origin()
	if o == nil || o.Op == jsondoc.EditDelete {
		return nil
	}
	prev, _ := o.Doc.Structures().Get(key).(*index)
	if prev == nil {
		return nil
	}
	var old []string
	if o.Op == jsondoc.EditReplace {
		old = valueKeys(nil, o.Doc, o.Index, p, fold)
	}
	cur := valueKeys(nil, d, o.Index, p, fold)
	ix := &index{n: d.Len(), postings: prev.postings, over: prev.over, bytes: prev.bytes, carried: true}
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
		over := make(map[string]*posting, len(ix.over)+len(changed))
		for k, p := range ix.over {
			over[k] = p
		}
		for k, p := range changed {
			over[k] = p
		}
		ix.over = over
		if len(over) > maxOver {
			ix.fold()
		}
	}
	if !b.Reserve(ix.bytes) {
		return nil
	}
	return ix
}

// fold makes the postings of ix its own, with what over holds in them.
func (ix *index) fold() {
	all := make(map[string]*posting, len(ix.postings)+len(ix.over))
	for k, p := range ix.postings {
		all[k] = p
	}
	for k, p := range ix.over {
		if len(p.ids) == 0 {
			delete(all, k)
		} else {
			all[k] = &posting{ids: p.ids}
		}
	}
	ix.postings, ix.over = all, nil
	ix.bytes = ix.memoryBytes()
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
