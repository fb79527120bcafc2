package mockcache

import (
	"bytes"
	"fmt"
	"io"
	"sync"
	"testing"

	"github.com/decoy-mock/decoy/budget"
)

// unit is the size of the answers offered in these tests.
const unit = 64 << 10

// answerCost is what keeping an answer of n bytes under key costs.
func answerCost(key string, n int) int64 {
	return int64(n) + budget.Overhead(budget.Key{Kind: kindAnswer, Name: key})
}

// A small answer asked for again is kept as a large one is: its gzipped
// copy then costs nothing more to send. Both are counted in the set.
func TestBuiltAnswersSmall(t *testing.T) {
	b := newBuiltAnswers(1 << 20)
	set := budget.Unbounded()
	write := func(buf io.Writer) { io.WriteString(buf, `[{"a":1}]`) }
	if b.offer(set, "limit=1", 9, 1, `"e"`, "", write) != nil {
		t.Fatal("kept the first time it was offered")
	}
	seen := set.Bytes()
	ba := b.offer(set, "limit=1", 9, 1, `"e"`, "", write)
	if ba == nil || string(ba.body) != `[{"a":1}]` || b.lookup(set, "limit=1") != ba {
		t.Fatal("a small answer asked for twice is not kept")
	}
	if got, want := set.Bytes()-seen, answerCost("limit=1", 9); got != want {
		t.Errorf("keeping it counted %d bytes, want %d", got, want)
	}
	if gz := gzBytes(b.gzipped(set, "limit=1", "", ba)); len(gz) == 0 || set.Bytes()-seen != answerCost("limit=1", 9)+int64(cap(gz)) {
		t.Errorf("%d bytes counted with a gzipped copy of %d bytes", set.Bytes()-seen, cap(gz))
	}
}

// Each document keeps at most builtMaxAnswers answers holding at most its
// budget; the least recently sent leave first, and what is counted always
// adds up to what is kept.
func TestBuiltAnswersBounds(t *testing.T) {
	b := &builtAnswers{}
	b.budget.Store(3*answerCost("limit=1", unit) + 40) // three answers, not a copy besides
	set := budget.Unbounded()
	// What the answers hold: the set's bytes, less the queries seen once.
	kept := func() int64 { return set.Bytes() - seenKeyBytes*int64(b.counted) }
	fill := func(n int) func(io.Writer) {
		return func(buf io.Writer) { buf.Write(bytes.Repeat([]byte{'x'}, n)) }
	}
	offerTwice := func(q string, size int) *builtAnswer {
		if ba := b.offer(set, q, size, 1, `"e"`, "", fill(size)); ba != nil {
			t.Fatal("kept the first time it was offered")
		}
		return b.offer(set, q, size, 1, `"e"`, "", fill(size))
	}
	qs := make([]string, builtMaxAnswers+2)
	for i := range qs {
		qs[i] = fmt.Sprintf("limit=%d", i)
	}
	if offerTwice(qs[0], 4*unit) != nil {
		t.Error("kept an answer larger than the budget")
	}
	b.offer(set, qs[0], unit, 1, `"e"`, "", fill(unit-1))
	if b.offer(set, qs[0], unit, 1, `"e"`, "", fill(unit-1)) != nil {
		t.Error("kept a body of the wrong size")
	}
	base := kept()
	for i := 1; i <= 3; i++ {
		if offerTwice(qs[i], unit) == nil {
			t.Fatalf("answer %d not kept", i)
		}
	}
	// 1 is sent, then 3 gets a gzipped copy, which needs room: 2, the
	// least recently sent, leaves.
	b.lookup(set, qs[1])
	gz := gzBytes(b.gzipped(set, qs[3], "", b.lookup(set, qs[3])))
	if len(gz) == 0 || b.lookup(set, qs[2]) != nil {
		t.Fatalf("gzipped copy of %d bytes; 2 kept: %v", len(gz), b.lookup(set, qs[2]) != nil)
	}
	if got, want := kept()-base, answerCost(qs[1], unit)+answerCost(qs[3], unit)+int64(cap(gz)); got != want {
		t.Errorf("counted %d bytes, keeps %d", got, want)
	}
	// 4 needs room for its body: 1 leaves, 3 (with its copy) stays.
	if offerTwice(qs[4], unit) == nil {
		t.Fatal("answer 4 not kept")
	}
	for i, want := range []bool{false, false, false, true, true} {
		if got := b.lookup(set, qs[i]) != nil; got != want {
			t.Errorf("answer %d kept: %v, want %v", i, got, want)
		}
	}
	if got, want := kept()-base, answerCost(qs[3], unit)+int64(cap(gz))+answerCost(qs[4], unit); got != want {
		t.Errorf("counted %d bytes, keeps %d", got, want)
	}

	// By count: a large budget, more queries than builtMaxAnswers.
	b = &builtAnswers{}
	b.budget.Store(1 << 40)
	set = budget.Unbounded()
	kept = func() int64 { return set.Bytes() - seenKeyBytes*int64(b.counted) }
	for _, q := range qs {
		offerTwice(q, unit)
	}
	n := 0
	for _, q := range qs {
		if b.lookup(set, q) != nil {
			n++
		}
	}
	before := kept()
	if n != builtMaxAnswers {
		t.Errorf("%d kept; want %d", n, builtMaxAnswers)
	}

	// Many queries seen once are forgotten, the kept answers stay.
	for i := range 4 * builtMaxSeen {
		b.offer(set, fmt.Sprintf("offset=%d", i), unit, 1, `"e"`, "", fill(unit))
	}
	if len(b.seen) > builtMaxSeen || b.counted > builtMaxSeen || kept() != before {
		t.Errorf("%d queries remembered (%d counted), %d bytes kept (was %d)", len(b.seen), b.counted, kept(), before)
	}
}

