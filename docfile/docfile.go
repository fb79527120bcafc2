// Package docfile holds mock documents the way Decoy serves them: mapped
// read-only from the files they are stored in, outside the Go heap, so that
// a large document costs its size once (in the page cache, shared with the
// file) rather than twice under the garbage collector's growth target, and
// can be sent to a client straight from the file (sendfile).
//
// A Doc is released when nothing references it any more: a cleanup unmaps
// it and closes its file. Code that uses Bytes, or slices of it, must keep
// the Doc (or what holds it) reachable until it is done, with
// runtime.KeepAlive where the last use would otherwise come first.
package docfile

import (
	"fmt"
	"os"
	"runtime"
)

// Doc is a read-only document: mapped from a file, or held in memory.
type Doc struct {
	b    []byte
	file *os.File // nil for a document held in memory
}

// FromBytes returns a document held in memory.
func FromBytes(b []byte) *Doc { return &Doc{b: b} }

// Map returns the document held in f, whole, mapped read-only, and takes f
// over: it is closed when the Doc is released. On platforms without mmap
// the document is read into memory instead (and File is still f).
func Map(f *os.File) (*Doc, error) {
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	size := st.Size()
	if size != int64(int(size)) {
		return nil, fmt.Errorf("docfile: %s: too large to map", f.Name())
	}
	b, unmap, err := mapFile(f, int(size))
	if err != nil {
		return nil, fmt.Errorf("docfile: map %s: %w", f.Name(), err)
	}
	d := &Doc{b: b, file: f}
	runtime.AddCleanup(d, func(r release) { r.unmap(); r.file.Close() }, release{unmap, f})
	return d, nil
}

// release is what a Doc's cleanup needs; it must not reference the Doc.
type release struct {
	unmap func()
	file  *os.File
}

// Evict tells the system the document is not needed any more, so that its
// pages leave the process's memory now rather than when a garbage
// collection releases it. It stays valid: a late reader reads it again
// from the file.
func (d *Doc) Evict() {
	if d.file != nil {
		evict(d.b)
	}
}

// Bytes returns the document. It must not be changed, nor used after the
// Doc is unreachable.
func (d *Doc) Bytes() []byte { return d.b }

// Size returns the document's length in bytes.
func (d *Doc) Size() int64 { return int64(len(d.b)) }

// File returns the file the document is mapped from, or nil. It is shared:
// read it only at explicit offsets (ReadAt, sendfile with an offset), never
// through its position, and do not close it.
func (d *Doc) File() *os.File { return d.file }
