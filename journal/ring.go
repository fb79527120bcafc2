package journal

import (
	"context"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/decoy-mock/decoy"
)

// DefaultMaxBytes bounds the memory of a Ring: 64 MiB of entries across
// all the server's projects.
const DefaultMaxBytes = 64 << 20

// slotOverhead is what an entry costs beyond its record's array: its
// slot.
const slotOverhead = 48

// Ring keeps the journals of one server's projects in memory: at most Size
// entries per project, the oldest leaving first, and at most MaxBytes in
// all (what the entries' records and slots hold). An entry is kept as its
// record (decoy.JournalRecord), copied into its slot, whose array a newer
// entry that replaces it takes over; listings read the records back. Past MaxBytes, the journals
// of the projects recorded to least recently are dropped whole, so that a
// server with 10,000 projects holds the journals of those in use; a
// project alone past the bound loses its oldest entries.
//
// IDs are "<milliseconds>-<sequence>", increasing across the Ring as Redis
// Streams' are within a stream, so that a cursor is an entry's ID.
type Ring struct {
	size     int
	maxBytes int64
	now      func() time.Time

	mu       sync.Mutex
	projects map[string]*ring
	// newest and oldest end the list of rings, most recently appended to
	// first.
	newest, oldest *ring
	bytes          int64
	lastMS, seq    uint64
}

// RingConfig configures a Ring.
type RingConfig struct {
	// Size is the most entries a project's journal keeps (at least 1).
	Size int
	// MaxBytes bounds the memory of all journals (0: DefaultMaxBytes).
	MaxBytes int64
	// Now gives the time of IDs; tests replace it.
	Now func() time.Time
}

// ring is one project's journal: slots oldest first, circular once full.
type ring struct {
	project      string
	slots        []slot
	start, n     int
	bytes        int64
	newer, older *ring
}

type slot struct {
	ms, seq uint64
	rec     []byte
}

// bytes is the memory s holds.
func (s *slot) bytes() int64 { return int64(cap(s.rec)) + slotOverhead }

// entry reads s back as its entry, with its ID; false for a record that
// is not one.
func (s *slot) entry() (*decoy.JournalEntry, bool) {
	e, err := decoy.ParseJournalRecord(s.rec)
	if err != nil {
		return nil, false
	}
	e.ID = strconv.FormatUint(s.ms, 10) + "-" + strconv.FormatUint(s.seq, 10)
	return e, true
}

var _ decoy.JournalStore = (*Ring)(nil)

// NewRing returns an empty Ring.
func NewRing(c RingConfig) *Ring {
	if c.Size < 1 {
		c.Size = 1
	}
	if c.MaxBytes <= 0 {
		c.MaxBytes = DefaultMaxBytes
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return &Ring{size: c.Size, maxBytes: c.MaxBytes, now: c.Now, projects: map[string]*ring{}}
}

// Footprint returns the memory the entries hold (an estimate) and the
// number of projects whose journals are kept.
func (r *Ring) Footprint() (bytes int64, projects int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.bytes, len(r.projects)
}

// at returns the i-th slot of g, oldest first.
func (g *ring) at(i int) *slot { return &g.slots[(g.start+i)%len(g.slots)] }

// Append adds records to their projects' journals and gives them IDs.
func (r *Ring) Append(_ context.Context, batch map[string][][]byte) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.now() // once a batch: entries of one time are numbered in turn
	for project, records := range batch {
		if len(records) == 0 {
			continue
		}
		g := r.projects[project]
		if g == nil {
			g = &ring{project: project}
			r.projects[project] = g
		} else {
			r.unlink(g)
		}
		r.linkNewest(g)
		for _, rec := range records {
			r.push(g, rec, now)
		}
	}
	// Within the bound: the least recently recorded journals go first,
	// then, for one alone past it, its oldest entries.
	for r.bytes > r.maxBytes && r.oldest != nil {
		if g := r.oldest; g != r.newest {
			r.drop(g)
			continue
		}
		g := r.newest
		if g.n <= 1 {
			break
		}
		r.shift(g)
	}
	return nil
}

