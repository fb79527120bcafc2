package redis_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/decoy-mock/decoy"
	"github.com/decoy-mock/decoy/internal/testservice"
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

// A batch is one message of a project's stream. The stream is trimmed a
// message at a time, so it may hold more than the bound, by up to its
// oldest message's entries: what is listed and counted is the newest
// entries within it. The stream and its count expire when no longer
// written.
func TestJournalStream(t *testing.T) {
	c, prefix := testRedis(t)
	j := redis.NewJournal(c, prefix, 5)
	ctx := context.Background()
	key := prefix + "{project:p1}:journal"
	state := func() string {
		t.Helper()
		msgs, err := c.XLen(ctx, key).Result()
		if err != nil {
			t.Fatal(err)
		}
		return fmt.Sprintf("%d messages, a count of %s", msgs, c.Get(ctx, key+":n").Val())
	}
	var es []*decoy.JournalEntry
	for i := range 30 {
		es = append(es, &decoy.JournalEntry{Method: "GET", Path: fmt.Sprint("/", i), Status: 200})
	}
	if err := journaltest.Append(ctx, j, map[string][]*decoy.JournalEntry{"p1": es}); err != nil {
		t.Fatal(err)
	}
	if got := state(); got != "1 messages, a count of 30" {
		t.Fatalf("after a batch of 30: %s", got)
	}
	if n, err := j.Count(ctx, "p1", decoy.JournalFilter{}); err != nil || n != 5 {
		t.Errorf("count %d %v, want 5", n, err)
	}
	if n, err := j.Count(ctx, "p1", decoy.JournalFilter{Method: "GET"}); err != nil || n != 5 {
		t.Errorf("filtered count %d %v, want 5", n, err)
	}
	got, next, err := j.List(ctx, "p1", decoy.JournalFilter{}, "", 3)
	if err != nil || len(got) != 3 || got[0].ID != es[29].ID {
		t.Fatalf("first page: %v %v", got, err)
	}
	rest, next, err := j.List(ctx, "p1", decoy.JournalFilter{}, next, 3)
	if err != nil || len(rest) != 2 || next != "" || rest[1].ID != es[25].ID || rest[1].Path != "/25" {
		t.Errorf("second page: %d entries, next %q, %v", len(rest), next, err)
	}
	after, err := j.After(ctx, "p1", es[26].ID, 2)
	if err != nil || len(after) != 2 || after[0].Path != "/27" || after[1].Path != "/28" {
		t.Errorf("After %s: %v %v", es[26].ID, after, err)
	}
	// Four more, one at a time: the message of 30 stays while the others
	// hold fewer than 5, and leaves with the fifth.
	for i := range 4 {
		appendPaths(t, j, "p1", fmt.Sprint("/new", i))
	}
	if got := state(); got != "5 messages, a count of 34" {
		t.Errorf("after 4 more: %s", got)
	}
	appendPaths(t, j, "p1", "/new4")
	if got := state(); got != "5 messages, a count of 5" {
		t.Errorf("after 5 more: %s", got)
	}
	for _, k := range []string{key, key + ":n", key + ":i"} {
		if ttl, err := c.TTL(ctx, k).Result(); err != nil || ttl <= 0 || ttl > redis.JournalTTL {
			t.Errorf("%s: TTL %v %v", k, ttl, err)
		}
	}
	// A count lost is made again from the messages.
	c.Del(ctx, key+":n")
	appendPaths(t, j, "p1", "/new5")
	if got := state(); got != "5 messages, a count of 5" {
		t.Errorf("after the count was lost: %s", got)
	}
	if err := j.Clear(ctx, "p1"); err != nil {
		t.Fatal(err)
	}
	if n := c.Exists(ctx, key, key+":n").Val(); n != 0 {
		t.Errorf("Clear left %d keys", n)
	}
}

