package server_test

import (
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/decoy-mock/decoy"
	"github.com/decoy-mock/decoy/client"
	"github.com/decoy-mock/decoy/inmem"
	"github.com/decoy-mock/decoy/internal/servertest"
	"github.com/decoy-mock/decoy/server"
	"github.com/decoy-mock/decoy/transport"
)

// CONTRACT §1.1: the first check that fails answers.
func TestOrderOfChecks(t *testing.T) {
	h := servertest.New(t)
	open := h.Create(`[{"a":1}]`, client.CreateOptions{RateLimit: servertest.Ptr(int64(1)), MonthlyQuota: servertest.Ptr(int64(1))})
	priv := h.Create(`[{"a":1}]`, client.CreateOptions{Private: true})
	unknown := "/mock/0b9d7c8e-1d2f-4a3b-9c8d-7e6f5a4b3c2d"
	for _, tc := range []struct {
		name, method, path string
		header             []string
		status             int
		msg                string
	}{
		{"method before id", http.MethodPost, "/mock/not-a-uuid", nil, 405, "Invalid Method"},
		{"method on an unknown id", http.MethodDelete, unknown, nil, 405, "Invalid Method"},
		{"method on the bare prefix", http.MethodPut, "/api/", nil, 405, "Invalid Method"},
		{"method before auth", http.MethodPatch, "/mock/" + priv.ID, nil, 405, "Invalid Method"},
		{"options without preflight headers", http.MethodOptions, "/mock/" + open.ID, nil, 405, "Invalid Method"},
		{"not a uuid", http.MethodGet, "/mock/123", nil, 404, "Mock api not found"},
		{"uuid in braces", http.MethodGet, "/mock/{" + open.ID + "}", nil, 404, "Mock api not found"},
		{"extra segment", http.MethodGet, "/mock/" + open.ID + "/x", nil, 404, "Mock api not found"},
		{"trailing slash", http.MethodGet, "/mock/" + open.ID + "/", nil, 404, "Mock api not found"},
		{"no id", http.MethodGet, "/mock/", nil, 404, "Mock api not found"},
		{"unknown id", http.MethodGet, unknown, nil, 404, "Mock api not found"},
		{"id before auth", http.MethodGet, unknown, []string{"serviceauthtoken", "x"}, 404, "Mock api not found"},
		{"auth before parameters", http.MethodGet, "/mock/" + priv.ID + "?limit=-1", nil, 401, "Auth token not found"},
		{"parameters", http.MethodGet, "/mock/" + open.ID + "?limit=-1", nil, 400, "Limit must be 0 or greater"},
		// The 400 above used the one rate-limit slot (it passed checks 1-3).
		{"rate limit before quota and parameters", http.MethodGet, "/mock/" + open.ID + "?limit=x", nil, 429, "Rate limit exceeded. Maximum 1 requests per minute."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := h.Do(tc.method, tc.path, tc.header...)
			servertest.WantError(t, r, tc.status, tc.msg)
			if tc.status == 405 && r.Header.Get("Allow") != "GET, HEAD" {
				t.Errorf("Allow = %q", r.Header.Get("Allow"))
			}
		})
	}
	// Nothing answered by a check before the quota counted a served response.
	if u, _ := h.Admin.Usage(context.Background(), open.ID); u.Month.Used != 0 {
		t.Errorf("month used = %d, want 0", u.Month.Used)
	}
}

func TestIDAnyCase(t *testing.T) {
	h := servertest.New(t)
	m := h.Create(`[1]`, client.CreateOptions{})
	for _, path := range []string{"/mock/" + m.ID, "/mock/" + strings.ToUpper(m.ID), "/api/" + m.ID} {
		if r := h.Get(path); r.Status != 200 || r.Body != "[1]" {
			t.Errorf("%s: %d %q", path, r.Status, r.Body)
		}
	}
}

func TestHead(t *testing.T) {
	h := servertest.New(t)
	m := h.Create(`[{"a":1},{"a":2}]`, client.CreateOptions{})
	for _, q := range []string{"", "?limit=1"} {
		g, hd := h.Get("/mock/"+m.ID+q), h.Do(http.MethodHead, "/mock/"+m.ID+q)
		if hd.Status != 200 || hd.Body != "" {
			t.Fatalf("HEAD%s: %d %q", q, hd.Status, hd.Body)
		}
		for _, k := range []string{"Content-Type", "Content-Length", "ETag", "X-Total-Count"} {
			if g.Header.Get(k) != hd.Header.Get(k) {
				t.Errorf("HEAD%s %s = %q, GET has %q", q, k, hd.Header.Get(k), g.Header.Get(k))
			}
		}
	}
}

func TestPreflight(t *testing.T) {
	h := servertest.New(t, func(c *server.Config) { c.TokenHeader = "X-Brand-Token" })
	r := h.Do(http.MethodOptions, "/mock/not-even-a-uuid", "Origin", "https://app.example", "Access-Control-Request-Method", "GET")
	if r.Status != 204 || r.Header.Get("Access-Control-Allow-Origin") != "*" {
		t.Fatalf("preflight: %d %v", r.Status, r.Header)
	}
	allowed := r.Header.Get("Access-Control-Allow-Headers")
	for _, name := range []string{"serviceauthtoken", "decoyauthtoken", "X-Brand-Token"} {
		if !strings.Contains(allowed, name) {
			t.Errorf("Allow-Headers %q lacks %s", allowed, name)
		}
	}
	if m := r.Header.Get("Access-Control-Allow-Methods"); m != "GET, HEAD" {
		t.Errorf("Allow-Methods = %q", m)
	}

	narrow := servertest.New(t, func(c *server.Config) { c.CORSOrigins = []string{"https://good.example"} })
	m := narrow.Create(`[]`, client.CreateOptions{})
	if got := narrow.Get("/mock/"+m.ID, "Origin", "https://good.example").Header.Get("Access-Control-Allow-Origin"); got != "https://good.example" {
		t.Errorf("allowed origin got ACAO %q", got)
	}
	if got := narrow.Get("/mock/"+m.ID, "Origin", "https://evil.example").Header.Get("Access-Control-Allow-Origin"); got != "" {
		t.Errorf("other origin got ACAO %q", got)
	}
}

