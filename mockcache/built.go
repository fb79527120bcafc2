package mockcache

import (
	"bytes"
	"sync"
	"sync/atomic"

	"github.com/klauspost/compress/gzip"
)

// builtAnswers keeps, for one document, the bodies of the processed answers
// that queries asked for more than once, and their gzipped copies, at any
// size. Sending a large body from the document's records gathers thousands
// of scattered spans on every request (the city filter at 100k records:
// 8,432 records, 2 MiB); a kept body leaves as one contiguous slice, and
// the query is not run again. A small one costs little to gather, but
// compressing it for every client that accepts gzip (every browser) cost a
// third of the request; its gzipped copy is made once.
//
// A document never changes (a new version is a new entry, and settings
// changed keep it: see Entry.WithMock), and a query's answer depends on the
// document and the query string alone, so a kept body is right for as long
// as the document lives. Answers are keyed by their query string; one with
// a token in it is never kept (the caller passes no key). The bodies count
// in the entry's footprint, so --max-cache-bytes bounds them with the rest,
// and each document keeps at most builtMaxAnswers of them, holding at most
// its budget (see newBuiltAnswers); the least recently sent leave first.
type builtAnswers struct {
	mu    sync.RWMutex
	m     map[string]*builtAnswer
	bytes int64 // of the bodies kept and their gzipped copies
	clock atomic.Int64
	// budget is the most bytes kept (see newBuiltAnswers).
	budget int64
}

// builtAnswer is one query's answer: seen once, or built.
type builtAnswer struct {
	body  []byte // nil until built
	total int
	etag  string
	used  atomic.Int64 // clock when last sent

	// gz is body gzipped, made for the first client that accepts gzip, as
	// write makes it on the fly (the same bytes: the compressor's output
	// does not depend on how its input is cut); gzBytes is len(gz) once
	// counted in owner.bytes (under owner.mu).
	gzOnce  sync.Once
	gz      []byte
	gzBytes int64
	// owner keeps it, under key.
	owner *builtAnswers
	key   string
	// building is set by the request that builds the body of a query
	// seen once; others meanwhile send theirs from the records.
	building atomic.Bool
}

const (
	// builtMaxAnswers bounds the answers kept per document.
	builtMaxAnswers = 32
	// builtMaxSeen bounds the queries seen once and remembered, per
	// document; past it, they are forgotten together.
	builtMaxSeen = 64
	// builtMinBudget is the bytes a document of less than four times that
	// may keep, if it is at least that large.
	builtMinBudget = 4 << 20
	// builtMaxKey is the longest query string kept.
	builtMaxKey = 2 << 10
)

// newBuiltAnswers returns the kept answers of a document of docSize bytes:
// their bodies and gzipped copies hold at most a quarter of its size, or
// its size up to builtMinBudget for a smaller one. A single answer's
// gzipped copy may pass that, when it alone is kept.
func newBuiltAnswers(docSize int) *builtAnswers {
	n := int64(docSize)
	return &builtAnswers{budget: max(n/4, min(n, builtMinBudget))}
}

// lookup returns the kept answer of the query string key, or nil.
func (b *builtAnswers) lookup(key string) *builtAnswer {
	b.mu.RLock()
	ba := b.m[key]
	b.mu.RUnlock()
	if ba == nil || ba.body == nil {
		return nil
	}
	ba.used.Store(b.clock.Add(1))
	return ba
}