// An earlier version's messages, of one entry each ("r", its record, or
// "e", its JSON), are read with the packed ones and counted as one each;
// so is a message not the journal's, which lists as nothing.
func TestJournalEarlierMessages(t *testing.T) {
	c, prefix := testRedis(t)
	j := redis.NewJournal(c, prefix, 4)
	ctx := context.Background()
	key := prefix + "{project:p1}:journal"
	old := &decoy.JournalEntry{Method: "GET", Path: "/r", Status: 200}
	c.XAdd(ctx, &goredis.XAddArgs{Stream: key, Values: []any{"e", `{"method":"GET","path":"/e","status":200}`}})
	c.XAdd(ctx, &goredis.XAddArgs{Stream: key, Values: []any{"r", old.AppendRecord(nil)}})
	if n, err := j.Count(ctx, "p1", decoy.JournalFilter{}); err != nil || n != 2 {
		t.Errorf("count %d %v, want 2", n, err)
	}
	appendPaths(t, j, "p1", "/b0", "/b1")
	if got := listPaths(t, j, "p1"); got != "[/b1 /b0 /r /e]" {
		t.Errorf("listed %v", got)
	}
	if n, err := j.Count(ctx, "p1", decoy.JournalFilter{}); err != nil || n != 4 {
		t.Errorf("count %d %v, want 4", n, err)
	}
	// Another's message, then a batch: the two oldest leave.
	c.XAdd(ctx, &goredis.XAddArgs{Stream: key, Values: []any{"x", "something else"}})
	appendPaths(t, j, "p1", "/b2")
	if got := listPaths(t, j, "p1"); got != "[/b2 /b1 /b0]" {
		t.Errorf("after another's message and one more: %v", got)
	}
	if n := c.XLen(ctx, key).Val(); n != 3 {
		t.Errorf("%d messages, want 3", n)
	}
}

// A count kept while the stream and the messages' counts were lost (an
// eviction) is mended: the entries written next are kept.
func TestJournalStaleCount(t *testing.T) {
	c, prefix := testRedis(t)
	j := redis.NewJournal(c, prefix, 5)
	ctx := context.Background()
	key := prefix + "{project:p1}:journal"
	for i := range 3 {
		appendPaths(t, j, "p1", fmt.Sprint("/", i), "/x")
	}
	c.Del(ctx, key, key+":i")
	if n, err := j.Count(ctx, "p1", decoy.JournalFilter{}); err != nil || n != 0 {
		t.Errorf("count of a lost stream %d %v, want 0", n, err)
	}
	for i := range 2 {
		appendPaths(t, j, "p1", fmt.Sprint("/new", i))
	}
	if got := listPaths(t, j, "p1"); got != "[/new1 /new0]" {
		t.Errorf("listed %v", got)
	}
	if n, err := j.Count(ctx, "p1", decoy.JournalFilter{}); err != nil || n != 2 {
		t.Errorf("count %d %v, want 2", n, err)
	}
	// Counts of the wrong type are made anew too.
	c.Del(ctx, key+":i")
	c.Set(ctx, key+":i", "not a list", 0)
	c.Set(ctx, key+":n", "not a number", 0)
	appendPaths(t, j, "p1", "/new2")
	if n, err := j.Count(ctx, "p1", decoy.JournalFilter{}); err != nil || n != 3 {
		t.Errorf("count after counts of the wrong type %d %v, want 3", n, err)
	}
}

// appendPaths appends a batch of a project's entries, one a path.
func appendPaths(t *testing.T, j *redis.Journal, project string, paths ...string) {
	t.Helper()
	var es []*decoy.JournalEntry
	for _, p := range paths {
		es = append(es, &decoy.JournalEntry{Path: p})
	}
	if err := journaltest.Append(context.Background(), j, map[string][]*decoy.JournalEntry{project: es}); err != nil {
		t.Fatal(err)
	}
}

