package main_test

// Pass-through and recording (§14) on the real binary, against upstreams
// the tests start on loopback: with --upstream-allow 127.0.0.0/8, requests
// go through both ways, a route wins over pass-through, a dead or slow
// upstream is a 502, and answers recorded are replayed once the upstream
// is gone, with no secret kept anywhere. Without it, every loopback form
// of an upstream is refused and the upstream sees no request.

import (
	"encoding/json"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/decoy-mock/decoy"
	"github.com/decoy-mock/decoy/client"
)

// seenRequest is what an upstream saw of a request.
type seenRequest struct {
	Method, Path, Query, Body string
	Header                    http.Header
}

// upstreamLog keeps what an upstream saw.
type upstreamLog struct {
	mu   sync.Mutex
	seen []seenRequest
}

func (l *upstreamLog) add(r *http.Request) seenRequest {
	b, _ := io.ReadAll(r.Body)
	s := seenRequest{Method: r.Method, Path: r.URL.EscapedPath(), Query: r.URL.RawQuery, Body: string(b), Header: r.Header.Clone()}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seen = append(l.seen, s)
	return s
}

func (l *upstreamLog) all() []seenRequest {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]seenRequest(nil), l.seen...)
}

func (l *upstreamLog) last(t *testing.T) seenRequest {
	t.Helper()
	all := l.all()
	if len(all) == 0 {
		t.Fatal("the upstream saw no request")
	}
	return all[len(all)-1]
}

// setUpstream sets the default project's upstream and mode with decoy
// project update, and returns the project as printed.
func setUpstream(t *testing.T, p *proc, upstream, mode string) map[string]any {
	t.Helper()
	out, errOut, code := decoyCLI(t, p, "", "project", "update", "default", "--upstream", upstream, "--mode", mode, "-o", "json")
	if code != 0 {
		t.Fatalf("decoy project update --upstream %s --mode %s: exit %d: %s", upstream, mode, code, errOut)
	}
	var v map[string]any
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("%s: %v", out, err)
	}
	return v
}

// patchProject sends PATCH /admin/v1/projects/default.
func patchProject(t *testing.T, p *proc, body string) answer {
	t.Helper()
	return api(t, p, "PATCH", "projects/"+decoy.DefaultProjectID, adminToken, body)
}

