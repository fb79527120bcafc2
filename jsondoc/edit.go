package jsondoc

import (
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/cespare/xxhash/v2"
	"github.com/decoy-mock/decoy/budget"
)

// Edits (§12 of the contract): writes change the elements of one array of a
// document (the document itself, or the array at an item path), every other
// byte staying as stored. An Editor makes the changed document without
// re-parsing it and without rewriting its bytes: the stored bytes are
// copied once into an arena, the first time a document is edited, and each
// new element is appended to that arena, which the documents of later
// states share (each sees the arena up to its own length). An edited
// document's records are spans of the arena, as a parsed document's are of
// its bytes; its whole text (Whole) is assembled when a read needs it.
//
// The array is held as a list of elements, each with the separator before
// it (the whitespace after '[' for the first; a ',' and the whitespace
// around it for the others), and the text between the last element and
// ']' (trail). So:
//   - an appended element comes after the last one, with the separator
//     before the last (the first's whitespace after a ',' when it is the
//     only one; none in an empty array);
//   - a replaced element keeps its place and separator;
//   - a removed element goes with its separator; the first goes with the
//     separator of the next, whose place it takes; the only one leaves
//     "[]".

// live is what an edited document holds besides its spans: where its array
// lies, the separators of its elements, and the arena its new elements are
// in.
type live struct {
	// path is the item path of the array ("" key: the document itself).
	path []string
	key  string
	// view is the array as a document (the document itself when key is
	// "").
	view *Document
	// head is the text up to '[' included, trail the text between the
	// last element (or '[') and ']', tail the text from ']' to the end.
	head, trail, tail span
	seps              spanList
	arena             *arena
	// objects is set when every element is an object.
	objects bool
	size    int64
	// edited is set once an Editor is made from the document: a state
	// made from it may share its text, so it is not Abandoned.
	edited atomic.Bool

	parsedOnce sync.Once
	parsed     *Document
	parseErr   error
}

// arena holds the bytes of a document's edited states: the stored bytes,
// then each new element. A state's raw is a prefix of buf; only the state
// whose raw is the whole of buf may extend it in place (another state
// extending it would overwrite what a later state holds): others copy.
type arena struct {
	mu  sync.Mutex
	buf []byte
}

// arenaSlack is the room an arena keeps for new elements past what it
// copies.
const arenaSlack = 64 << 10

// extend returns raw followed by parts, in a's buffer when raw is a's
// whole buffer (in place when it has room), else in a new arena; and the
// arena that holds the result.
func (a *arena) extend(raw []byte, parts ...[]byte) ([]byte, *arena) {
	need := 0
	for _, p := range parts {
		need += len(p)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	owner := len(raw) == len(a.buf) && (len(raw) == 0 || unsafe.SliceData(raw) == unsafe.SliceData(a.buf))
	if owner && cap(a.buf)-len(a.buf) >= need {
		for _, p := range parts {
			a.buf = append(a.buf, p...)
		}
		return a.buf, a
	}
	size := len(raw) + need
	buf := make([]byte, len(raw), size+size/8+arenaSlack)
	copy(buf, raw)
	for _, p := range parts {
		buf = append(buf, p...)
	}
	if owner {
		a.buf = buf
		return buf, a
	}
	return buf, &arena{buf: buf}
}

// rewind gives back the room the state whose text is raw took past prev's,
// when raw is a's whole buffer and prev a prefix of it: the state before
// extends the arena in place again. Whoever calls it drops the state raw
// is the text of, unread.
func (a *arena) rewind(raw, prev []byte) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(raw) == len(a.buf) && len(prev) <= len(raw) && len(prev) > 0 &&
		unsafe.SliceData(raw) == unsafe.SliceData(a.buf) && unsafe.SliceData(prev) == unsafe.SliceData(a.buf) {
		a.buf = a.buf[:len(prev)]
	}
}

// Editor changes the elements of one array of a document, then makes the
// document they give (Document). It is for one goroutine; the document it
// was made from does not change.
type Editor struct {
	raw   []byte
	arena *arena
	l     *live // the new state, but for view, arena, seps and the documents
	spans *spanEditor
	seps  *spanEditor

	// from is the array edited, as a document; edits counts the changes,
	// last is the last of them.
	from  *Document
	edits int
	last  Origin
}

// EditOp is a change to an array's elements.
type EditOp uint8

