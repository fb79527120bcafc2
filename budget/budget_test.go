package budget_test

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/decoy-mock/decoy/budget"
)

// sized is a structure of n bytes for the tests.
type sized struct{ n int64 }

// builder returns a build that reserves n bytes and makes a structure of
// that size, or gives up when they do not fit.
func builder(n int64) func(*budget.Build) any {
	return func(b *budget.Build) any {
		if !b.Reserve(n) {
			return nil
		}
		return &sized{n}
	}
}

func key(name string) budget.Key { return budget.Key{Kind: "test", Name: name} }

// cost is what an item of n bytes under name costs.
func cost(name string, n int64) int64 { return n + budget.Overhead(key(name)) }

// The names of items these tests count the cost of are two characters.
const name2 = "xx"

// When a reservation does not fit, the structures and documents used least
// recently leave first, each by its own recency (a structure before its
// document when it is older), the document the reservation is for never
// whole; and the count stays exact. Recency is counted in steps: the
// clock moves when something comes in (a document, a structure), not at
// each use, which would make every read write to one shared word.
func TestLeastRecentlyUsedLeaveFirst(t *testing.T) {
	const item, doc = 1000, 1000
	pool := budget.NewPool(2 * (doc + 2*cost(name2, item)))
	var evicted []string
	a, ok := pool.NewSet(doc, func() { evicted = append(evicted, "a") })
	if !ok {
		t.Fatal("a does not fit")
	}
	b, ok := pool.NewSet(doc, func() { evicted = append(evicted, "b") })
	if !ok {
		t.Fatal("b does not fit")
	}
	a.Load(key("a1"), builder(item))
	a.Load(key("a2"), builder(item))
	b.Load(key("b1"), builder(item))
	b.Load(key("b2"), builder(item))
	if pool.Used() != pool.Max() {
		t.Fatalf("%d used, want the whole %d", pool.Used(), pool.Max())
	}
	// a1 is used again: a3 needs room for one, and a2, the least
	// recently used of all, leaves (not a, the document it is for).
	a.Touch()
	a.Get(key("a1"))
	if a.Load(key("a3"), builder(item)) == nil {
		t.Fatal("a3 not kept")
	}
	for name, want := range map[string]bool{"a1": true, "a2": false, "a3": true} {
		if got := a.Kept(key(name)); got != want {
			t.Errorf("%s kept: %v, want %v", name, got, want)
		}
	}
	if !b.Kept(key("b1")) || !b.Kept(key("b2")) || len(evicted) != 0 {
		t.Errorf("b's structures, older than a1, left; or documents evicted: %v", evicted)
	}
	// b is read, later (the clock moves when something comes in), its
	// structures used, and it needs room for three: a's, used less
	// recently, leave, and a too (with all of them gone, what is left of
	// it is the oldest).
	pool.NewSet(0, nil)
	b.Touch()
	b.Get(key("b1"))
	b.Get(key("b2"))
	if b.Load(key("b3"), builder(3*item)) == nil {
		t.Fatal("b3 not kept")
	}
	if len(evicted) != 1 || evicted[0] != "a" || a.Open() {
		t.Errorf("documents evicted: %v (a open: %v), want a", evicted, a.Open())
	}
	if !b.Kept(key("b1")) || !b.Kept(key("b2")) {
		t.Error("b's own structures left")
	}
	if used := pool.Used(); used != b.Bytes() || used > pool.Max() {
		t.Errorf("%d used, b holds %d, bound %d", used, b.Bytes(), pool.Max())
	}
	// b, the set the reservation is for, is never dropped whole, even
	// when nothing else is left: what cannot fit is not kept, and b keeps
	// its own.
	if b.Load(key("huge"), builder(pool.Max()-doc/2)) != nil || !b.Open() {
		t.Errorf("kept a structure that needed its own document to leave (open: %v)", b.Open())
	}
	if sets, items := pool.Evicted(); sets != 1 || items != 3 {
		t.Errorf("Evicted: %d sets, %d items; want a, and a1, a2, a3", sets, items)
	}
}