// TestPassthroughEndToEnd: in mode passthrough, a request that matches no
// route reaches the upstream with its method, path under the upstream's
// base, query, body and headers, less Decoy's secrets; the upstream's
// status, headers and body come back; a route wins; the journal marks the
// request forwarded.
func TestPassthroughEndToEnd(t *testing.T) {
	var log upstreamLog
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s := log.add(r)
		w.Header().Set("X-Upstream", "real")
		w.Header().Set("Set-Cookie", "backend=1; Path=/")
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		json.NewEncoder(w).Encode(map[string]string{"echo": s.Method + " " + s.Path})
	}))
	defer up.Close()
	p := start(t, t.TempDir(), "--admin-token", adminToken, "--upstream-allow", "127.0.0.0/8", "--upstream-allow", "::1/128")

	v := setUpstream(t, p, up.URL+"/base/", "passthrough")
	if v["upstream"] != up.URL+"/base" || v["mode"] != "passthrough" {
		t.Fatalf("project: %v", v)
	}
	users := createMock(t, p, `[{"id":1}]`, client.CreateOptions{Name: "users"})
	routeCLI(t, p, "--method", "GET", "--path", "/users", "--mock", users.ID)

	// A route wins.
	if a := get(t, p.url+"/p/default/users"); a.status != 200 || a.body != `[{"id":1}]` {
		t.Fatalf("routed GET: %d %s", a.status, a.body)
	}
	if n := len(log.all()); n != 0 {
		t.Fatalf("the upstream saw %d requests for a routed path", n)
	}

	// Everything else goes through, both ways.
	a := send(t, "POST", p.url+"/p/default/orders/a%20b?x=1&y=%2F&auth_token=dcy_notpassed", `{"sku":"k1"}`,
		"Content-Type", "application/json", "X-Custom", "kept", "Authorization", "Bearer app-own-jwt",
		"Decoyauthtoken", "dcy_tokennotpassed", "Serviceauthtoken", "dcy_other", "Connection", "X-Hop", "X-Hop", "hop")
	if a.status != http.StatusCreated || a.header.Get("X-Upstream") != "real" || a.header.Get("Set-Cookie") != "backend=1; Path=/" ||
		!strings.Contains(a.body, `"echo":"POST /base/orders/a%20b"`) {
		t.Fatalf("forwarded POST: %d %v %s", a.status, a.header, a.body)
	}
	if a.header.Get("Access-Control-Allow-Origin") != "*" {
		t.Errorf("the answer lost Decoy's CORS: %v", a.header)
	}
	s := log.last(t)
	if s.Method != "POST" || s.Path != "/base/orders/a%20b" || s.Query != "x=1&y=%2F" || s.Body != `{"sku":"k1"}` {
		t.Errorf("the upstream saw %s %s ? %s body %q", s.Method, s.Path, s.Query, s.Body)
	}
	if s.Header.Get("X-Custom") != "kept" || s.Header.Get("Authorization") != "Bearer app-own-jwt" || s.Header.Get("Content-Type") != "application/json" {
		t.Errorf("the upstream saw headers %v", s.Header)
	}
	for _, h := range []string{"Decoyauthtoken", "Serviceauthtoken", "X-Hop"} {
		if v := s.Header.Get(h); v != "" {
			t.Errorf("the upstream saw %s: %q", h, v)
		}
	}
	// A Decoy secret as Authorization is not passed on.
	send(t, "GET", p.url+"/p/default/me", "", "Authorization", "Bearer dcy_notpassedeither")
	if s := log.last(t); s.Path != "/base/me" || s.Header.Get("Authorization") != "" {
		t.Errorf("the upstream saw %s with Authorization %q", s.Path, s.Header.Get("Authorization"))
	}
	// A method no route of the path has goes through too; so does the root.
	if a := send(t, "DELETE", p.url+"/p/default/users", ""); a.status != 201 || log.last(t).Method != "DELETE" || log.last(t).Path != "/base/users" {
		t.Errorf("DELETE of a GET route's path: %d, upstream saw %+v", a.status, log.last(t))
	}
	if a := getHost(t, p.url+"/", "default.localhost"); a.status != 201 || log.last(t).Path != "/base" {
		t.Errorf("the root on the project's host: %d, upstream saw %s", a.status, log.last(t).Path)
	}

	// The journal marks what was forwarded, with its secrets redacted.
	var forwarded *decoy.JournalEntry
	deadline := time.Now().Add(5 * time.Second)
	for forwarded == nil && time.Now().Before(deadline) {
		for _, e := range journal(t, p, "") {
			if e.Method == "POST" && e.Path == "/p/default/orders/a%20b" {
				forwarded = &e
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	if forwarded == nil || !forwarded.Forwarded || forwarded.Status != 201 || forwarded.Body != `{"sku":"k1"}` ||
		forwarded.Headers["Decoyauthtoken"] != "REDACTED" || forwarded.Headers["Authorization"] != "REDACTED" {
		t.Errorf("journal entry %+v", forwarded)
	}
	for _, e := range journal(t, p, "") {
		if e.Method == "GET" && e.Path == "/p/default/users" && e.Forwarded {
			t.Errorf("a routed request journaled as forwarded: %+v", e)
		}
	}

	// Back to mock: unmatched requests get the 404 of §11.3 again.
	setUpstream(t, p, up.URL, "mock")
	before := len(log.all())
	if a := get(t, p.url+"/p/default/orders"); a.status != 404 || a.body != `{"error":"No route for GET /orders"}`+"\n" && a.body != `{"error":"No route for GET /orders"}` {
		t.Errorf("mode mock: %d %s", a.status, a.body)
	}
	if len(log.all()) != before {
		t.Error("mode mock forwarded a request")
	}
}

// TestUpstreamSettings: the admin API refuses an upstream or a mode that
// is not one, with a clear 400, and keeps the project as it was.
func TestUpstreamSettings(t *testing.T) {
	p := start(t, t.TempDir(), "--admin-token", adminToken)
	for _, c := range []struct{ body, want string }{
		{`{"mode":"proxy"}`, "mode must be mock, passthrough or record"},
		{`{"mode":"passthrough"}`, "mode passthrough needs an upstream"},
		{`{"upstream":"ftp://example.com"}`, "Invalid upstream: the scheme must be http or https"},
		{`{"upstream":"example.com"}`, "Invalid upstream: the scheme must be http or https"},
		{`{"upstream":"https://user:pw@example.com"}`, "Invalid upstream: credentials are not allowed in the URL"},
		{`{"upstream":"https://example.com/?q=1"}`, "Invalid upstream: a query is not allowed"},
		{`{"upstream":"https://example.com","mode":"recording"}`, "mode must be mock, passthrough or record"},
		{`{"upstream":42}`, "upstream must be a string; the body must be a JSON object with any of name, slug, upstream and mode"},
	} {
		a := patchProject(t, p, c.body)
		if a.status != 400 || strings.TrimSpace(a.body) != `{"error":"`+c.want+`"}` {
			t.Errorf("PATCH %s: %d %s, want 400 %s", c.body, a.status, a.body, c.want)
		}
	}
	if a := patchProject(t, p, `{"upstream":"https://api.example.com/v2","mode":"record"}`); a.status != 200 ||
		!strings.Contains(a.body, `"upstream":"https://api.example.com/v2"`) || !strings.Contains(a.body, `"mode":"record"`) {
		t.Fatalf("PATCH: %d %s", a.status, a.body)
	}
	// The upstream cannot go while a mode needs it.
	if a := patchProject(t, p, `{"upstream":""}`); a.status != 400 || !strings.Contains(a.body, "mode record needs an upstream") {
		t.Errorf("PATCH upstream '': %d %s", a.status, a.body)
	}
	if a := patchProject(t, p, `{"upstream":"","mode":"mock"}`); a.status != 200 || !strings.Contains(a.body, `"upstream":"","mode":"mock"`) {
		t.Errorf("PATCH back to mock: %d %s", a.status, a.body)
	}
	// A project created with its upstream; the audit log names the change.
	a := api(t, p, "POST", "workspaces/"+decoy.DefaultWorkspaceID+"/projects", adminToken, `{"name":"shop","upstream":"http://shop.example","mode":"passthrough"}`)
	if a.status != 201 || !strings.Contains(a.body, `"upstream":"http://shop.example","mode":"passthrough"`) {
		t.Errorf("POST project: %d %s", a.status, a.body)
	}
	if a := api(t, p, "POST", "workspaces/"+decoy.DefaultWorkspaceID+"/projects", adminToken, `{"name":"bad","mode":"record"}`); a.status != 400 {
		t.Errorf("POST project in mode record with no upstream: %d %s", a.status, a.body)
	}
	audit := api(t, p, "GET", "workspaces/"+decoy.DefaultWorkspaceID+"/audit", adminToken, "")
	if !strings.Contains(audit.body, `"action":"project.upstream"`) {
		t.Errorf("audit: %s", audit.body)
	}
}

// TestUpstreamUnreachable: a dead upstream and one slower than
// --upstream-timeout are 502s saying why.
func TestUpstreamUnreachable(t *testing.T) {
	p := start(t, t.TempDir(), "--admin-token", adminToken, "--upstream-allow", "127.0.0.0/8", "--upstream-timeout", "300ms")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + ln.Addr().String()
	ln.Close()
	setUpstream(t, p, dead, "passthrough")
	if a := get(t, p.url+"/p/default/x"); a.status != 502 || strings.TrimSpace(a.body) != `{"error":"Upstream unreachable: connection refused"}` {
		t.Errorf("dead upstream: %d %s", a.status, a.body)
	}
	release := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer slow.Close()
	defer close(release)
	setUpstream(t, p, slow.URL, "record")
	if a := get(t, p.url+"/p/default/x"); a.status != 502 || strings.TrimSpace(a.body) != `{"error":"Upstream unreachable: no answer within 300ms"}` {
		t.Errorf("slow upstream: %d %s", a.status, a.body)
	}
}

// Secrets a client sends in record mode, none of which may be kept.
const (
	secretBearer = "Bearer app-secret-bearer-5f1c"
	secretCookie = "sid=cookie-secret-77aa"
	secretToken  = "dcy_recordtokensecret9911"
)

// TestRecordReplay: in mode record every request goes to the upstream, and
// each GET answer with a JSON body becomes a mock with a route at its
// path (the latest answer winning, a query making no new route; a
// collection and its items bound together); once the upstream is gone,
// mode mock answers them all. No secret is kept: not in the data, the
// routes, an export or the logs.
func TestRecordReplay(t *testing.T) {
	var log upstreamLog
	var configReads atomic.Int64
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		log.add(r)
		json := func(body string) {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Set-Cookie", "upstream-session=cookie-from-upstream")
			io.WriteString(w, body)
		}
		switch r.URL.Path {
		case "/v1/users":
			json(`[{"id":1,"name":"Ada"},{"id":2,"name":"Linus"}]`)
		case "/v1/users/1":
			json(`{"id":1,"name":"Ada Lovelace"}`)
		case "/v1/users/3":
			json(`{"id":3,"name":"Grace"}`)
		case "/v1/config":
			json(`{"version":` + string(rune('0'+configReads.Add(1))) + `}`)
		case "/v1/page":
			w.Header().Set("Content-Type", "text/html")
			io.WriteString(w, "<p>not JSON</p>")
		case "/v1/big":
			json(`"` + strings.Repeat("x", 70<<10) + `"`)
		default:
			w.WriteHeader(404)
		}
	}))
	dir := t.TempDir()
	p := start(t, dir, "--admin-token", adminToken, "--upstream-allow", "127.0.0.0/8", "--max-data-bytes", "64KiB")
	setUpstream(t, p, up.URL+"/v1", "record")

	secrets := []string{"Authorization", secretBearer, "Cookie", secretCookie, "Decoyauthtoken", secretToken}
	for _, path := range []string{"/users", "/users/1", "/users/3", "/config?v=1", "/config?v=2", "/page", "/big", "/missing"} {
		a := get(t, p.url+"/p/default"+path, secrets...)
		if path == "/big" && len(a.body) != 70<<10+2 {
			t.Errorf("GET /big: %d bytes, want the whole answer", len(a.body))
		}
		if path == "/missing" && a.status != 404 || path != "/missing" && a.status != 200 {
			t.Errorf("GET %s: %d %s", path, a.status, a.body)
		}
	}
	if a := send(t, "POST", p.url+"/p/default/users", `{"name":"Posted"}`, secrets...); a.status != 200 {
		t.Errorf("a POST in mode record: %d", a.status)
	}
	if s := log.last(t); s.Method != "POST" || s.Path != "/v1/users" || s.Header.Get("Authorization") != secretBearer {
		t.Errorf("the upstream saw %+v", s)
	}
	for _, s := range log.all() {
		if s.Header.Get("Decoyauthtoken") != "" {
			t.Errorf("the upstream saw the Decoy token at %s", s.Path)
		}
	}

	// The routes recorded: the collection with its item route, the
	// config once whatever its query; nothing for HTML, a too large
	// answer, a 404 or a POST.
	var listed struct{ Routes []decoy.Route }
	a := api(t, p, "GET", "projects/"+decoy.DefaultProjectID+"/routes", adminToken, "")
	json.Unmarshal([]byte(a.body), &listed)
	got := map[string]decoy.Route{}
	for _, rt := range listed.Routes {
		got[rt.Method+" "+rt.Path] = rt
	}
	if len(got) != 3 || got["GET /users"].MockID == "" || got["GET /users/{id}"].MockID != got["GET /users"].MockID || got["GET /config"].MockID == "" {
		t.Fatalf("routes recorded: %s", a.body)
	}

	// The journal marks the recorded requests forwarded, with the mock
	// each made.
	deadline := time.Now().Add(5 * time.Second)
	var entry decoy.JournalEntry
	for entry.MockID == "" && time.Now().Before(deadline) {
		for _, e := range journal(t, p, "") {
			if e.Path == "/p/default/users/3" {
				entry = e
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !entry.Forwarded || entry.MockID != got["GET /users"].MockID || entry.RouteID != got["GET /users/{id}"].ID {
		t.Errorf("journal entry of GET /users/3: %+v", entry)
	}

	// Replay, with the upstream gone.
	up.Close()
	setUpstream(t, p, up.URL+"/v1", "mock")
	for _, c := range []struct{ path, want string }{
		{"/users", `[{"id":1,"name":"Ada Lovelace"},{"id":2,"name":"Linus"},{"id":3,"name":"Grace"}]`},
		{"/users/1", `{"id":1,"name":"Ada Lovelace"}`},
		{"/users/2", `{"id":2,"name":"Linus"}`},
		{"/users/3", `{"id":3,"name":"Grace"}`},
		{"/users?filters=name%3DGrace", `[{"id":3,"name":"Grace"}]`},
		{"/config", `{"version":2}`},
		{"/config?v=1", `{"version":2}`},
	} {
		if a := get(t, p.url+"/p/default"+c.path); a.status != 200 || a.body != c.want {
			t.Errorf("replay GET %s: %d %s, want %s", c.path, a.status, a.body, c.want)
		}
	}
	for _, path := range []string{"/page", "/big", "/missing"} {
		if a := get(t, p.url+"/p/default"+path); a.status != 404 {
			t.Errorf("replay GET %s: %d %s, want 404 (not recorded)", path, a.status, a.body)
		}
	}

	// No secret kept: not in the routes, the mocks or an export, not in
	// the data directory's files, not in the logs.
	exported := t.TempDir()
	if _, errOut, code := decoyCLI(t, p, "", "export", "--project", "default", "--out", exported); code != 0 {
		t.Fatalf("export: %s", errOut)
	}
	p.stop()
	words := []string{"app-secret-bearer-5f1c", "cookie-secret-77aa", secretToken, "cookie-from-upstream"}
	for _, where := range []string{dir, exported} {
		filepath.WalkDir(where, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return nil
			}
			b, _ := os.ReadFile(path)
			for _, w := range words {
				if strings.Contains(string(b), w) {
					t.Errorf("%s holds the secret %q", path, w)
				}
			}
			return nil
		})
	}
	for _, w := range words {
		if strings.Contains(p.stderr.String(), w) || strings.Contains(p.stdout.String(), w) || strings.Contains(a.body, w) {
			t.Errorf("the logs or routes hold the secret %q", w)
		}
	}
	manifest, err := os.ReadFile(filepath.Join(exported, "decoy.json"))
	if err != nil || !strings.Contains(string(manifest), `"mode": "mock"`) || !strings.Contains(string(manifest), `"upstream": "`+up.URL+`/v1"`) {
		t.Errorf("the export's manifest does not carry the upstream: %s %v", manifest, err)
	}
}

