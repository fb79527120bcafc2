package server_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/decoy-mock/decoy"
	"github.com/decoy-mock/decoy/client"
	"github.com/decoy-mock/decoy/inmem"
	"github.com/decoy-mock/decoy/internal/servertest"
	"github.com/decoy-mock/decoy/secret"
	"github.com/decoy-mock/decoy/server"
)

// Replicas are two servers on one store, as several `decoy serve` on one
// PostgreSQL are.

// countingStore counts the reads that check a mock's version.
type countingStore struct {
	decoy.Store
	finds atomic.Int64
}

func (s *countingStore) FindMock(ctx context.Context, id string) (*decoy.Mock, error) {
	s.finds.Add(1)
	return s.Store.FindMock(ctx, id)
}

// bus is an in-process Invalidator shared by replicas: announcements reach
// every other listening replica before Invalidate returns.
type bus struct {
	mu       sync.Mutex
	handlers map[int]decoy.InvalidationHandler
	next     int
}

type busClient struct {
	b    *bus
	self int
}

func (b *bus) client() *busClient {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.next++
	return &busClient{b: b, self: b.next}
}

func (c *busClient) Invalidate(_ context.Context, id string) error {
	c.b.mu.Lock()
	defer c.b.mu.Unlock()
	for n, h := range c.b.handlers {
		if n > 0 && n != c.self { // parked handlers (lost) hear nothing
			h.Invalidated(id)
		}
	}
	return nil
}

func (c *busClient) Listen(ctx context.Context, h decoy.InvalidationHandler) {
	c.b.mu.Lock()
	if c.b.handlers == nil {
		c.b.handlers = map[int]decoy.InvalidationHandler{}
	}
	c.b.handlers[c.self] = h
	c.b.mu.Unlock()
	h.Listening()
	<-ctx.Done()
}

// lose cuts c off the bus, as a lost Redis connection does.
func (c *busClient) lose() {
	c.b.mu.Lock()
	h := c.b.handlers[c.self]
	delete(c.b.handlers, c.self)
	c.b.mu.Unlock()
	h.Lost(errors.New("connection reset"))
	c.b.mu.Lock()
	c.b.handlers[-c.self] = h // parked, to be restored
	c.b.mu.Unlock()
}

func (c *busClient) restore() {
	c.b.mu.Lock()
	h := c.b.handlers[-c.self]
	delete(c.b.handlers, -c.self)
	c.b.handlers[c.self] = h
	c.b.mu.Unlock()
	h.Listening()
}

// replicas returns a first server and a second one sharing its store, both
// configured with shared set, and the second one's store as it sees it.
func replicas(t *testing.T, inv func() decoy.Invalidator) (a, b *servertest.Harness, bStore *countingStore) {
	a = servertest.New(t, func(c *server.Config) {
		c.SharedStore = true
		if inv != nil {
			c.Invalidator = inv()
		}
	})
	bStore = &countingStore{Store: a.Store}
	b = servertest.New(t, func(c *server.Config) {
		c.Store, c.Quota, c.SharedStore = bStore, a.Store, true
		if inv != nil {
			c.Invalidator = inv()
		}
	})
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	for _, h := range []*servertest.Harness{a, b} {
		go h.Srv.Listen(ctx)
	}
	return a, b, bStore
}

// changesSeen checks that every kind of change made through a is seen by
// b's next read.
func changesSeen(t *testing.T, a, b *servertest.Harness) {
	t.Helper()
	ctx := context.Background()
	m := a.Create(`[{"n":1}]`, client.CreateOptions{Name: "shared", Private: true})
	if r := b.Get("/mock/"+m.ID, "serviceauthtoken", m.Token); r.Status != 200 || r.Body != `[{"n":1}]` {
		t.Fatalf("first read: %d %s", r.Status, r.Body)
	}

	rotated, err := a.Admin.RotateToken(ctx, m.ID)
	if err != nil {
		t.Fatal(err)
	}
	servertest.WantError(t, b.Get("/mock/"+m.ID, "serviceauthtoken", m.Token), 401, "Invalid auth token")
	if r := b.Get("/mock/"+m.ID, "serviceauthtoken", rotated.Token); r.Status != 200 {
		t.Errorf("new token: %d %s", r.Status, r.Body)
	}

	if _, err := a.Admin.ReplaceData(ctx, m.ID, strings.NewReader(`[{"n":2}]`), "application/json"); err != nil {
		t.Fatal(err)
	}
	if r := b.Get("/mock/"+m.ID, "serviceauthtoken", rotated.Token); r.Body != `[{"n":2}]` {
		t.Errorf("after data change: %d %s", r.Status, r.Body)
	}

	if _, err := a.Admin.UpdateMock(ctx, m.ID, map[string]any{"private": false, "status": 203, "rate_limit": 10}); err != nil {
		t.Fatal(err)
	}
	if r := b.Get("/mock/" + m.ID); r.Status != 203 || r.Header.Get("X-RateLimit-Limit") != "10" {
		t.Errorf("after settings change: %d %v", r.Status, r.Header)
	}

	if err := a.Admin.DeleteMock(ctx, m.ID); err != nil {
		t.Fatal(err)
	}
	servertest.WantError(t, b.Get("/mock/"+m.ID), 404, "Mock api not found")
}

