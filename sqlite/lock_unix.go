//go:build unix

package sqlite

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// LockName is the file in the data directory that one process holds
// locked while it has the store open.
const LockName = "decoy.lock"

// lockDir takes the data directory for this process: quota counts are kept
// exact in the memory of the one process that has the store open, so a
// second process on the same directory is refused. The lock goes with the
// process, however it ends.
func lockDir(dir string) (*os.File, error) {
	f, err := os.OpenFile(filepath.Join(dir, LockName), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock data dir: %w", err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			b, _ := os.ReadFile(filepath.Join(dir, LockName))
			holder := ""
			if pid := strings.TrimSpace(string(b)); pid != "" {
				holder = " (process " + pid + ")"
			}
			return nil, fmt.Errorf("data dir %s is in use by another decoy process%s; give each process its own --data-dir, or share PostgreSQL (--database-url) between replicas", dir, holder)
		}
		return nil, fmt.Errorf("lock data dir: %w", err)
	}
	_ = f.Truncate(0)
	_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	return f, nil
}
