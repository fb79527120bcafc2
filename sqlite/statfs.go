//go:build linux || darwin || freebsd

package sqlite

import "syscall"

// freeSpace returns the bytes of the file system of dir that a process
// without privileges may still use (root may have more: decoy need not
// run as root).
func freeSpace(dir string) (int64, bool) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, false
	}
	return int64(st.Bavail) * int64(st.Bsize), true
}