// A structure that cannot fit drops nothing, and is built again (not
// kept) at each use; a closed set keeps nothing more.
func TestNoRoom(t *testing.T) {
	pool := budget.NewPool(10000)
	set, _ := pool.NewSet(1000, nil)
	set.Load(key("small"), builder(100))
	used := pool.Used()
	builds := 0
	for range 3 {
		if set.Load(key("big"), func(b *budget.Build) any { builds++; return builder(9000)(b) }) != nil {
			t.Fatal("kept a structure past the bound")
		}
	}
	if builds != 3 || pool.Used() != used || set.Get(key("small")) == nil {
		t.Errorf("%d builds, %d used (was %d), small kept: %v", builds, pool.Used(), used, set.Get(key("small")) != nil)
	}
	// Fits tells a build so before it works.
	set.Load(key("check"), func(b *budget.Build) any {
		room := 9000 - budget.Overhead(key("check")) // the item's own cost counts
		if b.Fits(room+1) || !b.Fits(room) {
			t.Errorf("Fits(%d) %v, Fits(%d) %v, with 9000 bytes besides the set's own", room+1, b.Fits(room+1), room, b.Fits(room))
		}
		return nil
	})
	set.Close()
	if pool.Used() != 0 || set.Load(key("after"), builder(1)) != nil || set.Get(key("small")) == nil {
		t.Errorf("closed: %d used, keeps new %v, old still usable %v", pool.Used(), set.Get(key("after")) != nil, set.Get(key("small")) != nil)
	}
	if _, ok := pool.NewSet(10001, nil); ok || pool.Used() != 0 {
		t.Errorf("a set larger than the bound fit, or left %d counted", pool.Used())
	}
}

// What a build uses (Build.Use) is not dropped while it builds, even when
// it is the least recently used; the build gives up instead.
func TestUsedWhileBuilding(t *testing.T) {
	pool := budget.NewPool(1000 + cost("co", 3000) + cost("or", 3000))
	set, _ := pool.NewSet(1000, nil)
	set.Load(key("co"), builder(3000))
	set.Load(key("ot"), builder(1000)) // more recent than col
	got := set.Load(key("or"), func(b *budget.Build) any {
		if b.Use(key("co"), builder(3000)) == nil {
			t.Fatal("col not kept")
		}
		return builder(3000)(b) // needs other to leave, not col
	})
	if got == nil || set.Get(key("co")) == nil || set.Get(key("ot")) != nil {
		t.Errorf("order kept %v, col kept %v, other kept %v", got != nil, set.Get(key("co")) != nil, set.Get(key("ot")) != nil)
	}
	// Now nothing but col could make room: the build gives up.
	got = set.Load(key("o2"), func(b *budget.Build) any {
		b.Use(key("co"), builder(3000))
		set.Get(key("or")) // used now: more recent than col
		return builder(3000 + cost("or", 3000))(b)
	})
	if got != nil || set.Get(key("co")) == nil {
		t.Errorf("kept %v by dropping col (kept: %v)", got != nil, set.Get(key("co")) != nil)
	}
	// Unpinned once the build is done: col leaves for the next. (A
	// reservation moves the clock on, so that col is older than order.)
	set.Load(key("ti"), builder(1))
	set.Get(key("or"))
	if set.Load(key("next"), builder(3000)) == nil || set.Get(key("co")) != nil {
		t.Errorf("col still kept after its build")
	}
}

