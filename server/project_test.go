package server_test

import (
	"compress/gzip"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/decoy-mock/decoy"
	"github.com/decoy-mock/decoy/client"
	"github.com/decoy-mock/decoy/internal/servertest"
	"github.com/decoy-mock/decoy/server"
)

// withTeams gives the harness's server the teams and routes of its store,
// as decoy serve has them.
func withTeams(c *server.Config) {
	c.Teams = c.Store.(decoy.TeamStore)
	c.Routes = c.Store.(decoy.RouteStore)
}

// addRoute adds a route to the default project through the admin API.
func addRoute(t testing.TB, h *servertest.Harness, method, path, mockID string, extra ...string) decoy.Route {
	t.Helper()
	body := map[string]any{"method": method, "path": path, "mock_id": mockID}
	for i := 0; i+1 < len(extra); i += 2 {
		var v any
		if err := json.Unmarshal([]byte(extra[i+1]), &v); err != nil {
			t.Fatal(err)
		}
		body[extra[i]] = v
	}
	b, _ := json.Marshal(body)
	r := h.Send("POST", "/admin/v1/projects/"+decoy.DefaultProjectID+"/routes", "application/json", string(b))
	if r.Status != http.StatusCreated {
		t.Fatalf("create route %s %s: %d %s", method, path, r.Status, r.Body)
	}
	var rt decoy.Route
	if err := json.Unmarshal([]byte(r.Body), &rt); err != nil {
		t.Fatal(err)
	}
	return rt
}

