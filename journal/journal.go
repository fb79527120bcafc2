// Package journal keeps the request journal (§13.2 of the contract): the
// requests each project answered, newest first, bounded per project.
//
// Recording never waits on the journal's store, nor wakes anything: the
// caller writes an entry's record (decoy.JournalRecord) in a Buffer, and
// Queue puts it in a bounded queue (past the bound it is dropped and
// counted); Run, a goroutine of its own, wakes every Interval to write
// what is queued to the store in batches, and keeps the buffers for the
// next records (NewBuffer). A store that fails or hangs drops the batches
// it cannot take, counted too; the answers never wait for it.
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
	DefaultQueueBytes   = 64 << 20
	DefaultBatch        = 256
	DefaultInterval     = 100 * time.Millisecond
	DefaultWriteTimeout = 2 * time.Second
	DefaultPoll         = 250 * time.Millisecond
	DefaultKeepAlive    = 15 * time.Second
)

// followPage is the most entries Follow reads from the store at once.
const followPage = 100

// A Buffer holds an entry's record on its way to the store: NewBuffer
// takes one from the journal's emptied ones, Queue hands it to the
// journal, which keeps it for another once the record is written (or
// dropped).
type Buffer struct {
	B []byte
}

// maxKeptBuffer bounds the buffer kept for another record, so that
// records of large bodies leave theirs to the garbage collector.
const maxKeptBuffer = 8 << 10

// NewBuffer returns an empty Buffer, for Queue.
func (j *Journal) NewBuffer() *Buffer {
	j.qmu.Lock()
	if n := len(j.free); n > 0 {
		b := j.free[n-1]
		j.free = j.free[:n-1]
		j.qmu.Unlock()
		b.B = b.B[:0]
		return b
	}
	j.qmu.Unlock()
	return &Buffer{B: make([]byte, 0, 512)}
}

// keep keeps b for NewBuffer, when it is small and fewer than two
// batches' are kept; j.qmu is held.
func (j *Journal) keep(b *Buffer) {
	if cap(b.B) <= maxKeptBuffer && len(j.free) < 2*j.cfg.Batch {
		j.free = append(j.free, b)
	}
}

// Config configures a Journal.
type Config struct {
	// Store keeps the entries. Required.
	Store decoy.JournalStore
	// Queue bounds the requests waiting to be written (0: DefaultQueue),
	// and QueueBytes their records' bytes (0: DefaultQueueBytes: records
	// hold up to 64 KiB of body and more of headers, so 4,096 of them
	// could be half a GiB while a store is slow); Batch the entries
	// written at once (0: DefaultBatch).
	Queue, Batch int
	QueueBytes   int64
	// Interval is how often the writer writes what is queued (0:
	// DefaultInterval), and sooner once a batch is queued. Waking it for
	// each request would cost a read more than the journal may (§13.2:
	// 5%): a store across a network is written in a round trip a batch
	// or an interval rather than one a request. A round trip to Redis
	// costs this process about 40 µs of CPU time whatever it carries, and
	// an entry about 0.3 µs more (redis.BenchmarkJournalAppend): at 20 ms
	// the batches of a busy server held about 28 entries, 2.3 µs each,
	// 5% of a small read.
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
	cfg Config
	// qmu guards queued, the records waiting for the writer (with
	// writing, at most cfg.Queue). A slice under a lock rather than a
	// channel: a request queues its record in an append, without the
	// channel's own lock and copying, and the writer takes all that
	// waits at once, swapping queued for taken, which it emptied. Their arrays grow to what a
	// busy interval queues, not to the bound, and the collector scans
	// those: a channel's buffer is of the bound (4,096 records), scanned
	// whole at each cycle.
	qmu           sync.Mutex
	queued, taken []item
	// writing counts the records the writer took and has not written
	// yet: with queued, at most cfg.Queue records wait, as a store that
	// hangs holds the writer's.
	writing int
	// waitingBytes is the bytes of the records queued and being written.
	waitingBytes int64
	// free are the buffers of records written, for NewBuffer: a list
	// under the queue's lock costs a request less than a sync.Pool.
	free []*Buffer
	// full wakes the writer before its interval ends: Queue sends on it
	// (without waiting) when the record it queued makes a batch.
	full chan struct{}

	droppedQueue, droppedStore atomic.Int64
	failLogged                 atomic.Int64 // when a failed write was last logged (Unix ns)

	// byProject and spare are write's, kept from one batch to the next so
	// that a batch costs no allocation: the records of a batch by
	// project, and emptied slices to take a project's from.
	byProject map[string][][]byte
	spare     [][][]byte

	mu sync.Mutex
	// followers are the projects followed now, each with the channel the
	// next write of the project closes.
	followers map[string]*followed
}

