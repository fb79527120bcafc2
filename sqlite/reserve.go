package sqlite

import (
	"crypto/rand"
	"os"
	"path/filepath"
)

// ReserveFile is a file of the data directory that holds reserveSize
// bytes of its file system for deletions. On a full disk SQLite cannot
// record a deletion (its write-ahead log must grow first), so the space a
// deleted mock would give back could not be had through Decoy at all: a
// deletion that finds the disk full removes this file and tries again.
// The file is made again as soon as there is room for it.
const ReserveFile = "decoy.reserve"

// reserveSize is room for a deletion: SQLite appends to its log the pages
// it changes (the mock's row and index entries, its counts and usage
// history; a few dozen pages of 4 KiB at most) and the quota journal a
// line; the mock's document is then removed.
const reserveSize = 256 << 10

func (db *DB) reservePath() string { return filepath.Join(db.dir, ReserveFile) }

// keepReserve makes the reserve file when it is missing and there is room
// for it. It is called under the write lock.
func (db *DB) keepReserve() {
	if db.reserved {
		return
	}
	path := db.reservePath()
	if st, err := os.Stat(path); err == nil && st.Size() == reserveSize {
		db.reserved = true // left by the last run
		return
	}
	if free, ok := db.freeSpace(db.dir); ok && free < reserveSize {
		return // not now: writing it would fail, and fill the disk on the way
	}
	db.reserved = writeReserve(path) == nil
}

// writeReserve writes the reserve file, synced, so that its blocks are
// taken. Its bytes are random, so that a file system that compresses or
// deduplicates stores all of them.
func writeReserve(path string) error {
	b := make([]byte, reserveSize)
	rand.Read(b)
	os.Remove(path) // short: a write that failed, or a crash during one
	err := writeFile(path, b)
	if err != nil {
		os.Remove(path)
	}
	return err
}

// freeReserve removes the reserve file, under the write lock, and reports
// whether its space was there to free.
func (db *DB) freeReserve() bool {
	if !db.reserved {
		return false
	}
	db.reserved = false
	return os.Remove(db.reservePath()) == nil
}
