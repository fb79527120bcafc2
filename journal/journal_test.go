package journal_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/decoy-mock/decoy"
	"github.com/decoy-mock/decoy/journal"
	"github.com/decoy-mock/decoy/journal/journaltest"
)

// queue queues the record of a GET of path, as the server does.
func queue(j *journal.Journal, project, path string) bool {
	b := j.NewBuffer()
	b.B = (&decoy.JournalRecord{Method: "GET", Path: path, Status: 200}).Append(b.B, nil, 0)
	return j.Queue(project, b)
}

// waitFor polls until cond holds, for at most 5 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 5 s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func run(t *testing.T, j *journal.Journal) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { j.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
}

func listed(t *testing.T, j *journal.Journal, project string) []string {
	t.Helper()
	es, _, err := j.List(context.Background(), project, decoy.JournalFilter{}, "", 1000)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range es {
		out = append(out, e.Path)
	}
	return out
}

// Records queued, and entries recorded, are written by Run.
func TestRecordWrites(t *testing.T) {
	j := journal.New(journal.Config{Store: journal.NewRing(journal.RingConfig{Size: 100})})
	for _, path := range []string{"/a", "/b"} {
		if !queue(j, "p", path) {
			t.Fatal("dropped")
		}
	}
	j.Record("q", &decoy.JournalEntry{Path: "/c"})
	run(t, j)
	waitFor(t, "entries written", func() bool { return fmt.Sprint(listed(t, j, "p")) == "[/b /a]" && len(listed(t, j, "q")) == 1 })
}

// A full queue drops what comes, counted, without waiting.
func TestRecordFullQueue(t *testing.T) {
	j := journal.New(journal.Config{Store: journal.NewRing(journal.RingConfig{Size: 100}), Queue: 3})
	start := time.Now()
	for i := range 10 {
		queue(j, "p", fmt.Sprint("/", i))
	}
	if took := time.Since(start); took > time.Second {
		t.Errorf("recording into a full queue took %v", took)
	}
	if q, s := j.Dropped(); q != 7 || s != 0 {
		t.Errorf("dropped %d (queue) and %d (store), want 7 and 0", q, s)
	}
	run(t, j)
	waitFor(t, "the queued entries written", func() bool { return fmt.Sprint(listed(t, j, "p")) == "[/2 /1 /0]" })
}

// store is a JournalStore whose Append fails, hangs until its context
// ends, or works, as the test says; it counts the batches it is given.
type store struct {
	*journal.Ring
	mode    atomic.Value // "fail", "hang" or "ok"
	batches atomic.Int64
	sizes   sync.Map // batch size → true
}

func newStore() *store {
	s := &store{Ring: journal.NewRing(journal.RingConfig{Size: 10000})}
	s.mode.Store("ok")
	return s
}

func (s *store) Append(ctx context.Context, batch map[string][][]byte) error {
	s.batches.Add(1)
	n := 0
	for _, es := range batch {
		n += len(es)
	}
	s.sizes.Store(n, true)
	switch s.mode.Load() {
	case "fail":
		return decoy.Errorf(decoy.EUNAVAILABLE, "down")
	case "hang":
		<-ctx.Done()
		return decoy.Errorf(decoy.EUNAVAILABLE, "hung: %v", ctx.Err())
	}
	return s.Ring.Append(ctx, batch)
}

// The records waiting are at most Queue, those the writer took and is
// writing to a store that hangs included: past them what comes is dropped.
func TestQueueBoundWhileWriting(t *testing.T) {
	s := newStore()
	s.mode.Store("hang")
	j := journal.New(journal.Config{Store: s, Queue: 64, Batch: 16, WriteTimeout: 2 * time.Second})
	for i := range 64 {
		if !queue(j, "p", fmt.Sprint("/", i)) {
			t.Fatalf("record %d dropped below the bound", i)
		}
	}
	run(t, j)
	waitFor(t, "the writer in its first batch", func() bool { return s.batches.Load() == 1 })
	accepted := 0
	for i := range 100 {
		if queue(j, "p", fmt.Sprint("/more", i)) {
			accepted++
		}
	}
	if accepted != 0 {
		t.Errorf("%d records accepted while 64 (the bound) wait in the writer", accepted)
	}
	s.mode.Store("ok") // the hung batch ends at its timeout, the others are written
}

