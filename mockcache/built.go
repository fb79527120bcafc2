package mockcache

import (
	"bytes"
	"io"
	"sync"
	"sync/atomic"

	"github.com/cespare/xxhash/v2"
	"github.com/decoy-mock/decoy/budget"
	"github.com/klauspost/compress/gzip"
)

// builtAnswers decides, for one document, which processed answers are
// kept: those that queries asked for more than once, with their gzipped
// copies, at any size. Sending a large body from the document's records
// gathers thousands of scattered spans on every request (the city filter
// at 100k records: 8,432 records, 2 MiB); a kept body leaves as one
// contiguous slice, and the query is not run again. A small one costs
// little to gather, but compressing it for every client that accepts gzip
// (every browser) cost a third of the request; its gzipped copy is made
// once.
//
// A document never changes (a new version is a new entry, and settings
// changed keep it: see Entry.WithMock), and a query's answer depends on the
// document and the query string alone, so a kept body is right for as long
// as the document lives. Answers are keyed by their query string; one with
// a token in it is never kept (the caller passes no key). They are kept
// among what is built over the document (budget.Set), so --max-cache-bytes
// bounds them with the rest and drops each by its own recency; besides,
// each document keeps at most builtMaxAnswers of them, holding at most its
// budget (see newBuiltAnswers), the least recently sent leaving first.
type builtAnswers struct {
	// budget is the most bytes kept (see newBuiltAnswers).
	budget atomic.Int64

	mu sync.Mutex
	// seen holds the digests of query strings seen once since the last
	// of builtMaxSeen; counted (seenKeyBytes a key, for as many as it
	// ever held: counted) in the set's own bytes.
	seen    map[uint64]struct{}
	counted int
}

// builtAnswer is one query's kept answer: its body in memory, or in a
// file of the spill folder when it is over spillMinAnswer (see spill).
type builtAnswer struct {
	body  []byte
	file  *fileBody
	size  int
	total int
	etag  string

	// gz is the body gzipped, made for the first client that accepts gzip,
	// as write makes it on the fly (the same bytes: the compressor's
	// output does not depend on how its input is cut); neither bytes nor
	// file when it could not be kept.
	gzOnce sync.Once
	gz     gzipCopy

	// mu orders Drop with the gzipped copy's file being set (gzipped):
	// a copy made after its answer was dropped is dropped at once.
	mu      sync.Mutex
	dropped bool
}

// Drop lets go of the files of an answer its set keeps no more
// (budget.Dropper).
func (ba *builtAnswer) Drop() {
	ba.mu.Lock()
	ba.dropped = true
	gz := ba.gz
	ba.mu.Unlock()
	if ba.file != nil {
		ba.file.Drop()
	}
	gz.Drop()
}

// writeTo writes the answer's body to w.
func (ba *builtAnswer) writeTo(w io.Writer) {
	if ba.file != nil {
		ba.file.writeTo(w)
		return
	}
	_, _ = w.Write(ba.body)
}

const (
	// builtMaxAnswers bounds the answers kept per document.
	builtMaxAnswers = 32
	// builtMaxSeen bounds the queries seen once and remembered, per
	// document; past it, they are forgotten together.
	builtMaxSeen = 64
	// seenKeyBytes is about what a query seen once takes: a digest in a
	// map (its slot, and its share of the map's growth).
	seenKeyBytes = 32
	// builtMinBudget is the bytes a document of less than four times that
	// may keep, if it is at least that large.
	builtMinBudget = 4 << 20
	// builtMaxKey is the longest query string kept.
	builtMaxKey = 2 << 10
	// kindAnswer names kept answers among what is built over a document.
	kindAnswer = "answer"
)

// newBuiltAnswers returns the kept answers of a document of docSize bytes:
// their bodies and gzipped copies hold at most a quarter of its size, or
// its size up to builtMinBudget for a smaller one. A single answer's
// gzipped copy may pass that, when it alone is kept.
func newBuiltAnswers(docSize int) *builtAnswers {
	n := int64(docSize)
	b := &builtAnswers{}
	b.budget.Store(max(n/4, min(n, builtMinBudget)))
	return b
}

// lookup returns the kept answer of the query string key, or nil.
func (b *builtAnswers) lookup(set *budget.Set, key string) *builtAnswer {
	ba, _ := set.Get(budget.Key{Kind: kindAnswer, Name: key}).(*builtAnswer)
	return ba
}

