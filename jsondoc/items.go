package jsondoc

import (
	"strings"
	"sync"
	"unsafe"

	"github.com/cespare/xxhash/v2"
	"github.com/decoy-mock/decoy/budget"
)

// Items: a route may work on the array inside a document rather than on the
// document itself (§11.2 "items": data for {"data":[…],"links":{…}}). The
// array is then a Document of its own, over the same bytes: its records are
// the array's elements, its columns are built over them as a top-level
// array's are, and an answer made of its records is spliced back into the
// document's own bytes (Outer), every byte around the array as stored.

// itemsKind names the item views among a document's structures.
const itemsKind = "items"

// Items returns the array that path reaches in the document as a Document
// whose records are its elements, or false when path reaches no array.
// Path segments select object members by key and, on an array, an
// element by a decimal index; a segment that would fan out reaches
// nothing. An empty path is the document itself.
//
// A view is kept among the document's structures, counted against the
// cache's bound like a column; what is built over its records is kept in
// the same set, under names of its own. One that cannot be kept is made for
// the caller alone.
func (d *Document) Items(path []string) (*Document, bool) {
	if len(path) == 0 {
		return d, d.isArray
	}
	if l := d.live; l != nil {
		if joinPath(path) == l.key {
			return l.view, true
		}
		p, err := l.reparse(d)
		if err != nil {
			return nil, false
		}
		return p.Items(path)
	}
	built := d.set.Load(d.Key(itemsKind, strings.Join(path, ".")), func(b *budget.Build) any {
		v, ok := d.itemView(path, b)
		if !ok {
			return noItems{} // reaches no array: known, and kept as such
		}
		if v == nil {
			return nil // no room: not kept
		}
		return v
	})
	switch v := built.(type) {
	case *Document:
		return v, true
	case noItems:
		return nil, false
	}
	// Not kept: made for this read, within a turn of the pool's, as a
	// query without its structures is.
	done := d.set.Turn()
	defer done()
	v, ok := d.itemView(path, nil)
	return v, ok
}

// noItems is what Items keeps for a path that reaches no array.
type noItems struct{}

// itemView makes the view of the array path reaches, or false when it
// reaches none; with b, its spans are reserved before they are made, and
// the view is nil when they cannot be.
func (d *Document) itemView(path []string, b *budget.Build) (*Document, bool) {
	raw := d.raw
	i := skipWS(raw, 0)
	for _, seg := range path {
		switch raw[i] {
		case '{':
			j, ok := member(raw, i, seg)
			if !ok {
				return nil, false
			}
			i = j
		case '[':
			n, ok := index(seg)
			if !ok {
				return nil, false
			}
			j, ok := element(raw, i, n)
			if !ok {
				return nil, false
			}
			i = j
		default:
			return nil, false
		}
	}
	if raw[i] != '[' {
		return nil, false
	}
	end := containerEnd(raw, i)
	n := 0
	for j := skipWS(raw, i+1); raw[j] != ']'; n++ {
		if j = skipWS(raw, valueEnd(raw, j)); raw[j] == ',' {
			j = skipWS(raw, j+1)
		}
	}
	if b != nil && !b.Reserve(viewOverhead+int64(n)*int64(unsafe.Sizeof(span{}))) {
		return nil, true
	}
	v := &Document{raw: raw, isArray: true, set: d.set, outer: &outer{start: uint32(i), end: uint32(end), docEnd: uint32(len(raw))},
		prefix: d.prefix + itemsKind + ":" + strings.Join(path, ".") + "|"}
	spans := make([]span, 0, n)
	for j := skipWS(raw, i+1); raw[j] != ']'; {
		e := valueEnd(raw, j)
		spans = append(spans, span{uint32(j), uint32(e)})
		if j = skipWS(raw, e); raw[j] == ',' {
			j = skipWS(raw, j+1)
		}
	}
	v.spans = flatSpans(spans)
	return v, true
}

// viewOverhead is about what an item view holds besides its spans.
const viewOverhead = int64(unsafe.Sizeof(Document{}) + unsafe.Sizeof(outer{}) + 64)

// outer is where an item view's array lies in its document.
type outer struct {
	// start and end bound the array, docEnd the document, in its bytes.
	start, end, docEnd uint32
	// objects, on the view of an edited array, tells whether every
	// element is an object (see Objects).
	objects *bool
	sumOnce sync.Once
	sum     uint64
}

// OuterSum returns, for an item view, the 64-bit xxhash of the document's
// bytes around its array (see Outer), computed once; false for a document
// that is no view.
func (d *Document) OuterSum() (uint64, bool) {
	o := d.outer
	if o == nil {
		return 0, false
	}
	o.sumOnce.Do(func() {
		h := xxhash.New()
		h.Write(d.raw[:o.start])
		h.Write(d.raw[o.end:o.docEnd])
		o.sum = h.Sum64()
	})
	return o.sum, true
}

// Outer returns, for an item view, the document's bytes before its array
// and after it (an answer over the view is before, '[', the selected
// records, ']', after), and true; for a document that is no view, false.
func (d *Document) Outer() (before, after []byte, ok bool) {
	if d.outer == nil {
		return nil, nil, false
	}
	return d.raw[:d.outer.start], d.raw[d.outer.end:d.outer.docEnd], true
}
