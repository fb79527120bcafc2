package server

import (
	"bytes"
	"cmp"
	"context"
	"encoding/hex"
	"errors"
	"mime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/cespare/xxhash/v2"
	"github.com/decoy-mock/decoy"
	"github.com/decoy-mock/decoy/docfile"
	"github.com/decoy-mock/decoy/jsondoc"
	"github.com/klauspost/compress/gzip"
	"golang.org/x/sync/singleflight"
)

// entry is a mock ready to serve: its settings and its data, parsed once.
// Its data is mapped from a file (see docfile): what uses data, or slices
// of it, keeps the entry reachable until done.
type entry struct {
	mock *decoy.Mock
	body *docfile.Doc
	data []byte // body.Bytes()
	// contentType is mock.ContentType as a header value, made once.
	contentType []string
	// doc is the parsed data when the content type is JSON, else nil.
	doc *jsondoc.Document
	// built keeps large answers of queries over doc, when doc is an array.
	built *builtAnswers

	gzipOnce  sync.Once
	gzipped   []byte
	gzipBytes atomic.Int64 // len(gzipped), once made

	// checked is when the entry was last known to match the store (Unix
	// nanoseconds), for replicas that share the store.
	checked atomic.Int64
	// used is the cache's epoch when the entry was last read (see
	// cache.enforce).
	used atomic.Int64
	// onGrow is told when the entry grows (its gzipped copy, the answers
	// built keeps).
	onGrow atomic.Pointer[func(int64)]
}

// footprint is about how much memory the entry holds: its document, what
// was built over it, and its gzipped copy.
func (e *entry) footprint() int64 {
	n := int64(len(e.data)) + e.gzipBytes.Load()
	if e.doc != nil {
		n += e.doc.MemoryBytes()
	}
	if e.built != nil {
		n += e.built.footprint()
	}
	return n
}

// newEntry parses data when ct is a JSON type. A JSON type with data that
// does not parse is an EINVALID error naming the line and column.
func newEntry(m *decoy.Mock, body *docfile.Doc) (*entry, error) {
	data := body.Bytes()
	e := &entry{mock: m, body: body, data: data, contentType: []string{m.ContentType}}
	if isJSON(m.ContentType) {
		if !utf8.Valid(data) {
			// JSON is UTF-8 (RFC 8259); other bytes would reach clients
			// that cannot decode them.
			return nil, decoy.Errorf(decoy.EINVALID, "Invalid JSON: not valid UTF-8")
		}
		doc, err := jsondoc.Parse(data)
		var se *jsondoc.SyntaxError
		switch {
		case errors.As(err, &se) && se.TooDeep:
			return nil, decoy.Errorf(decoy.EINVALID, "JSON nested too deeply: Decoy accepts at most %d levels of arrays and objects (line %d, column %d)", jsondoc.MaxDepth, se.Line, se.Column)
		case err != nil:
			return nil, decoy.Errorf(decoy.EINVALID, "Invalid JSON: %v", err)
		}
		e.doc = doc
		if doc.IsArray() {
			e.built = newBuiltAnswers(len(data))
		}
	}
	return e, nil
}

// withMock returns a copy of e with new settings and the same data.
func (e *entry) withMock(m *decoy.Mock) *entry {
	ne := &entry{mock: m, body: e.body, data: e.data, doc: e.doc, built: e.built, contentType: []string{m.ContentType}}
	ne.used.Store(e.used.Load())
	ne.onGrow.Store(e.onGrow.Load())
	return ne
}

// sameMock reports whether m is the stored version of the mock e holds: the
// same version of the same mock, not of one deleted and created again under
// its id (versions start again at 1).
func (e *entry) sameMock(m *decoy.Mock) bool {
	return m.Version == e.mock.Version && m.CreatedAt.Equal(e.mock.CreatedAt)
}

