package main

import (
	"runtime"
	"runtime/debug"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// The next collection is at 1.5× the live heap, never below the floor, and
// a GOGC set by the user is left alone.
func TestGOGCFor(t *testing.T) {
	for _, tc := range []struct {
		live, roots uint64
		want        int
	}{
		{0, 0, maxGOGC},                   // nothing at all: capped
		{1 << 10, 0, maxGOGC},             // nearly empty: capped
		{0, 2 << 20, maxGOGC},             // roots alone: capped
		{4 << 20, 0, 300},                 // 4 MiB live: the next at 16 MiB
		{3 << 20, 1 << 20, 325},           // 3 + 4×3.25 = 16 MiB
		{8 << 20, 0, 100},                 // 8 MiB: at 16 MiB
		{12 << 20, 0, defaultGOGC},        // 12 MiB: 12 + 6 is over the floor
		{200 << 20, 1 << 20, defaultGOGC}, // much live: 1.5×
	} {
		if got := gogcFor(tc.live, tc.roots, gcFloor, defaultGOGC); got != tc.want {
			t.Errorf("gogcFor(%d, %d) = %d, want %d", tc.live, tc.roots, got, tc.want)
		}
	}
}

func TestGCPercent(t *testing.T) {
	prev := debug.SetGCPercent(100)
	defer debug.SetGCPercent(prev)

	t.Setenv("GOGC", "200")
	if got := setGCPercent(); got != "200" {
		t.Errorf("with GOGC=200: %q", got)
	}
	if now := debug.SetGCPercent(100); now != 100 {
		t.Errorf("GOGC set, yet the target was changed to %d", now)
	}

	t.Setenv("GOGC", "")
	if got := setGCPercent(); !strings.HasPrefix(got, "50, at least 16MiB") {
		t.Errorf("without GOGC: %q", got)
	}
	// After a collection, the tuner sets the target from what is live:
	// this test binary holds far less than the floor.
	for deadline := time.Now().Add(10 * time.Second); ; {
		runtime.GC()
		time.Sleep(10 * time.Millisecond) // cleanups run on their own goroutine
		if now := debug.SetGCPercent(-1); now > defaultGOGC {
			debug.SetGCPercent(now)
			break
		} else {
			debug.SetGCPercent(now)
		}
		if time.Now().After(deadline) {
			t.Fatal("the target was not raised above defaultGOGC for a small heap after collections")
		}
	}
}

// The runtime's soft memory limit follows what the cache holds in the
// heap, plus memoryOverhead, after every collection; a GOMEMLIMIT set by
// the user is left alone.
func TestMemoryLimit(t *testing.T) {
	old := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { cacheHeap.Store(nil); debug.SetMemoryLimit(old) })
	t.Setenv("GOMEMLIMIT", "")
	var held atomic.Int64
	held.Store(40 << 20)
	limitMemory(held.Load)
	if got, want := debug.SetMemoryLimit(-1), int64(40<<20+memoryOverhead); got != want {
		t.Fatalf("limit %d, want %d: what the cache holds plus the overhead", got, want)
	}
	held.Store(2 << 20) // the cache dropped most of it: the next collection lowers the limit
	deadline := time.Now().Add(5 * time.Second)
	for debug.SetMemoryLimit(-1) != 2<<20+memoryOverhead {
		if time.Now().After(deadline) {
			t.Fatalf("limit %d after collections, want %d", debug.SetMemoryLimit(-1), 2<<20+memoryOverhead)
		}
		runtime.GC()
		time.Sleep(time.Millisecond)
	}

	t.Setenv("GOMEMLIMIT", "1GiB")
	debug.SetMemoryLimit(1 << 30) // as the runtime read it at start
	limitMemory(held.Load)
	runtime.GC()
	time.Sleep(10 * time.Millisecond)
	if got := debug.SetMemoryLimit(-1); got != 1<<30 {
		t.Errorf("with GOMEMLIMIT=1GiB: limit %d", got)
	}
	if got := memoryLimitSetting(); got != "1GiB" {
		t.Errorf("logged as %q", got)
	}
}
