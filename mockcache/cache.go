// Package mockcache keeps mocks ready to serve: each document parsed once
// and held in memory or mapped from its file, the queries compiled from
// recent query strings, the large answers that repeated queries asked for,
// and the coherence of all that with the store when other replicas write
// to it. It bounds the memory they hold (each entry's is counted in a
// budget.Set of one budget.Pool, before it is built) and the documents it
// keeps mapped. It knows bytes, not HTTP: the handlers turn its answers
// into responses.
//
// An entry's document is counted (see docfile): the cache holds a
// reference while the entry is in it, and each reader one from Get until
// it calls Release, so that a document the cache dropped (for a bound, a
// delete, new data, a flush) is unmapped as soon as its last reader is
// done.
package mockcache

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"time"
	"weak"

	"github.com/decoy-mock/decoy"
	"github.com/decoy-mock/decoy/budget"
	"github.com/decoy-mock/decoy/docfile"
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
	// mapped holds the entries that keep a mapping open (their documents
	// are mapped, or made by a write over one: docfile.HoldsMapping):
	// those maxOpen bounds.
	mapped map[string]*Entry
	gen    uint64
	// unfit holds, under mu, what is known of mocks not in entries: the
	// entry of one too large for the bound (see admit) that reads still
	// use, which a read that comes meanwhile shares rather than loading
	// and parsing the mock once more, so that the reads of such a mock
	// that overlap hold it once; and the newest number of its live data
	// written here, so that a load that read the store before that write
	// is neither shared nor cached. A change of version forgets it
	// (deleteLocked, with a new generation; Flush).
	unfit map[string]unfitEntry
	// flights are the loads under way, per mock and generation.
	flightMu sync.Mutex
	flights  map[flightKey]*flight

	// shared is set when other replicas may change the store.
	shared bool
	// listening is set while other replicas' changes are heard.
	listening atomic.Bool
	// onStale is called when an entry is served unchecked because the store
	// could not be asked.
	onStale func(id string, err error)
	// now is the clock of maxTrust.
	now func() time.Time

	// pool bounds what the entries hold, documents and what is built
	// over them (Config.MaxBytes; 0: no bound, but counted).
	pool *budget.Pool
	// maxOpen bounds the entries whose documents are mapped (0: no
	// bound); see closeLocked.
	maxOpen int
	// onEvict is called with how many entries the bounds dropped.
	onEvict func(n int)
	// spillDir is where large kept bodies are kept (Config.SpillDir).
	spillDir string

	// live, when set, keeps the mocks' live data: entries hold it.
	live decoy.LiveStore
	// wants holds, under mu, the numbers announcements said mocks' live
	// data reached (see Advance), until a cached entry reaches them;
	// advancing the mocks whose entries are being caught up.
	wants     map[string]int64
	advancing map[string]bool
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
	// MaxOpenDocuments bounds the entries whose documents are mapped from
	// files, or made by a write over one (0: no bound): each holds a
	// mapping, of which a process has a limited number (65,530 by default
	// on Linux). Documents held in memory do not count; MaxBytes bounds
	// them.
	MaxOpenDocuments int
	// OnEvict, when set, is told how many entries the bounds dropped.
	OnEvict func(n int)
	// OnStale, when set, is told when an entry is served unchecked
	// because the store could not be asked.
	OnStale func(id string, err error)
	// Now is the clock of the checks against a shared store.
	Now func() time.Time
	// SpillDir, when set, is a folder where the large bodies kept over
	// documents (gzipped copies, kept answers) are kept, rather than in
	// memory (see spillMin): counted within MaxBytes all the same, and
	// sent from the file system's cache.
	SpillDir string
	// Live, when set, keeps the mocks' live data (§12): an entry holds its
	// mock's live data, the base the store keeps with the writes after it
	// applied (see decoy.LiveStore). Nil: no writes, entries hold the
	// stored data.
	Live decoy.LiveStore
}

