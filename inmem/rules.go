package inmem

import (
	"context"
	"sync"

	"github.com/decoy-mock/decoy"
)

// RuleCounter counts the requests routes' rules with times held for
// (decoy.RuleCounter) in process memory: exact, and shared by nothing. It
// is the counter of a server on the embedded store, which one process
// owns; its counts start again when the process does, as a reset starts
// them. Replicas share Redis's, or their database's.
type RuleCounter struct {
	mu     sync.Mutex
	counts map[string][]int64 // by route, by rule index
}

// NewRuleCounter returns an empty RuleCounter.
func NewRuleCounter() *RuleCounter {
	return &RuleCounter{counts: map[string][]int64{}}
}

var _ decoy.RuleCounter = (*RuleCounter)(nil)

// TakeRule counts one more request for rule index of route when fewer than
// times were counted.
func (c *RuleCounter) TakeRule(_ context.Context, routeID string, index int, times int64) (bool, error) {
	if index < 0 || index >= decoy.MaxRules {
		return false, decoy.Errorf(decoy.EINVALID, "rule index %d out of range", index)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	counts := c.counts[routeID]
	if index >= len(counts) {
		counts = append(counts, make([]int64, index+1-len(counts))...)
		c.counts[routeID] = counts
	}
	if counts[index] >= times {
		return false, nil
	}
	counts[index]++
	return true, nil
}

// ResetRules forgets routes' counts.
func (c *RuleCounter) ResetRules(_ context.Context, routeIDs ...string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, id := range routeIDs {
		delete(c.counts, id)
	}
	return nil
}

// Routes returns how many routes the counter holds counts for.
func (c *RuleCounter) Routes() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.counts)
}
