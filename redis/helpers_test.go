package redis_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/decoy-mock/decoy/internal/testservice"
	"github.com/decoy-mock/decoy/redis"
	goredis "github.com/redis/go-redis/v9"
)

func TestMain(m *testing.M) { os.Exit(testservice.Main(m)) }

// testRedis connects to the Redis named by DECOY_TEST_REDIS_URL, or to a
// private one (see testservice). It returns a key prefix of the test's own,
// whose keys are deleted when the test ends: the Redis may be shared, so a
// test never flushes it.
func testRedis(t testing.TB) (goredis.UniversalClient, string) {
	t.Helper()
	c, err := redis.Open(context.Background(), testservice.RedisURL(t))
	if err != nil {
		if c != nil {
			c.Close()
		}
		t.Fatal(err)
	}
	prefix := "decoytest:" + randomHex() + ":"
	t.Cleanup(func() {
		deleteKeys(t, c, prefix)
		c.Close()
	})
	return c, prefix
}

// deleteKeys deletes every key that starts with prefix, on every master of
// a cluster.
func deleteKeys(t testing.TB, c goredis.UniversalClient, prefix string) {
	ctx := context.Background()
	del := func(ctx context.Context, c goredis.UniversalClient) error {
		iter := c.Scan(ctx, 0, prefix+"*", 1000).Iterator()
		for iter.Next(ctx) {
			if err := c.Del(ctx, iter.Val()).Err(); err != nil {
				return err
			}
		}
		return iter.Err()
	}
	var err error
	if cc, ok := c.(*goredis.ClusterClient); ok {
		err = cc.ForEachMaster(ctx, func(ctx context.Context, n *goredis.Client) error { return del(ctx, n) })
	} else {
		err = del(ctx, c)
	}
	if err != nil {
		t.Errorf("deleting the test's keys: %v", err)
	}
}

func randomHex() string {
	b := make([]byte, 8)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// closedAddr returns an address nothing listens on.
func closedAddr(t testing.TB) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// deadClient returns a client of a Redis that does not exist.
func deadClient(t testing.TB) goredis.UniversalClient {
	c := goredis.NewClient(&goredis.Options{
		Addr:          closedAddr(t),
		DialTimeout:   200 * time.Millisecond,
		DialerRetries: 1,
		MaxRetries:    -1,
	})
	t.Cleanup(func() { c.Close() })
	return c
}

// clock is a manual clock for tests; it never sleeps.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Add(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

// Tick is the resolution of the Redis limiter: a microsecond.
func (c *clock) Tick() time.Duration { return time.Microsecond }
