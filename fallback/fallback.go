// Package fallback keeps a replica limiting when the limiter it shares
// with the other replicas (in Redis) fails: it limits alone, per replica,
// until the shared limiter answers again. Reads go on, limited less
// exactly, rather than failing with the shared service.
package fallback

import (
	"context"
	"errors"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/decoy-mock/decoy"
)

// sharedRetry is how long limiting stays per replica after the shared
// limiter failed, before the shared one is tried again.
const sharedRetry = time.Second

// sharedBudget bounds each call to the shared limiter: one that hangs (a
// frozen Redis keeps its connections open and answers nothing) costs a
// request that long, then the local limiter answers.
const sharedBudget = 300 * time.Millisecond

// Config is what a Limiter needs.
type Config struct {
	Shared, Local decoy.Limiter
	// Use names what the limiter counts, for logs ("rate_limit").
	Use string
	// OnFail is called each time the shared limiter fails.
	OnFail func()
	Logger *slog.Logger
	// Now is the clock of the retries.
	Now func() time.Time
}

// NewLimiter returns a limiter that uses cfg.Shared, and cfg.Local while
// the shared one fails.
func NewLimiter(cfg Config) *Limiter {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.OnFail == nil {
		cfg.OnFail = func() {}
	}
	return &Limiter{shared: cfg.Shared, local: cfg.Local, use: cfg.Use, now: cfg.Now, log: cfg.Logger, onFail: cfg.OnFail}
}

// Limiter uses the shared limiter, and the local one while the
// shared one fails: reads go on, limited per replica, and shared limiting
// comes back as soon as the shared limiter answers again, which is tried
// at most once per sharedRetry while it is down.
//
// Events admitted by the local limiter are told apart by a negative Event,
// so that Undo goes to the limiter that admitted it.
type Limiter struct {
	shared, local decoy.Limiter
	use           string
	now           func() time.Time
	log           *slog.Logger
	onFail        func()
	// retryAt is when to try the shared limiter again (Unix nanoseconds);
	// zero while it works.
	retryAt atomic.Int64
}

func (f *Limiter) Allow(ctx context.Context, key string, limit int64) (decoy.RateResult, error) {
	return f.do(ctx, key, limit, decoy.Limiter.Allow)
}

func (f *Limiter) Peek(ctx context.Context, key string, limit int64) (decoy.RateResult, error) {
	return f.do(ctx, key, limit, decoy.Limiter.Peek)
}

func (f *Limiter) do(ctx context.Context, key string, limit int64,
	call func(decoy.Limiter, context.Context, string, int64) (decoy.RateResult, error)) (decoy.RateResult, error) {
	now := f.now().UnixNano()
	// While the shared limiter is down, one request per sharedRetry probes
	// it (the one that moves retryAt on); the others stay local and do not
	// wait on it.
	if at := f.retryAt.Load(); at == 0 || now >= at && f.retryAt.CompareAndSwap(at, now+int64(sharedRetry)) {
		sctx, cancel := context.WithTimeout(ctx, sharedBudget)
		r, err := call(f.shared, sctx, key, limit)
		cancel()
		if err == nil {
			if f.retryAt.Swap(0) != 0 {
				f.log.Info("shared limits are back", "use", f.use)
			}
			return r, nil
		}
		if ctx.Err() != nil && at == 0 {
			return r, err // the client left; the shared limiter is not at fault
		}
		f.failed(now, err)
		if ctx.Err() != nil {
			return r, err
		}
	}
	r, err := call(f.local, ctx, key, limit)
	r.Event = -r.Event
	return r, err
}

// failed notes that the shared limiter failed at now (Unix nanoseconds):
// it is tried again after sharedRetry.
func (f *Limiter) failed(now int64, err error) {
	if f.retryAt.Swap(now+int64(sharedRetry)) == 0 {
		f.log.Warn("shared limiter failed; limiting per replica until it is back", "use", f.use, "err", err)
	}
	f.onFail()
}

// ErrSharedDown is Undo's error for an event of the shared limiter while
// that limiter is down: the event stays counted. The outage is logged
// once, when the shared limiter fails; callers need not log this.
var ErrSharedDown = errors.New("the shared limiter is down: the event stays counted")

// Undo takes back an event in the limiter that admitted it. An event of
// the shared limiter is taken back within sharedBudget, as Allow waits
// for it; while the shared limiter is down, not at all: the event stays
// counted (a client is limited a little early, never late) and the
// request does not wait on a limiter known to fail.
func (f *Limiter) Undo(ctx context.Context, key string, r decoy.RateResult) error {
	if r.Event < 0 {
		r.Event = -r.Event
		return f.local.Undo(ctx, key, r)
	}
	if f.retryAt.Load() != 0 {
		return ErrSharedDown
	}
	sctx, cancel := context.WithTimeout(ctx, sharedBudget)
	err := f.shared.Undo(sctx, key, r)
	cancel()
	if err != nil && ctx.Err() == nil {
		f.failed(f.now().UnixNano(), err)
	}
	return err
}

// Up reports whether limits are shared with the other replicas now. When
// the shared limiter is due to be tried again, it is tried first, so that
// /readyz and metrics recover without waiting for a request that needs it.
func (f *Limiter) Up(ctx context.Context) bool {
	if at := f.retryAt.Load(); at != 0 && f.now().UnixNano() >= at {
		f.Peek(ctx, "readyz:probe", 1)
	}
	return f.retryAt.Load() == 0
}
