package storetest

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/decoy-mock/decoy"
)

// RunRuleCounter runs the suite of decoy.RuleCounter (§13.1: a rule with
// times holds for at most that many requests, counted across replicas).
// open returns an empty counter, and a function that makes a route for it
// to count (a store's counts belong to routes it keeps).
func RunRuleCounter(t *testing.T, open func(t *testing.T) (decoy.RuleCounter, func(t *testing.T) string)) {
	t.Run("Times", func(t *testing.T) { testRuleTimes(t, open) })
	t.Run("Concurrent", func(t *testing.T) { testRuleConcurrent(t, open) })
}

// take takes rule index of route, failing the test on an error.
func take(t *testing.T, c decoy.RuleCounter, route string, index int, times int64) bool {
	t.Helper()
	ok, err := c.TakeRule(context.Background(), route, index, times)
	if err != nil {
		t.Fatalf("TakeRule(%s, %d, %d): %v", route, index, times, err)
	}
	return ok
}

// A rule holds its times, then not; each rule of each route counts apart;
// a reset starts a route's counts again, and only its.
func testRuleTimes(t *testing.T, open func(t *testing.T) (decoy.RuleCounter, func(t *testing.T) string)) {
	c, newRoute := open(t)
	a, b := newRoute(t), newRoute(t)
	for i := range 3 {
		if !take(t, c, a, 0, 3) {
			t.Fatalf("take %d of 3 refused", i+1)
		}
	}
	if take(t, c, a, 0, 3) {
		t.Fatal("a fourth take of 3 counted")
	}
	if !take(t, c, a, 1, 1) || take(t, c, a, 1, 1) {
		t.Error("rule 1 of the route does not count apart, once")
	}
	if !take(t, c, b, 0, 1) {
		t.Error("another route's rule 0 refused")
	}
	if !take(t, c, a, 99, 1) {
		t.Error("the last rule a route may have refused")
	}
	// More times given (the rules changed without a reset): the count
	// goes on from where it is.
	if !take(t, c, a, 0, 4) || take(t, c, a, 0, 4) {
		t.Error("times raised to 4 after 3: want one more take")
	}
	if err := c.ResetRules(context.Background(), a); err != nil {
		t.Fatal(err)
	}
	if !take(t, c, a, 0, 1) || !take(t, c, a, 1, 1) {
		t.Error("counts not started again by a reset")
	}
	if take(t, c, b, 0, 1) {
		t.Error("a reset of one route reset another's")
	}
	if err := c.ResetRules(context.Background(), newRoute(t)); err != nil {
		t.Errorf("reset of a route never counted: %v", err)
	}
	if err := c.ResetRules(context.Background()); err != nil {
		t.Errorf("reset of no route: %v", err)
	}
	// Many routes at once (a deletion's): each of them, and only them.
	d := newRoute(t)
	take(t, c, a, 0, 1)
	take(t, c, b, 0, 2)
	take(t, c, d, 0, 1)
	if err := c.ResetRules(context.Background(), a, newRoute(t), b); err != nil {
		t.Fatal(err)
	}
	if !take(t, c, a, 0, 1) || !take(t, c, b, 0, 1) {
		t.Error("counts of two routes reset together not started again")
	}
	if take(t, c, d, 0, 1) {
		t.Error("a reset of routes reset another's")
	}
}

// Concurrent takes count exactly: never more than times.
func testRuleConcurrent(t *testing.T, open func(t *testing.T) (decoy.RuleCounter, func(t *testing.T) string)) {
	c, newRoute := open(t)
	route := newRoute(t)
	const times, tries = 7, 40
	var taken atomic.Int64
	var wg sync.WaitGroup
	for range tries {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ok, err := c.TakeRule(context.Background(), route, 2, times)
			if err != nil {
				t.Error(err)
			}
			if ok {
				taken.Add(1)
			}
		}()
	}
	wg.Wait()
	if n := taken.Load(); n != times {
		t.Errorf("%d of %d concurrent takes counted, want %d", n, tries, times)
	}
}

// NewRoute makes a route of its own mock in the default project of s, for
// a counter of s to count: its id.
func NewRoute(t *testing.T, s RouteBackend) string {
	t.Helper()
	n := int(routeSeq.Add(1))
	m := createIn(t, s, 1000+n, decoy.DefaultProjectID, "counted", `[]`)
	return mustRoute(t, s, get(decoy.DefaultProjectID, "/counted/"+m.ID, m.ID)).ID
}

// routeSeq numbers the routes NewRoute makes.
var routeSeq atomic.Int64
