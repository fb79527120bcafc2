// Package docfile holds mock documents the way Decoy serves them: a large
// document mapped read-only from the file it is stored in, outside the Go
// heap, so that it costs its size once (in the page cache, shared with the
// file) rather than again under the garbage collector's growth target; a
// small one read into the heap, where it costs its size rather than a
// whole page, a mapping and the kernel's structures.
//
// A Doc is counted: whoever holds it (a cache, a request reading it)
// holds a reference, and when the last is released a mapped document is
// unmapped at once, so that the pages, the mapping and, for a file removed
// since (a deleted mock), its disk space go back to the system as soon as
// nothing reads it. Its bytes must not be used after the reference that
// covered their use is released. A Doc that became unreachable without
// being released is unmapped by a cleanup, after a garbage collection: a
// safety net, not the way documents leave.
package docfile

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"sync/atomic"
)

// MinMapSize is the smallest document mapped; Load reads smaller ones into
// memory. Measured with GOGC=50, the RSS of a cached mock of 1 KiB is
// 6.1 KiB mapped (a whole page, plus the kernel's area, not counted) and
// 2.9 KiB in the heap; from about 4 KiB a mapping takes less RSS (16 KiB:
// 18.0 against 21.3 KiB; 64 KiB: 65.8 against 76.7), the heap keeping
// about a sixth more for its growth target. Below 64 KiB that sixth is
// worth paying: such documents then need no mapping (a process has 65,530
// on Linux by default, and a cache bounds how many it keeps), no map and
// unmap calls as mocks come and go, and no page rounding. Tests lower it
// to map small documents.
var MinMapSize int64 = 64 << 10

// Doc is a read-only document: mapped from a file, or held in memory.
type Doc struct {
	b []byte
	// refs counts the references; 0 once released.
	refs atomic.Int64
	// unmap is nil for a document held in memory.
	unmap   func()
	cleanup runtime.Cleanup
	// over, when set, is the document this one's bytes were made from and
	// still read: held until this one's last release (see FromBytesOver).
	over *Doc
}

// mapped counts the documents mapped now, in the whole process, and
// mappedBytes their pages.
var mapped, mappedBytes atomic.Int64

// MappedDocs returns how many documents are mapped now, in the whole
// process: each holds a mapping (and its file's space, if removed).
func MappedDocs() int64 { return mapped.Load() }

// MappedBytes returns the bytes of the documents mapped now, in whole
// pages, in the whole process: memory the Go runtime does not manage (see
// MemoryBytes).
func MappedBytes() int64 { return mappedBytes.Load() }

// FromBytes returns a document held in memory, with one reference.
func FromBytes(b []byte) *Doc {
	d := &Doc{b: b}
	d.refs.Store(1)
	return d
}

// FromBytesOver is FromBytes for a document made from origin that still
// reads origin's bytes: it takes over a reference to origin, which the
// caller acquired for it, and gives it back at its own last release.
func FromBytesOver(b []byte, origin *Doc) *Doc {
	d := FromBytes(b)
	d.over = origin
	return d
}

// Load returns the document held in f, whole, with one reference: read
// into memory when smaller than MinMapSize, else mapped (see Map). f stays
// the caller's to close: the document does not need it.
func Load(f *os.File) (*Doc, error) {
	size, err := fileSize(f)
	if err != nil {
		return nil, err
	}
	if int64(size) < MinMapSize {
		return read(f, size)
	}
	return mapSized(f, size)
}

// Map returns the document held in f, whole, mapped read-only, with one
// reference. f stays the caller's to close: the mapping does not need it.
// On platforms without mmap the document is read into memory instead.
func Map(f *os.File) (*Doc, error) {
	size, err := fileSize(f)
	if err != nil {
		return nil, err
	}
	return mapSized(f, size)
}

func fileSize(f *os.File) (int, error) {
	st, err := f.Stat()
	if err != nil {
		return 0, err
	}
	size := st.Size()
	if size != int64(int(size)) {
		return 0, fmt.Errorf("docfile: %s: too large", f.Name())
	}
	return int(size), nil
}

// read reads the size bytes of f into memory, at explicit offsets: f's
// position may be shared.
func read(f *os.File, size int) (*Doc, error) {
	b := make([]byte, size)
	if _, err := io.ReadFull(io.NewSectionReader(f, 0, int64(size)), b); err != nil {
		return nil, fmt.Errorf("docfile: read %s: %w", f.Name(), err)
	}
	return FromBytes(b), nil
}

func mapSized(f *os.File, size int) (*Doc, error) {
	if size == 0 || !canMap {
		return read(f, size)
	}
	b, unmap, err := mapFile(f, size)
	if err != nil {
		return nil, fmt.Errorf("docfile: map %s: %w", f.Name(), err)
	}
	d := &Doc{b: b, unmap: unmap}
	d.refs.Store(1)
	n := d.MemoryBytes()
	mapped.Add(1)
	mappedBytes.Add(n)
	d.cleanup = runtime.AddCleanup(d, func(unmap func()) { unmap(); mapped.Add(-1); mappedBytes.Add(-n) }, unmap)
	return d, nil
}

// Acquire takes another reference to the document, and reports whether it
// could: false once it was released. Holding a reference is what makes
// taking another safe.
func (d *Doc) Acquire() bool {
	for {
		n := d.refs.Load()
		if n <= 0 {
			return false
		}
		if d.refs.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

// Release gives a reference back. The last one unmaps a mapped document
// at once: its bytes must not be used any more.
func (d *Doc) Release() {
	switch n := d.refs.Add(-1); {
	case n > 0:
		return
	case n < 0:
		panic("docfile: Doc released more often than acquired")
	}
	if d.unmap != nil {
		d.cleanup.Stop()
		d.unmap()
		mapped.Add(-1)
		mappedBytes.Add(-d.MemoryBytes())
	}
	if d.over != nil {
		d.over.Release()
	}
}

// Mapped reports whether the document is mapped from a file, rather than
// held in memory.
func (d *Doc) Mapped() bool { return d.unmap != nil }

// HoldsMapping reports whether the document keeps a mapping open: it is
// mapped, or made over a document that is (see FromBytesOver).
func (d *Doc) HoldsMapping() bool {
	for ; d != nil; d = d.over {
		if d.unmap != nil {
			return true
		}
	}
	return false
}

// Bytes returns the document. It must not be changed, nor used once the
// reference that covers its use is released.
func (d *Doc) Bytes() []byte { return d.b }

// Size returns the document's length in bytes.
func (d *Doc) Size() int64 { return int64(len(d.b)) }

// MemoryBytes is about how much memory the document holds: its bytes, in
// whole pages when mapped.
func (d *Doc) MemoryBytes() int64 {
	n := int64(len(d.b))
	if d.unmap != nil {
		n = (n + pageSize - 1) &^ (pageSize - 1)
	}
	return n
}
