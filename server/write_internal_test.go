package server

import (
	"strconv"
	"testing"
	"time"
)

// Compactions come every 2,000 writes, or on large data as many more as
// keep the whole data's rewrite near 2 KiB a write, doubling up to 16,000;
// each turn of a longer interval is a turn of every shorter one.
func TestCompactEvery(t *testing.T) {
	for _, tc := range []struct{ size, want int64 }{
		{0, 2000}, {1 << 20, 2000}, {4_000_000, 2000}, {4_200_000, 4000},
		{12_000_000, 8000}, {26_000_000, 16000}, {1 << 40, 16000},
	} {
		if got := compactEvery(tc.size); got != tc.want {
			t.Errorf("compactEvery(%d) = %d, want %d", tc.size, got, tc.want)
		}
		if n := compactEvery(tc.size); n%compactAfter != 0 || maxCompactAfter%n != 0 {
			t.Errorf("compactEvery(%d) = %d: not a turn of %d, or %d not one of it", tc.size, n, compactAfter, maxCompactAfter)
		}
	}
}

// Compactions run at most maxCompactions at once, one per mock; after one
// fails, none starts for a second, doubling to maxCompactBackoff, and a
// success ends the wait (a failing one was started again by every write).
func TestCompactorBacksOff(t *testing.T) {
	var c compactor
	t0 := time.Unix(1_000_000, 0)
	if !c.start("a", t0) || c.start("a", t0) {
		t.Fatal("a mock's compaction: not started, or started twice")
	}
	if !c.start("b", t0) || c.start("c", t0) {
		t.Fatalf("past %d at once: started", maxCompactions)
	}
	c.done("b", false, t0)
	if !c.start("c", t0) {
		t.Fatal("a compaction done: another not started")
	}
	c.done("c", false, t0)
	at := t0
	for i, wait := range []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second, 30 * time.Second, 30 * time.Second} {
		c.done("a", true, at)
		if c.start("a", at.Add(wait-time.Millisecond)) {
			t.Fatalf("failure %d: started again within %v", i+1, wait)
		}
		at = at.Add(wait)
		if !c.start("a", at) {
			t.Fatalf("failure %d: not started again after %v", i+1, wait)
		}
	}
	c.done("a", false, at)
	c.start("x", at)
	c.done("x", true, at) // a first failure again: a second's wait
	if !c.start("x", at.Add(time.Second)) {
		t.Error("after a success, a failure waited more than a second")
	}
	c.done("x", true, at)
	// One mock's failures hold back its own compactions only.
	if !c.start("y", at) {
		t.Error("a mock held back by another's failure")
	}
	c.done("y", false, at)
}

// The failures of at most maxCompactFailing mocks are remembered: past
// them, the mocks whose wait ended long since are forgotten, and if none
// has, every mock waits as the last to fail.
func TestCompactorFailuresBounded(t *testing.T) {
	var c compactor
	t0 := time.Unix(1_000_000, 0)
	for i := range maxCompactFailing {
		id := strconv.Itoa(i)
		c.start(id, t0)
		c.done(id, true, t0)
	}
	c.start("new", t0)
	c.done("new", true, t0)
	if len(c.failing) != maxCompactFailing {
		t.Fatalf("%d mocks' failures kept, want %d", len(c.failing), maxCompactFailing)
	}
	if c.start("other", t0.Add(time.Second-time.Millisecond)) {
		t.Error("the table full: a mock started within the last failure's wait")
	}
	if !c.start("other", t0.Add(time.Second)) {
		t.Error("the table full: a mock held back past the last failure's wait")
	}
	// Failures past the table in a row double the wait of all, as a
	// mock's do (it stayed at a second; found by a review).
	at := t0.Add(time.Second)
	for i, wait := range []time.Duration{2 * time.Second, 4 * time.Second, 8 * time.Second} {
		c.done("other", true, at)
		if c.start("other", at.Add(wait-time.Millisecond)) {
			t.Fatalf("failure %d past the table: a mock started within %v", i+2, wait)
		}
		at = at.Add(wait)
		if !c.start("other", at) {
			t.Fatalf("failure %d past the table: a mock held back past %v", i+2, wait)
		}
	}
	c.done("other", false, at)
	if !c.start("again", at) {
		t.Error("after a compaction that worked: a mock held back")
	}
	c.done("again", false, at)
	later := at.Add(time.Minute)
	c.start("late", later)
	c.done("late", true, later)
	if len(c.failing) != 1 || c.failing["late"].failures != 1 {
		t.Errorf("after the waits ended: %d mocks' failures kept, want only the new one", len(c.failing))
	}
}