// sameData reports whether m describes the data e holds.
func (e *entry) sameData(m *decoy.Mock) bool {
	return m.ETag == e.mock.ETag && m.ContentType == e.mock.ContentType && m.Size == int64(len(e.data)) &&
		m.CreatedAt.Equal(e.mock.CreatedAt)
}

// isArray reports whether query parameters apply to the data.
func (e *entry) isArray() bool { return e.doc != nil && e.doc.IsArray() }

// gzip returns the stored data gzipped, computing it once.
func (e *entry) gzip() []byte {
	e.gzipOnce.Do(func() {
		var b bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&b, gzip.DefaultCompression)
		zw.Write(e.data)
		zw.Close()
		e.gzipped = b.Bytes()
		e.gzipBytes.Store(int64(len(e.gzipped)))
		e.grew(int64(len(e.gzipped)))
	})
	return e.gzipped
}

// grew tells the cache, if it counts, that the entry grew by n bytes.
func (e *entry) grew(n int64) {
	if f := e.onGrow.Load(); f != nil {
		(*f)(n)
	}
}

// isJSON reports whether a media type is JSON: application/json or a +json
// type.
func isJSON(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return false
	}
	return mt == "application/json" || strings.HasSuffix(mt, "+json")
}

// etagOf returns the strong entity tag of a body.
func etagOf(body []byte) string {
	d := xxhash.New()
	d.Write(body)
	return etagFromDigest(d)
}

func etagFromDigest(d *xxhash.Digest) string {
	var sum [8]byte
	return `"` + hex.EncodeToString(d.Sum(sum[:0])) + `"`
}

