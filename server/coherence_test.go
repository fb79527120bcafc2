package server_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptrace"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/decoy-mock/decoy"
	"github.com/decoy-mock/decoy/admin"
	"github.com/decoy-mock/decoy/client"
	"github.com/decoy-mock/decoy/internal/servertest"
	"github.com/decoy-mock/decoy/secret"
	"github.com/decoy-mock/decoy/server"
)

// gatedStore holds its first FindMockData after reading the row, like the
// load of a large document that is still being parsed, until gate closes.
type gatedStore struct {
	decoy.Store
	once    sync.Once
	entered chan struct{}
	gate    chan struct{}
}

func (s *gatedStore) FindMockData(ctx context.Context, id string) (*decoy.Mock, decoy.Data, error) {
	m, d, err := s.Store.FindMockData(ctx, id)
	first := false
	s.once.Do(func() { first = true })
	if first {
		close(s.entered)
		<-s.gate
	}
	return m, d, err
}

// A read that comes after an acknowledged write never gets what a load
// started before the write found.
func TestNoStaleLoadsAfterWrites(t *testing.T) {
	for _, tc := range []struct {
		name  string
		write func(h *servertest.Harness, m *client.Mock)
		read  func(h *servertest.Harness, m *client.Mock) servertest.Response
		want  int
	}{
		{"rotation", func(h *servertest.Harness, m *client.Mock) {
			if _, err := h.Admin.RotateToken(context.Background(), m.ID); err != nil {
				t.Fatal(err)
			}
		}, func(h *servertest.Harness, m *client.Mock) servertest.Response {
			return h.Get("/mock/"+m.ID, "serviceauthtoken", m.Token)
		}, 401},
		{"delete", func(h *servertest.Harness, m *client.Mock) {
			if err := h.Admin.DeleteMock(context.Background(), m.ID); err != nil {
				t.Fatal(err)
			}
		}, func(h *servertest.Harness, m *client.Mock) servertest.Response {
			return h.Do(http.MethodHead, "/mock/"+m.ID)
		}, 404},
		{"privacy off", func(h *servertest.Harness, m *client.Mock) {
			if _, err := h.Admin.UpdateMock(context.Background(), m.ID, map[string]any{"private": false}); err != nil {
				t.Fatal(err)
			}
		}, func(h *servertest.Harness, m *client.Mock) servertest.Response {
			return h.Get("/mock/" + m.ID)
		}, 200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			gs := &gatedStore{entered: make(chan struct{}), gate: make(chan struct{})}
			h := servertest.New(t, func(c *server.Config) { gs.Store = c.Store; c.Store = gs })
			// Created behind the server's back, so that it is not cached.
			token := secret.New(admin.TokenPrefix)
			m := &client.Mock{Mock: decoy.Mock{ID: "6f1c1a4e-8d0b-4b1a-9d5e-2f3c4b5a6d7e", Private: true,
				TokenHash: secret.Hash(token), ContentType: "application/json", Status: 200, ETag: `"x"`}, Token: token}
			if _, err := h.Store.CreateMock(context.Background(), &m.Mock, decoy.Data{Bytes: []byte(`[1]`)}); err != nil {
				t.Fatal(err)
			}
			first := make(chan servertest.Response, 1)
			go func() { first <- h.Get("/mock/"+m.ID, "serviceauthtoken", token) }()
			<-gs.entered // that read's load has the old row and is parsing it

			tc.write(h, m)
			// The old load is still held: this read must not wait for it.
			second := make(chan servertest.Response, 1)
			go func() { second <- tc.read(h, m) }()
			select {
			case r := <-second:
				if r.Status != tc.want {
					t.Errorf("read after the acknowledged %s: %d, want %d", tc.name, r.Status, tc.want)
				}
			case <-time.After(10 * time.Second):
				t.Errorf("read after the acknowledged %s waits for a load started before it", tc.name)
			}
			close(gs.gate)
			<-first
		})
	}
}

// failingWrites applies updates and deletions, then reports an error, as a
// store whose commit succeeded but whose answer was lost would.
type failingWrites struct{ decoy.Store }

var errLostAnswer = errors.New("connection lost after commit")

func (s failingWrites) UpdateMock(ctx context.Context, id string, u decoy.MockUpdate) (*decoy.Mock, error) {
	s.Store.UpdateMock(ctx, id, u)
	return nil, errLostAnswer
}

func (s failingWrites) DeleteMock(ctx context.Context, id string) error {
	s.Store.DeleteMock(ctx, id)
	return errLostAnswer
}

