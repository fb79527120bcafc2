package jsondoc

import (
	"iter"
	"math/bits"
	"slices"
	"sort"
	"unsafe"
)

// spanList is the list of an array's element spans: one array for a parsed
// document; for an edited one, chunks that the states of the document
// share, a state copying only the chunk its change falls in (and the list
// of chunks), so that a write costs a chunk, not the list.
type spanList = chunkList[span]

// chunkList is a list held flat, or in chunks that lists made from one
// another by changes share (see spanList): the spans of an array, the
// digests of its records.
type chunkList[T any] struct {
	// flat holds the items when chunks is nil.
	flat []T
	// chunks hold the items in order; starts[k] is the index of
	// chunks[k]'s first item, and starts[len(chunks)] their number.
	chunks [][]T
	starts []int
	// uniform is set when every chunk but the last holds size items (the
	// most one holds): item i is then found without a search, and without
	// a division when size is a power of two (shift is its log2, else -1).
	uniform bool
	size    int
	shift   int
}

// setUniform marks the list's chunks as all of size items but the last.
func (l *chunkList[T]) setUniform(size int) {
	l.uniform, l.size, l.shift = true, size, -1
	if size&(size-1) == 0 {
		l.shift = bits.TrailingZeros(uint(size))
	}
}

// chunkMax is the most spans a chunk holds: a change copies at most that
// many (32 KiB). Tests lower it.
var chunkMax = 1024

func flatSpans(s []span) spanList { return spanList{flat: s} }

func flatList[T any](s []T) chunkList[T] { return chunkList[T]{flat: s} }

func (l *chunkList[T]) len() int {
	if l.chunks == nil {
		return len(l.flat)
	}
	return l.starts[len(l.chunks)]
}

// chunk returns the chunk that holds span i.
func (l *chunkList[T]) chunk(i int) int {
	return sort.Search(len(l.chunks), func(k int) bool { return l.starts[k+1] > i })
}

func (l *chunkList[T]) at(i int) T {
	if l.chunks == nil {
		return l.flat[i]
	}
	if l.uniform {
		if l.shift >= 0 {
			return l.chunks[i>>l.shift][i&(l.size-1)]
		}
		return l.chunks[i/l.size][i%l.size]
	}
	k := l.chunk(i)
	return l.chunks[k][i-l.starts[k]]
}

// all yields every span with its index, in order.
func (l *chunkList[T]) all() iter.Seq2[int, T] {
	return func(yield func(int, T) bool) {
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

// cursor walks a list in order.
type cursor[T any] struct {
	l    *chunkList[T]
	k, j int
}

func (l *chunkList[T]) cursor() *cursor[T] { return &cursor[T]{l: l} }

// next returns the next item.
func (c *cursor[T]) next() T {
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
func (l *chunkList[T]) memoryBytes() int64 {
	var zero T
	size := int64(unsafe.Sizeof(zero))
	if l.chunks == nil {
		return int64(cap(l.flat)) * size
	}
	n := int64(len(l.chunks))*24 + int64(len(l.starts))*8
	for _, c := range l.chunks {
		n += int64(cap(c)) * size
	}
	return n
}

// spanEditor changes a span list.
type spanEditor = chunkEditor[span]

// editSpans returns an editor of a span list.
func editSpans(l *spanList) *spanEditor { return editChunks(l) }

// chunkEditor changes a list without changing the list it came from: the
// chunks it changes are copied first (owned), the list of chunks when it
// first changes one, and their starts when it first changes those (a
// replace changes none; a list never changed is the one it came from).
type chunkEditor[T any] struct {
	l              chunkList[T]
	owned          []bool
	cloned, starts bool
}

// editChunks returns an editor of l: chunked (l's own chunks shared) or,
// for a flat list, cut into chunks (copied).
func editChunks[T any](l *chunkList[T]) *chunkEditor[T] {
	if l.chunks != nil {
		return &chunkEditor[T]{l: *l}
	}
	size := chunkMax
	e := &chunkEditor[T]{l: chunkList[T]{starts: []int{0}}, cloned: true, starts: true}
	e.l.setUniform(size)
	for i := 0; i < len(l.flat); i += size {
		c := l.flat[i:min(i+size, len(l.flat))]
		e.l.chunks = append(e.l.chunks, append(make([]T, 0, size), c...))
		e.l.starts = append(e.l.starts, i+len(c))
		e.owned = append(e.owned, true)
	}
	return e
}

// clone makes the list of chunks the editor's own, before its first
// change, and with starts their starts too.
func (e *chunkEditor[T]) clone(starts bool) {
	if !e.cloned {
		e.l.chunks = slices.Clone(e.l.chunks)
		e.owned = make([]bool, len(e.l.chunks))
		e.cloned = true
	}
	if starts && !e.starts {
		e.l.starts = slices.Clone(e.l.starts)
		e.starts = true
	}
}

// own has chunk k copied, unless it was already.
func (e *chunkEditor[T]) own(k int) []T {
	e.clone(false)
	if !e.owned[k] {
		src := e.l.chunks[k]
		if k == len(e.l.chunks)-1 {
			// The last, with room for appends.
			c := make([]T, len(src), max(e.l.size, len(src)))
			copy(c, src)
			e.l.chunks[k] = c
		} else {
			// Copied without clearing first: the copy fills it.
			e.l.chunks[k] = append([]T(nil), src...)
		}
		e.owned[k] = true
	}
	return e.l.chunks[k]
}

func (e *chunkEditor[T]) set(i int, s T) {
	k := e.l.chunk(i)
	e.own(k)[i-e.l.starts[k]] = s
}

func (e *chunkEditor[T]) append(s T) {
	e.clone(true)
	n := len(e.l.chunks)
	if n == 0 || len(e.l.chunks[n-1]) >= e.l.size {
		e.l.chunks = append(e.l.chunks, make([]T, 0, e.l.size))
		e.l.starts = append(e.l.starts, e.l.starts[n])
		e.owned = append(e.owned, true)
		n++
	}
	e.l.chunks[n-1] = append(e.own(n-1), s)
	e.l.starts[n]++
}

func (e *chunkEditor[T]) delete(i int) {
	e.clone(true)
	k := e.l.chunk(i)
	if k != len(e.l.chunks)-1 {
		e.l.uniform = false
	}
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
func (e *chunkEditor[T]) list() chunkList[T] {
	if len(e.l.chunks) == 0 {
		return chunkList[T]{flat: []T{}}
	}
	return e.l
}
