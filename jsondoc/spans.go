package jsondoc

import (
	"iter"
	"slices"
	"sort"
	"unsafe"
)

// spanList is the list of an array's element spans: one array for a parsed
// document; for an edited one, chunks that the states of the document
// share, a state copying only the chunk its change falls in (and the list
// of chunks), so that a write costs a chunk, not the list.
type spanList struct {
	// flat holds the spans when chunks is nil.
	flat []span
	// chunks hold the spans in order; starts[k] is the index of
	// chunks[k]'s first span, and starts[len(chunks)] their number.
	chunks [][]span
	starts []int
}

// chunkMax is the most spans a chunk holds: a change copies at most that
// many (32 KiB). Tests lower it.
var chunkMax = 4096

func flatSpans(s []span) spanList { return spanList{flat: s} }

func (l *spanList) len() int {
	if l.chunks == nil {
		return len(l.flat)
	}
	return l.starts[len(l.chunks)]
}

// chunk returns the chunk that holds span i.
func (l *spanList) chunk(i int) int {
	return sort.Search(len(l.chunks), func(k int) bool { return l.starts[k+1] > i })
}

func (l *spanList) at(i int) span {
	if l.chunks == nil {
		return l.flat[i]
	}
	k := l.chunk(i)
	return l.chunks[k][i-l.starts[k]]
}

// all yields every span with its index, in order.
func (l *spanList) all() iter.Seq2[int, span] {
	return func(yield func(int, span) bool) {
		if l.chunks == nil {
			for i, s := range l.flat {
				if !yield(i, s) {
					return
				}
			}
			return
		}
		i := 0
		for _, c := range l.chunks {
			for _, s := range c {
				if !yield(i, s) {
					return
				}
				i++
			}
		}
	}
}

// spanCursor walks a span list in order.
type spanCursor struct {
	l    *spanList
	k, j int
}

func (l *spanList) cursor() *spanCursor { return &spanCursor{l: l} }

// next returns the next span.
func (c *spanCursor) next() span {
	if c.l.chunks == nil {
		c.j++
		return c.l.flat[c.j-1]
	}
	for c.j >= len(c.l.chunks[c.k]) {
		c.k, c.j = c.k+1, 0
	}
	c.j++
	return c.l.chunks[c.k][c.j-1]
}

// memoryBytes is about what the list holds.
func (l *spanList) memoryBytes() int64 {
	if l.chunks == nil {
		return int64(cap(l.flat)) * int64(unsafe.Sizeof(span{}))
	}
	n := int64(len(l.chunks))*24 + int64(len(l.starts))*8
	for _, c := range l.chunks {
		n += int64(cap(c)) * int64(unsafe.Sizeof(span{}))
	}
	return n
}

// spanEditor changes a span list without changing the list it came from:
// the chunks it changes are copied first (owned).
type spanEditor struct {
	l     spanList
	owned []bool
}

// editSpans returns an editor of l: chunked (l's own chunks shared) or, for
// a flat list, cut into chunks (copied).
func editSpans(l *spanList) *spanEditor {
	if l.chunks != nil {
		return &spanEditor{l: spanList{chunks: slices.Clone(l.chunks), starts: slices.Clone(l.starts)},
			owned: make([]bool, len(l.chunks))}
	}
	e := &spanEditor{l: spanList{starts: []int{0}}}
	for i := 0; i < len(l.flat); i += chunkMax {
		c := l.flat[i:min(i+chunkMax, len(l.flat))]
		e.l.chunks = append(e.l.chunks, append(make([]span, 0, chunkMax), c...))
		e.l.starts = append(e.l.starts, i+len(c))
		e.owned = append(e.owned, true)
	}
	return e
}

// own has chunk k copied, unless it was already.
func (e *spanEditor) own(k int) []span {
	if !e.owned[k] {
		e.l.chunks[k] = append(make([]span, 0, chunkMax), e.l.chunks[k]...)
		e.owned[k] = true
	}
	return e.l.chunks[k]
}

func (e *spanEditor) set(i int, s span) {
	k := e.l.chunk(i)
	e.own(k)[i-e.l.starts[k]] = s
}

func (e *spanEditor) append(s span) {
	n := len(e.l.chunks)
	if n == 0 || len(e.l.chunks[n-1]) >= chunkMax {
		e.l.chunks = append(e.l.chunks, make([]span, 0, chunkMax))
		e.l.starts = append(e.l.starts, e.l.starts[n])
		e.owned = append(e.owned, true)
		n++
	}
	e.l.chunks[n-1] = append(e.own(n-1), s)
	e.l.starts[n]++
}

func (e *spanEditor) delete(i int) {
	k := e.l.chunk(i)
	c := e.own(k)
	c = slices.Delete(c, i-e.l.starts[k], i-e.l.starts[k]+1)
	for j := k + 1; j < len(e.l.starts); j++ {
		e.l.starts[j]--
	}
	if len(c) == 0 {
		e.l.chunks = slices.Delete(e.l.chunks, k, k+1)
		e.l.starts = slices.Delete(e.l.starts, k, k+1)
		e.owned = slices.Delete(e.owned, k, k+1)
		return
	}
	e.l.chunks[k] = c
}

// list returns the list as edited; the editor must not be used afterwards.
func (e *spanEditor) list() spanList {
	if len(e.l.chunks) == 0 {
		return spanList{flat: []span{}}
	}
	return e.l
}
