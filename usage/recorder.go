// Package usage keeps the recent history of each mock's reads: how many were
// served and how many refused, per minute over the last hour and per day over
// the month, for Decoy Studio's charts.
//
// The read endpoint is the hot path, so recording costs two atomic
// operations and a map lookup: no lock shared across requests and no
// allocation. Each mock has a small ring of per-minute counters; a
// Recorder drains them every FlushInterval and adds what it took to the
// store as increments, so that replicas sharing a store sum up. Reading the
// history adds the counts not yet flushed by this replica.
package usage

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/decoy-mock/decoy"
)

// FlushInterval is how often counts are added to the store.
const FlushInterval = 5 * time.Second

// slots is the size of each mock's ring of per-minute counters, a power of
// two. A slot is reused slots minutes after its minute, so a flush must run
// within slots-2 minutes of the last (one minute of room either side for
// events and flushes that read the clock a little apart).
const slots = 8

// idleFlushes is after how many flushes without a read a mock's counters
// are dropped from memory (about ten minutes).
const idleFlushes = int(10 * time.Minute / FlushInterval)

// MaxIdleCounters is how many mocks' counters are kept past a flush that
// found nothing to drain: beyond it, every idle one is dropped at once,
// so that memory holds the mocks read lately rather than every mock read
// in the last ten minutes. A mock read again after its counters were
// dropped gets new ones, at the cost of a lock.
const MaxIdleCounters = 4096

// counter holds one mock's counts not yet drained, per minute slot.
type counter struct {
	served, refused [slots]atomic.Int64
	// idle counts the flushes that found nothing; only the flusher
	// touches it.
	idle int
}

// key names one mock's minute.
type key struct {
	id     string
	minute int64 // Unix minutes
}

// Recorder counts reads per mock and minute in memory and flushes them to a
// store. The zero value is not usable; a nil *Recorder records nothing.
type Recorder struct {
	store decoy.UsageHistoryStore
	log   *slog.Logger
	// Now returns the current time. Tests replace it.
	Now func() time.Time

	// mocks is replaced, never changed: the hot path reads it without a
	// lock. Counters of mocks first seen since the last flush wait in
	// fresh, under mu, until the flush publishes them.
	mocks atomic.Pointer[map[string]*counter]
	mu    sync.Mutex
	fresh map[string]*counter

	// flushMu is held by a flush for writing and by a history read for
	// reading, so that a read never sees counts both in the store and in
	// pending (or in neither).
	flushMu sync.RWMutex
	// pending holds counts drained but not yet stored (the store failed).
	pending map[key]*decoy.UsageCount
	// retired are counters dropped for idleness at the last flush, drained
	// once more in case a read that found them still added to them.
	retired map[string]*counter
	failing bool
}

// NewRecorder returns a Recorder that flushes to store.
func NewRecorder(store decoy.UsageHistoryStore, log *slog.Logger) *Recorder {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	r := &Recorder{store: store, log: log, Now: time.Now, fresh: map[string]*counter{}, pending: map[key]*decoy.UsageCount{}}
	empty := map[string]*counter{}
	r.mocks.Store(&empty)
	return r
}

// unixMinute returns the Unix minute of t.
func unixMinute(t time.Time) int64 {
	s := t.Unix()
	if s < 0 {
		return (s - 59) / 60
	}
	return s / 60
}

// Served records a served answer of mock id at t.
func (r *Recorder) Served(id string, t time.Time) {
	if r != nil {
		r.counter(id).served[unixMinute(t)&(slots-1)].Add(1)
	}
}

// Refused records a refused read of mock id at t.
func (r *Recorder) Refused(id string, t time.Time) {
	if r != nil {
		r.counter(id).refused[unixMinute(t)&(slots-1)].Add(1)
	}
}

// counter returns the counters of mock id, creating them on its first read.
func (r *Recorder) counter(id string) *counter {
	if c, ok := (*r.mocks.Load())[id]; ok {
		return c
	}
	// First seen since the last flush: a lock, once per mock and flush.
	r.mu.Lock()
	defer r.mu.Unlock()
	if c, ok := (*r.mocks.Load())[id]; ok {
		return c
	}
	c, ok := r.fresh[id]
	if !ok {
		c = &counter{}
		r.fresh[id] = c
	}
	return c
}

// slotMinute returns the minute slot i holds at minute cur: the latest
// minute up to cur+1 that maps to i (an event may read the clock just after
// the flush did).
func slotMinute(i int, cur int64) int64 {
	top := cur + 1
	return top - ((top - int64(i)) & (slots - 1))
}

// Run flushes every FlushInterval until ctx ends, then flushes once more,
// so that a graceful stop loses nothing.
func (r *Recorder) Run(ctx context.Context) {
	t := time.NewTicker(FlushInterval)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			fctx, cancel := context.WithTimeout(ctx, FlushInterval)
			r.Flush(fctx)
			cancel()
		case <-ctx.Done():
			fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			if err := r.Flush(fctx); err != nil {
				r.log.Error("usage history not written at shutdown", "err", err)
			}
			cancel()
			return
		}
	}
}

