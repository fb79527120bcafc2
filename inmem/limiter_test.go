package inmem_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/decoy-mock/decoy"
	"github.com/decoy-mock/decoy/inmem"
	"github.com/decoy-mock/decoy/limitertest"
)

// clock is a manual clock for tests; it never sleeps.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Add(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

// Tick is the resolution of the in-process limiter: a nanosecond.
func (c *clock) Tick() time.Duration { return time.Nanosecond }

func TestLimiter(t *testing.T) {
	limitertest.Run(t, func(testing.TB) (decoy.Limiter, limitertest.Clock) { return newLimiter() })
}

func newLimiter() (*inmem.Limiter, *clock) {
	c := &clock{t: time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)}
	l := inmem.NewLimiter()
	l.Now = c.Now
	return l, c
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

// Looking at keys makes no windows: every private read looks at its
// client's failed authentications.
func TestPeekKeepsNothing(t *testing.T) {
	ctx := context.Background()
	l, c := newLimiter()
	for i := range 1000 {
		l.Peek(ctx, "client-"+time.Duration(i).String(), 30)
	}
	if l.Len() != 0 {
		t.Errorf("Len after 1000 looks = %d, want 0", l.Len())
	}
	l.Allow(ctx, "k", 30)
	if p, _ := l.Peek(ctx, "k", 30); p.Used != 1 || p.Remaining != 29 || l.Len() != 1 {
		t.Errorf("peek of a key in use: %+v, Len %d", p, l.Len())
	}
	// A look that sweeps the expired window away does not make it again.
	c.Add(61 * time.Second)
	if p, _ := l.Peek(ctx, "k", 30); p.Used != 0 || l.Len() != 0 {
		t.Errorf("peek of an expired key: %+v, Len %d", p, l.Len())
	}
}

// Events restored after a restart fill the window as they did: only what
// is left of the limit is admitted, and slots free as they age out.
func TestRestore(t *testing.T) {
	ctx := context.Background()
	l, c := newLimiter()
	now := c.Now()
	l.Restore("k", []time.Time{
		now.Add(-90 * time.Second), // out of the window: left out
		now.Add(-10 * time.Second),
		now.Add(-30 * time.Second), // out of order: sorted in
		now.Add(time.Minute),       // in the future: left out
	})
	if r, _ := l.Peek(ctx, "k", 3); r.Used != 2 || r.Reset != 30*time.Second {
		t.Fatalf("after Restore: used %d, reset %v; want 2 and 30s", r.Used, r.Reset)
	}
	if r, _ := l.Allow(ctx, "k", 3); !r.Allowed {
		t.Fatal("the third slot was refused")
	}
	r, _ := l.Allow(ctx, "k", 3)
	if r.Allowed || r.RetryAfter != 30*time.Second {
		t.Fatalf("past the limit: allowed %v, retry after %v; want refused, 30s", r.Allowed, r.RetryAfter)
	}
	c.Add(31 * time.Second)
	if r, _ := l.Allow(ctx, "k", 3); !r.Allowed {
		t.Error("refused once the oldest restored event left the window")
	}
}