// Changes to an array's elements.
const (
	EditAppend EditOp = iota
	EditReplace
	EditDelete
)

// Origin is where the array of an edited document comes from, when one
// change made it: the array before (Doc), and the change (Op, on element
// Index; an append's Index is the new element's). What was built over the
// array before can then be carried over (changed where the element
// changed) rather than built again: see Document.Origin.
type Origin struct {
	Doc   *Document
	Op    EditOp
	Index int
}

// Editor returns an editor of the array that path reaches (see Items), or
// false when it reaches no array.
func (d *Document) Editor(path []string) (*Editor, bool) {
	key := joinPath(path)
	if l := d.live; l != nil {
		if l.key == key {
			l.edited.Store(true)
			v := l.view
			ed := &Editor{raw: v.raw, arena: l.arena, spans: editSpans(&v.spans), seps: editSpans(&l.seps), from: v}
			ed.l = &live{path: l.path, key: key, head: l.head, trail: l.trail, tail: l.tail, objects: l.objects, size: l.size}
			return ed, true
		}
		p, err := l.reparse(d)
		if err != nil {
			return nil, false
		}
		return p.Editor(path)
	}
	v, ok := d.Items(path)
	if !ok {
		return nil, false
	}
	raw := d.raw
	var open, close int
	if v.outer != nil {
		open, close = int(v.outer.start), int(v.outer.end)-1
	} else {
		open = skipWS(raw, 0)
		close = len(raw) - 1
		for close > open && raw[close] != ']' {
			close--
		}
	}
	ar := &arena{}
	buf, ar := ar.extend(nil, raw)
	ed := &Editor{raw: buf, arena: ar, spans: editSpans(&v.spans), from: v}
	ed.l = &live{path: append([]string(nil), path...), key: key, head: span{0, uint32(open + 1)},
		tail: span{uint32(close), uint32(len(raw))}, objects: true, size: int64(len(raw))}
	seps := make([]span, v.spans.len())
	prev := uint32(open + 1)
	for i, s := range v.spans.all() {
		seps[i] = span{prev, s.start}
		prev = s.end
		if raw[s.start] != '{' {
			ed.l.objects = false
		}
	}
	sl := flatSpans(seps)
	ed.seps = editSpans(&sl)
	ed.l.trail = span{prev, uint32(close)}
	return ed, true
}

func joinPath(path []string) string {
	n := 0
	for _, s := range path {
		n += len(s) + 1
	}
	b := make([]byte, 0, n)
	for i, s := range path {
		if i > 0 {
			b = append(b, '.')
		}
		b = append(b, s...)
	}
	return string(b)
}

// Len returns the number of elements.
func (ed *Editor) Len() int { return ed.spans.l.len() }

// Objects reports whether every element is an object.
func (ed *Editor) Objects() bool { return ed.l.objects }

// Size returns the length of the document's whole text as it stands.
func (ed *Editor) Size() int64 { return ed.l.size }

// Peek returns the array as it stands, as a document to read now: it must
// not be used once the editor changes or makes its document, and keeps
// nothing built over it.
func (ed *Editor) Peek() *Document {
	return &Document{raw: ed.raw, isArray: true, spans: ed.spans.l, set: budget.Unbounded()}
}

// text returns the text of s.
func (ed *Editor) text(s span) []byte { return ed.raw[s.start:s.end] }

// Append appends rec, one JSON value (validated by the caller), as the
// last element.
func (ed *Editor) Append(rec []byte, object bool) {
	var sep []byte
	switch n := ed.Len(); {
	case n == 1:
		sep = append([]byte{','}, ed.text(ed.seps.l.at(0))...)
	case n > 1:
		sep = append([]byte(nil), ed.text(ed.seps.l.at(n-1))...)
	}
	start := uint32(len(ed.raw))
	ed.raw, ed.arena = ed.arena.extend(ed.raw, sep, rec)
	mid := start + uint32(len(sep))
	ed.seps.append(span{start, mid})
	ed.spans.append(span{mid, mid + uint32(len(rec))})
	ed.l.size += int64(len(sep) + len(rec))
	ed.l.objects = ed.l.objects && object
	ed.note(EditAppend, ed.Len()-1)
}

// note counts a change.
func (ed *Editor) note(op EditOp, i int) {
	ed.edits++
	ed.last = Origin{Doc: ed.from, Op: op, Index: i}
}