// CONTRACT §1.5.
func TestTokens(t *testing.T) {
	h := servertest.New(t, func(c *server.Config) { c.TokenHeader = "X-Brand-Token" })
	priv := h.Create(`[{"a":1}]`, client.CreateOptions{Private: true})
	open := h.Create(`[{"a":1}]`, client.CreateOptions{})
	if !strings.HasPrefix(priv.Token, "dcy_") || len(priv.Token) != 4+43 {
		t.Fatalf("token %q is not dcy_ and 43 base64url characters", priv.Token)
	}
	good, bad := priv.Token, "dcy_"+strings.Repeat("A", 43)
	p := "/mock/" + priv.ID
	for _, tc := range []struct {
		name   string
		path   string
		header []string
		status int
		msg    string
	}{
		{"service header", p, []string{"serviceauthtoken", good}, 200, ""},
		{"header names are case-insensitive", p, []string{"ServiceAuthToken", good}, 200, ""},
		{"decoy header", p, []string{"decoyauthtoken", good}, 200, ""},
		{"extra header", p, []string{"x-brand-token", good}, 200, ""},
		{"query parameter", p + "?auth_token=" + good, nil, 200, ""},
		{"header wins over query", p + "?auth_token=" + bad, []string{"serviceauthtoken", good}, 200, ""},
		{"wrong header wins over right query", p + "?auth_token=" + good, []string{"serviceauthtoken", bad}, 401, "Invalid auth token"},
		{"empty header is absent", p + "?auth_token=" + good, []string{"serviceauthtoken", ""}, 200, ""},
		{"empty query is absent", p + "?auth_token=", nil, 401, "Auth token not found"},
		{"no token", p, nil, 401, "Auth token not found"},
		{"wrong token", p, []string{"decoyauthtoken", bad}, 401, "Invalid auth token"},
		{"token of another length", p, []string{"decoyauthtoken", good + "x"}, 401, "Invalid auth token"},
		{"token to an open mock is ignored", "/mock/" + open.ID, []string{"serviceauthtoken", bad}, 200, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := h.Get(tc.path, tc.header...)
			if tc.status == 200 {
				if r.Status != 200 || r.Body != `[{"a":1}]` {
					t.Errorf("got %d %q", r.Status, r.Body)
				}
				return
			}
			servertest.WantError(t, r, tc.status, tc.msg)
		})
	}
	if r := h.Get(p, "serviceauthtoken", good); r.Header.Get("Cache-Control") != "private, no-cache" {
		t.Errorf("private mock Cache-Control = %q", r.Header.Get("Cache-Control"))
	}
}

func TestFailedAuthenticationLimit(t *testing.T) {
	h := servertest.New(t, func(c *server.Config) { c.AuthFailureLimit = 3 })
	priv := h.Create(`[]`, client.CreateOptions{Private: true})
	p := "/mock/" + priv.ID
	// Missing tokens are not guesses and do not count.
	for i := 0; i < 5; i++ {
		servertest.WantError(t, h.Get(p), 401, "Auth token not found")
	}
	for i := 0; i < 3; i++ {
		h.Clock.Add(time.Second)
		servertest.WantError(t, h.Get(p, "serviceauthtoken", "guess"), 401, "Invalid auth token")
	}
	for _, header := range [][]string{{"serviceauthtoken", "guess"}, {"serviceauthtoken", priv.Token}, nil} {
		r := h.Get(p, header...)
		servertest.WantError(t, r, 429, "Too many failed authentication attempts")
		// The first failure (at +1s) leaves the window at +61s; now is +3s.
		if ra := r.Header.Get("Retry-After"); ra != "58" {
			t.Errorf("Retry-After = %q, want 58", ra)
		}
	}
	h.Clock.Add(58 * time.Second)
	if r := h.Get(p, "serviceauthtoken", priv.Token); r.Status != 200 {
		t.Errorf("after the window freed: %d %s", r.Status, r.Body)
	}
}

// One address has one budget of failures, whatever it guesses: wrong mock
// tokens, passwords, admin tokens, API keys and personal access tokens
// all count against it, and past it every kind of credential is refused.
func TestFailedAuthenticationsShareOneLimit(t *testing.T) {
	h := servertest.New(t, withTeams) // --auth-failure-limit 30
	priv := h.Create(`[]`, client.CreateOptions{Private: true})
	p := "/mock/" + priv.ID
	for i := range 20 {
		h.Clock.Add(time.Second) // failure i+1 at +(i+1) s
		servertest.WantError(t, h.Get(p, "serviceauthtoken", fmt.Sprint("guess", i)), 401, "Invalid auth token")
	}
	signIn := func() servertest.Response {
		t.Helper()
		return h.Send("POST", "/admin/v1/auth/token", "application/json", `{"email":"nobody@example.com","password":"a wrong password"}`, "Authorization", "")
	}
	for range 10 {
		h.Clock.Add(time.Second)
		servertest.WantError(t, signIn(), 401, "Invalid email or password")
	}
	h.Clock.Add(time.Second) // now +31 s: the 31st failure
	r := signIn()
	servertest.WantError(t, r, 429, "Too many failed authentication attempts")
	// The first failure (at +1 s) leaves the window at +61 s.
	if ra := r.Header.Get("Retry-After"); ra != "30" {
		t.Errorf("Retry-After = %q, want 30", ra)
	}
	for _, c := range []struct {
		name string
		r    servertest.Response
	}{
		{"the right mock token", h.Get(p, "serviceauthtoken", priv.Token)},
		{"the right admin token", h.Get("/admin/v1/mocks", "Authorization", "Bearer "+servertest.AdminToken)},
		{"a wrong admin token", h.Get("/admin/v1/mocks", "Authorization", "Bearer wrong")},
		{"a wrong invitation", h.Get("/admin/v1/invitations/dcy_inv_wrong")},
	} {
		if c.r.Status != 429 || c.r.Header.Get("Retry-After") != "30" {
			t.Errorf("%s: %d %s, Retry-After %q; want 429 and 30", c.name, c.r.Status, c.r.Body, c.r.Header.Get("Retry-After"))
		}
	}
	h.Clock.Add(30 * time.Second) // the first failure has left the window
	if r := h.Get(p, "serviceauthtoken", priv.Token); r.Status != 200 {
		t.Errorf("after the first failure left the window: %d %s", r.Status, r.Body)
	}
}

