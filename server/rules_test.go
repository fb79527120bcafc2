package server_test

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/decoy-mock/decoy"
	"github.com/decoy-mock/decoy/client"
	"github.com/decoy-mock/decoy/inmem"
	"github.com/decoy-mock/decoy/internal/servertest"
	"github.com/decoy-mock/decoy/internal/testcert"
	"github.com/decoy-mock/decoy/server"
)

// withRules adds a route to the default project whose rules are rules
// (JSON, sent as it is).
func withRules(t *testing.T, h *servertest.Harness, method, path, mockID, rules string) decoy.Route {
	t.Helper()
	body := `{"method":"` + method + `","path":"` + path + `","mock_id":"` + mockID + `","rules":` + rules + `}`
	r := h.Send("POST", "/admin/v1/projects/"+decoy.DefaultProjectID+"/routes", "application/json", body)
	if r.Status != http.StatusCreated {
		t.Fatalf("create route %s %s: %d %s", method, path, r.Status, r.Body)
	}
	var rt decoy.Route
	if err := json.Unmarshal([]byte(r.Body), &rt); err != nil {
		t.Fatal(err)
	}
	return rt
}

// send sends a request with a body to the server.
func send(t *testing.T, h *servertest.Harness, method, path, body string, header ...string) servertest.Response {
	t.Helper()
	req, err := http.NewRequest(method, h.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := (&http.Client{Transport: &http.Transport{DisableCompression: true}}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return servertest.Response{Status: resp.StatusCode, Header: resp.Header, Body: string(b)}
}

// CONTRACT §13.1: "[{"times":2,"status":503},{}] fails twice, then answers
// normally"; the reset starts the counts again, as a change of the rules
// does.
func TestRuleTimes(t *testing.T) {
	h := servertest.New(t, withTeams)
	m := h.Create(users, client.CreateOptions{})
	rt := withRules(t, h, "GET", "/users", m.ID, `[{"times":2,"status":503},{}]`)
	var got []int
	for range 4 {
		r := h.Get("/p/default/users")
		got = append(got, r.Status)
		if r.Status == 200 && r.Body != users {
			t.Errorf("the normal answer: %q", r.Body)
		}
		if r.Status == 503 && r.Body != users {
			t.Errorf("a status alone answers the normal body: %q", r.Body)
		}
	}
	if want := []int{503, 503, 200, 200}; !slices.Equal(got, want) {
		t.Fatalf("statuses %v, want %v", got, want)
	}
	r := h.Send("POST", "/admin/v1/routes/"+rt.ID+"/rules/reset", "", "")
	if r.Status != 200 || !strings.Contains(r.Body, `"id":"`+rt.ID+`"`) {
		t.Fatalf("reset: %d %s", r.Status, r.Body)
	}
	if r := h.Get("/p/default/users"); r.Status != 503 {
		t.Errorf("after a reset: %d", r.Status)
	}
	// A change of the rules starts them again.
	if r := h.Send("PATCH", "/admin/v1/routes/"+rt.ID, "application/json", `{"rules":[{"times":1,"status":502},{}]}`); r.Status != 200 {
		t.Fatalf("patch: %d %s", r.Status, r.Body)
	}
	got = got[:0]
	for range 2 {
		got = append(got, h.Get("/p/default/users").Status)
	}
	if want := []int{502, 200}; !slices.Equal(got, want) {
		t.Errorf("after a change: %v, want %v", got, want)
	}
	// Audited.
	audit := h.Send("GET", "/admin/v1/workspaces/"+decoy.DefaultWorkspaceID+"/audit", "", "")
	if !strings.Contains(audit.Body, `"action":"route.rules_reset"`) {
		t.Errorf("audit log: %s", audit.Body)
	}
	servertest.WantError(t, h.Send("POST", "/admin/v1/routes/00000000-0000-4000-8000-000000000000/rules/reset", "", ""), 404, "Route not found")
}

// CONTRACT §13.1: the first rule whose conditions hold answers: a body
// sent as it is, with its status and headers, and the headers of any
// answer of the route (CORS, rate limit and quota).
func TestRuleAnswers(t *testing.T) {
	h := servertest.New(t, withTeams)
	m := h.Create(users, client.CreateOptions{RateLimit: servertest.Ptr(int64(1000))})
	withRules(t, h, "GET", "/users/{id}", m.ID, `[
		{"name":"slow","when":"header.x-mode=slow","status":504,"body":{"error":"upstream <timeout> & more"},"headers":{"Retry-After":"7","X-Rule":"slow"}},
		{"name":"vip","when":"path.id=1&query.as[$eqi]=VIP","body":[1, 2.50 ,"x"]},
		{"name":"post","when":"method=HEAD","status":418},
		{"name":"teapot","when":"query.tea=1","status":418}]`)
	r := h.Get("/p/default/users/2", "X-Mode", "slow", "Origin", "https://app.example")
	if r.Status != 504 || r.Body != `{"error":"upstream <timeout> & more"}` || r.Header.Get("Content-Type") != "application/json" ||
		r.Header.Get("Retry-After") != "7" || r.Header.Get("X-Rule") != "slow" || r.Header.Get("Access-Control-Allow-Origin") != "*" ||
		r.Header.Get("X-RateLimit-Limit") != "1000" || r.Header.Get("X-Quota-Limit") != "50000" || r.Header.Get("Content-Length") != "37" {
		t.Errorf("slow: %d %v %q", r.Status, r.Header, r.Body)
	}
	if r := h.Get("/p/default/users/1?as=vip"); r.Status != 200 || r.Body != `[1,2.50,"x"]` || r.Header.Get("Decoy-Rule") != "" {
		t.Errorf("vip: %d %q %v", r.Status, r.Body, r.Header)
	}
	// Asked, an answer says which rule made it; the normal answer says
	// nothing.
	if r := h.Get("/p/default/users/2", "X-Mode", "slow", "Decoy-Rule", "?"); r.Header.Get("Decoy-Rule") != "slow" {
		t.Errorf("asked which rule: %v", r.Header)
	}
	if r := h.Get("/p/default/users/2", "Decoy-Rule", "?"); r.Status != 200 || r.Header.Get("Decoy-Rule") != "" {
		t.Errorf("asked which rule of a normal answer: %d %v", r.Status, r.Header)
	}
	if r := h.Get("/p/default/users/2?as=vip"); r.Status != 200 || r.Body != `{"id":2,"name":"Linus","team":"b"}` {
		t.Errorf("no rule holds: %d %q", r.Status, r.Body)
	}
	if r := h.Do("HEAD", "/p/default/users/1"); r.Status != 418 || r.Body != "" {
		t.Errorf("HEAD: %d %q", r.Status, r.Body)
	}
	// A status alone: the route's normal answer (here its 404) with it.
	if r := h.Get("/p/default/users/9?tea=1"); r.Status != 418 || r.Body != `{"error":"Not found"}`+"\n" {
		t.Errorf("a status over a normal error: %d %q", r.Status, r.Body)
	}
	// Never a 304: the rule's answer is not the one the tag names.
	first := h.Get("/p/default/users/1")
	if r := h.Get("/p/default/users/1?tea=1", "If-None-Match", first.Header.Get("ETag")); r.Status != 418 || r.Body != `{"id":1,"name":"Ada","team":"a"}` {
		t.Errorf("a status with If-None-Match: %d %q", r.Status, r.Body)
	}
	if r := h.Get("/p/default/users/1", "If-None-Match", first.Header.Get("ETag")); r.Status != 304 {
		t.Errorf("the normal answer's 304: %d", r.Status)
	}
	// Counted as reads: each took a slot of the rate limit.
	if u := h.Get("/p/default/users/1?tea=1"); u.Header.Get("X-RateLimit-Remaining") != "989" {
		t.Errorf("rate limit remaining %s after 11 reads", u.Header.Get("X-RateLimit-Remaining"))
	}
}

// CONTRACT §13.1: a rule's template runs for each request and reads it.
func TestRuleTemplate(t *testing.T) {
	h := servertest.New(t, withTeams)
	m := h.Create(users, client.CreateOptions{})
	withRules(t, h, "POST", "/users/{id}/greet", m.ID,
		`[{"status":201,"template":{"id":"{{ request.path.id }}","user":"{{ request.header.x-user }}","hello":"Hello {{ request.body.name }}!","n":"{{ number 1 9 }}"}}]`)
	r := send(t, h, "POST", "/p/default/users/42/greet", `{"name":"Ann"}`, "X-User", "bob", "Decoy-Seed", "5", "Content-Type", "application/json")
	var got map[string]any
	if r.Status != 201 || json.Unmarshal([]byte(r.Body), &got) != nil || got["id"] != "42" || got["user"] != "bob" || got["hello"] != "Hello Ann!" ||
		r.Header.Get("Decoy-Seed") != "5" {
		t.Fatalf("%d %v %q", r.Status, r.Header, r.Body)
	}
	again := send(t, h, "POST", "/p/default/users/42/greet", `{"name":"Ann"}`, "X-User", "bob", "Decoy-Seed", "5")
	if again.Body != r.Body {
		t.Errorf("the same seed gave %q, then %q", r.Body, again.Body)
	}
}

// CONTRACT §13.1: rules are tried after the token check: a private mock's
// rule is never reached without its token.
func TestRuleAfterToken(t *testing.T) {
	h := servertest.New(t, withTeams)
	m := h.Create(users, client.CreateOptions{Private: true})
	withRules(t, h, "GET", "/users", m.ID, `[{"body":{"secret":true}}]`)
	servertest.WantError(t, h.Get("/p/default/users"), 401, "Auth token not found")
	servertest.WantError(t, h.Get("/p/default/users", "decoyauthtoken", "dcy_wrong"), 401, "Invalid auth token")
	if r := h.Get("/p/default/users", "decoyauthtoken", m.Token); r.Status != 200 || r.Body != `{"secret":true}` || r.Header.Get("Cache-Control") != "private, no-cache" {
		t.Errorf("with the token: %d %q %v", r.Status, r.Body, r.Header)
	}
}

// CONTRACT §13.1: rules are tried after the rate limit and the quota: a
// request refused by either is not a rule's, and a rule's answer counts.
func TestRuleAfterLimits(t *testing.T) {
	h := servertest.New(t, withTeams)
	m := h.Create(users, client.CreateOptions{RateLimit: servertest.Ptr(int64(2)), MonthlyQuota: servertest.Ptr(int64(5))})
	withRules(t, h, "GET", "/users", m.ID, `[{"times":10,"status":503}]`)
	for i := range 2 {
		if r := h.Get("/p/default/users"); r.Status != 503 || r.Header.Get("X-Quota-Remaining") != strconv.Itoa(4-i) {
			t.Fatalf("read %d: %d, quota remaining %s", i+1, r.Status, r.Header.Get("X-Quota-Remaining"))
		}
	}
	r := h.Get("/p/default/users")
	if r.Status != 429 || !strings.Contains(r.Body, "Rate limit exceeded") {
		t.Fatalf("past the rate limit: %d %s", r.Status, r.Body)
	}
	// The refused request took none of the rule's times.
	h.Clock.Add(2 * time.Minute)
	for range 3 {
		if r := h.Get("/p/default/users"); r.Status != 503 {
			t.Fatalf("a rule's answer: %d", r.Status)
		}
		h.Clock.Add(time.Minute)
	}
	servertest.WantError(t, h.Get("/p/default/users"), 429, "Monthly request quota exceeded")
}

// CONTRACT §13.1: a route that writes answers through its rules (its
// answer changes no data); when none holds, it writes (§12).
func TestRuleOnWriteRoute(t *testing.T) {
	h := servertest.New(t, withTeams)
	m := h.Create(users, client.CreateOptions{})
	withRules(t, h, "POST", "/users", m.ID, `[{"when":"body.name=Bad","status":422,"body":{"error":"name"}}]`)
	if r := send(t, h, "POST", "/p/default/users", `{"name":"Bad"}`); r.Status != 422 || r.Body != `{"error":"name"}` {
		t.Errorf("the rule: %d %q", r.Status, r.Body)
	}
	if _, d, err := h.Admin.Data(t.Context(), m.ID); err != nil || string(d) != users {
		t.Errorf("data after a rule's answer: %q, %v", d, err)
	}
	if r := send(t, h, "POST", "/p/default/users", `{"name":"Good"}`); r.Status != 201 {
		t.Errorf("no rule holds: %d %q", r.Status, r.Body)
	}
	if _, d, err := h.Admin.Data(t.Context(), m.ID); err != nil || !strings.HasSuffix(string(d), `"name":"Good"}]`) {
		t.Errorf("data after a write: %q, %v", d, err)
	}
}

// A rule with a status and no body on a route that writes answers the
// write's normal body, the record as it would be made, with that status,
// and changes no data (§13.1): before, it answered "this server's store
// does not keep writes" with the rule's 2xx (found by a black-box review).
func TestRuleStatusOnWriteRoute(t *testing.T) {
	h := servertest.New(t, withTeams)
	m := h.Create(`[{"id":1,"name":"Ann"}]`, client.CreateOptions{})
	withRules(t, h, "POST", "/users", m.ID, `[{"when":"body.name=nobody","status":202,"headers":{"X-Rule":"yes"}}]`)
	withRules(t, h, "DELETE", "/users/{id}", m.ID, `[{"when":"path.id=1","status":202}]`)
	for _, tc := range []struct{ method, path, body, want string }{
		{"POST", "/p/default/users", `{"name":"nobody"}`, `{"id":2,"name":"nobody"}`},
		{"POST", "/p/default/users", `{"id":1,"name":"nobody"}`, "{\"error\":\"Record exists\"}\n"},
		{"DELETE", "/p/default/users/1", ``, ``},
	} {
		r := send(t, h, tc.method, tc.path, tc.body)
		if r.Status != 202 || r.Body != tc.want {
			t.Errorf("%s %s %s: %d %q, want 202 %q", tc.method, tc.path, tc.body, r.Status, r.Body, tc.want)
		}
	}
	if _, d, err := h.Admin.Data(t.Context(), m.ID); err != nil || string(d) != `[{"id":1,"name":"Ann"}]` {
		t.Errorf("data after the rules' answers: %q, %v", d, err)
	}
	if r := send(t, h, "POST", "/p/default/users", `{"name":"Bo"}`); r.Status != 201 || r.Body != `{"id":2,"name":"Bo"}` {
		t.Errorf("no rule holds: %d %q", r.Status, r.Body)
	}
}

// A rule's delay_ms delays its answer; a rule without one takes the
// mock's.
func TestRuleDelay(t *testing.T) {
	h := servertest.New(t, withTeams)
	m := h.Create(users, client.CreateOptions{DelayMS: 120})
	withRules(t, h, "GET", "/users", m.ID, `[{"when":"query.fast=1","delay_ms":1,"body":1},{"when":"query.slow=1","delay_ms":300,"body":2},{"body":3}]`)
	for _, tc := range []struct {
		query string
		min   time.Duration
	}{{"?slow=1", 300 * time.Millisecond}, {"", 120 * time.Millisecond}} {
		start := time.Now()
		h.Get("/p/default/users" + tc.query)
		if took := time.Since(start); took < tc.min {
			t.Errorf("%s took %v, want at least %v", tc.query, took, tc.min)
		}
	}
	if r := h.Get("/p/default/users?fast=1"); r.Body != "1" {
		t.Errorf("fast: %q", r.Body)
	}
}

// CONTRACT §13.1: the admin API refuses a bad rule, naming it.
func TestRuleValidation(t *testing.T) {
	h := servertest.New(t, withTeams)
	m := h.Create(users, client.CreateOptions{})
	base := "/admin/v1/projects/" + decoy.DefaultProjectID + "/routes"
	route := func(rules string) string {
		return `{"method":"GET","path":"/users/{id}","mock_id":"` + m.ID + `","rules":` + rules + `}`
	}
	for _, tc := range []struct{ rules, msg string }{
		{`[{},{"name":"slow","when":"header.x-mode[$gt]=1"}]`, "Invalid rule 2 (slow): when: Unsupported operator: $gt"},
		{`[{"when":"path.team=a"}]`, "Invalid rule 1: when: path.team: the route's path has no parameter {team}"},
		{`[{"status":"x"}]`, "Invalid rule 1: status must be an integer"},
		{`[{},{"name":"slow","status":"x"}]`, "Invalid rule 2 (slow): status must be an integer"},
		{`[{"stauts":503}]`, `Invalid rule 1: unknown field \"stauts\" (a rule has name, when, status, headers, delay_ms, body, template, fault and times)`},
		{`[1]`, "Invalid rule 1: a rule is a JSON object"},
		{`{}`, "Invalid rules: an array of rules"},
		{`[{"template":{"a":"{{ nmae }}"}}]`, `Invalid rule 1: template: $.a: unknown function \"nmae\"`},
		{`[{"fault":"reset","status":500}]`, "Invalid rule 1: a fault of reset answers nothing: it takes no status, headers, body or template"},
		{`[{"times":0}]`, "Invalid rule 1: times must be 1 or more (leave it out for every time)"},
		{`[{"headers":{"Transfer-Encoding":"chunked"}}]`, "Invalid rule 1: headers: Transfer-Encoding is the server's to set"},
		{`[{"delay_ms":30001}]`, "Invalid rule 1: delay_ms must be from 0 to 30000"},
		{`[{"body":1,"template":2}]`, "Invalid rule 1: body and template: give one or the other"},
		{`[{"when":"method=post","status":503}]`, "Invalid rule 1: when: method post: methods are compared as clients send them, in upper case (POST), or with $eqi"},
	} {
		t.Run(tc.rules, func(t *testing.T) {
			servertest.WantError(t, h.Send("POST", base, "application/json", route(tc.rules)), 400, tc.msg)
		})
	}
	created := h.Send("POST", base, "application/json", route(`[{"when":"path.id=1","body":null,"template":null}]`))
	if !strings.Contains(created.Body, `"rules":[{"name":"","when":"path.id=1","status":null,"headers":null,"delay_ms":0,"body":null,"template":null,"fault":"","times":null}]`) {
		t.Errorf("created: %d %s", created.Status, created.Body)
	}
	var rt decoy.Route
	if err := json.Unmarshal([]byte(created.Body), &rt); err != nil {
		t.Fatal(err)
	}
	// A new path that loses a parameter a rule reads is refused.
	servertest.WantError(t, h.Send("PATCH", "/admin/v1/routes/"+rt.ID, "application/json", `{"path":"/people/{pid}"}`), 400,
		"Invalid rule 1: when: path.id: the route's path has no parameter {id}")
	// rules: null is none; absent keeps them.
	if r := h.Send("PATCH", "/admin/v1/routes/"+rt.ID, "application/json", `{"items":null}`); !strings.Contains(r.Body, `"when":"path.id=1"`) {
		t.Errorf("rules kept: %s", r.Body)
	}
	if r := h.Send("PATCH", "/admin/v1/routes/"+rt.ID, "application/json", `{"rules":null}`); !strings.Contains(r.Body, `"rules":[]`) {
		t.Errorf("rules cleared: %s", r.Body)
	}
	plain := addRoute(t, h, "GET", "/plain", m.ID)
	if plain.Rules == nil || len(plain.Rules) != 0 {
		t.Errorf("a route without rules: %+v", plain.Rules)
	}
	// A rule stored before method=post was refused stays good: a PATCH
	// that sends no rules keeps it, and an export of it imports again.
	old := []decoy.Rule{{When: "method=post", Status: servertest.Ptr(503)}}
	if _, err := h.Store.UpdateRoute(context.Background(), plain.ID, decoy.RouteUpdate{Rules: &old}); err != nil {
		t.Fatal(err)
	}
	if r := h.Send("PATCH", "/admin/v1/routes/"+plain.ID, "application/json", `{"path":"/plainer"}`); r.Status != 200 {
		t.Errorf("PATCH of a route with a rule stored before: %d %s", r.Status, r.Body)
	}
	export := h.Send("GET", "/admin/v1/projects/"+decoy.DefaultProjectID+"/export", "", "")
	into := h.Send("POST", "/admin/v1/workspaces/"+decoy.DefaultWorkspaceID+"/projects", "application/json", `{"name":"again"}`)
	var p struct{ ID string }
	json.Unmarshal([]byte(into.Body), &p)
	if r := h.Send("POST", "/admin/v1/projects/"+p.ID+"/import?format=decoy&new_ids=true", "application/gzip", export.Body); r.Status != 201 {
		t.Errorf("an export of a rule stored before: %d %s", r.Status, r.Body)
	}
}

// rawExchange sends a request on a new connection (over TLS when conf is
// set) and reads until the server closes it: what came, and how the read
// ended.
func faultExchange(t *testing.T, addr, target string, conf *tls.Config) ([]byte, error) {
	t.Helper()
	var c net.Conn
	var err error
	if conf != nil {
		c, err = tls.Dial("tcp", addr, conf)
	} else {
		c, err = net.Dial("tcp", addr)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(20 * time.Second))
	if _, err := io.WriteString(c, "GET "+target+" HTTP/1.1\r\nHost: test\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	return io.ReadAll(c)
}

// CONTRACT §13.1: the faults, read on the socket, over HTTP/1.1 and over
// TLS: reset (the connection reset, nothing read), empty (closed, nothing
// read), malformed (a head announcing more body than comes, then closed).
func TestRuleFaults(t *testing.T) {
	pair, err := testcert.New(1)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := pair.Write(certFile, keyFile); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		conf *tls.Config
		cfg  func(*server.Config)
	}{
		{"HTTP/1.1", nil, func(*server.Config) {}},
		{"TLS", pair.ClientConfig(), func(c *server.Config) { c.TLSCert, c.TLSKey = certFile, keyFile }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := servertest.New(t, withTeams, tc.cfg)
			if tc.conf != nil {
				h.URL = "https://" + h.Srv.Addr().String()
				h.Admin = client.New(h.URL, servertest.AdminToken)
				h.Admin.HTTP = pair.Client()
			}
			m, err := h.Admin.CreateMock(t.Context(), strings.NewReader(users), client.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if err := h.Admin.Do(t.Context(), "POST", "/admin/v1/projects/"+decoy.DefaultProjectID+"/routes", map[string]any{"method": "GET", "path": "/users", "mock_id": m.ID,
				"rules": json.RawMessage(`[{"when":"query.f=reset","fault":"reset"},{"when":"query.f=empty","fault":"empty"},
					{"when":"query.f=malformed","fault":"malformed","status":202,"headers":{"X-Cut":"yes"}},
					{"when":"query.f=cut","fault":"malformed","body":{"list":[1,2,3,4,5,6,7,8,9]}}]`)}, nil); err != nil {
				t.Fatal(err)
			}
			addr := h.Srv.Addr().String()
			if h.Admin.HTTP == nil {
				h.Admin.HTTP = http.DefaultClient
			}
			got, err := faultExchange(t, addr, "/p/default/users?f=reset", tc.conf)
			if len(got) != 0 || !errors.Is(err, syscall.ECONNRESET) {
				t.Errorf("reset: read %q, %v; want nothing and ECONNRESET", got, err)
			}
			got, err = faultExchange(t, addr, "/p/default/users?f=empty", tc.conf)
			if len(got) != 0 || err != nil {
				t.Errorf("empty: read %q, %v; want nothing and EOF", got, err)
			}
			for _, c := range []struct{ query, status, body string }{
				{"malformed", "202", users},
				{"cut", "200", `{"list":[1,2,3,4,5,6,7,8,9]}`},
			} {
				got, err = faultExchange(t, addr, "/p/default/users?f="+c.query, tc.conf)
				if err != nil {
					t.Errorf("%s: %v", c.query, err)
				}
				resp, rerr := http.ReadResponse(bufio.NewReader(strings.NewReader(string(got))), nil)
				if rerr != nil {
					t.Fatalf("%s: %q: %v", c.query, got, rerr)
				}
				body, berr := io.ReadAll(resp.Body)
				if !strings.HasPrefix(resp.Status, c.status) || resp.ContentLength != int64(len(c.body)) || !errors.Is(berr, io.ErrUnexpectedEOF) ||
					string(body) != c.body[:len(c.body)/2] || resp.Header.Get("Content-Type") != "application/json" ||
					resp.Header.Get("Access-Control-Allow-Origin") != "*" {
					t.Errorf("%s: %s, length %d, body %q (%v), header %v", c.query, resp.Status, resp.ContentLength, body, berr, resp.Header)
				}
				if c.query == "malformed" && resp.Header.Get("X-Cut") != "yes" {
					t.Errorf("malformed: the rule's headers are not in the head: %v", resp.Header)
				}
			}
			// The server goes on answering.
			if r, err := h.Admin.HTTP.Get(h.URL + "/p/default/users"); err != nil || r.StatusCode != 200 {
				t.Errorf("after the faults: %v, %v", r, err)
			}
			// Counted with status 444, once the handlers are done (after
			// the connection closed).
			const want = `decoy_http_requests_total{code="444",route="project"} 4`
			var b []byte
			for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
				metrics, err := h.Admin.HTTP.Get(h.URL + "/metrics")
				if err != nil {
					t.Fatal(err)
				}
				b, _ = io.ReadAll(metrics.Body)
				metrics.Body.Close()
				if strings.Contains(string(b), want) {
					break
				}
			}
			if !strings.Contains(string(b), want) {
				t.Errorf("the faults are not counted with status 444: %s", grepLines(string(b), "decoy_http_requests_total"))
			}
		})
	}
}

// CONTRACT §13.1 over HTTP/2, whose connection is shared and cannot be
// taken: every fault resets the request's stream.
func TestRuleFaultsHTTP2(t *testing.T) {
	pair, err := testcert.New(1)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := pair.Write(certFile, keyFile); err != nil {
		t.Fatal(err)
	}
	h := servertest.New(t, withTeams, func(c *server.Config) { c.TLSCert, c.TLSKey = certFile, keyFile })
	base := "https://" + h.Srv.Addr().String()
	h.Admin = client.New(base, servertest.AdminToken)
	h.Admin.HTTP = pair.Client()
	m, err := h.Admin.CreateMock(t.Context(), strings.NewReader(users), client.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Admin.Do(t.Context(), "POST", "/admin/v1/projects/"+decoy.DefaultProjectID+"/routes", map[string]any{"method": "GET", "path": "/users", "mock_id": m.ID,
		"rules": json.RawMessage(`[{"when":"query.f=reset","fault":"reset"},{"when":"query.f=empty","fault":"empty"},{"when":"query.f=malformed","fault":"malformed"}]`)}, nil); err != nil {
		t.Fatal(err)
	}
	c := pair.Client()
	for _, f := range []string{"reset", "empty", "malformed"} {
		resp, err := c.Get(base + "/p/default/users?f=" + f)
		if err == nil {
			_, err = io.ReadAll(resp.Body)
			resp.Body.Close()
		}
		if err == nil || !strings.Contains(err.Error(), "stream error") {
			t.Errorf("%s: %v, want a stream error", f, err)
		}
	}
	resp, err := c.Get(base + "/p/default/users")
	if err != nil || resp.StatusCode != 200 || resp.Proto != "HTTP/2.0" {
		t.Fatalf("after the faults: %v, %v", resp, err)
	}
	resp.Body.Close()
}

// grepLines returns the lines of text that hold s.
func grepLines(text, s string) string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, s) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// Requests at once on a route with rules: each is asked the rules with an
// Eval of its own (pooled), a template compiled once is shared, and a rule
// with times holds exactly that many times.
func TestRulesConcurrent(t *testing.T) {
	h := servertest.New(t, withTeams)
	m := h.Create(users, client.CreateOptions{RateLimit: servertest.Ptr(int64(10000))})
	withRules(t, h, "GET", "/users/{id}", m.ID, `[{"when":"header.x-n=odd","times":7,"status":503},
		{"when":"header.x-n=odd","template":{"id":"{{ request.path.id }}","n":"{{ request.header.x-n }}"}},{}]`)
	var mu sync.Mutex
	counts := map[string]int{}
	var wg sync.WaitGroup
	for i := range 40 {
		wg.Go(func() {
			n := "even"
			if i%2 == 1 {
				n = "odd"
			}
			r := h.Get("/p/default/users/"+strconv.Itoa(i%3+1), "X-N", n)
			key := strconv.Itoa(r.Status)
			if r.Status == 200 && strings.HasPrefix(r.Body, `{"id":"`) {
				key = "template"
				if want := `{"id":"` + strconv.Itoa(i%3+1) + `","n":"odd"}`; r.Body != want {
					t.Errorf("template: %s, want %s", r.Body, want)
				}
			}
			mu.Lock()
			counts[key]++
			mu.Unlock()
		})
	}
	wg.Wait()
	if counts["503"] != 7 || counts["template"] != 13 || counts["200"] != 20 {
		t.Errorf("answers %v, want 7 × 503, 13 templates and 20 normal", counts)
	}
}

// The counts of routes a deletion takes with it (their mock's, their
// project's, their workspace's) are forgotten, as a route's own deletion
// forgets them: the in-memory counter kept them until a restart (found by
// an audit).
func TestRuleCountsGoWithCascades(t *testing.T) {
	counter := inmem.NewRuleCounter()
	h := servertest.New(t, withTeams, func(c *server.Config) { c.RuleCounter = counter })
	id := func(r servertest.Response) string {
		t.Helper()
		var v struct{ ID string }
		if r.Status != 201 || json.Unmarshal([]byte(r.Body), &v) != nil {
			t.Fatalf("create: %d %s", r.Status, r.Body)
		}
		return v.ID
	}
	ws := id(h.Send("POST", "/admin/v1/workspaces", "application/json", `{"name":"gone"}`))
	// counted makes a project of ws with a mock, and n routes to it whose
	// rules are each taken once; it returns the project and the mock.
	counted := func(name string, n int) (string, string) {
		p := id(h.Send("POST", "/admin/v1/workspaces/"+ws+"/projects", "application/json", `{"name":"`+name+`"}`))
		m := h.Create(`[{"id":1}]`, client.CreateOptions{Name: name, ProjectID: p})
		for i := range n {
			path := "/r" + strconv.Itoa(i)
			body := `{"method":"GET","path":"` + path + `","mock_id":"` + m.ID + `","rules":[{"status":418,"times":5}]}`
			id(h.Send("POST", "/admin/v1/projects/"+p+"/routes", "application/json", body))
			if r := h.Send("GET", "/p/"+name+path, "", ""); r.Status != 418 {
				t.Fatalf("GET /p/%s%s: %d %s", name, path, r.Status, r.Body)
			}
		}
		return p, m.ID
	}
	_, m1 := counted("one", 2)
	p2, _ := counted("two", 3)
	counted("three", 1)
	if n := counter.Routes(); n != 6 {
		t.Fatalf("counts of %d routes, want 6", n)
	}
	for _, step := range []struct {
		path string
		left int
	}{
		{"/admin/v1/mocks/" + m1, 4},
		{"/admin/v1/projects/" + p2 + "?cascade=true", 1},
		{"/admin/v1/workspaces/" + ws, 0},
	} {
		if r := h.Send("DELETE", step.path, "", ""); r.Status != 204 {
			t.Fatalf("DELETE %s: %d %s", step.path, r.Status, r.Body)
		}
		if n := counter.Routes(); n != step.left {
			t.Errorf("after DELETE %s: counts of %d routes, want %d", step.path, n, step.left)
		}
	}
}

// resetSpy is a rule counter that records its resets.
type resetSpy struct {
	*inmem.RuleCounter
	mu    sync.Mutex
	calls [][]string
	bound []bool // whether each call's context had a deadline
}

func (s *resetSpy) ResetRules(ctx context.Context, ids ...string) error {
	s.mu.Lock()
	_, ok := ctx.Deadline()
	s.calls, s.bound = append(s.calls, ids), append(s.bound, ok)
	s.mu.Unlock()
	return s.RuleCounter.ResetRules(ctx, ids...)
}

// A deletion resets the counts of the routes it takes in one call, with a
// deadline: it sent one Redis DEL per route while holding the admin API's
// lock, with none (found by a review).
func TestRuleResetsOfADeletionBatched(t *testing.T) {
	spy := &resetSpy{RuleCounter: inmem.NewRuleCounter()}
	h := servertest.New(t, withTeams, func(c *server.Config) { c.RuleCounter = spy })
	r := h.Send("POST", "/admin/v1/workspaces/"+decoy.DefaultWorkspaceID+"/projects", "application/json", `{"name":"gone"}`)
	var p struct{ ID string }
	if r.Status != 201 || json.Unmarshal([]byte(r.Body), &p) != nil {
		t.Fatalf("project: %d %s", r.Status, r.Body)
	}
	m := h.Create(`[{"id":1}]`, client.CreateOptions{Name: "m", ProjectID: p.ID})
	for i := range 4 {
		body := `{"method":"GET","path":"/r` + strconv.Itoa(i) + `","mock_id":"` + m.ID + `","rules":[{"status":418,"times":5}]}`
		if r := h.Send("POST", "/admin/v1/projects/"+p.ID+"/routes", "application/json", body); r.Status != 201 {
			t.Fatalf("route: %d %s", r.Status, r.Body)
		}
	}
	spy.mu.Lock()
	spy.calls, spy.bound = nil, nil
	spy.mu.Unlock()
	if r := h.Send("DELETE", "/admin/v1/projects/"+p.ID+"?cascade=true", "", ""); r.Status != 204 {
		t.Fatalf("delete: %d %s", r.Status, r.Body)
	}
	spy.mu.Lock()
	defer spy.mu.Unlock()
	if len(spy.calls) != 1 || len(spy.calls[0]) != 4 || !spy.bound[0] {
		t.Errorf("resets of the deletion: %v, with deadlines %v; want one call of 4 routes, with a deadline", spy.calls, spy.bound)
	}
}