// Replace replaces element i by rec, one JSON value (validated by the
// caller).
func (ed *Editor) Replace(i int, rec []byte, object bool) {
	old := ed.spans.l.at(i)
	start := uint32(len(ed.raw))
	ed.raw, ed.arena = ed.arena.extend(ed.raw, rec)
	ed.spans.set(i, span{start, start + uint32(len(rec))})
	ed.l.size += int64(len(rec)) - int64(old.end-old.start)
	ed.l.objects = ed.l.objects && object
	ed.note(EditReplace, i)
}

// Delete removes element i.
func (ed *Editor) Delete(i int) {
	n := ed.Len()
	s := ed.spans.l.at(i)
	size := int64(s.end - s.start)
	sepLen := func(i int) int64 { s := ed.seps.l.at(i); return int64(s.end - s.start) }
	switch {
	case n == 1:
		size += sepLen(0) + int64(ed.l.trail.end-ed.l.trail.start)
		ed.l.trail = span{ed.l.trail.end, ed.l.trail.end}
	case i == 0:
		// The next element takes the first place, and its separator.
		size += sepLen(1)
		ed.seps.set(1, ed.seps.l.at(0))
	default:
		size += sepLen(i)
	}
	ed.l.size -= size
	ed.spans.delete(i)
	ed.seps.delete(i)
	if ed.Len() == 0 {
		ed.l.objects = true
	}
	ed.note(EditDelete, i)
}

// Document returns the document as edited. The editor must not be used
// afterwards.
func (ed *Editor) Document() *Document {
	l := ed.l
	l.arena = ed.arena
	l.seps = ed.seps.list()
	spans := ed.spans.list()
	set := budget.Unbounded()
	top := &Document{raw: ed.raw, set: set, live: l}
	if l.key == "" {
		top.isArray, top.spans = true, spans
		l.view = top
	} else {
		l.view = &Document{raw: ed.raw, isArray: true, spans: spans, set: set,
			prefix: itemsKind + ":" + l.key + "|",
			outer:  &outer{start: l.head.end - 1, end: l.tail.start + 1, docEnd: l.tail.end, objects: &l.objects}}
	}
	if ed.edits == 1 {
		o := ed.last
		l.view.origin.Store(&o)
		// Its own origin is no longer needed by what comes after: the
		// chain of documents kept alive stops there.
		if prev := ed.from.origin.Load(); prev != nil {
			prev.Doc.origin.Store(nil)
		}
	}
	ed.raw, ed.spans, ed.seps, ed.arena, ed.l, ed.from = nil, nil, nil, nil, nil, nil
	return top
}

// Abandon drops d, a document an Editor made from prev that nothing has
// read nor will: the room its new records took in their arena is given
// back, so that prev's next edit extends it in place again. Without it,
// every write applied and then not committed (its client gone, the store
// refusing it) left prev behind the arena's end, and made the next edit of
// prev copy the whole document. d must not be used afterwards.
func (d *Document) Abandon(prev *Document) {
	l, pl := d.live, prev.live
	if l == nil || pl == nil || l.arena != pl.arena {
		return // prev was not edited, or d's text was copied: nothing shared
	}
	if l.edited.Load() {
		return // a state made from d may hold its text (a delete shares it)
	}
	l.arena.rewind(d.raw, prev.raw)
}

// Carrier registers build as what builds the structure named k over the
// documents one change makes of d (see Origin), from d's: called from the
// structure's build, it has CarryOver build it again over them, at the
// cost of the change, so that each state of a document written to keeps
// what the one before had, whether reads asked for it or not.
func (d *Document) Carrier(k budget.Key, build func(*Document)) {
	d.carriersMu.Lock()
	defer d.carriersMu.Unlock()
	if d.carriers == nil {
		d.carriers = make(map[budget.Key]func(*Document))
	}
	if _, ok := d.carriers[k]; !ok {
		d.carriers[k] = build
	}
}

// CarryOver builds over the array of an edited document what its origin
// keeps and can be carried over (see Carrier): a cache calls it once the
// document has its structures' set.
func (d *Document) CarryOver() {
	if d.live == nil {
		return
	}
	v := d.live.view
	o := v.Origin()
	if o == nil {
		return
	}
	o.Doc.carriersMu.Lock()
	type carrier struct {
		k     budget.Key
		build func(*Document)
	}
	var cs []carrier
	for k, build := range o.Doc.carriers {
		cs = append(cs, carrier{k, build})
	}
	o.Doc.carriersMu.Unlock()
	for _, c := range cs {
		if o.Doc.set.Get(c.k) != nil {
			c.build(v)
		}
	}
}