// CONTRACT §1.6: rate limit.
func TestRateLimit(t *testing.T) {
	h := servertest.New(t)
	m := h.Create(`[{"a":1}]`, client.CreateOptions{RateLimit: servertest.Ptr(int64(3))})
	p := "/mock/" + m.ID
	check := func(r servertest.Response, status int, remaining, reset string) {
		t.Helper()
		if r.Status != status {
			t.Fatalf("status %d, want %d (%s)", r.Status, status, r.Body)
		}
		if got := r.Header.Get("X-RateLimit-Limit"); got != "3" {
			t.Errorf("X-RateLimit-Limit = %q", got)
		}
		if got := r.Header.Get("X-RateLimit-Remaining"); got != remaining {
			t.Errorf("X-RateLimit-Remaining = %q, want %s", got, remaining)
		}
		if got := r.Header.Get("X-RateLimit-Reset"); got != reset {
			t.Errorf("X-RateLimit-Reset = %q, want %s", got, reset)
		}
	}
	check(h.Get(p), 200, "2", "60")
	h.Clock.Add(10 * time.Second)
	check(h.Get(p+"?limit=-5"), 400, "1", "50") // a 400 passed checks 1-3: it counts
	h.Clock.Add(10 * time.Second)
	check(h.Get(p), 200, "0", "40")
	h.Clock.Add(10 * time.Second)
	r := h.Get(p)
	check(r, 429, "0", "30")
	servertest.WantError(t, r, 429, "Rate limit exceeded. Maximum 3 requests per minute.")
	if got := r.Header.Get("Retry-After"); got != "30" {
		t.Errorf("Retry-After = %q, want 30", got)
	}
	// Refused requests do not consume the window: the first slot frees at +60s.
	h.Clock.Add(29 * time.Second)
	check(h.Get(p), 429, "0", "1")
	h.Clock.Add(time.Second)
	check(h.Get(p), 200, "0", "10")

	// An unlimited mock carries no rate-limit headers.
	free := h.Create(`[]`, client.CreateOptions{RateLimit: servertest.Ptr(int64(0))})
	if r := h.Get("/mock/" + free.ID); r.Header.Get("X-RateLimit-Limit") != "" || r.Header.Get("X-RateLimit-Remaining") != "" {
		t.Errorf("unlimited mock has rate headers: %v", r.Header)
	}
}

// CONTRACT §1.6: monthly quota.
func TestMonthlyQuota(t *testing.T) {
	h := servertest.New(t)
	h.Clock.Add(-10 * time.Hour) // 2026-11-22T00:00:00Z
	m := h.Create(`[{"a":1}]`, client.CreateOptions{MonthlyQuota: servertest.Ptr(int64(2)), RateLimit: servertest.Ptr(int64(100))})
	priv := h.Create(`[]`, client.CreateOptions{Private: true, MonthlyQuota: servertest.Ptr(int64(1))})
	p := "/mock/" + m.ID
	// Answers other than served responses do not count.
	h.Get(p + "?limit=-1")
	h.Get(p + "?order_direction=sideways")
	h.Get("/mock/" + priv.ID)
	h.Get("/mock/"+priv.ID, "serviceauthtoken", "wrong")
	for i, want := range []string{"1", "0"} {
		r := h.Get(p)
		if r.Status != 200 || r.Header.Get("X-Quota-Limit") != "2" || r.Header.Get("X-Quota-Remaining") != want {
			t.Fatalf("request %d: %d quota %q/%q", i, r.Status, r.Header.Get("X-Quota-Remaining"), r.Header.Get("X-Quota-Limit"))
		}
	}
	r := h.Get(p)
	servertest.WantError(t, r, 429, "Monthly request quota exceeded")
	if got := r.Header.Get("Retry-After"); got != strconv.Itoa(9*24*3600) {
		t.Errorf("Retry-After = %q, want the 9 days to December", got)
	}
	if r.Header.Get("X-Quota-Remaining") != "0" || r.Header.Get("X-RateLimit-Remaining") != "96" {
		t.Errorf("limit headers on a quota refusal: %v", r.Header)
	}
	// A quota refusal gave its rate-limit slot back; an invalid query on an
	// exhausted quota is answered by the quota, which comes first.
	servertest.WantError(t, h.Get(p+"?limit=-1"), 429, "Monthly request quota exceeded")
	if u, _ := h.Admin.Usage(context.Background(), m.ID); u.Minute.Used != 4 || u.Month.Used != 2 {
		t.Errorf("usage = %+v, want 4 in the minute (2 served + 2 answered 400) and 2 in the month", u)
	}
	// A new UTC month starts from zero.
	h.Clock.Add(9 * 24 * time.Hour)
	if r := h.Get(p); r.Status != 200 || r.Header.Get("X-Quota-Remaining") != "1" {
		t.Errorf("in December: %d remaining %q", r.Status, r.Header.Get("X-Quota-Remaining"))
	}
	unlimited := h.Create(`[]`, client.CreateOptions{MonthlyQuota: servertest.Ptr(int64(0))})
	if r := h.Get("/mock/" + unlimited.ID); r.Header.Get("X-Quota-Limit") != "" {
		t.Errorf("unlimited quota has quota headers: %v", r.Header)
	}
}

