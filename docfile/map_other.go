//go:build !unix

package docfile

import (
	"io"
	"os"
)

// mapFile reads the file into memory: no mmap here.
func mapFile(f *os.File, size int) ([]byte, func(), error) {
	b := make([]byte, size)
	if _, err := io.ReadFull(io.NewSectionReader(f, 0, int64(size)), b); err != nil {
		return nil, nil, err
	}
	return b, func() {}, nil
}

func evict([]byte) {}
