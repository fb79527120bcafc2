package mockcache_test

import (
	"bytes"
	"context"
	"fmt"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/decoy-mock/decoy"
	"github.com/decoy-mock/decoy/docfile"
	"github.com/decoy-mock/decoy/jsondoc"
	"github.com/decoy-mock/decoy/mockcache"
	"github.com/decoy-mock/decoy/query"
	"github.com/decoy-mock/decoy/sqlite"
)

const liveID = "00000000-0000-4000-8000-000000000042"

// countingStore is a SQLite store that counts the loads of mocks' data.
type countingStore struct {
	*sqlite.DB
	loads atomic.Int64
}

func (s *countingStore) FindMockData(ctx context.Context, id string) (*decoy.Mock, decoy.Data, error) {
	s.loads.Add(1)
	return s.DB.FindMockData(ctx, id)
}

// liveStore returns a SQLite store holding mock liveID with data.
func liveStore(t testing.TB, data string) *countingStore {
	t.Helper()
	ctx := context.Background()
	db, err := sqlite.Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	m := &decoy.Mock{ID: liveID, ContentType: "application/json", Status: 200, ETag: jsondoc.ETag([]byte(data))}
	if _, err := db.CreateMock(ctx, m, decoy.Data{Bytes: []byte(data)}); err != nil {
		t.Fatal(err)
	}
	return &countingStore{DB: db}
}

// appendWrite appends w to the store as another replica would, after
// applying it to the live data it holds (want), which it returns changed.
func appendWrite(t *testing.T, s *countingStore, want *mockcache.Entry, w *decoy.Write) *mockcache.Entry {
	t.Helper()
	next, err := want.Apply(w)
	if err != nil {
		t.Fatalf("Apply(%d): %v", w.Seq, err)
	}
	if err := s.AppendWrite(context.Background(), liveID, w, next.Size()); err != nil {
		t.Fatalf("AppendWrite(%d): %v", w.Seq, err)
	}
	want.Release()
	return next
}

