// Package limitertest is the behaviour every decoy.Limiter must have, as a
// test suite that each implementation runs against itself on a manual clock.
package limitertest

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/decoy-mock/decoy"
)

// Clock is the manual clock a limiter under test reads.
type Clock interface {
	// Add moves the clock on.
	Add(d time.Duration)
	// Tick is the limiter's resolution: "just before" is one tick before.
	Tick() time.Duration
}

// Open returns an empty limiter and its clock for each test.
type Open func(t testing.TB) (decoy.Limiter, Clock)

// Run runs the suite.
func Run(t *testing.T, open Open) {
	t.Run("SlidingWindow", func(t *testing.T) { testSlidingWindow(t, open) })
	t.Run("RefusalsDoNotConsume", func(t *testing.T) { testRefusalsDoNotConsume(t, open) })
	t.Run("UndoAndPeek", func(t *testing.T) { testUndoAndPeek(t, open) })
	t.Run("PeekUnknownKey", func(t *testing.T) { testPeekUnknownKey(t, open) })
	t.Run("UndoRemovesThatEvent", func(t *testing.T) { testUndoRemovesThatEvent(t, open) })
	t.Run("ExactUnderConcurrency", func(t *testing.T) { testExactUnderConcurrency(t, open) })
	t.Run("RetryAfterLoweredLimit", func(t *testing.T) { testRetryAfterLoweredLimit(t, open) })
}

func testSlidingWindow(t *testing.T, open Open) {
	ctx := context.Background()
	l, c := open(t)
	type step struct {
		advance   time.Duration
		allowed   bool
		remaining int64
		retry     time.Duration
		reset     time.Duration
	}
	// Limit 3: events at 0s, 10s, 20s fill the window; the next slot frees
	// when the 0s event leaves it, at 60s.
	tick := c.Tick()
	steps := []step{
		{0, true, 2, 0, 60 * time.Second},
		{10 * time.Second, true, 1, 0, 50 * time.Second},
		{10 * time.Second, true, 0, 0, 40 * time.Second},
		{10 * time.Second, false, 0, 30 * time.Second, 30 * time.Second},
		{29 * time.Second, false, 0, time.Second, time.Second}, // 59s
		{time.Second - tick, false, 0, tick, tick},             // just before 60s
		{tick, true, 0, 0, 10 * time.Second},                   // 60s: the 0s event left
		{10 * time.Second, true, 0, 0, 10 * time.Second},       // 70s: the 10s event left
		{60 * time.Second, true, 2, 0, 60 * time.Second},       // 130s: all left
	}
	for i, s := range steps {
		c.Add(s.advance)
		r, err := l.Allow(ctx, "k", 3)
		if err != nil {
			t.Fatal(err)
		}
		if r.Allowed != s.allowed || r.Remaining != s.remaining || r.RetryAfter != s.retry || r.Reset != s.reset {
			t.Errorf("step %d: got allowed=%v remaining=%d retry=%v reset=%v, want %v %d %v %v",
				i, r.Allowed, r.Remaining, r.RetryAfter, r.Reset, s.allowed, s.remaining, s.retry, s.reset)
		}
		if r.Limit != 3 || r.Used != 3-r.Remaining {
			t.Errorf("step %d: limit=%d used=%d", i, r.Limit, r.Used)
		}
	}
}

func testRefusalsDoNotConsume(t *testing.T, open Open) {
	ctx := context.Background()
	l, c := open(t)
	if r, err := l.Allow(ctx, "k", 1); err != nil || !r.Allowed {
		t.Fatal(r, err)
	}
	for range 10 {
		c.Add(time.Second)
		if r, _ := l.Allow(ctx, "k", 1); r.Allowed {
			t.Fatal("admitted past the limit")
		}
	}
	c.Add(50 * time.Second) // 60s after the only admitted event
	if r, _ := l.Allow(ctx, "k", 1); !r.Allowed {
		t.Error("refused events consumed the window")
	}
}

