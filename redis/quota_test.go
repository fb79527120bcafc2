package redis_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/decoy-mock/decoy"
	"github.com/decoy-mock/decoy/redis"
)

// fakeStore is an exact QuotaCounter in memory that can be made to fail.
type fakeStore struct {
	mu       sync.Mutex
	counts   map[string]int64
	down     bool
	deleted  map[string]bool
	reserves int // ReserveQuota calls that reached the store
}

func newFakeStore() *fakeStore { return &fakeStore{counts: make(map[string]int64)} }

var errDown = decoy.Errorf(decoy.EUNAVAILABLE, "store down")

func (s *fakeStore) ReserveQuota(_ context.Context, id, month string, limit int64) (int64, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.down {
		return 0, false, errDown
	}
	s.reserves++
	if s.deleted[id] {
		return 0, false, decoy.Errorf(decoy.ENOTFOUND, "Mock api not found")
	}
	k := id + "/" + month
	if limit > 0 && s.counts[k] >= limit {
		return s.counts[k], false, nil
	}
	s.counts[k]++
	return s.counts[k], true, nil
}

func (s *fakeStore) ReleaseQuota(_ context.Context, id, month string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.down {
		return errDown
	}
	if k := id + "/" + month; s.counts[k] > 0 {
		s.counts[k]--
	}
	return nil
}

func (s *fakeStore) QuotaUsed(_ context.Context, id, month string) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.down {
		return 0, errDown
	}
	return s.counts[id+"/"+month], nil
}

func (s *fakeStore) set(id, month string, n int64) {
	s.mu.Lock()
	s.counts[id+"/"+month] = n
	s.mu.Unlock()
}

func (s *fakeStore) get(id, month string) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.counts[id+"/"+month]
}

// delete drops a mock and its counts, as the store's DeleteMock does.
func (s *fakeStore) delete(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.deleted == nil {
		s.deleted = map[string]bool{}
	}
	s.deleted[id] = true
	for k := range s.counts {
		if strings.HasPrefix(k, id+"/") {
			delete(s.counts, k)
		}
	}
}

func (s *fakeStore) setDown(down bool) {
	s.mu.Lock()
	s.down = down
	s.mu.Unlock()
}

func (s *fakeStore) reserveCalls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.reserves
}

const (
	mockID = "3f1c2a6e-8d4b-4c1e-9a57-0c2b6f7d9e10"
	month  = "2026-11"
)

func newQuota(t *testing.T) (*redis.Quota, *fakeStore, func(n int64)) {
	c, prefix := testRedis(t)
	store := newFakeStore()
	q := redis.NewQuota(c, prefix, store)
	q.OnFallback = func(err error) { t.Errorf("fell back to the store: %v", err) }
	setRedis := func(n int64) {
		if err := c.Set(context.Background(), prefix+"{mock:"+mockID+"}:quota:"+month, n, 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	return q, store, setRedis
}

func reserve(t *testing.T, q *redis.Quota, limit, wantUsed int64, wantOK bool) {
	t.Helper()
	used, ok, err := q.ReserveQuota(context.Background(), mockID, month, limit)
	if err != nil {
		t.Fatal(err)
	}
	if used != wantUsed || ok != wantOK {
		t.Fatalf("ReserveQuota = %d, %v; want %d, %v", used, ok, wantUsed, wantOK)
	}
}

func TestQuotaExactUnderConcurrency(t *testing.T) {
	ctx := context.Background()
	q, store, _ := newQuota(t)
	var served atomic.Int64
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 10 {
				used, ok, err := q.ReserveQuota(ctx, mockID, month, 37)
				if err != nil {
					t.Error(err)
					return
				}
				if ok {
					served.Add(1)
					if used < 1 || used > 37 {
						t.Errorf("served with count %d", used)
					}
				} else if used != 37 {
					t.Errorf("refused with count %d", used)
				}
			}
		})
	}
	wg.Wait()
	if served.Load() != 37 || store.get(mockID, month) != 37 {
		t.Errorf("served %d, store counted %d; want 37", served.Load(), store.get(mockID, month))
	}
	if n, err := q.QuotaUsed(ctx, mockID, month); err != nil || n != 37 {
		t.Errorf("QuotaUsed = %d, %v", n, err)
	}
	// Refusals at the quota never reach the store.
	calls := store.reserveCalls()
	reserve(t, q, 37, 37, false)
	if store.reserveCalls() != calls {
		t.Error("a refusal at the quota went to the store")
	}
}

