//go:build unix

package docfile

import (
	"os"

	"golang.org/x/sys/unix"
)

const canMap = true

var pageSize = int64(os.Getpagesize())

func mapFile(f *os.File, size int) ([]byte, func(), error) {
	b, err := unix.Mmap(int(f.Fd()), 0, size, unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return nil, nil, err
	}
	return b, func() { _ = unix.Munmap(b) }, nil
}