// offer is told the answer the query string key gave, of size bytes: the
// second time a large answer is offered, its body is built with write
// (which must write size bytes) and kept, and returned; else offer returns
// nil. grew is told the bytes kept grew by (not when they shrink: the
// cache's count may stay above what is held, never below, until it next
// counts).
func (b *builtAnswers) offer(key string, size, total int, etag string, write func(*bytes.Buffer), grew func(int64)) *builtAnswer {
	if int64(size) > b.budget || len(key) > builtMaxKey {
		return nil
	}
	b.mu.RLock()
	ba := b.m[key]
	b.mu.RUnlock()
	if ba == nil {
		b.mu.Lock()
		switch {
		case b.m == nil:
			// Small, and grown as queries come: most mocks are only
			// ever asked a query or two, and a map made for
			// builtMaxAnswers took 1.8 KiB of each.
			b.m = map[string]*builtAnswer{}
		case len(b.m) >= builtMaxSeen+builtMaxAnswers:
			b.forgetSeenLocked()
		}
		if b.m[key] == nil {
			b.m[key] = &builtAnswer{}
		}
		b.mu.Unlock()
		return nil
	}
	if ba.body != nil || !ba.building.CompareAndSwap(false, true) {
		return nil // kept since lookup, or being built
	}
	// Built outside the lock, by one request.
	var buf bytes.Buffer
	buf.Grow(size)
	write(&buf)
	if buf.Len() != size {
		ba.building.Store(false)
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if cur := b.m[key]; cur != ba {
		return nil // forgotten meanwhile
	}
	built := &builtAnswer{body: buf.Bytes(), total: total, etag: etag, owner: b, key: key}
	b.keepLocked(key, built, int64(size), grew)
	return built
}

// keepLocked counts n more bytes kept for key's answer ba, first dropping
// the least recently sent other answers until they fit, and puts ba under
// key.
func (b *builtAnswers) keepLocked(key string, ba *builtAnswer, n int64, grew func(int64)) {
	freed := b.makeRoomLocked(n, key)
	ba.used.Store(b.clock.Add(1))
	b.m[key] = ba
	b.bytes += n
	if grew != nil && n > freed {
		grew(n - freed)
	}
}

// gzipped returns the body gzipped, making it once; grew is told the bytes
// it adds to what is kept.
func (ba *builtAnswer) gzipped(grew func(int64)) []byte {
	ba.gzOnce.Do(func() {
		var buf bytes.Buffer
		buf.Grow(len(ba.body) / 4)
		zw := gzipWriters.Get().(*gzip.Writer)
		zw.Reset(&buf)
		_, _ = zw.Write(ba.body)
		zw.Close()
		zw.Reset(nil)
		gzipWriters.Put(zw)
		ba.gz = buf.Bytes()
		b := ba.owner
		b.mu.Lock()
		defer b.mu.Unlock()
		if b.m[ba.key] == ba { // still kept: count it
			ba.gzBytes = int64(len(ba.gz))
			b.keepLocked(ba.key, ba, ba.gzBytes, grew)
		}
	})
	return ba.gz
}

// forgetSeenLocked drops the queries seen once, keeping the built answers.
func (b *builtAnswers) forgetSeenLocked() {
	kept := make(map[string]*builtAnswer, builtMaxAnswers)
	for q, ba := range b.m {
		if ba.body != nil {
			kept[q] = ba
		}
	}
	b.m = kept
}

// makeRoomLocked drops the least recently sent answers other than key's
// until size more bytes fit the budget and the others are fewer than
// builtMaxAnswers, and returns the bytes it freed.
func (b *builtAnswers) makeRoomLocked(size int64, key string) int64 {
	var freed int64
	for {
		n := 0
		oldest, found := "", false
		var oldestUsed int64
		for k, ba := range b.m {
			if ba.body == nil {
				continue
			}
			if k == key {
				continue // stays
			}
			n++
			if u := ba.used.Load(); !found || u < oldestUsed {
				oldest, oldestUsed, found = k, u, true
			}
		}
		if !found || n < builtMaxAnswers && b.bytes+size <= b.budget {
			return freed
		}
		gone := int64(len(b.m[oldest].body)) + b.m[oldest].gzBytes
		delete(b.m, oldest)
		b.bytes -= gone
		freed += gone
	}
}

// footprint is the bytes of the bodies kept.
func (b *builtAnswers) footprint() int64 {
	b.mu.RLock()
	defer b.mu.RUnlock()
	return b.bytes
}

// Kept returns the body kept for the query string key, or nil.
func (e *Entry) Kept(key string) []byte {
	if e.built == nil {
		return nil
	}
	if ba := e.built.lookup(key); ba != nil {
		return ba.body
	}
	return nil
}

// SetKeepBudget changes how many bytes of kept answers the entry may hold
// (see newBuiltAnswers for the default).
func (e *Entry) SetKeepBudget(n int64) {
	if e.built != nil {
		e.built.mu.Lock()
		e.built.budget = n
		e.built.mu.Unlock()
	}
}
