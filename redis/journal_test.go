package redis_test

import (
	"context"
	"testing"
	"time"

	"github.com/decoy-mock/decoy"
	"github.com/decoy-mock/decoy/journal/journaltest"
	"github.com/decoy-mock/decoy/redis"
	goredis "github.com/redis/go-redis/v9"
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
	if err := journaltest.Append(ctx, j, map[string][]*decoy.JournalEntry{"p1": es}); err != nil {
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
	err := j.Append(ctx, journaltest.Records(map[string][]*decoy.JournalEntry{"p": {{Path: "/x"}}}))
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

// Entries an earlier version wrote, as JSON in the field "e", are read
// with the records of "r" around them; a message with neither is skipped.
func TestJournalOldEntries(t *testing.T) {
	c, prefix := testRedis(t)
	j := redis.NewJournal(c, prefix, 10)
	ctx := context.Background()
	key := prefix + "{project:p}:journal"
	at := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	old := &decoy.JournalEntry{At: at, Method: "GET", Path: "/old", Headers: map[string]string{"Host": "x"}, Status: 200, DurationMS: 1.5}
	if err := c.XAdd(ctx, &goredis.XAddArgs{Stream: key, Values: []any{"e", old.AppendJSON(nil)}}).Err(); err != nil {
		t.Fatal(err)
	}
	if err := j.Append(ctx, journaltest.Records(map[string][]*decoy.JournalEntry{"p": {{At: at, Method: "POST", Path: "/new", Status: 201}}})); err != nil {
		t.Fatal(err)
	}
	if err := c.XAdd(ctx, &goredis.XAddArgs{Stream: key, Values: []any{"other", "x"}}).Err(); err != nil {
		t.Fatal(err)
	}
	got, _, err := j.List(ctx, "p", decoy.JournalFilter{}, "", 10)
	if err != nil || len(got) != 2 {
		t.Fatalf("%v %v", got, err)
	}
	if got[0].Path != "/new" || got[0].Status != 201 || !got[0].At.Equal(at) {
		t.Errorf("the record: %+v", got[0])
	}
	if g := got[1]; g.Path != "/old" || g.Headers["Host"] != "x" || g.DurationMS != 1.5 || !g.At.Equal(at) || g.ID == "" {
		t.Errorf("the earlier version's entry: %+v", g)
	}
	after, err := j.After(ctx, "p", "0-0", 10)
	if err != nil || len(after) != 2 || after[0].Path != "/old" {
		t.Errorf("After: %v %v", after, err)
	}
}
