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
