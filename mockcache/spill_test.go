package mockcache_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"os"
	"runtime"
	"strings"
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
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), spillPrefix) {
			n++
		}
	}
	return n
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
