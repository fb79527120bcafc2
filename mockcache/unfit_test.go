package mockcache_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/decoy-mock/decoy"
	"github.com/decoy-mock/decoy/docfile"
	"github.com/decoy-mock/decoy/jsondoc"
	"github.com/decoy-mock/decoy/mockcache"
)

// On a shared store, a read whose check (maxTrust) finds new settings that
// another replica made (its announcement missed) gets them; every read
// after it must too, as with a cached entry, which the check replaces.
func TestUnfitSettingsChecked(t *testing.T) {
	ctx := context.Background()
	s := liveStore(t, liveData)
	now := time.Unix(1000, 0)
	c := mockcache.New(mockcache.Config{Store: s, Live: s, Shared: true, MaxBytes: 1, Now: func() time.Time { return now }})
	c.Listening()
	held := mustGet(t, c) // a long read (a slow client) holds the entry throughout
	defer held.Release()
	status := 503
	if _, err := s.UpdateMock(ctx, liveID, decoy.MockUpdate{Status: &status}); err != nil {
		t.Fatal(err)
	}
	for i := range 6 {
		now = now.Add(300 * time.Millisecond)
		e := mustGet(t, c)
		got := e.Mock.Status
		e.Release()
		if i >= 1 && got != status {
			t.Fatalf("read %d (%v after the settings changed, a read saw them already): status %d, want %d", i, time.Duration(i+1)*300*time.Millisecond, got, status)
		}
	}
}

// gateStore holds the first load of mock id until gate is closed: before
// it reads the store, or, with afterRead, after (a load that read the data
// before a write, and ends after it).
type gateStore struct {
	*countingStore
	id            string
	afterRead     bool
	started, gate chan struct{}
	once          sync.Once
}

func (s *gateStore) FindMockData(ctx context.Context, id string) (*decoy.Mock, decoy.Data, error) {
	hold := func() {
		if id == s.id {
			s.once.Do(func() { close(s.started); <-s.gate })
		}
	}
	if !s.afterRead {
		hold()
		return s.countingStore.FindMockData(ctx, id)
	}
	m, d, err := s.countingStore.FindMockData(ctx, id)
	hold()
	return m, d, err
}

// A write to a mock too large to cache must not keep another mock, being
// loaded meanwhile, out of the cache (nor split the reads of it among
// several loads).
func TestUnfitWriteKeepsOtherLoads(t *testing.T) {
	ctx := context.Background()
	var b strings.Builder
	b.WriteString("[")
	for i := 1; i <= 5000; i++ {
		if i > 1 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `{"id":%d}`, i)
	}
	b.WriteString("]")
	s := liveStore(t, b.String()) // liveID: ~50 KB, over the bound
	const small = "00000000-0000-4000-8000-000000000077"
	m := &decoy.Mock{ID: small, ContentType: "application/json", Status: 200, ETag: jsondoc.ETag([]byte(liveData))}
	if _, err := s.CreateMock(ctx, m, decoy.Data{Bytes: []byte(liveData)}); err != nil {
		t.Fatal(err)
	}
	gs := &gateStore{countingStore: s, id: small, started: make(chan struct{}), gate: make(chan struct{})}
	c := mockcache.New(mockcache.Config{Store: gs, Live: gs, MaxBytes: 16 << 10})

	u := mustGet(t, c)
	if c.Peek(liveID) != nil {
		t.Fatal("the large mock is cached: raise its size")
	}
	done := make(chan *mockcache.Entry)
	go func() {
		e, err := c.Get(ctx, small)
		if err != nil {
			t.Error(err)
		}
		done <- e
	}()
	<-gs.started
	// A write to the large mock, as commitWrite makes it, while the small one loads.
	w := create(1, "", `{"id":100001}`)
	f, err := u.Apply(w)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.AppendWrite(ctx, liveID, w, f.Size()); err != nil {
		t.Fatal(err)
	}
	c.PutLive(f)
	f.Release()
	u.Release()
	close(gs.gate)
	if e := <-done; e != nil {
		e.Release()
	}
	if c.Peek(small) == nil {
		t.Fatal("the small mock, loaded while the large one was written, is not cached: its next read loads it again")
	}
}

