//go:build unix

package redis_test

import (
	"context"
	"fmt"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/decoy-mock/decoy/redis"
)

// A Redis that hangs (a frozen process: connections stay open, nothing
// answers) costs the quota counter a short wait, never the whole budget a
// read gives it: the store then counts alone, and no reservation fails.
func TestQuotaRedisHangs(t *testing.T) {
	t.Parallel() // waits out a frozen server
	srv := ownRedis(t)
	c, err := redis.Open(context.Background(), srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	store := ctxStore{newFakeStore()}
	q := redis.NewQuota(c, "decoytest:", store)
	const month = "2026-11"
	// The budget server.quotaContext gives a quota call of a read.
	reserve := func(id string) error {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_, ok, err := q.ReserveQuota(ctx, id, month, 1e6)
		if err == nil && !ok {
			err = fmt.Errorf("refused")
		}
		return err
	}
	for i := range 8 {
		if err := reserve(fmt.Sprint("m", i)); err != nil {
			t.Fatal(err)
		}
	}

	if err := srv.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	defer srv.Signal(syscall.SIGCONT)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var failed []error
	var slowest time.Duration
	stop := time.Now().Add(4 * time.Second)
	// More readers than the client has connections, as on a busy replica.
	for i := range 64 {
		wg.Go(func() {
			for time.Now().Before(stop) {
				start := time.Now()
				err := reserve(fmt.Sprint("m", i%8))
				mu.Lock()
				slowest = max(slowest, time.Since(start))
				if err != nil {
					failed = append(failed, err)
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	t.Logf("slowest reservation while Redis hung: %v", slowest)
	if len(failed) > 0 {
		t.Fatalf("%d reservations failed while Redis hung, first: %v", len(failed), failed[0])
	}
}

// ctxStore is a store that, as a database does, fails a call whose context
// has ended.
type ctxStore struct{ *fakeStore }

func (s ctxStore) ReserveQuota(ctx context.Context, id, month string, limit int64) (int64, bool, error) {
	if err := ctx.Err(); err != nil {
		return 0, false, err
	}
	return s.fakeStore.ReserveQuota(ctx, id, month, limit)
}

func (s ctxStore) QuotaUsed(ctx context.Context, id, month string) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	return s.fakeStore.QuotaUsed(ctx, id, month)
}
