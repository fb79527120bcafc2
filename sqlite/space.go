package sqlite

import (
	"errors"
	"fmt"
	"syscall"

	"github.com/decoy-mock/decoy"
	driver "modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// errNoSpace is the answer to a write the data directory has no room for.
var errNoSpace = decoy.Errorf(decoy.ENOSPACE, "Not enough disk space to store this: the data directory's file system is full")

// classify gives the errors of a full disk their code, ENOSPACE: SQLite's
// SQLITE_FULL (its database or write-ahead log could not grow) and ENOSPC
// from the store's own files (a document written, synced or moved into
// docs/). The cause stays in the chain, for the log. Any other error is
// returned as it is. The write methods return through it.
func classify(err error) error {
	var de *decoy.Error
	if err == nil || errors.As(err, &de) || !noSpace(err) {
		return err
	}
	return fmt.Errorf("%w (%w)", errNoSpace, err)
}

// noSpace reports whether err is a file system's refusal for want of
// space.
func noSpace(err error) bool {
	var se *driver.Error
	if errors.As(err, &se) && se.Code()&0xff == sqlite3.SQLITE_FULL { // extended codes keep the primary one in the low byte
		return true
	}
	return errors.Is(err, syscall.ENOSPC)
}

// sizeText writes a number of bytes for people: 512 B, 12 KiB, 1.5 MiB.
func sizeText(n int64) string {
	unit, div := "B", int64(1)
	for _, u := range []string{"KiB", "MiB", "GiB", "TiB"} {
		if n < div<<10 {
			break
		}
		unit, div = u, div<<10
	}
	if n%div == 0 || div <= 1<<10 {
		return fmt.Sprintf("%d %s", n/div, unit)
	}
	return fmt.Sprintf("%.1f %s", float64(n)/float64(div), unit)
}
