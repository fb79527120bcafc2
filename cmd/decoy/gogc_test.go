package main

import (
	"runtime/debug"
	"testing"
)

// The collector's target is defaultGOGC unless GOGC chose one.
func TestGCPercent(t *testing.T) {
	prev := debug.SetGCPercent(100)
	defer debug.SetGCPercent(prev)

	t.Setenv("GOGC", "")
	if got := setGCPercent(); got != "50" {
		t.Errorf("without GOGC: %q, want 50", got)
	}
	if now := debug.SetGCPercent(100); now != defaultGOGC {
		t.Errorf("target in force %d, want %d", now, defaultGOGC)
	}

	t.Setenv("GOGC", "200")
	if got := setGCPercent(); got != "200" {
		t.Errorf("with GOGC=200: %q", got)
	}
	if now := debug.SetGCPercent(100); now != 100 {
		t.Errorf("GOGC set, yet the target was changed to %d", now)
	}
}