// A load of a mock too large to keep that read the store before a write
// made here, and ends after it, is not shared: the reads after the write
// get what it wrote, even while the read of that load goes on.
func TestUnfitLoadBeforeWriteNotShared(t *testing.T) {
	ctx := context.Background()
	s := liveStore(t, liveData)
	ls := &gateStore{countingStore: s, id: liveID, afterRead: true, started: make(chan struct{}), gate: make(chan struct{})}
	c := mockcache.New(mockcache.Config{Store: ls, Live: ls, MaxBytes: 1}) // nothing fits
	done := make(chan *mockcache.Entry)
	go func() {
		e, err := c.Get(ctx, liveID)
		if err != nil {
			t.Error(err)
		}
		done <- e
	}()
	<-ls.started
	base, err := mockcache.NewEntry(&decoy.Mock{ID: liveID, ContentType: "application/json", Status: 200, Size: int64(len(liveData)),
		ETag: jsondoc.ETag([]byte(liveData)), Version: 1}, docfile.FromBytes([]byte(liveData)))
	if err != nil {
		t.Fatal(err)
	}
	w := create(1, "", `{"id":11}`)
	f, err := base.Apply(w)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.AppendWrite(ctx, liveID, w, f.Size()); err != nil {
		t.Fatal(err)
	}
	c.PutLive(f)
	close(ls.gate)
	stale := <-done
	if stale == nil {
		t.Fatal("no entry")
	}
	defer stale.Release()
	if stale.LiveSeq() != 0 {
		t.Fatalf("the load ended before the write: number %d; the test wants one that read before it", stale.LiveSeq())
	}
	e := mustGet(t, c)
	defer e.Release()
	if e == stale {
		t.Fatal("the read after the write shares the load that read the store before it")
	}
	wantData(t, e, f)
	f.Release()
	base.Release()
}

// A mock too large for the bound is not kept, but the reads that overlap
// share one entry of it, loaded and parsed once, rather than one each; a
// write, or any change, makes the reads that come after it load the new
// data, and once the last read is done the entry goes.
func TestUnfitShared(t *testing.T) {
	ctx := context.Background()
	s := liveStore(t, liveData)
	c := mockcache.New(mockcache.Config{Store: s, Live: s, MaxBytes: 1}) // nothing fits
	a := mustGet(t, c)
	b := mustGet(t, c)
	if a != b || s.loads.Load() != 1 || c.Peek(liveID) != nil {
		t.Fatalf("two overlapping reads: the same entry %v, %d loads, cached %v; want one load, shared, not cached", a == b, s.loads.Load(), c.Peek(liveID) != nil)
	}

	// A write while a and b are read: the next read loads what it wrote.
	w1 := create(1, "", `{"id":11}`)
	f1, err := a.Apply(w1)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.AppendWrite(ctx, liveID, w1, f1.Size()); err != nil {
		t.Fatal(err)
	}
	c.PutLive(f1)
	d := mustGet(t, c)
	if d == a || s.loads.Load() != 2 {
		t.Fatalf("the read after a write shares the entry before it (%v), %d loads", d == a, s.loads.Load())
	}
	wantData(t, d, f1)
	f1.Release()
	a.Release()
	b.Release()

	// Any other change: the same.
	c.Remove(liveID)
	e := mustGet(t, c)
	if e == d || s.loads.Load() != 3 {
		t.Fatalf("the read after Remove shares the entry before it (%v), %d loads", e == d, s.loads.Load())
	}
	d.Release()
	e.Release()

	// Nobody reads it: the next read loads it again.
	g := mustGet(t, c)
	if g == e || s.loads.Load() != 4 {
		t.Fatalf("the read after the last one shares its entry (%v), %d loads", g == e, s.loads.Load())
	}
	wantData(t, g, f1)
	g.Release()
}

// Cache.unfit names at most maxUnfit mocks: reading more mocks too large
// to keep than that, one after another, leaves it at the bound, and each
// is still loaded whole at its read.
func TestUnfitBounded(t *testing.T) {
	store := &fileStore{dir: t.TempDir()}
	const mocks = mockcache.MaxUnfit + 10
	for i := range mocks {
		store.put(t, mockID(i), mockDoc(i))
	}
	c := mockcache.New(mockcache.Config{Store: store, MaxBytes: 1}) // nothing fits
	for i := range mocks {
		e, err := c.Get(context.Background(), mockID(i))
		if err != nil {
			t.Fatal(err)
		}
		if string(e.Bytes()) != mockDoc(i) {
			t.Fatalf("mock %d: %s", i, e.Bytes())
		}
		e.Release()
		if n := mockcache.UnfitLen(c); n > mockcache.MaxUnfit {
			t.Fatalf("after %d mocks, %d named, bound %d", i+1, n, mockcache.MaxUnfit)
		}
	}
	if got := store.loads.Load(); got != mocks {
		t.Errorf("%d loads for %d mocks", got, mocks)
	}
}
