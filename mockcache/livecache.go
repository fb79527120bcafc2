package mockcache

import (
	"context"
	"weak"

	"github.com/decoy-mock/decoy"
)

// writesPage is how many writes a catch-up asks the store for at a time.
const writesPage = 1000

// maxLiveTries bounds the reads of a mock's live data that new data, a
// reset or a compaction made at the same time sent back to the start.
const maxLiveTries = 8

// fetchLive reads mock id's live data from the store (see
// decoy.LiveStore): its base, and the writes after it, applied. The entry
// comes with one reference, the caller's.
func (c *Cache) fetchLive(ctx context.Context, id string) (*Entry, error) {
	var err error
	for range maxLiveTries {
		var e *Entry
		var seq int64
		if e, seq, err = c.readBase(ctx, id); err != nil {
			if decoy.ErrorCode(err) == decoy.ECONFLICT {
				continue
			}
			return nil, err
		}
		if seq == e.liveSeq {
			return e, nil // no writes after the base
		}
		f, err := c.catchUp(ctx, e)
		e.Release()
		if decoy.ErrorCode(err) == decoy.ECONFLICT {
			continue
		}
		return f, err
	}
	return nil, decoy.Errorf(decoy.EUNAVAILABLE, "Live data changing too fast to be read: %v", err)
}

// readBase returns the entry of mock id's live base: the base a compaction
// wrote, or the current version's data; ECONFLICT when new data or a reset
// came between the reads (read again). seq is the number of the live data
// the store gave with the mock, which writes after the base reach.
func (c *Cache) readBase(ctx context.Context, id string) (e *Entry, seq int64, err error) {
	m, data, err := c.store.FindMockData(ctx, id)
	if err != nil {
		return nil, 0, err
	}
	base, baseSeq, ok, err := c.live.LiveBase(ctx, id)
	if err == nil && baseSeq > m.LiveSeq {
		err = decoy.Errorf(decoy.ECONFLICT, "Live data changed while read")
	}
	if err != nil {
		closeData(data)
		if ok {
			closeData(base)
		}
		return nil, 0, err
	}
	stored := m.Size
	if ok {
		closeData(data)
		data = base
	}
	body, err := DocOf(data) // closes its file
	if err != nil {
		return nil, 0, err
	}
	if !ok {
		stored = body.Size()
	}
	if e, err = NewEntry(m, body); err != nil {
		// Stored under a JSON type but not JSON (written by hand?): served
		// unchanged rather than not at all (and never written).
		e = &Entry{Mock: m, body: body, data: body.Bytes(), ContentType: []string{m.ContentType}}
		e.unbounded()
	}
	e.liveSeq, e.edited, e.storedETag, e.storedSize = baseSeq, ok, m.ETag, stored
	e.Mock = e.liveMock(m)
	return e, m.LiveSeq, nil
}

// closeData closes the file of data, if any.
func closeData(d decoy.Data) {
	if d.File != nil {
		d.File.Close()
	}
}

// catchUp returns e with the writes after it applied, as the store lists
// them (e itself, with a reference of its own, when there are none). The
// caller keeps its reference to e. ECONFLICT when the writes are gone from
// the log: the caller reads the live data again.
func (c *Cache) catchUp(ctx context.Context, e *Entry) (*Entry, error) {
	var ws []*decoy.Write
	for {
		page, err := c.live.Writes(ctx, e.Mock.ID, e.liveSeq+int64(len(ws)), writesPage)
		if err != nil {
			return nil, err
		}
		ws = append(ws, page...)
		if len(page) < writesPage {
			break
		}
	}
	if len(ws) == 0 {
		if !e.body.Acquire() {
			return nil, decoy.Errorf(decoy.ECONFLICT, "Entry released")
		}
		return e, nil
	}
	return e.applyAll(ws)
}

// PutLive installs e, the entry a write made (see Apply), when it is newer
// than the entry the cache holds of its mock: the same version of the same
// mock, at a lower number. Else it does nothing: the cache holds newer live
// data, or another version (new data, a reset), or nothing (the next read
// loads the mock). The cache takes a reference of its own: the caller still
// releases the one it holds.
func (c *Cache) PutLive(e *Entry) {
	c.mu.RLock()
	old := c.entries[e.Mock.ID]
	c.mu.RUnlock()
	if old == nil {
		// Not cached (too large to keep, say): the reads using a shared
		// entry of it (Cache.unfit) go on with the data they began with,
		// and the reads to come load the new data; a load under way that
		// read the store before this write is neither cached nor shared.
		c.mu.Lock()
		c.noteUnfitLocked(e.Mock.ID, nil, e.liveSeq)
		c.mu.Unlock()
		return
	}
	if !old.sameMock(e.Mock) || old.liveSeq >= e.liveSeq {
		return
	}
	fits := c.admit(e)
	var drop []*Entry
	carry := false
	c.mu.Lock()
	cur := c.entries[e.Mock.ID]
	switch {
	case cur == nil || !cur.sameMock(e.Mock) || cur.liveSeq >= e.liveSeq:
		e.set.Close()
	case !fits:
		drop = c.deleteLocked(e.Mock.ID, drop, nil)
		c.noteUnfitLocked(e.Mock.ID, nil, e.liveSeq)
		e.set.Close()
	default:
		e.checked.Store(cur.checked.Load())
		drop = c.putLocked(e, drop)
		carry = true
		if w, ok := c.wants[e.Mock.ID]; ok && w <= e.liveSeq {
			delete(c.wants, e.Mock.ID)
		}
	}
	c.mu.Unlock()
	release(drop)
	if carry && e.Doc != nil {
		// What the entry before kept is built over this one now, at the
		// cost of the write, for the reads to come.
		e.Doc.CarryOver()
	}
}