// Without an Invalidator, a replica on a shared store checks the store on
// every read, so it never serves what another replica changed.
func TestReplicasRevalidateWithoutInvalidator(t *testing.T) {
	a, b, bStore := replicas(t, nil)
	changesSeen(t, a, b)
	if bStore.finds.Load() == 0 {
		t.Error("the second replica never checked the store")
	}
	if r := b.Get("/readyz"); !strings.Contains(r.Body, `"cache":"revalidating"`) {
		t.Errorf("readyz: %s", r.Body)
	}
}

// With an Invalidator, a replica trusts its cache while it listens, checks
// the store while it does not, and starts afresh when it listens again.
func TestReplicasWithInvalidator(t *testing.T) {
	bs := &bus{}
	var clients []*busClient
	a, b, bStore := replicas(t, func() decoy.Invalidator {
		c := bs.client()
		clients = append(clients, c)
		return c
	})
	waitFor(t, func() bool { return strings.Contains(b.Get("/readyz").Body, `"cache":"trusted"`) })
	changesSeen(t, a, b)
	if n := bStore.finds.Load(); n != 0 {
		t.Errorf("a listening replica checked the store %d times", n)
	}

	// Lost: changes nobody announces (here written to the store directly)
	// are still seen.
	ctx := context.Background()
	m := a.Create(`{"v":1}`, client.CreateOptions{})
	if r := b.Get("/mock/" + m.ID); r.Body != `{"v":1}` {
		t.Fatalf("read: %s", r.Body)
	}
	clients[1].lose()
	if r := b.Get("/readyz"); !strings.Contains(r.Body, `"cache":"revalidating"`) {
		t.Errorf("readyz while lost: %s", r.Body)
	}
	if _, err := a.Store.UpdateMock(ctx, m.ID, decoy.MockUpdate{Status: servertest.Ptr(202)}); err != nil {
		t.Fatal(err)
	}
	if r := b.Get("/mock/" + m.ID); r.Status != 202 || r.Body != `{"v":1}` {
		t.Errorf("unannounced settings change while lost: %d %s", r.Status, r.Body)
	}
	if _, err := a.Store.ReplaceMockData(ctx, m.ID, decoy.MockData{ContentType: "application/json", Data: decoy.Data{Bytes: []byte(`{"v":2}`)}, ETag: `"v2"`}); err != nil {
		t.Fatal(err)
	}
	if r := b.Get("/mock/" + m.ID); r.Body != `{"v":2}` {
		t.Errorf("unannounced data change while lost: %d %s", r.Status, r.Body)
	}
	if v := b.Metric("decoy_cache_trusted"); v != "0" {
		t.Errorf("decoy_cache_trusted = %s while lost", v)
	}

	// Listening again: what was cached is dropped, since announcements may
	// have been missed.
	if _, err := a.Store.ReplaceMockData(ctx, m.ID, decoy.MockData{ContentType: "application/json", Data: decoy.Data{Bytes: []byte(`{"v":3}`)}, ETag: `"v3"`}); err != nil {
		t.Fatal(err)
	}
	clients[1].restore()
	finds := bStore.finds.Load()
	if r := b.Get("/mock/" + m.ID); r.Body != `{"v":3}` {
		t.Errorf("after listening again: %s", r.Body)
	}
	if bStore.finds.Load() != finds {
		t.Error("a replica listening again still checks the store")
	}
}

// flakyLimiter fails while down is set.
type flakyLimiter struct {
	decoy.Limiter
	down  atomic.Bool
	calls atomic.Int64
}

var errRedisDown = decoy.Errorf(decoy.EUNAVAILABLE, "redis: connection refused")