// New returns an empty cache.
func New(cfg Config) *Cache {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Cache{store: cfg.Store, entries: make(map[string]*Entry), mapped: make(map[string]*Entry),
		flights: make(map[flightKey]*flight), shared: cfg.Shared, now: cfg.Now,
		pool: budget.NewPool(max(cfg.MaxBytes, 0)), maxOpen: max(cfg.MaxOpenDocuments, 0), onEvict: cfg.OnEvict, onStale: cfg.OnStale,
		live: cfg.Live, spillDir: cfg.SpillDir}
}

// Trusted reports whether cached entries can be served without asking the
// store whether they are current.
func (c *Cache) Trusted() bool { return !c.shared || c.listening.Load() }

// Get returns the entry of a mock, loading it from the store on a miss.
// The caller must Release it once done with it (its answer written): until
// then its document stays, even if the cache drops it.
func (c *Cache) Get(ctx context.Context, id string) (*Entry, error) {
	c.mu.RLock()
	e, gen := c.entries[id], c.gen
	// The cache's own reference keeps the document while the entry is in
	// the map: taking one more under the lock always succeeds.
	if e != nil && !e.body.Acquire() {
		e = nil
	}
	if e == nil {
		// A mock too large to keep, which another read is using: shared
		// while its document is (Acquire fails once the last read is done).
		if u := c.unfit[id].e.Value(); u != nil && u.body.Acquire() {
			e = u
		}
	}
	behind := e != nil && c.behindLocked(e)
	c.mu.RUnlock()
	if e == nil {
		return c.load(ctx, id)
	}
	if behind {
		// Another replica's write was announced: it is seen from now on.
		return c.CatchUp(ctx, e)
	}
	e.set.Touch()
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
// The caller's reference to e goes with what it returns: to e, to the copy
// with new settings (which shares e's document), or back to the cache.
func (c *Cache) revalidate(ctx context.Context, e *Entry, gen uint64) (*Entry, error) {
	sctx, cancel := context.WithTimeout(ctx, storeCheckTimeout)
	m, err := c.store.FindMock(sctx, e.Mock.ID)
	cancel()
	switch {
	case decoy.ErrorCode(err) == decoy.ENOTFOUND:
		e.Release()
		c.Remove(e.Mock.ID)
		return nil, err
	case err != nil:
		if ctx.Err() != nil {
			e.Release()
			return nil, err
		}
		if c.onStale != nil {
			c.onStale(e.Mock.ID, err)
		}
		return e, nil
	case e.sameMock(m) && m.LiveSeq > e.liveSeq && c.live != nil:
		// Writes another replica made, unheard: applied, not loaded again.
		return c.CatchUp(ctx, e)
	case e.sameMock(m):
		e.checked.Store(c.now().UnixNano())
		return e, nil
	case e.sameData(m) && (m.LiveSeq == e.liveSeq || c.live == nil):
		fresh := e.WithMock(m)
		fresh.checked.Store(c.now().UnixNano())
		// The strings of the new settings are counted before they come
		// in, and given back if they do not.
		grow := fresh.mockBytes() - e.mockBytes()
		fits := e.set.GrowBase(max(grow, 0))
		var drop []*Entry
		put := false
		c.mu.Lock()
		if c.gen == gen && c.entries[m.ID] == e {
			if fits {
				drop, put = c.putLocked(fresh, drop), true
			} else {
				drop = c.deleteLocked(m.ID, drop, nil)
			}
		} else if u := c.unfit[m.ID]; c.gen == gen && u.e.Value() == e {
			// Shared, too large to keep: the reads to come share the new
			// settings.
			u.e = weak.Make(fresh)
			c.unfit[m.ID] = u
		}
		c.mu.Unlock()
		settled(e.set, grow, fits, put)
		release(drop)
		return fresh, nil
	}
	e.Release()
	c.Remove(e.Mock.ID)
	return c.load(ctx, e.Mock.ID)
}

// flightKey names a load: loads are shared per generation, so that a read
// that comes after a write (or an announcement, or a flush) never joins a
// load that started before it, and what such a load finds is not cached.
type flightKey struct {
	id  string
	gen uint64
}

// flight is a load under way, which the reads that want the same mock
// meanwhile wait for. Each gets a reference of its own to what it loads,
// taken by the loader while its own reference holds the document.
type flight struct {
	done    chan struct{}
	e       *Entry
	err     error
	waiters int // under Cache.flightMu, until done
}

// errLoadFailed is what the reads waiting on a load get when it panicked.
var errLoadFailed = errors.New("mockcache: load failed")

// load reads a mock from the store, once for all the callers that want it
// at the same time, and caches it. Each caller gets a reference to the
// entry, to Release.
func (c *Cache) load(ctx context.Context, id string) (*Entry, error) {
	c.mu.RLock()
	key := flightKey{id, c.gen}
	c.mu.RUnlock()
	c.flightMu.Lock()
	if f := c.flights[key]; f != nil {
		f.waiters++
		c.flightMu.Unlock()
		<-f.done
		return f.e, f.err
	}
	f := &flight{done: make(chan struct{})}
	c.flights[key] = f
	c.flightMu.Unlock()

	e, err := (*Entry)(nil), errLoadFailed
	defer func() {
		c.flightMu.Lock()
		delete(c.flights, key)
		n := f.waiters
		c.flightMu.Unlock()
		if err == nil {
			for range n {
				e.body.Acquire() // the loader's reference holds it: never fails
			}
		}
		f.e, f.err = e, err
		close(f.done)
	}()
	e, err = c.fetch(ctx, id, key.gen)
	return e, err
}

// fetch reads a mock from the store and caches it, unless the cache
// changed since generation gen. The entry comes with a reference for the
// caller.
func (c *Cache) fetch(ctx context.Context, id string, gen uint64) (*Entry, error) {
	// The load serves every caller waiting on it, so one caller going away
	// must not cancel it.
	lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), storeLoadTimeout)
	defer cancel()
	e, err := c.read(lctx, id)
	if err != nil {
		return nil, err
	}
	e.checked.Store(c.now().UnixNano())
	fits := c.admit(e)
	var drop []*Entry
	c.mu.Lock()
	switch {
	case c.gen != gen || c.unfit[id].seq > e.liveSeq:
		// A change since the load began, or a write made here after it
		// read the store: this read gets what it found, the next loads.
		e.set.Close()
	case fits:
		drop = c.putLocked(e, drop)
	default:
		c.noteUnfitLocked(id, e, e.liveSeq)
	}
	c.mu.Unlock()
	release(drop)
	return e, nil
}

