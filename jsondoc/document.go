package jsondoc

import (
	"bytes"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/cespare/xxhash/v2"
	"github.com/decoy-mock/decoy/budget"
)

// Document is a validated JSON document. It is safe for concurrent use.
type Document struct {
	raw     []byte
	isArray bool
	spans   spanList // the elements of a top-level array

	// set keeps what is built over the document (columns, record
	// digests, and what the query engine derives from columns), each by
	// its recency, within the memory bound of the cache that holds the
	// document (budget.Unbounded until one does).
	set *budget.Set
	// prefix starts the names of what is built over an item view's
	// records in its document's set, which it shares (see Items); "" for
	// the document itself.
	prefix string
	// outer is set on an item view: where its array lies (see Items).
	outer *outer
	// live is set on a document an Editor made (see edit.go); origin on
	// its array, when one change made it.
	live   *live
	origin atomic.Pointer[Origin]
	// carriers are what CarryOver runs for the structures built over the
	// document that a change can carry over (see Carrier).
	carriersMu sync.Mutex
	carriers   map[budget.Key]func(*Document)
}

// Key names a structure of kind built over the document's records for
// name (a path's text): an item view's names start with its prefix, so
// that its structures and its document's share the document's set apart.
func (d *Document) Key(kind, name string) budget.Key {
	if d.prefix == "" {
		return budget.Key{Kind: kind, Name: name}
	}
	return budget.Key{Kind: kind, Name: d.prefix + name}
}

// Structures returns the registry of what is built over the document:
// anything built over it is kept there, counted against the bound of the
// cache that holds the document, or not kept at all.
func (d *Document) Structures() *budget.Set { return d.set }

// SetStructures has what is built over the document kept in s from now on:
// a cache calls it once, before it shares the document.
func (d *Document) SetStructures(s *budget.Set) {
	d.set = s
	if d.live != nil && d.live.view != d {
		d.live.view.set = s
	}
}

// sumsKind names the record digests among the document's structures.
const sumsKind = "sums"

// MemoryBytes returns about how much memory the document holds besides its
// bytes: the document and its record spans. What is built over it is
// counted in its Structures.
func (d *Document) MemoryBytes() int64 {
	n := int64(unsafe.Sizeof(*d)) + d.spans.memoryBytes()
	if l := d.live; l != nil {
		n += int64(unsafe.Sizeof(*l)) + l.seps.memoryBytes()
		if l.view != d {
			n += viewOverhead + l.view.spans.memoryBytes()
		}
	}
	return n
}

// Bytes returns the bytes the document's values and records are spans of:
// the stored document, or, for an edited one, the arena its elements are in
// (its text is Whole). The caller must not change them.
func (d *Document) Bytes() []byte { return d.raw }

// IsArray reports whether the top-level value is an array.
func (d *Document) IsArray() bool { return d.isArray }

// Len returns the number of elements of a top-level array (0 otherwise).
func (d *Document) Len() int { return d.spans.len() }

// Record returns the stored text of element i of the top-level array.
func (d *Document) Record(i int) []byte {
	s := d.spans.at(i)
	return d.raw[s.start:s.end]
}

// RecordSums returns the 64-bit xxhash of each element's stored text,
// computed on first use and kept with the document: a digest of any
// selection of elements then costs a word per element, not a pass over
// their bytes. It returns nil when they cannot be kept (the caller hashes
// the records it needs).
func (d *Document) RecordSums() *Sums {
	sums, _ := d.set.Load(d.Key(sumsKind, ""), func(b *budget.Build) any {
		n := int64(d.spans.len())
		if !b.Fits(8*n) || !b.Reserve(8*n) {
			return nil
		}
		d.Carrier(d.Key(sumsKind, ""), func(n *Document) { n.RecordSums() })
		if sums := d.carriedSums(); sums != nil {
			return sums
		}
		sums := make([]uint64, d.spans.len())
		for i, s := range d.spans.all() {
			sums[i] = xxhash.Sum64(d.raw[s.start:s.end])
		}
		return &Sums{l: flatList(sums)}
	}).(*Sums)
	return sums
}

// Sums are the digests of a document's records (see RecordSums).
type Sums struct{ l chunkList[uint64] }

// At returns the digest of record i.
func (s *Sums) At(i int) uint64 { return s.l.at(i) }