// Only answers that return the data count: not HEAD, not 304.
func TestQuotaCountsServedResponsesOnly(t *testing.T) {
	h := servertest.New(t)
	m := h.Create(`[{"a":1}]`, client.CreateOptions{MonthlyQuota: servertest.Ptr(int64(2))})
	p := "/mock/" + m.ID
	first := h.Get(p)
	if first.Header.Get("X-Quota-Remaining") != "1" {
		t.Fatalf("first GET: remaining %q", first.Header.Get("X-Quota-Remaining"))
	}
	for i := 0; i < 3; i++ {
		r := h.Get(p, "If-None-Match", first.Header.Get("ETag"))
		if r.Status != 304 || r.Header.Get("X-Quota-Remaining") != "1" {
			t.Errorf("304: %d remaining %q", r.Status, r.Header.Get("X-Quota-Remaining"))
		}
		hd := h.Do(http.MethodHead, p)
		if hd.Status != 200 || hd.Header.Get("X-Quota-Remaining") != "1" {
			t.Errorf("HEAD: %d remaining %q", hd.Status, hd.Header.Get("X-Quota-Remaining"))
		}
	}
	if u, _ := h.Admin.Usage(context.Background(), m.ID); u.Month.Used != 1 {
		t.Errorf("month used = %d, want 1", u.Month.Used)
	}
	h.Get(p)
	// The quota is used up: HEAD and conditional requests are refused too.
	if r := h.Do(http.MethodHead, p); r.Status != 429 || r.Body != "" {
		t.Errorf("HEAD over quota: %d %q", r.Status, r.Body)
	}
	servertest.WantError(t, h.Get(p, "If-None-Match", first.Header.Get("ETag")), 429, "Monthly request quota exceeded")
}

// A quota refusal gives its rate-limit slot back, and the headers say so.
func TestQuotaRefusalRateHeaders(t *testing.T) {
	h := servertest.New(t)
	m := h.Create(`[]`, client.CreateOptions{MonthlyQuota: servertest.Ptr(int64(1)), RateLimit: servertest.Ptr(int64(5))})
	h.Get("/mock/" + m.ID)
	h.Clock.Add(61 * time.Second)
	r := h.Get("/mock/" + m.ID)
	if r.Status != 429 || r.Header.Get("X-RateLimit-Remaining") != "5" || r.Header.Get("X-RateLimit-Reset") != "0" {
		t.Errorf("quota refusal with an empty window: %d remaining %q reset %q", r.Status,
			r.Header.Get("X-RateLimit-Remaining"), r.Header.Get("X-RateLimit-Reset"))
	}
}

// The concurrency requirement, in process: 20 concurrent requests
// against a limit of 5 give exactly 5 answers, and a quota of 3 under 8
// concurrent requests serves exactly 3.
func TestLimitsUnderConcurrency(t *testing.T) {
	h := servertest.New(t)
	for _, tc := range []struct {
		opts     client.CreateOptions
		requests int
		served   int
		refusal  string
	}{
		{client.CreateOptions{RateLimit: servertest.Ptr(int64(5))}, 20, 5, "Rate limit exceeded. Maximum 5 requests per minute."},
		{client.CreateOptions{MonthlyQuota: servertest.Ptr(int64(3))}, 8, 3, "Monthly request quota exceeded"},
	} {
		m := h.Create(`[{"a":1}]`, tc.opts)
		var wg sync.WaitGroup
		results := make(chan servertest.Response, tc.requests)
		for i := 0; i < tc.requests; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				results <- h.Get("/mock/" + m.ID)
			}()
		}
		wg.Wait()
		close(results)
		served := 0
		for r := range results {
			switch {
			case r.Status == 200:
				served++
			case r.Status != 429 || !strings.Contains(r.Body, tc.refusal):
				t.Errorf("unexpected answer %d %s", r.Status, r.Body)
			}
		}
		if served != tc.served {
			t.Errorf("%d of %d served, want %d", served, tc.requests, tc.served)
		}
	}
}

// CONTRACT §1.7.
func TestStoredBytes(t *testing.T) {
	h := servertest.New(t)
	const doc = "[ {\"price\": 30.0, \"name\":\"Ren\\u00e9\", \"z\":1, \"a\":2} ,\n {\"price\":1e2,\"name\":\"b\"} ]"
	m := h.Create(doc, client.CreateOptions{ContentType: "application/json; charset=utf-8"})
	p := "/mock/" + m.ID
	for _, tc := range []struct{ query, body string }{
		{"", doc},
		{"?order_direction=desc", doc}, // no processing: unchanged
		{"?limit=5", "[{\"price\": 30.0, \"name\":\"Ren\\u00e9\", \"z\":1, \"a\":2},{\"price\":1e2,\"name\":\"b\"}]"},
		{"?order_by=price&order_direction=desc", "[{\"price\":1e2,\"name\":\"b\"},{\"price\": 30.0, \"name\":\"Ren\\u00e9\", \"z\":1, \"a\":2}]"},
		{"?filters=name%3DRen%C3%A9", "[{\"price\": 30.0, \"name\":\"Ren\\u00e9\", \"z\":1, \"a\":2}]"},
		{"?filters=price%3D30", "[{\"price\": 30.0, \"name\":\"Ren\\u00e9\", \"z\":1, \"a\":2}]"},
		{"?limit=0", "[]"},
	} {
		r := h.Get(p + tc.query)
		if r.Status != 200 || r.Body != tc.body {
			t.Errorf("%s: %d\n got %q\nwant %q", tc.query, r.Status, r.Body, tc.body)
		}
		if ct := r.Header.Get("Content-Type"); ct != "application/json; charset=utf-8" {
			t.Errorf("%s: Content-Type %q", tc.query, ct)
		}
		if r.Header.Get("X-Content-Type-Options") != "nosniff" || r.Header.Get("Cache-Control") != "no-cache" {
			t.Errorf("%s: headers %v", tc.query, r.Header)
		}
	}
	if got := h.Get(p + "?limit=1").Header.Get("X-Total-Count"); got != "2" {
		t.Errorf("X-Total-Count = %q, want 2 (before limit)", got)
	}
}