// CatchUp returns e advanced to the newest live data the store holds: the
// writes after e's number applied, or the mock read again when they are
// gone from the store's log (compacted or reset away). It takes over the
// caller's reference to e (as from Get), and returns the entry with a
// reference of the caller's, to Release, as Get does (e itself when it is
// current); on an error, the caller holds nothing. What it returns is
// installed in the cache when newer than what the cache holds (PutLive).
func (c *Cache) CatchUp(ctx context.Context, e *Entry) (*Entry, error) {
	if c.live == nil {
		return e, nil
	}
	f, err := c.catchUp(ctx, e)
	switch {
	case decoy.ErrorCode(err) == decoy.ECONFLICT:
		e.Release()
		c.Remove(e.Mock.ID)
		return c.load(ctx, e.Mock.ID)
	case err != nil:
		e.Release()
		return nil, err
	}
	e.Release()
	if f != e {
		c.PutLive(f)
	}
	return f, nil
}

// Advance is told that mock id's live data reached number seq on another
// replica (a decoy.WriteAnnouncement): a cached entry behind it is caught
// up in the background, and a read that comes first catches it up (so
// that every Get after Advance sees seq, or newer). An announcement heard
// while the mock is being loaded is kept for the entry the load makes.
func (c *Cache) Advance(id string, seq int64) {
	c.mu.Lock()
	if u, ok := c.unfit[id]; ok {
		u.e = weak.Pointer[Entry]{} // the next read loads it
		c.unfit[id] = u
	}
	e := c.entries[id]
	if c.live == nil || e != nil && e.liveSeq >= seq || e == nil && !c.loading(id) {
		c.mu.Unlock()
		return
	}
	if c.wants == nil {
		c.wants = make(map[string]int64)
	}
	if seq > c.wants[id] {
		c.wants[id] = seq
	}
	running := c.advancing[id] || e == nil // a load under way: its first read catches up
	if !running {
		if c.advancing == nil {
			c.advancing = make(map[string]bool)
		}
		c.advancing[id] = true
	}
	c.mu.Unlock()
	if !running {
		go c.advance(id)
	}
}

// loading reports whether a load of mock id is under way.
func (c *Cache) loading(id string) bool {
	c.flightMu.Lock()
	defer c.flightMu.Unlock()
	for k := range c.flights {
		if k.id == id {
			return true
		}
	}
	return false
}

// advance catches up the cached entry of mock id until it reaches the
// number wanted of it, or leaves the cache.
func (c *Cache) advance(id string) {
	defer func() {
		c.mu.Lock()
		delete(c.advancing, id)
		c.mu.Unlock()
	}()
	for range maxLiveTries {
		c.mu.RLock()
		e, want := c.entries[id], c.wants[id]
		if e != nil && !e.body.Acquire() {
			e = nil
		}
		c.mu.RUnlock()
		if e == nil {
			return
		}
		if e.liveSeq >= want {
			e.Release()
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), storeLoadTimeout)
		f, err := c.CatchUp(ctx, e)
		cancel()
		if err != nil {
			return // the next read catches up, or loads
		}
		f.Release()
	}
}

// behind reports whether e, the cached entry, is behind what an
// announcement said of its mock.
func (c *Cache) behindLocked(e *Entry) bool {
	return c.wants != nil && c.wants[e.Mock.ID] > e.liveSeq
}

// batchMin is the fewest writes applied as a batch (applyAll): fewer are
// applied one at a time, through the kept index of their id field.
const batchMin = 4

// applyAll returns e with the writes ws applied in order (numbered from
// e's number on), with one reference.
//
// A write of the log that does not apply (which the write path's checks
// should have refused) changes nothing, on every replica alike, rather
// than making the mock unreadable: see applyBatch.
func (e *Entry) applyAll(ws []*decoy.Write) (*Entry, error) {
	if len(ws) < batchMin {
		cur := e
		for _, w := range ws {
			next, err := cur.Apply(w)
			if cur != e {
				cur.Release()
			}
			if err != nil {
				return e.applyBatch(ws)
			}
			cur = next
		}
		return cur, nil
	}
	return e.applyBatch(ws)
}
