package jsondoc

import (
	"bytes"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/cespare/xxhash/v2"
)

// maxColumns bounds the columns cached per document: paths come from
// untrusted query strings, so a document must not grow without bound.
const maxColumns = 64

// Document is a validated JSON document. It is safe for concurrent use.
type Document struct {
	raw     []byte
	isArray bool
	spans   []span // the elements of a top-level array
	// outer is set on an item view: where its array lies (see Items).
	outer *outer
	items itemViews

	mu      sync.Mutex
	columns map[string]*columnSlot
	order   []string // column keys, oldest first, for eviction

	sumsOnce sync.Once
	sums     []uint64
	sumsDone atomic.Bool

	onGrow atomic.Pointer[func(int64)]
}

// Sizer is what a structure built from a column (Column.Derived) may
// implement to be counted in its document's MemoryBytes.
type Sizer interface {
	// MemoryBytes is about how much memory the structure holds.
	MemoryBytes() int64
}

// MemoryBytes returns about how much memory the document holds besides its
// bytes: its record spans and digests, and the columns built over it with
// what was built from them. It grows as queries build columns, up to
// maxColumns of them.
func (d *Document) MemoryBytes() int64 {
	n := int64(unsafe.Sizeof(*d)) + int64(cap(d.spans))*int64(unsafe.Sizeof(span{}))
	if d.sumsDone.Load() {
		n += 8 * int64(len(d.spans))
	}
	n += d.itemsBytes()
	d.mu.Lock()
	defer d.mu.Unlock()
	for key, slot := range d.columns {
		n += int64(len(key)) + 64
		if c := slot.c.Load(); c != nil {
			n += c.bytes.Load()
		}
	}
	return n
}

// OnGrow sets f to be called, with no lock of the document held, each time
// the document grows (by its record digests, a column, or a structure built
// from one), with about how many bytes it grew by: a cache that bounds its
// memory then knows to count again. Columns dropped past maxColumns are not
// reported; MemoryBytes no longer counts them.
func (d *Document) OnGrow(f func(bytes int64)) { d.onGrow.Store(&f) }

func (d *Document) grew(n int64) {
	if f := d.onGrow.Load(); f != nil {
		(*f)(n)
	}
}

// Bytes returns the stored document. The caller must not change it.
func (d *Document) Bytes() []byte { return d.raw }

// IsArray reports whether the top-level value is an array.
func (d *Document) IsArray() bool { return d.isArray }

// Len returns the number of elements of a top-level array (0 otherwise).
func (d *Document) Len() int { return len(d.spans) }

// Record returns the stored text of element i of the top-level array.
func (d *Document) Record(i int) []byte {
	s := d.spans[i]
	return d.raw[s.start:s.end]
}

// RecordSums returns the 64-bit xxhash of each element's stored text,
// computed on first use and kept with the document: a digest of any
// selection of elements then costs a word per element, not a pass over
// their bytes. The caller must not change the result.
func (d *Document) RecordSums() []uint64 {
	d.sumsOnce.Do(func() {
		d.sums = make([]uint64, len(d.spans))
		for i, s := range d.spans {
			d.sums[i] = xxhash.Sum64(d.raw[s.start:s.end])
		}
		d.sumsDone.Store(true)
		d.grew(8 * int64(len(d.sums)))
	})
	return d.sums
}

