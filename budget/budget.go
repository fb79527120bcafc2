// Package budget bounds the memory that Decoy keeps for reads: documents
// and what is built over them (columns, sort orders, indexes, record
// digests, gzipped copies, kept answers). Everything is counted before it
// is allocated, against one bound shared by every document (a Pool); when
// there is no room, what was used least recently leaves first, a whole
// document or a single structure of one, each by its own recency. What
// cannot fit even then is not kept: the caller does without (a slower
// way that needs no structure over the whole document), so that the bound
// holds at all times.
//
// Each document's structures live in a Set, its registry: named by a Key,
// built once however many readers ask at the same time, and dropped by
// the pool when it needs room. A structure a read is using when it is
// dropped stays valid for that read (nothing is freed under it); its
// memory goes once the read is done with it.
//
// The hot path (a structure already kept) takes no lock: a lookup in an
// immutable map and a recency stamp that is written only when it changed.
package budget

import (
	"cmp"
	"slices"
	"sync"
	"sync/atomic"
)

// Pool is the bound on the memory of every set made from it, and what
// makes room when a reservation does not fit. It is safe for concurrent
// use.
type Pool struct {
	max  atomic.Int64 // 0: no bound (everything is still counted)
	used atomic.Int64
	// clock orders uses: it advances each time a set or a structure
	// comes in, and a use stamps what it used with it, so that what was
	// used before the last one came in is older than what was used after.
	clock atomic.Int64

	// mu makes room for one reservation at a time.
	mu sync.Mutex

	// setsMu guards sets; it is taken last, never around a call out.
	setsMu sync.Mutex
	sets   map[*Set]struct{}

	// turns holds a token per work done without keeping its structures
	// (see Set.Turn).
	turns chan struct{}

	// evictedSets and evictedItems count what left for room.
	evictedSets, evictedItems atomic.Int64
}

// Turns is how many reads may at once work without the structures they
// could not keep: each such read may hold transient memory in proportion
// to its document (see Set.Turn).
const Turns = 2

// NewPool returns a pool of at most max bytes (0: no bound).
func NewPool(max int64) *Pool {
	p := &Pool{sets: make(map[*Set]struct{}), turns: make(chan struct{}, Turns)}
	p.max.Store(max)
	return p
}

// Max returns the bound (0: none).
func (p *Pool) Max() int64 { return p.max.Load() }

// Used returns the bytes counted now: what every set keeps, and what
// builds under way reserved.
func (p *Pool) Used() int64 { return p.used.Load() }

// Evicted returns how many sets (whole documents) and how many single
// structures left to make room, since the pool was made.
func (p *Pool) Evicted() (sets, items int64) { return p.evictedSets.Load(), p.evictedItems.Load() }

