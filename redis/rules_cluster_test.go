package redis_test

import (
	"context"
	"testing"

	"github.com/decoy-mock/decoy/internal/testservice"
	"github.com/decoy-mock/decoy/redis"
)

// Resets of several routes work on Redis Cluster, where each route's key
// has a hash slot of its own (one DEL of them all was CROSSSLOT; found by
// a review).
func TestRuleResetOnCluster(t *testing.T) {
	r := testservice.StartRedisCluster(t)
	c, err := redis.Open(context.Background(), "redis+cluster://"+r.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	rc := redis.NewRuleCounter(c, "decoytest:")
	ctx := context.Background()
	for _, id := range []string{"a", "b"} {
		if ok, err := rc.TakeRule(ctx, id, 0, 1); !ok || err != nil {
			t.Fatal(ok, err)
		}
	}
	if err := rc.ResetRules(ctx, "a", "b"); err != nil {
		t.Fatalf("ResetRules of two routes on a cluster: %v", err)
	}
	for _, id := range []string{"a", "b"} {
		if ok, err := rc.TakeRule(ctx, id, 0, 1); !ok || err != nil {
			t.Errorf("route %s after the reset: %v, %v", id, ok, err)
		}
	}
}