// RecordLen returns the length of the stored text of element i.
func (d *Document) RecordLen(i int) int {
	s := d.spans.at(i)
	return int(s.end - s.start)
}

// Text returns the stored text of v.
func (d *Document) Text(v Value) []byte { return d.raw[v.Start:v.End] }

// AppendString appends the decoded content of the string v to dst. For a
// string without escapes it appends the stored bytes between the quotes.
func (d *Document) AppendString(dst []byte, v Value) []byte {
	content := d.raw[v.Start+1 : v.End-1]
	if !v.Escaped {
		return append(dst, content...)
	}
	return appendUnquoted(dst, content)
}

// StringContent returns the decoded content of the string v. When v has no
// escapes the result aliases the document; otherwise it is built in scratch,
// which the caller may reuse.
func (d *Document) StringContent(v Value, scratch *[]byte) []byte {
	if !v.Escaped {
		return d.raw[v.Start+1 : v.End-1]
	}
	*scratch = appendUnquoted((*scratch)[:0], d.raw[v.Start+1:v.End-1])
	return *scratch
}

// AppendElements appends the elements of the array v to dst.
func (d *Document) AppendElements(dst []Value, v Value) []Value {
	b := d.raw
	i := skipWS(b, int(v.Start)+1)
	if b[i] == ']' {
		return dst
	}
	for {
		e := valueAt(b, i)
		dst = append(dst, e)
		i = skipWS(b, int(e.End))
		if b[i] != ',' {
			return dst
		}
		i = skipWS(b, i+1)
	}
}

// Path is a path into the elements of a top-level array: its segments,
// and its text, which names what is built for it among the document's
// structures.
type Path struct {
	Key  string
	Segs []string
}

// NewPath returns the path of segs.
func NewPath(segs []string) Path { return Path{Key: strings.Join(segs, "."), Segs: segs} }

// Column holds, for every element of a top-level array, the values that a
// path reaches in it. A column kept with its document is built once and
// shared; one that could not be kept walks each element when asked, and is
// for one goroutine.
type Column struct {
	// Where no element has more than one value and at least a third have
	// one, packed holds element i's value at i, in 8 bytes (see pack; 0
	// where it has none), and off is nil. Otherwise element i's values are
	// vals[off[i]:off[i+1]], 12 bytes each and 4 an element. Where no
	// element has a value, both are nil (empty).
	packed []uint64
	vals   []Value
	off    []uint32
	n      int
	fanned []uint64 // bit i: element i's path went through an array fan-out

	// walk, on a column that was not kept, finds element last's values
	// (walk.vals, walk.fanned) when asked.
	walk *walker
	path []string
	last int

	doc   *Document
	bytes int64 // what the column holds
}

// maxPackedLen is the longest value a packed column holds: 28 bits of
// length (a column reaching a longer one takes the general form). Tests
// lower it.
var maxPackedLen uint32 = 1<<28 - 1

// pack packs a value in 64 bits: its start, its length, its kind and
// whether it is escaped. A value is never 0, its kind not being Missing.
func pack(v Value) (uint64, bool) {
	n := v.End - v.Start
	if n > maxPackedLen {
		return 0, false
	}
	p := uint64(v.Start) | uint64(n)<<32 | uint64(v.Kind)<<60
	if v.Escaped {
		p |= 1 << 63
	}
	return p, true
}

func unpack(p uint64) Value {
	start := uint32(p)
	return Value{Start: start, End: start + uint32(p>>32)&(1<<28-1), Kind: Kind(p >> 60 & 7), Escaped: p>>63 != 0}
}

// Len returns the number of elements the column covers.
func (c *Column) Len() int { return c.n }

// Empty reports whether the path reaches no value in any element (known
// only of a column that was kept: one that walks reports false).
func (c *Column) Empty() bool { return c.walk == nil && c.packed == nil && c.off == nil }

// Value returns the value the path reaches in element i when it reaches
// exactly one, and whether it does.
func (c *Column) Value(i int) (Value, bool) {
	if c.walk != nil {
		w := c.walkTo(i)
		if len(w.vals) != 1 {
			return Value{}, false
		}
		return w.vals[0], true
	}
	if c.off == nil {
		if c.packed == nil {
			return Value{}, false
		}
		p := c.packed[i]
		return unpack(p), p != 0
	}
	if c.off[i+1]-c.off[i] != 1 {
		return Value{}, false
	}
	return c.vals[c.off[i]], true
}

