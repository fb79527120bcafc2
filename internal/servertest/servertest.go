// Package servertest runs the whole server for tests: a server.Server
// on a real SQLite store in a temporary folder, opened on a loopback port
// as decoy serve opens it, with a manual clock, captured logs, the admin
// API client, and helpers to send requests and check answers. The tests of
// server/ and admin/ share it.
package servertest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/decoy-mock/decoy"
	"github.com/decoy-mock/decoy/client"
	"github.com/decoy-mock/decoy/inmem"
	"github.com/decoy-mock/decoy/journal"
	"github.com/decoy-mock/decoy/secret"
	"github.com/decoy-mock/decoy/server"
	"github.com/decoy-mock/decoy/sqlite"
	"github.com/decoy-mock/decoy/studio"
	"github.com/decoy-mock/decoy/usage"
	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"
	"github.com/prometheus/client_golang/prometheus"
)

// AdminToken is the admin token of every harness.
const AdminToken = "test-admin-token"

// Clock is a manual clock shared by the server and its limiters.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// Now returns the clock's time.
func (c *Clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }

// Add moves the clock on by d.
func (c *Clock) Add(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

// Harness is a server on a real SQLite store, reached over HTTP.
type Harness struct {
	T     testing.TB
	Srv   *server.Server
	URL   string
	Admin *client.Client // signed in with AdminToken
	Clock *Clock
	Logs  *SyncBuffer // the server's log, at debug level
	Store *sqlite.DB
}

// SyncBuffer is a buffer that logs may be written to from any goroutine.
type SyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write implements io.Writer.
func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String returns what was written.
func (s *SyncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

// New starts a server for the test, configured as decoy serve configures
// it by default (an in-memory limiter, the default limits, 1 MiB documents)
// and then by configure, and stops it when the test ends.
func New(t testing.TB, configure ...func(*server.Config)) *Harness {
	t.Helper()
	store, err := sqlite.Open(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	c := &Clock{t: time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)}
	limiter, failures := inmem.NewLimiter(), inmem.NewLimiter()
	limiter.Now, failures.Now = c.Now, c.Now
	logs := &SyncBuffer{}
	cfg := server.Config{
		Store:               store,
		Quota:               store,
		Templates:           store,
		Routes:              store,
		RuleCounter:         inmem.NewRuleCounter(),
		QuotaInMemory:       true,
		Limiter:             limiter,
		AuthFailures:        failures,
		AdminTokenHash:      secret.Hash(AdminToken),
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
	return &Harness{T: t, Srv: srv, URL: url, Admin: client.New(url, AdminToken), Clock: c, Logs: logs, Store: store}
}

// Create stores a mock through the admin API.
func (h *Harness) Create(data string, o client.CreateOptions) *client.Mock {
	h.T.Helper()
	m, err := h.Admin.CreateMock(context.Background(), strings.NewReader(data), o)
	if err != nil {
		h.T.Fatalf("create mock: %v", err)
	}
	return m
}

// Response is an answer read whole.
type Response struct {
	Status int
	Header http.Header
	Body   string
}

// Do sends a request to the server; path starts with '/'.
func (h *Harness) Do(method, path string, header ...string) Response {
	h.T.Helper()
	req, err := http.NewRequest(method, h.URL+path, nil)
	if err != nil {
		h.T.Fatal(err)
	}
	tr := &http.Transport{DisableCompression: true}
	return exchange(h.T, req, header, (&http.Client{Transport: tr}).Do)
}

// exchange sets the header pairs on req, sends it with do and returns the
// answer, read whole.
func exchange(t testing.TB, req *http.Request, header []string, do func(*http.Request) (*http.Response, error)) Response {
	t.Helper()
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return Response{Status: resp.StatusCode, Header: resp.Header, Body: string(body)}
}

// Get sends a GET request.
func (h *Harness) Get(path string, header ...string) Response {
	h.T.Helper()
	return h.Do(http.MethodGet, path, header...)
}

// WantError checks a JSON error answer.
func WantError(t testing.TB, r Response, status int, msg string) {
	t.Helper()
	want := `{"error":"` + msg + `"}` + "\n"
	if r.Status != status || r.Body != want {
		t.Errorf("got %d %q, want %d %q", r.Status, r.Body, status, want)
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("error Content-Type = %q", ct)
	}
}

// Ptr returns a pointer to v.
func Ptr[T any](v T) *T { return &v }

// Send sends an admin request with a body.
func (h *Harness) Send(method, path, ct, body string, header ...string) Response {
	h.T.Helper()
	req, err := http.NewRequest(method, h.URL+path, strings.NewReader(body))
	if err != nil {
		h.T.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+AdminToken)
	if ct != "" {
		req.Header.Set("Content-Type", ct)
	}
	return exchange(h.T, req, header, http.DefaultClient.Do)
}

// SendFile sends an admin request with a file as its body.
func (h *Harness) SendFile(method, path string, body []byte, header ...string) Response {
	h.T.Helper()
	return h.Send(method, path, "application/octet-stream", string(body), header...)
}

// Metric returns the value of a sample of /metrics, or "".
func (h *Harness) Metric(sample string) string {
	h.T.Helper()
	for line := range strings.SplitSeq(h.Get("/metrics").Body, "\n") {
		if v, ok := strings.CutPrefix(line, sample+" "); ok {
			return v
		}
	}
	return ""
}

// WithJournal gives the server a request journal of size entries a
// project in memory, written for as long as the test runs; Journals
// returns it.
func WithJournal(t testing.TB, size int) func(*server.Config) {
	return func(c *server.Config) {
		c.Journal = journal.New(journal.Config{Store: journal.NewRing(journal.RingConfig{Size: size, Now: c.Now})})
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { c.Journal.Run(ctx); close(done) }()
		t.Cleanup(func() { cancel(); <-done })
	}
}

// Journal waits until the request journal of project lists want entries
// (at most 5 s) and returns them, newest first.
func (h *Harness) Journal(project string, want int) []*decoy.JournalEntry {
	h.T.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		var page struct {
			Requests []*decoy.JournalEntry `json:"requests"`
		}
		r := h.Send("GET", "/admin/v1/projects/"+project+"/requests?limit=1000", "", "")
		if r.Status != http.StatusOK || json.Unmarshal([]byte(r.Body), &page) != nil {
			h.T.Fatalf("GET the journal of %s: %d %s", project, r.Status, r.Body)
		}
		if len(page.Requests) >= want || time.Now().After(deadline) {
			if len(page.Requests) != want {
				h.T.Fatalf("the journal of %s lists %d entries, want %d", project, len(page.Requests), want)
			}
			return page.Requests
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// NewStudio starts a server with the Studio on and usage recorded.
func NewStudio(t *testing.T, configure ...func(*server.Config)) *Harness {
	t.Helper()
	return New(t, append([]func(*server.Config){func(c *server.Config) {
		c.Sessions = c.Store.(decoy.SessionStore)
		rec := usage.NewRecorder(c.Store.(decoy.UsageHistoryStore), nil)
		rec.Now = c.Now
		c.Usage = rec
	}}, configure...)...)
}

// StudioReq sends a request with the given cookie value (none when empty)
// and headers, and a body.
func (h *Harness) StudioReq(method, path, cookie, body string, header ...string) Response {
	h.T.Helper()
	req, err := http.NewRequest(method, h.URL+path, strings.NewReader(body))
	if err != nil {
		h.T.Fatal(err)
	}
	if cookie != "" {
		req.AddCookie(&http.Cookie{Name: studio.CookieName, Value: cookie})
	}
	return exchange(h.T, req, header, http.DefaultTransport.RoundTrip)
}

// SignIn signs in with token and returns the session cookie, its
// attributes, and the CSRF token.
func (h *Harness) SignIn(token string) (cookie *http.Cookie, csrf string, r Response) {
	h.T.Helper()
	body, _ := json.Marshal(map[string]string{"token": token})
	r = h.StudioReq("POST", studio.SessionPath, "", string(body), "Content-Type", "application/json")
	for _, c := range (&http.Response{Header: r.Header}).Cookies() {
		if c.Name == studio.CookieName {
			cookie = c
		}
	}
	var info struct {
		CSRF string `json:"csrf_token"`
	}
	json.Unmarshal([]byte(r.Body), &info)
	return cookie, info.CSRF, r
}

// LoadOpenAPI loads and validates the OpenAPI document the server serves.
func LoadOpenAPI(t testing.TB) *openapi3.T {
	t.Helper()
	doc, err := openapi3.NewLoader().LoadFromData(server.OpenAPI())
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatalf("the OpenAPI document is invalid: %v", err)
	}
	return doc
}

// OpenAPIRouter finds the operation of a request in the OpenAPI document,
// whatever server the request went to.
func OpenAPIRouter(t testing.TB) routers.Router {
	t.Helper()
	doc := LoadOpenAPI(t)
	doc.Servers = openapi3.Servers{}
	router, err := legacy.NewRouter(doc)
	if err != nil {
		t.Fatal(err)
	}
	return router
}

// CheckDocumented sends method path (its path and query) with body and the
// header pairs, fails t unless the answer has status, and checks the
// answer against the OpenAPI document router holds: status, headers, and
// the body where kin-openapi can decode its media type (not, say, the
// export's application/gzip file). It returns the answer.
func (h *Harness) CheckDocumented(t testing.TB, router routers.Router, method, path string, body []byte, status int, header ...string) Response {
	t.Helper()
	req, err := http.NewRequest(method, h.URL+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	r := exchange(t, req, header, http.DefaultClient.Do)
	if r.Status != status {
		t.Fatalf("%s %s: status %d, want %d: %s", method, path, r.Status, status, r.Body)
	}
	// Route on the path alone, as the document describes it.
	vreq, _ := http.NewRequest(method, path, bytes.NewReader(body))
	vreq.Header = req.Header
	route, params, err := router.FindRoute(vreq)
	if err != nil {
		t.Fatalf("%s %s: no route in the document: %v", method, path, err)
	}
	mediaType, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	in := &openapi3filter.RequestValidationInput{
		Request: vreq, PathParams: params, Route: route,
		Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc},
	}
	out := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: in, Status: r.Status, Header: r.Header,
		Body: io.NopCloser(strings.NewReader(r.Body)),
		Options: &openapi3filter.Options{IncludeResponseStatus: true,
			ExcludeResponseBody: r.Body != "" && openapi3filter.RegisteredBodyDecoder(mediaType) == nil},
	}
	if err := openapi3filter.ValidateResponse(context.Background(), out); err != nil {
		t.Errorf("%s %s: answer does not match the document: %v", method, path, err)
	}
	return r
}

// Templated creates a mock with a template in mode.
func (h *Harness) Templated(template, ct, mode string) *client.Mock {
	h.T.Helper()
	m := h.Create(`[]`, client.CreateOptions{})
	r := h.Send(http.MethodPut, "/admin/v1/mocks/"+m.ID+"/template?mode="+mode, ct, template)
	if r.Status != http.StatusOK {
		h.T.Fatalf("PUT template: %d %s", r.Status, r.Body)
	}
	var v struct {
		TemplateMode *string `json:"template_mode"`
	}
	if err := json.Unmarshal([]byte(r.Body), &v); err != nil || v.TemplateMode == nil || *v.TemplateMode != mode {
		h.T.Fatalf("PUT template answered %s", r.Body)
	}
	return m
}

// UsersTemplate is a template of 40 users, with every kind of value.
const UsersTemplate = `{"$repeat":40,"$item":{"id":"{{ index }}","name":"{{ name }}","age":"{{ number 18 80 }}","city":"{{ choice \"Paris\" \"Oslo\" \"Lima\" }}","active":"{{ boolean }}","tags":["{{ choice \"a\" \"b\" }}","{{ choice \"b\" \"c\" }}"]}}`

// HostileAllOf is a JSON Schema of an object whose allOf has n branches of
// one property each: about 65 bytes a branch, and n³ steps to merge without
// a bound (3,000 branches, 194 KB: a minute of a core).
func HostileAllOf(n int) string {
	var b strings.Builder
	b.WriteString(`{"type":"object","allOf":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"properties":{"p%d":{"type":"string"}},"required":["p%d"]}`, i, i)
	}
	b.WriteString(`]}`)
	return b.String()
}
