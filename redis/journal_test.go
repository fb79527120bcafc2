package redis_test

import (
	"context"
	"testing"
	"time"

	"github.com/decoy-mock/decoy"
	"github.com/decoy-mock/decoy/journal/journaltest"
	"github.com/decoy-mock/decoy/redis"
)

func TestJournal(t *testing.T) {
	journaltest.Run(t, func(t testing.TB, size int) decoy.JournalStore {
		c, prefix := testRedis(t)
		return redis.NewJournal(c, prefix, size)
	})
}

// A project's stream is trimmed approximately (whole nodes), so it may
// hold more than the bound; what is listed and counted is the newest
// entries within it. The stream expires when no longer written.
func TestJournalStream(t *testing.T) {
	c, prefix := testRedis(t)
	j := redis.NewJournal(c, prefix, 5)
	ctx := context.Background()
	var es []*decoy.JournalEntry
	for range 30 {
		es = append(es, &decoy.JournalEntry{Method: "GET", Path: "/x", Status: 200})
	}
	if err := j.Append(ctx, map[string][]*decoy.JournalEntry{"p1": es}); err != nil {
		t.Fatal(err)
	}
	key := prefix + "{project:p1}:journal"
	if n, err := c.XLen(ctx, key).Result(); err != nil || n <= 5 {
		t.Fatalf("XLEN %d %v: the stream was trimmed exactly, so the bound of what is listed is not tested", n, err)
	}
	if n, err := j.Count(ctx, "p1", decoy.JournalFilter{}); err != nil || n != 5 {
		t.Errorf("count %d %v, want 5", n, err)
	}
	if n, err := j.Count(ctx, "p1", decoy.JournalFilter{Path: "/x"}); err != nil || n != 5 {
		t.Errorf("filtered count %d %v, want 5", n, err)
	}
	got, next, err := j.List(ctx, "p1", decoy.JournalFilter{}, "", 3)
	if err != nil || len(got) != 3 || got[0].ID != es[29].ID {
		t.Fatalf("first page: %v %v", got, err)
	}
	rest, next, err := j.List(ctx, "p1", decoy.JournalFilter{}, next, 3)
	if err != nil || len(rest) != 2 || next != "" || rest[1].ID != es[25].ID {
		t.Errorf("second page: %d entries, next %q, %v", len(rest), next, err)
	}
	if ttl, err := c.TTL(ctx, key).Result(); err != nil || ttl <= 0 || ttl > redis.JournalTTL {
		t.Errorf("TTL %v %v", ttl, err)
	}
}

// A Redis that cannot be reached fails each call at once, as EUNAVAILABLE.
func TestJournalRedisDown(t *testing.T) {
	j := redis.NewJournal(deadClient(t), "decoytest:", 10)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := j.Append(ctx, map[string][]*decoy.JournalEntry{"p": {{Path: "/x"}}})
	if decoy.ErrorCode(err) != decoy.EUNAVAILABLE {
		t.Errorf("Append: %v", err)
	}
	if _, _, err := j.List(ctx, "p", decoy.JournalFilter{}, "", 10); decoy.ErrorCode(err) != decoy.EUNAVAILABLE {
		t.Errorf("List: %v", err)
	}
	if _, err := j.Count(ctx, "p", decoy.JournalFilter{}); decoy.ErrorCode(err) != decoy.EUNAVAILABLE {
		t.Errorf("Count: %v", err)
	}
	if err := j.Clear(ctx, "p"); decoy.ErrorCode(err) != decoy.EUNAVAILABLE {
		t.Errorf("Clear: %v", err)
	}
}