// unfitEntry is what Cache.unfit holds of a mock.
type unfitEntry struct {
	// e is the entry of a mock too large to keep, which reads share while
	// one of them uses it (weak: it goes with its last read); or none.
	e weak.Pointer[Entry]
	// seq is the newest number of the mock's live data written here (or
	// of e): a load that found older data is neither shared nor cached.
	seq int64
}

// maxUnfit bounds the mocks that c.unfit names.
const maxUnfit = 1024

// noteUnfitLocked notes that mock id's live data reached seq here, and
// that e (when not nil), the entry of it at seq, may be shared by the
// reads that come while it is used (see Cache.unfit).
func (c *Cache) noteUnfitLocked(id string, e *Entry, seq int64) {
	u, ok := c.unfit[id]
	if ok && u.seq > seq {
		return
	}
	if !ok && len(c.unfit) >= maxUnfit {
		// Forgotten, the numbers written could let a load that read the
		// store before a write be kept: a new generation keeps none of
		// the loads under way.
		clear(c.unfit)
		c.gen++
	}
	if c.unfit == nil {
		c.unfit = make(map[string]unfitEntry)
	}
	u = unfitEntry{seq: seq}
	if e != nil {
		u.e = weak.Make(e)
	}
	c.unfit[id] = u
}

// read reads a mock from the store: its live data when the cache keeps
// live data, else its stored data. The entry comes with a reference for the
// caller.
func (c *Cache) read(ctx context.Context, id string) (*Entry, error) {
	if c.live != nil {
		return c.fetchLive(ctx, id)
	}
	m, data, err := c.store.FindMockData(ctx, id)
	if err != nil {
		return nil, err
	}
	body, err := DocOf(data)
	if err != nil {
		return nil, err
	}
	e, err := NewEntry(m, body)
	if err != nil {
		// Stored under a JSON type but not JSON (written by hand?): serve
		// it unchanged rather than not at all.
		e = &Entry{Mock: m, body: body, data: body.Bytes(), ContentType: []string{m.ContentType}, liveSeq: m.LiveSeq,
			storedETag: m.ETag, storedSize: body.Size()}
		e.unbounded()
	}
	return e, nil
}

