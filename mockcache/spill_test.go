package mockcache_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/decoy-mock/decoy/mockcache"
	"github.com/decoy-mock/decoy/query"
)

// gzipAnswer reads mock id whole through c as a client that accepts gzip,
// and returns the answer's body as written, its Length, whether it was
// held in memory (Bytes), and the cache's footprint and heap bytes then.
func gzipAnswer(t *testing.T, c *mockcache.Cache, id string) (body []byte, length int, inMemory bool, footprint, heap int64) {
	t.Helper()
	e, err := c.Get(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Release()
	a := e.Answer(nil, "", true, "")
	defer a.Release()
	if !a.Gzip {
		t.Fatal("not gzipped")
	}
	var b bytes.Buffer
	a.WriteBody(&b)
	return b.Bytes(), a.Length, a.Bytes() != nil, c.Footprint(), c.HeapBytes()
}

// The gzipped copy of a large document is kept in a file of the spill
// folder, not in memory: counted in the cache's footprint but not in its
// heap bytes, sent whole with its length known, the same bytes as a cache
// that keeps it in memory sends; and the file is gone once the mock leaves
// the cache.
func TestGzipCopySpilled(t *testing.T) {
	dir, spillDir := t.TempDir(), t.TempDir()
	store := &fileStore{dir: dir}
	id := mockID(1)
	store.put(t, id, fieldsDoc(2000)) // about 1.4 MB, gzipped about 400 KB
	inMemory := mockcache.New(mockcache.Config{Store: store})
	spilling := mockcache.New(mockcache.Config{Store: store, SpillDir: spillDir})

	want, wantLen, held, memFootprint, _ := gzipAnswer(t, inMemory, id)
	if !held || wantLen != len(want) {
		t.Fatalf("without a spill folder: held in memory %v, Length %d for %d bytes", held, wantLen, len(want))
	}
	if wantLen < 256<<10 {
		t.Fatalf("the gzipped copy is %d bytes: too small for the test", wantLen)
	}
	before := spilling.Footprint()
	for range 2 { // made, then sent from the file
		got, n, held, footprint, heap := gzipAnswer(t, spilling, id)
		if !bytes.Equal(got, want) || n != len(want) {
			t.Fatalf("spilled: %d bytes, Length %d; want the %d bytes kept in memory", len(got), n, len(want))
		}
		if held {
			t.Error("the spilled copy is said to be held in memory")
		}
		if footprint != memFootprint || footprint-before < int64(len(want)) {
			t.Errorf("footprint %d, %d without the spill folder: the file's bytes must be counted", footprint, memFootprint)
		}
		if heap > footprint-int64(len(want)) {
			t.Errorf("heap bytes %d of a footprint of %d: the file's %d bytes counted in the heap", heap, footprint, len(want))
		}
	}
	zr, err := gzip.NewReader(bytes.NewReader(want))
	if err != nil {
		t.Fatal(err)
	}
	if plain, _ := io.ReadAll(zr); string(plain) != fieldsDoc(2000) {
		t.Fatal("the gzipped copy is not the document")
	}
	if files := spillFiles(t, spillDir); files != 1 {
		t.Fatalf("%d files in the spill folder, want 1", files)
	}
	spilling.Flush()
	deadline := time.Now().Add(5 * time.Second)
	for spillFiles(t, spillDir) > 0 {
		if time.Now().After(deadline) {
			t.Fatal("the spilled copy is still there after the mock left the cache")
		}
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
}

// A gzipped copy too small to spill is kept in memory, sent in one write
// with its head, though the cache has a spill folder: that of a small
// document, and that of a large one that compresses well.
func TestSmallGzipCopyInMemory(t *testing.T) {
	for name, doc := range map[string]string{
		"small":      fieldsDoc(100),
		"compressed": "[" + strings.Repeat(`{"a":1},`, 50_000) + `{"a":1}]`,
	} {
		t.Run(name, func(t *testing.T) {
			store := &fileStore{dir: t.TempDir()}
			id := mockID(1)
			store.put(t, id, doc)
			c := mockcache.New(mockcache.Config{Store: store, SpillDir: t.TempDir()})
			body, n, held, _, _ := gzipAnswer(t, c, id)
			if !held || n != len(body) {
				t.Errorf("held in memory %v, Length %d for %d bytes", held, n, len(body))
			}
		})
	}
}

// spillPrefix begins the names of the files the cache spills.
const spillPrefix = "kept-"

func spillFiles(t *testing.T, dir string) int {
	t.Helper()
	return len(spilledIn(t, dir))
}

// spilledIn lists the files the cache spilled in dir.
func spilledIn(t *testing.T, dir string) []os.FileInfo {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var files []os.FileInfo
	for _, e := range entries {
		if fi, err := e.Info(); err == nil && strings.HasPrefix(e.Name(), spillPrefix) {
			files = append(files, fi)
		}
	}
	return files
}

// queryAnswer reads mock id through c with the query string raw, as a
// client that accepts gzip or not, with room to keep any answer, and
// returns the body as written, its Length and whether it was held in
// memory.
func queryAnswer(t *testing.T, c *mockcache.Cache, id, raw string, gz bool) (body []byte, length int, inMemory bool) {
	t.Helper()
	e, err := c.Get(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Release()
	e.SetKeepBudget(1 << 30) // an answer as large as the document is kept
	q, err := query.Compile(query.ParseParams(raw))
	if err != nil {
		t.Fatal(err)
	}
	a := e.Answer(q, raw, gz, "")
	defer a.Release()
	var b bytes.Buffer
	a.WriteBody(&b)
	return b.Bytes(), a.Length, a.Bytes() != nil
}

// A kept answer over 4 MiB, and the gzipped copy of one of 256 KiB or
// more, are kept in files; a kept answer of 4 MiB or less stays in memory,
// to leave in one write with its head. Each is sent as a cache without a
// spill folder sends it.
func TestKeptAnswerSpilled(t *testing.T) {
	for _, tc := range []struct {
		name      string
		records   int
		plainHeld bool
		files     int
	}{
		{"1.4 MB", 2000, true, 1},
		{"5 MB", 7000, false, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := &fileStore{dir: t.TempDir()}
			id, raw := mockID(1), "order_by=f1"
			store.put(t, id, fieldsDoc(tc.records))
			inMemory := mockcache.New(mockcache.Config{Store: store})
			spillDir := t.TempDir()
			spilling := mockcache.New(mockcache.Config{Store: store, SpillDir: spillDir})
			for _, gz := range []bool{false, true} {
				for i := range 3 { // offered, kept, sent as kept
					want, wantLen, _ := queryAnswer(t, inMemory, id, raw, gz)
					got, n, held := queryAnswer(t, spilling, id, raw, gz)
					if !bytes.Equal(got, want) || n != wantLen {
						t.Fatalf("gzip %v, read %d: %d bytes, Length %d; want %d bytes, Length %d", gz, i, len(got), n, len(want), wantLen)
					}
					if wantHeld := tc.plainHeld && !gz; i == 2 && held != wantHeld {
						t.Errorf("gzip %v: held in memory %v, want %v", gz, held, wantHeld)
					}
				}
			}
			if files := spillFiles(t, spillDir); files != tc.files {
				t.Errorf("%d files in the spill folder, want %d", files, tc.files)
			}
		})
	}
}

// spillBytes returns the bytes of the files in the spill folder dir.
func spillBytes(t *testing.T, dir string) int64 {
	t.Helper()
	var n int64
	for _, fi := range spilledIn(t, dir) {
		n += fi.Size()
	}
	return n
}

// The spill folder holds no more than the cache counts, at every moment,
// with no collection in between: a kept answer or gzipped copy the cache
// drops for room has its file removed at once, not when the garbage
// collector finds it unreferenced. Before, each file stayed until the next
// collection, which an idle server runs every two minutes: at the fourth
// ordering of a 5 MB document, the folder held 25.5 MB for 24.0 MB
// counted, and it went on growing with each one.
func TestSpillFilesRemovedWhenDropped(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	store := &fileStore{dir: t.TempDir()}
	id := mockID(1)
	store.put(t, id, fieldsDoc(7000)) // about 5 MB; each ordering of it is kept in a file
	spillDir := t.TempDir()
	const bound = 24 << 20
	c := mockcache.New(mockcache.Config{Store: store, SpillDir: spillDir, MaxBytes: bound})
	for i := range 12 {
		raw := fmt.Sprintf("order_by=f%d", i)
		for range 2 { // offered, then kept
			for _, gz := range []bool{false, true} {
				queryAnswer(t, c, id, raw, gz)
				mockcache.SyncRemovals()
				if files, counted := spillBytes(t, spillDir), c.Footprint(); files > counted || counted > bound {
					t.Fatalf("query %d: %d bytes of files in the spill folder, %d counted by the cache, bound %d", i, files, counted, bound)
				}
			}
		}
	}
	if files := spillFiles(t, spillDir); files == 0 {
		t.Fatal("nothing was spilled: the test tests nothing")
	}
	c.Flush()
	mockcache.SyncRemovals()
	if files := spillFiles(t, spillDir); files != 0 {
		t.Fatalf("%d files left once every mock left the cache", files)
	}
}

// A file the cache drops while an answer is being sent from it stays until
// that answer is written and released, then goes.
func TestSpillFileOutlivesItsDropWhileSent(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	k := keepInFile(t)
	c, e, q, raw, spillDir, want := k.c, k.e, k.q, k.raw, k.dir, k.want
	a := e.Answer(q, raw, false, "")
	if a.Bytes() != nil {
		t.Fatal("the kept answer is not sent from its file")
	}
	c.Flush() // the cache drops it
	mockcache.SyncRemovals()
	var b bytes.Buffer
	a.WriteBody(&b)
	if !bytes.Equal(b.Bytes(), want) {
		t.Fatalf("sent %d bytes after the drop, want the %d of the answer", b.Len(), len(want))
	}
	if spillFiles(t, spillDir) != 1 {
		t.Fatal("the file went while its answer was being sent")
	}
	a.Release()
	mockcache.SyncRemovals()
	if n := spillFiles(t, spillDir); n != 0 {
		t.Fatalf("%d files left after the answer sent from it was released", n)
	}
}

// Readers that share spilled answers while the cache drops them for room
// each send the whole answer, and no file is left once they are done and
// the mock has left the cache: no reference is lost or given back twice.
func TestSpillFilesShared(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	store := &fileStore{dir: t.TempDir()}
	id := mockID(1)
	store.put(t, id, fieldsDoc(7000))
	inMemory := mockcache.New(mockcache.Config{Store: store})
	spillDir := t.TempDir()
	c := mockcache.New(mockcache.Config{Store: store, SpillDir: spillDir, MaxBytes: 20 << 20})
	const queries = 6
	want := map[string][]byte{}
	for i := range queries {
		for _, gz := range []bool{false, true} {
			raw := fmt.Sprintf("order_by=f%d", i)
			b, _, _ := queryAnswer(t, inMemory, id, raw, gz)
			want[fmt.Sprint(raw, gz)] = b
		}
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 10 {
				raw, gz := fmt.Sprintf("order_by=f%d", (g+i)%queries), i%2 == 0
				if got, _, _ := queryAnswer(t, c, id, raw, gz); !bytes.Equal(got, want[fmt.Sprint(raw, gz)]) {
					t.Errorf("%s, gzip %v: %d bytes, want %d", raw, gz, len(got), len(want[fmt.Sprint(raw, gz)]))
					return
				}
			}
		})
	}
	wg.Wait()
	c.Flush()
	mockcache.SyncRemovals()
	if n := spillFiles(t, spillDir); n != 0 {
		t.Fatalf("%d files left", n)
	}
}

