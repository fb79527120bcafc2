package server_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/decoy-mock/decoy/client"
	"github.com/decoy-mock/decoy/inmem"
	"github.com/decoy-mock/decoy/secret"
	"github.com/decoy-mock/decoy/server"
	"github.com/decoy-mock/decoy/sqlite"
	"github.com/prometheus/client_golang/prometheus"
)

const adminToken = "test-admin-token"

// clock is a manual clock shared by the server and its limiters.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Add(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

// harness is a server on a real SQLite store, reached over HTTP.
type harness struct {
	t     testing.TB
	srv   *server.Server
	url   string
	admin *client.Client
	clock *clock
	logs  *syncBuffer
	store *sqlite.DB
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

func newHarness(t testing.TB, configure ...func(*server.Config)) *harness {
	t.Helper()
	store, err := sqlite.Open(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	c := &clock{t: time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)}
	limiter, failures := inmem.NewLimiter(), inmem.NewLimiter()
	limiter.Now, failures.Now = c.Now, c.Now
	logs := &syncBuffer{}
	cfg := server.Config{
		Store:               store,
		MockBatches:         store,
		Quota:               store,
		Templates:           store,
		QuotaInMemory:       true,
		Limiter:             limiter,
		AuthFailures:        failures,
		AdminTokenHash:      secret.Hash(adminToken),
		DefaultRateLimit:    100,
		DefaultMonthlyQuota: 50000,
		AuthFailureLimit:    30,
		MaxDataBytes:        1 << 20,
		Logger:              slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Registry:            prometheus.NewRegistry(),
		Now:                 c.Now,
	}
	for _, f := range configure {
		f(&cfg)
	}
	if cfg.Addr == "" {
		cfg.Addr = "127.0.0.1:0"
	}
	// Served as decoy serve serves: by Open, behind the connection caps
	// and the JSON rewrite of net/http's own error answers.
	srv := server.New(cfg)
	if err := srv.Open(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	url := "http://" + srv.Addr().String()
	return &harness{t: t, srv: srv, url: url, admin: client.New(url, adminToken), clock: c, logs: logs, store: store}
}

// create stores a mock through the admin API.
func (h *harness) create(data string, o client.CreateOptions) *client.Mock {
	h.t.Helper()
	m, err := h.admin.CreateMock(context.Background(), strings.NewReader(data), o)
	if err != nil {
		h.t.Fatalf("create mock: %v", err)
	}
	return m
}

// response is an answer read whole.
type response struct {
	status int
	header http.Header
	body   string
}

// do sends a request to the server; path starts with '/'.
func (h *harness) do(method, path string, header ...string) response {
	h.t.Helper()
	req, err := http.NewRequest(method, h.url+path, nil)
	if err != nil {
		h.t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	tr := &http.Transport{DisableCompression: true}
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return response{status: resp.StatusCode, header: resp.Header, body: string(body)}
}

func (h *harness) get(path string, header ...string) response {
	h.t.Helper()
	return h.do(http.MethodGet, path, header...)
}

// wantError checks a JSON error answer.
func wantError(t testing.TB, r response, status int, msg string) {
	t.Helper()
	want := `{"error":"` + msg + `"}` + "\n"
	if r.status != status || r.body != want {
		t.Errorf("got %d %q, want %d %q", r.status, r.body, status, want)
	}
	if ct := r.header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("error Content-Type = %q", ct)
	}
}

func ptr[T any](v T) *T { return &v }