func TestNotArrays(t *testing.T) {
	h := servertest.New(t)
	for _, tc := range []struct{ ct, data string }{
		{"application/json", `{"users":[{"a":1}], "n": 1.50}`},
		{"application/json", `"just a string"`},
		{"text/plain", `[{"looks":"like json"}]`},
		{"text/html", `<script>alert(1)</script>`},
		{"application/octet-stream", "\x00\x01\xff"},
	} {
		m := h.Create(tc.data, client.CreateOptions{ContentType: tc.ct})
		// Query parameters, even invalid ones, do not apply.
		r := h.Get("/mock/" + m.ID + "?limit=-1&filters=a%5B%24gt%5D%3D1&order_direction=x")
		if r.Status != 200 || r.Body != tc.data || r.Header.Get("Content-Type") != tc.ct || r.Header.Get("X-Total-Count") != "" {
			t.Errorf("%s %q: %d %q %v", tc.ct, tc.data, r.Status, r.Body, r.Header)
		}
		isJSON := tc.ct == "application/json"
		if csp := r.Header.Get("Content-Security-Policy"); (csp == "sandbox") == isJSON {
			t.Errorf("%s: Content-Security-Policy %q", tc.ct, csp)
		}
	}
}

func TestETag(t *testing.T) {
	h := servertest.New(t)
	m := h.Create(`[{"a":1},{"a":2}]`, client.CreateOptions{})
	p := "/mock/" + m.ID
	whole, part := h.Get(p), h.Get(p+"?limit=1")
	if whole.Header.Get("ETag") != m.ETag || part.Header.Get("ETag") == "" || part.Header.Get("ETag") == m.ETag {
		t.Fatalf("ETags: whole %q (mock %q), part %q", whole.Header.Get("ETag"), m.ETag, part.Header.Get("ETag"))
	}
	for _, tc := range []struct {
		query, inm string
		status     int
	}{
		{"", m.ETag, 304},
		{"", "W/" + m.ETag, 304},
		{"", `"other", ` + m.ETag, 304},
		{"", "*", 304},
		{"", `"other"`, 200},
		{"?limit=1", part.Header.Get("ETag"), 304},
		{"?limit=1", m.ETag, 200},
	} {
		r := h.Get(p+tc.query, "If-None-Match", tc.inm)
		if r.Status != tc.status {
			t.Errorf("%s If-None-Match %s: %d, want %d", tc.query, tc.inm, r.Status, tc.status)
		}
		if tc.status == 304 && (r.Body != "" || r.Header.Get("ETag") == "") {
			t.Errorf("304 with body %q or without ETag", r.Body)
		}
	}
	// Not for other statuses.
	created := h.Create(`[1]`, client.CreateOptions{Status: 500})
	if r := h.Get("/mock/"+created.ID, "If-None-Match", "*"); r.Status != 500 || r.Body != "[1]" {
		t.Errorf("status 500 mock: %d %q", r.Status, r.Body)
	}
}

// The tag of a processed answer is a digest of its body: the same bytes
// give the same tag whatever query chose them, and other bytes another tag.
func TestETagOfProcessedAnswers(t *testing.T) {
	h := servertest.New(t)
	m := h.Create(`[{"a":1,"b":"x"}, {"a":2,"b":"y"},{"a":3,"b":"x"}]`, client.CreateOptions{})
	p := "/mock/" + m.ID + "?"
	tags := map[string]string{} // body -> tag
	for _, q := range []string{
		"limit=1", "filters=a%3D1", "order_by=a&limit=1", // [{"a":1,"b":"x"}]
		"filters=b%3Dx", "order_by=b&limit=2", // records 1 and 3
		"order_by=a&order_direction=desc&limit=1", "offset=2", // record 3
		"filters=b%3Dy", "limit=0", "filters=a%3D9", // [{"a":2,...}], [] and []
		"order_by=a&order_direction=desc", // all three, reversed
	} {
		r := h.Get(p + q)
		tag := r.Header.Get("ETag")
		if r.Status != 200 || tag == "" || tag == m.ETag {
			t.Fatalf("%s: %d, ETag %q", q, r.Status, tag)
		}
		if prev, ok := tags[r.Body]; ok && prev != tag {
			t.Errorf("%s: body %s has tag %s, and %s for another query", q, r.Body, tag, prev)
		}
		tags[r.Body] = tag
		if want := strconv.Itoa(len(r.Body)); r.Header.Get("Content-Length") != want {
			t.Errorf("%s: Content-Length %s for a body of %s bytes", q, r.Header.Get("Content-Length"), want)
		}
	}
	seen := map[string]string{}
	for body, tag := range tags {
		if other, ok := seen[tag]; ok {
			t.Errorf("bodies %s and %s share the tag %s", body, other, tag)
		}
		seen[tag] = body
	}
	if len(tags) != 6 {
		t.Errorf("%d distinct bodies, want 6: %v", len(tags), tags)
	}
}

