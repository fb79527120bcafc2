package redis_test

import (
	"context"
	"testing"
	"time"

	"github.com/decoy-mock/decoy"
	"github.com/decoy-mock/decoy/internal/testservice"
	"github.com/decoy-mock/decoy/redis"
	goredis "github.com/redis/go-redis/v9"
)

// recorder is an InvalidationHandler that writes what it hears to a
// channel: "listening", "lost" or the id of an announcement.
type recorder chan string

func (r recorder) Listening()            { r <- "listening" }
func (r recorder) Lost(error)            { r <- "lost" }
func (r recorder) Invalidated(id string) { r <- id }

// next returns what the handler heard next, or fails after within.
func (r recorder) next(t *testing.T, within time.Duration) string {
	t.Helper()
	select {
	case s := <-r:
		return s
	case <-time.After(within):
		t.Fatalf("nothing heard within %v", within)
		return ""
	}
}

// expect waits for want, failing on anything else or after within.
func (r recorder) expect(t *testing.T, want string, within time.Duration) {
	t.Helper()
	if got := r.next(t, within); got != want {
		t.Fatalf("heard %q, want %q", got, want)
	}
}

// listen runs v.Listen until the test ends, and checks that it returns
// promptly when its context ends.
func listen(t *testing.T, v *redis.Invalidator) recorder {
	ctx, cancel := context.WithCancel(context.Background())
	rec := make(recorder, 100)
	done := make(chan struct{})
	go func() {
		v.Listen(ctx, rec)
		close(done)
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(time.Second):
			t.Error("Listen did not return within a second of its context ending")
		}
	})
	return rec
}

func TestInvalidatorDelivers(t *testing.T) {
	t.Parallel() // waits out a quiet channel
	ctx := context.Background()
	c, prefix := testRedis(t)
	a := redis.NewInvalidator(c, prefix)
	b := redis.NewInvalidator(c, prefix)
	other := redis.NewInvalidator(c, prefix+"other:")

	rec := listen(t, a)
	rec.expect(t, "listening", 2*time.Second)
	for _, id := range []string{"m1", "m2", "m1"} {
		if err := b.Invalidate(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	if err := other.Invalidate(ctx, "elsewhere"); err != nil {
		t.Fatal(err)
	}
	// A replica's own announcements are not delivered back to it: it
	// cached its change already.
	if err := a.Invalidate(ctx, "own"); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"m1", "m2", "m1"} {
		rec.expect(t, id, 2*time.Second)
	}
	// A quiet channel is pinged, not reported lost.
	select {
	case s := <-rec:
		t.Fatalf("heard %q on a quiet channel", s)
	case <-time.After(1500 * time.Millisecond):
	}
}

func TestInvalidateUnreachable(t *testing.T) {
	v := redis.NewInvalidator(deadClient(t), "decoytest:")
	err := v.Invalidate(context.Background(), "m1")
	if decoy.ErrorCode(err) != decoy.EUNAVAILABLE {
		t.Errorf("Invalidate = %v, want EUNAVAILABLE", err)
	}
}

// A Redis that dies is noticed, an announcement made meanwhile reaches the
// replicas after it is back, and delivery goes on. The test runs its own
// redis-server, never the shared one.
func TestInvalidatorSurvivesRestart(t *testing.T) {
	srv := ownRedis(t)
	ctx := context.Background()
	open := func() goredis.UniversalClient {
		c, err := redis.Open(ctx, srv.URL())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	a := redis.NewInvalidator(open(), "decoytest:")
	b := redis.NewInvalidator(open(), "decoytest:")
	recA, recB := listen(t, a), listen(t, b)
	recA.expect(t, "listening", 2*time.Second)
	recB.expect(t, "listening", 2*time.Second)
	if err := b.Invalidate(ctx, "before"); err != nil {
		t.Fatal(err)
	}
	recA.expect(t, "before", 2*time.Second)

	srv.Kill()
	start := time.Now()
	recA.expect(t, "lost", 3*time.Second)
	recB.expect(t, "lost", 3*time.Second)
	t.Logf("loss noticed in %v", time.Since(start))

	// a announces while Redis is down: it fails, and a keeps it.
	if err := a.Invalidate(ctx, "while-down"); decoy.ErrorCode(err) != decoy.EUNAVAILABLE {
		t.Fatalf("Invalidate with Redis down = %v, want EUNAVAILABLE", err)
	}

	srv.Restart(t)
	// Each listener hears "listening" again. a sends its kept announcement
	// once subscribed again; b hears it when it subscribed first (else it
	// flushed its cache on Listening, which is why missing it is harmless).
	recA.expect(t, "listening", 5*time.Second)
	recB.expectAmid(t, "listening", "while-down", 5*time.Second)
	if err := a.Invalidate(ctx, "after"); err != nil {
		t.Fatal(err)
	}
	recB.expectAmid(t, "after", "while-down", 2*time.Second)
	select {
	case s := <-recA:
		t.Errorf("a heard %q, its own announcement", s)
	case <-time.After(200 * time.Millisecond):
	}
}

// expectAmid waits for want, letting through any number of other: what a
// replica may or may not hear, depending on who subscribed first.
func (r recorder) expectAmid(t *testing.T, want, other string, within time.Duration) {
	t.Helper()
	for {
		switch got := r.next(t, within); got {
		case want:
			return
		case other:
		default:
			t.Fatalf("heard %q, want %q", got, want)
		}
	}
}

// ownRedis starts a redis-server of the test's own, for the tests that make
// it fail: never the shared one.
func ownRedis(t *testing.T) *testservice.Redis {
	if testing.Short() {
		t.Skip("starts a redis-server")
	}
	return testservice.StartRedis(t)
}