// push appends a copy of rec to g, making room by dropping its oldest
// entry, whose array it takes when rec fits.
func (r *Ring) push(g *ring, rec []byte, now time.Time) {
	ms := uint64(max(now.UnixMilli(), 0))
	if ms <= r.lastMS {
		ms, r.seq = r.lastMS, r.seq+1
	} else {
		r.seq = 0
	}
	r.lastMS = ms
	var buf []byte
	if g.n == r.size {
		if old := g.at(0).rec; cap(old) >= len(rec) && cap(old) <= 2*len(rec)+slotOverhead {
			buf = old[:0]
		}
		r.shift(g)
	}
	if g.n == len(g.slots) {
		// Grown as used, so that a project with a few requests holds a
		// few slots; the ring is full at size.
		grown := make([]slot, min(max(2*g.n, 8), r.size))
		for i := range g.n {
			grown[i] = *g.at(i)
		}
		g.slots, g.start = grown, 0
	}
	s := g.at(g.n)
	*s = slot{ms: ms, seq: r.seq, rec: append(buf, rec...)}
	g.n++
	g.bytes += s.bytes()
	r.bytes += s.bytes()
}

// shift drops the oldest entry of g.
func (r *Ring) shift(g *ring) {
	s := g.at(0)
	g.bytes -= s.bytes()
	r.bytes -= s.bytes()
	*s = slot{}
	g.start = (g.start + 1) % len(g.slots)
	g.n--
}

func (r *Ring) linkNewest(g *ring) {
	g.older, g.newer = r.newest, nil
	if r.newest != nil {
		r.newest.newer = g
	}
	r.newest = g
	if r.oldest == nil {
		r.oldest = g
	}
}

func (r *Ring) unlink(g *ring) {
	if g.newer != nil {
		g.newer.older = g.older
	} else {
		r.newest = g.older
	}
	if g.older != nil {
		g.older.newer = g.newer
	} else {
		r.oldest = g.newer
	}
	g.newer, g.older = nil, nil
}

// drop forgets a project's journal.
func (r *Ring) drop(g *ring) {
	r.unlink(g)
	r.bytes -= g.bytes
	delete(r.projects, g.project)
}

// errCursor answers a cursor the Ring did not give.
var errCursor = decoy.Errorf(decoy.EINVALID, "Invalid cursor")

// List returns a project's entries that pass f, newest first.
func (r *Ring) List(_ context.Context, projectID string, f decoy.JournalFilter, cursor string, limit int) ([]*decoy.JournalEntry, string, error) {
	var cms, cseq uint64
	if cursor != "" {
		var ok bool
		if cms, cseq, ok = decoy.ParseJournalID(cursor); !ok {
			return nil, "", errCursor
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	g := r.projects[projectID]
	if g == nil || limit <= 0 {
		return nil, "", nil
	}
	end := g.n
	if cursor != "" {
		end = g.search(cms, cseq) // the entries before the cursor's
	}
	var out []*decoy.JournalEntry
	for i := end - 1; i >= 0; i-- {
		if e, ok := g.at(i).entry(); ok && f.Matches(e) {
			if len(out) == limit {
				return out, out[limit-1].ID, nil
			}
			out = append(out, e)
		}
	}
	return out, "", nil
}

// search returns the index of g's first entry at or after ID ms-seq.
func (g *ring) search(ms, seq uint64) int {
	return sort.Search(g.n, func(i int) bool {
		s := g.at(i)
		return s.ms > ms || s.ms == ms && s.seq >= seq
	})
}

// Count counts a project's entries that pass f.
func (r *Ring) Count(_ context.Context, projectID string, f decoy.JournalFilter) (int64, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	g := r.projects[projectID]
	if g == nil {
		return 0, nil
	}
	if f == (decoy.JournalFilter{}) {
		return int64(g.n), nil
	}
	var n int64
	for i := range g.n {
		if e, ok := g.at(i).entry(); ok && f.Matches(e) {
			n++
		}
	}
	return n, nil
}

// After returns a project's entries newer than id, oldest first.
func (r *Ring) After(_ context.Context, projectID, id string, limit int) ([]*decoy.JournalEntry, error) {
	ms, seq, ok := decoy.ParseJournalID(id)
	if !ok {
		return nil, decoy.Errorf(decoy.EINVALID, "Invalid entry id")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	g := r.projects[projectID]
	if g == nil {
		return nil, nil
	}
	var out []*decoy.JournalEntry
	for i := g.search(ms, seq+1); i < g.n && len(out) < limit; i++ {
		if e, ok := g.at(i).entry(); ok {
			out = append(out, e)
		}
	}
	return out, nil
}

// Clear empties a project's journal.
func (r *Ring) Clear(_ context.Context, projectID string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if g := r.projects[projectID]; g != nil {
		r.drop(g)
	}
	return nil
}
