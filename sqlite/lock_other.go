//go:build !unix

package sqlite

import (
	"os"
	"path/filepath"
)

// LockName is the file in the data directory that one process holds
// open while it has the store open.
const LockName = "decoy.lock"

// lockDir opens the lock file. Where flock(2) is missing, two processes on
// one data directory are not detected: do not start two.
func lockDir(dir string) (*os.File, error) {
	return os.OpenFile(filepath.Join(dir, LockName), os.O_RDWR|os.O_CREATE, 0o600)
}