func testUndoAndPeek(t *testing.T, open Open) {
	ctx := context.Background()
	l, _ := open(t)
	a, _ := l.Allow(ctx, "k", 2)
	b, _ := l.Allow(ctx, "k", 2)
	if a.Event <= 0 || b.Event <= 0 || a.Event == b.Event {
		t.Fatalf("events %d and %d", a.Event, b.Event)
	}
	if p, _ := l.Peek(ctx, "k", 2); p.Used != 2 || p.Allowed {
		t.Fatalf("peek after two: %+v", p)
	}
	if err := l.Undo(ctx, "k", a); err != nil {
		t.Fatal(err)
	}
	if p, _ := l.Peek(ctx, "k", 2); p.Used != 1 || !p.Allowed || p.Remaining != 1 {
		t.Fatalf("peek after undo: %+v", p)
	}
	l.Undo(ctx, "k", b)
	l.Undo(ctx, "k", b) // twice is harmless
	if p, _ := l.Peek(ctx, "k", 2); p.Used != 0 || p.Reset != 0 {
		t.Fatalf("peek after undoing both: %+v", p)
	}
	if r, _ := l.Allow(ctx, "other", 1); !r.Allowed {
		t.Error("keys are not independent")
	}
}

// A key that admitted nothing, or whose events all left the window, has
// its whole limit, and looking at it admits nothing.
func testPeekUnknownKey(t *testing.T, open Open) {
	ctx := context.Background()
	l, c := open(t)
	for range 3 {
		if p, _ := l.Peek(ctx, "never", 3); !p.Allowed || p.Used != 0 || p.Remaining != 3 || p.Reset != 0 || p.Limit != 3 {
			t.Fatalf("peek of a key never used: %+v", p)
		}
	}
	if r, _ := l.Allow(ctx, "gone", 3); !r.Allowed {
		t.Fatal("first event refused")
	}
	c.Add(61 * time.Second)
	if p, _ := l.Peek(ctx, "gone", 3); !p.Allowed || p.Used != 0 || p.Remaining != 3 || p.Reset != 0 {
		t.Fatalf("peek once the window passed: %+v", p)
	}
	for i := range 3 {
		if r, _ := l.Allow(ctx, "never", 3); !r.Allowed || r.Used != int64(i+1) {
			t.Fatalf("event %d after peeks: %+v", i, r)
		}
	}
}

// Undo takes back the event it is given, not another one of the same key.
func testUndoRemovesThatEvent(t *testing.T, open Open) {
	ctx := context.Background()
	l, c := open(t)
	a, _ := l.Allow(ctx, "k", 5) // at 0s
	c.Add(10 * time.Second)
	b, _ := l.Allow(ctx, "k", 5) // at 10s
	c.Add(10 * time.Second)
	if err := l.Undo(ctx, "k", b); err != nil {
		t.Fatal(err)
	}
	// The 0s event is left: it leaves the window in 40s.
	if p, _ := l.Peek(ctx, "k", 5); p.Used != 1 || p.Reset != 40*time.Second {
		t.Fatalf("after undoing the second event: %+v", p)
	}
	l.Undo(ctx, "k", decoy.RateResult{Allowed: false, Event: a.Event}) // refused: nothing to undo
	if p, _ := l.Peek(ctx, "k", 5); p.Used != 1 {
		t.Fatalf("undoing a refusal removed an event: %+v", p)
	}
}

func testExactUnderConcurrency(t *testing.T, open Open) {
	ctx := context.Background()
	l, _ := open(t)
	var admitted atomic.Int64
	var wg sync.WaitGroup
	for range 64 {
		wg.Go(func() {
			for range 100 {
				r, err := l.Allow(ctx, "k", 777)
				if err != nil {
					t.Error(err)
					return
				}
				if r.Allowed {
					admitted.Add(1)
				}
			}
		})
	}
	wg.Wait()
	if admitted.Load() != 777 {
		t.Errorf("admitted %d of 6400 against a limit of 777", admitted.Load())
	}
}

// After a limit is lowered, more than one event must leave before a slot
// frees, and Retry-After says when that is.
func testRetryAfterLoweredLimit(t *testing.T, open Open) {
	ctx := context.Background()
	l, c := open(t)
	for range 10 {
		l.Allow(ctx, "k", 10)
		c.Add(time.Second)
	}
	// Now t=10s with events at 0..9s. Under a limit of 5, six must leave
	// for one more to fit; the sixth oldest (at 5s) leaves at 65s.
	r, _ := l.Allow(ctx, "k", 5)
	if r.Allowed || r.RetryAfter != 55*time.Second || r.Used != 10 || r.Remaining != 0 {
		t.Fatalf("%+v, want refused for 55s", r)
	}
	c.Add(r.RetryAfter - c.Tick())
	if r, _ := l.Allow(ctx, "k", 5); r.Allowed {
		t.Errorf("admitted before Retry-After (%d in the window)", r.Used)
	}
	c.Add(c.Tick())
	if r, _ := l.Allow(ctx, "k", 5); !r.Allowed {
		t.Errorf("still refused after Retry-After (%d in the window)", r.Used)
	}
}
