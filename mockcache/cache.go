// Package mockcache keeps mocks ready to serve: each document parsed once
// and mapped from its file, the queries compiled from recent query strings,
// the large answers that repeated queries asked for, and the coherence of
// all that with the store when other replicas write to it. It bounds the
// memory they hold. It knows bytes, not HTTP: the handlers turn its
// answers into responses.
package mockcache

import (
	"cmp"
	"context"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/decoy-mock/decoy"
	"golang.org/x/sync/singleflight"
)

// Cache keeps every mock that was read or written, parsed. Reads take an
// entry under a read lock; admin writes replace it at once. gen changes on
// every write, so that a load that raced with a write does not put back what
// the write replaced.
//
// When other replicas write to the same store, an entry is trusted only
// while their changes are heard (listening), and even then for at most
// maxTrust at a time: a replica cut off from the channel of announcements
// while the others are not (its own changes then go unheard) is caught by
// that check. Otherwise every read first asks the store for the mock's
// version, and reloads when it changed.
type Cache struct {
	store   decoy.Store
	mu      sync.RWMutex
	entries map[string]*Entry
	gen     uint64
	loads   singleflight.Group

	// shared is set when other replicas may change the store.
	shared bool
	// listening is set while other replicas' changes are heard.
	listening atomic.Bool
	// onStale is called when an entry is served unchecked because the store
	// could not be asked.
	onStale func(id string, err error)
	// now is the clock of maxTrust.
	now func() time.Time

	// maxBytes bounds the footprint of the entries (0: no bound); see
	// enforce.
	maxBytes int64
	// epoch advances each time an entry comes in and each time enforce
	// runs; entries remember the epoch in which they were last read.
	epoch atomic.Int64
	// approx is the footprint enforce last counted, plus what came in or
	// grew since (what left is not taken off): never less than the
	// footprint, so that while it is within the bound, so are the
	// entries. scanned is approx after the last count, which could not
	// Get within the bound: until approx changes, counting again is
	// useless.
	approx, scanned atomic.Int64
	enforceMu       sync.Mutex
	// onEvict is called with how many entries enforce dropped.
	onEvict func(n int)
}

// maxTrust is how long a replica on a shared store serves an entry without
// asking the store whether it is current, while it hears announcements.
const maxTrust = 500 * time.Millisecond

// storeCheckTimeout bounds the store call that checks an entry: a stalled
// database must not stall reads that can be answered from memory.
const storeCheckTimeout = time.Second

// storeLoadTimeout bounds the load of a mock, which may be large.
const storeLoadTimeout = 30 * time.Second

// Config is what a Cache needs.
type Config struct {
	Store decoy.Store
	// Shared is set when other replicas may change the store.
	Shared bool
	// MaxBytes bounds the footprint of the entries (0: no bound).
	MaxBytes int64
	// OnEvict, when set, is told how many entries the bound dropped.
	OnEvict func(n int)
	// OnStale, when set, is told when an entry is served unchecked
	// because the store could not be asked.
	OnStale func(id string, err error)
	// Now is the clock of the checks against a shared store.
	Now func() time.Time
}

// New returns an empty cache.
func New(cfg Config) *Cache {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Cache{store: cfg.Store, entries: make(map[string]*Entry), shared: cfg.Shared, now: cfg.Now,
		maxBytes: cfg.MaxBytes, onEvict: cfg.OnEvict, onStale: cfg.OnStale}
}

// Trusted reports whether cached entries can be served without asking the
// store whether they are current.
func (c *Cache) Trusted() bool { return !c.shared || c.listening.Load() }

// Get returns the entry of a mock, loading it from the store on a miss.
func (c *Cache) Get(ctx context.Context, id string) (*Entry, error) {
	c.mu.RLock()
	e, gen := c.entries[id], c.gen
	c.mu.RUnlock()
	if e == nil {
		return c.load(ctx, id)
	}
	if c.maxBytes > 0 {
		if ep := c.epoch.Load(); e.used.Load() != ep {
			e.used.Store(ep)
		}
		if a := c.approx.Load(); a > c.maxBytes && a != c.scanned.Load() && c.enforceMu.TryLock() {
			c.enforceLocked(e)
			c.enforceMu.Unlock()
		}
	}
	if !c.shared {
		return e, nil
	}
	if c.listening.Load() {
		// One read at a time checks an entry trusted for maxTrust; the
		// others meanwhile serve it as it is.
		last, now := e.checked.Load(), c.now().UnixNano()
		if now-last < int64(maxTrust) || !e.checked.CompareAndSwap(last, now) {
			return e, nil
		}
	}
	return c.revalidate(ctx, e, gen)
}