func (l *flakyLimiter) Allow(ctx context.Context, key string, limit int64) (decoy.RateResult, error) {
	l.calls.Add(1)
	if l.down.Load() {
		return decoy.RateResult{}, errRedisDown
	}
	return l.Limiter.Allow(ctx, key, limit)
}

func (l *flakyLimiter) Peek(ctx context.Context, key string, limit int64) (decoy.RateResult, error) {
	l.calls.Add(1)
	if l.down.Load() {
		return decoy.RateResult{}, errRedisDown
	}
	return l.Limiter.Peek(ctx, key, limit)
}

func (l *flakyLimiter) Undo(ctx context.Context, key string, r decoy.RateResult) error {
	if l.down.Load() {
		return errRedisDown
	}
	return l.Limiter.Undo(ctx, key, r)
}

// While the shared limiter fails, reads go on, limited per replica; it is
// tried again once a second, and used again as soon as it answers.
func TestSharedLimiterFallback(t *testing.T) {
	shared := &flakyLimiter{Limiter: inmem.NewLimiter()}
	h := servertest.New(t, func(c *server.Config) {
		shared.Limiter.(*inmem.Limiter).Now = c.Now
		local := inmem.NewLimiter()
		local.Now = c.Now
		c.Limiter, c.LocalLimiter = shared, local
	})
	m := h.Create(`[1]`, client.CreateOptions{RateLimit: servertest.Ptr(int64(2))})
	if r := h.Get("/mock/" + m.ID); r.Status != 200 {
		t.Fatalf("shared: %d", r.Status)
	}

	shared.down.Store(true)
	calls := shared.calls.Load()
	var statuses []int
	for range 3 {
		r := h.Get("/mock/" + m.ID)
		if r.Status >= 500 {
			t.Fatalf("5xx while the shared limiter is down: %d %s", r.Status, r.Body)
		}
		statuses = append(statuses, r.Status)
	}
	// The local limiter starts empty: 2 more are admitted, then refused.
	if want := []int{200, 200, 429}; !slices.Equal(statuses, want) {
		t.Errorf("statuses while down: %v, want %v", statuses, want)
	}
	if n := shared.calls.Load() - calls; n != 1 {
		t.Errorf("the failing limiter was called %d times within a second, want 1", n)
	}
	if r := h.Get("/readyz"); r.Status != 200 || !strings.Contains(r.Body, `"limits":"local"`) {
		t.Errorf("readyz while down: %d %s", r.Status, r.Body)
	}
	if v := h.Metric("decoy_shared_limits_up"); v != "0" {
		t.Errorf("decoy_shared_limits_up = %s while down", v)
	}
	if v := h.Metric(`decoy_shared_fallbacks_total{use="rate_limit"}`); v != "1" {
		t.Errorf("rate_limit fallbacks = %s, want 1", v)
	}

	shared.down.Store(false)
	h.Clock.Add(time.Second)
	if r := h.Get("/mock/" + m.ID); r.Status != 200 || r.Header.Get("X-RateLimit-Remaining") != "0" {
		// The shared window holds the first read and this one; what the
		// local limiter admitted stays with it.
		t.Errorf("back to shared: %d %v", r.Status, r.Header)
	}
	if r := h.Get("/readyz"); !strings.Contains(r.Body, `"limits":"shared"`) {
		t.Errorf("readyz after recovery: %s", r.Body)
	}
	if v := h.Metric("decoy_shared_limits_up"); v != "1" {
		t.Errorf("decoy_shared_limits_up = %s after recovery", v)
	}
}

// downStore fails every call while down is set, as an unreachable
// PostgreSQL does.
type downStore struct {
	decoy.Store
	decoy.QuotaCounter
	down atomic.Bool
}

var errStoreDown = decoy.Errorf(decoy.EUNAVAILABLE, "Database unavailable; try again later")

func (s *downStore) err() error {
	if s.down.Load() {
		return errStoreDown
	}
	return nil
}

func (s *downStore) Ping(ctx context.Context) error {
	if err := s.err(); err != nil {
		return err
	}
	return s.Store.Ping(ctx)
}

func (s *downStore) FindMock(ctx context.Context, id string) (*decoy.Mock, error) {
	if err := s.err(); err != nil {
		return nil, err
	}
	return s.Store.FindMock(ctx, id)
}

func (s *downStore) FindMockData(ctx context.Context, id string) (*decoy.Mock, decoy.Data, error) {
	if err := s.err(); err != nil {
		return nil, decoy.Data{}, err
	}
	return s.Store.FindMockData(ctx, id)
}