// onHost sends a request with a Host of its own.
func onHost(t *testing.T, h *servertest.Harness, method, host, path string, header ...string) servertest.Response {
	t.Helper()
	req, err := http.NewRequest(method, h.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Host = host
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := (&http.Client{Transport: &http.Transport{DisableCompression: true}}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return servertest.Response{Status: resp.StatusCode, Header: resp.Header, Body: string(body)}
}

const (
	users   = `[{"id":1,"name":"Ada","team":"a"},{"id":2,"name":"Linus","team":"b"},{"id":"me","name":"Me","team":"a"},{"id":3, "name" : "Grace","team":"a"}]`
	wrapped = `{"links":{"self":"/teams"},
 "data":[{"slug":"a","n":1},{"slug":"b","n":2},{"slug":"c","n":3}] ,"meta":{"total":3}}`
)

// CONTRACT §11.3, §11.4: what a routed read answers, route by route.
func TestRoutedReads(t *testing.T) {
	h := servertest.New(t, withTeams)
	u := h.Create(users, client.CreateOptions{Name: "users"})
	w := h.Create(wrapped, client.CreateOptions{Name: "teams"})
	obj := h.Create(`{"version": "1.0" }`, client.CreateOptions{Name: "info"})
	addRoute(t, h, "GET", "/users", u.ID)
	addRoute(t, h, "GET", "/users/{id}", u.ID)
	addRoute(t, h, "GET", "/users/me/profile", u.ID)
	addRoute(t, h, "GET", "/teams/{team}/users", u.ID)
	addRoute(t, h, "DELETE", "/users/{uid}", u.ID, "bind", `{"uid":"id"}`)
	addRoute(t, h, "GET", "/teams", w.ID, "items", `"data"`)
	addRoute(t, h, "GET", "/teams/{slug}", w.ID, "items", `"data"`)
	addRoute(t, h, "GET", "/info", obj.ID)
	addRoute(t, h, "GET", "/", obj.ID)

	for _, tc := range []struct {
		name, method, path string
		status             int
		body               string // the whole body, or for errors the message
		total              string // X-Total-Count; "" for none
	}{
		{"collection", "GET", "/p/default/users", 200, users, "4"},
		{"collection, trailing slash", "GET", "/p/default/users/", 200, users, "4"},
		{"collection, query", "GET", "/p/default/users?filters=team%3Da&order_by=name&limit=2", 200, `[{"id":1,"name":"Ada","team":"a"},{"id":3, "name" : "Grace","team":"a"}]`, "3"},
		{"item, number id", "GET", "/p/default/users/2", 200, `{"id":2,"name":"Linus","team":"b"}`, ""},
		{"item, number spelled otherwise", "GET", "/p/default/users/3.0", 200, `{"id":3, "name" : "Grace","team":"a"}`, ""},
		{"item, string id", "GET", "/p/default/users/me", 200, `{"id":"me","name":"Me","team":"a"}`, ""},
		{"item ignores the query", "GET", "/p/default/users/1?filters=team%3Db&limit=0&offset=x", 200, `{"id":1,"name":"Ada","team":"a"}`, ""},
		{"item, none", "GET", "/p/default/users/9", 404, "Not found", ""},
		{"literal beats parameter", "GET", "/p/default/users/me/profile", 200, users, "4"},
		{"parameter in the middle", "GET", "/p/default/teams/b/users", 200, `[{"id":2,"name":"Linus","team":"b"}]`, "1"},
		{"parameter and filters", "GET", "/p/default/teams/a/users?filters=name%5B%24ne%5D%3DAda", 200, `[{"id":"me","name":"Me","team":"a"},{"id":3, "name" : "Grace","team":"a"}]`, "2"},
		{"wrapped, unchanged", "GET", "/p/default/teams", 200, wrapped, "3"},
		{"wrapped, spliced", "GET", "/p/default/teams?order_by=n&order_direction=desc&limit=2", 200, `{"links":{"self":"/teams"},
 "data":[{"slug":"c","n":3},{"slug":"b","n":2}] ,"meta":{"total":3}}`, "3"},
		{"wrapped item", "GET", "/p/default/teams/b", 200, `{"slug":"b","n":2}`, ""},
		{"not an array", "GET", "/p/default/info?limit=1", 200, `{"version": "1.0" }`, ""},
		{"root", "GET", "/p/default", 200, `{"version": "1.0" }`, ""},
		{"root, slash", "GET", "/p/default/", 200, `{"version": "1.0" }`, ""},
		{"bad parameters", "GET", "/p/default/users?limit=-1", 400, "Limit must be 0 or greater", ""},
		{"no route", "GET", "/p/default/nothing/here", 404, "No route for GET /nothing/here", ""},
		{"method not allowed", "POST", "/p/default/users", 405, "Method not allowed", ""},
		{"unknown slug", "GET", "/p/nope/users", 404, "Project not found", ""},
		{"invalid slug", "GET", "/p/No_Pe/users", 404, "Project not found", ""},
		{"no slug", "GET", "/p/", 404, "Project not found", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := h.Do(tc.method, tc.path, "Origin", "https://app.example")
			if tc.status >= 400 {
				servertest.WantError(t, r, tc.status, tc.body)
			} else if r.Status != tc.status || r.Body != tc.body {
				t.Errorf("got %d\n%s\nwant %d\n%s", r.Status, r.Body, tc.status, tc.body)
			}
			if got := r.Header.Get("X-Total-Count"); got != tc.total {
				t.Errorf("X-Total-Count = %q, want %q", got, tc.total)
			}
			if r.Header.Get("Access-Control-Allow-Origin") != "*" {
				t.Errorf("no CORS on a %d", r.Status)
			}
		})
	}
	r := h.Do("PUT", "/p/default/users/1")
	if got := r.Header.Get("Allow"); got != "GET, HEAD, DELETE" {
		t.Errorf("Allow = %q, want GET, HEAD, DELETE", got)
	}
}

// CONTRACT §11.4: a routed read is the read of §1 from its step 3 on, with
// every header; the same bytes as /mock/{id} when the route adds nothing.
func TestRoutedReadIsTheRead(t *testing.T) {
	h := servertest.New(t, withTeams)
	big := `[` + strings.Repeat(`{"id":1,"pad":"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"},`, 40) + `{"id":2}]`
	m := h.Create(big, client.CreateOptions{Name: "big", RateLimit: servertest.Ptr(int64(3)), MonthlyQuota: servertest.Ptr(int64(100))})
	addRoute(t, h, "GET", "/big", m.ID)

	direct := h.Get("/mock/"+m.ID+"?limit=30", "Accept-Encoding", "gzip")
	routed := h.Get("/p/default/big?limit=30", "Accept-Encoding", "gzip")
	if direct.Status != 200 || routed.Status != 200 {
		t.Fatalf("statuses %d, %d", direct.Status, routed.Status)
	}
	for _, k := range []string{"Content-Encoding", "ETag", "Cache-Control", "Content-Type", "X-Total-Count", "Vary", "X-Content-Type-Options", "X-Quota-Limit"} {
		if direct.Header.Get(k) != routed.Header.Get(k) {
			t.Errorf("%s: /mock %q, route %q", k, direct.Header.Get(k), routed.Header.Get(k))
		}
	}
	if direct.Body != routed.Body {
		t.Error("the routed body differs from /mock/{id}'s")
	}
	// The rate limit is the mock's, shared by both ways in: a third read
	// is the last.
	if r := h.Get("/p/default/big", "If-None-Match", direct.Header.Get("ETag")); r.Status != 200 {
		t.Fatalf("third read: %d", r.Status)
	}
	servertest.WantError(t, h.Get("/p/default/big"), 429, "Rate limit exceeded. Maximum 3 requests per minute.")

	// 304 on the routed ETag.
	h.Clock.Add(2 * decoy.RateWindow)
	etag := h.Get("/p/default/big?limit=1").Header.Get("ETag")
	if r := h.Get("/p/default/big?limit=1", "If-None-Match", etag); r.Status != http.StatusNotModified {
		t.Errorf("If-None-Match: %d", r.Status)
	}
	zr, err := gzip.NewReader(strings.NewReader(routed.Body))
	if err != nil {
		t.Fatal(err)
	}
	plain, _ := io.ReadAll(zr)
	if !strings.HasPrefix(string(plain), `[{"id":1`) {
		t.Errorf("gzipped body: %.40s", plain)
	}
}

// CONTRACT §11.4, §1.5: a private mock's token is asked for through its
// routes too.
func TestRoutedPrivate(t *testing.T) {
	h := servertest.New(t, withTeams)
	m := h.Create(users, client.CreateOptions{Private: true})
	addRoute(t, h, "GET", "/users/{id}", m.ID)
	servertest.WantError(t, h.Get("/p/default/users/1"), 401, "Auth token not found")
	servertest.WantError(t, h.Get("/p/default/users/1", "serviceauthtoken", "dcy_wrong"), 401, "Invalid auth token")
	if r := h.Get("/p/default/users/1", "serviceauthtoken", m.Token); r.Status != 200 || r.Header.Get("Cache-Control") != "private, no-cache" {
		t.Errorf("with the token: %d %q", r.Status, r.Header.Get("Cache-Control"))
	}
}

// CONTRACT §11.1: {slug}.localhost serves the project's paths alone, and
// nothing else of the server.
func TestProjectHost(t *testing.T) {
	h := servertest.New(t, withTeams)
	m := h.Create(users, client.CreateOptions{})
	addRoute(t, h, "GET", "/users/{id}", m.ID)
	for _, host := range []string{"default.localhost", "DEFAULT.localhost:8080", "default.localhost."} {
		if r := onHost(t, h, "GET", host, "/users/2"); r.Status != 200 || r.Body != `{"id":2,"name":"Linus","team":"b"}` {
			t.Errorf("%s: %d %s", host, r.Status, r.Body)
		}
	}
	for _, path := range []string{"/healthz", "/admin/v1/mocks", "/mock/" + m.ID, "/p/default/users/2"} {
		servertest.WantError(t, onHost(t, h, "GET", "default.localhost", path), 404, "No route for GET "+path)
	}
	servertest.WantError(t, onHost(t, h, "GET", "nope.localhost", "/users/2"), 404, "Project not found")
	servertest.WantError(t, onHost(t, h, "GET", "a.b.localhost", "/users/2"), 404, "Project not found")
	// Not a project's host: the server as usual.
	if r := onHost(t, h, "GET", "localhost", "/healthz"); r.Status != 200 {
		t.Errorf("localhost /healthz: %d", r.Status)
	}
}

// CONTRACT §11.1: --routes-domain names another domain of projects' hosts.
func TestRoutesDomain(t *testing.T) {
	h := servertest.New(t, withTeams, func(c *server.Config) { c.RoutesDomain = "Mocks.Example.com" })
	m := h.Create(users, client.CreateOptions{})
	addRoute(t, h, "GET", "/users", m.ID)
	if r := onHost(t, h, "GET", "default.mocks.example.com", "/users"); r.Status != 200 || r.Body != users {
		t.Errorf("%d %s", r.Status, r.Body)
	}
	if r := onHost(t, h, "GET", "mocks.example.com", "/healthz"); r.Status != 200 {
		t.Errorf("the domain itself: %d", r.Status)
	}
}

// CONTRACT §11.3: preflights allow the path's methods and the headers
// asked for; a path without routes is a 404 with CORS.
func TestRoutePreflight(t *testing.T) {
	h := servertest.New(t, withTeams)
	m := h.Create(users, client.CreateOptions{})
	addRoute(t, h, "GET", "/users/{id}", m.ID)
	addRoute(t, h, "PATCH", "/users/{id}", m.ID)
	r := h.Do("OPTIONS", "/p/default/users/1", "Origin", "https://app.example", "Access-Control-Request-Method", "PATCH",
		"Access-Control-Request-Headers", "authorization, content-type, x-trace-id")
	if r.Status != http.StatusNoContent {
		t.Fatalf("preflight: %d %s", r.Status, r.Body)
	}
	if got := r.Header.Get("Access-Control-Allow-Methods"); got != "GET, HEAD, PATCH" {
		t.Errorf("Allow-Methods = %q", got)
	}
	allowed := strings.ToLower(r.Header.Get("Access-Control-Allow-Headers"))
	for _, want := range []string{"authorization", "content-type", "x-trace-id", "serviceauthtoken"} {
		if !strings.Contains(allowed, want) {
			t.Errorf("Allow-Headers %q lacks %s", allowed, want)
		}
	}
	r = h.Do("OPTIONS", "/p/default/orders", "Origin", "https://app.example", "Access-Control-Request-Method", "GET")
	servertest.WantError(t, r, 404, "No route for GET /orders")
	if r.Header.Get("Access-Control-Allow-Origin") != "*" {
		t.Error("404 of a preflight without CORS")
	}
}

// CONTRACT §11.2, §11.3: a change to the routes is seen by the next
// request; a deleted mock takes its routes with it; a new slug moves them.
func TestRouteChanges(t *testing.T) {
	h := servertest.New(t, withTeams)
	m := h.Create(users, client.CreateOptions{})
	servertest.WantError(t, h.Get("/p/default/users"), 404, "No route for GET /users")
	rt := addRoute(t, h, "GET", "/users", m.ID)
	if r := h.Get("/p/default/users"); r.Status != 200 {
		t.Fatalf("after create: %d", r.Status)
	}
	if r := h.Send("PATCH", "/admin/v1/routes/"+rt.ID, "application/json", `{"path":"/people"}`); r.Status != 200 {
		t.Fatalf("patch: %d %s", r.Status, r.Body)
	}
	servertest.WantError(t, h.Get("/p/default/users"), 404, "No route for GET /users")
	if r := h.Get("/p/default/people"); r.Status != 200 {
		t.Fatalf("after patch: %d", r.Status)
	}
	if r := h.Send("PATCH", "/admin/v1/projects/"+decoy.DefaultProjectID, "application/json", `{"slug":"shop"}`); r.Status != 200 || !strings.Contains(r.Body, `"base_url":"`+h.URL+`/p/shop"`) {
		t.Fatalf("slug: %d %s", r.Status, r.Body)
	}
	servertest.WantError(t, h.Get("/p/default/people"), 404, "Project not found")
	if r := h.Get("/p/shop/people"); r.Status != 200 {
		t.Fatalf("under the new slug: %d", r.Status)
	}
	if err := h.Admin.DeleteMock(t.Context(), m.ID); err != nil {
		t.Fatal(err)
	}
	servertest.WantError(t, h.Get("/p/shop/people"), 404, "No route for GET /people")
	if r := h.Send("GET", "/admin/v1/routes/"+rt.ID, "", ""); r.Status != 404 {
		t.Errorf("route of a deleted mock: %d", r.Status)
	}
}

// CONTRACT §11.2: the admin API's checks of a route.
func TestRouteValidation(t *testing.T) {
	h := servertest.New(t, withTeams)
	m := h.Create(users, client.CreateOptions{})
	addRoute(t, h, "GET", "/u/{a}", m.ID)
	base := "/admin/v1/projects/" + decoy.DefaultProjectID + "/routes"
	for _, tc := range []struct {
		name, body string
		status     int
		msg        string
	}{
		{"shape taken", `{"method":"GET","path":"/u/{b}","mock_id":"` + m.ID + `"}`, 409, "Route exists: GET /u/{a}"},
		{"bad method", `{"method":"TRACE","path":"/x","mock_id":"` + m.ID + `"}`, 400, ""},
		{"bad path", `{"method":"GET","path":"x","mock_id":"` + m.ID + `"}`, 400, ""},
		{"bad bind", `{"method":"GET","path":"/x/{id}","mock_id":"` + m.ID + `","bind":{"nope":"id"}}`, 400, ""},
		{"bad items", `{"method":"GET","path":"/x","mock_id":"` + m.ID + `","items":"a..b"}`, 400, ""},
		{"create on an item route", `{"method":"POST","path":"/x/{id}","mock_id":"` + m.ID + `","action":"create"}`, 400, ""},
		{"mock not a uuid", `{"method":"GET","path":"/x","mock_id":"nope"}`, 400, "Mock is not in this project"},
		{"no mock", `{"method":"GET","path":"/x"}`, 400, "Invalid route: mock_id is required"},
		{"empty path", `{"method":"GET","path":"","mock_id":"` + m.ID + `"}`, 400, "Invalid route: path is required"},
		{"unknown mock", `{"method":"GET","path":"/x","mock_id":"00000000-0000-4000-8000-000000000000"}`, 400, "Mock is not in this project"},
		{"missing fields", `{"method":"GET"}`, 400, ""},
		{"unknown field", `{"method":"GET","path":"/x","mock_id":"` + m.ID + `","nope":1}`, 400, ""},
		// Where a byte that is not UTF-8 is, deep in a rule.
		{"not UTF-8", "{\"method\":\"GET\",\"path\":\"/x\",\"mock_id\":\"" + m.ID + "\",\n \"rules\":[\n  {\"when\":{\"query\":{\"q\":\"caf\xe9\"}}}]}", 400,
			"The body must be UTF-8: byte 0xE9 at line 3, column 29 is not"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := h.Send("POST", base, "application/json", tc.body)
			if tc.msg != "" {
				servertest.WantError(t, r, tc.status, tc.msg)
			} else if r.Status != tc.status || !strings.HasPrefix(r.Body, `{"error":"`) {
				t.Errorf("%d %s", r.Status, r.Body)
			}
		})
	}
	// Defaults: the action from the method and path, an empty bind.
	rt := addRoute(t, h, "POST", "/u", m.ID)
	if rt.Action != decoy.ActionCreate || rt.Bind == nil || rt.Items != nil {
		t.Errorf("defaults: %+v", rt)
	}
	if r := h.Send("PATCH", "/admin/v1/routes/"+rt.ID, "application/json", `{"items":"data"}`); r.Status != 200 || !strings.Contains(r.Body, `"items":"data"`) {
		t.Errorf("set items: %d %s", r.Status, r.Body)
	}
	if r := h.Send("PATCH", "/admin/v1/routes/"+rt.ID, "application/json", `{"items":null}`); r.Status != 200 || !strings.Contains(r.Body, `"items":null`) {
		t.Errorf("clear items: %d %s", r.Status, r.Body)
	}
	// A route whose action is its default takes the default of its new
	// path; an empty action is the default.
	if r := h.Send("PATCH", "/admin/v1/routes/"+rt.ID, "application/json", `{"path":"/u/{id}"}`); r.Status != 200 || !strings.Contains(r.Body, `"action":"read"`) {
		t.Errorf("a create route moved to an item path: %d %s", r.Status, r.Body)
	}
	if r := h.Send("PATCH", "/admin/v1/routes/"+rt.ID, "application/json", `{"method":"DELETE"}`); r.Status != 200 || !strings.Contains(r.Body, `"action":"delete"`) {
		t.Errorf("method changed: %d %s", r.Status, r.Body)
	}
	if r := h.Send("PATCH", "/admin/v1/routes/"+rt.ID, "application/json", `{"action":"read"}`); r.Status != 200 || !strings.Contains(r.Body, `"action":"read"`) {
		t.Errorf("action chosen: %d %s", r.Status, r.Body)
	}
	// A chosen action stays, and the route must still fit it.
	if r := h.Send("PATCH", "/admin/v1/routes/"+rt.ID, "application/json", `{"method":"PUT"}`); r.Status != 200 || !strings.Contains(r.Body, `"action":"read"`) {
		t.Errorf("chosen action kept: %d %s", r.Status, r.Body)
	}
	if r := h.Send("PATCH", "/admin/v1/routes/"+rt.ID, "application/json", `{"action":""}`); r.Status != 200 || !strings.Contains(r.Body, `"action":"replace"`) {
		t.Errorf("empty action: %d %s", r.Status, r.Body)
	}
	if r := h.Send("PATCH", "/admin/v1/routes/"+rt.ID, "application/json", `{"path":"/u","action":"replace"}`); r.Status != 400 {
		t.Errorf("replace on a collection: %d %s", r.Status, r.Body)
	}
}