// admit counts e in the cache's bound, making room for it, and reports
// whether it fits. One that does not is served without being cached, and
// keeps nothing built over it.
func (c *Cache) admit(e *Entry) bool {
	var set *budget.Set
	id := e.Mock.ID
	set, fits := c.pool.NewSet(e.base(), func() { c.evicted(id, set) })
	e.attach(set)
	e.spillDir = c.spillDir
	return fits
}

// evicted drops the entry of mock id that holds set, which the bound
// dropped to make room.
func (c *Cache) evicted(id string, set *budget.Set) {
	var drop []*Entry
	c.mu.Lock()
	if e := c.entries[id]; e != nil && e.set == set {
		drop = c.deleteLocked(id, drop, nil)
	}
	c.mu.Unlock()
	release(drop)
	if len(drop) > 0 && c.onEvict != nil {
		c.onEvict(len(drop))
	}
}

// Peek returns the cached entry of a mock, or nil, without a reference:
// its data must not be read (the cache may drop it, and release its
// document, at any time).
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
// instead, for the next read to load what the store holds. The cache takes
// a reference of its own: the caller still releases the one it holds.
func (c *Cache) PutAt(e *Entry, gen uint64) {
	fits := c.admit(e)
	var drop []*Entry
	c.mu.Lock()
	if c.gen != gen || !fits {
		// Too large for the bound: served from the store at each read.
		drop = c.deleteLocked(e.Mock.ID, drop, nil)
		e.set.Close()
	} else {
		e.checked.Store(c.now().UnixNano())
		drop = c.putLocked(e, drop)
	}
	c.gen++
	c.mu.Unlock()
	release(drop)
}

// PutSettingsAt puts the new settings of mock m, whose data did not change,
// keeping its cached data, unless the cache changed since Generation gen
// (see PutAt); when it is not cached, the next read loads it.
func (c *Cache) PutSettingsAt(m *decoy.Mock, gen uint64) {
	var drop []*Entry
	c.mu.Lock()
	e := c.entries[m.ID]
	var fresh *Entry
	if e != nil && c.gen == gen {
		fresh = e.WithMock(m)
	}
	c.mu.Unlock()
	// The strings of the new settings are counted before they come in,
	// and given back if they do not.
	var grow int64
	if fresh != nil {
		grow = fresh.mockBytes() - e.mockBytes()
	}
	fits := fresh != nil && e.set.GrowBase(max(grow, 0))
	put := false
	c.mu.Lock()
	if fits && c.gen == gen && c.entries[m.ID] == e {
		fresh.checked.Store(c.now().UnixNano())
		drop, put = c.putLocked(fresh, drop), true
	} else {
		drop = c.deleteLocked(m.ID, drop, nil)
	}
	c.gen++
	c.mu.Unlock()
	if fresh != nil {
		settled(e.set, grow, fits, put)
	}
	release(drop)
}

// settled ends the count of new settings whose strings hold grow bytes more
// than the old ones (fewer when negative) in set: what was counted before
// they came in (fits) is given back if they did not (put), and what they
// hold less is given back once they did.
func settled(set *budget.Set, grow int64, fits, put bool) {
	switch {
	case put && grow < 0:
		set.GrowBase(grow)
	case fits && !put && grow > 0:
		set.GrowBase(-grow)
	}
}

// Flush forgets every mock, for when changes may have been missed.
func (c *Cache) Flush() {
	c.mu.Lock()
	old := c.entries
	c.entries = make(map[string]*Entry)
	c.mapped = make(map[string]*Entry)
	c.unfit = nil
	c.wants = nil
	c.gen++
	c.mu.Unlock()
	for _, e := range old {
		e.set.Close()
		e.body.Release()
	}
}

