package inmem_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/decoy-mock/decoy/inmem"
)

// clock is a manual clock for tests; it never sleeps.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Add(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

func newLimiter() (*inmem.Limiter, *clock) {
	c := &clock{t: time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)}
	l := inmem.NewLimiter()
	l.Now = c.Now
	return l, c
}

func TestSlidingWindow(t *testing.T) {
	ctx := context.Background()
	l, c := newLimiter()
	type step struct {
		advance   time.Duration
		allowed   bool
		remaining int64
		retry     time.Duration
		reset     time.Duration
	}
	// Limit 3: events at 0s, 10s, 20s fill the window; the next slot frees
	// when the 0s event leaves it, at 60s.
	steps := []step{
		{0, true, 2, 0, 60 * time.Second},
		{10 * time.Second, true, 1, 0, 50 * time.Second},
		{10 * time.Second, true, 0, 0, 40 * time.Second},
		{10 * time.Second, false, 0, 30 * time.Second, 30 * time.Second},
		{29 * time.Second, false, 0, time.Second, time.Second}, // 59s
		{time.Second - 1, false, 0, 1, 1},                      // just before 60s
		{1, true, 0, 0, 10 * time.Second},                      // 60s: the 0s event left
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
	}
}

func TestRefusalsDoNotConsume(t *testing.T) {
	ctx := context.Background()
	l, c := newLimiter()
	l.Allow(ctx, "k", 1)
	for i := 0; i < 10; i++ {
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

func TestUndoAndPeek(t *testing.T) {
	ctx := context.Background()
	l, _ := newLimiter()
	a, _ := l.Allow(ctx, "k", 2)
	b, _ := l.Allow(ctx, "k", 2)
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
	if p, _ := l.Peek(ctx, "k", 2); p.Used != 0 {
		t.Fatalf("peek after undoing both: %+v", p)
	}
	if r, _ := l.Allow(ctx, "other", 1); !r.Allowed {
		t.Error("keys are not independent")
	}
}

func TestExactUnderConcurrency(t *testing.T) {
	ctx := context.Background()
	l, _ := newLimiter()
	var admitted atomic.Int64
	var wg sync.WaitGroup
	for g := 0; g < 64; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 100; i++ {
				if r, _ := l.Allow(ctx, "k", 777); r.Allowed {
					admitted.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	if admitted.Load() != 777 {
		t.Errorf("admitted %d of 6400 against a limit of 777", admitted.Load())
	}
}

func TestIdleKeysAreDropped(t *testing.T) {
	ctx := context.Background()
	l, c := newLimiter()
	for i := 0; i < 1000; i++ {
		l.Allow(ctx, string(rune('a'+i%26))+time.Duration(i).String(), 5)
	}
	if l.Len() != 1000 {
		t.Fatalf("Len = %d", l.Len())
	}
	c.Add(61 * time.Second)
	l.Allow(ctx, "fresh", 5)
	if l.Len() != 1 {
		t.Errorf("Len after a idle window = %d, want 1", l.Len())
	}
}

// After a limit is lowered, more than one event must leave before a slot
// frees, and Retry-After says when that is.
func TestRetryAfterLoweredLimit(t *testing.T) {
	ctx := context.Background()
	l, c := newLimiter()
	for i := 0; i < 10; i++ {
		l.Allow(ctx, "k", 10)
		c.Add(time.Second)
	}
	// Now t=10s with events at 0..9s. Under a limit of 5, six must leave
	// for one more to fit; the sixth oldest (at 5s) leaves at 65s.
	r, _ := l.Allow(ctx, "k", 5)
	if r.Allowed || r.RetryAfter != 55*time.Second {
		t.Fatalf("allowed=%v retry=%v, want refused for 55s", r.Allowed, r.RetryAfter)
	}
	c.Add(r.RetryAfter)
	if r, _ := l.Allow(ctx, "k", 5); !r.Allowed {
		t.Errorf("still refused after Retry-After (%d in the window)", r.Used)
	}
}
