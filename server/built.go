package server

import (
	"bytes"
	"sync"
	"sync/atomic"

	"github.com/decoy-mock/decoy/query"
	"github.com/klauspost/compress/gzip"
)

// builtAnswers keeps, for one document, the bodies of the large processed
// answers that queries asked for more than once. Sending such a body from
// the document's records gathers thousands of scattered spans on every
// request (the city filter at 100k records: 8,432 records, 2 MiB); a kept
// body leaves as one contiguous slice, and the query is not run again.
//
// A document never changes (a new version is a new entry), so a kept body
// is right for as long as the entry lives. Answers are keyed by their
// compiled query, shared through the server's query cache: a query string
// with a token in it is compiled afresh each time and is never kept. The
// bodies count in the entry's footprint, so --max-cache-bytes bounds them
// with the rest, and each document keeps at most builtMaxAnswers of them,
// holding at most a quarter of its size (builtMinBudget for small ones);
// the least recently sent leave first.
type builtAnswers struct {
	mu    sync.RWMutex
	m     map[*query.Query]*builtAnswer
	bytes int64 // of the bodies kept
	clock atomic.Int64
	// budget is the most bytes of bodies kept.
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
	owner   *builtAnswers
	// building is set by the request that builds the body of a query
	// seen once; others meanwhile send theirs from the records.
	building atomic.Bool
}

const (
	// builtMinSize is the smallest answer kept: below it, gathering the
	// records costs little next to a request's fixed cost.
	builtMinSize = 64 << 10
	// builtMaxAnswers bounds the answers kept per document.
	builtMaxAnswers = 8
	// builtMaxSeen bounds the queries seen once and remembered, per
	// document; past it, they are forgotten together.
	builtMaxSeen = 64
	// builtMinBudget is the bytes of bodies a document of less than four
	// times that may keep anyway.
	builtMinBudget = 4 << 20
)

func newBuiltAnswers(docSize int) *builtAnswers {
	return &builtAnswers{budget: max(int64(docSize)/4, builtMinBudget)}
}

// lookup returns q's kept answer, or nil.
func (b *builtAnswers) lookup(q *query.Query) *builtAnswer {
	b.mu.RLock()
	ba := b.m[q]
	b.mu.RUnlock()
	if ba == nil || ba.body == nil {
		return nil
	}
	ba.used.Store(b.clock.Add(1))
	return ba
}

// offer is told the answer q gave, of size bytes: the second time a large
// answer is offered, its body is built with write (which must write size
// bytes) and kept, and returned; else offer returns nil. grew is told how
// many bytes the kept bodies grew or shrank by.
func (b *builtAnswers) offer(q *query.Query, size, total int, etag string, write func(*bytes.Buffer), grew func(int64)) *builtAnswer {
	if size < builtMinSize || int64(size) > b.budget {
		return nil
	}
	b.mu.RLock()
	ba := b.m[q]
	b.mu.RUnlock()
	if ba == nil {
		b.mu.Lock()
		if b.m == nil || len(b.m) >= builtMaxSeen+builtMaxAnswers {
			b.forgetSeenLocked()
		}
		if b.m[q] == nil {
			b.m[q] = &builtAnswer{total: total, etag: etag}
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
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if cur := b.m[q]; cur != ba || ba.body != nil {
		return nil
	}
	freed := b.makeRoomLocked(int64(size))
	built := &builtAnswer{body: buf.Bytes(), total: total, etag: etag, owner: b}
	built.used.Store(b.clock.Add(1))
	b.m[q] = built
	b.bytes += int64(size)
	if grew != nil {
		grew(int64(size) - freed)
	}
	return built
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
		for _, cur := range b.m {
			if cur == ba { // still kept: count it
				ba.gzBytes = int64(len(ba.gz))
				b.bytes += ba.gzBytes
				if grew != nil {
					grew(ba.gzBytes)
				}
				break
			}
		}
	})
	return ba.gz
}

// forgetSeenLocked drops the queries seen once, keeping the built answers.
func (b *builtAnswers) forgetSeenLocked() {
	kept := make(map[*query.Query]*builtAnswer, builtMaxAnswers)
	for q, ba := range b.m {
		if ba.body != nil {
			kept[q] = ba
		}
	}
	b.m = kept
}

// makeRoomLocked drops the least recently sent bodies until one of size
// bytes fits the bounds, and returns the bytes it freed.
func (b *builtAnswers) makeRoomLocked(size int64) int64 {
	var freed int64
	for {
		n := 0
		var oldest *query.Query
		var oldestUsed int64
		for q, ba := range b.m {
			if ba.body == nil {
				continue
			}
			n++
			if u := ba.used.Load(); oldest == nil || u < oldestUsed {
				oldest, oldestUsed = q, u
			}
		}
		if oldest == nil || n < builtMaxAnswers && b.bytes+size <= b.budget {
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
