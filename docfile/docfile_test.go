package docfile_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
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
	return f
}

func TestMap(t *testing.T) {
	for _, content := range []string{"", "[1,2,3]", string(make([]byte, 3<<20))} {
		f := tempFile(t, content)
		d, err := docfile.Map(f)
		if err != nil {
			t.Fatal(err)
		}
		if string(d.Bytes()) != content || d.Size() != int64(len(content)) || d.File() != f {
			t.Errorf("%d bytes mapped as %d bytes (size %d), file %v", len(content), len(d.Bytes()), d.Size(), d.File())
		}
		// The mapping does not depend on the file's name.
		os.Remove(f.Name())
		if string(d.Bytes()) != content {
			t.Error("mapping changed once the file was removed")
		}
		runtime.KeepAlive(d)
	}
	if d := docfile.FromBytes([]byte("x")); string(d.Bytes()) != "x" || d.File() != nil {
		t.Error("FromBytes")
	}
}

// Once a document is unreachable its file is closed (and unmapped).
func TestReleasedWhenUnreachable(t *testing.T) {
	f := tempFile(t, "[1]")
	if _, err := docfile.Map(f); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		runtime.GC()
		if _, err := f.Stat(); errors.Is(err, os.ErrClosed) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("file still open 10 s after its document became unreachable")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Evict gives the pages back at once; the document stays readable.
func TestEvict(t *testing.T) {
	const size = 8 << 20
	content := make([]byte, size)
	for i := range content {
		content[i] = byte(i)
	}
	f := tempFile(t, string(content))
	d, err := docfile.Map(f)
	if err != nil {
		t.Fatal(err)
	}
	sum := 0
	for _, c := range d.Bytes() { // every page in memory
		sum += int(c)
	}
	before := rssFile(t)
	d.Evict()
	after := rssFile(t)
	if runtime.GOOS == "linux" && before-after < size/2 {
		t.Errorf("RssFile went from %d to %d KiB: the %d KiB document was not given back", before>>10, after>>10, size>>10)
	}
	if !bytes.Equal(d.Bytes(), content) {
		t.Error("document changed after Evict")
	}
	runtime.KeepAlive(d)
	if sum == 0 {
		t.Fatal("read nothing")
	}
}

// rssFile returns the process's file-backed resident memory, in bytes (0
// where /proc is missing).
func rssFile(t *testing.T) int {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "RssFile:"); ok {
			kb, _ := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
			return kb << 10
		}
	}
	return 0
}