// Flush drains the counters and adds them to the store. Counts the store
// did not take are kept and tried again at the next flush, for up to
// decoy.UsageMinuteRetention.
func (r *Recorder) Flush(ctx context.Context) error {
	if r == nil {
		return nil
	}
	r.flushMu.Lock()
	defer r.flushMu.Unlock()
	now := r.Now()
	cur := unixMinute(now)

	// Publish the counters of mocks first seen since the last flush.
	r.mu.Lock()
	mocks := *r.mocks.Load()
	if len(r.fresh) > 0 {
		next := make(map[string]*counter, len(mocks)+len(r.fresh))
		for id, c := range mocks {
			next[id] = c
		}
		for id, c := range r.fresh {
			next[id] = c
		}
		r.mocks.Store(&next)
		mocks = next
		r.fresh = map[string]*counter{}
	}
	r.mu.Unlock()

	for id, c := range r.retired {
		r.drain(id, c, cur)
	}
	r.retired = nil
	var idle []string
	crowded := len(mocks) > MaxIdleCounters
	for id, c := range mocks {
		if r.drain(id, c, cur) {
			c.idle = 0
		} else if c.idle++; c.idle >= idleFlushes || crowded {
			idle = append(idle, id)
		}
	}
	if len(idle) > 0 {
		r.dropIdle(idle)
	}

	// Bounded: counts the store kept refusing are dropped once they are
	// older than the minutes it keeps.
	oldest := cur - int64(decoy.UsageMinuteRetention/time.Minute)
	counts := make([]decoy.UsageCount, 0, len(r.pending))
	for k, c := range r.pending {
		if k.minute < oldest {
			delete(r.pending, k)
			continue
		}
		counts = append(counts, *c)
	}
	if len(counts) == 0 {
		return nil
	}
	if err := r.store.AddUsage(ctx, counts, now); err != nil {
		if !r.failing {
			r.log.Warn("usage history not written; keeping the counts to try again", "err", err)
		}
		r.failing = true
		return err
	}
	if r.failing {
		r.log.Info("usage history written again")
	}
	r.failing = false
	r.pending = map[key]*decoy.UsageCount{} // not clear: it would keep the room of a burst
	return nil
}

// drain moves a mock's counters into pending and reports whether there
// were any.
func (r *Recorder) drain(id string, c *counter, cur int64) bool {
	any := false
	for i := range slots {
		served, refused := c.served[i].Swap(0), c.refused[i].Swap(0)
		if served == 0 && refused == 0 {
			continue
		}
		any = true
		m := slotMinute(i, cur)
		k := key{id, m}
		p := r.pending[k]
		if p == nil {
			p = &decoy.UsageCount{MockID: id, Minute: time.Unix(m*60, 0).UTC()}
			r.pending[k] = p
		}
		p.Served += served
		p.Refused += refused
	}
	return any
}

// dropIdle forgets the counters of mocks not read for a while, keeping
// them for one more drain.
func (r *Recorder) dropIdle(ids []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	old := *r.mocks.Load()
	next := make(map[string]*counter, len(old))
	for id, c := range old {
		next[id] = c
	}
	r.retired = make(map[string]*counter, len(ids))
	for _, id := range ids {
		r.retired[id] = next[id]
		delete(next, id)
	}
	r.mocks.Store(&next)
}

// History returns the reads of mock id per minute over the last
// decoy.UsageMinutes minutes and per day over the current UTC month, up to
// now: what the store holds plus what this replica has not flushed yet.
func (r *Recorder) History(ctx context.Context, id string, now time.Time) (decoy.UsageHistory, error) {
	r.flushMu.RLock()
	defer r.flushMu.RUnlock()
	now = now.UTC()
	cur := unixMinute(now)
	first := cur - decoy.UsageMinutes + 1
	monthStart := time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, time.UTC)
	today := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)

	h := decoy.UsageHistory{
		Minutes: make([]decoy.UsageBucket, decoy.UsageMinutes),
		Days:    make([]decoy.UsageBucket, now.Day()),
	}
	for i := range h.Minutes {
		h.Minutes[i].Start = time.Unix((first+int64(i))*60, 0).UTC()
	}
	for i := range h.Days {
		h.Days[i].Start = monthStart.AddDate(0, 0, i)
	}
	add := func(minute int64, served, refused int64) {
		if i := minute - first; i >= 0 && i < decoy.UsageMinutes {
			h.Minutes[i].Served += served
			h.Minutes[i].Refused += refused
		}
		t := time.Unix(minute*60, 0).UTC()
		if t.Before(monthStart) || minute > cur {
			return
		}
		d := t.Day() - 1
		h.Days[d].Served += served
		h.Days[d].Refused += refused
	}

	minutes, days, err := r.store.UsageHistory(ctx, id, time.Unix(first*60, 0).UTC(), monthStart)
	if err != nil {
		return decoy.UsageHistory{}, err
	}
	for _, b := range minutes {
		if i := unixMinute(b.Start) - first; i >= 0 && i < decoy.UsageMinutes {
			h.Minutes[i].Served += b.Served
			h.Minutes[i].Refused += b.Refused
		}
	}
	for _, b := range days {
		if b.Start.Before(monthStart) || b.Start.After(today) {
			continue
		}
		d := b.Start.Day() - 1
		h.Days[d].Served += b.Served
		h.Days[d].Refused += b.Refused
	}

	// Not flushed yet: drained but not stored, and still in the ring.
	for k, c := range r.pending {
		if k.id == id {
			add(k.minute, c.Served, c.Refused)
		}
	}
	if c := r.peek(id); c != nil {
		for i := range slots {
			served, refused := c.served[i].Load(), c.refused[i].Load()
			if served != 0 || refused != 0 {
				if m := slotMinute(i, cur); m <= cur {
					add(m, served, refused)
				}
			}
		}
	}
	return h, nil
}

// Len returns how many mocks' counters the recorder holds.
func (r *Recorder) Len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(*r.mocks.Load()) + len(r.fresh)
}

// peek returns the counters of mock id, or nil when it has none.
func (r *Recorder) peek(id string) *counter {
	if c, ok := (*r.mocks.Load())[id]; ok {
		return c
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.fresh[id]
}
