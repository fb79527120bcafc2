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
	"github.com/decoy-mock/decoy/limitertest"
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

// The shared suite, against Redis; the limiter counts microseconds, so
// "just before" is one microsecond before.
func TestLimiter(t *testing.T) {
	limitertest.Run(t, func(t testing.TB) (decoy.Limiter, limitertest.Clock) { return newLimiter(t) })
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
