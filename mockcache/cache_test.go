package mockcache_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/decoy-mock/decoy"
	"github.com/decoy-mock/decoy/docfile"
	"github.com/decoy-mock/decoy/jsondoc"
	"github.com/decoy-mock/decoy/mockcache"
	"github.com/decoy-mock/decoy/query"
)

// fileStore keeps each mock's document in a file of dir, as the sqlite
// store does, and counts the loads.
type fileStore struct {
	decoy.Store // what the tests do not call
	dir         string
	loads       atomic.Int64
}

func (s *fileStore) path(id string) string { return filepath.Join(s.dir, id) }

func (s *fileStore) put(t *testing.T, id, doc string) {
	t.Helper()
	if err := os.WriteFile(s.path(id), []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
}

func (s *fileStore) FindMockData(_ context.Context, id string) (*decoy.Mock, decoy.Data, error) {
	f, err := os.Open(s.path(id))
	if os.IsNotExist(err) {
		return nil, decoy.Data{}, decoy.Errorf(decoy.ENOTFOUND, "Mock api not found")
	}
	if err != nil {
		return nil, decoy.Data{}, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, decoy.Data{}, err
	}
	s.loads.Add(1)
	m := &decoy.Mock{ID: id, ContentType: "application/json", Status: 200, Size: st.Size(), Version: 1}
	return m, decoy.Data{File: f}, nil
}

// mapAll has every document mapped, however small, for the test.
func mapAll(t *testing.T) {
	old := docfile.MinMapSize
	docfile.MinMapSize = 0
	t.Cleanup(func() { docfile.MinMapSize = old })
}

func mockID(i int) string { return fmt.Sprintf("00000000-0000-4000-8000-%012d", i) }

func mockDoc(i int) string { return fmt.Sprintf(`[{"mock":%d,"text":"document of mock %d"}]`, i, i) }

// openFiles counts the process's descriptors open on files under dir.
func openFiles(t *testing.T, dir string) int {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd")
	}
	n := 0
	for _, fd := range fds {
		if target, err := os.Readlink(filepath.Join("/proc/self/fd", fd.Name())); err == nil && strings.HasPrefix(target, dir) {
			n++
		}
	}
	return n
}

// With MaxOpenDocuments, the cache never keeps more mapped documents than
// that: reading thousands of mocks in turn, the least recently read are
// dropped and their documents unmapped at once, no file stays open, and a
// dropped mock is loaded again, whole, at its next read.
func TestMaxOpenDocuments(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no mapping")
	}
	mapAll(t)
	const bound, mocks = 8, 3000
	store := &fileStore{dir: t.TempDir()}
	for i := range mocks {
		store.put(t, mockID(i), mockDoc(i))
	}
	evicted := 0
	c := mockcache.New(mockcache.Config{Store: store, MaxOpenDocuments: bound, OnEvict: func(n int) { evicted += n }})
	base := docfile.MappedDocs()
	read := func(i int) {
		t.Helper()
		e, err := c.Get(context.Background(), mockID(i))
		if err != nil {
			t.Fatal(err)
		}
		if got := string(e.Bytes()); got != mockDoc(i) {
			t.Fatalf("mock %d: %q", i, got)
		}
		e.Release()
		entries, mapped := c.Len()
		if mapped > bound || entries > bound {
			t.Fatalf("after reading mock %d: %d entries, %d mapped; bound %d", i, entries, mapped, bound)
		}
		if n := docfile.MappedDocs() - base; n != int64(mapped) {
			t.Fatalf("after reading mock %d: %d documents mapped, the cache holds %d", i, n, mapped)
		}
	}
	for round := range 2 {
		for i := range mocks {
			read(i)
		}
		if n := openFiles(t, store.dir); n != 0 {
			t.Fatalf("round %d: %d files of documents open", round, n)
		}
	}
	if got := store.loads.Load(); got != 2*mocks {
		t.Errorf("%d loads for reading %d mocks twice through a cache of %d", got, mocks, bound)
	}
	if evicted < 2*mocks-bound {
		t.Errorf("OnEvict told of %d entries dropped, want at least %d", evicted, 2*mocks-bound)
	}
	// The most recently read stay: reading them again loads nothing.
	loads := store.loads.Load()
	for i := mocks - bound + bound/8; i < mocks; i++ {
		read(i)
	}
	if got := store.loads.Load() - loads; got != 0 {
		t.Errorf("the mocks read last were loaded again %d times", got)
	}
	c.Flush()
	if n := docfile.MappedDocs() - base; n != 0 {
		t.Errorf("%d documents mapped after a flush", n)
	}
}