// SetMax changes the bound (0: none) and makes the room it asks for now.
func (p *Pool) SetMax(n int64) {
	p.max.Store(n)
	if n <= 0 {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for p.used.Load() > n {
		if !p.makeRoomLocked(0, n, nil) {
			return
		}
	}
}

// NewSet returns a set whose own bytes (the document it is built over) are
// base, counted in the pool, and reports whether they fit: the pool makes
// room for them by dropping what was used least recently. A set that did
// not fit keeps nothing: its document is served once and not kept. onEvict
// is called when the pool drops the set for room, with no lock of the set
// held but while the pool makes room: it must not reserve.
func (p *Pool) NewSet(base int64, onEvict func()) (*Set, bool) {
	s := &Set{pool: p, clock: &p.clock, onEvict: onEvict}
	if !p.reserve(base, nil) {
		return s, false
	}
	s.mu.Lock()
	s.open, s.base, s.bytes = true, base, base
	s.mu.Unlock()
	s.used.Store(p.clock.Add(1))
	p.setsMu.Lock()
	p.sets[s] = struct{}{}
	p.setsMu.Unlock()
	return s, true
}

// reserve counts n more bytes, making room if need be by dropping what was
// used least recently, except the set protect as a whole (the document the
// reservation is for) and the structures builds are using; false when n
// cannot fit.
func (p *Pool) reserve(n int64, protect *Set) bool {
	if n <= 0 {
		return n == 0 // what shrinks is given back with release
	}
	max := p.max.Load()
	if max <= 0 {
		p.used.Add(n)
		return true
	}
	if n > max {
		return false
	}
	if !p.take(n, max) {
		p.mu.Lock()
		defer p.mu.Unlock()
		for !p.take(n, max) {
			if !p.makeRoomLocked(n, max, protect) {
				return false
			}
		}
	}
	return true
}

// take counts n more bytes if they fit under max.
func (p *Pool) take(n, max int64) bool {
	for {
		u := p.used.Load()
		if u+n > max {
			return false
		}
		if p.used.CompareAndSwap(u, u+n) {
			return true
		}
	}
}

// release gives back n bytes.
func (p *Pool) release(n int64) { p.used.Add(-n) }

// candidate is something the pool may drop for room: a whole set, or one
// structure of a set.
type candidate struct {
	set  *Set
	item *Item // nil: the whole set
	used int64
	size int64
}

// roomSlack is the share of the bound freed beyond what a reservation
// needs, so that the next few fit without sorting everything again.
const roomSlack = 16

// makeRoomLocked drops what was used least recently until n more bytes fit
// under max, and a little more (up to 1/roomSlack of max) of the documents
// not used just now. It drops nothing and returns false when what may be
// dropped is not enough.
func (p *Pool) makeRoomLocked(n, max int64, protect *Set) bool {
	need := p.used.Load() + n - max
	if need <= 0 {
		return true
	}
	var cands []candidate
	var droppable int64
	p.setsMu.Lock()
	sets := make([]*Set, 0, len(p.sets))
	for s := range p.sets {
		sets = append(sets, s)
	}
	p.setsMu.Unlock()
	for _, s := range sets {
		cands, droppable = s.candidates(cands, droppable, s != protect)
	}
	if droppable < need {
		return false
	}
	// Oldest first; at the same age, a structure before a whole document.
	slices.SortFunc(cands, func(a, b candidate) int {
		if c := cmp.Compare(a.used, b.used); c != 0 {
			return c
		}
		return cmp.Compare(boolInt(a.item == nil), boolInt(b.item == nil))
	})
	// Past what is needed, only documents that fit in the rest of the
	// goal go, and not those used since the clock last moved (likely by
	// reads under way): many small ones coming in then find room without
	// a count each.
	goal, now := need+max/roomSlack, p.clock.Load()
	var freed int64
	for _, c := range cands {
		if freed >= goal {
			break
		}
		if freed >= need && (c.item != nil || c.used >= now || freed+c.size > goal) {
			continue
		}
		if c.item != nil {
			freed += c.set.dropItem(c.item)
		} else {
			freed += c.set.evict()
		}
	}
	return freed > 0
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Key names a structure of a set: its kind (a column, a sort order, a
// kept answer) and what it is of (a path, a query string).
type Key struct{ Kind, Name string }

// Set is the registry of what is kept for one document: its own bytes
// (base) and named structures (Items), each with its recency. It is safe
// for concurrent use.
type Set struct {
	pool *Pool // nil: no bound (see Unbounded)
	// clock is the pool's, or the set's own without one.
	clock *atomic.Int64
	// used is the stamp of the set's last use (see Touch).
	used atomic.Int64
	// items is the published registry, replaced whole under mu (never
	// changed), so that lookups take no lock.
	items atomic.Pointer[map[Key]*Item]

	mu    sync.Mutex
	base  int64
	bytes int64 // base and the sizes of the items kept
	// open is set while the set is counted in its pool: a set dropped,
	// closed or never admitted keeps nothing more.
	open    bool
	onEvict func()
}

// Unbounded returns a set with no pool: it keeps everything built in it,
// as long as it lives (a document used for one answer, or in tests).
func Unbounded() *Set { return &Set{open: true, clock: new(atomic.Int64)} }

// Item is a structure kept in a set.
type Item struct {
	key  Key
	used atomic.Int64 // stamp of its last use
	// ready is set once built; done is closed then.
	ready atomic.Bool
	done  chan struct{}
	v     any // nil: it could not be built within the bound

	// Under the set's mu:
	size int64 // counted in the set while kept
	kept bool
	pins int // builds using it: not dropped meanwhile
}

// itemOverhead is about what an item costs besides its structure: the
// item, its slot in the registry's map (and its share of each copy of
// the map made when one changes), its key's strings.
const itemOverhead = 160

// Overhead returns what an item of key k costs besides its structure.
func Overhead(k Key) int64 { return itemOverhead + int64(len(k.Kind)+len(k.Name)) }

// Touch stamps the set as used now (a read of its document).
func (s *Set) Touch() {
	if now := s.clock.Load(); s.used.Load() != now {
		s.used.Store(now)
	}
}

// Stamp returns the stamp of the set's last use.
func (s *Set) Stamp() int64 { return s.used.Load() }

// Bytes returns what the set keeps: its base and its items.
func (s *Set) Bytes() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.bytes
}

// Open reports whether the set is counted in its pool (and so keeps what is
// built in it).
func (s *Set) Open() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.open
}

// Close gives the set's bytes back to its pool: its owner dropped it. Its
// items stay usable by whoever holds them (a Dropper is told), and nothing
// more is kept.
func (s *Set) Close() { s.close() }

// close closes the set and returns the bytes it gave back.
func (s *Set) close() int64 {
	s.mu.Lock()
	if !s.open || s.pool == nil {
		s.mu.Unlock()
		return 0
	}
	s.open = false
	freed := s.bytes
	s.bytes = 0
	if m := s.items.Load(); m != nil {
		for _, it := range *m {
			if it.kept {
				it.kept = false
				drop(it.v)
			}
		}
	}
	s.mu.Unlock()
	p := s.pool
	p.release(freed)
	p.setsMu.Lock()
	delete(p.sets, s)
	p.setsMu.Unlock()
	return freed
}

// evict closes the set for room, and tells its owner.
func (s *Set) evict() int64 {
	freed := s.close()
	if freed > 0 {
		s.pool.evictedSets.Add(1)
		if s.onEvict != nil {
			s.onEvict()
		}
	}
	return freed
}

// GrowBase counts n more bytes of the set's own (n < 0: fewer), and
// reports whether they fit; a closed set does not grow.
func (s *Set) GrowBase(n int64) bool {
	if n < 0 {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.open {
			s.base += n
			s.bytes += n
			s.releaseLocked(-n)
		}
		return true
	}
	if !s.reserve(n) {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.open {
		s.releaseLocked(n)
		return false
	}
	s.base += n
	s.bytes += n
	return true
}

// reserve counts n bytes for the set in its pool, protecting the set.
func (s *Set) reserve(n int64) bool {
	if s.pool == nil {
		return true
	}
	return s.pool.reserve(n, s)
}

func (s *Set) releaseLocked(n int64) {
	if s.pool != nil {
		s.pool.release(n)
	}
}

// candidates appends what of the set the pool may drop: its items not in
// use by a build, and the whole set when whole is set.
func (s *Set) candidates(dst []candidate, droppable int64, whole bool) ([]candidate, int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.open {
		return dst, droppable
	}
	if whole {
		dst = append(dst, candidate{set: s, used: s.used.Load(), size: s.bytes})
		droppable += s.bytes
		// Its items go with it; listing them too lets one leave alone
		// when it is older than the set.
	}
	if m := s.items.Load(); m != nil {
		for _, it := range *m {
			if it.kept && it.pins == 0 {
				dst = append(dst, candidate{set: s, item: it, used: it.used.Load(), size: it.size})
				if !whole {
					droppable += it.size
				}
			}
		}
	}
	return dst, droppable
}

// dropItem drops a kept item for room, and returns the bytes it freed.
func (s *Set) dropItem(it *Item) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.open || !it.kept || it.pins > 0 {
		return 0
	}
	s.unkeepLocked(it)
	s.pool.evictedItems.Add(1)
	return it.size
}

// unkeepLocked takes a kept item out of the registry and gives its bytes
// back.
func (s *Set) unkeepLocked(it *Item) {
	it.kept = false
	s.bytes -= it.size
	s.releaseLocked(it.size)
	s.publishLocked(it.key, nil, it)
	drop(it.v)
}

// Dropper is a structure that holds more than memory (a file, counted in
// its size): told when its set stops keeping it, so that it lets go of
// that at once, rather than when nothing refers to it any more.
// Whoever still uses it keeps it usable as long as it says (see
// mockcache's fileBody).
type Dropper interface{ Drop() }

// drop tells v, a structure the set no longer keeps, if it is a Dropper.
func drop(v any) {
	if d, ok := v.(Dropper); ok {
		d.Drop()
	}
}

// publishLocked replaces the registry with a copy where key k holds it
// (nil: nothing), if k held old (nil: anything).
func (s *Set) publishLocked(k Key, it, old *Item) {
	cur := s.items.Load()
	if old != nil && (cur == nil || (*cur)[k] != old) {
		return
	}
	n := 0
	if cur != nil {
		n = len(*cur)
	}
	m := make(map[Key]*Item, n+1)
	if cur != nil {
		for key, v := range *cur {
			m[key] = v
		}
	}
	if it == nil {
		delete(m, k)
	} else {
		m[k] = it
	}
	s.items.Store(&m)
}

// touch stamps an item, and its set, as used now.
func (s *Set) touch(it *Item) {
	now := s.clock.Load()
	if it.used.Load() != now {
		it.used.Store(now)
	}
	if s.used.Load() != now {
		s.used.Store(now)
	}
}

// Get returns the structure kept under k, or nil.
func (s *Set) Get(k Key) any {
	m := s.items.Load()
	if m == nil {
		return nil
	}
	it := (*m)[k]
	if it == nil || !it.ready.Load() {
		return nil
	}
	s.touch(it)
	return it.v
}

// Load returns the structure kept under k, building it with build on first
// use; concurrent callers of one key wait for one build. It returns nil
// when the structure could not be kept (build returned nil: it did not
// fit), and the caller does without: a set that is closed keeps nothing
// new.
//
// build must count what it allocates, before allocating it, with
// Build.Reserve, give back what it drops with Build.Free, and return nil
// as soon as a reservation fails; what it still holds reserved when it
// returns is the structure's size.
func (s *Set) Load(k Key, build func(*Build) any) any {
	if m := s.items.Load(); m != nil {
		if it := (*m)[k]; it != nil {
			return s.wait(it)
		}
	}
	return s.load(k, build, nil)
}

// wait returns the structure of it once built.
func (s *Set) wait(it *Item) any {
	if !it.ready.Load() {
		<-it.done
	}
	s.touch(it)
	return it.v
}

// load is Load's slow path: under the lock, find k or start its build.
// When pin is set and the structure is kept, it is pinned until pin
// settles.
func (s *Set) load(k Key, build func(*Build) any, pin *Build) any {
	s.mu.Lock()
	if m := s.items.Load(); m != nil {
		if it := (*m)[k]; it != nil {
			if pin != nil && it.kept && it.ready.Load() {
				it.pins++
				pin.pinned = append(pin.pinned, it)
				s.mu.Unlock()
				s.touch(it)
				return it.v
			}
			s.mu.Unlock()
			v := s.wait(it)
			if pin != nil && v != nil {
				s.pinIfKept(it, pin)
			}
			return v
		}
	}
	if !s.open {
		s.mu.Unlock()
		return nil
	}
	it := &Item{key: k, done: make(chan struct{})}
	s.publishLocked(k, it, nil)
	s.mu.Unlock()

	b := &Build{set: s, pending: Overhead(k)}
	var v any
	settled := false
	defer func() {
		if !settled { // build panicked: nothing is kept, waiters get nil
			s.settle(it, b, nil, nil)
		}
	}()
	v = build(b)
	if v != nil && b.pending > 0 && !b.Reserve(0) {
		drop(v)
		v = nil
	}
	s.settle(it, b, v, pin)
	settled = true
	return v
}

// pinIfKept pins it for the build pin if it is still kept.
func (s *Set) pinIfKept(it *Item, pin *Build) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if it.kept {
		it.pins++
		pin.pinned = append(pin.pinned, it)
	}
}

