package server

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/decoy-mock/decoy"
)

// This file is what the server does when it shares its store, limits and
// quotas with other replicas: it announces its changes, listens for theirs,
// and degrades to what one replica can do alone when the shared services
// fail.

// sharedRetry is how long limiting stays per replica after the shared
// limiter failed, before the shared one is tried again.
const sharedRetry = time.Second

// Listen receives other replicas' changes from the Invalidator until ctx
// ends, dropping the cached copies they make stale. Until the Invalidator
// is listening, and whenever it loses its channel, the cache is not trusted:
// each read checks the store for a newer version. Without an Invalidator,
// Listen returns at once.
func (s *Server) Listen(ctx context.Context) {
	if s.cfg.Invalidator == nil {
		return
	}
	s.cfg.Invalidator.Listen(ctx, (*listener)(s))
}

// listener is the Server as the Invalidator's handler.
type listener Server

func (l *listener) Listening() {
	s := (*Server)(l)
	s.cache.Listening()
	s.metrics.cacheTrusted.Set(1)
	s.log.Info("listening for changes from other replicas")
}

func (l *listener) Lost(err error) {
	s := (*Server)(l)
	s.cache.Lost()
	s.metrics.cacheTrusted.Set(0)
	s.metrics.sharedErrors.WithLabelValues("invalidation").Inc()
	s.log.Warn("lost the channel of changes from other replicas; checking the store on every read until it is back", "err", err)
}

func (l *listener) Invalidated(id string) {
	(*Server)(l).cache.Remove(id)
}

// announce tells the other replicas that mock id changed, right after the
// store call and before the answer, so that a client told of a change finds
// it on every replica. The change is in the store already, so a failure only
// delays what they see: it is logged and counted, and the Invalidator sends
// it again once it can.
func (s *Server) announce(ctx context.Context, id string) {
	if s.cfg.Invalidator == nil {
		return
	}
	// Bounded: a stalled Redis must not hold the write lock; the entries
	// of other replicas are checked against the store within maxTrust
	// anyway.
	ctx, cancel := context.WithTimeout(ctx, announceTimeout)
	defer cancel()
	if err := s.cfg.Invalidator.Invalidate(ctx, id); err != nil {
		s.metrics.sharedErrors.WithLabelValues("invalidation").Inc()
		s.log.Warn("could not announce a change to other replicas", "mock", id, "err", err)
	}
}

// announceTimeout bounds the announcement of a change.
const announceTimeout = time.Second

// SharedFailed records that a shared backend failed and the server fell back
// to what it can do alone (use says what for: "quota", ...). Backends call
// it through their fallback hooks.
func (s *Server) SharedFailed(use string, err error) {
	s.metrics.sharedErrors.WithLabelValues(use).Inc()
	// Every read may fail the same way while a backend is down: log the
	// first failure of each use per interval, and count them all.
	now := s.cfg.Now().UnixNano()
	last, _ := s.failLogged.LoadOrStore(use, new(atomic.Int64))
	if at := last.(*atomic.Int64); now-at.Load() >= int64(failureLogInterval) {
		at.Store(now)
		s.log.Warn("shared backend failed; going on without it", "use", use, "err", err)
	}
}

// failureLogInterval is how often a failing shared backend is logged.
const failureLogInterval = 10 * time.Second

// fallbackLimiter uses the shared limiter, and the local one while the
// shared one fails: reads go on, limited per replica, and shared limiting
// comes back as soon as the shared limiter answers again, which is tried
// at most once per sharedRetry while it is down.
//
// Events admitted by the local limiter are told apart by a negative Event,
// so that Undo goes to the limiter that admitted it.
type fallbackLimiter struct {
	shared, local decoy.Limiter
	s             *Server
	use           string
	// retryAt is when to try the shared limiter again (Unix nanoseconds);
	// zero while it works.
	retryAt atomic.Int64
}

func (f *fallbackLimiter) Allow(ctx context.Context, key string, limit int64) (decoy.RateResult, error) {
	return f.do(ctx, key, limit, decoy.Limiter.Allow)
}

func (f *fallbackLimiter) Peek(ctx context.Context, key string, limit int64) (decoy.RateResult, error) {
	return f.do(ctx, key, limit, decoy.Limiter.Peek)
}

func (f *fallbackLimiter) do(ctx context.Context, key string, limit int64,
	call func(decoy.Limiter, context.Context, string, int64) (decoy.RateResult, error)) (decoy.RateResult, error) {
	now := f.s.cfg.Now().UnixNano()
	// While the shared limiter is down, one request per sharedRetry probes
	// it (the one that moves retryAt on); the others stay local and do not
	// wait on it.
	if at := f.retryAt.Load(); at == 0 || now >= at && f.retryAt.CompareAndSwap(at, now+int64(sharedRetry)) {
		r, err := call(f.shared, ctx, key, limit)
		if err == nil {
			if f.retryAt.Swap(0) != 0 {
				f.s.log.Info("shared limits are back", "use", f.use)
			}
			return r, nil
		}
		if ctx.Err() != nil && at == 0 {
			return r, err // the client left; the shared limiter is not at fault
		}
		if f.retryAt.Swap(now+int64(sharedRetry)) == 0 {
			f.s.log.Warn("shared limiter failed; limiting per replica until it is back", "use", f.use, "err", err)
		}
		f.s.metrics.sharedErrors.WithLabelValues(f.use).Inc()
		if ctx.Err() != nil {
			return r, err
		}
	}
	r, err := call(f.local, ctx, key, limit)
	r.Event = -r.Event
	return r, err
}

func (f *fallbackLimiter) Undo(ctx context.Context, key string, r decoy.RateResult) error {
	if r.Event < 0 {
		r.Event = -r.Event
		return f.local.Undo(ctx, key, r)
	}
	return f.shared.Undo(ctx, key, r)
}

// up reports whether limits are shared with the other replicas now. When
// the shared limiter is due to be tried again, it is tried first, so that
// /readyz and metrics recover without waiting for a request that needs it.
func (f *fallbackLimiter) up(ctx context.Context) bool {
	if at := f.retryAt.Load(); at != 0 && f.s.cfg.Now().UnixNano() >= at {
		f.Peek(ctx, "readyz:probe", 1)
	}
	return f.retryAt.Load() == 0
}