// A document the cache drops while a request reads it stays mapped until
// that request releases it, then goes at once: whether dropped for the
// bound, for a delete, for new data or by a flush.
func TestDroppedWhileRead(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no mapping")
	}
	mapAll(t)
	ctx := context.Background()
	store := &fileStore{dir: t.TempDir()}
	for i := range 4 {
		store.put(t, mockID(i), mockDoc(i))
	}
	for _, tc := range []struct {
		name string
		drop func(c *mockcache.Cache)
	}{
		{"bound", func(c *mockcache.Cache) {
			for i := 1; i < 4; i++ {
				e, err := c.Get(ctx, mockID(i))
				if err != nil {
					t.Fatal(err)
				}
				e.Release()
			}
		}},
		{"remove", func(c *mockcache.Cache) { c.Remove(mockID(0)) }},
		{"new data", func(c *mockcache.Cache) {
			e, err := mockcache.NewEntry(&decoy.Mock{ID: mockID(0), ContentType: "application/json", Status: 200}, docfile.FromBytes([]byte(`[0]`)))
			if err != nil {
				t.Fatal(err)
			}
			c.PutAt(e, c.Generation())
			e.Release()
		}},
		{"flush", func(c *mockcache.Cache) { c.Flush() }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := mockcache.New(mockcache.Config{Store: store, MaxOpenDocuments: 2})
			base := docfile.MappedDocs()
			e, err := c.Get(ctx, mockID(0))
			if err != nil {
				t.Fatal(err)
			}
			tc.drop(c)
			if c.Peek(mockID(0)) == e {
				t.Fatal("not dropped")
			}
			if string(e.Bytes()) != mockDoc(0) {
				t.Fatalf("read %q while held", e.Bytes())
			}
			_, mapped := c.Len()
			if n := docfile.MappedDocs() - base; n != int64(mapped)+1 {
				t.Fatalf("%d documents mapped while the dropped one is read, the cache holds %d", n, mapped)
			}
			e.Release()
			if n := docfile.MappedDocs() - base; n != int64(mapped) {
				t.Fatalf("%d documents mapped once released, the cache holds %d", n, mapped)
			}
			c.Flush()
		})
	}
}

// New settings keep the cached document (one mapping, shared), and a
// reader of the old entry and one of the new share its references.
func TestSettingsShareDocument(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no mapping")
	}
	mapAll(t)
	ctx := context.Background()
	store := &fileStore{dir: t.TempDir()}
	store.put(t, mockID(0), mockDoc(0))
	c := mockcache.New(mockcache.Config{Store: store, MaxOpenDocuments: 4})
	base := docfile.MappedDocs()
	old, err := c.Get(ctx, mockID(0))
	if err != nil {
		t.Fatal(err)
	}
	m := *old.Mock
	m.Name = "renamed"
	c.PutSettingsAt(&m, c.Generation())
	e, err := c.Get(ctx, mockID(0))
	if err != nil {
		t.Fatal(err)
	}
	if e.Mock.Name != "renamed" || string(e.Bytes()) != mockDoc(0) || store.loads.Load() != 1 {
		t.Fatalf("name %q, data %q, %d loads", e.Mock.Name, e.Bytes(), store.loads.Load())
	}
	old.Release()
	c.Remove(mockID(0))
	if string(e.Bytes()) != mockDoc(0) || docfile.MappedDocs()-base != 1 {
		t.Fatal("document gone while the new entry is read")
	}
	e.Release()
	if n := docfile.MappedDocs() - base; n != 0 {
		t.Fatalf("%d documents mapped once every reader is done", n)
	}
}