func TestGzip(t *testing.T) {
	h := servertest.New(t)
	var big strings.Builder
	big.WriteString("[")
	for i := 0; i < 100; i++ {
		if i > 0 {
			big.WriteString(",")
		}
		fmt.Fprintf(&big, `{"i":%d,"name":"record number %d"}`, i, i)
	}
	big.WriteString("]")
	m := h.Create(big.String(), client.CreateOptions{})
	small := h.Create(`[{"i":1}]`, client.CreateOptions{})
	for _, tc := range []struct {
		path, accept string
		gzipped      bool
	}{
		{"/mock/" + m.ID, "gzip", true},
		{"/mock/" + m.ID, "br, gzip;q=0.5", true},
		{"/mock/" + m.ID, "*", true},
		{"/mock/" + m.ID, "gzip;q=0", false},
		{"/mock/" + m.ID, "identity", false},
		{"/mock/" + m.ID, "", false},
		{"/mock/" + m.ID + "?order_by=i&order_direction=desc&limit=90", "gzip", true},
		{"/mock/" + m.ID + "?limit=2", "gzip", false}, // under 1 KiB
		{"/mock/" + small.ID, "gzip", false},
	} {
		r := h.Get(tc.path, "Accept-Encoding", tc.accept)
		plain := h.Get(tc.path)
		body := r.Body
		if got := r.Header.Get("Content-Encoding") == "gzip"; got != tc.gzipped {
			t.Errorf("%s Accept-Encoding %q: gzipped = %v", tc.path, tc.accept, got)
			continue
		}
		if tc.gzipped {
			zr, err := gzip.NewReader(strings.NewReader(r.Body))
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(zr)
			body = string(b)
			if r.Header.Get("ETag") == plain.Header.Get("ETag") {
				t.Errorf("gzip and identity share the strong ETag %s", r.Header.Get("ETag"))
			}
		}
		if body != plain.Body {
			t.Errorf("%s: decoded body differs from the plain one", tc.path)
		}
	}
}

func TestStatusAndDelay(t *testing.T) {
	h := servertest.New(t)
	m := h.Create(`[{"a":1}]`, client.CreateOptions{Status: 201, DelayMS: 200})
	start := time.Now()
	r := h.Get("/mock/" + m.ID + "?limit=1")
	if elapsed := time.Since(start); elapsed < 200*time.Millisecond {
		t.Errorf("answered after %v, before the 200ms delay", elapsed)
	}
	if r.Status != 201 || r.Body != `[{"a":1}]` {
		t.Errorf("got %d %q", r.Status, r.Body)
	}
	// Errors are not delayed and keep their own status.
	slow := h.Create(`[{"a":1}]`, client.CreateOptions{DelayMS: 10000})
	start = time.Now()
	servertest.WantError(t, h.Get("/mock/"+slow.ID+"?limit=-1"), 400, "Limit must be 0 or greater")
	if time.Since(start) > 5*time.Second {
		t.Error("an error answer waited for the 10 s delay")
	}
}