// settle ends the build b of it, which gave v: kept if the set is still
// open and v was built, else out of the registry with its bytes given
// back. The waiters get v either way. When pin is set and it is kept, it
// is pinned for pin.
func (s *Set) settle(it *Item, b *Build, v any, pin *Build) {
	s.mu.Lock()
	cur := s.items.Load()
	if v != nil && s.open && cur != nil && (*cur)[it.key] == it {
		it.kept, it.size = true, max(b.net, 0)
		s.bytes += it.size
		if pin != nil {
			it.pins++
			pin.pinned = append(pin.pinned, it)
		}
	} else {
		s.releaseLocked(b.net)
		s.publishLocked(it.key, nil, it)
		drop(v) // built, not kept: its waiters do without what it holds
	}
	// Set under the lock, so that a drop of it (which reads it under the
	// lock) cannot miss it; read without the lock once ready.
	it.v = v
	for _, in := range b.pinned {
		in.pins--
	}
	b.pinned = nil
	s.mu.Unlock()
	// The clock moves on: what it built is more recent than anything used
	// before.
	now := s.clock.Add(1)
	it.used.Store(now)
	s.used.Store(max(s.used.Load(), now))
	it.ready.Store(true)
	close(it.done)
}

// Grow counts n more bytes for the item kept under k holding v (its
// structure grew, or is about to; n < 0: it shrank), and reports whether
// they fit; false when no item kept under k holds v. v is what the item's
// build returned (a pointer): an item dropped and built again under the
// same key is another item, and what grows the old one is not counted on
// the new one.
func (s *Set) Grow(k Key, v any, n int64) bool {
	if n < 0 {
		// Given back under the lock, never counted back: another
		// reservation may take what this gives.
		s.mu.Lock()
		defer s.mu.Unlock()
		if m := s.items.Load(); s.open && m != nil {
			if it := (*m)[k]; it != nil && it.kept && it.v == v {
				it.size += n
				s.bytes += n
				s.releaseLocked(-n)
				return true
			}
		}
		return false
	}
	if !s.reserve(n) {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if m := s.items.Load(); s.open && m != nil {
		if it := (*m)[k]; it != nil && it.kept && it.v == v {
			it.size += n
			s.bytes += n
			it.used.Store(s.clock.Add(1)) // growing is a use
			return true
		}
	}
	s.releaseLocked(n)
	return false
}

// Trim drops the least recently used items whose keys match, until fits,
// told how many of them are left and their bytes, holds.
func (s *Set) Trim(match func(Key) bool, fits func(count int, bytes int64) bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.items.Load()
	if m == nil {
		return
	}
	var list []*Item
	var bytes int64
	for k, it := range *m {
		if it.kept && match(k) {
			list = append(list, it)
			bytes += it.size
		}
	}
	if fits(len(list), bytes) {
		return
	}
	slices.SortFunc(list, func(a, b *Item) int { return cmp.Compare(a.used.Load(), b.used.Load()) })
	count := len(list)
	for _, it := range list {
		if fits(count, bytes) {
			return
		}
		if it.pins > 0 {
			continue
		}
		count--
		bytes -= it.size
		s.unkeepLocked(it)
	}
}

// Turn waits for one of the pool's few turns (Turns) of work done without
// the structures it could not keep, and returns the function that gives
// it back: such work holds transient memory in proportion to its document,
// which the pool bounds by letting few run at once. A set without a pool
// needs no turn.
func (s *Set) Turn() (done func()) {
	if s.pool == nil {
		return func() {}
	}
	s.pool.turns <- struct{}{}
	return func() { <-s.pool.turns }
}

// Borrow counts n bytes of transient memory (what a read holds while it
// works, without keeping it) if they fit, making room for them as a
// reservation does; the caller gives them back with Repay. false: they do
// not fit, and are not counted.
func (s *Set) Borrow(n int64) bool {
	if s.pool == nil {
		return false
	}
	return s.pool.reserve(n, s)
}

// Repay gives back what Borrow counted.
func (s *Set) Repay(n int64) {
	if s.pool != nil {
		s.pool.release(n)
	}
}

// Build is one structure being built: what it reserved so far, and the
// structures it builds from, which are not dropped until it is done.
type Build struct {
	set    *Set
	net    int64
	pinned []*Item
	// pending is the item's overhead, counted with the first reservation
	// (or when the build ends), so that a build that cannot fit at all
	// drops nothing for it.
	pending int64
}

// Reserve counts n more bytes for the structure, before they are
// allocated, and reports whether they fit: the pool makes room by dropping
// what was used least recently (not the structures this build uses, nor
// the set itself). false: the build must give up and return nil.
func (b *Build) Reserve(n int64) bool {
	n += b.pending
	if !b.set.reserve(n) {
		return false
	}
	b.pending = 0
	b.net += n
	return true
}

// Free gives back n bytes the build reserved and no longer holds (a
// transient buffer).
func (b *Build) Free(n int64) {
	b.net -= n
	if b.set.pool != nil {
		b.set.pool.release(n)
	}
}

// Fits reports whether n bytes could fit for the build at all: within
// the bound besides the set's own bytes. A build that needs more gives up
// before it starts working.
func (b *Build) Fits(n int64) bool {
	p := b.set.pool
	if p == nil {
		return true
	}
	max := p.max.Load()
	b.set.mu.Lock()
	base := b.set.base
	b.set.mu.Unlock()
	return max <= 0 || n+b.pending <= max-base
}

// Use returns the structure under k of the build's set, loading it with
// build as Load does, and keeps it from being dropped until this build is
// done. nil: it could not be kept.
func (b *Build) Use(k Key, build func(*Build) any) any {
	return b.set.load(k, build, b)
}