// The records waiting are bounded in bytes too (QueueBytes), those the
// writer is writing to a store that hangs included: records of large
// bodies are dropped past it, however few they are, and once written they
// leave room again.
func TestQueueBytesBound(t *testing.T) {
	s := newStore()
	s.mode.Store("hang")
	j := journal.New(journal.Config{Store: s, Queue: 1000, QueueBytes: 64 << 10, Batch: 4, WriteTimeout: 300 * time.Millisecond})
	large := func(name string) bool {
		b := j.NewBuffer()
		b.B = (&decoy.JournalRecord{Method: "POST", Path: "/" + name, Status: 201}).Append(b.B, make([]byte, 20<<10), 0)
		return j.Queue("p", b)
	}
	for i := range 3 {
		if !large(fmt.Sprint(i)) {
			t.Fatalf("record %d of about 20 KiB dropped below 64 KiB", i)
		}
	}
	if large("past") {
		t.Error("a fourth record of about 20 KiB accepted past 64 KiB waiting")
	}
	if q, _ := j.Dropped(); q != 1 {
		t.Errorf("%d drops counted, want 1", q)
	}
	run(t, j)
	waitFor(t, "the writer in its first batch", func() bool { return s.batches.Load() == 1 })
	if large("while writing") {
		t.Error("a record accepted while the bound's worth is being written")
	}
	s.mode.Store("ok")
	waitFor(t, "room once written", func() bool { return large("after") })
}

// A store that fails or hangs drops entries, counted; recording never
// waits for it; once it takes entries again, they flow.
func TestStoreFailsOrHangs(t *testing.T) {
	for _, mode := range []string{"fail", "hang"} {
		t.Run(mode, func(t *testing.T) {
			s := newStore()
			s.mode.Store(mode)
			j := journal.New(journal.Config{Store: s, Queue: 64, WriteTimeout: 100 * time.Millisecond})
			run(t, j)
			var slowest time.Duration
			stop := time.Now().Add(500 * time.Millisecond)
			n := 0
			for time.Now().Before(stop) {
				start := time.Now()
				queue(j, "p", "/lost")
				slowest = max(slowest, time.Since(start))
				n++
				if n%50 == 0 {
					time.Sleep(time.Millisecond)
				}
			}
			if slowest > 50*time.Millisecond {
				t.Errorf("a record waited %v for a store that %ss", slowest, mode)
			}
			waitFor(t, "drops counted", func() bool { q, st := j.Dropped(); return q+st > 0 && st > 0 })
			s.mode.Store("ok")
			waitFor(t, "the queue drained", func() bool {
				q, st := j.Dropped()
				return int(q+st)+len(listed(t, j, "p")) == n
			})
			// The bound counts the last batch until the writer lets go of
			// it, a moment after the store answered: a record queued then
			// is dropped, as the bound says, and is queued again here.
			held, _ := j.Dropped()
			queue(j, "p", "/back")
			waitFor(t, "entries flow again", func() bool {
				if q, _ := j.Dropped(); q > held {
					held = q
					queue(j, "p", "/back")
				}
				l := listed(t, j, "p")
				return len(l) > 0 && l[0] == "/back"
			})
			q, st := j.Dropped()
			t.Logf("%d recorded: %d dropped from the queue, %d by the store; slowest record %v", n, q, st, slowest)
		})
	}
}