// An answer that is a 304 sends no body, and holds no file: a file the
// cache drops meanwhile goes at once, though the answer is not released
// yet.
func TestNotModifiedHoldsNoFile(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	k := keepInFile(t)
	c, e, q, raw, spillDir := k.c, k.e, k.q, k.raw, k.dir
	etag := e.Answer(q, raw, false, "")
	etag.Release()
	a := e.Answer(q, raw, false, etag.ETag)
	if !a.NotModified {
		t.Fatalf("If-None-Match %s: not a 304", etag.ETag)
	}
	c.Flush()
	mockcache.SyncRemovals()
	if n := spillFiles(t, spillDir); n != 0 {
		t.Fatalf("%d files held by a 304", n)
	}
	a.Release()
}

// keptInFile is a cache that keeps the answer of a query in a file of its
// spill folder, and the entry it was read from, held.
type keptInFile struct {
	c    *mockcache.Cache
	e    *mockcache.Entry
	q    *query.Query
	raw  string
	dir  string
	want []byte // the answer
}

// keepInFile asks a query of a 5 MB document twice, so that its answer is
// kept in a file, and returns the cache and the entry, held until the
// test ends.
func keepInFile(t *testing.T) keptInFile {
	t.Helper()
	store := &fileStore{dir: t.TempDir()}
	id, raw := mockID(1), "order_by=f1"
	store.put(t, id, fieldsDoc(7000))
	k := keptInFile{raw: raw, dir: t.TempDir()}
	k.c = mockcache.New(mockcache.Config{Store: store, SpillDir: k.dir})
	k.want, _, _ = queryAnswer(t, k.c, id, raw, false)
	queryAnswer(t, k.c, id, raw, false) // kept, in a file
	if n := spillFiles(t, k.dir); n != 1 {
		t.Fatalf("%d files spilled, want 1", n)
	}
	var err error
	if k.e, err = k.c.Get(context.Background(), id); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(k.e.Release)
	if k.q, err = query.Compile(query.ParseParams(raw)); err != nil {
		t.Fatal(err)
	}
	return k
}