// revalidate returns e when the store holds the same version of its mock,
// e with new settings when only they changed, and the stored mock when its
// data changed. When the store cannot be asked, e is served as it is: a
// possibly stale answer is better than none while the database is down.
func (c *Cache) revalidate(ctx context.Context, e *Entry, gen uint64) (*Entry, error) {
	sctx, cancel := context.WithTimeout(ctx, storeCheckTimeout)
	m, err := c.store.FindMock(sctx, e.Mock.ID)
	cancel()
	switch {
	case decoy.ErrorCode(err) == decoy.ENOTFOUND:
		c.Remove(e.Mock.ID)
		return nil, err
	case err != nil:
		if ctx.Err() != nil {
			return nil, err
		}
		if c.onStale != nil {
			c.onStale(e.Mock.ID, err)
		}
		return e, nil
	case e.sameMock(m):
		e.checked.Store(c.now().UnixNano())
		return e, nil
	case e.sameData(m):
		fresh := e.WithMock(m)
		fresh.checked.Store(c.now().UnixNano())
		c.mu.Lock()
		if c.gen == gen && c.entries[m.ID] == e {
			c.entries[m.ID] = fresh
		}
		c.mu.Unlock()
		return fresh, nil
	}
	c.Remove(e.Mock.ID)
	return c.load(ctx, e.Mock.ID)
}

// load reads a mock from the store, once for all the callers that want it
// at the same time, and caches it.
func (c *Cache) load(ctx context.Context, id string) (*Entry, error) {
	c.mu.RLock()
	gen := c.gen
	c.mu.RUnlock()
	// Loads are shared per generation: a read that comes after a write (or
	// an announcement, or a flush) never joins a load that started before
	// it, and what such a load finds is not cached.
	v, err, _ := c.loads.Do(id+"@"+strconv.FormatUint(gen, 10), func() (any, error) {
		// The load serves every caller waiting on it, so one caller going
		// away must not cancel it.
		lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), storeLoadTimeout)
		defer cancel()
		m, data, err := c.store.FindMockData(lctx, id)
		if err != nil {
			return nil, err
		}
		body, err := DocOf(data)
		if err != nil {
			return nil, err
		}
		e, err := NewEntry(m, body)
		if err != nil {
			// Stored under a JSON type but not JSON (written by hand?):
			// serve it unchanged rather than not at all.
			e = &Entry{Mock: m, body: body, Data: body.Bytes(), ContentType: []string{m.ContentType}}
		}
		e.checked.Store(c.now().UnixNano())
		c.track(e)
		c.mu.Lock()
		var old *Entry
		if c.gen == gen {
			old = c.entries[id]
			c.entries[id] = e
		}
		c.mu.Unlock()
		replaced(old, e)
		c.admitted(e)
		return e, nil
	})
	if err != nil {
		return nil, err
	}
	return v.(*Entry), nil
}

// Peek returns the cached entry of a mock, or nil.
func (c *Cache) Peek(id string) *Entry {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.entries[id]
}

// Generation returns the current generation, to be given to putAt.
func (c *Cache) Generation() uint64 {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.gen
}

// PutAt puts the entry a write produced, unless the cache changed since
// Generation gen was taken before the write: then another replica's change,
// heard meanwhile, may be newer than this one, and the entry is dropped
// instead, for the next read to load what the store holds.
func (c *Cache) PutAt(e *Entry, gen uint64) {
	c.track(e)
	defer c.admitted(e)
	c.mu.Lock()
	old := c.entries[e.Mock.ID]
	if c.gen != gen {
		delete(c.entries, e.Mock.ID)
		defer replaced(e, nil)
	} else {
		e.checked.Store(c.now().UnixNano())
		c.entries[e.Mock.ID] = e
	}
	c.gen++
	c.mu.Unlock()
	replaced(old, c.Peek(e.Mock.ID))
}

// Flush forgets every mock, for when changes may have been missed.
func (c *Cache) Flush() {
	c.mu.Lock()
	old := c.entries
	c.entries = make(map[string]*Entry)
	c.gen++
	c.mu.Unlock()
	for _, e := range old {
		replaced(e, nil)
	}
}

