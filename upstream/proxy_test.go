package upstream_test

import (
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/decoy-mock/decoy/answer"
	"github.com/decoy-mock/decoy/upstream"
)

var loopback = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}

func newProxy(allow []netip.Prefix, timeout time.Duration) *upstream.Proxy {
	p := upstream.New(upstream.Config{Allow: allow, Timeout: timeout, TokenHeaders: []string{"serviceauthtoken", "decoyauthtoken", "X-Brand-Token"},
		TokenPrefix: "dcy_", SessionCookie: "decoy_session"})
	return p
}

// forward runs Forward for a request to the project's path, as the server
// does, and returns the recorder and Forward's error.
func forward(t *testing.T, p *upstream.Proxy, base, path string, req *http.Request, c *upstream.Capture) (*httptest.ResponseRecorder, error) {
	t.Helper()
	u, err := upstream.ParseBase(base)
	if err != nil {
		t.Fatal(err)
	}
	w := httptest.NewRecorder()
	err = p.Forward(w, req, upstream.Target{Base: u, Path: path}, c)
	return w, err
}

// TestForwardBothWays: the method, the path under the upstream's base, the
// query, the body and the headers reach the upstream; Decoy's secrets and
// hop-by-hop headers do not, either way; the answer's status, headers and
// body come back.
func TestForwardBothWays(t *testing.T) {
	var got *http.Request
	var gotBody string
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r
		b, _ := io.ReadAll(r.Body)
		gotBody = string(b)
		w.Header().Set("X-Upstream", "yes")
		w.Header().Set("Decoyauthtoken", "leak")
		w.Header().Set("Access-Control-Allow-Origin", "https://evil.example")
		w.Header().Set("Connection", "X-Hop")
		w.Header().Set("X-Hop", "hop")
		w.WriteHeader(http.StatusTeapot)
		io.WriteString(w, "brewed")
	}))
	defer up.Close()
	p := newProxy(loopback, 0)
	// withSecrets is a PATCH with query q, an app's header and Decoy's
	// secrets in every place they travel, and hop-by-hop headers.
	withSecrets := func(q string) *http.Request {
		req := httptest.NewRequest("PATCH", "http://decoy.test/p/shop/users/a%2Fb?"+q, strings.NewReader(`{"a":1}`))
		req.Header.Set("X-App", "app")
		req.Header.Set("Authorization", "Bearer dcy_abc")
		req.Header.Set("Serviceauthtoken", "dcy_x")
		req.Header.Set("X-Brand-Token", "dcy_y")
		req.Header.Set("Cookie", "a=1; decoy_session=s3cret; b=2")
		req.Header.Set("Connection", "X-Drop")
		req.Header.Set("X-Drop", "drop")
		return req
	}
	req := withSecrets("x=1&auth_token=dcy_secret&y=%20&auth_token=own")
	if _, err := forward(t, p, up.URL+"/base/", "/users/a%2Fb", req, nil); err != nil {
		t.Fatal(err)
	}
	if got.URL.RawQuery != "x=1&y=%20&auth_token=own" {
		t.Errorf("upstream saw the query %s", got.URL.RawQuery)
	}
	// A token with an invalid escape, which Decoy reads as written, is
	// removed too.
	req = withSecrets("auth_token=dcy_s3%zz&z=1")
	if _, err := forward(t, p, up.URL+"/base/", "/users/a%2Fb", req, nil); err != nil {
		t.Fatal(err)
	}
	if got.URL.RawQuery != "z=1" {
		t.Errorf("upstream saw the query %s", got.URL.RawQuery)
	}
	// The token's key escaped, as Decoy reads it too, is removed all the same.
	req = withSecrets("x=1&auth%5Ftoken=dcy_secret&%61uth_token=dcy_s2&y=%20")
	w, err := forward(t, p, up.URL+"/base/", "/users/a%2Fb", req, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got.Method != "PATCH" || got.URL.EscapedPath() != "/base/users/a%2Fb" || got.URL.RawQuery != "x=1&y=%20" {
		t.Errorf("upstream saw %s %s ? %s", got.Method, got.URL.EscapedPath(), got.URL.RawQuery)
	}
	if gotBody != `{"a":1}` || got.Header.Get("X-App") != "app" {
		t.Errorf("upstream saw body %q, X-App %q", gotBody, got.Header.Get("X-App"))
	}
	for _, h := range []string{"Authorization", "Serviceauthtoken", "X-Brand-Token", "X-Drop"} {
		if v := got.Header.Get(h); v != "" {
			t.Errorf("upstream saw %s: %q", h, v)
		}
	}
	if c := got.Header.Get("Cookie"); c != "a=1; b=2" {
		t.Errorf("upstream saw Cookie %q", c)
	}
	if got.Host != strings.TrimPrefix(up.URL, "http://") {
		t.Errorf("upstream saw Host %q", got.Host)
	}
	if w.Code != http.StatusTeapot || w.Body.String() != "brewed" || w.Header().Get("X-Upstream") != "yes" {
		t.Errorf("answer %d %q %v", w.Code, w.Body, w.Header())
	}
	for _, h := range []string{"Decoyauthtoken", "Access-Control-Allow-Origin", "X-Hop"} {
		if v := w.Header().Get(h); v != "" {
			t.Errorf("client saw %s: %q", h, v)
		}
	}

	// An app's own credentials are its, and pass.
	req = httptest.NewRequest("GET", "http://decoy.test/p/shop/", nil)
	req.Header.Set("Authorization", "Bearer eyJhbGciOi.app")
	if _, err := forward(t, p, up.URL+"/base", "/", req, nil); err != nil {
		t.Fatal(err)
	}
	if got.Header.Get("Authorization") != "Bearer eyJhbGciOi.app" || got.URL.Path != "/base" {
		t.Errorf("upstream saw Authorization %q at %s", got.Header.Get("Authorization"), got.URL.Path)
	}
}

