package mockcache

import (
	"bufio"
	"io"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
)

// spillMin is the smallest body kept in a file rather than in memory,
// when the cache has a folder for them (Config.SpillDir): the gzipped copy
// of a stored document, a kept answer and its gzipped copy. Such a body is
// sent with sendfile from the file system's cache, so that it adds
// nothing to the process's memory (the document it is made from is mapped
// from its file already). Below it, a body is small enough to keep in
// memory and send in one write with its head.
const spillMin = 256 << 10

// spillMinAnswer is the smallest kept answer kept in a file. An answer up
// to 4 MiB held in memory leaves in one write with its head (see
// transport.Gather): measured on the benchmark's city query (2 MiB, 32
// connections, loopback), sent from a file it cost 1.8× the CPU a
// request. Its gzipped copy, a quarter of that or less, is kept in a file
// from spillMin.
const spillMinAnswer = 4 << 20

// spilled counts the bytes of the files spill wrote that are not removed
// yet, in the whole process: counted in the caches' bounds, but not in
// memory (see Cache.HeapBytes).
var spilled atomic.Int64

// fileBody is a body kept in a file of the cache's spill folder. The file
// is removed as soon as its set drops it (Drop) and no answer sending it
// holds it (see acquire), by the remover (removeSoon), so that the folder
// holds no more than what the cache's bound counts, besides the files
// being sent; should one of those references never be given back, the
// file is removed once nothing refers to the fileBody any more.
type fileBody struct {
	*spillFile
	// refs counts the set that keeps the file (one, until Drop) and the
	// answers that acquired it; at zero the file is removed, and nothing
	// acquires it any more.
	refs    atomic.Int64
	dropped atomic.Bool
}

// spillFile is a spilled file: its path and size, removed once.
type spillFile struct {
	path    string
	size    int64
	removed sync.Once
}

// remove removes the file and stops counting its bytes, the first time.
func (f *spillFile) remove() {
	f.removed.Do(func() {
		os.Remove(f.path)
		spilled.Add(-f.size)
	})
}

// removals are the files to remove, and the calls waiting for those
// before them to be (a nil file): removed by one goroutine, since a file
// is let go of under the cache's locks (a set's, the pool's, the cache's
// own when a mock leaves), and removing a large one takes milliseconds
// (8 ms for 25 MB on ext4).
var (
	removals     = make(chan removal, 1024)
	startRemover sync.Once
)

type removal struct {
	f    *spillFile
	done chan struct{}
}

// removeSoon hands f to the remover; at once when its queue is full.
func (f *spillFile) removeSoon() {
	startRemover.Do(func() { go remover() })
	select {
	case removals <- removal{f: f}:
	default:
		f.remove()
	}
}

func remover() {
	for r := range removals {
		if r.f != nil {
			r.f.remove()
		}
		if r.done != nil {
			close(r.done)
		}
	}
}

// syncRemovals returns once the files handed to the remover before the
// call are removed.
func syncRemovals() {
	startRemover.Do(func() { go remover() })
	done := make(chan struct{})
	removals <- removal{done: done}
	<-done
}

// acquire takes a reference to the file for an answer that will send it,
// which the answer gives back with release once written; false when the
// file is removed (or about to be): the answer is made without it.
func (fb *fileBody) acquire() bool {
	for {
		n := fb.refs.Load()
		if n <= 0 {
			return false
		}
		if fb.refs.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

// release gives back a reference acquire took, or the set's (Drop).
func (fb *fileBody) release() {
	if fb.refs.Add(-1) == 0 {
		fb.removeSoon()
	}
}

// Drop gives back the set's reference: its set keeps it no more
// (budget.Dropper). The file goes once the answers sending it are written.
func (fb *fileBody) Drop() {
	if fb.dropped.CompareAndSwap(false, true) {
		fb.release()
	}
}

// spill writes what write writes to a new file in dir, reserving its bytes
// with reserve before they are written (as a growingBuffer does), and
// returns it; nil when a reservation failed or the file could not be
// written, its bytes then given back with free.
func spill(dir string, write func(io.Writer), reserve func(int64) bool, free func(int64)) *fileBody {
	f, err := os.CreateTemp(dir, "kept-*") // the folder is emptied at start: see cmd/decoy's uploadDir
	if err != nil {
		return nil
	}
	w := &reservedFile{f: f, reserve: reserve}
	bw := bufio.NewWriterSize(w, 64<<10)
	write(bw)
	err = bw.Flush()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil || w.failed {
		free(w.size)
		os.Remove(f.Name())
		return nil
	}
	fb := &fileBody{spillFile: &spillFile{path: f.Name(), size: w.size}}
	fb.refs.Store(1) // the set's, given back by Drop
	spilled.Add(fb.size)
	runtime.AddCleanup(fb, (*spillFile).remove, fb.spillFile)
	return fb
}

// keep returns the gzipped copy that fb holds: in fb, or, when fb is
// smaller than spillMin, in memory, where it is sent in one write with its
// head (its bytes are counted already), the file then removed.
func (fb *fileBody) keep() gzipCopy {
	if fb.size >= spillMin {
		return gzipCopy{file: fb}
	}
	if b, err := os.ReadFile(fb.path); err == nil && int64(len(b)) == fb.size {
		fb.Drop()
		return gzipCopy{bytes: b}
	}
	return gzipCopy{file: fb}
}

// reservedFile writes to a file what it could reserve room for.
type reservedFile struct {
	f       *os.File
	reserve func(int64) bool
	size    int64
	failed  bool
}

func (w *reservedFile) Write(p []byte) (int, error) {
	if w.failed || !w.reserve(int64(len(p))) {
		w.failed = true
		return 0, errNoRoom
	}
	w.size += int64(len(p))
	n, err := w.f.Write(p)
	if n < len(p) {
		// The bytes not written are counted all the same, and given
		// back with the rest.
		w.failed = true
	}
	return n, err
}

// writeTo sends the file to w: a response writer reads it with sendfile.
// The file is opened for each answer, so that each has its own offset.
// The caller holds a reference (acquire).
func (fb *fileBody) writeTo(w io.Writer) {
	f, err := os.Open(fb.path)
	if err != nil {
		return
	}
	defer f.Close()
	_, _ = io.Copy(w, io.LimitReader(f, fb.size))
	runtime.KeepAlive(fb) // the file stays until it is sent
}