// TestRecordLimits: recording respects the workspace's max_mocks; the
// client gets the upstream's answer all the same.
func TestRecordLimits(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"at":"`+r.URL.Path+`"}`)
	}))
	defer up.Close()
	p := start(t, t.TempDir(), "--admin-token", adminToken, "--upstream-allow", "127.0.0.0/8")
	if a := api(t, p, "PATCH", "workspaces/"+decoy.DefaultWorkspaceID, adminToken, `{"limits":{"max_mocks":2}}`); a.status != 200 {
		t.Fatalf("limits: %d %s", a.status, a.body)
	}
	setUpstream(t, p, up.URL, "record")
	for _, path := range []string{"/a", "/b", "/c", "/a"} {
		if a := get(t, p.url+"/p/default"+path); a.status != 200 || a.body != `{"at":"`+path+`"}` {
			t.Errorf("GET %s: %d %s", path, a.status, a.body)
		}
	}
	var listed struct{ Routes []decoy.Route }
	json.Unmarshal([]byte(api(t, p, "GET", "projects/"+decoy.DefaultProjectID+"/routes", adminToken, "").body), &listed)
	if len(listed.Routes) != 2 {
		t.Errorf("%d routes recorded under max_mocks 2: %+v", len(listed.Routes), listed.Routes)
	}
	if !p.waitLog("Workspace limit reached: max_mocks") {
		t.Errorf("the refused recording is not logged: %s", p.stderr)
	}
}

// TestUpstreamSSRF: without --upstream-allow, an upstream at a loopback
// address, in any form or under a name, is refused with 400 before any
// connection, in both modes that forward; so is one that would redirect
// to loopback. The upstream sees no request. (Addresses that are not
// loopback are checked by package upstream's unit tests: a test here
// must not send packets off the machine.)
func TestUpstreamSSRF(t *testing.T) {
	var seen atomic.Int64
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { seen.Add(1) }))
	defer up.Close()
	redirect := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen.Add(1)
		http.Redirect(w, r, up.URL+"/admin", http.StatusFound)
	}))
	defer redirect.Close()
	_, port, _ := net.SplitHostPort(up.Listener.Addr().String())
	_, redirectPort, _ := net.SplitHostPort(redirect.Listener.Addr().String())
	p := start(t, t.TempDir(), "--admin-token", adminToken)
	for _, upstream := range []string{
		"http://127.0.0.1:" + port,
		"http://127.0.0.2:" + port,
		"http://localhost:" + port,
		"http://0.0.0.0:" + port,
		"http://[::1]:" + port,
		"http://[::ffff:127.0.0.1]:" + port,
		"http://[::ffff:7f00:1]:" + port,
		"http://[::]:" + port,
		"https://127.0.0.1:" + port,
		"http://127.0.0.1:" + redirectPort, // would redirect to loopback
	} {
		for _, mode := range []string{"passthrough", "record"} {
			setUpstream(t, p, upstream, mode)
			a := get(t, p.url+"/p/default/latest/meta-data")
			if a.status != 400 || strings.TrimSpace(a.body) != `{"error":"Upstream address not allowed"}` {
				t.Errorf("%s (%s): %d %s", upstream, mode, a.status, a.body)
			}
		}
	}
	if n := seen.Load(); n != 0 {
		t.Errorf("the upstreams saw %d requests", n)
	}
}

// TestUpstreamRedirectNotFollowed: with loopback allowed, an upstream's
// redirect comes back to the client as it is, in mode record too; its
// target sees nothing and nothing is recorded.
func TestUpstreamRedirectNotFollowed(t *testing.T) {
	var seen atomic.Int64
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen.Add(1)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"secret":"internal"}`)
	}))
	defer target.Close()
	redirect := httptest.NewServer(http.RedirectHandler(target.URL+"/internal", http.StatusFound))
	defer redirect.Close()
	p := start(t, t.TempDir(), "--admin-token", adminToken, "--upstream-allow", "127.0.0.0/8")
	setUpstream(t, p, redirect.URL, "record")
	req, _ := http.NewRequest("GET", p.url+"/p/default/go", nil)
	resp, err := http.DefaultTransport.RoundTrip(req) // a client that does not follow
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound || resp.Header.Get("Location") != target.URL+"/internal" {
		t.Errorf("redirect: %d %v", resp.StatusCode, resp.Header)
	}
	if seen.Load() != 0 {
		t.Errorf("the redirect's target saw %d requests", seen.Load())
	}
	if a := api(t, p, "GET", "projects/"+decoy.DefaultProjectID+"/routes", adminToken, ""); !strings.Contains(a.body, `"routes":[]`) {
		t.Errorf("a redirect recorded: %s", a.body)
	}
}