// Offers, lookups and gzipped copies from many requests at once keep the
// count of bytes kept exact and within the bounds, the cache's included
// (run with -race).
func TestBuiltAnswersConcurrent(t *testing.T) {
	b := &builtAnswers{}
	b.budget.Store(4 * unit)
	pool := budget.NewPool(6 * unit)
	set, _ := pool.NewSet(1024, nil)
	body := func(k int) func(io.Writer) {
		return func(buf io.Writer) { buf.Write(bytes.Repeat([]byte{byte('a' + k)}, unit+k)) }
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 300 {
				k := (g*7 + i) % 12
				key := fmt.Sprintf("k=%d", k)
				ba := b.lookup(set, key)
				if ba == nil {
					ba = b.offer(set, key, unit+k, k, `"e"`, "", body(k))
				}
				if ba == nil {
					continue
				}
				if len(ba.body) != unit+k || ba.body[0] != byte('a'+k) || ba.total != k {
					t.Errorf("%s: a body of %d bytes of %q, total %d", key, len(ba.body), ba.body[0], ba.total)
					return
				}
				if i%3 == 0 {
					b.gzipped(set, key, "", ba)
				}
				if used := pool.Used(); used > pool.Max() {
					t.Errorf("%d bytes used, bound %d", used, pool.Max())
					return
				}
			}
		})
	}
	wg.Wait()
	n := 0
	for k := range 12 {
		if b.lookup(set, fmt.Sprintf("k=%d", k)) != nil {
			n++
		}
	}
	if n == 0 || n > builtMaxAnswers {
		t.Errorf("%d answers kept", n)
	}
	if used := pool.Used(); used != set.Bytes() {
		t.Errorf("the pool counts %d bytes, the set %d", used, set.Bytes())
	}
	if kept := set.Bytes() - 1024 - seenKeyBytes*int64(b.counted); kept > b.budget.Load()+2*unit { // an answer and its copy may pass it
		t.Errorf("kept %d bytes for a budget of %d", kept, b.budget.Load())
	}
}

// BenchmarkFirstOffer is what remembering the first query string asked of
// a document costs: most cached mocks are asked one or two, so it is paid
// by each of them (B/op).
func BenchmarkFirstOffer(b *testing.B) {
	write := func(buf io.Writer) { io.WriteString(buf, `[{"a":1}]`) }
	set := budget.Unbounded()
	b.ReportAllocs()
	for b.Loop() {
		ba := newBuiltAnswers(1 << 10)
		ba.offer(set, "filters=a%3D1", 9, 1, `"e"`, "", write)
	}
}

// gzBytes is the gzipped copy of a kept answer held in memory.
func gzBytes(b []byte, _ *fileBody) []byte { return b }