// TestForwardDotSegments: a path with a "." or ".." segment, escaped or
// not, is refused before the upstream sees it: one that unescapes and
// cleans paths would serve what lies outside its base. Dots that are not
// a whole segment pass.
func TestForwardDotSegments(t *testing.T) {
	var seen []string
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { seen = append(seen, r.URL.EscapedPath()) }))
	defer up.Close()
	p := newProxy(loopback, 0)
	for _, tt := range []struct {
		path    string
		refused bool
	}{
		{"/%2e%2e/%2e%2e/secret", true},
		{"/..%2f..%2fsecret", true},
		{"/a/%2E%2e/b", true},
		{"/a/..", true},
		{"/a/./b", true},
		{"/a/%2e", true},
		{"/a/..%5c..%5csecret", true},
		{"/a/%2e%2e%5Csecret", true},
		{"/a/..;/secret", true},
		{"/a/%2e%2e%3bx/secret", true},
		{"/a/;b/c", false},
		{"/v1.2/file.json", false},
		{"/a/...", false},
		{"/a/..b/.c", false},
		{"/a%2e%2eb", false},
		{"/", false},
	} {
		_, err := forward(t, p, up.URL+"/api", tt.path, httptest.NewRequest("GET", "/p/s"+tt.path, nil), nil)
		if refused := err == upstream.ErrDotSegment; refused != tt.refused || !refused && err != nil {
			t.Errorf("%s: %v; refused %v, want %v", tt.path, err, refused, tt.refused)
		}
	}
	for _, path := range seen {
		if !strings.HasPrefix(path, "/api") || upstream.DotSegments(path) {
			t.Errorf("the upstream saw %s", path)
		}
	}
	if len(seen) != 6 {
		t.Errorf("the upstream saw %d requests, want the 6 without a dot segment: %v", len(seen), seen)
	}
}

// TestForwardRefused: an upstream that is not public is refused before
// any connection, under every name and form, unless allowed; the
// upstream sees no request.
func TestForwardRefused(t *testing.T) {
	var seen atomic.Int64
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { seen.Add(1) }))
	defer up.Close()
	_, port, _ := net.SplitHostPort(up.Listener.Addr().String())
	p := newProxy(nil, 0)
	for _, host := range []string{"127.0.0.1", "127.1.2.3", "localhost", "0.0.0.0", "[::ffff:127.0.0.1]", "[::1]", "[::]"} {
		_, err := forward(t, p, "http://"+host+":"+port, "/x", httptest.NewRequest("GET", "/p/s/x", nil), nil)
		if !errors.Is(err, upstream.ErrNotAllowed) {
			t.Errorf("%s: %v; want ErrNotAllowed", host, err)
		}
		// The server's log names the address refused.
		if addr, ok := upstream.RefusedAddress(err); !ok || !strings.HasSuffix(addr, ":"+port) {
			t.Errorf("%s: refused address %q, %v", host, addr, ok)
		}
	}
	if n := seen.Load(); n != 0 {
		t.Errorf("the upstream saw %d requests", n)
	}
}

// TestForwardUnreachable: a dead or slow upstream is a 502 saying why.
func TestForwardUnreachable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + ln.Addr().String()
	ln.Close()
	p := newProxy(loopback, 200*time.Millisecond)
	_, err = forward(t, p, dead, "/", httptest.NewRequest("GET", "/p/s/", nil), nil)
	if st, msg, _ := answer.Of(err); st != http.StatusBadGateway || msg != "Upstream unreachable: connection refused" {
		t.Errorf("dead: %d %q", st, msg)
	}
	release := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-release }))
	defer slow.Close()
	defer close(release)
	_, err = forward(t, p, slow.URL, "/", httptest.NewRequest("GET", "/p/s/", nil), nil)
	if st, msg, _ := answer.Of(err); st != http.StatusBadGateway || msg != "Upstream unreachable: no answer within 200ms" {
		t.Errorf("slow: %d %q", st, msg)
	}
}

