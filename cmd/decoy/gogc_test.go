package main

import (
	"runtime"
	"runtime/debug"
	"strings"
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

// No heap profile is sampled: nothing reads one (see gc.go).
func TestNoMemoryProfile(t *testing.T) {
	if runtime.MemProfileRate != 0 {
		t.Errorf("runtime.MemProfileRate = %d, want 0", runtime.MemProfileRate)
	}
}