func (s *downStore) ReplaceMockData(ctx context.Context, id string, d decoy.MockData) (*decoy.Mock, error) {
	if err := s.err(); err != nil {
		return nil, err
	}
	return s.Store.ReplaceMockData(ctx, id, d)
}

func (s *downStore) UpdateMock(ctx context.Context, id string, u decoy.MockUpdate) (*decoy.Mock, error) {
	if err := s.err(); err != nil {
		return nil, err
	}
	return s.Store.UpdateMock(ctx, id, u)
}

func (s *downStore) ReserveQuota(ctx context.Context, id, month string, limit int64) (int64, bool, error) {
	if err := s.err(); err != nil {
		return 0, false, err
	}
	return s.QuotaCounter.ReserveQuota(ctx, id, month, limit)
}

func (s *downStore) QuotaUsed(ctx context.Context, id, month string) (int64, error) {
	if err := s.err(); err != nil {
		return 0, err
	}
	return s.QuotaCounter.QuotaUsed(ctx, id, month)
}

// While the store is unreachable, cached mocks are served (whether the cache
// is trusted or revalidating), admin writes answer 503 with a JSON error,
// and /readyz says not ready.
func TestStoreUnreachable(t *testing.T) {
	for _, shared := range []bool{false, true} {
		name := map[bool]string{false: "trusted", true: "revalidating"}[shared]
		t.Run(name, func(t *testing.T) {
			var ds *downStore
			h := servertest.New(t, func(c *server.Config) {
				ds = &downStore{Store: c.Store, QuotaCounter: c.Quota}
				c.Store, c.Quota, c.SharedStore = ds, ds, shared
			})
			cached := h.Create(`[{"a":1},{"a":2}]`, client.CreateOptions{MonthlyQuota: servertest.Ptr(int64(0))})
			limited := h.Create(`[]`, client.CreateOptions{MonthlyQuota: servertest.Ptr(int64(10))})
			other, err := h.Store.CreateMock(context.Background(), &decoy.Mock{ // not cached
				ID: "00000000-0000-4000-8000-000000000001", ContentType: "application/json", Status: 200, ETag: `"e"`,
			}, decoy.Data{Bytes: []byte(`[]`)})
			if err != nil {
				t.Fatal(err)
			}

			ds.down.Store(true)
			if r := h.Get("/mock/" + cached.ID + "?filters=a%3D2"); r.Status != 200 || r.Body != `[{"a":2}]` {
				t.Errorf("cached mock: %d %s", r.Status, r.Body)
			}
			servertest.WantError(t, h.Get("/mock/"+other.ID), 503, "Database unavailable; try again later")
			// With a quota and nothing to count it with, serving could
			// exceed the quota.
			servertest.WantError(t, h.Get("/mock/"+limited.ID), 503, "The monthly quota of this mock cannot be counted right now; try again later")
			_, err = h.Admin.ReplaceData(context.Background(), cached.ID, strings.NewReader(`[]`), "application/json")
			var ce *client.Error
			if !errors.As(err, &ce) || ce.Status != 503 || ce.Message != "Database unavailable; try again later" {
				t.Errorf("admin write: %v", err)
			}
			servertest.WantError(t, h.Get("/readyz"), 503, "Store unavailable")
			if v := h.Metric(`decoy_shared_fallbacks_total{use="quota"}`); v != "1" {
				t.Errorf("uncounted reads in metrics = %s, want 1", v)
			}

			ds.down.Store(false)
			if r := h.Get("/readyz"); r.Status != 200 {
				t.Errorf("readyz after recovery: %d", r.Status)
			}
			if r := h.Get("/mock/" + cached.ID); r.Body != `[{"a":1},{"a":2}]` {
				t.Errorf("after recovery: %s", r.Body)
			}
		})
	}
}

// waitFor polls cond until it holds, for things that happen on another
// goroutine.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 5s")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Replicas started together seed the same folder into one store: each one
// succeeds, whichever creates a mock first.
func TestReplicasSeedTogether(t *testing.T) {
	for range 20 {
		a, b, _ := replicas(t, nil)
		data := []byte(`[{"seeded":true}]`)
		var wg sync.WaitGroup
		errs := make([]error, 2)
		for i, h := range []*servertest.Harness{a, b} {
			wg.Go(func() { _, _, errs[i] = h.Srv.Admin().Seed(context.Background(), "users", data) })
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Fatalf("replica %d: %v", i, err)
			}
		}
	}
}

