package docfile_test

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/decoy-mock/decoy/docfile"
)

func tempFile(t *testing.T, content string) *os.File {
	t.Helper()
	path := filepath.Join(t.TempDir(), "doc")
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// Load reads small documents into memory and maps the others; neither
// depends on the file once loaded.
func TestLoad(t *testing.T) {
	large := string(make([]byte, 3<<20))
	for _, tc := range []struct {
		name, content string
		mapped        bool
	}{
		{"empty", "", false},
		{"small", "[1,2,3]", false},
		{"large", large, runtime.GOOS != "windows" && runtime.GOOS != "plan9"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := tempFile(t, tc.content)
			d, err := docfile.Load(f)
			if err != nil {
				t.Fatal(err)
			}
			if string(d.Bytes()) != tc.content || d.Size() != int64(len(tc.content)) || d.Mapped() != tc.mapped {
				t.Errorf("%d bytes loaded as %d bytes (size %d), mapped %v", len(tc.content), len(d.Bytes()), d.Size(), d.Mapped())
			}
			f.Close()
			os.Remove(f.Name())
			if string(d.Bytes()) != tc.content {
				t.Error("document changed once its file was closed and removed")
			}
			d.Release()
		})
	}
	if d := docfile.FromBytes([]byte("x")); string(d.Bytes()) != "x" || d.Mapped() {
		t.Error("FromBytes")
	}
}

// The last reference released unmaps the document at once, and with it
// goes the space of its file, removed meanwhile; a released document
// cannot be acquired again.
func TestReleaseUnmaps(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc/self/maps")
	}
	f := tempFile(t, strings.Repeat("x", 8192))
	before := docfile.MappedDocs()
	d, err := docfile.Map(f)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	os.Remove(f.Name())
	if !d.Mapped() || docfile.MappedDocs() != before+1 || !mapsName(t, f.Name()) {
		t.Fatalf("mapped %v, %d documents mapped (was %d), in maps %v", d.Mapped(), docfile.MappedDocs(), before, mapsName(t, f.Name()))
	}
	if !d.Acquire() {
		t.Fatal("Acquire failed on a live document")
	}
	d.Release()
	if docfile.MappedDocs() != before+1 || !mapsName(t, f.Name()) {
		t.Fatal("unmapped while a reference was held")
	}
	d.Release()
	if docfile.MappedDocs() != before || mapsName(t, f.Name()) {
		t.Fatalf("%d documents mapped (want %d), file in maps %v after the last release", docfile.MappedDocs(), before, mapsName(t, f.Name()))
	}
	if d.Acquire() {
		t.Error("Acquire succeeded on a released document")
	}
}

// A document made over a mapped one holds its mapping until its own last
// release, and says so.
func TestFromBytesOver(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc/self/maps")
	}
	f := tempFile(t, strings.Repeat("x", 8192))
	d, err := docfile.Map(f)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	heap := docfile.FromBytes([]byte("[]"))
	if heap.HoldsMapping() || !d.HoldsMapping() {
		t.Fatal("HoldsMapping wrong for a document in memory or a mapped one")
	}
	if !d.Acquire() {
		t.Fatal("Acquire failed on a live document")
	}
	over := docfile.FromBytesOver([]byte("[1]"), d)
	if !over.HoldsMapping() || docfile.FromBytesOver(nil, heap).HoldsMapping() {
		t.Fatal("HoldsMapping wrong for a document made over a mapped one, or over one in memory")
	}
	d.Release() // the maker's reference
	if !mapsName(t, f.Name()) {
		t.Fatal("unmapped while a document made over it is used")
	}
	over.Release()
	if mapsName(t, f.Name()) {
		t.Fatal("still mapped once the document made over it was released")
	}
}

// mapsName reports whether the process maps a file by that name.
func mapsName(t *testing.T, name string) bool {
	b, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		t.Fatal(err)
	}
	return strings.Contains(string(b), name)
}

// A document dropped without being released is unmapped after a garbage
// collection: the safety net behind the references.
func TestReleasedWhenUnreachable(t *testing.T) {
	if runtime.GOOS == "windows" || runtime.GOOS == "plan9" {
		t.Skip("no mapping")
	}
	before := docfile.MappedDocs()
	func() {
		f := tempFile(t, "[1]")
		if _, err := docfile.Map(f); err != nil {
			t.Fatal(err)
		}
	}()
	deadline := time.Now().Add(10 * time.Second)
	for docfile.MappedDocs() > before {
		if time.Now().After(deadline) {
			t.Fatal("still mapped 10 s after its document became unreachable")
		}
		runtime.GC()
		runtime.Gosched()
	}
}