// Entries waiting are written in batches, up to Batch at once.
func TestBatches(t *testing.T) {
	s := newStore()
	j := journal.New(journal.Config{Store: s, Batch: 50})
	for i := range 120 {
		queue(j, "p", fmt.Sprint("/", i))
	}
	run(t, j)
	waitFor(t, "all written", func() bool { return len(listed(t, j, "p")) == 120 })
	if b := s.batches.Load(); b != 3 {
		t.Errorf("%d batches, want 3 (50, 50, 20)", b)
	}
	if _, ok := s.sizes.Load(50); !ok {
		t.Error("no batch of 50")
	}
}

// Entries that come one at a time within an interval are written
// together.
func TestInterval(t *testing.T) {
	s := newStore()
	j := journal.New(journal.Config{Store: s, Interval: time.Second})
	run(t, j)
	for i := range 5 {
		queue(j, "p", fmt.Sprint("/", i))
		time.Sleep(5 * time.Millisecond)
	}
	waitFor(t, "all written", func() bool { return len(listed(t, j, "p")) == 5 })
	if b := s.batches.Load(); b >= 5 {
		t.Errorf("%d batches for 5 entries within an interval", b)
	}
}

// A batch queued wakes the writer before its interval ends.
func TestBatchWakesWriter(t *testing.T) {
	s := newStore()
	j := journal.New(journal.Config{Store: s, Batch: 8, Interval: time.Hour})
	run(t, j)
	for i := range 7 {
		queue(j, "p", fmt.Sprint("/", i))
	}
	time.Sleep(50 * time.Millisecond)
	if b := s.batches.Load(); b != 0 {
		t.Fatalf("%d batches written before a batch was queued or the interval ended", b)
	}
	queue(j, "p", "/7")
	waitFor(t, "the batch written", func() bool { return len(listed(t, j, "p")) == 8 })
}

// gated is a store whose Append waits for a value on gate, and tells
// entered when it begins to.
type gated struct {
	*store
	entered, gate chan struct{}
}

func (g *gated) Append(ctx context.Context, batch map[string][][]byte) error {
	g.entered <- struct{}{}
	<-g.gate
	return g.store.Append(ctx, batch)
}

// What comes while the writer writes waits for the next interval or
// batch: a writer that went on would write a small batch a round trip
// for as long as requests come, each costing what a full one does.
func TestWriterWaitsAfterWrite(t *testing.T) {
	g := &gated{store: newStore(), entered: make(chan struct{}, 1), gate: make(chan struct{})}
	j := journal.New(journal.Config{Store: g, Batch: 4, Interval: time.Hour})
	run(t, j)
	t.Cleanup(func() { close(g.gate) }) // before run's cleanup: Run ends by writing what is left
	for i := range 4 {
		queue(j, "p", fmt.Sprint("/", i))
	}
	<-g.entered // the batch of 4 is being written
	queue(j, "p", "/4")
	queue(j, "p", "/5")
	g.gate <- struct{}{}
	select {
	case <-g.entered:
		t.Fatal("the 2 entries that came during a write were written at once, not at the next interval or batch")
	case <-time.After(200 * time.Millisecond):
	}
	if got := len(listed(t, j, "p")); got != 4 {
		t.Errorf("%d entries written, want the batch of 4", got)
	}
	queue(j, "p", "/6")
	queue(j, "p", "/7") // a batch queued again: written
	<-g.entered
	g.gate <- struct{}{}
	waitFor(t, "the second batch written", func() bool { return len(listed(t, j, "p")) == 8 })
}

