package main

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"sync"
)

// The garbage collector's target. The Go heap holds no documents (they are
// mapped from their files, or small), only what is built over them and
// each request's garbage; so a heap kept within 1.5× of what is live
// (defaultGOGC) keeps the process near 3× the size of the documents it
// holds (see bench/: the binary's own pages are most of the rest). But a
// small live heap then means a collection every few megabytes of garbage:
// with 5 MiB live, one every 700 small reads, a quarter of their CPU. So the next collection is never set below
// gcFloor: a server holding little may use up to that much heap, and one
// holding much is collected at 1.5× as before.
const (
	defaultGOGC = 50
	gcFloor     = 16 << 20
	// maxGOGC is the target of a nearly empty heap. The runtime never
	// collects below 4 MiB×GOGC/100 of heap, so a higher one would put the
	// next collection past the floor.
	maxGOGC = gcFloor / (4 << 20) * 100
)

// Nothing in Decoy reads a heap profile, yet the runtime samples one
// allocation per 512 KiB for it: a stack walk (touching the binary's
// function tables, resident from then on) and a record kept per distinct
// stack. Off from the start of main.
func init() { runtime.MemProfileRate = 0 }

// setGCPercent sets the collector's target as above unless the GOGC
// variable chose one, and returns the target in force, for the log.
func setGCPercent() string {
	if v := os.Getenv("GOGC"); v != "" {
		return v
	}
	debug.SetGCPercent(defaultGOGC)
	tuneOnce.Do(tuneGC)
	return strconv.Itoa(defaultGOGC) + ", at least " + formatSize(gcFloor) + " of heap"
}

// gogcFor returns the GOGC that puts the next collection at floor bytes of
// heap, or base when that puts it further. The runtime sets the next
// collection at live + (live+roots)×GOGC/100, roots being the goroutine
// stacks and globals it scans.
func gogcFor(live, roots, floor uint64, base int) int {
	if live >= floor {
		return base
	}
	return max(base, min(int((floor-live)*100/max(live+roots, 1)), maxGOGC))
}

// gcCycle is an object whose cleanup runs once a collection has found it
// unreachable: after every collection, a new one is made. It holds a
// pointer so that it is not one of the tiny objects the allocator packs
// together, whose cleanups may never run.
type gcCycle struct {
	_ *byte
	_ [8]byte
}

var tuneOnce sync.Once

// tuneGC sets GOGC from the live heap after every collection, for as long
// as the process runs. setGCPercent starts it only when the GOGC variable
// is unset.
func tuneGC() {
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}, {Name: "/gc/scan/stack:bytes"}, {Name: "/gc/scan/globals:bytes"}}
	var arm func()
	arm = func() {
		runtime.AddCleanup(new(gcCycle), func(struct{}) {
			metrics.Read(sample)
			var v [3]uint64
			for i, x := range sample {
				if x.Value.Kind() == metrics.KindUint64 {
					v[i] = x.Value.Uint64()
				}
			}
			debug.SetGCPercent(gogcFor(v[0], v[1]+v[2], gcFloor, defaultGOGC))
			arm()
		}, struct{}{})
	}
	arm()
}
