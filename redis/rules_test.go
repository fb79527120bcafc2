package redis_test

import (
	"context"
	"testing"

	"github.com/decoy-mock/decoy"
	"github.com/decoy-mock/decoy/internal/testservice"
	"github.com/decoy-mock/decoy/redis"
	"github.com/decoy-mock/decoy/storetest"
	"github.com/google/uuid"
)

func TestRuleCounter(t *testing.T) {
	storetest.RunRuleCounter(t, func(t *testing.T) (decoy.RuleCounter, func(t *testing.T) string) {
		c, prefix := testRedis(t)
		return redis.NewRuleCounter(c, prefix), func(*testing.T) string { return uuid.NewString() }
	})
}

// Two counters on one Redis and prefix (two replicas) share the counts.
func TestRuleCounterShared(t *testing.T) {
	c, prefix := testRedis(t)
	a, b := redis.NewRuleCounter(c, prefix), redis.NewRuleCounter(c, prefix)
	ctx := context.Background()
	route := uuid.NewString()
	got := 0
	for i := range 6 {
		rc := a
		if i%2 == 1 {
			rc = b
		}
		ok, err := rc.TakeRule(ctx, route, 0, 3)
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			got++
		}
	}
	if got != 3 {
		t.Errorf("%d takes of 3 counted across two counters", got)
	}
	if err := b.ResetRules(ctx, route); err != nil {
		t.Fatal(err)
	}
	if ok, err := a.TakeRule(ctx, route, 0, 3); !ok || err != nil {
		t.Errorf("after a reset on the other: %v, %v", ok, err)
	}
}

// A Redis that cannot be reached is EUNAVAILABLE.
func TestRuleCounterDown(t *testing.T) {
	srv := testservice.StartRedis(t)
	c, err := redis.Open(context.Background(), srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	rc := redis.NewRuleCounter(c, "decoytest:")
	srv.Kill()
	_, err = rc.TakeRule(context.Background(), uuid.NewString(), 0, 1)
	if decoy.ErrorCode(err) != decoy.EUNAVAILABLE {
		t.Errorf("take on a dead Redis: %v", err)
	}
	if err := rc.ResetRules(context.Background(), "x"); decoy.ErrorCode(err) != decoy.EUNAVAILABLE {
		t.Errorf("reset on a dead Redis: %v", err)
	}
}
