//go:build !unix

package docfile

import "os"

// No mmap here: documents are read into memory.
const canMap = false

var pageSize int64 = 4096

func mapFile(*os.File, int) ([]byte, func(), error) { panic("unreachable") }
