//go:build unix

package sqlite

import (
	"fmt"
	"os"
	"runtime/debug"
	"syscall"

	"golang.org/x/sys/unix"
)

// mappedJournal is a quota journal written through a shared mapping of its
// file. A line is a copy into memory, with no system call: every read of a
// mock with a quota appends one, and a write(2) for each was the largest
// cost of a small answer's own work. Once the copy is done, the line is the
// kernel's, in the page cache, as a written one would be: a crash of the
// process loses none (a crash of the machine may lose either).
//
// The file is grown ahead of the lines by writing zeros to it, so that the
// disk's blocks are allocated by a write, which a full disk fails (and
// with it the line that needed the room), rather than by a store into the
// mapping, which it would fail with SIGBUS; a fault there all the same (a
// copy-on-write file system) is recovered and fails the line. On a disk
// short of room, it grows by a page at a time, as appended lines would.
// The zeros after the lines stay until the journal is removed, a minute
// after its last line (a replay reads up to the last newline): the room a
// journal took goes back with it, as its lines' room did.
type mappedJournal struct {
	f    *os.File
	m    []byte // the mapping of f's first len(m) bytes
	size int    // bytes of lines written
}

const (
	// journalGrowMin is the room a journal starts with.
	journalGrowMin = 16 << 10
	// journalGrowMax bounds each growth: past it, a journal grows by as
	// much at a time, rather than doubling.
	journalGrowMax = 8 << 20
)

func openJournal(path string) (journalFile, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, err
	}
	return &mappedJournal{f: f}, nil
}

// Write implements journalFile. A fault fails it as a write cut short:
// the caller cuts the line off (see quota.mend).
func (j *mappedJournal) Write(b []byte) (int, error) {
	if j.size+len(b) > len(j.m) {
		if err := j.grow(j.size + len(b)); err != nil {
			return 0, err
		}
	}
	off := j.size
	j.size += len(b) // claimed first: a fault may have stored part of it
	if err := j.store(off, b); err != nil {
		return len(b), err
	}
	return len(b), nil
}

// store copies b into the mapping at off; a fault is an error.
func (j *mappedJournal) store(off int, b []byte) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if v := recover(); v != nil {
			if _, fault := v.(interface{ Addr() uintptr }); !fault {
				panic(v)
			}
			err = fmt.Errorf("write %s: %w", j.f.Name(), syscall.EIO)
		}
	}()
	copy(j.m[off:], b)
	return nil
}

// grow makes the file and its mapping hold at least need bytes: doubling,
// or, when the disk has no room for that, to the page need ends in.
func (j *mappedJournal) grow(need int) error {
	n := max(len(j.m), journalGrowMin)
	for n < need {
		n += min(n, journalGrowMax)
	}
	err := j.allocate(len(j.m), n)
	if err != nil {
		page := os.Getpagesize()
		n = (need + page - 1) / page * page
		if err = j.allocate(len(j.m), n); err == nil {
			err = j.f.Truncate(int64(n)) // what the first try took past n
		}
	}
	if err != nil {
		_ = j.f.Truncate(int64(len(j.m))) // give back what was had
		return err
	}
	m, err := unix.Mmap(int(j.f.Fd()), 0, n, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		return fmt.Errorf("map %s: %w", j.f.Name(), err)
	}
	if j.m != nil {
		_ = unix.Munmap(j.m)
	}
	j.m = m
	return nil
}

var zeros = make([]byte, 64<<10)

// allocate writes zeros to the file from from to to.
func (j *mappedJournal) allocate(from, to int) error {
	for off := from; off < to; {
		n, err := j.f.WriteAt(zeros[:min(len(zeros), to-off)], int64(off))
		if err != nil {
			return err
		}
		off += n
	}
	return nil
}

// Truncate implements journalFile: what follows size is zeroed.
func (j *mappedJournal) Truncate(size int64) error {
	for off := int(size); off < j.size; {
		n := min(len(zeros), j.size-off)
		if err := j.store(off, zeros[:n]); err != nil {
			return err
		}
		off += n
	}
	j.size = int(size)
	return nil
}

// Close implements journalFile.
func (j *mappedJournal) Close() error {
	if j.m != nil {
		_ = unix.Munmap(j.m)
		j.m = nil
	}
	return j.f.Close()
}

// Name implements journalFile.
func (j *mappedJournal) Name() string { return j.f.Name() }
