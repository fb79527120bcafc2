package redis_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/decoy-mock/decoy"
	"github.com/decoy-mock/decoy/inmem"
	"github.com/decoy-mock/decoy/redis"
)

// newLimiter returns a limiter on the test's own keys, on a manual clock.
func newLimiter(t testing.TB) (*redis.Limiter, *clock) {
	c, prefix := testRedis(t)
	clk := newClock()
	l := redis.NewLimiter(c, prefix)
	l.Now = clk.Now
	return l, clk
}

// The cases below are inmem's, run against Redis; the limiter counts
// microseconds where inmem counts nanoseconds, so "just before" is one
// microsecond before.

func TestSlidingWindow(t *testing.T) {
	ctx := context.Background()
	l, c := newLimiter(t)
	type step struct {
		advance   time.Duration
		allowed   bool
		remaining int64
		retry     time.Duration
		reset     time.Duration
	}
	// Limit 3: events at 0s, 10s, 20s fill the window; the next slot frees
	// when the 0s event leaves it, at 60s.
	const µs = time.Microsecond
	steps := []step{
		{0, true, 2, 0, 60 * time.Second},
		{10 * time.Second, true, 1, 0, 50 * time.Second},
		{10 * time.Second, true, 0, 0, 40 * time.Second},
		{10 * time.Second, false, 0, 30 * time.Second, 30 * time.Second},
		{29 * time.Second, false, 0, time.Second, time.Second}, // 59s
		{time.Second - µs, false, 0, µs, µs},                   // just before 60s
		{µs, true, 0, 0, 10 * time.Second},                     // 60s: the 0s event left
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

func TestRefusalsDoNotConsume(t *testing.T) {
	ctx := context.Background()
	l, c := newLimiter(t)
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

func TestUndoAndPeek(t *testing.T) {
	ctx := context.Background()
	l, _ := newLimiter(t)
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

// Undo takes back the event it is given, not another one of the same key.
func TestUndoRemovesThatEvent(t *testing.T) {
	ctx := context.Background()
	l, c := newLimiter(t)
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

func TestExactUnderConcurrency(t *testing.T) {
	ctx := context.Background()
	l, _ := newLimiter(t)
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

// On the Redis server's clock, as in production: 50 concurrent requests
// against a limit of 10.
func TestExactOnServerClock(t *testing.T) {
	ctx := context.Background()
	c, prefix := testRedis(t)
	l := redis.NewLimiter(c, prefix)
	var admitted atomic.Int64
	var events sync.Map
	var wg sync.WaitGroup
	for range 50 {
		wg.Go(func() {
			r, err := l.Allow(ctx, "mock:00000000-0000-0000-0000-000000000001", 10)
			if err != nil {
				t.Error(err)
				return
			}
			if r.Allowed {
				admitted.Add(1)
				if _, dup := events.LoadOrStore(r.Event, true); dup {
					t.Errorf("event %d admitted twice", r.Event)
				}
			} else if r.RetryAfter <= 0 || r.RetryAfter > decoy.RateWindow {
				t.Errorf("refused with Retry-After %v", r.RetryAfter)
			}
			if r.Reset <= 0 || r.Reset > decoy.RateWindow {
				t.Errorf("reset %v", r.Reset)
			}
		})
	}
	wg.Wait()
	if admitted.Load() != 10 {
		t.Errorf("admitted %d of 50 against a limit of 10", admitted.Load())
	}
}

// Idle keys vanish by themselves: each expires one window after the last
// admitted event (the sequence a window later, so ids are never reused
// while an event may hold one).
func TestIdleKeysExpire(t *testing.T) {
	ctx := context.Background()
	c, prefix := testRedis(t)
	l := redis.NewLimiter(c, prefix)
	if _, err := l.Allow(ctx, "mock:x", 5); err != nil {
		t.Fatal(err)
	}
	for key, max := range map[string]time.Duration{
		prefix + "{mock:x}:rate": decoy.RateWindow,
		prefix + "{mock:x}:seq":  2 * decoy.RateWindow,
	} {
		ttl, err := c.PTTL(ctx, key).Result()
		if err != nil {
			t.Fatal(err)
		}
		if ttl <= max-decoy.RateWindow || ttl > max {
			t.Errorf("%s expires in %v, want at most %v", key, ttl, max)
		}
	}
	// Peek and refusals create nothing.
	if _, err := l.Peek(ctx, "mock:y", 5); err != nil {
		t.Fatal(err)
	}
	if n, _ := c.Exists(ctx, prefix+"{mock:y}:rate", prefix+"{mock:y}:seq").Result(); n != 0 {
		t.Errorf("peek created %d keys", n)
	}
}

// After a limit is lowered, more than one event must leave before a slot
// frees, and Retry-After says when that is.
func TestRetryAfterLoweredLimit(t *testing.T) {
	ctx := context.Background()
	l, c := newLimiter(t)
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
	c.Add(r.RetryAfter - time.Microsecond)
	if r, _ := l.Allow(ctx, "k", 5); r.Allowed {
		t.Errorf("admitted before Retry-After (%d in the window)", r.Used)
	}
	c.Add(time.Microsecond)
	if r, _ := l.Allow(ctx, "k", 5); !r.Allowed {
		t.Errorf("still refused after Retry-After (%d in the window)", r.Used)
	}
}

func TestNonPositiveLimit(t *testing.T) {
	l, _ := newLimiter(t)
	if _, err := l.Allow(context.Background(), "k", 0); err == nil {
		t.Error("limit 0 accepted")
	}
}

// The Redis limiter answers as the in-process one does, field by field, on
// a random mix of calls, limits and times.
func TestMatchesInmem(t *testing.T) {
	ctx := context.Background()
	l, c := newLimiter(t)
	ref := inmem.NewLimiter()
	ref.Now = c.Now
	rnd := rand.New(rand.NewPCG(1, 2))
	type admitted struct {
		key   string
		redis decoy.RateResult
		ref   decoy.RateResult
	}
	var live []admitted
	keys := []string{"a", "b", "mock:c"}
	for i := range 3000 {
		c.Add(time.Duration(rnd.Int64N(int64(3*time.Second))) / time.Microsecond * time.Microsecond)
		key := keys[rnd.IntN(len(keys))]
		limit := int64(1 + rnd.IntN(30))
		var got, want decoy.RateResult
		var err error
		op := rnd.IntN(10)
		switch {
		case op < 6:
			got, err = l.Allow(ctx, key, limit)
			want, _ = ref.Allow(ctx, key, limit)
			if got.Allowed {
				live = append(live, admitted{key, got, want})
			}
		case op < 8:
			got, err = l.Peek(ctx, key, limit)
			want, _ = ref.Peek(ctx, key, limit)
		default:
			if len(live) == 0 {
				continue
			}
			j := rnd.IntN(len(live))
			a := live[j]
			live = append(live[:j], live[j+1:]...)
			if err := l.Undo(ctx, a.key, a.redis); err != nil {
				t.Fatal(err)
			}
			ref.Undo(ctx, a.key, a.ref)
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		got.Event, want.Event = 0, 0
		if got != want {
			t.Fatalf("call %d (%s, limit %d): redis %+v, inmem %+v", i, key, limit, got, want)
		}
	}
}

func BenchmarkLimiterAllow(b *testing.B) {
	ctx := context.Background()
	c, prefix := testRedis(b)
	l := redis.NewLimiter(c, prefix)
	var n atomic.Int64
	b.RunParallel(func(pb *testing.PB) {
		key := fmt.Sprintf("mock:%d", n.Add(1))
		for pb.Next() {
			if _, err := l.Allow(ctx, key, 1000); err != nil {
				b.Error(err)
				return
			}
		}
	})
}
