// Package journal keeps the request journal (§13.2 of the contract): the
// requests each project answered, newest first, bounded per project.
//
// Recording never waits on the journal's store, nor wakes anything: Record
// puts a request in a bounded queue (past the bound it is dropped and
// counted), and Run, a goroutine of its own, wakes every Interval to make
// the entries of what is queued and write them to the store in batches. A
// store that fails or hangs drops the batches it cannot take, counted too;
// the answers never wait for it.
//
// The store is a Ring, in this process's memory, or one that replicas
// share (redis.Journal, Redis Streams), behind decoy.JournalStore.
// Follow gives a project's new entries as they come: at once for those
// this process writes, and within Poll for those of other replicas.
package journal

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/decoy-mock/decoy"
)

// Defaults of Config.
const (
	DefaultQueue        = 4096
	DefaultBatch        = 256
	DefaultInterval     = 20 * time.Millisecond
	DefaultWriteTimeout = 2 * time.Second
	DefaultPoll         = 250 * time.Millisecond
	DefaultKeepAlive    = 15 * time.Second
)

// followPage is the most entries Follow reads from the store at once.
const followPage = 100

// A Request is an answered request the journal makes an entry of, off the
// answer's path: Entry is called by Run, once, after Record returned.
type Request interface {
	Entry() *decoy.JournalEntry
}

// Config configures a Journal.
type Config struct {
	// Store keeps the entries. Required.
	Store decoy.JournalStore
	// Queue bounds the requests waiting to be written (0: DefaultQueue);
	// Batch the entries written at once (0: DefaultBatch).
	Queue, Batch int
	// Interval is how often the writer writes what is queued (0:
	// DefaultInterval). Waking it for each request would cost a read
	// more than the journal may (§13.2: 5%); a store across a network is
	// written in a round trip an interval rather than one a request.
	Interval time.Duration
	// WriteTimeout bounds the writing of one batch (0:
	// DefaultWriteTimeout): a store that hangs holds the writer that long
	// while requests queue up, and past the queue's bound are dropped.
	WriteTimeout time.Duration
	// Poll is how often a follower asks the store for entries it was not
	// told of, other replicas' (0: DefaultPoll). KeepAlive is how long a
	// follower waits with nothing before it is called with none (0:
	// DefaultKeepAlive).
	Poll, KeepAlive time.Duration
	Logger          *slog.Logger
}

// Journal records requests into a store, in batches, and reads them back.
// It implements decoy.Journal.
type Journal struct {
	cfg   Config
	queue chan item

	droppedQueue, droppedStore atomic.Int64
	failLogged                 atomic.Int64 // when a failed write was last logged (Unix ns)

	// byProject and spare are write's, kept from one batch to the next so
	// that a batch costs no allocation: the entries of a batch by project,
	// and emptied slices to take a project's from.
	byProject map[string][]*decoy.JournalEntry
	spare     [][]*decoy.JournalEntry

	mu sync.Mutex
	// followers are the projects followed now, each with the channel the
	// next write of the project closes.
	followers map[string]*followed
}

type item struct {
	project string
	entry   *decoy.JournalEntry
	req     Request
}

type followed struct {
	wake chan struct{}
	n    int
}

var _ decoy.Journal = (*Journal)(nil)

