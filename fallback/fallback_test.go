package fallback_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/decoy-mock/decoy"
	"github.com/decoy-mock/decoy/fallback"
	"github.com/decoy-mock/decoy/inmem"
)

// switchable is a limiter that fails while down is set.
type switchable struct {
	decoy.Limiter
	down bool
}

var errDown = errors.New("shared limiter down")

func (s *switchable) Allow(ctx context.Context, key string, limit int64) (decoy.RateResult, error) {
	if s.down {
		return decoy.RateResult{}, errDown
	}
	return s.Limiter.Allow(ctx, key, limit)
}

func (s *switchable) Peek(ctx context.Context, key string, limit int64) (decoy.RateResult, error) {
	if s.down {
		return decoy.RateResult{}, errDown
	}
	return s.Limiter.Peek(ctx, key, limit)
}

// While the shared limiter fails, events are limited by the local one; it
// is tried again once a second, and used again as soon as it answers;
// Undo goes to the limiter that admitted the event.
func TestFallback(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	sharedMem, local := inmem.NewLimiter(), inmem.NewLimiter()
	sharedMem.Now, local.Now = clock, clock
	shared := &switchable{Limiter: sharedMem}
	fails := 0
	f := fallback.NewLimiter(fallback.Config{Shared: shared, Local: local, Use: "test", Now: clock, OnFail: func() { fails++ }})

	steps := []struct {
		name      string
		down      bool
		advance   time.Duration
		wantUp    bool
		wantFails int
		// used counts of each limiter after one more Allow
		wantShared, wantLocal int64
	}{
		{"shared works", false, 0, true, 0, 1, 0},
		{"shared fails: local", true, 0, false, 1, 1, 1},
		{"within the retry: local, shared not asked", true, 500 * time.Millisecond, false, 1, 1, 2},
		{"retry due, still down", true, time.Second, false, 2, 1, 3},
		{"retry due, back", false, time.Second, true, 2, 2, 3},
	}
	var last decoy.RateResult
	for _, st := range steps {
		shared.down = st.down
		now = now.Add(st.advance)
		r, err := f.Allow(ctx, "k", 100)
		if err != nil || !r.Allowed {
			t.Fatalf("%s: Allow: %v %+v", st.name, err, r)
		}
		last = r
		if fails != st.wantFails {
			t.Errorf("%s: %d failures told, want %d", st.name, fails, st.wantFails)
		}
		s, _ := sharedMem.Peek(ctx, "k", 100)
		l, _ := local.Peek(ctx, "k", 100)
		if s.Used != st.wantShared || l.Used != st.wantLocal {
			t.Errorf("%s: shared used %d, local %d; want %d, %d", st.name, s.Used, l.Used, st.wantShared, st.wantLocal)
		}
		if up := f.Up(ctx); up != st.wantUp {
			t.Errorf("%s: Up %v, want %v", st.name, up, st.wantUp)
		}
	}
	// The last event was the shared limiter's: Undo gives it back there.
	if err := f.Undo(ctx, "k", last); err != nil {
		t.Fatal(err)
	}
	if s, _ := sharedMem.Peek(ctx, "k", 100); s.Used != 1 {
		t.Errorf("shared used %d after Undo, want 1", s.Used)
	}
}

// hanging is a limiter that answers nothing until its caller gives up, as
// a frozen Redis does.
type hanging struct{ decoy.Limiter }

func (hanging) Allow(ctx context.Context, _ string, _ int64) (decoy.RateResult, error) {
	<-ctx.Done()
	return decoy.RateResult{}, ctx.Err()
}

// A shared limiter that hangs costs a request a short wait, not the
// request's own time: the local limiter then answers, and the shared one
// is left alone until the retry.
func TestFallbackSharedHangs(t *testing.T) {
	local := inmem.NewLimiter()
	f := fallback.NewLimiter(fallback.Config{Shared: hanging{}, Local: local, Use: "test"})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	start := time.Now()
	r, err := f.Allow(ctx, "k", 10)
	if err != nil || !r.Allowed {
		t.Fatalf("Allow: %v %+v", err, r)
	}
	if waited := time.Since(start); waited > 10*time.Second {
		t.Errorf("waited %v for a hanging shared limiter", waited)
	}
	if f.Up(ctx) {
		t.Error("a hanging shared limiter counts as up")
	}
	if l, _ := local.Peek(ctx, "k", 10); l.Used != 1 {
		t.Errorf("local used %d, want 1", l.Used)
	}
}

// undoHangs is a limiter that admits, but whose Undo answers nothing until
// its caller gives up; it counts the Undos asked.
type undoHangs struct {
	decoy.Limiter
	undos int
}

func (u *undoHangs) Undo(ctx context.Context, _ string, _ decoy.RateResult) error {
	u.undos++
	<-ctx.Done()
	return ctx.Err()
}

// Taking back an event of a shared limiter that hangs costs the request
// the same short wait as asking it, not the request's own time; the shared
// limiter is then down, and later Undos of its events do not wait on it.
func TestFallbackUndoSharedHangs(t *testing.T) {
	shared := &undoHangs{Limiter: inmem.NewLimiter()}
	local := inmem.NewLimiter()
	f := fallback.NewLimiter(fallback.Config{Shared: shared, Local: local, Use: "test"})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	first, err := f.Allow(ctx, "k", 10)
	if err != nil || !first.Allowed {
		t.Fatalf("Allow: %v %+v", err, first)
	}
	second, err := f.Allow(ctx, "k", 10)
	if err != nil || !second.Allowed {
		t.Fatalf("Allow: %v %+v", err, second)
	}
	start := time.Now()
	if err := f.Undo(ctx, "k", first); err == nil {
		t.Error("Undo through a hanging shared limiter succeeded")
	}
	if waited := time.Since(start); waited > 10*time.Second {
		t.Errorf("Undo waited %v for a hanging shared limiter", waited)
	}
	if err := f.Undo(ctx, "k", second); err == nil {
		t.Error("Undo while the shared limiter is down succeeded")
	}
	if shared.undos != 1 {
		t.Errorf("the shared limiter was asked %d Undos, want 1 (none while it is down)", shared.undos)
	}
	if f.Up(ctx) {
		t.Error("a shared limiter whose Undo hangs counts as up")
	}
	if r, err := f.Allow(ctx, "k", 10); err != nil || !r.Allowed || r.Event >= 0 {
		t.Errorf("Allow after the failed Undo: %v %+v, want an event of the local limiter", err, r)
	}
}
