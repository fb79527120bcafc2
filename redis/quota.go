package redis

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/decoy-mock/decoy"
	goredis "github.com/redis/go-redis/v9"
)

const (
	// quotaTTL keeps a month's count a little longer than any month, from
	// the first reservation of the month on; a count of a past month is
	// then read from the store.
	quotaTTL = 40 * 24 * time.Hour

	// quotaRetry is how long the store answers alone after Redis failed,
	// so that a dead Redis costs one timeout a second, not one a request.
	quotaRetry = time.Second

	// maxPending bounds the served responses that wait in memory for the
	// store to count them.
	maxPending = 10000

	// flushInterval is how often Run hands waiting responses to the store.
	flushInterval = time.Second

	// redisBudget bounds the Redis part of each call, dial and pool wait
	// included, so that a Redis that hangs (a frozen process keeps its
	// connections open and answers nothing) leaves the store the rest of
	// the caller's time to count alone.
	redisBudget = 300 * time.Millisecond
)

// reserveScript counts one response when fewer than limit were counted
// (limit 0: always). It answers {-1, 0} when the count is missing, so that
// the caller seeds it from the store; else {count, admitted}.
var reserveScript = goredis.NewScript(`
local v = redis.call('GET', KEYS[1])
if not v then return {-1, 0} end
local n = tonumber(v)
local limit = tonumber(ARGV[1])
if limit > 0 and n >= limit then return {n, 0} end
return {redis.call('INCR', KEYS[1]), 1}
`)

// releaseScript takes one back, never below zero, and never creates the key.
var releaseScript = goredis.NewScript(`
local v = redis.call('GET', KEYS[1])
if v and tonumber(v) > 0 then return redis.call('DECR', KEYS[1]) end
return 0
`)

// syncScript sets the count to the store's (ARGV[1]); with ARGV[2] "raise"
// only when that is higher. It keeps the key's expiry, or sets a fresh one
// (ARGV[3] seconds) on a key it creates.
var syncScript = goredis.NewScript(`
local cur = redis.call('GET', KEYS[1])
if cur and ARGV[2] == 'raise' and tonumber(cur) >= tonumber(ARGV[1]) then return 0 end
if cur then
  local ttl = redis.call('PTTL', KEYS[1])
  if ttl > 0 then
    redis.call('SET', KEYS[1], ARGV[1], 'PX', ttl)
    return 1
  end
end
redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[3])
return 1
`)

// quotaClient is what the quota counter needs of a Redis client.
type quotaClient interface {
	goredis.Scripter
	Get(ctx context.Context, key string) *goredis.StringCmd
	SetNX(ctx context.Context, key string, value any, expiration time.Duration) *goredis.BoolCmd
}

// Quota counts served responses per mock and month in Redis, in front of a
// durable store that stays the final gate.
//
// Redis holds one count per mock and month, shared by the replicas, at
// prefix+"{mock:"+id+"}:quota:"+month (seeded from the store when missing,
// expiring 40 days after). A workspace's reads (its monthly_reads) are
// counted the same way under its id (decoy.QuotaCounter). A mock at its quota is refused without a write
// to the database. A response Redis admits is then counted by
// the store, which is exact and durable and decides: when it refuses, the
// Redis count is set back to the store's (a Redis that fell behind, say
// while it was partitioned, corrects itself on the next refusal). A Redis
// that counts more than the store (the mock was deleted and created again)
// is corrected from the store's count when it refuses.
//
// When the store fails after Redis admitted, the response is served on the
// Redis count and its +1 waits in memory (bounded) until the store can take
// it: before the next store call for that mock and month, or from Run. When
// Redis fails, the store answers alone, which is still exact across
// replicas when they share it.
type Quota struct {
	// OnFallback, when set, is called with the error each time Redis fails
	// and the store answers alone.
	OnFallback func(err error)

	c      quotaClient
	prefix string
	store  decoy.QuotaCounter

	// retryAt is when to try Redis again after a failure (Unix
	// nanoseconds); in the past while Redis works.
	retryAt atomic.Int64

	mu       sync.Mutex
	pending  map[monthKey]int64 // served responses the store has yet to count
	npending int64
}

type monthKey struct{ id, month string }

// NewQuota returns a quota counter whose Redis keys start with prefix, in
// front of store.
func NewQuota(c goredis.UniversalClient, prefix string, store decoy.QuotaCounter) *Quota {
	return &Quota{c: c, prefix: prefix, store: store, pending: make(map[monthKey]int64)}
}

var _ decoy.QuotaCounter = (*Quota)(nil)

