package mockcache

import (
	"bytes"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
)

// unit is the size of the answers offered in these tests.
const unit = 64 << 10

// A small answer asked for again is kept as a large one is: its gzipped
// copy then costs nothing more to send.
func TestBuiltAnswersSmall(t *testing.T) {
	b := newBuiltAnswers(1 << 20)
	write := func(buf *bytes.Buffer) { buf.WriteString(`[{"a":1}]`) }
	if b.offer("limit=1", 9, 1, `"e"`, write, nil) != nil {
		t.Fatal("kept the first time it was offered")
	}
	ba := b.offer("limit=1", 9, 1, `"e"`, write, nil)
	if ba == nil || string(ba.body) != `[{"a":1}]` || b.lookup("limit=1") != ba {
		t.Fatal("a small answer asked for twice is not kept")
	}
	if gz := ba.gzipped(nil); len(gz) == 0 || b.footprint() != int64(9+len(gz)) {
		t.Errorf("footprint %d with a gzipped copy of %d bytes", b.footprint(), len(gz))
	}
}

// Each document keeps at most builtMaxAnswers answers holding at most its
// budget; the least recently sent leave first, and the growth reported
// always adds up to what is kept.
func TestBuiltAnswersBounds(t *testing.T) {
	b := &builtAnswers{budget: 3 * unit}
	var grown int64
	grew := func(n int64) { grown += n }
	fill := func(n int) func(*bytes.Buffer) {
		return func(buf *bytes.Buffer) { buf.Write(bytes.Repeat([]byte{'x'}, n)) }
	}
	offerTwice := func(q string, size int) *builtAnswer {
		if ba := b.offer(q, size, 1, `"e"`, fill(size), grew); ba != nil {
			t.Fatal("kept the first time it was offered")
		}
		return b.offer(q, size, 1, `"e"`, fill(size), grew)
	}
	qs := make([]string, builtMaxAnswers+2)
	for i := range qs {
		qs[i] = fmt.Sprintf("limit=%d", i)
	}
	if offerTwice(qs[0], 4*unit) != nil {
		t.Error("kept an answer larger than the budget")
	}
	if b.offer(qs[0], unit, 1, `"e"`, fill(unit-1), grew) != nil {
		t.Error("kept a body of the wrong size")
	}
	for i := 1; i <= 3; i++ {
		if offerTwice(qs[i], unit) == nil {
			t.Fatalf("answer %d not kept", i)
		}
	}
	// 1 is sent, then 3 gets a gzipped copy, which needs room: 2, the
	// least recently sent, leaves.
	b.lookup(qs[1])
	gz := b.lookup(qs[3]).gzipped(grew)
	if len(gz) == 0 || b.footprint() != 2*unit+int64(len(gz)) || b.lookup(qs[2]) != nil {
		t.Fatalf("footprint %d with a gzipped copy of %d bytes; 2 kept: %v", b.footprint(), len(gz), b.lookup(qs[2]) != nil)
	}
	// 4 needs room for its body: 1 leaves, 3 (with its copy) stays.
	if offerTwice(qs[4], unit) == nil {
		t.Fatal("answer 4 not kept")
	}
	for i, want := range []bool{false, false, false, true, true} {
		if got := b.lookup(qs[i]) != nil; got != want {
			t.Errorf("answer %d kept: %v, want %v", i, got, want)
		}
	}
	// Growth is told, not shrinking: the count stays at or above what is
	// kept.
	if want := 2*unit + int64(len(gz)); b.footprint() != want || grown < want {
		t.Errorf("told of %d bytes, footprint %d, want %d", grown, b.footprint(), want)
	}

	// By count: a large budget, more queries than builtMaxAnswers.
	b, grown = &builtAnswers{budget: 1 << 40}, 0
	for _, q := range qs {
		offerTwice(q, unit)
	}
	n := 0
	for _, q := range qs {
		if b.lookup(q) != nil {
			n++
		}
	}
	if n != builtMaxAnswers || b.footprint() != int64(n)*unit || grown < b.footprint() {
		t.Errorf("%d kept, grew by %d, footprint %d; want %d kept", n, grown, b.footprint(), builtMaxAnswers)
	}

	// Many queries seen once are forgotten, the kept answers stay.
	for i := range 4 * builtMaxSeen {
		b.offer(fmt.Sprintf("offset=%d", i), unit, 1, `"e"`, fill(unit), grew)
	}
	if len(b.m) > builtMaxSeen+builtMaxAnswers || b.footprint() != int64(n)*unit {
		t.Errorf("%d queries remembered, %d bytes kept", len(b.m), b.footprint())
	}
}

// Offers, lookups and gzipped copies from many requests at once keep the
// count of bytes kept exact and within the bounds (run with -race).
func TestBuiltAnswersConcurrent(t *testing.T) {
	b := &builtAnswers{budget: 4 * unit}
	body := func(k int) func(*bytes.Buffer) {
		return func(buf *bytes.Buffer) { buf.Write(bytes.Repeat([]byte{byte('a' + k)}, unit+k)) }
	}
	var told atomic.Int64
	grew := func(n int64) {
		if n < 0 {
			t.Errorf("told of %d bytes: shrinking is not told", n)
		}
		told.Add(n)
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 300 {
				k := (g*7 + i) % 12
				key := fmt.Sprintf("k=%d", k)
				ba := b.lookup(key)
				if ba == nil {
					ba = b.offer(key, unit+k, k, `"e"`, body(k), grew)
				}
				if ba == nil {
					continue
				}
				if len(ba.body) != unit+k || ba.body[0] != byte('a'+k) || ba.total != k {
					t.Errorf("%s: a body of %d bytes of %q, total %d", key, len(ba.body), ba.body[0], ba.total)
					return
				}
				if i%3 == 0 && len(ba.gzipped(grew)) == 0 {
					t.Error("empty gzipped copy")
				}
			}
		}()
	}
	wg.Wait()
	b.mu.RLock()
	defer b.mu.RUnlock()
	var sum, n int64
	for _, ba := range b.m {
		if ba.body != nil {
			sum += int64(len(ba.body)) + ba.gzBytes
			n++
		}
	}
	if sum != b.bytes || n > builtMaxAnswers || told.Load() < sum {
		t.Errorf("kept %d answers of %d bytes, counted %d, told %d", n, sum, b.bytes, told.Load())
	}
	if bodies := sum; bodies > b.budget+unit { // a copy of an answer alone may pass it
		t.Errorf("kept %d bytes for a budget of %d", bodies, b.budget)
	}
}

// BenchmarkFirstOffer is what remembering the first query string asked of
// a document costs: most cached mocks are asked one or two, so it is paid
// by each of them (B/op).
func BenchmarkFirstOffer(b *testing.B) {
	write := func(buf *bytes.Buffer) { buf.WriteString(`[{"a":1}]`) }
	b.ReportAllocs()
	for b.Loop() {
		ba := newBuiltAnswers(1 << 10)
		ba.offer("filters=a%3D1", 9, 1, `"e"`, write, nil)
	}
}