// The store is seeded into a missing Redis count.
func TestQuotaSeedsFromStore(t *testing.T) {
	q, store, _ := newQuota(t)
	store.set(mockID, month, 5)
	reserve(t, q, 6, 6, true)
	calls := store.reserveCalls()
	reserve(t, q, 6, 6, false)
	if store.reserveCalls() != calls {
		t.Error("the refusal went to the store")
	}
	if store.get(mockID, month) != 6 {
		t.Errorf("store counted %d", store.get(mockID, month))
	}
}

// A Redis that fell behind the store (the store counted alone while Redis
// was away) lets the store refuse, and takes its count.
func TestQuotaRedisStaleLow(t *testing.T) {
	ctx := context.Background()
	q, store, setRedis := newQuota(t)
	store.set(mockID, month, 10)
	setRedis(3)
	reserve(t, q, 10, 10, false)
	if n, _ := q.QuotaUsed(ctx, mockID, month); n != 10 {
		t.Fatalf("Redis count after the store refused: %d", n)
	}
	calls := store.reserveCalls()
	reserve(t, q, 10, 10, false)
	if store.reserveCalls() != calls {
		t.Error("Redis did not refuse by itself once corrected")
	}

	// Below the quota, an admission raises Redis to the store's count.
	store.set(mockID, month, 20)
	setRedis(3)
	reserve(t, q, 100, 21, true)
	if n, _ := q.QuotaUsed(ctx, mockID, month); n != 21 {
		t.Errorf("Redis count after the store admitted: %d", n)
	}
}

func TestQuotaRelease(t *testing.T) {
	ctx := context.Background()
	q, store, _ := newQuota(t)
	reserve(t, q, 2, 1, true)
	reserve(t, q, 2, 2, true)
	reserve(t, q, 2, 2, false)
	if err := q.ReleaseQuota(ctx, mockID, month); err != nil {
		t.Fatal(err)
	}
	if n, _ := q.QuotaUsed(ctx, mockID, month); n != 1 || store.get(mockID, month) != 1 {
		t.Fatalf("after a release: Redis %d, store %d", n, store.get(mockID, month))
	}
	reserve(t, q, 2, 2, true)
	for range 3 {
		q.ReleaseQuota(ctx, mockID, month)
	}
	if n, _ := q.QuotaUsed(ctx, mockID, month); n != 0 {
		t.Fatalf("released below zero: %d", n)
	}
	reserve(t, q, 0, 1, true) // 0: unlimited
}

// While the store is down, Redis's count serves; what the store missed is
// handed to it when it is back.
func TestQuotaStoreDown(t *testing.T) {
	ctx := context.Background()
	q, store, _ := newQuota(t)
	reserve(t, q, 10, 1, true)
	store.setDown(true)
	reserve(t, q, 10, 2, true)
	reserve(t, q, 10, 3, true)
	reserve(t, q, 10, 4, true)
	if err := q.ReleaseQuota(ctx, mockID, month); err != nil { // one was not served after all
		t.Fatal(err)
	}
	if err := q.Flush(ctx); err == nil {
		t.Error("Flush to a store that is down succeeded")
	}
	store.setDown(false)
	if store.get(mockID, month) != 1 {
		t.Fatalf("store counted %d while down", store.get(mockID, month))
	}
	// The next reservation hands the store what it missed first.
	reserve(t, q, 10, 4, true)
	if store.get(mockID, month) != 4 {
		t.Errorf("store count %d after it came back, want 4", store.get(mockID, month))
	}

	// Flush (and Run) do the same without waiting for a reservation.
	store.setDown(true)
	reserve(t, q, 10, 5, true)
	store.setDown(false)
	if err := q.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if store.get(mockID, month) != 5 {
		t.Errorf("store count %d after Flush, want 5", store.get(mockID, month))
	}
}

// Both down: the store's error, for the server to decide.
func TestQuotaStoreDownWithoutCount(t *testing.T) {
	q, store, _ := newQuota(t)
	store.setDown(true)
	_, _, err := q.ReserveQuota(context.Background(), mockID, month, 10)
	if !errors.Is(err, errDown) {
		t.Errorf("err = %v", err)
	}
}

// Without Redis, the store answers alone, and OnFallback hears of it.
func TestQuotaRedisDown(t *testing.T) {
	ctx := context.Background()
	store := newFakeStore()
	q := redis.NewQuota(deadClient(t), "decoytest:", store)
	var fallbacks atomic.Int64
	q.OnFallback = func(err error) {
		if decoy.ErrorCode(err) != decoy.EUNAVAILABLE {
			t.Errorf("fallback error %v is not EUNAVAILABLE", err)
		}
		fallbacks.Add(1)
	}
	store.set(mockID, month, 1)
	reserve(t, q, 3, 2, true)
	reserve(t, q, 3, 3, true)
	reserve(t, q, 3, 3, false)
	if n, err := q.QuotaUsed(ctx, mockID, month); err != nil || n != 3 {
		t.Errorf("QuotaUsed = %d, %v", n, err)
	}
	if err := q.ReleaseQuota(ctx, mockID, month); err != nil || store.get(mockID, month) != 2 {
		t.Errorf("ReleaseQuota: %v, store %d", err, store.get(mockID, month))
	}
	if fallbacks.Load() == 0 {
		t.Error("OnFallback was not called")
	}
}