// listPaths lists a project's entries' paths, newest first.
func listPaths(t *testing.T, j *redis.Journal, project string) string {
	t.Helper()
	got, _, err := j.List(context.Background(), project, decoy.JournalFilter{}, "", 100)
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, e := range got {
		paths = append(paths, e.Path)
	}
	return fmt.Sprint(paths)
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

// A batch of large bodies is several messages, of 1 MiB at most each (or
// one entry): a listing reads a few at a time. The entries keep their
// order across the messages, for List, its pages and After.
func TestJournalLargeBatch(t *testing.T) {
	c, prefix := testRedis(t)
	j := redis.NewJournal(c, prefix, 100)
	ctx := context.Background()
	body := strings.Repeat("b", 64<<10)
	var es []*decoy.JournalEntry
	for i := range 40 {
		es = append(es, &decoy.JournalEntry{Method: "POST", Path: fmt.Sprint("/", i), Body: body, Status: 201})
	}
	if err := journaltest.Append(ctx, j, map[string][]*decoy.JournalEntry{"p1": es}); err != nil {
		t.Fatal(err)
	}
	if n := c.XLen(ctx, prefix+"{project:p1}:journal").Val(); n != 3 {
		t.Errorf("40 entries of 64 KiB made %d messages, want 3", n)
	}
	var paths []string
	cursor := ""
	for {
		page, next, err := j.List(ctx, "p1", decoy.JournalFilter{}, cursor, 7)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range page {
			if e.Body != body {
				t.Fatalf("%s: a body of %d bytes", e.Path, len(e.Body))
			}
			paths = append(paths, e.Path)
		}
		if cursor = next; cursor == "" {
			break
		}
	}
	for i, p := range paths {
		if want := fmt.Sprint("/", 39-i); p != want {
			t.Fatalf("entry %d listed is %s, want %s (%v)", i, p, want, paths)
		}
	}
	if len(paths) != 40 {
		t.Errorf("listed %d entries, want 40", len(paths))
	}
	after, err := j.After(ctx, "p1", es[5].ID, 100)
	if err != nil || len(after) != 34 || after[0].Path != "/6" || after[33].Path != "/39" {
		t.Errorf("After the 6th: %d entries, %v", len(after), err)
	}
}

// On a Redis Cluster, a batch of several projects is written: a cluster's
// transaction is of one slot, and each project's keys share one (its hash
// tag), not the projects'.
func TestJournalCluster(t *testing.T) {
	r := testservice.StartRedisCluster(t)
	journaltest.Run(t, func(t testing.TB, size int) decoy.JournalStore {
		c, err := redis.Open(context.Background(), "redis+cluster://"+r.Addr())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		if _, ok := c.(*goredis.ClusterClient); !ok {
			t.Fatalf("redis.Open gave a %T, not a cluster's client", c)
		}
		return redis.NewJournal(c, "decoytest:"+randomHex()+":", size)
	})
}

// A batch's counts are kept by a script run by its SHA1: a Redis that
// does not have it (new, restarted, or after SCRIPT FLUSH) has it run
// from its text, and the batch's messages are counted all the same, of
// every project of the batch.
func TestJournalScriptLost(t *testing.T) {
	r := testservice.StartRedis(t)
	c, err := redis.Open(context.Background(), r.URL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	ctx := context.Background()
	j := redis.NewJournal(c, "decoytest:", 5)
	counts := func(project string) string {
		t.Helper()
		key := "decoytest:{project:" + project + "}:journal"
		return fmt.Sprintf("%d messages, counts %v, total %s", c.XLen(ctx, key).Val(), c.LRange(ctx, key+":i", 0, -1).Val(), c.Get(ctx, key+":n").Val())
	}
	appendPaths(t, j, "p1", "/1", "/2", "/3") // a new Redis: not loaded yet
	if got := counts("p1"); got != "1 messages, counts [3], total 3" {
		t.Errorf("after the first batch: %s", got)
	}
	if err := c.ScriptFlush(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	batch := map[string][]*decoy.JournalEntry{}
	for _, p := range []string{"p1", "p2"} {
		for i := range 4 {
			batch[p] = append(batch[p], &decoy.JournalEntry{Path: fmt.Sprint("/", p, "/", i)})
		}
	}
	if err := journaltest.Append(ctx, j, batch); err != nil {
		t.Fatalf("a batch after SCRIPT FLUSH: %v", err)
	}
	if got := counts("p1"); got != "2 messages, counts [3 4], total 7" {
		t.Errorf("p1 after SCRIPT FLUSH: %s", got)
	}
	if got := counts("p2"); got != "1 messages, counts [4], total 4" {
		t.Errorf("p2 after SCRIPT FLUSH: %s", got)
	}
	appendPaths(t, j, "p1", "/4", "/5") // loaded again: the oldest message leaves
	if got := counts("p1"); got != "2 messages, counts [4 2], total 6" {
		t.Errorf("after the script was loaded again: %s", got)
	}
	if got := listPaths(t, j, "p1"); got != "[/5 /4 /p1/3 /p1/2 /p1/1]" {
		t.Errorf("listed %s", got)
	}
	// Lost again, and another project's XADD fails first in the same
	// transaction: the batch fails, and what went in is counted.
	if err := c.ScriptFlush(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	c.Set(ctx, "decoytest:{project:a}:journal", "not a stream", 0)
	batch = map[string][]*decoy.JournalEntry{"a": {{Path: "/a"}}, "p2": {{Path: "/x"}, {Path: "/y"}, {Path: "/z"}}}
	if err := journaltest.Append(ctx, j, batch); err == nil {
		t.Error("a batch with a project of a stream key of the wrong type: no error")
	}
	if got := counts("p2"); got != "2 messages, counts [4 3], total 7" {
		t.Errorf("p2 beside a failed project after SCRIPT FLUSH: %s", got)
	}
}