// Remove forgets a mock after a write, or after a write that failed and may
// or may not have changed the store.
func (c *Cache) Remove(id string) {
	c.mu.Lock()
	old := c.entries[id]
	delete(c.entries, id)
	c.gen++
	c.mu.Unlock()
	replaced(old, nil)
}

// track readies an entry about to come into the cache: it starts a new
// epoch, in which the entry counts as read, and has the entry and its
// document report their growth.
func (c *Cache) track(e *Entry) {
	if c.maxBytes <= 0 {
		return
	}
	e.used.Store(c.epoch.Add(1))
	grew := func(n int64) { c.approx.Add(n) }
	e.onGrow.Store(&grew)
	if e.Doc != nil {
		e.Doc.OnGrow(grew)
	}
}

// admitted counts an entry come into the cache (or not, if a write
// overtook it: it is then counted until the next count), and drops others
// if the bound is passed.
func (c *Cache) admitted(e *Entry) {
	if c.maxBytes <= 0 {
		return
	}
	c.approx.Add(e.Footprint())
	c.enforceMu.Lock()
	defer c.enforceMu.Unlock()
	c.enforceLocked(e)
}

// enforceLocked counts the entries when they may be over maxBytes and, if
// they are, drops the least recently read (in epochs: since which entry
// came in or which count) until they are within 7/8 of it, so that the
// next few entries come in without a count. keep, the entry being read,
// stays, however large. It runs under enforceMu: when an entry comes in,
// and on a read once what was built over the documents (columns, indexes,
// gzipped copies) passed the bound.
func (c *Cache) enforceLocked(keep *Entry) {
	a0 := c.approx.Load()
	if a0 <= c.maxBytes || a0 == c.scanned.Load() {
		return
	}
	c.epoch.Add(1) // reads from now on are more recent than any counted here
	type candidate struct {
		e          *Entry
		used, size int64
	}
	c.mu.RLock()
	list := make([]candidate, 0, len(c.entries))
	var total int64
	for _, e := range c.entries {
		size := e.Footprint()
		total += size
		list = append(list, candidate{e, e.used.Load(), size})
	}
	c.mu.RUnlock()
	var dropped []*Entry
	var freed int64
	if total > c.maxBytes {
		slices.SortFunc(list, func(a, b candidate) int { return cmp.Compare(a.used, b.used) })
		goal := c.maxBytes - c.maxBytes/8
		c.mu.Lock()
		for _, x := range list {
			if total-freed <= goal {
				break
			}
			if x.e == keep || c.entries[x.e.Mock.ID] != x.e {
				continue // being read, or replaced or removed meanwhile
			}
			delete(c.entries, x.e.Mock.ID)
			freed += x.size
			dropped = append(dropped, x.e)
		}
		c.mu.Unlock()
	}
	// What came in or grew during the count stays counted on top.
	c.scanned.Store(c.approx.Add(total - freed - a0))
	for _, e := range dropped {
		replaced(e, nil)
	}
	if len(dropped) > 0 && c.onEvict != nil {
		c.onEvict(len(dropped))
	}
}

// Footprint returns the footprint of the entries.
func (c *Cache) Footprint() int64 {
	c.mu.RLock()
	defer c.mu.RUnlock()
	var n int64
	for _, e := range c.entries {
		n += e.Footprint()
	}
	return n
}

// replaced is told that the cache dropped old for now (nil: for nothing).
// Unless now serves the same data, the data's pages leave memory at once:
// its mapping would otherwise stay until a garbage collection releases it,
// which with a small heap may be minutes away, holding a replaced
// document's size twice. Readers still writing it read it again from the
// file.
func replaced(old, now *Entry) {
	if old == nil || old.body == nil || now != nil && now.body == old.body {
		return
	}
	old.body.Evict()
}

// Listening is told that every change other replicas announce from now on
// will be heard. Announcements made while not listening were missed: the
// cache forgets everything, then trusts what it loads from now on.
func (c *Cache) Listening() {
	c.Flush()
	c.listening.Store(true)
}

// Lost is told that announcements may be missed from now on: until the next
// Listening, each read checks the store for a newer version.
func (c *Cache) Lost() { c.listening.Store(false) }

// SetMaxBytes changes the bound of the entries' footprint (0: none); it is
// enforced as entries come in and grow.
func (c *Cache) SetMaxBytes(n int64) {
	c.enforceMu.Lock()
	c.maxBytes = n
	c.enforceMu.Unlock()
}