func mustGet(t *testing.T, c *mockcache.Cache) *mockcache.Entry {
	t.Helper()
	e, err := c.Get(context.Background(), liveID)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// wantData checks that e holds want's data, at want's number, tagged as
// want is.
func wantData(t *testing.T, e, want *mockcache.Entry) {
	t.Helper()
	if string(e.Bytes()) != string(want.Bytes()) || e.LiveSeq() != want.LiveSeq() {
		t.Fatalf("entry holds %s (number %d), want %s (number %d)", e.Bytes(), e.LiveSeq(), want.Bytes(), want.LiveSeq())
	}
	if e.Mock.ETag != want.Mock.ETag || e.Mock.Size != int64(len(want.Bytes())) || e.Mock.LiveSeq != want.LiveSeq() {
		t.Fatalf("entry's mock: etag %s size %d number %d; want %s %d %d", e.Mock.ETag, e.Mock.Size, e.Mock.LiveSeq,
			want.Mock.ETag, len(want.Bytes()), want.LiveSeq())
	}
}

// someWrites returns writes from..to (from%3 == 1) over liveData: in turn,
// a create, a replace of a record of the data, a delete of the record
// created two writes before.
func someWrites(from, to int64) []*decoy.Write {
	var ws []*decoy.Write
	for seq := from; seq <= to; seq++ {
		switch seq % 3 {
		case 1:
			ws = append(ws, create(seq, "", fmt.Sprintf(`{"id":%d,"v":"created"}`, seq+100)))
		case 2:
			ws = append(ws, replace(seq, "", fmt.Sprint(seq%10+1), fmt.Sprintf(`{"id":%d,"v":%d}`, seq%10+1, seq)))
		default:
			ws = append(ws, remove(seq, "", fmt.Sprint(seq+98)))
		}
	}
	return ws
}

const liveData = `[{"id":1},{"id":2},{"id":3},{"id":4},{"id":5},{"id":6},{"id":7},{"id":8},{"id":9},{"id":10}]`

// A cache with live data loads the base and the writes after it: few
// (applied one by one), many (as a batch), after a compaction, after a
// reset.
func TestLiveLoad(t *testing.T) {
	ctx := context.Background()
	s := liveStore(t, liveData)
	want := entryOf(t, liveData, 0)
	load := func() *mockcache.Entry {
		c := mockcache.New(mockcache.Config{Store: s, Live: s})
		return mustGet(t, c)
	}
	e := load()
	wantData(t, e, want)
	e.Release()

	for _, w := range someWrites(1, 2) {
		want = appendWrite(t, s, want, w)
	}
	e = load()
	wantData(t, e, want)
	e.Release()

	for _, w := range someWrites(3, 30) {
		want = appendWrite(t, s, want, w)
	}
	e = load()
	wantData(t, e, want)
	e.Release()

	// Compacted at 30: the base alone, then with writes after it.
	if err := s.Compact(ctx, liveID, 30, decoy.Data{Bytes: want.Bytes()}); err != nil {
		t.Fatal(err)
	}
	e = load()
	wantData(t, e, want)
	e.Release()
	for _, w := range someWrites(31, 36) {
		want = appendWrite(t, s, want, w)
	}
	e = load()
	wantData(t, e, want)
	e.Release()

	// A write in the log that does not apply (a record not there)
	// changes nothing but the number, alone or among others.
	bad := remove(want.LiveSeq()+1, "", "999")
	if err := s.AppendWrite(ctx, liveID, bad, want.Size()); err != nil {
		t.Fatal(err)
	}
	e = load()
	if string(e.Bytes()) != string(want.Bytes()) || e.LiveSeq() != bad.Seq {
		t.Fatalf("after a write that does not apply: %s number %d", e.Bytes(), e.LiveSeq())
	}
	e.Release()
	skipped := want
	want = entryOf(t, string(skipped.Bytes()), bad.Seq)
	skipped.Release()
	for seq := bad.Seq + 1; seq <= bad.Seq+6; seq++ {
		want = appendWrite(t, s, want, create(seq, "", fmt.Sprintf(`{"id":%d}`, 1000+seq)))
	}
	e = load()
	if string(e.Bytes()) != string(want.Bytes()) || e.LiveSeq() != want.LiveSeq() {
		t.Fatalf("after a write that does not apply and others: %s number %d, want %s number %d", e.Bytes(), e.LiveSeq(), want.Bytes(), want.LiveSeq())
	}
	e.Release()

	// Reset: the version's data under a number of its own.
	m, err := s.ResetLive(ctx, liveID)
	if err != nil {
		t.Fatal(err)
	}
	e = load()
	defer e.Release()
	if string(e.Bytes()) != liveData || e.LiveSeq() != m.LiveSeq || e.Mock.ETag != jsondoc.ETag([]byte(liveData)) {
		t.Fatalf("after reset: %s number %d etag %s; want the version's data, number %d", e.Bytes(), e.LiveSeq(), e.Mock.ETag, m.LiveSeq)
	}
	want.Release()
}

// Without Live, the stored data is served, whatever the log holds.
func TestLiveOff(t *testing.T) {
	s := liveStore(t, liveData)
	want := entryOf(t, liveData, 0)
	want = appendWrite(t, s, want, create(1, "", `{"id":11}`))
	defer want.Release()
	c := mockcache.New(mockcache.Config{Store: s})
	e := mustGet(t, c)
	defer e.Release()
	if string(e.Bytes()) != liveData {
		t.Fatalf("data %s, want the stored data", e.Bytes())
	}
}

// PutLive installs only what is newer than the cached entry, of the same
// version.
func TestPutLive(t *testing.T) {
	ctx := context.Background()
	s := liveStore(t, liveData)
	c := mockcache.New(mockcache.Config{Store: s, Live: s})

	// Nothing cached: nothing installed.
	e0 := entryOf(t, liveData, 0)
	f0, err := e0.Apply(create(1, "", `{"id":11}`))
	if err != nil {
		t.Fatal(err)
	}
	c.PutLive(f0)
	if c.Peek(liveID) != nil {
		t.Fatal("PutLive installed an entry the cache did not hold")
	}
	f0.Release()
	e0.Release()

	e := mustGet(t, c)
	w1 := create(1, "", `{"id":11}`)
	f1, err := e.Apply(w1)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.AppendWrite(ctx, liveID, w1, f1.Size()); err != nil {
		t.Fatal(err)
	}
	f2, err := f1.Apply(remove(2, "", "11"))
	if err != nil {
		t.Fatal(err)
	}
	c.PutLive(f2)
	if c.Peek(liveID) != f2 {
		t.Fatal("PutLive did not install a newer entry")
	}
	c.PutLive(f1) // older: ignored
	if c.Peek(liveID) != f2 {
		t.Fatal("PutLive installed an older entry")
	}
	c.PutLive(e)
	if c.Peek(liveID) != f2 {
		t.Fatal("PutLive installed an older entry")
	}
	g := mustGet(t, c)
	if g != f2 {
		t.Fatalf("Get = number %d, want the installed entry", g.LiveSeq())
	}
	g.Release()
	for _, x := range []*mockcache.Entry{e, f1, f2} {
		x.Release()
	}
	// The cache's own reference keeps the installed entry readable.
	g = mustGet(t, c)
	if g.LiveSeq() != 2 || len(g.Bytes()) != len(liveData) {
		t.Fatalf("after release: number %d, %s", g.LiveSeq(), g.Bytes())
	}

	// Another version: the entry of the old one is not installed.
	h, err := g.Apply(create(3, "", `{"id":12}`))
	if err != nil {
		t.Fatal(err)
	}
	defer h.Release()
	g.Release()
	if _, err := s.ResetLive(ctx, liveID); err != nil {
		t.Fatal(err)
	}
	c.Remove(liveID)
	g = mustGet(t, c)
	defer g.Release()
	c.PutLive(h)
	if c.Peek(liveID) != g {
		t.Fatal("PutLive installed the entry of a version reset since")
	}
}

// CatchUp applies the writes another replica made, and loads the mock
// again when they are gone from the log.
func TestCatchUp(t *testing.T) {
	ctx := context.Background()
	s := liveStore(t, liveData)
	c := mockcache.New(mockcache.Config{Store: s, Live: s})
	e := mustGet(t, c)
	want := entryOf(t, liveData, 0)
	for _, w := range someWrites(1, 2) {
		want = appendWrite(t, s, want, w)
	}
	loads := s.loads.Load()
	e, err := c.CatchUp(ctx, e)
	if err != nil {
		t.Fatal(err)
	}
	wantData(t, e, want)
	if s.loads.Load() != loads {
		t.Fatal("CatchUp loaded the mock again")
	}
	if c.Peek(liveID) != e {
		t.Fatal("CatchUp did not install what it made")
	}
	// Current: the same entry back.
	if f, err := c.CatchUp(ctx, e); err != nil || f != e {
		t.Fatalf("CatchUp of a current entry = %v, %v", f, err)
	}

	// Writes compacted away: loaded again.
	for _, w := range someWrites(3, 9) {
		want = appendWrite(t, s, want, w)
	}
	if err := s.Compact(ctx, liveID, 9, decoy.Data{Bytes: want.Bytes()}); err != nil {
		t.Fatal(err)
	}
	// e is at 2, behind the base at 9.
	e, err = c.CatchUp(ctx, e)
	if err != nil {
		t.Fatal(err)
	}
	wantData(t, e, want)
	if s.loads.Load() == loads {
		t.Fatal("CatchUp past a compaction did not load the mock")
	}
	e.Release()
	want.Release()
}

// An announcement of another replica's write is seen by the next read,
// without loading the mock again.
func TestAdvance(t *testing.T) {
	s := liveStore(t, liveData)
	c := mockcache.New(mockcache.Config{Store: s, Live: s})
	e := mustGet(t, c)
	e.Release()
	want := entryOf(t, liveData, 0)
	defer func() { want.Release() }()
	loads := s.loads.Load()
	for round := range 20 {
		for _, w := range someWrites(int64(3*round+1), int64(3*round+3)) {
			want = appendWrite(t, s, want, w)
		}
		c.Advance(liveID, want.LiveSeq())
		e := mustGet(t, c)
		wantData(t, e, want)
		e.Release()
	}
	c.Advance(liveID, 1) // behind: nothing
	c.Advance("00000000-0000-4000-8000-000000000099", 5)
	e = mustGet(t, c)
	wantData(t, e, want)
	e.Release()
	if s.loads.Load() != loads {
		t.Fatalf("announcements loaded the mock %d times", s.loads.Load()-loads)
	}
}

// On a shared store, the check of an entry catches up with writes it did
// not hear of, without loading the mock again.
func TestLiveRevalidate(t *testing.T) {
	s := liveStore(t, liveData)
	now := time.Unix(1000, 0)
	c := mockcache.New(mockcache.Config{Store: s, Live: s, Shared: true, Now: func() time.Time { return now }})
	e := mustGet(t, c)
	e.Release()
	want := entryOf(t, liveData, 0)
	defer func() { want.Release() }()
	loads := s.loads.Load()
	for _, w := range someWrites(1, 5) {
		want = appendWrite(t, s, want, w)
		e := mustGet(t, c) // not listening: checked each time
		wantData(t, e, want)
		e.Release()
	}
	if s.loads.Load() != loads {
		t.Fatalf("the checks loaded the mock %d times", s.loads.Load()-loads)
	}
	// New settings, writes kept.
	name := "renamed"
	if _, err := s.UpdateMock(context.Background(), liveID, decoy.MockUpdate{Name: &name}); err != nil {
		t.Fatal(err)
	}
	e = mustGet(t, c)
	if e.Mock.Name != name {
		t.Fatalf("name %q after the settings changed", e.Mock.Name)
	}
	wantData(t, e, want)
	e.Release()
}

// Reads, announcements and installs at once (run with -race): every read
// sees whole states, in order, and the last announced one in the end.
func TestLiveConcurrent(t *testing.T) {
	s := liveStore(t, liveData)
	c := mockcache.New(mockcache.Config{Store: s, Live: s})
	e := mustGet(t, c)
	e.Release()
	want := entryOf(t, liveData, 0)
	defer func() { want.Release() }()
	stop := make(chan struct{})
	errs := make(chan error, 4)
	for range 3 {
		go func() {
			last := int64(0)
			for {
				select {
				case <-stop:
					errs <- nil
					return
				default:
				}
				e, err := c.Get(context.Background(), liveID)
				if err != nil {
					errs <- err
					return
				}
				if e.LiveSeq() < last || e.Size() != int64(len(e.Bytes())) {
					errs <- fmt.Errorf("read number %d after %d, size %d of %d bytes", e.LiveSeq(), last, e.Size(), len(e.Bytes()))
					e.Release()
					return
				}
				last = e.LiveSeq()
				if view, ok := e.Records(nil); ok {
					query.FindRecord(view, []string{"id"}, []byte("3"))
				}
				e.Release()
			}
		}()
	}
	for _, w := range someWrites(1, 60) {
		want = appendWrite(t, s, want, w)
		if w.Seq%2 == 0 {
			c.Advance(liveID, w.Seq) // another replica's write
			continue
		}
		// This replica's: applied to its entry, installed.
		e := mustGet(t, c)
		if e.LiveSeq() == w.Seq-1 {
			f, err := e.Apply(w)
			if err != nil {
				t.Fatal(err)
			}
			c.PutLive(f)
			f.Release()
		}
		e.Release()
	}
	c.Advance(liveID, want.LiveSeq())
	e = mustGet(t, c)
	wantData(t, e, want)
	e.Release()
	close(stop)
	for range 3 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}

// A write's entry is read after the cache let go of the entry it was made
// from: what a read builds over it (here a sort order, carried over from
// the entry before when the change leaves the sort key alone) reads that
// entry's document, which must still be there. It was mapped, and
// unmapped once released: a PATCH, then an order_by read of the
// collection, stopped the server with a SIGSEGV.
func TestWriteOutlivesMappedOrigin(t *testing.T) {
	mapAll(t)
	s := liveStore(t, ageCollection(500))
	c := mockcache.New(mockcache.Config{Store: s, Live: s})
	mapped := docfile.MappedDocs()
	e := mustGet(t, c)
	if docfile.MappedDocs() != mapped+1 {
		t.Fatal("the document is not mapped: the test tests nothing")
	}
	w := replace(1, "", "17", `{"id":17,"age":26,"name":"renamed"}`) // the same age: the order carries over
	f, err := e.Apply(w)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.AppendWrite(context.Background(), liveID, w, f.Size()); err != nil {
		t.Fatal(err)
	}
	c.PutLive(f)
	e.Release() // the writer's; the cache let go of its own when f came in
	runtime.GC()

	q, err := query.Compile(query.ParseParams("order_by=age"))
	if err != nil {
		t.Fatal(err)
	}
	a := f.Answer(q, "", false, "")
	var body bytes.Buffer
	a.WriteBody(&body)
	a.Release()
	if !strings.HasPrefix(body.String(), `[{"id":0,"age":0,`) {
		t.Fatalf("ordered by age: %.80s", body.String())
	}
	f.Release()
	c.Flush()
	if n := docfile.MappedDocs(); n != mapped {
		t.Fatalf("%d documents mapped once the entries are gone, %d before", n, mapped)
	}
}

// An entry made by a write over a mapped document keeps that mapping
// open (see TestWriteOutlivesMappedOrigin), so --max-open-documents counts
// it: reading other mapped mocks past the bound drops it, its mapping goes,
// and the mock's next read has the write.
func TestWriteOverMappedDocumentCounts(t *testing.T) {
	mapAll(t)
	const bound = 2
	s := liveStore(t, ageCollection(500))
	for i := range 3 {
		m := &decoy.Mock{ID: mockID(i), ContentType: "application/json", Status: 200, ETag: jsondoc.ETag([]byte(mockDoc(i)))}
		if _, err := s.CreateMock(context.Background(), m, decoy.Data{Bytes: []byte(mockDoc(i))}); err != nil {
			t.Fatal(err)
		}
	}
	c := mockcache.New(mockcache.Config{Store: s, Live: s, MaxOpenDocuments: bound})
	base := docfile.MappedDocs()
	e := mustGet(t, c)
	w := replace(1, "", "17", `{"id":17,"age":26,"name":"renamed"}`)
	f, err := e.Apply(w)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.AppendWrite(context.Background(), liveID, w, f.Size()); err != nil {
		t.Fatal(err)
	}
	c.PutLive(f)
	e.Release()
	f.Release()
	if _, mapped := c.Len(); mapped != 1 || docfile.MappedDocs()-base != 1 {
		t.Fatalf("after the write: the cache counts %d mapped, %d documents are", mapped, docfile.MappedDocs()-base)
	}
	for i := range 3 {
		o, err := c.Get(context.Background(), mockID(i))
		if err != nil {
			t.Fatal(err)
		}
		o.Release()
		_, mapped := c.Len()
		if n := docfile.MappedDocs() - base; mapped > bound || n > bound {
			t.Fatalf("after reading mock %d: the cache counts %d mapped, %d documents are; bound %d", i, mapped, n, bound)
		}
	}
	g := mustGet(t, c)
	defer g.Release()
	if !strings.Contains(string(g.Bytes()), `"name":"renamed"`) {
		t.Fatalf("the write is lost once its entry was dropped: %.80s", g.Bytes())
	}
}

// A write in the log that applies to nothing (its collection is not
// there: a log written by another, older replica, or by hand) leaves the
// data as it was, in an entry of its own that is read once the entry it
// was caught up from is released: its bytes must be its own, not the
// mapping of the stored document, unmapped then (a SIGSEGV, found by a
// review of cac21d4).
func TestNothingAppliedOverMappedDocument(t *testing.T) {
	mapAll(t)
	data := ageCollection(500)
	s := liveStore(t, data)
	if err := s.AppendWrite(context.Background(), liveID, remove(1, "nope", "999"), int64(len(data))); err != nil {
		t.Fatal(err)
	}
	c := mockcache.New(mockcache.Config{Store: s, Live: s})
	e := mustGet(t, c) // the stored document, mapped, caught up over a write that applies to nothing
	runtime.GC()
	if string(e.Bytes()) != data || e.LiveSeq() != 1 {
		t.Fatalf("entry at number %d holds %.60s", e.LiveSeq(), e.Bytes())
	}
	e.Release()
}

// ageCollection is a collection of n records with an id, an age out of
// order and a name.
func ageCollection(n int) string {
	var b strings.Builder
	b.WriteByte('[')
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"id":%d,"age":%d,"name":"user %d"}`, i, (i*37)%90, i)
	}
	b.WriteByte(']')
	return b.String()
}

// An entry counts the bytes of the writes it was made with since its
// base, through single writes and batches alike, and from where a
// compaction of one of them left off.
func TestLogBytes(t *testing.T) {
	s := liveStore(t, ageCollection(10))
	c := mockcache.New(mockcache.Config{Store: s, Live: s})
	e := mustGet(t, c)
	defer e.Release()
	if e.LogBytes() != 0 {
		t.Fatalf("a loaded entry counts %d bytes of writes", e.LogBytes())
	}
	rec := `{"id":3,"age":1,"name":"` + strings.Repeat("x", 1000) + `"}`
	f, err := e.Apply(replace(1, "", "3", rec))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Release()
	one := f.LogBytes()
	if one < 1000 || one > 1200 {
		t.Fatalf("one write of a 1 KB record counts %d bytes", one)
	}
	g, err := f.Apply(replace(2, "", "3", rec))
	if err != nil {
		t.Fatal(err)
	}
	defer g.Release()
	if g.LogBytes() != 2*one {
		t.Errorf("two writes count %d bytes, want %d", g.LogBytes(), 2*one)
	}
	f.MarkCompacted() // a compaction wrote f's data as the base
	if g.LogBytes() != one || f.LogBytes() != 0 {
		t.Errorf("after compacting f: f counts %d, g %d; want 0 and %d", f.LogBytes(), g.LogBytes(), one)
	}
	h, err := g.Apply(replace(3, "", "3", rec))
	if err != nil {
		t.Fatal(err)
	}
	defer h.Release()
	if h.LogBytes() != 2*one {
		t.Errorf("a write after: %d, want %d", h.LogBytes(), 2*one)
	}
}