// hookStore runs hook after each ReplaceMockData, as if another replica
// wrote while this one did.
type hookStore struct {
	decoy.Store
	hook func()
}

func (s *hookStore) ReplaceMockData(ctx context.Context, id string, d decoy.MockData) (*decoy.Mock, error) {
	m, err := s.Store.ReplaceMockData(ctx, id, d)
	if s.hook != nil {
		s.hook()
	}
	return m, err
}

// A replica's own write does not put its copy in the cache over a newer
// change of another replica heard while the write was under way.
func TestOwnWriteYieldsToNewerAnnouncedChange(t *testing.T) {
	bs := &bus{}
	var clients []*busClient
	var hs *hookStore
	a := servertest.New(t, func(c *server.Config) {
		hs = &hookStore{Store: c.Store}
		cl := bs.client()
		clients = append(clients, cl)
		c.Store, c.SharedStore, c.Invalidator = hs, true, cl
	})
	other := bs.client() // another replica, through the same store
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go a.Srv.Listen(ctx)
	waitFor(t, func() bool { return strings.Contains(a.Get("/readyz").Body, `"cache":"trusted"`) })

	m := a.Create(`{"v":1}`, client.CreateOptions{})
	hs.hook = func() {
		hs.hook = nil
		if _, err := a.Store.ReplaceMockData(ctx, m.ID, decoy.MockData{ContentType: "application/json", Data: decoy.Data{Bytes: []byte(`{"v":3}`)}, ETag: `"v3"`}); err != nil {
			t.Error(err)
		}
		other.Invalidate(ctx, m.ID)
	}
	if _, err := a.Admin.ReplaceData(ctx, m.ID, strings.NewReader(`{"v":2}`), "application/json"); err != nil {
		t.Fatal(err)
	}
	if r := a.Get("/mock/" + m.ID); r.Body != `{"v":3}` {
		t.Errorf("after a newer change heard during the write: %s, want what the store holds", r.Body)
	}
}

// A listening replica still checks an entry against the store every
// maxTrust, so a change whose announcement never came (its writer was cut
// off from the channel) is seen within that time.
func TestUnannouncedChangeSeenWithinMaxTrust(t *testing.T) {
	bs := &bus{}
	a, b, _ := replicas(t, func() decoy.Invalidator { return bs.client() })
	waitFor(t, func() bool { return strings.Contains(b.Get("/readyz").Body, `"cache":"trusted"`) })
	m := a.Create(`{"v":1}`, client.CreateOptions{})
	if r := b.Get("/mock/" + m.ID); r.Body != `{"v":1}` {
		t.Fatalf("read: %s", r.Body)
	}
	if _, err := a.Store.ReplaceMockData(context.Background(), m.ID, decoy.MockData{ContentType: "application/json", Data: decoy.Data{Bytes: []byte(`{"v":2}`)}, ETag: `"v2"`}); err != nil {
		t.Fatal(err)
	}
	if r := b.Get("/mock/" + m.ID); r.Body != `{"v":1}` {
		t.Fatalf("trusted entry checked before maxTrust: %s", r.Body)
	}
	b.Clock.Add(600 * time.Millisecond)
	if r := b.Get("/mock/" + m.ID); r.Body != `{"v":2}` {
		t.Errorf("after maxTrust: %s, want the stored data", r.Body)
	}
}

// A mock deleted and created again under its id, private now, is not
// mistaken for the copy a revalidating replica holds (versions start again
// at 1).
func TestRecreatedMockIsNotTheCachedOne(t *testing.T) {
	a, b, _ := replicas(t, nil)
	ctx := context.Background()
	m := a.Create(`{"old":true}`, client.CreateOptions{})
	if r := b.Get("/mock/" + m.ID); r.Status != 200 {
		t.Fatalf("read: %d", r.Status)
	}
	if err := a.Store.DeleteMock(ctx, m.ID); err != nil {
		t.Fatal(err)
	}
	a.Clock.Add(time.Second) // a later creation time
	if _, err := a.Store.CreateMock(ctx, &decoy.Mock{
		ID: m.ID, Private: true, TokenHash: secret.Hash("tok"), ContentType: "application/json", Status: 200, ETag: `"n"`,
	}, decoy.Data{Bytes: []byte(`{"old":true}`)}); err != nil {
		t.Fatal(err)
	}
	servertest.WantError(t, b.Get("/mock/"+m.ID), 401, "Auth token not found")
}