// Origin returns where the document's array comes from, when it was made
// by one change of another (see Origin), for as long as that one is kept
// for it: nil otherwise.
func (d *Document) Origin() *Origin { return d.origin.Load() }

// Edited reports whether the document was made by an Editor.
func (d *Document) Edited() bool { return d.live != nil }

// Size returns the length of the document's whole text (see Whole).
func (d *Document) Size() int64 {
	if d.live != nil {
		return d.live.size
	}
	return int64(len(d.raw))
}

// wholeKind names the whole text of an edited document among its
// structures.
const wholeKind = "whole"

// Whole returns the document's whole text: its bytes as stored, or as
// edited, assembled on first use and kept among its structures (made for
// the caller alone when there is no room). The caller must not change it.
func (d *Document) Whole() []byte {
	l := d.live
	if l == nil {
		return d.raw
	}
	w, ok := d.set.Load(d.Key(wholeKind, ""), func(b *budget.Build) any {
		if !b.Reserve(l.size) {
			return nil
		}
		return l.assemble(d.raw)
	}).([]byte)
	if !ok {
		return l.assemble(d.raw)
	}
	return w
}

// assemble returns the whole text of the edited document over raw.
func (l *live) assemble(raw []byte) []byte {
	b := make([]byte, 0, l.size)
	b = append(b, raw[l.head.start:l.head.end]...)
	seps := l.seps.cursor()
	for _, s := range l.view.spans.all() {
		sep := seps.next()
		if sep.end == s.start {
			b = append(b, raw[sep.start:s.end]...)
			continue
		}
		b = append(b, raw[sep.start:sep.end]...)
		b = append(b, raw[s.start:s.end]...)
	}
	b = append(b, raw[l.trail.start:l.trail.end]...)
	return append(b, raw[l.tail.start:l.tail.end]...)
}

// reparse returns the edited document parsed again from its whole text,
// made once: for what the edited array's view does not answer (another
// item path, the root).
func (l *live) reparse(d *Document) (*Document, error) {
	l.parsedOnce.Do(func() {
		l.parsed, l.parseErr = Parse(d.Whole())
		if l.parsed != nil {
			l.parsed.set = d.set
		}
	})
	return l.parsed, l.parseErr
}

// objectsKind names, among a document's structures, whether every element
// of its array is an object.
const objectsKind = "objects"

// Objects reports whether the document is an array whose every element is
// an object (a collection, §12.1): known of an edited array as it was
// edited, else worked out once and kept.
func (d *Document) Objects() bool {
	if !d.isArray {
		return false
	}
	if l := d.live; l != nil && l.view == d {
		return l.objects
	}
	if d.outer != nil && d.outer.objects != nil {
		return *d.outer.objects
	}
	all, ok := d.set.Load(d.Key(objectsKind, ""), func(b *budget.Build) any {
		if !b.Reserve(8) {
			return nil
		}
		return d.allObjects()
	}).(bool)
	if !ok {
		return d.allObjects()
	}
	return all
}

// allObjects reports whether every element is an object.
func (d *Document) allObjects() bool {
	for _, s := range d.spans.all() {
		if d.raw[s.start] != '{' {
			return false
		}
	}
	return true
}

// carriedSums returns the record digests of the document carried over from
// those of the array it was edited from, when they are kept: the element
// changed digested alone, in a list that shares the chunks it did not
// change. nil otherwise.
func (d *Document) carriedSums() *Sums {
	o := d.Origin()
	if o == nil {
		return nil
	}
	prev, _ := o.Doc.set.Get(o.Doc.Key(sumsKind, "")).(*Sums)
	if prev == nil || prev.l.len() != o.Doc.Len() {
		return nil
	}
	ed := editChunks(&prev.l)
	sum := func() uint64 {
		s := d.spans.at(o.Index)
		return xxhash.Sum64(d.raw[s.start:s.end])
	}
	switch o.Op {
	case EditAppend:
		ed.append(sum())
	case EditReplace:
		ed.set(o.Index, sum())
	case EditDelete:
		ed.delete(o.Index)
	}
	return &Sums{l: ed.list()}
}
