//go:build unix

package redis_test

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/decoy-mock/decoy"
	"github.com/decoy-mock/decoy/journal/journaltest"
	"github.com/decoy-mock/decoy/redis"
)

// A Redis that hangs (SIGSTOP) fails a batch within its writer's budget,
// and takes batches again once it answers.
func TestJournalRedisHangs(t *testing.T) {
	t.Parallel() // waits out a frozen server
	srv := ownRedis(t)
	c, err := redis.Open(context.Background(), srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	j := redis.NewJournal(c, "decoytest:", 10)
	write := func() (time.Duration, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		defer cancel()
		start := time.Now()
		err := j.Append(ctx, journaltest.Records(map[string][]*decoy.JournalEntry{"p": {{Path: "/x"}}}))
		return time.Since(start), err
	}
	if _, err := write(); err != nil {
		t.Fatal(err)
	}
	if err := srv.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	defer srv.Signal(syscall.SIGCONT)
	took, err := write()
	if decoy.ErrorCode(err) != decoy.EUNAVAILABLE || took > 2*time.Second {
		t.Errorf("a batch to a frozen Redis: %v after %v", err, took)
	}
	if err := srv.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := write(); err == nil {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("Redis answers again, but batches fail: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if n, err := j.Count(context.Background(), "p", decoy.JournalFilter{}); err != nil || n < 2 {
		t.Errorf("count after the thaw: %d %v", n, err)
	}
}