// When Run ends, what is queued is written.
func TestRunWritesQueueAtEnd(t *testing.T) {
	j := journal.New(journal.Config{Store: journal.NewRing(journal.RingConfig{Size: 1000})})
	for i := range 300 {
		queue(j, "p", fmt.Sprint("/", i))
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	j.Run(ctx)
	if n := len(listed(t, j, "p")); n != 300 {
		t.Errorf("%d written, want 300", n)
	}
}

// follower collects what Follow sends.
type follower struct {
	mu     sync.Mutex
	paths  []string
	pings  int
	cancel context.CancelFunc
	done   chan error
}

// follow follows a project's journal after the entry after ("": the
// newest now).
func follow(t *testing.T, j *journal.Journal, project, after string, f decoy.JournalFilter) *follower {
	ctx, cancel := context.WithCancel(context.Background())
	if after == "" {
		var err error
		if after, err = j.Newest(ctx, project); err != nil {
			t.Fatal(err)
		}
	}
	fl := &follower{cancel: cancel, done: make(chan error, 1)}
	go func() {
		fl.done <- j.Follow(ctx, project, after, f, func(es []*decoy.JournalEntry) error {
			fl.mu.Lock()
			defer fl.mu.Unlock()
			if es == nil {
				fl.pings++
			}
			for _, e := range es {
				fl.paths = append(fl.paths, e.Path)
			}
			return nil
		})
	}()
	t.Cleanup(cancel)
	return fl
}

func (f *follower) got() string { f.mu.Lock(); defer f.mu.Unlock(); return fmt.Sprint(f.paths) }

// Follow sends the entries written after it started, oldest first, at
// once for this journal's own writes; with a filter, those that pass; and
// keeps the caller alive while there are none.
func TestFollow(t *testing.T) {
	ring := journal.NewRing(journal.RingConfig{Size: 100})
	// A long poll: only the journal's own writes wake the followers.
	j := journal.New(journal.Config{Store: ring, Poll: time.Hour, KeepAlive: 50 * time.Millisecond})
	run(t, j)
	j.Record("p", &decoy.JournalEntry{Path: "/before", Method: "GET"})
	waitFor(t, "the first entry", func() bool { return len(listed(t, j, "p")) == 1 })
	all := follow(t, j, "p", "", decoy.JournalFilter{})
	posts := follow(t, j, "p", "", decoy.JournalFilter{Method: "POST"})
	resumed := follow(t, j, "p", "0-0", decoy.JournalFilter{})
	other := follow(t, j, "q", "", decoy.JournalFilter{})
	j.Record("p", &decoy.JournalEntry{Path: "/1", Method: "GET"})
	j.Record("p", &decoy.JournalEntry{Path: "/2", Method: "POST"})
	waitFor(t, "the new entries followed", func() bool { return all.got() == "[/1 /2]" })
	waitFor(t, "the POST followed", func() bool { return posts.got() == "[/2]" })
	waitFor(t, "the resumed follower", func() bool { return resumed.got() == "[/before /1 /2]" })
	waitFor(t, "keep-alives", func() bool { other.mu.Lock(); defer other.mu.Unlock(); return other.pings >= 2 })
	if got := other.got(); got != "[]" {
		t.Errorf("another project's follower got %s", got)
	}
	all.cancel()
	select {
	case err := <-all.done:
		if err != nil {
			t.Errorf("Follow ended with %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Follow did not end with its context")
	}
}

// Entries of other replicas, which no write of this journal announces,
// are found at the next poll.
func TestFollowPolls(t *testing.T) {
	ring := journal.NewRing(journal.RingConfig{Size: 100})
	j := journal.New(journal.Config{Store: ring, Poll: 20 * time.Millisecond})
	fl := follow(t, j, "p", "0-0", decoy.JournalFilter{})
	// Written to the store by "another replica".
	ring.Append(context.Background(), journaltest.Records(map[string][]*decoy.JournalEntry{"p": {{Path: "/elsewhere"}}}))
	waitFor(t, "the other replica's entry", func() bool { return fl.got() == "[/elsewhere]" })
}

// Follow ends with the error of send.
func TestFollowSendFails(t *testing.T) {
	j := journal.New(journal.Config{Store: journal.NewRing(journal.RingConfig{Size: 100}), KeepAlive: 10 * time.Millisecond})
	broken := errors.New("client gone")
	err := j.Follow(context.Background(), "p", "0-0", decoy.JournalFilter{}, func([]*decoy.JournalEntry) error { return broken })
	if !errors.Is(err, broken) {
		t.Errorf("Follow returned %v", err)
	}
}