// Concurrent first uses of a key wait for one build; a build that panics
// leaves nothing kept nor counted, and its waiters get nil.
func TestOneBuild(t *testing.T) {
	pool := budget.NewPool(1 << 20)
	set, _ := pool.NewSet(0, nil)
	var builds atomic.Int64
	start := make(chan struct{})
	var wg sync.WaitGroup
	got := make([]any, 16)
	for i := range got {
		wg.Go(func() {
			<-start
			got[i] = set.Load(key("k"), func(b *budget.Build) any { builds.Add(1); return builder(100)(b) })
		})
	}
	close(start)
	wg.Wait()
	for _, v := range got {
		if v != got[0] || v == nil {
			t.Fatal("callers got different structures")
		}
	}
	if builds.Load() != 1 {
		t.Errorf("%d builds", builds.Load())
	}
	used := pool.Used()
	func() {
		defer func() { _ = recover() }()
		set.Load(key("panics"), func(b *budget.Build) any { b.Reserve(500); panic("build failed") })
	}()
	if pool.Used() != used || set.Load(key("panics"), builder(1)) == nil {
		t.Errorf("%d used after a build panicked (was %d), or its key is stuck", pool.Used(), used)
	}
}

// Grow counts more bytes for a kept item; Trim drops the least recently
// used of some kind until they fit.
func TestGrowAndTrim(t *testing.T) {
	pool := budget.NewPool(1 << 20)
	set, _ := pool.NewSet(0, nil)
	for i := range 5 {
		set.Load(key(fmt.Sprint(i)), builder(100))
	}
	v0 := set.Get(key("0"))
	if !set.Grow(key("0"), v0, 50) || set.Grow(key("absent"), v0, 50) || set.Grow(key("1"), v0, 50) {
		t.Error("Grow of a kept item failed, or of a missing one or one holding another value succeeded")
	}
	before := set.Bytes()
	set.Trim(func(k budget.Key) bool { return k.Name != "4" }, func(count int, bytes int64) bool { return count <= 2 })
	for name, want := range map[string]bool{"0": true, "1": false, "2": false, "3": true, "4": true} {
		if got := set.Get(key(name)) != nil; got != want {
			t.Errorf("%s kept: %v, want %v", name, got, want)
		}
	}
	if freed := before - set.Bytes(); freed != 2*cost("1", 100) || pool.Used() != set.Bytes() {
		t.Errorf("freed %d, pool %d, set %d", freed, pool.Used(), set.Bytes())
	}
}

// At most Turns hold a turn at once.
func TestTurns(t *testing.T) {
	pool := budget.NewPool(1 << 20)
	set, _ := pool.NewSet(0, nil)
	var now, most atomic.Int64
	var wg sync.WaitGroup
	for range 4 * budget.Turns {
		wg.Go(func() {
			done := set.Turn()
			n := now.Add(1)
			for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
			}
			for range 1000 {
				_ = rand.Int()
			}
			now.Add(-1)
			done()
		})
	}
	wg.Wait()
	if most.Load() > budget.Turns {
		t.Errorf("%d turns at once, at most %d", most.Load(), budget.Turns)
	}
}

// Many documents and structures coming and going at once: the bound holds
// at every moment, and once all is done the pool counts exactly what the
// sets hold (run with -race).
func TestConcurrentBound(t *testing.T) {
	const bound = 64 << 10
	pool := budget.NewPool(bound)
	var over atomic.Int64
	stop := make(chan struct{})
	watcher := make(chan struct{})
	go func() {
		defer close(watcher)
		for {
			select {
			case <-stop:
				return
			default:
			}
			if u := pool.Used(); u > bound {
				over.Store(u)
			}
		}
	}()
	var mu sync.Mutex
	var sets []*budget.Set
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(g), 1))
			var mine []*budget.Set
			for range 400 {
				switch r := rng.IntN(10); {
				case r == 0 || len(mine) == 0:
					if s, ok := pool.NewSet(int64(rng.IntN(4096)), nil); ok {
						mine = append(mine, s)
					}
				case r == 1:
					k := rng.IntN(len(mine))
					mine[k].Close()
					mine = append(mine[:k], mine[k+1:]...)
				default:
					s := mine[rng.IntN(len(mine))]
					s.Touch()
					name := fmt.Sprint(rng.IntN(20))
					s.Load(key(name), func(b *budget.Build) any {
						if b.Use(key("base"), builder(512)) == nil {
							return nil
						}
						if !b.Reserve(int64(rng.IntN(8192))) {
							return nil
						}
						b.Free(int64(rng.IntN(64)))
						return &sized{}
					})
					s.Grow(key(name), s.Get(key(name)), int64(rng.IntN(256)))
					if rng.IntN(4) == 0 && s.Borrow(2048) {
						s.Repay(2048)
					}
				}
			}
			mu.Lock()
			sets = append(sets, mine...)
			mu.Unlock()
		})
	}
	wg.Wait()
	close(stop)
	<-watcher
	if u := over.Load(); u != 0 {
		t.Errorf("%d bytes used at one point, bound %d", u, bound)
	}
	var sum int64
	for _, s := range sets {
		sum += s.Bytes()
	}
	if pool.Used() != sum {
		t.Errorf("the pool counts %d bytes, the sets hold %d", pool.Used(), sum)
	}
}

