package server

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/decoy-mock/decoy"
)

// workspaces is a TeamStore that knows every workspace, with one monthly
// reads limit for all, and counts the times it is asked.
type workspaces struct {
	decoy.TeamStore
	mu    sync.Mutex
	reads int64
	asked int
	down  bool
}

func (w *workspaces) FindWorkspace(_ context.Context, id string) (*decoy.Workspace, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.asked++
	if w.down {
		return nil, decoy.Errorf(decoy.EUNAVAILABLE, "The database is unavailable")
	}
	n := w.reads
	return &decoy.Workspace{ID: id, Limits: decoy.WorkspaceLimits{MonthlyReads: &n}}, nil
}

func TestWorkspaceReadLimitCached(t *testing.T) {
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	store := &workspaces{reads: 5}
	s := New(Config{Teams: store, Now: func() time.Time { return now }})
	ctx := context.Background()
	for range 100 {
		if n, err := s.workspaceReadLimit(ctx, "w"); err != nil || n != 5 {
			t.Fatalf("limit %d %v", n, err)
		}
	}
	if store.asked != 1 {
		t.Errorf("the store was asked %d times for 100 reads", store.asked)
	}
	store.reads = 7
	now = now.Add(readLimitTTL - time.Millisecond)
	if n, _ := s.workspaceReadLimit(ctx, "w"); n != 5 {
		t.Errorf("within the TTL: %d", n)
	}
	now = now.Add(time.Millisecond)
	if n, _ := s.workspaceReadLimit(ctx, "w"); n != 7 {
		t.Errorf("after the TTL (under a second): %d", n)
	}
	store.reads = 9
	s.forgetReadLimit("w")
	if n, _ := s.workspaceReadLimit(ctx, "w"); n != 9 {
		t.Errorf("after a change here: %d", n)
	}
	// The store down: the last limit known holds, and none is none.
	store.down = true
	now = now.Add(time.Hour)
	if n, err := s.workspaceReadLimit(ctx, "w"); n != 9 || err != nil {
		t.Errorf("store down: %d %v", n, err)
	}
	if n, err := s.workspaceReadLimit(ctx, "never read"); n != 0 || err != nil {
		t.Errorf("store down, nothing known: %d %v", n, err)
	}
	asked := store.asked
	for range 100 {
		s.workspaceReadLimit(ctx, "never read")
	}
	if store.asked != asked {
		t.Errorf("a store that is down was asked %d more times within the TTL", store.asked-asked)
	}
}

func TestWorkspaceReadLimitsBounded(t *testing.T) {
	s := New(Config{Teams: &workspaces{}})
	for i := range maxReadLimits + 1 {
		if _, err := s.workspaceReadLimit(context.Background(), strconv.Itoa(i)); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(s.readLimits.limits); n > maxReadLimits {
		t.Errorf("%d workspaces' limits kept, bound %d", n, maxReadLimits)
	}
}
