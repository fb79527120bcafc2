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
	bin := redisServerBinary(t)
	srv := startRedis(t, bin, freePort(t))
	ctx := context.Background()
	c, err := redis.Open(ctx, "redis://"+srv.addr+"/0")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	v := redis.NewInvalidator(c, "decoytest:")
	rec := listen(t, v)
	rec.expect(t, "listening", 2*time.Second)

	srv.signal(t, syscall.SIGSTOP)
	start := time.Now()
	rec.expect(t, "lost", 5*time.Second)
	t.Logf("silence noticed in %v", time.Since(start))
	srv.signal(t, syscall.SIGCONT)
	rec.expect(t, "listening", 5*time.Second)
	other := redis.NewInvalidator(c, "decoytest:")
	if err := other.Invalidate(ctx, "m1"); err != nil {
		t.Fatal(err)
	}
	rec.expect(t, "m1", 2*time.Second)
}