// AppendValues appends to dst the values the path reaches in element i
// (none when the path is missing there).
func (c *Column) AppendValues(dst []Value, i int) []Value {
	if c.walk != nil {
		return append(dst, c.walkTo(i).vals...)
	}
	if c.off == nil {
		if c.packed != nil {
			if p := c.packed[i]; p != 0 {
				return append(dst, unpack(p))
			}
		}
		return dst
	}
	return append(dst, c.vals[c.off[i]:c.off[i+1]]...)
}

// Fanned reports whether the path fanned out over an array in element i,
// where it reaches a value (a column that reaches nothing keeps no fan-out).
func (c *Column) Fanned(i int) bool {
	if c.walk != nil {
		return c.walkTo(i).fanned
	}
	return c.fanned != nil && c.fanned[i/64]&(1<<(i%64)) != 0
}

// walkTo has the walker of a column that was not kept hold element i's
// values.
func (c *Column) walkTo(i int) *walker {
	w := c.walk
	if c.last != i {
		c.last = i
		w.fanned = false
		w.vals = w.vals[:0]
		if s := c.doc.spans.at(i); c.doc.raw[s.start] == '{' {
			w.walk(int(s.start), c.path)
		}
	}
	return w
}

// AppendValues appends to dst the values path p reaches in element i of a
// top-level array, as element i's values in the column of p: none when the
// element is not an object. It walks the element now and keeps nothing: a
// document of one record (a request seen as JSON, say) is asked about once.
func (d *Document) AppendValues(dst []Value, i int, p Path) []Value {
	s := d.spans.at(i)
	if d.raw[s.start] != '{' {
		return dst
	}
	w := walker{b: d.raw, vals: dst}
	w.walk(int(s.start), p.Segs)
	return w.vals
}

// columnKey names the column of path p among the document's structures.
func (d *Document) columnKey(p Path) budget.Key { return d.Key("column", p.Key) }

// Column returns the column of path over the elements of a top-level array,
// building it on first use and keeping it with the document when there is
// room for it; when there is not, it returns a column that finds each
// element's values as they are asked for, for the caller alone. Path
// segments select object members by key; on an array a segment of decimal
// digits selects that index and any other segment fans out over the
// array's elements. An element that is not an object reaches nothing.
func (d *Document) Column(p Path) *Column {
	if c, ok := d.set.Load(d.columnKey(p), func(b *budget.Build) any { return d.keptColumn(b, p.Segs) }).(*Column); ok {
		return c
	}
	return d.walkingColumn(p.Segs)
}

// PeekColumn returns the column of p when it is kept with the document,
// else a column that walks each element when asked, for the caller alone:
// it never builds one. A structure carried over a write (see Origin) asks
// it about the few elements it compares, not every one; a structure built
// in one pass over the elements (an order, an index) reads each once.
// The structure is what is kept: building a whole column for it would
// keep, beside it, values it no longer needs (for an order of 100,000
// records, 0.8 MB beside its 0.4 MB).
func (d *Document) PeekColumn(p Path) *Column {
	if c, ok := d.set.Get(d.columnKey(p)).(*Column); ok {
		return c
	}
	return d.walkingColumn(p.Segs)
}

// keptColumn builds the column of path within b, or returns nil (no
// column) when it does not fit: the build stops at the first allocation
// that does not (a packed column's, at the first value found).
func (d *Document) keptColumn(b *budget.Build, path []string) any {
	if c := d.buildColumn(b, path); c != nil {
		return c
	}
	return nil
}

// walkingColumn returns a column of path that keeps no values.
func (d *Document) walkingColumn(path []string) *Column {
	return &Column{doc: d, n: d.spans.len(), walk: &walker{b: d.raw}, path: path, last: -1}
}

// columnBuilds counts column builds, for tests.
var columnBuilds atomic.Int64

// valueSize is the size of a Value in a column's general form.
const valueSize = int64(unsafe.Sizeof(Value{}))