// A Redis that counts more than the store (the mock was deleted, with its
// counts, and created again under the same id) takes the store's count at
// the next refusal, and the mock is served again.
func TestQuotaRedisStaleHigh(t *testing.T) {
	ctx := context.Background()
	q, store, setRedis := newQuota(t)
	store.set(mockID, month, 0)
	setRedis(5)
	reserve(t, q, 5, 1, true)
	if n, _ := q.QuotaUsed(ctx, mockID, month); n != 1 {
		t.Errorf("Redis count after correction: %d, want 1", n)
	}
	// At the quota in both, the refusal stands.
	store.set(mockID, month, 5)
	setRedis(5)
	reserve(t, q, 5, 5, false)
}

// Responses waiting for the store of a mock deleted meanwhile are dropped,
// and do not hold back those of other mocks.
func TestQuotaFlushSkipsDeleted(t *testing.T) {
	ctx := context.Background()
	q, store, _ := newQuota(t)
	const other = "00000000-0000-4000-8000-000000000009"
	if _, _, err := q.ReserveQuota(ctx, other, month, 0); err != nil {
		t.Fatal(err)
	}
	reserve(t, q, 0, 1, true)
	store.setDown(true)
	reserve(t, q, 0, 2, true) // waits in memory
	if _, _, err := q.ReserveQuota(ctx, other, month, 0); err != nil {
		t.Fatal(err)
	}
	store.setDown(false)
	store.delete(mockID)
	if err := q.Flush(ctx); err != nil {
		t.Fatalf("Flush: %v", err)
	}
	if n := store.get(other, month); n != 2 {
		t.Errorf("other mock counted %d in the store, want 2", n)
	}
}

// When more served responses wait for an unreachable store than can be
// kept, Redis still counts them: the quota holds across replicas.
func TestQuotaPendingFullKeepsRedisCount(t *testing.T) {
	if testing.Short() {
		t.Skip("10,000 reservations")
	}
	q, store, setRedis := newQuota(t)
	q.OnFallback = nil
	setRedis(0)
	store.setDown(true)
	const limit = 10003 // over the 10,000 that may wait for the store
	for i := range limit {
		if _, ok, err := q.ReserveQuota(context.Background(), mockID, month, limit); err != nil || !ok {
			t.Fatalf("reservation %d: ok=%v err=%v", i+1, ok, err)
		}
	}
	reserve(t, q, limit, limit, false)
}

// A workspace's reads (its monthly_reads) are counted under its id, as a
// mock's are: two replicas sharing Redis and the store serve exactly the
// limit, and the workspace's count is apart from its mocks'.
func TestQuotaWorkspaceKey(t *testing.T) {
	ctx := context.Background()
	c, prefix := testRedis(t)
	store := newFakeStore()
	replicas := []*redis.Quota{redis.NewQuota(c, prefix, store), redis.NewQuota(c, prefix, store)}
	const workspaceID = "7d0e5b1a-4c2f-4e8b-b1d3-95a6c0f2e4b7"
	var served atomic.Int64
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Go(func() {
			q := replicas[i%2]
			if _, ok, err := q.ReserveQuota(ctx, mockID, month, 0); err != nil || !ok {
				t.Errorf("the mock's own count: %v, %v", ok, err)
			}
			_, ok, err := q.ReserveQuota(ctx, workspaceID, month, 5)
			if err != nil {
				t.Error(err)
			} else if ok {
				served.Add(1)
			}
		})
	}
	wg.Wait()
	if served.Load() != 5 || store.get(workspaceID, month) != 5 {
		t.Errorf("served %d, store counted %d; want 5 of 20", served.Load(), store.get(workspaceID, month))
	}
	for _, q := range replicas {
		if n, err := q.QuotaUsed(ctx, workspaceID, month); err != nil || n != 5 {
			t.Errorf("workspace QuotaUsed = %d, %v; want 5", n, err)
		}
		if n, err := q.QuotaUsed(ctx, mockID, month); err != nil || n != 20 {
			t.Errorf("mock QuotaUsed = %d, %v; want 20", n, err)
		}
	}
}