func TestClientLeavingDuringDelayIsNotCounted(t *testing.T) {
	h := servertest.New(t)
	m := h.Create(`[]`, client.CreateOptions{DelayMS: 30000})
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, h.URL+"/mock/"+m.ID, nil)
	if _, err := http.DefaultClient.Do(req); err == nil {
		t.Fatal("request finished before the delay")
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		u, err := h.Admin.Usage(context.Background(), m.ID)
		if err != nil {
			t.Fatal(err)
		}
		if u.Month.Used == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("month used = %d after the client left", u.Month.Used)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestAccessLogRedactsTokens(t *testing.T) {
	h := servertest.New(t)
	m := h.Create(`[]`, client.CreateOptions{Private: true})
	h.Get("/mock/" + m.ID + "?limit=1&auth_token=" + m.Token)
	h.Get("/mock/"+m.ID, "serviceauthtoken", m.Token)
	// Mistyped token parameters, which the endpoint does not read, are
	// hidden all the same.
	h.Get("/mock/" + m.ID + "?AUTH_TOKEN=" + m.Token)
	h.Get("/mock/" + m.ID + "?auth_token+=" + m.Token)
	h.Get("/mock/" + m.ID + "?x=1;auth_token=" + m.Token)
	h.Get("/mock/" + m.ID + ";auth_token=" + m.Token)
	logs := h.Logs.String()
	if strings.Contains(logs, m.Token) || strings.Contains(logs, servertest.AdminToken) {
		t.Fatalf("a secret reached the logs:\n%s", logs)
	}
	if !strings.Contains(logs, "auth_token=REDACTED") {
		t.Errorf("access log lacks the redacted query:\n%s", logs)
	}
}

// panicking is a store whose reads panic.
type panicking struct{ decoy.Store }

func (panicking) FindMockData(context.Context, string) (*decoy.Mock, decoy.Data, error) {
	panic("boom")
}

func TestPanicsAreRecovered(t *testing.T) {
	h := servertest.New(t, func(c *server.Config) { c.Store = panicking{c.Store} })
	r := h.Get("/mock/0b9d7c8e-1d2f-4a3b-9c8d-7e6f5a4b3c2d")
	servertest.WantError(t, r, 500, "Internal server error")
	if !strings.Contains(h.Logs.String(), "panic serving request") {
		t.Error("panic not logged")
	}
}

func TestJSONErrorsEverywhere(t *testing.T) {
	h := servertest.New(t)
	servertest.WantError(t, h.Get("/nope"), 404, "Not found")
	servertest.WantError(t, h.Get("/mock"), 404, "Mock api not found")
	r := h.Get("/healthz")
	if r.Status != 200 || !json.Valid([]byte(r.Body)) {
		t.Errorf("healthz: %d %s", r.Status, r.Body)
	}
	if r := h.Get("/readyz"); r.Status != 200 {
		t.Errorf("readyz: %d %s", r.Status, r.Body)
	}
	h.Store.Close()
	servertest.WantError(t, h.Get("/readyz"), 503, "Store unavailable")
}

// The per-client limit refuses every route but monitoring once a client
// made ClientRateLimit requests in a minute, per client address as trusted
// proxies report it.
func TestClientRateLimit(t *testing.T) {
	h := servertest.New(t, func(c *server.Config) {
		l := inmem.NewLimiter()
		l.Now = c.Now
		c.ClientLimiter, c.ClientRateLimit = l, 3
		c.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
	})
	unknown := "/mock/00000000-0000-4000-8000-000000000000"
	for range 3 {
		servertest.WantError(t, h.Get(unknown, "X-Forwarded-For", "198.51.100.1"), 404, "Mock api not found")
	}
	r := h.Get(unknown, "X-Forwarded-For", "198.51.100.1")
	servertest.WantError(t, r, 429, "Too many requests from this client. Maximum 3 per minute.")
	if r.Header.Get("Retry-After") != "60" {
		t.Errorf("Retry-After = %q", r.Header.Get("Retry-After"))
	}
	servertest.WantError(t, h.Get("/admin/v1/mocks", "X-Forwarded-For", "198.51.100.1"), 429, "Too many requests from this client. Maximum 3 per minute.")
	if r := h.Get("/healthz", "X-Forwarded-For", "198.51.100.1"); r.Status != 200 {
		t.Errorf("healthz limited: %d", r.Status)
	}
	// Another client behind the same proxy is not.
	servertest.WantError(t, h.Get(unknown, "X-Forwarded-For", "198.51.100.2"), 404, "Mock api not found")
	h.Clock.Add(time.Minute)
	servertest.WantError(t, h.Get(unknown, "X-Forwarded-For", "198.51.100.1"), 404, "Mock api not found")
	if v := h.Metric(`decoy_refusals_total{reason="client"}`); v != "2" {
		t.Errorf("client refusals = %s, want 2", v)
	}
}

// A flood of failed authentications from the /64s of one IPv6 range is
// bounded by its range's budget (transport.RangeScale times a client's a
// /48), and makes windows only for the failures it admitted (each /64 had
// a budget of its own, so that a /48 got as many as its /64s; found by an
// audit). It uses up its own range's budget only: a client of another
// /48 of the /32, and one of another range, still sign in with the right
// token.
func TestFailedAuthenticationsOfARangeBounded(t *testing.T) {
	failures := inmem.NewLimiter()
	const limit = 2
	h := servertest.New(t, func(c *server.Config) {
		c.AuthFailures, c.AuthFailureLimit = failures, limit
		c.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
	})
	failures.Now = h.Clock.Now
	priv := h.Create(`[]`, client.CreateOptions{Private: true})
	p := "/mock/" + priv.ID
	refused := 0
	for i := range 1000 {
		r := h.Get(p, "serviceauthtoken", "guess", "X-Forwarded-For", fmt.Sprintf("2001:db8:1:%x::7", i))
		switch r.Status {
		case 401:
		case 429:
			refused++
		default:
			t.Fatalf("guess %d: %d %s", i, r.Status, r.Body)
		}
	}
	const range48 = limit * transport.RangeScale
	if n := failures.Len(); n > range48+2 {
		t.Errorf("%d windows of failures for one /48, want at most %d (its /64s admitted, the /48, the /32)", n, range48+2)
	}
	if want := 1000 - range48; refused != want {
		t.Errorf("%d guesses refused, want %d", refused, want)
	}
	for _, c := range []struct{ from, token string }{
		{"2001:db8:2::7", priv.Token},
		{"198.51.100.1", priv.Token},
	} {
		if r := h.Get(p, "serviceauthtoken", c.token, "X-Forwarded-For", c.from); r.Status != 200 {
			t.Errorf("the right token from %s: %d %s", c.from, r.Status, r.Body)
		}
	}
	// The /48's budget is used up: the right token from it waits too.
	servertest.WantError(t, h.Get(p, "serviceauthtoken", priv.Token, "X-Forwarded-For", "2001:db8:1:ffff::1"), 429, "Too many failed authentication attempts")
	h.Clock.Add(time.Minute)
	if r := h.Get(p, "serviceauthtoken", priv.Token, "X-Forwarded-For", "2001:db8:1:ffff::1"); r.Status != 200 {
		t.Errorf("the right token from the /48 a minute later: %d %s", r.Status, r.Body)
	}
}

// A client whose /64 guessed too often is refused alone: its failures
// count in its /48's budget, but that budget is many clients' worth, so
// a neighbour of the /48 still signs in, however many /64s of the /48
// came first. Found by a review: the first 64 /64s of a /48 in a minute
// (claimed even by bodies sent to /healthz) counted apart and any others
// under the /48's one budget, which 30 wrong tokens from a 65th used up.
func TestFailedAuthenticationsOfANeighbour(t *testing.T) {
	h := servertest.New(t, func(c *server.Config) {
		l := inmem.NewLimiter()
		l.Now = c.Now
		c.AuthFailures, c.AuthFailureLimit = l, 30
		c.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
	})
	priv := h.Create(`[]`, client.CreateOptions{Private: true})
	p := "/mock/" + priv.ID
	for i := range 100 {
		h.Send("POST", "/healthz", "application/json", "x", "X-Forwarded-For", fmt.Sprintf("2001:db8:1:%x::1", i))
	}
	for range 30 {
		servertest.WantError(t, h.Get(p, "serviceauthtoken", "guess", "X-Forwarded-For", "2001:db8:1:ff00::1"), 401, "Invalid auth token")
	}
	servertest.WantError(t, h.Get(p, "serviceauthtoken", priv.Token, "X-Forwarded-For", "2001:db8:1:ff00::1"), 429, "Too many failed authentication attempts")
	if r := h.Get(p, "serviceauthtoken", priv.Token, "X-Forwarded-For", "2001:db8:1:ff01::1"); r.Status != 200 {
		t.Errorf("the right token from a neighbouring /64: %d %s", r.Status, r.Body)
	}
}

// The client rate limit of an IPv6 client counts in its /64, its /48 (64
// times the limit) and its /32 (4,096 times): a /48 gets 64 clients'
// worth, whatever number of /64s it sends from, and a /64 refused for its
// own limit uses up nothing of its range's.
func TestClientRateLimitOfARange(t *testing.T) {
	l := inmem.NewLimiter()
	const limit = 2
	h := servertest.New(t, func(c *server.Config) {
		l.Now = c.Now
		c.ClientLimiter, c.ClientRateLimit = l, limit
		c.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
	})
	unknown := "/mock/00000000-0000-4000-8000-000000000000"
	for range limit {
		servertest.WantError(t, h.Get(unknown, "X-Forwarded-For", "2001:db8:1:1::1"), 404, "Mock api not found")
	}
	for range 10 {
		servertest.WantError(t, h.Get(unknown, "X-Forwarded-For", "2001:db8:1:1::2"), 429, "Too many requests from this client. Maximum 2 per minute.")
	}
	const range48 = limit * transport.RangeScale
	for i := range range48 - limit {
		servertest.WantError(t, h.Get(unknown, "X-Forwarded-For", fmt.Sprintf("2001:db8:1:%x::1", 0x100+i)), 404, "Mock api not found")
	}
	r := h.Get(unknown, "X-Forwarded-For", "2001:db8:1:ffff::1")
	servertest.WantError(t, r, 429, "Too many requests from this client's network. Maximum 128 per minute.")
	if r.Header.Get("Retry-After") != "60" {
		t.Errorf("Retry-After = %q", r.Header.Get("Retry-After"))
	}
	if n := l.Len(); n > range48+2 {
		t.Errorf("%d windows for one /48, want at most %d (one a request admitted, the /48, the /32)", n, range48+2)
	}
	servertest.WantError(t, h.Get(unknown, "X-Forwarded-For", "2001:db8:2::1"), 404, "Mock api not found")
}

// countingLimiter counts the events asked to be admitted under key.
type countingLimiter struct {
	*inmem.Limiter
	key    string
	allows atomic.Int64
}

func (l *countingLimiter) Allow(ctx context.Context, key string, limit int64) (decoy.RateResult, error) {
	if key == l.key {
		l.allows.Add(1)
	}
	return l.Limiter.Allow(ctx, key, limit)
}

// A client over its own limit is refused before its ranges are asked: its
// refused requests hold nothing of its /48's budget, even for the moment
// an admission takes to be taken back (found by a review: a neighbour
// could be refused for the /48 meanwhile).
func TestClientRateLimitRefusalHoldsNoRange(t *testing.T) {
	const limit = 2
	l := &countingLimiter{Limiter: inmem.NewLimiter(), key: "client:2001:db8:1::/48"}
	h := servertest.New(t, func(c *server.Config) {
		l.Now = c.Now
		c.ClientLimiter, c.ClientRateLimit = l, limit
		c.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
	})
	unknown := "/mock/00000000-0000-4000-8000-000000000000"
	for range limit {
		servertest.WantError(t, h.Get(unknown, "X-Forwarded-For", "2001:db8:1:7::1"), 404, "Mock api not found")
	}
	before := l.allows.Load()
	for range 20 {
		servertest.WantError(t, h.Get(unknown, "X-Forwarded-For", "2001:db8:1:7::1"), 429, "Too many requests from this client. Maximum 2 per minute.")
	}
	if n := l.allows.Load() - before; n != 0 {
		t.Errorf("20 requests refused for their /64's limit asked the /48 for %d events", n)
	}
}

// Retry-After is the time until every window that refuses admits again:
// a client whose /64 and /48 are both full waits for the one that frees
// last (found by a review: it was told the /48's, came back, and was
// refused again).
func TestRetryAfterOfTheWindowThatFreesLast(t *testing.T) {
	const limit = 2
	failures := inmem.NewLimiter()
	h := servertest.New(t, func(c *server.Config) {
		c.AuthFailures, c.AuthFailureLimit = failures, limit
		c.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
	})
	failures.Now = h.Clock.Now
	priv := h.Create(`[]`, client.CreateOptions{Private: true})
	p := "/mock/" + priv.ID
	// 63 /64s of the /48 fail twice each at t = 0: 126 of its 128.
	for i := range transport.RangeScale - 1 {
		for range limit {
			servertest.WantError(t, h.Get(p, "serviceauthtoken", "guess", "X-Forwarded-For", fmt.Sprintf("2001:db8:1:%x::1", 0x100+i)), 401, "Invalid auth token")
		}
	}
	// At t = 30 s, the client's own /64 fails twice: it and the /48 full.
	h.Clock.Add(30 * time.Second)
	const me = "2001:db8:1:7::1"
	for range limit {
		servertest.WantError(t, h.Get(p, "serviceauthtoken", "guess", "X-Forwarded-For", me), 401, "Invalid auth token")
	}
	h.Clock.Add(20 * time.Second) // the /48 frees at 60 s, the /64 at 90 s
	r := h.Get(p, "serviceauthtoken", priv.Token, "X-Forwarded-For", me)
	servertest.WantError(t, r, 429, "Too many failed authentication attempts")
	if got := r.Header.Get("Retry-After"); got != "40" {
		t.Errorf("Retry-After = %s, want 40 (the /64's window)", got)
	}
	h.Clock.Add(40 * time.Second)
	if r := h.Get(p, "serviceauthtoken", priv.Token, "X-Forwarded-For", me); r.Status != 200 {
		t.Errorf("the right token once Retry-After passed: %d %s", r.Status, r.Body)
	}
}