// Concurrent reads of more mocks than the bound, many of them of the same
// mock at once (sharing its load): every read gets its document whole, and
// once they are done only what the cache holds stays mapped.
func TestMaxOpenDocumentsConcurrent(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no mapping")
	}
	mapAll(t)
	const bound, mocks, readers = 4, 64, 8
	store := &fileStore{dir: t.TempDir()}
	for i := range mocks {
		store.put(t, mockID(i), mockDoc(i))
	}
	c := mockcache.New(mockcache.Config{Store: store, MaxOpenDocuments: bound})
	base := docfile.MappedDocs()
	var wg sync.WaitGroup
	errs := make(chan error, readers)
	for r := range readers {
		wg.Go(func() {
			for k := range 4 * mocks {
				i := (k/2 + r) % mocks // neighbours read the same mocks
				e, err := c.Get(context.Background(), mockID(i))
				if err != nil {
					errs <- err
					return
				}
				doc := jsondoc.ETag(e.Bytes()) // reads every byte
				if string(e.Bytes()) != mockDoc(i) || doc != jsondoc.ETag([]byte(mockDoc(i))) {
					errs <- fmt.Errorf("mock %d: %q", i, e.Bytes())
					e.Release()
					return
				}
				e.Release()
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	_, mapped := c.Len()
	if mapped > bound {
		t.Errorf("%d mapped, bound %d", mapped, bound)
	}
	if n := docfile.MappedDocs() - base; n != int64(mapped) {
		t.Errorf("%d documents mapped once reads are done, the cache holds %d", n, mapped)
	}
	c.Flush()
}

// What a read builds over its document (a column, an index, a kept answer)
// is held to the bound when the read ends, not only at the next read: an
// idle cache is within --max-cache-bytes.
func TestBoundHeldAfterReads(t *testing.T) {
	store := &fileStore{dir: t.TempDir()}
	big := func(i int) string {
		var b strings.Builder
		b.WriteByte('[')
		for k := range 2000 {
			if k > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `{"n":%d,"name":"record %d of mock %d","city":"c%d"}`, k, k, i, k%50)
		}
		b.WriteByte(']')
		return b.String()
	}
	for i := range 3 {
		store.put(t, mockID(i), big(i))
	}
	// A bound too large to drop anything, lowered below.
	c := mockcache.New(mockcache.Config{Store: store, MaxBytes: 1 << 40})
	ctx := context.Background()
	read := func(i int, raw string) {
		t.Helper()
		e, err := c.Get(ctx, mockID(i))
		if err != nil {
			t.Fatal(err)
		}
		var q *query.Query
		if raw != "" {
			if q, err = query.Compile(query.ParseParams(raw)); err != nil {
				t.Fatal(err)
			}
		}
		a := e.Answer(q, raw, true, "")
		a.WriteBody(io.Discard)
		e.Release()
	}
	for i := range 3 {
		read(i, "")
	}
	// Room for the three documents as they are, and a little more.
	bound := c.Footprint() + c.Footprint()/32
	c.SetMaxBytes(bound)
	// One query builds a column and its sort order over mock 0: more
	// than the room left, and nothing is read after it.
	read(0, "order_by=name")
	if fp := c.Footprint(); fp > bound {
		t.Errorf("idle cache holds %d bytes, over its bound of %d", fp, bound)
	}
}

// fieldsDoc is n records with fields f0 to f63, each ordering the records
// differently.
func fieldsDoc(n int) string {
	var b strings.Builder
	b.WriteByte('[')
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('{')
		for f := range 64 {
			if f > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `"f%d":%d`, f, (i*(f+1)*7919)%n)
		}
		b.WriteByte('}')
	}
	b.WriteByte(']')
	return b.String()
}

