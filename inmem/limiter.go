// Package inmem implements decoy.Limiter in process memory: an exact sliding
// window log per key. It is the limiter of a single replica; replicas that
// must share limits use the Redis one.
package inmem

import (
	"cmp"
	"context"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/decoy-mock/decoy"
)

// Limiter is an exact sliding-window limiter. Each key keeps the times of the
// events admitted in the last window, so memory grows with the traffic of
// the last window, not with the limit. Keys idle for a whole window are
// dropped.
type Limiter struct {
	// Now returns the current time. Tests replace it.
	Now func() time.Time
	// Window is the length of the sliding window (default decoy.RateWindow).
	Window time.Duration

	mu        sync.Mutex
	keys      map[string]*window
	epoch     time.Time
	lastSweep time.Duration
	seq       atomic.Int64
}

type window struct {
	mu     sync.Mutex
	events []event // admitted events, oldest first, from head on
	head   int
	dead   bool // swept from the map; look the key up again
}

type event struct {
	at time.Duration // since the limiter's epoch
	id int64
}

// NewLimiter returns a limiter with a window of decoy.RateWindow on the real
// clock.
func NewLimiter() *Limiter {
	return &Limiter{Now: time.Now, Window: decoy.RateWindow}
}

var _ decoy.Limiter = (*Limiter)(nil)

// Allow admits one event for key when fewer than limit were admitted in the
// window ending now.
func (l *Limiter) Allow(_ context.Context, key string, limit int64) (decoy.RateResult, error) {
	return l.do(key, limit, true), nil
}

// Peek reports the state of key, admitting nothing. A key with no window
// has admitted nothing: looking at it makes none (every private read looks
// at its client's failed authentications), so that looks cost neither a
// window nor room in the map.
func (l *Limiter) Peek(_ context.Context, key string, limit int64) (decoy.RateResult, error) {
	l.mu.Lock()
	if l.keys != nil {
		l.sweep() // first, so that a window it drops is not made again
	}
	_, ok := l.keys[key]
	l.mu.Unlock()
	if !ok {
		return decoy.RateResult{Limit: limit, Allowed: limit > 0, Remaining: max(limit, 0)}, nil
	}
	return l.do(key, limit, false), nil
}

// Undo removes an event that Allow admitted.
func (l *Limiter) Undo(_ context.Context, key string, r decoy.RateResult) error {
	if !r.Allowed {
		return nil
	}
	w := l.lock(key)
	defer w.mu.Unlock()
	for j := len(w.events) - 1; j >= w.head; j-- {
		if w.events[j].id == r.Event {
			w.events = append(w.events[:j], w.events[j+1:]...)
			break
		}
	}
	return nil
}

func (l *Limiter) do(key string, limit int64, admit bool) decoy.RateResult {
	w := l.lock(key)
	defer w.mu.Unlock()
	now := l.now() // under the window's lock, so events stay in time order
	w.prune(now - l.window())

	r := decoy.RateResult{Limit: limit, Used: int64(len(w.events) - w.head)}
	if admit {
		if r.Used < limit {
			r.Allowed = true
			r.Event = l.seq.Add(1)
			w.events = append(w.events, event{at: now, id: r.Event})
			r.Used++
		} else {
			// A slot frees when enough events have left for fewer than
			// limit to remain (more than one if the limit was lowered).
			r.RetryAfter = w.events[w.head+int(r.Used-limit)].at + l.window() - now
		}
	} else {
		r.Allowed = r.Used < limit
	}
	r.Remaining = max(limit-r.Used, 0)
	if w.head < len(w.events) {
		r.Reset = w.events[w.head].at + l.window() - now
	}
	return r
}

// Restore puts back events admitted at the times given, before a restart,
// so that the window of key holds them as it did: a restart does not give
// a fresh budget. Times outside the window ending now are left out.
func (l *Limiter) Restore(key string, times []time.Time) {
	w := l.lock(key)
	defer w.mu.Unlock()
	now := l.now()
	for _, t := range times {
		at := t.Sub(l.epoch)
		if at <= now-l.window() || at > now {
			continue
		}
		w.events = append(w.events, event{at: at, id: l.seq.Add(1)})
	}
	live := w.events[w.head:]
	slices.SortStableFunc(live, func(a, b event) int { return cmp.Compare(a.at, b.at) })
}

// lock returns the live window of key, locked.
func (l *Limiter) lock(key string) *window {
	for {
		l.mu.Lock()
		if l.keys == nil {
			l.keys = make(map[string]*window)
			l.epoch = l.Now()
		}
		l.sweep()
		w, ok := l.keys[key]
		if !ok {
			w = &window{}
			l.keys[key] = w
		}
		l.mu.Unlock()
		w.mu.Lock()
		if !w.dead {
			return w
		}
		w.mu.Unlock()
	}
}

// sweep drops the windows that hold no event, at most once per window.
// l.mu is held.
func (l *Limiter) sweep() {
	now := l.now()
	if now-l.lastSweep < l.window() {
		return
	}
	l.lastSweep = now
	dropped := 0
	for key, w := range l.keys {
		if !w.mu.TryLock() {
			continue // in use
		}
		w.prune(now - l.window())
		if w.head == len(w.events) {
			w.dead = true
			delete(l.keys, key)
			dropped++
		}
		w.mu.Unlock()
	}
	if dropped > shrinkMin && dropped > 3*len(l.keys) {
		// A map keeps the room of its largest size (maps.Clone too):
		// after a burst of keys, that would stay for good.
		keys := make(map[string]*window, len(l.keys))
		maps.Copy(keys, l.keys)
		l.keys = keys
	}
}

// shrinkMin is how many keys a sweep drops, at least, before the map is
// made again at its new size.
const shrinkMin = 1024

// Len returns the number of keys the limiter tracks.
func (l *Limiter) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.keys)
}

// prune forgets the events at or before cutoff: they left the window.
func (w *window) prune(cutoff time.Duration) {
	for w.head < len(w.events) && w.events[w.head].at <= cutoff {
		w.head++
	}
	if w.head == len(w.events) {
		w.events, w.head = w.events[:0], 0
	} else if w.head > 64 && w.head > len(w.events)/2 {
		n := copy(w.events, w.events[w.head:])
		w.events, w.head = w.events[:n], 0
	}
}

// now returns the time since the epoch, which lock sets once under l.mu
// before any caller gets here.
func (l *Limiter) now() time.Duration {
	return l.Now().Sub(l.epoch)
}

func (l *Limiter) window() time.Duration {
	if l.Window <= 0 {
		return decoy.RateWindow
	}
	return l.Window
}