// buildColumn builds the column of path, reserving in b (when set) what it
// allocates before allocating it, and returns nil when a reservation
// fails. An element costs 8 bytes packed, and 4 plus 12 a value in the
// general form, which is the smaller under a third found; a column that
// reaches nothing holds nothing per element.
func (d *Document) buildColumn(b *budget.Build, path []string) *Column {
	columnBuilds.Add(1)
	n := d.spans.len()
	c := &Column{doc: d, n: n}
	if !reserve(b, int64(unsafe.Sizeof(*c))) {
		return nil
	}
	w := walker{b: d.raw}
	found := 0 // elements with a value, while each has at most one
	for i, s := range d.spans.all() {
		w.fanned = false
		w.vals = w.vals[:0]
		if d.raw[s.start] == '{' {
			w.walk(int(s.start), path)
		}
		if c.off == nil && len(w.vals) == 1 {
			if p, ok := pack(w.vals[0]); !ok {
				if !c.spread(b, i, found+1) {
					return nil
				}
			} else {
				if c.packed == nil {
					if !reserve(b, 8*int64(n)) {
						return nil
					}
					c.packed = make([]uint64, n)
				}
				c.packed[i] = p
				found++
			}
		} else if c.off == nil && len(w.vals) > 1 {
			if !c.spread(b, i, found+len(w.vals)) {
				return nil
			}
		}
		if c.off != nil {
			if !c.appendValues(b, w.vals) {
				return nil
			}
			c.off[i+1] = uint32(len(c.vals))
		}
		if w.fanned {
			if c.fanned == nil {
				words := (n + 63) / 64
				if !reserve(b, 8*int64(words)) {
					return nil
				}
				c.fanned = make([]uint64, words)
			}
			c.fanned[i/64] |= 1 << (i % 64)
		}
	}
	switch {
	case c.off == nil && found == 0 && c.fanned != nil:
		// Reaches nothing: where it fanned out does not matter.
		free(b, 8*int64(len(c.fanned)))
		c.fanned = nil
	case c.off == nil && found > 0 && 3*found < n:
		if !c.spread(b, n, found) {
			return nil
		}
	}
	if cap(c.vals) != len(c.vals) { // room left by appending would be kept for the column's life
		if !reserve(b, valueSize*int64(len(c.vals))) {
			return nil
		}
		old := cap(c.vals)
		c.vals = append(make([]Value, 0, len(c.vals)), c.vals...)
		free(b, valueSize*int64(old))
	}
	c.bytes = int64(unsafe.Sizeof(*c)) + 8*int64(len(c.packed)) + int64(cap(c.vals))*valueSize +
		4*int64(len(c.off)) + 8*int64(len(c.fanned))
	return c
}

// reserve reserves n bytes in b, if any.
func reserve(b *budget.Build, n int64) bool { return b == nil || b.Reserve(n) }

// free gives n bytes back to b, if any.
func free(b *budget.Build, n int64) {
	if b != nil {
		b.Free(n)
	}
}

// spread turns a packed column built up to element upto into the general
// form, with room for size values.
func (c *Column) spread(b *budget.Build, upto, size int) bool {
	if !reserve(b, 4*int64(c.n+1)+valueSize*int64(size)) {
		return false
	}
	c.off = make([]uint32, c.n+1)
	c.vals = make([]Value, 0, size)
	for i := range upto {
		if c.packed != nil {
			if p := c.packed[i]; p != 0 {
				c.vals = append(c.vals, unpack(p))
			}
		}
		c.off[i+1] = uint32(len(c.vals))
	}
	if c.packed != nil {
		free(b, 8*int64(len(c.packed)))
		c.packed = nil
	}
	return true
}

// appendValues appends vs to the values of a column in the general form,
// reserving a larger array before it grows.
func (c *Column) appendValues(b *budget.Build, vs []Value) bool {
	if need := len(c.vals) + len(vs); need > cap(c.vals) {
		old := cap(c.vals)
		size := max(2*old, need, 16)
		if !reserve(b, valueSize*int64(size)) {
			return false
		}
		c.vals = append(make([]Value, 0, size), c.vals...)
		free(b, valueSize*int64(old))
	}
	c.vals = append(c.vals, vs...)
	return true
}

// Root returns the top-level value.
func (d *Document) Root() Value {
	return valueAt(d.raw, skipWS(d.raw, 0))
}

// walker resolves paths over validated JSON; it never checks syntax.
type walker struct {
	b      []byte
	vals   []Value
	fanned bool
}