// TestForwardRedirectNotFollowed: a redirect comes back to the client as
// it is; its target sees nothing.
func TestForwardRedirectNotFollowed(t *testing.T) {
	var seen atomic.Int64
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { seen.Add(1) }))
	defer target.Close()
	redirect := httptest.NewServer(http.RedirectHandler(target.URL+"/secret", http.StatusFound))
	defer redirect.Close()
	p := newProxy(loopback, 0)
	c := &upstream.Capture{Limit: 1 << 20}
	w, err := forward(t, p, redirect.URL, "/x", httptest.NewRequest("GET", "/p/s/x", nil), c)
	if err != nil || w.Code != http.StatusFound || w.Header().Get("Location") != target.URL+"/secret" {
		t.Fatalf("%v %d %v", err, w.Code, w.Header())
	}
	if seen.Load() != 0 || c.Body != nil {
		t.Errorf("target saw %d requests; captured %q", seen.Load(), c.Body)
	}
}

// TestCapture: a GET's 2xx JSON answer is captured whole, up to the
// limit, even when the upstream gzips it; other answers are not.
func TestCapture(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/json":
			w.Header().Set("Content-Type", "application/json; charset=utf-8")
			io.WriteString(w, `[{"id":1}]`)
		case "/problem":
			w.Header().Set("Content-Type", "application/problem+json")
			w.WriteHeader(404)
			io.WriteString(w, `{"title":"no"}`)
		case "/text":
			io.WriteString(w, "plain")
		case "/big":
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `"`+strings.Repeat("x", 100)+`"`)
		case "/chunked":
			// No Content-Length: known too long only once read.
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `"`+strings.Repeat("y", 40))
			w.(http.Flusher).Flush()
			io.WriteString(w, strings.Repeat("y", 60)+`"`)
		}
	}))
	defer up.Close()
	p := newProxy(loopback, 0)
	for _, c := range []struct {
		method, path string
		want         string
	}{
		{"GET", "/json", `[{"id":1}]`},
		{"POST", "/json", ""},
		{"HEAD", "/json", ""},
		{"GET", "/problem", ""},
		{"GET", "/text", ""},
		{"GET", "/big", ""},
		{"GET", "/chunked", ""},
	} {
		capt := &upstream.Capture{Limit: 50}
		req := httptest.NewRequest(c.method, "/p/s"+c.path, nil)
		req.Header.Set("Accept-Encoding", "gzip")
		w, err := forward(t, p, up.URL, c.path, req, capt)
		if err != nil {
			t.Fatal(err)
		}
		if string(capt.Body) != c.want || c.want != "" && (capt.Status != 200 || !upstream.IsJSON(capt.ContentType)) {
			t.Errorf("%s %s: captured %d %q %q; want %q", c.method, c.path, capt.Status, capt.ContentType, capt.Body, c.want)
		}
		if (c.path == "/big" || c.path == "/chunked") && w.Body.Len() != 102 {
			t.Errorf("%s: answer cut: %d bytes", c.path, w.Body.Len())
		}
	}
}

// TestForwardLoop: an upstream that leads back to the same proxy gets the
// request once, and then a 508, rather than forwarding without end.
func TestForwardLoop(t *testing.T) {
	p := newProxy(loopback, 0)
	var hops atomic.Int64
	var self *httptest.Server
	self = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hops.Add(1)
		u, _ := upstream.ParseBase(self.URL)
		if err := p.Forward(w, r, upstream.Target{Base: u, Path: r.URL.Path}, nil); err != nil {
			st, msg, _ := answer.Of(err)
			w.WriteHeader(st)
			io.WriteString(w, msg)
		}
	}))
	defer self.Close()
	res, err := http.Get(self.URL + "/x")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusLoopDetected || !strings.HasPrefix(string(b), "Upstream loop") || hops.Load() != 2 {
		t.Errorf("%d %s after %d hops", res.StatusCode, b, hops.Load())
	}
	// Another proxy's mark is not a loop.
	other := newProxy(loopback, 0)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, strings.Join(r.Header.Values("Via"), ", "))
	}))
	defer up.Close()
	req := httptest.NewRequest("GET", "/p/s/x", nil)
	req.Header.Set("Via", "1.1 decoy-0000000000000000")
	w, err := forward(t, other, up.URL, "/x", req, nil)
	if err != nil || !strings.HasPrefix(w.Body.String(), "1.1 decoy-0000000000000000, 1.1 decoy-") {
		t.Errorf("%v %q", err, w.Body)
	}
}
