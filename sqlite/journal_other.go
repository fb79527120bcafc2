//go:build !unix

package sqlite

import "os"

// openJournal opens a quota journal written with a write(2) per line,
// where files cannot be mapped (see journal_unix.go).
func openJournal(path string) (journalFile, error) {
	return os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND|os.O_TRUNC, 0o600)
}
