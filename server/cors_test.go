package server_test

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/decoy-mock/decoy/inmem"
	"github.com/decoy-mock/decoy/internal/servertest"
	"github.com/decoy-mock/decoy/server"
)

// rawExchange sends request as it is on a new connection to h and reads
// one answer whole.
func rawExchange(t *testing.T, h *servertest.Harness, request string) servertest.Response {
	t.Helper()
	c, err := net.Dial("tcp", h.Srv.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(c, request); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("%.40q: %v", request, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return servertest.Response{Status: resp.StatusCode, Header: resp.Header, Body: string(body)}
}

// The CORS headers of an answer to a request from origin, under
// --cors-origins.
type corsWant int

const (
	corsAny     corsWant = iota // Access-Control-Allow-Origin: *
	corsEcho                    // the request's origin, with Vary: Origin
	corsRefused                 // no Access-Control-Allow-Origin, Vary: Origin
	corsNone                    // no CORS header at all
)

func checkCORS(t *testing.T, r servertest.Response, want corsWant, origin string) {
	t.Helper()
	acao, expose, vary := r.Header.Get("Access-Control-Allow-Origin"), r.Header.Get("Access-Control-Expose-Headers"), strings.Join(r.Header.Values("Vary"), ", ")
	exposes := strings.Contains(expose, "X-Total-Count") && strings.Contains(expose, "Retry-After")
	varies := strings.Contains(vary, "Origin")
	var ok bool
	switch want {
	case corsAny:
		ok = acao == "*" && exposes
	case corsEcho:
		ok = acao == origin && exposes && varies
	case corsRefused:
		ok = acao == "" && expose == "" && varies
	case corsNone:
		ok = acao == "" && expose == "" && !varies
	}
	if !ok {
		t.Errorf("%d %s: Access-Control-Allow-Origin %q, Expose-Headers %q, Vary %q; want case %d", r.Status, strings.TrimSpace(r.Body), acao, expose, vary, want)
	}
	if n := len(r.Header.Values("Access-Control-Allow-Origin")); n > 1 {
		t.Errorf("Access-Control-Allow-Origin %d times", n)
	}
}

// Every kind of error answer carries the CORS headers a read would, so
// that a web app on another origin reads Decoy's JSON error instead of
// seeing a CORS failure (§11.3): errors of handlers, the 404 of an unknown
// path, the client rate limit's 429, and the answers written in net/http's
// stead (malformed requests, heads too large, the connection cap's 503).
// With a list of origins, the answers net/http writes itself carry none:
// the request, unparsed, has no Origin to check.
func TestCORSOnEveryError(t *testing.T) {
	const origin = "https://app.example"
	for _, policy := range []struct {
		name    string
		origins []string
	}{
		{"any origin", nil},
		{"listed origins", []string{origin}},
	} {
		t.Run(policy.name, func(t *testing.T) {
			h := servertest.New(t, func(c *server.Config) {
				c.CORSOrigins = policy.origins
				l := inmem.NewLimiter()
				l.Now = c.Now
				c.ClientLimiter, c.ClientRateLimit = l, 5
			})
			capped := servertest.New(t, func(c *server.Config) {
				c.CORSOrigins = policy.origins
				c.MaxConns = 1
			})
			// what the answer to a request that could be parsed has: the
			// read's headers; from another origin, under a list, none.
			parsed, other, unparsed := corsAny, corsAny, corsAny
			if policy.origins != nil {
				parsed, other, unparsed = corsEcho, corsRefused, corsNone
			}
			get := func(path string, header ...string) servertest.Response {
				t.Helper()
				h.Clock.Add(time.Minute) // a fresh client rate limit
				return h.Get(path, append([]string{"Origin", origin}, header...)...)
			}
			for _, tc := range []struct {
				name   string
				r      func() servertest.Response
				status int
				want   corsWant
			}{
				{"404 unknown path", func() servertest.Response { return get("/nope") }, 404, parsed},
				{"404 unknown path, other origin", func() servertest.Response {
					h.Clock.Add(time.Minute)
					return h.Get("/nope", "Origin", "https://other.example")
				}, 404, other},
				{"404 unknown mock", func() servertest.Response { return get("/mock/00000000-0000-4000-8000-000000000000") }, 404, parsed},
				{"404 unknown project", func() servertest.Response { return get("/p/nope/users") }, 404, parsed},
				{"405 on /mock", func() servertest.Response {
					h.Clock.Add(time.Minute)
					return h.Do(http.MethodDelete, "/mock/x", "Origin", origin)
				}, 405, parsed},
				{"405 on /healthz", func() servertest.Response {
					h.Clock.Add(time.Minute)
					return h.Do(http.MethodPost, "/healthz", "Origin", origin)
				}, 405, parsed},
				{"401 of the admin API", func() servertest.Response { return get("/admin/v1/mocks") }, 401, parsed},
				{"429 of the client rate limit", func() servertest.Response {
					h.Clock.Add(time.Minute)
					var r servertest.Response
					for range 6 {
						r = h.Get("/nope", "Origin", origin)
					}
					return r
				}, 429, parsed},
				{"400 malformed request", func() servertest.Response {
					return rawExchange(t, h, "GET /mock/%zz HTTP/1.1\r\nHost: x\r\nOrigin: "+origin+"\r\n\r\n")
				}, 400, unparsed},
				{"400 bad header", func() servertest.Response {
					return rawExchange(t, h, "GET /nope HTTP/1.1\r\nHost: x\r\nOrigin: "+origin+"\r\nnonsense\r\n\r\n")
				}, 400, unparsed},
				{"431 headers too large", func() servertest.Response {
					return rawExchange(t, h, "GET /nope HTTP/1.1\r\nHost: x\r\nOrigin: "+origin+"\r\nX-Big: "+strings.Repeat("a", server.MaxHeaderBytes)+"\r\n\r\n")
				}, 431, unparsed},
				{"505 HTTP version", func() servertest.Response {
					return rawExchange(t, h, "GET /nope HTTP/2.0\r\nHost: x\r\nOrigin: "+origin+"\r\n\r\n")
				}, 505, unparsed},
				{"503 connection cap", func() servertest.Response {
					held, err := net.Dial("tcp", capped.Srv.Addr().String()) // the one connection allowed
					if err != nil {
						t.Fatal(err)
					}
					defer held.Close()
					return rawExchange(t, capped, "GET /nope HTTP/1.1\r\nHost: x\r\nOrigin: "+origin+"\r\n\r\n")
				}, 503, unparsed},
			} {
				t.Run(tc.name, func(t *testing.T) {
					r := tc.r()
					if r.Status != tc.status || !strings.HasPrefix(r.Body, `{"error":`) {
						t.Fatalf("got %d %q, want %d with a JSON error", r.Status, r.Body, tc.status)
					}
					checkCORS(t, r, tc.want, origin)
				})
			}
		})
	}
}

// The admin API answers other origins, its preflights included, and never
// with Access-Control-Allow-Credentials, nor allowing X-CSRF-Token: only a
// bearer token authorizes another origin's request. The Studio's own
// answers carry no CORS header.
func TestCORSOfAdminAndStudio(t *testing.T) {
	const origin = "https://app.example"
	h := servertest.NewStudio(t)
	r := h.Get("/admin/v1/mocks", "Origin", origin, "Authorization", "Bearer "+servertest.AdminToken)
	if r.Status != 200 {
		t.Fatalf("admin list: %d %s", r.Status, r.Body)
	}
	checkCORS(t, r, corsAny, origin)
	r = h.Do(http.MethodOptions, "/admin/v1/mocks", "Origin", origin, "Access-Control-Request-Method", "POST",
		"Access-Control-Request-Headers", "authorization, content-type")
	if r.Status != 204 || r.Header.Get("Access-Control-Allow-Origin") != "*" {
		t.Fatalf("admin preflight: %d %v", r.Status, r.Header)
	}
	allowed := strings.ToLower(r.Header.Get("Access-Control-Allow-Headers"))
	if !strings.Contains(allowed, "authorization") || !strings.Contains(allowed, "content-type") || strings.Contains(allowed, "csrf") {
		t.Errorf("admin preflight allows headers %q", allowed)
	}
	if !strings.Contains(r.Header.Get("Access-Control-Allow-Methods"), "PATCH") {
		t.Errorf("admin preflight allows methods %q", r.Header.Get("Access-Control-Allow-Methods"))
	}
	for _, path := range []string{"/", "/studio/session", "/studio/assets/nope.js"} {
		r := h.Get(path, "Origin", origin)
		checkCORS(t, r, corsNone, origin)
	}
	for _, r := range []servertest.Response{
		h.Get("/admin/v1/mocks", "Origin", origin, "Authorization", "Bearer "+servertest.AdminToken),
		h.Do(http.MethodOptions, "/admin/v1/mocks", "Origin", origin, "Access-Control-Request-Method", "GET"),
		h.Get("/nope", "Origin", origin),
	} {
		if v := r.Header.Get("Access-Control-Allow-Credentials"); v != "" {
			t.Errorf("Access-Control-Allow-Credentials: %q", v)
		}
	}
}