func (w *walker) walk(i int, path []string) {
	if len(path) == 0 {
		w.vals = append(w.vals, valueAt(w.b, i))
		return
	}
	switch w.b[i] {
	case '{':
		if j, ok := member(w.b, i, path[0]); ok {
			w.walk(j, path[1:])
		}
	case '[':
		if n, ok := index(path[0]); ok {
			if j, ok := element(w.b, i, n); ok {
				w.walk(j, path[1:])
			}
			return
		}
		w.fanned = true
		b := w.b
		j := skipWS(b, i+1)
		if b[j] == ']' {
			return
		}
		for {
			w.walk(j, path)
			j = skipWS(b, valueEnd(b, j))
			if b[j] != ',' {
				return
			}
			j = skipWS(b, j+1)
		}
	}
}

// index parses a path segment of decimal digits as an array index.
func index(seg string) (int, bool) {
	if seg == "" {
		return 0, false
	}
	n := 0
	for k := 0; k < len(seg); k++ {
		c := seg[k]
		if c < '0' || c > '9' {
			return 0, false
		}
		if n > (1<<31)/10 {
			n = 1 << 31 // beyond any array Parse accepts
			continue
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}

// member returns the start of the value of key in the object at i. As in
// JavaScript's JSON.parse, the last of duplicate keys wins.
func member(b []byte, i int, key string) (int, bool) {
	found := -1
	i = skipWS(b, i+1)
	if b[i] == '}' {
		return 0, false
	}
	for {
		kend := stringEnd(b, i)
		k := b[i+1 : kend-1]
		i = skipWS(b, kend) // ':'
		i = skipWS(b, i+1)  // value
		if keyEqual(k, key) {
			found = i
		}
		i = skipWS(b, valueEnd(b, i))
		if b[i] != ',' {
			break
		}
		i = skipWS(b, i+1)
	}
	return found, found >= 0
}

func keyEqual(raw []byte, key string) bool {
	if bytes.IndexByte(raw, '\\') < 0 {
		return string(raw) == key
	}
	var buf [64]byte
	return string(appendUnquoted(buf[:0], raw)) == key
}

// element returns the start of element n of the array at i.
func element(b []byte, i, n int) (int, bool) {
	i = skipWS(b, i+1)
	if b[i] == ']' {
		return 0, false
	}
	for k := 0; ; k++ {
		if k == n {
			return i, true
		}
		i = skipWS(b, valueEnd(b, i))
		if b[i] != ',' {
			return 0, false
		}
		i = skipWS(b, i+1)
	}
}

func valueAt(b []byte, i int) Value {
	end := valueEnd(b, i)
	v := Value{Start: uint32(i), End: uint32(end)}
	switch b[i] {
	case '{':
		v.Kind = Object
	case '[':
		v.Kind = Array
	case '"':
		v.Kind = String
		v.Escaped = bytes.IndexByte(b[i+1:end-1], '\\') >= 0
	case 't':
		v.Kind = True
	case 'f':
		v.Kind = False
	case 'n':
		v.Kind = Null
	default:
		v.Kind = Number
	}
	return v
}

func skipWS(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// valueEnd returns the end of the value that starts at i.
func valueEnd(b []byte, i int) int {
	switch b[i] {
	case '"':
		return stringEnd(b, i)
	case '{', '[':
		return containerEnd(b, i)
	}
	for i < len(b) {
		switch b[i] {
		case ',', ']', '}', ' ', '\t', '\n', '\r':
			return i
		}
		i++
	}
	return i
}

// stringEnd returns the end of the string whose opening quote is at i.
func stringEnd(b []byte, i int) int {
	i++
	for {
		k := i + bytes.IndexByte(b[i:], '"')
		bs := 0
		for m := k - 1; m >= i && b[m] == '\\'; m-- {
			bs++
		}
		if bs%2 == 0 {
			return k + 1
		}
		i = k + 1
	}
}

// containerEnd returns the end of the array or object that starts at i.
func containerEnd(b []byte, i int) int {
	depth := 0
	for i < len(b) {
		switch b[i] {
		case '"':
			i = stringEnd(b, i)
			continue
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth == 0 {
				return i + 1
			}
		}
		i++
	}
	return i
}