// cache keeps every mock that was read or written, parsed. Reads take an
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
type cache struct {
	store   decoy.Store
	mu      sync.RWMutex
	entries map[string]*entry
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
	// get within the bound: until approx changes, counting again is
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

func newCache(store decoy.Store, shared bool, now func() time.Time) *cache {
	return &cache{store: store, entries: make(map[string]*entry), shared: shared, now: now}
}

// trusted reports whether cached entries can be served without asking the
// store whether they are current.
func (c *cache) trusted() bool { return !c.shared || c.listening.Load() }

// get returns the entry of a mock, loading it from the store on a miss.
func (c *cache) get(ctx context.Context, id string) (*entry, error) {
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
func (c *cache) revalidate(ctx context.Context, e *entry, gen uint64) (*entry, error) {
	sctx, cancel := context.WithTimeout(ctx, storeCheckTimeout)
	m, err := c.store.FindMock(sctx, e.mock.ID)
	cancel()
	switch {
	case decoy.ErrorCode(err) == decoy.ENOTFOUND:
		c.remove(e.mock.ID)
		return nil, err
	case err != nil:
		if ctx.Err() != nil {
			return nil, err
		}
		if c.onStale != nil {
			c.onStale(e.mock.ID, err)
		}
		return e, nil
	case e.sameMock(m):
		e.checked.Store(c.now().UnixNano())
		return e, nil
	case e.sameData(m):
		fresh := e.withMock(m)
		fresh.checked.Store(c.now().UnixNano())
		c.mu.Lock()
		if c.gen == gen && c.entries[m.ID] == e {
			c.entries[m.ID] = fresh
		}
		c.mu.Unlock()
		return fresh, nil
	}
	c.remove(e.mock.ID)
	return c.load(ctx, e.mock.ID)
}

// load reads a mock from the store, once for all the callers that want it
// at the same time, and caches it.
func (c *cache) load(ctx context.Context, id string) (*entry, error) {
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
		body, err := docOf(data)
		if err != nil {
			return nil, err
		}
		e, err := newEntry(m, body)
		if err != nil {
			// Stored under a JSON type but not JSON (written by hand?):
			// serve it unchanged rather than not at all.
			e = &entry{mock: m, body: body, data: body.Bytes(), contentType: []string{m.ContentType}}
		}
		e.checked.Store(c.now().UnixNano())
		c.track(e)
		c.mu.Lock()
		var old *entry
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
	return v.(*entry), nil
}

// peek returns the cached entry of a mock, or nil.
func (c *cache) peek(id string) *entry {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.entries[id]
}

// generation returns the current generation, to be given to putAt.
func (c *cache) generation() uint64 {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.gen
}

// putAt puts the entry a write produced, unless the cache changed since
// generation gen was taken before the write: then another replica's change,
// heard meanwhile, may be newer than this one, and the entry is dropped
// instead, for the next read to load what the store holds.
func (c *cache) putAt(e *entry, gen uint64) {
	c.track(e)
	defer c.admitted(e)
	c.mu.Lock()
	old := c.entries[e.mock.ID]
	if c.gen != gen {
		delete(c.entries, e.mock.ID)
		defer replaced(e, nil)
	} else {
		e.checked.Store(c.now().UnixNano())
		c.entries[e.mock.ID] = e
	}
	c.gen++
	c.mu.Unlock()
	replaced(old, c.peek(e.mock.ID))
}

// flush forgets every mock, for when changes may have been missed.
func (c *cache) flush() {
	c.mu.Lock()
	old := c.entries
	c.entries = make(map[string]*entry)
	c.gen++
	c.mu.Unlock()
	for _, e := range old {
		replaced(e, nil)
	}
}

// remove forgets a mock after a write, or after a write that failed and may
// or may not have changed the store.
func (c *cache) remove(id string) {
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
func (c *cache) track(e *entry) {
	if c.maxBytes <= 0 {
		return
	}
	e.used.Store(c.epoch.Add(1))
	grew := func(n int64) { c.approx.Add(n) }
	e.onGrow.Store(&grew)
	if e.doc != nil {
		e.doc.OnGrow(grew)
	}
}

// admitted counts an entry come into the cache (or not, if a write
// overtook it: it is then counted until the next count), and drops others
// if the bound is passed.
func (c *cache) admitted(e *entry) {
	if c.maxBytes <= 0 {
		return
	}
	c.approx.Add(e.footprint())
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
func (c *cache) enforceLocked(keep *entry) {
	a0 := c.approx.Load()
	if a0 <= c.maxBytes || a0 == c.scanned.Load() {
		return
	}
	c.epoch.Add(1) // reads from now on are more recent than any counted here
	type candidate struct {
		e          *entry
		used, size int64
	}
	c.mu.RLock()
	list := make([]candidate, 0, len(c.entries))
	var total int64
	for _, e := range c.entries {
		size := e.footprint()
		total += size
		list = append(list, candidate{e, e.used.Load(), size})
	}
	c.mu.RUnlock()
	var dropped []*entry
	var freed int64
	if total > c.maxBytes {
		slices.SortFunc(list, func(a, b candidate) int { return cmp.Compare(a.used, b.used) })
		goal := c.maxBytes - c.maxBytes/8
		c.mu.Lock()
		for _, x := range list {
			if total-freed <= goal {
				break
			}
			if x.e == keep || c.entries[x.e.mock.ID] != x.e {
				continue // being read, or replaced or removed meanwhile
			}
			delete(c.entries, x.e.mock.ID)
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

// footprint returns the footprint of the entries.
func (c *cache) footprint() int64 {
	c.mu.RLock()
	defer c.mu.RUnlock()
	var n int64
	for _, e := range c.entries {
		n += e.footprint()
	}
	return n
}

// replaced is told that the cache dropped old for now (nil: for nothing).
// Unless now serves the same data, the data's pages leave memory at once:
// its mapping would otherwise stay until a garbage collection releases it,
// which with a small heap may be minutes away, holding a replaced
// document's size twice. Readers still writing it read it again from the
// file.
func replaced(old, now *entry) {
	if old == nil || old.body == nil || now != nil && now.body == old.body {
		return
	}
	old.body.Evict()
}
