package jsondoc

import (
	"strings"
	"sync"

	"github.com/cespare/xxhash/v2"
)

// Items: a route may work on the array inside a document rather than on the
// document itself (§11.2 "items": data for {"data":[…],"links":{…}}). The
// array is then a Document of its own, over the same bytes: its records are
// the array's elements, its columns are built over them as a top-level
// array's are, and an answer made of its records is spliced back into the
// document's own bytes (Outer), every byte around the array as stored.

// maxItems bounds the item views kept per document: their paths come from
// routes, not requests, so a few suffice; past it the oldest goes.
const maxItems = 8

// itemViews holds a document's item views, by path.
type itemViews struct {
	mu    sync.Mutex
	views map[string]*Document
	order []string // oldest first
}

// Items returns the array that path reaches in the document as a Document
// whose records are its elements, made once and kept with the document, or
// false when path reaches no array. Path segments select object members by
// key and, on an array, an element by a decimal index; a segment that would
// fan out reaches nothing. An empty path is the document itself.
func (d *Document) Items(path []string) (*Document, bool) {
	if len(path) == 0 {
		return d, d.isArray
	}
	key := strings.Join(path, ".")
	d.items.mu.Lock()
	v, ok := d.items.views[key]
	d.items.mu.Unlock()
	if ok {
		return v, v != nil
	}
	v = d.itemView(path)
	d.items.mu.Lock()
	if cur, ok := d.items.views[key]; ok { // made meanwhile: keep one
		d.items.mu.Unlock()
		return cur, cur != nil
	}
	if d.items.views == nil {
		d.items.views = make(map[string]*Document)
	}
	if len(d.items.order) >= maxItems {
		delete(d.items.views, d.items.order[0])
		d.items.order = d.items.order[1:]
	}
	d.items.views[key] = v
	d.items.order = append(d.items.order, key)
	d.items.mu.Unlock()
	if v != nil {
		d.grew(v.MemoryBytes())
	}
	return v, v != nil
}

// itemView makes the view of the array path reaches, or nil.
func (d *Document) itemView(path []string) *Document {
	b := d.raw
	i := skipWS(b, 0)
	for _, seg := range path {
		switch b[i] {
		case '{':
			j, ok := member(b, i, seg)
			if !ok {
				return nil
			}
			i = j
		case '[':
			n, ok := index(seg)
			if !ok {
				return nil
			}
			j, ok := element(b, i, n)
			if !ok {
				return nil
			}
			i = j
		default:
			return nil
		}
	}
	if b[i] != '[' {
		return nil
	}
	end := containerEnd(b, i)
	v := &Document{raw: b, isArray: true, outer: &outer{start: uint32(i), end: uint32(end)}}
	for j := skipWS(b, i+1); b[j] != ']'; {
		e := valueEnd(b, j)
		v.spans = append(v.spans, span{uint32(j), uint32(e)})
		if j = skipWS(b, e); b[j] == ',' {
			j = skipWS(b, j+1)
		}
	}
	v.onGrow.Store(d.onGrow.Load())
	return v
}

// outer is where an item view's array lies in its document.
type outer struct {
	start, end uint32
	sumOnce    sync.Once
	sum        uint64
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
		h.Write(d.raw[o.end:])
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
	return d.raw[:d.outer.start], d.raw[d.outer.end:], true
}

// itemsBytes is about what the item views hold, for MemoryBytes.
func (d *Document) itemsBytes() int64 {
	d.items.mu.Lock()
	defer d.items.mu.Unlock()
	var n int64
	for key, v := range d.items.views {
		n += int64(len(key)) + 64
		if v != nil {
			n += v.MemoryBytes()
		}
	}
	return n
}