// RecordLen returns the length of the stored text of element i.
func (d *Document) RecordLen(i int) int {
	s := d.spans[i]
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

// Column holds, for every element of a top-level array, the values that a
// path reaches in it.
type Column struct {
	// Where no element has more than one value and at least a third have
	// one, packed holds element i's value at i, in 8 bytes (see pack; 0
	// where it has none), and off is nil. Otherwise element i's values are
	// vals[off[i]:off[i+1]], 12 bytes each and 4 an element.
	packed []uint64
	vals   []Value
	off    []uint32
	n      int
	fanned []uint64 // bit i: element i's path went through an array fan-out

	mu      sync.Mutex
	derived map[string]*derived

	doc   *Document
	bytes atomic.Int64 // the column's, and what was built from it
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

// derived is a structure built once from a column.
type derived struct {
	once sync.Once
	v    any
}

// Derived returns what build makes of the column, building it on first use
// and keeping it with the column, under key: sort orders and indexes that
// live as long as the column does. Concurrent callers of one key wait for
// one build.
func (c *Column) Derived(key string, build func() any) any {
	c.mu.Lock()
	if c.derived == nil {
		c.derived = make(map[string]*derived)
	}
	e := c.derived[key]
	if e == nil {
		e = &derived{}
		c.derived[key] = e
	}
	c.mu.Unlock()
	e.once.Do(func() {
		e.v = build()
		if s, ok := e.v.(Sizer); ok {
			n := s.MemoryBytes() + int64(len(key)) + 64
			c.bytes.Add(n)
			c.doc.grew(n)
		}
	})
	return e.v
}

// Len returns the number of elements the column covers.
func (c *Column) Len() int { return c.n }

// Value returns the value the path reaches in element i when it reaches
// exactly one, and whether it does.
func (c *Column) Value(i int) (Value, bool) {
	if c.off == nil {
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
	if c.off == nil {
		if p := c.packed[i]; p != 0 {
			return append(dst, unpack(p))
		}
		return dst
	}
	return append(dst, c.vals[c.off[i]:c.off[i+1]]...)
}

// Fanned reports whether the path fanned out over an array in element i.
func (c *Column) Fanned(i int) bool {
	return c.fanned != nil && c.fanned[i/64]&(1<<(i%64)) != 0
}

// Column returns the column of path over the elements of a top-level array,
// building it on first use. Path segments select object members by key; on
// an array a segment of decimal digits selects that index and any other
// segment fans out over the array's elements. An element that is not an
// object reaches nothing.
func (d *Document) Column(path []string) *Column {
	key := strings.Join(path, ".")
	d.mu.Lock()
	slot, ok := d.columns[key]
	if !ok {
		if d.columns == nil {
			d.columns = make(map[string]*columnSlot)
		}
		if len(d.order) >= maxColumns {
			delete(d.columns, d.order[0])
			d.order = d.order[1:]
		}
		slot = &columnSlot{}
		d.columns[key] = slot
		d.order = append(d.order, key)
	}
	d.mu.Unlock()
	// Concurrent first queries on a path wait for one build: each would
	// otherwise hold a column of the whole document at once.
	slot.once.Do(func() {
		c := d.buildColumn(path)
		slot.c.Store(c)
		d.grew(c.bytes.Load() + int64(len(key)) + 64)
	})
	return slot.c.Load()
}

// columnSlot holds a column built once.
type columnSlot struct {
	once sync.Once
	c    atomic.Pointer[Column] // set once built
}

// columnBuilds counts column builds, for tests.
var columnBuilds atomic.Int64

func (d *Document) buildColumn(path []string) *Column {
	columnBuilds.Add(1)
	n := len(d.spans)
	c := &Column{doc: d, n: n, packed: make([]uint64, n)}
	w := walker{b: d.raw}
	found := 0 // elements with a value, while each has at most one
	for i, s := range d.spans {
		w.fanned = false
		w.vals = w.vals[:0]
		if d.raw[s.start] == '{' {
			w.walk(int(s.start), path)
		}
		if c.off == nil && len(w.vals) == 1 {
			if p, ok := pack(w.vals[0]); ok {
				c.packed[i] = p
				found++
			} else {
				c.spread(i, found+1)
			}
		} else if c.off == nil && len(w.vals) > 1 {
			c.spread(i, found+len(w.vals))
		}
		if c.off != nil {
			c.vals = append(c.vals, w.vals...)
			c.off[i+1] = uint32(len(c.vals))
		}
		if w.fanned {
			if c.fanned == nil {
				c.fanned = make([]uint64, (n+63)/64)
			}
			c.fanned[i/64] |= 1 << (i % 64)
		}
	}
	// Sparse: an element costs 8 bytes packed, and 4 plus 12 a value in
	// the general form, which is the smaller under a third found.
	if c.off == nil && 3*found < n {
		c.spread(n, found)
	}
	if cap(c.vals) != len(c.vals) { // room left by appending would be kept for the column's life
		c.vals = append(make([]Value, 0, len(c.vals)), c.vals...)
	}
	c.bytes.Store(int64(unsafe.Sizeof(*c)) + 8*int64(len(c.packed)) + int64(cap(c.vals))*int64(unsafe.Sizeof(Value{})) +
		4*int64(len(c.off)) + 8*int64(len(c.fanned)))
	return c
}

// spread turns a packed column built up to element upto into the general
// form, with room for size values.
func (c *Column) spread(upto, size int) {
	c.off = make([]uint32, c.n+1)
	c.vals = make([]Value, 0, size)
	for i := range upto {
		if p := c.packed[i]; p != 0 {
			c.vals = append(c.vals, unpack(p))
		}
		c.off[i+1] = uint32(len(c.vals))
	}
	c.packed = nil
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