// ReserveQuota counts one served response of mock id in month when fewer
// than limit were counted (limit 0: always), and returns the count after the
// call. Errors are the store's, returned only when the store is needed and
// fails (EUNAVAILABLE from the store when it cannot be reached).
func (q *Quota) ReserveQuota(ctx context.Context, id, month string, limit int64) (int64, bool, error) {
	key := q.key(id, month)
	used, ok, err, serr := q.reserveRedis(ctx, key, id, month, limit)
	if serr != nil {
		return 0, false, serr
	}
	if err != nil {
		q.fellBack(ctx, err)
		if err := q.flushKey(ctx, id, month); err != nil {
			return 0, false, err
		}
		return q.store.ReserveQuota(ctx, id, month, limit)
	}
	if !ok {
		// Redis may count more than the store: after a mock was deleted
		// and created again under the same id, or a release failed in
		// Redis. The store is the truth, so a refusal reads its count (one
		// cheap read per request the rate limit lets through), and Redis
		// takes it when it is lower.
		n, err := q.storeUsed(ctx, id, month)
		if err != nil || n >= used {
			return used, false, nil
		}
		q.syncRedis(ctx, key, n, "set")
		if limit > 0 && n >= limit {
			return n, false, nil
		}
		used = n
	}

	// Redis admitted: the store decides. Responses it has yet to count go
	// first, so that it decides on the full count.
	err = q.flushKey(ctx, id, month)
	var sused int64
	var sok bool
	if err == nil {
		sused, sok, err = q.store.ReserveQuota(ctx, id, month, limit)
	}
	if err != nil {
		if !q.queue(id, month) && q.OnFallback != nil {
			// Too many wait already: Redis keeps the count alone, which
			// still holds the quota across replicas; the store will count
			// less than was served.
			q.OnFallback(fmt.Errorf("too many served responses wait for the store; counted in Redis only: %w", err))
		}
		return used, true, nil
	}
	if !sok {
		// The store is the truth: a Redis that fell behind catches up.
		q.syncRedis(ctx, key, sused, "set")
		return sused, false, nil
	}
	if sused > used {
		q.syncRedis(ctx, key, sused, "raise")
	}
	return sused, true, nil
}

// reserveRedis runs the reservation in Redis, seeding a missing count from
// the store. It returns Redis's error or the store's, apart.
func (q *Quota) reserveRedis(ctx context.Context, key, id, month string, limit int64) (used int64, ok bool, err, serr error) {
	if !q.redisUp() {
		return 0, false, errSkipped, nil
	}
	for range 3 {
		rctx, cancel := context.WithTimeout(ctx, redisBudget)
		v, err := reserveScript.Run(rctx, q.c, []string{key}, limit).Int64Slice()
		cancel()
		if err != nil {
			return 0, false, q.redisFailed(ctx, err), nil
		}
		if len(v) != 2 {
			return 0, false, q.redisFailed(ctx, errors.New("malformed script answer")), nil
		}
		if v[0] >= 0 {
			return v[0], v[1] == 1, nil, nil
		}
		n, err := q.storeUsed(ctx, id, month)
		if err != nil {
			return 0, false, nil, err
		}
		rctx, cancel = context.WithTimeout(ctx, redisBudget)
		err = q.c.SetNX(rctx, key, n, quotaTTL).Err()
		cancel()
		if err != nil {
			return 0, false, q.redisFailed(ctx, err), nil
		}
	}
	// Seeded thrice and gone thrice: an evicting Redis is of no use here.
	return 0, false, q.redisFailed(ctx, errors.New("the quota count keeps vanishing (maxmemory eviction?)")), nil
}

// ReleaseQuota takes back a reservation whose response was not served, in
// Redis (never below zero) and in the store. Errors are the store's.
func (q *Quota) ReleaseQuota(ctx context.Context, id, month string) error {
	if q.redisUp() {
		rctx, cancel := context.WithTimeout(ctx, redisBudget)
		err := releaseScript.Run(rctx, q.c, []string{q.key(id, month)}).Err()
		cancel()
		if err != nil {
			q.fellBack(ctx, q.redisFailed(ctx, err))
		}
	}
	// A reservation the store never counted is taken back where it waits.
	if q.unqueue(id, month) {
		return nil
	}
	return q.store.ReleaseQuota(ctx, id, month)
}

// QuotaUsed returns the count of mock id in month: Redis's when it has one,
// else the store's. Errors are the store's.
func (q *Quota) QuotaUsed(ctx context.Context, id, month string) (int64, error) {
	if q.redisUp() {
		rctx, cancel := context.WithTimeout(ctx, redisBudget)
		n, err := q.c.Get(rctx, q.key(id, month)).Int64()
		cancel()
		if err == nil {
			return n, nil
		}
		if !errors.Is(err, goredis.Nil) {
			q.fellBack(ctx, q.redisFailed(ctx, err))
		}
	}
	return q.storeUsed(ctx, id, month)
}