// Remove forgets a mock after a write, or after a write that failed and may
// or may not have changed the store.
func (c *Cache) Remove(id string) {
	c.mu.Lock()
	drop := c.deleteLocked(id, nil, nil)
	c.gen++
	c.mu.Unlock()
	release(drop)
}

// putLocked puts e under its mock's id with a reference to its document
// for the cache, and appends to drop what the caller must release once it
// unlocked c.mu: the entry e replaced, and those the bound on open
// documents closed. When e's document was released already (e was made
// from an entry the cache dropped meanwhile), or what it holds is no
// longer counted (dropped for room meanwhile), the mock is forgotten
// instead.
func (c *Cache) putLocked(e *Entry, drop []*Entry) []*Entry {
	id := e.Mock.ID
	drop = c.deleteLocked(id, drop, e.set)
	if !e.set.Open() {
		// Dropped for room since it was admitted (its eviction waits
		// for c.mu, and will find nothing): not cached.
		return drop
	}
	if !e.body.Acquire() {
		e.set.Close()
		return drop
	}
	c.entries[id] = e
	if w, ok := c.wants[id]; ok && w <= e.liveSeq {
		delete(c.wants, id)
	}
	if e.body.HoldsMapping() {
		// Mapped, or made by a write over a mapped document it still
		// reads: either keeps a mapping open.
		c.mapped[id] = e
		if c.maxOpen > 0 && len(c.mapped) > c.maxOpen {
			drop = c.closeLocked(e, drop)
		}
	}
	return drop
}

// deleteLocked takes mock id out of the cache, gives what its entry held
// back to the bound (unless the entry replacing it shares it: keep), and
// appends the entry to drop for the caller to release once it unlocked
// c.mu.
func (c *Cache) deleteLocked(id string, drop []*Entry, keep *budget.Set) []*Entry {
	delete(c.unfit, id)
	if e := c.entries[id]; e != nil {
		delete(c.entries, id)
		delete(c.mapped, id)
		if e.set != keep {
			e.set.Close()
		}
		drop = append(drop, e)
	}
	return drop
}

// closeLocked drops the entries with mapped documents least recently read
// (see budget.Set.Touch) until they are within 7/8 of maxOpen, so
// that the next few come in without sorting them again. keep, the entry
// coming in, stays. Readers of the dropped entries finish with their
// documents, which go when the last of them is done.
func (c *Cache) closeLocked(keep *Entry, drop []*Entry) []*Entry {
	goal := c.maxOpen - c.maxOpen/8
	list := make([]*Entry, 0, len(c.mapped))
	for _, e := range c.mapped {
		if e != keep {
			list = append(list, e)
		}
	}
	slices.SortFunc(list, func(a, b *Entry) int { return cmp.Compare(a.set.Stamp(), b.set.Stamp()) })
	n := len(c.mapped) - goal
	for _, e := range list[:n] {
		drop = c.deleteLocked(e.Mock.ID, drop, nil)
	}
	if c.onEvict != nil {
		c.onEvict(n)
	}
	return drop
}

// release gives back the cache's references to the entries it dropped.
func release(dropped []*Entry) {
	for _, e := range dropped {
		e.body.Release()
	}
}

// Len returns how many mocks the cache holds, and how many of their
// documents are mapped.
func (c *Cache) Len() (entries, mapped int) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.entries), len(c.mapped)
}

// Footprint returns what the cache counts against its bound: the entries'
// documents and what is built over them, and what builds under way
// reserved. With a bound, it never passes it.
func (c *Cache) Footprint() int64 { return c.pool.Used() }

// HeapBytes is about how much of Footprint is memory that the Go runtime
// manages: all of it but the documents mapped from files and the gzipped
// copies kept in files (see Config.SpillDir), which the process's mappings
// and the file system's cache hold. Both are counted process-wide, so
// with one cache it is exact.
func (c *Cache) HeapBytes() int64 {
	return max(c.Footprint()-docfile.MappedBytes()-spilled.Load(), 0)
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

// SetMaxBytes changes the bound of what the cache holds (0: none), and
// drops the entries and structures least recently read until it holds.
func (c *Cache) SetMaxBytes(n int64) { c.pool.SetMax(n) }