// When a write fails, the cache forgets the mock: the next read serves what
// the store holds, whatever the write did.
func TestFailedWriteDropsCachedMock(t *testing.T) {
	var fw failingWrites
	h := servertest.New(t, func(c *server.Config) { fw.Store = c.Store; c.Store = &fw })
	m := h.Create(`[1]`, client.CreateOptions{})
	if r := h.Get("/mock/" + m.ID); r.Status != 200 {
		t.Fatal(r.Status)
	}
	if _, err := h.Admin.UpdateMock(context.Background(), m.ID, map[string]any{"private": true}); err == nil {
		t.Fatal("the failing update reported success")
	}
	servertest.WantError(t, h.Get("/mock/"+m.ID), 401, "Auth token not found")
	h.Admin.DeleteMock(context.Background(), m.ID)
	servertest.WantError(t, h.Get("/mock/"+m.ID), 404, "Mock api not found")
}

// contextSpy records whether writes get a context the client can cancel.
type contextSpy struct {
	decoy.Store
	quota       decoy.QuotaCounter
	mu          sync.Mutex
	cancellable []string
}

func (s *contextSpy) note(op string, ctx context.Context) {
	// A bounded context is fine (a stalled backend must not hold a write
	// forever); one that ends with the client's request is not. The
	// requests here have no deadline of their own.
	if _, bounded := ctx.Deadline(); ctx.Done() != nil && !bounded {
		s.mu.Lock()
		s.cancellable = append(s.cancellable, op)
		s.mu.Unlock()
	}
}

func (s *contextSpy) CreateMock(ctx context.Context, m *decoy.Mock, d decoy.Data) (*decoy.Mock, error) {
	s.note("CreateMock", ctx)
	return s.Store.CreateMock(ctx, m, d)
}

func (s *contextSpy) UpdateMock(ctx context.Context, id string, u decoy.MockUpdate) (*decoy.Mock, error) {
	s.note("UpdateMock", ctx)
	return s.Store.UpdateMock(ctx, id, u)
}

func (s *contextSpy) ReplaceMockData(ctx context.Context, id string, d decoy.MockData) (*decoy.Mock, error) {
	s.note("ReplaceMockData", ctx)
	return s.Store.ReplaceMockData(ctx, id, d)
}

func (s *contextSpy) DeleteMock(ctx context.Context, id string) error {
	s.note("DeleteMock", ctx)
	return s.Store.DeleteMock(ctx, id)
}

func (s *contextSpy) ReserveQuota(ctx context.Context, id, month string, limit int64) (int64, bool, error) {
	s.note("ReserveQuota", ctx)
	return s.quota.ReserveQuota(ctx, id, month, limit)
}

func (s *contextSpy) ReleaseQuota(ctx context.Context, id, month string) error {
	s.note("ReleaseQuota", ctx)
	return s.quota.ReleaseQuota(ctx, id, month)
}

func (s *contextSpy) QuotaUsed(ctx context.Context, id, month string) (int64, error) {
	return s.quota.QuotaUsed(ctx, id, month)
}

// Writes, once started, finish even if the client goes away: a write that
// the store applied but the server did not see would leave them disagreeing.
func TestWritesOutliveTheClient(t *testing.T) {
	spy := &contextSpy{}
	h := servertest.New(t, func(c *server.Config) {
		spy.Store, spy.quota = c.Store, c.Quota
		c.Store, c.Quota = spy, spy
	})
	ctx := context.Background()
	m := h.Create(`[1]`, client.CreateOptions{})
	h.Get("/mock/" + m.ID)
	h.Admin.ReplaceData(ctx, m.ID, strings.NewReader(`[2]`), "")
	h.Admin.UpdateMock(ctx, m.ID, map[string]any{"private": true})
	h.Admin.RotateToken(ctx, m.ID)
	h.Admin.DeleteMock(ctx, m.ID)
	if len(spy.cancellable) > 0 {
		t.Errorf("writes given a cancellable context: %v", spy.cancellable)
	}
}

// A request that ends up 304 never holds quota, even during a delay.
func TestNotModifiedHoldsNoQuota(t *testing.T) {
	h := servertest.New(t)
	m := h.Create(`[{"a":1}]`, client.CreateOptions{MonthlyQuota: servertest.Ptr(int64(1)), DelayMS: 1000})
	conditional := make(chan int, 1)
	sent := make(chan struct{})
	go func() {
		trace := &httptrace.ClientTrace{WroteRequest: func(httptrace.WroteRequestInfo) { close(sent) }}
		req, _ := http.NewRequestWithContext(httptrace.WithClientTrace(context.Background(), trace), http.MethodGet, h.URL+"/mock/"+m.ID, nil)
		req.Header.Set("If-None-Match", m.ETag)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			conditional <- -1
			return
		}
		resp.Body.Close()
		conditional <- resp.StatusCode
	}()
	<-sent
	time.Sleep(100 * time.Millisecond) // the conditional request is in its delay
	if r := h.Get("/mock/" + m.ID); r.Status != 200 {
		t.Errorf("plain GET while a 304 was being delayed: %d %s", r.Status, r.Body)
	}
	if got := <-conditional; got != 304 {
		t.Errorf("conditional GET: %d", got)
	}
}
