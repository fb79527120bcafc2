package mockcache

import (
	"bytes"
	"slices"

	"github.com/decoy-mock/decoy"
	"github.com/decoy-mock/decoy/jsondoc"
	"github.com/decoy-mock/decoy/query"
)

// Writes in a batch (a mock loaded with writes after its base, an entry far
// behind): applied to one editor, so that the collection is copied once for
// all of them, and their records found through maps of the id field's
// values built once, kept right as the writes go, rather than by a pass
// over the collection each.

// applyBatch returns e with the writes ws applied, with one reference. A
// write that does not apply (its record not found, a record not an object,
// its collection not one) is passed over: it changes nothing, but for the
// number of the live data.
func (e *Entry) applyBatch(ws []*decoy.Write) (*Entry, error) {
	for k, w := range ws {
		if w.Seq != e.liveSeq+1+int64(k) {
			return nil, decoy.Errorf(decoy.ECONFLICT, "Write %d does not follow live data %d", w.Seq, e.liveSeq+int64(k))
		}
	}
	doc := e.Doc
	if doc == nil {
		return nil, errNotCollection()
	}
	for i := 0; i < len(ws); {
		j := i + 1
		for j < len(ws) && ws[j].Items == ws[i].Items {
			j++
		}
		if next, ok := applyRun(doc, ws[i:j]); ok {
			doc = next
		}
		i = j
	}
	if doc == e.Doc {
		// Nothing applied: the same data, in a document of its own, over
		// bytes of its own (e's may be mapped, and unmapped once e is
		// released).
		p, err := jsondoc.Parse(bytes.Clone(doc.Whole()))
		if err != nil {
			return nil, err
		}
		doc = p
	}
	var wrote int64
	for _, w := range ws {
		wrote += writeBytes(w)
	}
	return e.derive(doc, ws[len(ws)-1].Seq, wrote), nil
}

// applyRun returns doc with the writes ws, all on one collection, applied
// (those that do not apply passed over), or false when doc holds no
// collection there.
func applyRun(doc *jsondoc.Document, ws []*decoy.Write) (*jsondoc.Document, bool) {
	ed, ok := doc.Editor(splitPath(ws[0].Items))
	if !ok || !ed.Objects() {
		return nil, false
	}
	creates := 0
	for _, w := range ws {
		if w.Op == decoy.WriteCreate {
			creates++
		}
	}
	b := &batch{ed: ed, slots: ed.Len(), alive: newFenwick(ed.Len(), ed.Len()+creates), fields: map[string]*keyIndex{}}
	for _, w := range ws {
		_ = b.apply(w) // one that fails changes nothing
	}
	return ed.Document(), true
}

// batch applies writes to an editor. Records are named by slots: their
// places when the batch began, then one more for each created; a deleted
// record's slot is dead (alive counts the live ones before a slot, which is
// its record's place).
type batch struct {
	ed     *jsondoc.Editor
	slots  int
	alive  fenwick
	fields map[string]*keyIndex
	keys   []string
}

// keyIndex maps each index key of a field (see query.RecordKeys) to the
// live slots whose records have it, ascending.
type keyIndex struct {
	path jsondoc.Path
	m    map[string][]int32
}

func (b *batch) apply(w *decoy.Write) error {
	switch w.Op {
	case decoy.WriteCreate, decoy.WriteReplace, decoy.WriteUpdate, decoy.WriteDelete:
	default:
		return decoy.Errorf(decoy.EINVALID, "Unknown write operation: %q", w.Op)
	}
	var rec []byte
	if w.Op != decoy.WriteDelete {
		var err error
		if rec, err = checkRecord(w.Record); err != nil {
			return err
		}
	}
	if w.Op == decoy.WriteCreate {
		slot := int32(b.slots)
		b.slots++
		b.alive.add(int(slot), 1)
		b.ed.Append(rec, true)
		b.index(slot, b.ed.Len()-1, true)
		return nil
	}
	slot, ok := b.find(w)
	if !ok {
		return errNotFound()
	}
	pos := b.alive.prefix(int(slot))
	b.index(slot, pos, false)
	if w.Op == decoy.WriteDelete {
		b.alive.add(int(slot), -1)
		b.ed.Delete(pos)
		return nil
	}
	b.ed.Replace(pos, rec, true)
	b.index(slot, pos, true)
	return nil
}

// find returns the slot of the first record whose w.Field equals w.Key.
func (b *batch) find(w *decoy.Write) (int32, bool) {
	field := splitPath(w.Field)
	m, ok := query.NewMatch(field, []byte(w.Key))
	if !ok {
		return 0, false
	}
	ki := b.fields[w.Field]
	if ki == nil {
		ki = &keyIndex{path: jsondoc.NewPath(field), m: map[string][]int32{}}
		d := b.ed.Peek()
		for pos := range d.Len() {
			slot := int32(b.alive.kth(pos))
			for _, k := range query.RecordKeys(b.keys[:0], d, pos, ki.path) {
				if l := ki.m[k]; len(l) == 0 || l[len(l)-1] != slot {
					ki.m[k] = append(l, slot)
				}
			}
		}
		b.fields[w.Field] = ki
	}
	best := int32(-1)
	for _, k := range m.Keys() {
		if l := ki.m[k]; len(l) > 0 && (best < 0 || l[0] < best) {
			best = l[0]
		}
	}
	return best, best >= 0
}

// index adds slot, the record at pos, to the maps built (add), or takes it
// out of them.
func (b *batch) index(slot int32, pos int, add bool) {
	if len(b.fields) == 0 {
		return
	}
	d := b.ed.Peek()
	for _, ki := range b.fields {
		b.keys = query.RecordKeys(b.keys[:0], d, pos, ki.path)
		for _, k := range b.keys {
			l := ki.m[k]
			at, found := slices.BinarySearch(l, slot)
			switch {
			case add && !found:
				ki.m[k] = slices.Insert(l, at, slot)
			case !add && found:
				if l = slices.Delete(l, at, at+1); len(l) == 0 {
					delete(ki.m, k)
				} else {
					ki.m[k] = l
				}
			}
		}
	}
}

// fenwick counts the live slots: a Fenwick tree of 0s and 1s.
type fenwick []int32

// newFenwick returns a tree of size slots, the first n of them live.
func newFenwick(n, size int) fenwick {
	f := make(fenwick, size+1)
	for i := 1; i <= n; i++ {
		f[i] = 1
	}
	for i := 1; i <= size; i++ {
		if j := i + i&-i; j <= size {
			f[j] += f[i]
		}
	}
	return f
}

// add adds d to slot i.
func (f fenwick) add(i, d int) {
	for i++; i < len(f); i += i & -i {
		f[i] += int32(d)
	}
}

// prefix returns the live slots before slot i.
func (f fenwick) prefix(i int) int {
	n := 0
	for ; i > 0; i -= i & -i {
		n += int(f[i])
	}
	return n
}

// kth returns the slot of the live record at place k (0-based).
func (f fenwick) kth(k int) int {
	pos, step := 0, 1
	for step*2 < len(f) {
		step *= 2
	}
	for ; step > 0; step /= 2 {
		if next := pos + step; next < len(f) && int(f[next]) <= k {
			pos = next
			k -= int(f[next])
		}
	}
	return pos
}
