//go:build unix

package redis_test

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/decoy-mock/decoy/redis"
)

// A Redis that stops answering without closing the connection (a frozen
// process, a partition) is noticed by the ping, and the listener subscribes
// again once it answers.
func TestInvalidatorNoticesSilence(t *testing.T) {
	t.Parallel() // waits out a silent server
	srv := ownRedis(t)
	ctx := context.Background()
	c, err := redis.Open(ctx, srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	v := redis.NewInvalidator(c, "decoytest:")
	rec := listen(t, v)
	rec.expect(t, "listening", 2*time.Second)

	if err := srv.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	rec.expect(t, "lost", 5*time.Second)
	t.Logf("silence noticed in %v", time.Since(start))
	if err := srv.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	rec.expect(t, "listening", 5*time.Second)
	other := redis.NewInvalidator(c, "decoytest:")
	if err := other.Invalidate(ctx, "m1"); err != nil {
		t.Fatal(err)
	}
	rec.expect(t, "m1", 2*time.Second)
}