// New returns a journal over c.Store; Run writes what it records.
func New(c Config) *Journal {
	if c.Queue <= 0 {
		c.Queue = DefaultQueue
	}
	if c.Batch <= 0 {
		c.Batch = DefaultBatch
	}
	if c.Interval <= 0 {
		c.Interval = DefaultInterval
	}
	if c.WriteTimeout <= 0 {
		c.WriteTimeout = DefaultWriteTimeout
	}
	if c.Poll <= 0 {
		c.Poll = DefaultPoll
	}
	if c.KeepAlive <= 0 {
		c.KeepAlive = DefaultKeepAlive
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return &Journal{cfg: c, queue: make(chan item, c.Queue), followers: map[string]*followed{},
		byProject: map[string][]*decoy.JournalEntry{}}
}

// Record queues an entry for a project's journal; when the queue is full
// the entry is dropped, and counted.
func (j *Journal) Record(projectID string, e *decoy.JournalEntry) {
	j.enqueue(item{project: projectID, entry: e})
}

// RecordRequest queues a request for a project's journal, whose entry Run
// makes; false when the queue is full and it was dropped. It does not
// block, and costs no allocation.
func (j *Journal) RecordRequest(projectID string, r Request) bool {
	return j.enqueue(item{project: projectID, req: r})
}

func (j *Journal) enqueue(it item) bool {
	select {
	case j.queue <- it:
		return true
	default:
		j.droppedQueue.Add(1)
		return false
	}
}

// Dropped returns the entries dropped so far: because the queue was full,
// and because the store failed to take them.
func (j *Journal) Dropped() (queue, store int64) {
	return j.droppedQueue.Load(), j.droppedStore.Load()
}

// Run writes the queued requests to the store every Interval until ctx
// ends, then writes what is still queued, once.
func (j *Journal) Run(ctx context.Context) {
	t := time.NewTicker(j.cfg.Interval)
	defer t.Stop()
	batch := make([]item, 0, j.cfg.Batch)
	for {
		select {
		case <-t.C:
		case <-ctx.Done():
			j.flush(batch)
			return
		}
		j.flush(batch)
	}
}

// flush writes what is queued, a batch at a time.
func (j *Journal) flush(batch []item) {
	for {
		if batch = j.take(batch[:0]); len(batch) == 0 {
			return
		}
		j.write(batch)
	}
}

// take adds to batch what is queued, up to a batch, without waiting.
func (j *Journal) take(batch []item) []item {
	for len(batch) < j.cfg.Batch {
		select {
		case it := <-j.queue:
			batch = append(batch, it)
		default:
			return batch
		}
	}
	return batch
}

// maxSpare bounds the emptied slices write keeps for the next batches.
const maxSpare = 8

// write makes the entries of batch and appends them to the store. Only
// Run calls it, one batch at a time.
func (j *Journal) write(batch []item) {
	entries := j.byProject
	defer j.empty(entries)
	for i, it := range batch {
		e := it.entry
		if e == nil {
			e = it.req.Entry()
		}
		list, ok := entries[it.project]
		if !ok && len(j.spare) > 0 {
			list, j.spare = j.spare[len(j.spare)-1], j.spare[:len(j.spare)-1]
		}
		entries[it.project] = append(list, e)
		batch[i] = item{} // let the request go
	}
	ctx, cancel := context.WithTimeout(context.Background(), j.cfg.WriteTimeout)
	err := j.cfg.Store.Append(ctx, entries)
	cancel()
	if err != nil {
		j.droppedStore.Add(int64(len(batch)))
		now := time.Now().UnixNano()
		if last := j.failLogged.Load(); now-last >= int64(10*time.Second) && j.failLogged.CompareAndSwap(last, now) {
			j.cfg.Logger.Warn("request journal entries dropped: the store did not take them", "entries", len(batch), "err", err)
		}
		return
	}
	j.mu.Lock()
	for project := range entries {
		if f := j.followers[project]; f != nil {
			close(f.wake)
			f.wake = make(chan struct{})
		}
	}
	j.mu.Unlock()
}

// empty lets a written batch's entries go, and keeps a few of its
// slices for the next batches.
func (j *Journal) empty(entries map[string][]*decoy.JournalEntry) {
	for project, list := range entries {
		clear(list)
		if len(j.spare) < maxSpare {
			j.spare = append(j.spare, list[:0])
		}
		delete(entries, project)
	}
}

// List returns up to limit entries of a project that pass f, newest first.
func (j *Journal) List(ctx context.Context, projectID string, f decoy.JournalFilter, cursor string, limit int) ([]*decoy.JournalEntry, string, error) {
	return j.cfg.Store.List(ctx, projectID, f, cursor, limit)
}

// Count counts a project's entries that pass f.
func (j *Journal) Count(ctx context.Context, projectID string, f decoy.JournalFilter) (int64, error) {
	return j.cfg.Store.Count(ctx, projectID, f)
}

// Clear empties a project's journal. Requests answered before and not
// yet written are written after.
func (j *Journal) Clear(ctx context.Context, projectID string) error {
	return j.cfg.Store.Clear(ctx, projectID)
}

// Newest returns the ID of a project's newest entry, or "0-0" when it has
// none: after it, Follow gives what is written from now on.
func (j *Journal) Newest(ctx context.Context, projectID string) (string, error) {
	newest, _, err := j.cfg.Store.List(ctx, projectID, decoy.JournalFilter{}, "", 1)
	if err != nil {
		return "", err
	}
	if len(newest) == 0 {
		return "0-0", nil
	}
	return newest[0].ID, nil
}

// Follow calls send with a project's entries that pass f (f.Since aside),
// oldest first, as they are written: those newer than after (an entry's
// ID, as Newest gives). It calls send with none when
// KeepAlive passed without any, so that the caller can show it is alive.
// It returns when ctx ends (nil) or send fails (its error). A store that
// fails is asked again at the next Poll.
func (j *Journal) Follow(ctx context.Context, projectID, after string, f decoy.JournalFilter, send func([]*decoy.JournalEntry) error) error {
	f.Since = time.Time{}
	j.mu.Lock()
	fw := j.followers[projectID]
	if fw == nil {
		fw = &followed{wake: make(chan struct{})}
		j.followers[projectID] = fw
	}
	fw.n++
	j.mu.Unlock()
	defer func() {
		j.mu.Lock()
		if fw.n--; fw.n == 0 {
			delete(j.followers, projectID)
		}
		j.mu.Unlock()
	}()

	poll := time.NewTicker(j.cfg.Poll)
	defer poll.Stop()
	idle := time.NewTimer(j.cfg.KeepAlive)
	defer idle.Stop()
	sent := func(entries []*decoy.JournalEntry) error {
		idle.Reset(j.cfg.KeepAlive)
		return send(entries)
	}
	for {
		j.mu.Lock()
		wake := fw.wake
		j.mu.Unlock()
		more, err := j.next(ctx, projectID, &after, f, sent)
		if err != nil {
			return err
		}
		if more {
			continue
		}
		select {
		case <-ctx.Done():
			return nil
		case <-wake:
		case <-poll.C:
		case <-idle.C:
			if err := send(nil); err != nil {
				return err
			}
			idle.Reset(j.cfg.KeepAlive)
		}
	}
}

// next sends the entries after *after that pass f, and moves *after on.
// more is set when it read a full page, and the next may follow at once;
// err is send's.
func (j *Journal) next(ctx context.Context, projectID string, after *string, f decoy.JournalFilter, send func([]*decoy.JournalEntry) error) (more bool, err error) {
	entries, err := j.cfg.Store.After(ctx, projectID, *after, followPage)
	if err != nil || len(entries) == 0 {
		return false, nil
	}
	*after = entries[len(entries)-1].ID
	kept := entries[:0:0]
	for _, e := range entries {
		if f.Matches(e) {
			kept = append(kept, e)
		}
	}
	if len(kept) > 0 {
		if err := send(kept); err != nil {
			return false, err
		}
	}
	return len(entries) == followPage, nil
}