// item is a queued record: bytes and their project, nothing of the
// request they were written from.
type item struct {
	project string
	buf     *Buffer
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
	if c.QueueBytes <= 0 {
		c.QueueBytes = DefaultQueueBytes
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
	return &Journal{cfg: c, full: make(chan struct{}, 1), followers: map[string]*followed{},
		byProject: map[string][][]byte{}}
}

// Record queues an entry for a project's journal; when the queue is full
// the entry is dropped, and counted.
func (j *Journal) Record(projectID string, e *decoy.JournalEntry) {
	b := j.NewBuffer()
	b.B = e.AppendRecord(b.B)
	j.Queue(projectID, b)
}

// Queue queues a record for a project's journal, which takes b (NewBuffer)
// from then on; false when the queue is full and it was dropped. It does
// not block, and costs no allocation once the queue's arrays have grown
// to what an interval queues.
func (j *Journal) Queue(projectID string, b *Buffer) bool {
	j.qmu.Lock()
	n := len(j.queued)
	if n+j.writing >= j.cfg.Queue || j.waitingBytes+int64(len(b.B)) > j.cfg.QueueBytes {
		j.keep(b)
		j.qmu.Unlock()
		j.droppedQueue.Add(1)
		return false
	}
	j.queued = append(j.queued, item{project: projectID, buf: b})
	j.waitingBytes += int64(len(b.B))
	j.qmu.Unlock()
	if n+1 == j.cfg.Batch { // once a batch: a wake-up the writer has not taken costs no more
		select {
		case j.full <- struct{}{}:
		default:
		}
	}
	return true
}

// Dropped returns the entries dropped so far: because the queue was full,
// and because the store failed to take them.
func (j *Journal) Dropped() (queue, store int64) {
	return j.droppedQueue.Load(), j.droppedStore.Load()
}

// Run writes the queued requests to the store every Interval, and
// whenever a batch is queued, until ctx ends; then writes what is still
// queued, once.
func (j *Journal) Run(ctx context.Context) {
	t := time.NewTicker(j.cfg.Interval)
	defer t.Stop()
	for {
		select {
		case <-t.C:
		case <-j.full:
		case <-ctx.Done():
			j.flush()
			return
		}
		j.flush()
	}
}

// maxKept bounds the array of queued records the writer keeps for the
// next interval, once emptied: one that a burst grew past it is left to
// the collector.
const maxKept = 1024

// flush writes what is queued now, a batch at a time; not what is queued
// while it writes, which waits for the next interval or batch: a writer
// that went on while requests come in would write a small batch a round
// trip, each costing what a full one does.
func (j *Journal) flush() {
	j.qmu.Lock()
	all := j.queued
	j.queued, j.taken = j.taken, nil
	j.writing = len(all)
	j.qmu.Unlock()
	for batch := all; len(batch) > 0; {
		n := min(len(batch), j.cfg.Batch)
		j.write(batch[:n])
		j.qmu.Lock()
		for i, it := range batch[:n] {
			j.waitingBytes -= int64(len(it.buf.B))
			j.keep(it.buf)
			batch[i] = item{}
		}
		j.writing -= n
		j.qmu.Unlock()
		batch = batch[n:]
	}
	j.qmu.Lock()
	if cap(all) > maxKept {
		all = nil
	}
	j.taken = all[:0]
	j.qmu.Unlock()
}

// maxSpare bounds the emptied slices write keeps for the next batches.
const maxSpare = 8

// write appends the records of batch to the store (flush keeps their
// buffers then). Only Run calls it, one batch at a time.
func (j *Journal) write(batch []item) {
	records := j.byProject
	defer j.empty(records)
	// A run of one project's records, most batches' whole, is added to
	// the map at its end: a lookup a run, not a record.
	for i := 0; i < len(batch); {
		project := batch[i].project
		list, ok := records[project]
		if !ok && len(j.spare) > 0 {
			list, j.spare = j.spare[len(j.spare)-1], j.spare[:len(j.spare)-1]
		}
		for ; i < len(batch) && batch[i].project == project; i++ {
			list = append(list, batch[i].buf.B)
		}
		records[project] = list
	}
	ctx, cancel := context.WithTimeout(context.Background(), j.cfg.WriteTimeout)
	err := j.cfg.Store.Append(ctx, records)
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
	for project := range records {
		if f := j.followers[project]; f != nil {
			close(f.wake)
			f.wake = make(chan struct{})
		}
	}
	j.mu.Unlock()
}

// empty keeps a few of a written batch's slices for the next batches
// (flush keeps its buffers).
func (j *Journal) empty(records map[string][][]byte) {
	for project, list := range records {
		clear(list)
		if len(j.spare) < maxSpare {
			j.spare = append(j.spare, list[:0])
		}
		delete(records, project)
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