// offer is told the answer the query string key gave, of size bytes: the
// second time an answer is offered, its body is built with write (which
// must write size bytes) and kept in set, in a file of spillDir when it is
// over spillMinAnswer and spillDir is set, and returned; else offer
// returns nil.
func (b *builtAnswers) offer(set *budget.Set, key string, size, total int, etag, spillDir string, write func(io.Writer)) *builtAnswer {
	if int64(size) > b.budget.Load() || len(key) > builtMaxKey {
		return nil
	}
	if !b.seenBefore(set, key) {
		return nil
	}
	k := budget.Key{Kind: kindAnswer, Name: key}
	ba, _ := set.Load(k, func(bb *budget.Build) any {
		if spillDir != "" && size > spillMinAnswer {
			if fb := spill(spillDir, write, bb.Reserve, bb.Free); fb != nil && fb.size == int64(size) {
				return &builtAnswer{file: fb, size: size, total: total, etag: etag}
			} else if fb != nil {
				bb.Free(fb.size)
				fb.Drop()
				return nil
			}
		}
		if !bb.Reserve(int64(size)) {
			return nil
		}
		buf := bytes.NewBuffer(make([]byte, 0, size))
		write(buf)
		if buf.Len() != size {
			return nil
		}
		return &builtAnswer{body: buf.Bytes(), size: size, total: total, etag: etag}
	}).(*builtAnswer)
	if ba != nil {
		b.trim(set, key, int64(size)+budget.Overhead(k))
	}
	return ba
}

// seenBefore reports whether the query string key was offered before,
// and remembers it if not.
func (b *builtAnswers) seenBefore(set *budget.Set, key string) bool {
	h := xxhash.Sum64String(key)
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.seen[h]; ok {
		return true
	}
	if len(b.seen) >= builtMaxSeen {
		clear(b.seen) // its room stays, counted
	}
	if len(b.seen) == b.counted {
		if !set.GrowBase(seenKeyBytes) {
			return false
		}
		b.counted++
	}
	if b.seen == nil {
		// Made on the first query, small: most mocks are only ever read
		// whole, or asked a query or two.
		b.seen = map[uint64]struct{}{}
	}
	b.seen[h] = struct{}{}
	return false
}

// trim drops the least recently sent answers other than key's, until the
// others are fewer than builtMaxAnswers and, with the own bytes of key's,
// hold at most the budget.
func (b *builtAnswers) trim(set *budget.Set, key string, own int64) {
	most := b.budget.Load()
	set.Trim(func(k budget.Key) bool { return k.Kind == kindAnswer && k.Name != key },
		func(count int, bytes int64) bool { return count < builtMaxAnswers && bytes+own <= most })
}

// gzipped returns the body of ba, the answer kept for key, gzipped, made
// once and counted in set with the answer: in a file of spillDir when it
// is spillMin or more and spillDir is set, else in memory; neither when it
// could not be kept (the caller gzips the body as it writes it: the same
// bytes).
func (b *builtAnswers) gzipped(set *budget.Set, key, spillDir string, ba *builtAnswer) ([]byte, *fileBody) {
	ba.gzOnce.Do(func() {
		k := budget.Key{Kind: kindAnswer, Name: key}
		reserve := func(n int64) bool { return set.Grow(k, ba, n) }
		free := func(n int64) { set.Grow(k, ba, -n) }
		write := func(w io.Writer) {
			zw := gzipWriters.Get().(*gzip.Writer)
			zw.Reset(w)
			ba.writeTo(zw)
			zw.Close()
			zw.Reset(nil)
			gzipWriters.Put(zw)
		}
		var held int64
		if spillDir != "" && ba.size >= spillMin {
			if fb := spill(spillDir, write, reserve, free); fb != nil {
				gz := fb.keep()
				ba.mu.Lock()
				if ba.dropped {
					ba.mu.Unlock()
					gz.Drop() // its bytes left with the answer's
					return
				}
				ba.gz, held = gz, fb.size
				ba.mu.Unlock()
			}
		}
		if held == 0 {
			w := growingBuffer{reserve: reserve, free: free}
			write(&w)
			if w.failed || !w.trim() {
				set.Grow(k, ba, -int64(cap(w.buf))) // a no-op if the answer left meanwhile
				return
			}
			ba.mu.Lock()
			ba.gz, held = gzipCopy{bytes: w.buf}, int64(cap(w.buf))
			ba.mu.Unlock()
		}
		b.trim(set, key, int64(ba.size)+held+budget.Overhead(k))
	})
	return ba.gz.bytes, ba.gz.file
}

// Kept returns the body kept for the query string key, or nil.
func (e *Entry) Kept(key string) []byte {
	if e.answers == nil {
		return nil
	}
	if ba := e.answers.lookup(e.set, key); ba != nil && ba.file == nil {
		return ba.body
	}
	return nil
}

// SetKeepBudget changes how many bytes of kept answers the entry may hold
// (see newBuiltAnswers for the default).
func (e *Entry) SetKeepBudget(n int64) {
	if e.answers != nil {
		e.answers.budget.Store(n)
	}
}
