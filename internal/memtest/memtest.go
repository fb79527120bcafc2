// Package memtest measures memory for tests that bound it.
package memtest

import (
	"runtime"
	"runtime/metrics"
)

// LiveHeap returns the bytes of the heap's objects the program holds,
// after a collection: what is still referenced, garbage left out.
func LiveHeap() uint64 {
	runtime.GC()
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}