// storeUsed is the store's count plus the responses it has yet to count.
func (q *Quota) storeUsed(ctx context.Context, id, month string) (int64, error) {
	n, err := q.store.QuotaUsed(ctx, id, month)
	if err != nil {
		return 0, err
	}
	q.mu.Lock()
	n += q.pending[monthKey{id, month}]
	q.mu.Unlock()
	return n, nil
}

// Run hands the responses waiting for the store to it every second, until
// ctx ends. Without Run they wait for the next reservation of their mock.
func (q *Quota) Run(ctx context.Context) {
	t := time.NewTicker(flushInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			_ = q.Flush(ctx) // what fails waits for the next tick
		}
	}
}

// Flush hands every response waiting for the store to it, and returns the
// first error; what was not counted keeps waiting. Call it at shutdown.
func (q *Quota) Flush(ctx context.Context) error {
	q.mu.Lock()
	keys := make([]monthKey, 0, len(q.pending))
	for k := range q.pending {
		keys = append(keys, k)
	}
	q.mu.Unlock()
	var first error
	for _, k := range keys {
		if err := q.flushKey(ctx, k.id, k.month); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// flushKey hands the store the responses of one mock and month that it has
// yet to count. They were served, so they count whatever the limit.
func (q *Quota) flushKey(ctx context.Context, id, month string) error {
	for q.unqueue(id, month) {
		_, _, err := q.store.ReserveQuota(ctx, id, month, 0)
		switch {
		case decoy.ErrorCode(err) == decoy.ENOTFOUND:
			// Deleted meanwhile, and its counts with it.
			q.drop(id, month)
			return nil
		case err != nil:
			q.queueAnyway(id, month)
			return err
		}
	}
	return nil
}

// queue records a served response for the store to count later, and
// reports false when too many wait already.
func (q *Quota) queue(id, month string) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.npending >= maxPending {
		return false
	}
	q.pending[monthKey{id, month}]++
	q.npending++
	return true
}

// drop forgets the responses of one mock and month waiting for the store.
func (q *Quota) drop(id, month string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	k := monthKey{id, month}
	q.npending -= q.pending[k]
	delete(q.pending, k)
}

// queueAnyway puts back a response that flushKey took, whatever the bound.
func (q *Quota) queueAnyway(id, month string) {
	q.mu.Lock()
	q.pending[monthKey{id, month}]++
	q.npending++
	q.mu.Unlock()
}

// unqueue takes one waiting response of id and month, if any.
func (q *Quota) unqueue(id, month string) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	k := monthKey{id, month}
	n := q.pending[k]
	if n == 0 {
		return false
	}
	if n == 1 {
		delete(q.pending, k)
	} else {
		q.pending[k] = n - 1
	}
	q.npending--
	return true
}

// syncRedis sets (mode "set") or raises (mode "raise") the Redis count to
// the store's. A failure only delays the correction.
func (q *Quota) syncRedis(ctx context.Context, key string, n int64, mode string) {
	rctx, cancel := context.WithTimeout(ctx, redisBudget)
	defer cancel()
	err := syncScript.Run(rctx, q.c, []string{key}, n, mode, int64(quotaTTL/time.Second)).Err()
	if err != nil {
		q.redisFailed(ctx, err)
	}
}

// errSkipped stands for the Redis failure that, less than quotaRetry ago,
// made the store answer alone.
var errSkipped = errors.New("redis: skipped after a recent failure")

func (q *Quota) redisUp() bool {
	at := q.retryAt.Load()
	return at == 0 || time.Now().UnixNano() >= at
}

// redisFailed notes that Redis failed, so that it is left alone for
// quotaRetry, and returns err as EUNAVAILABLE. A call cut short because
// the caller (ctx) gave up says nothing of Redis; one that ran out of
// redisBudget does: Redis is too slow to wait for.
func (q *Quota) redisFailed(ctx context.Context, err error) error {
	if ctx.Err() == nil {
		q.retryAt.Store(time.Now().Add(quotaRetry).UnixNano())
	}
	return unavailable("quota", err)
}

// fellBack tells OnFallback that the store answers alone because Redis
// failed, unless Redis was only skipped or the caller gave up.
func (q *Quota) fellBack(ctx context.Context, err error) {
	if q.OnFallback != nil && !errors.Is(err, errSkipped) && ctx.Err() == nil {
		q.OnFallback(err)
	}
}

func (q *Quota) key(id, month string) string {
	return q.prefix + "{mock:" + id + "}:quota:" + month
}