// answerOf reads mock id through c with the query string raw and returns
// the body, and the cache's footprint while the read still holds its
// entry and once it released it.
func answerOf(t *testing.T, c *mockcache.Cache, id, raw string) (body string, during, after int64) {
	t.Helper()
	e, err := c.Get(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	q, err := query.Compile(query.ParseParams(raw))
	if err != nil {
		t.Fatal(err)
	}
	a := e.Answer(q, raw, false, "")
	var b strings.Builder
	a.WriteBody(&b)
	during = c.Footprint()
	e.Release()
	return b.String(), during, c.Footprint()
}

// A document whose columns and sort orders together pass the bound keeps
// the cache within it at every read, the mock being read included (it
// loses its own structures least recently used), and every answer is the
// one a cache with room for everything gives.
func TestBoundHeldWhileRead(t *testing.T) {
	const n = 1000
	store := &fileStore{dir: t.TempDir()}
	store.put(t, mockID(0), fieldsDoc(n))
	roomy := mockcache.New(mockcache.Config{Store: store})
	if _, during, _ := answerOf(t, roomy, mockID(0), ""); during <= 0 {
		t.Fatal("no footprint")
	}
	// Room for the document and the structures of a few paths (a column
	// and an order of 1000 records take about 12 KB, 24 KB more while
	// the order is sorted).
	bound := roomy.Footprint() + 128<<10
	c := mockcache.New(mockcache.Config{Store: store, MaxBytes: bound})
	for f := range 32 {
		for _, raw := range []string{fmt.Sprintf("order_by=f%d&limit=3", f), fmt.Sprintf("filters=f%d%%3D%d", f, f), "order_by=f0&limit=1"} {
			got, during, after := answerOf(t, c, mockID(0), raw)
			if want, _, _ := answerOf(t, roomy, mockID(0), raw); got != want {
				t.Fatalf("%s: %.200s, want %.200s", raw, got, want)
			}
			if during > bound || after > bound {
				t.Fatalf("after %s: footprint %d while read, %d after, bound %d", raw, during, after, bound)
			}
		}
	}
	if e := c.Peek(mockID(0)); e == nil {
		t.Error("the document itself left, though it fits")
	}
}

// A query whose structures cannot fit at all beside its document is
// answered as with room for them, and the cache keeps the document alone.
func TestQueryTooLargeForBound(t *testing.T) {
	store := &fileStore{dir: t.TempDir()}
	store.put(t, mockID(0), fieldsDoc(3000))
	roomy := mockcache.New(mockcache.Config{Store: store})
	answerOf(t, roomy, mockID(0), "")
	bound := roomy.Footprint() + 4<<10
	c := mockcache.New(mockcache.Config{Store: store, MaxBytes: bound})
	for _, raw := range []string{"order_by=f3&limit=1", "order_by=f7&order_direction=desc&offset=2990", "filters=f1%3D7&order_by=f2", ""} {
		got, during, after := answerOf(t, c, mockID(0), raw)
		if want, _, _ := answerOf(t, roomy, mockID(0), raw); got != want {
			t.Fatalf("%s: %.200s, want %.200s", raw, got, want)
		}
		if during > bound || after > bound {
			t.Fatalf("after %s: footprint %d while read, %d after, bound %d", raw, during, after, bound)
		}
	}
	if c.Peek(mockID(0)) == nil {
		t.Error("the document left")
	}
}

// A document larger than the bound is served, whole or queried, and not
// kept: the cache stays within its bound.
func TestDocumentLargerThanBound(t *testing.T) {
	store := &fileStore{dir: t.TempDir()}
	doc := fieldsDoc(500)
	store.put(t, mockID(0), doc)
	store.put(t, mockID(1), mockDoc(1))
	const bound = 64 << 10
	c := mockcache.New(mockcache.Config{Store: store, MaxBytes: bound})
	answerOf(t, c, mockID(1), "")
	for _, raw := range []string{"", "order_by=f1&limit=2", "filters=f2%3D4"} {
		got, during, after := answerOf(t, c, mockID(0), raw)
		if raw == "" && got != doc {
			t.Fatalf("whole document: %d bytes, want %d", len(got), len(doc))
		}
		if during > bound || after > bound {
			t.Fatalf("after %q: footprint %d while read, %d after, bound %d", raw, during, after, bound)
		}
	}
	if c.Peek(mockID(0)) != nil || c.Peek(mockID(1)) == nil {
		t.Errorf("the large document cached %v, the small one %v", c.Peek(mockID(0)) != nil, c.Peek(mockID(1)) != nil)
	}
}