// dropper is a structure that counts the times it is told it is dropped.
type dropper struct{ drops atomic.Int32 }

func (d *dropper) Drop() { d.drops.Add(1) }

// A Dropper is told once, whenever its set stops keeping it: dropped for
// another's room, trimmed, with its set closed, or built when it could not
// be kept. One still kept is not told.
func TestDropperToldOnce(t *testing.T) {
	const item = 1000
	build := func(d *dropper) func(*budget.Build) any {
		return func(b *budget.Build) any {
			if !b.Reserve(item) {
				return nil
			}
			return d
		}
	}
	pool := budget.NewPool(2*cost(name2, item) + 100)
	s, ok := pool.NewSet(100, nil)
	if !ok {
		t.Fatal("the set does not fit")
	}
	var d1, d2, d3, d4, d5 dropper
	s.Load(key("d1"), build(&d1))
	s.Load(key("d2"), build(&d2))
	s.Load(key("d3"), build(&d3)) // d1, the least recent, leaves for its room
	s.Trim(func(k budget.Key) bool { return k.Name == "d2" }, func(n int, _ int64) bool { return n == 0 })
	s.Load(key("d4"), build(&d4))
	if n := d4.drops.Load(); n != 0 {
		t.Errorf("d4, kept, told %d times", n)
	}
	s.Close() // d3 and d4 go with it
	s.Close()

	s2, _ := pool.NewSet(100, nil)
	got := s2.Load(key("d5"), func(b *budget.Build) any {
		v := build(&d5)(b)
		s2.Close() // while it is built: it cannot be kept
		return v
	})
	if got != &d5 {
		t.Fatal("the build's waiters do not get what it built")
	}
	for name, d := range map[string]*dropper{"d1": &d1, "d2": &d2, "d3": &d3, "d4": &d4, "d5": &d5} {
		if n := d.drops.Load(); n != 1 {
			t.Errorf("%s told %d times, want once", name, n)
		}
	}
}

// What grows an item that was dropped is not counted on the item kept
// under its key since: a gzipped copy being made of an answer that left
// meanwhile does not make the answer kept after it look larger.
func TestGrowOfADroppedItem(t *testing.T) {
	pool := budget.NewPool(1 << 20)
	set, _ := pool.NewSet(0, nil)
	old := set.Load(key("q"), builder(100))
	set.Trim(func(budget.Key) bool { return true }, func(count int, _ int64) bool { return count == 0 })
	if set.Get(key("q")) != nil {
		t.Fatal("q still kept after the trim")
	}
	now := set.Load(key("q"), builder(100))
	before := set.Bytes()
	if set.Grow(key("q"), old, 4096) {
		t.Error("Grow for the dropped item counted on the item kept under its key since")
	}
	if set.Grow(key("q"), old, -50) {
		t.Error("a shrink of the dropped item was taken from the item kept since")
	}
	if set.Bytes() != before || pool.Used() != before {
		t.Errorf("set %d, pool %d bytes, want %d", set.Bytes(), pool.Used(), before)
	}
	if !set.Grow(key("q"), now, 50) || set.Bytes() != before+50 || pool.Used() != before+50 {
		t.Errorf("Grow of the kept item: set %d, pool %d bytes, want %d", set.Bytes(), pool.Used(), before+50)
	}
}
