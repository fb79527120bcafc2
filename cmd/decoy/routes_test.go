package main_test

// Routes (§11) on the real binary: made with the CLI, each kind of answer
// read at the project's paths, under /p/{slug} and on {slug}.localhost;
// a change seen by the other replica within a second; the bound on a
// project's routes.

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/decoy-mock/decoy"
	"github.com/decoy-mock/decoy/client"
)

// routeCLI creates a route with decoy route create and returns its id.
func routeCLI(t *testing.T, p *proc, args ...string) string {
	t.Helper()
	out, errOut, code := decoyCLI(t, p, "", append([]string{"route", "create", "--project", decoy.DefaultProjectID, "-o", "json"}, args...)...)
	if code != 0 {
		t.Fatalf("decoy route create %v: exit %d: %s", args, code, errOut)
	}
	var rt decoy.Route
	if err := json.Unmarshal([]byte(out), &rt); err != nil {
		t.Fatalf("%s: %v", out, err)
	}
	return rt.ID
}

// getHost sends a GET with Host set to host.
func getHost(t *testing.T, url, host string) answer {
	t.Helper()
	req, err := http.NewRequest("GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Host = host
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return answer{status: resp.StatusCode, header: resp.Header, body: string(b)}
}

func TestRoutesEndToEnd(t *testing.T) {
	p := start(t, t.TempDir(), "--admin-token", adminToken)
	people := createMock(t, p, `[{"id":1,"name":"Ada"},{"id":2,"name":"Linus"},{"id":3,"name":"Grace"}]`, client.CreateOptions{Name: "people"})
	posts := createMock(t, p, `{"data":[{"slug":"hello","by":1},{"slug":"bye","by":2}],"links":{"next":null}}`, client.CreateOptions{Name: "posts"})
	info := createMock(t, p, `{"api":"v1"}`, client.CreateOptions{Name: "info"})
	routeCLI(t, p, "--method", "GET", "--path", "/people", "--mock", people.ID)
	routeCLI(t, p, "--method", "get", "--path", "/people/{id}", "--mock", people.ID)
	routeCLI(t, p, "--method", "GET", "--path", "/posts", "--mock", posts.ID, "--items", "data")
	routeCLI(t, p, "--method", "GET", "--path", "/people/{author}/posts", "--mock", posts.ID, "--items", "data", "--bind", "author=by")
	routeCLI(t, p, "--method", "GET", "--path", "/info", "--mock", info.ID)

	out, errOut, code := decoyCLI(t, p, "", "route", "list", "--project", decoy.DefaultProjectID, "-o", "json")
	if code != 0 || strings.Count(out, `"method"`) != 5 {
		t.Fatalf("route list: exit %d %s %s", code, out, errOut)
	}

	for _, tc := range []struct{ name, path, want string }{
		{"collection", "/people?order_by=name&limit=2", `[{"id":1,"name":"Ada"},{"id":3,"name":"Grace"}]`},
		{"item", "/people/2", `{"id":2,"name":"Linus"}`},
		{"wrapped collection", "/posts?filters=slug%3Dbye", `{"data":[{"slug":"bye","by":2}],"links":{"next":null}}`},
		{"bound parameter", "/people/1/posts", `{"data":[{"slug":"hello","by":1}],"links":{"next":null}}`},
		{"not an array", "/info", `{"api":"v1"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, a := range []answer{get(t, p.url+"/p/default"+tc.path), getHost(t, p.url+tc.path, "default.localhost")} {
				if a.status != 200 || a.body != tc.want {
					t.Errorf("GET %s: %d %s, want %s", tc.path, a.status, a.body, tc.want)
				}
			}
		})
	}
	if a := get(t, p.url+"/p/default/people/9"); a.status != 404 || a.body != `{"error":"Not found"}`+"\n" {
		t.Errorf("missing record: %d %s", a.status, a.body)
	}

	// A slug of the user's choosing, through the CLI.
	if _, errOut, code := decoyCLI(t, p, "", "project", "slug", decoy.DefaultProjectID, "museum"); code != 0 {
		t.Fatalf("project slug: %s", errOut)
	}
	if a := getHost(t, p.url+"/people/1", "museum.localhost:8080"); a.status != 200 {
		t.Errorf("after the slug change: %d %s", a.status, a.body)
	}
	if a := get(t, p.url+"/p/default/people/1"); a.status != 404 {
		t.Errorf("the old slug: %d", a.status)
	}
}

// A route change made through one replica is seen at once by it and by
// the other within a second.
func TestReplicasSeeRouteChanges(t *testing.T) {
	db := postgresURL(t)
	rd, prefix := redisURL(t)
	ps := startReplicas(t, 2, db, rd, prefix)
	a, b := ps[0], ps[1]
	m := createMock(t, a, `[{"id":1}]`, client.CreateOptions{})
	project := field(t, api(t, a, "GET", "mocks/"+m.ID, adminToken, ""), 200, "project_id")
	slug := field(t, api(t, a, "GET", "projects/"+project, adminToken, ""), 200, "slug")
	for _, p := range ps { // both have the project's table
		if r := get(t, p.url+"/p/"+slug+"/things/1"); r.status != 404 {
			t.Fatalf("before: %d", r.status)
		}
	}
	rt := field(t, api(t, a, "POST", "projects/"+project+"/routes", adminToken, `{"method":"GET","path":"/things/{id}","mock_id":"`+m.ID+`"}`), 201, "id")
	seenWithin(t, "route creation", a, b, func(p *proc) bool { return get(t, p.url+"/p/"+slug+"/things/1").status == 200 })
	api(t, a, "PATCH", "routes/"+rt, adminToken, `{"path":"/items/{id}"}`)
	seenWithin(t, "route change", a, b, func(p *proc) bool {
		return get(t, p.url+"/p/"+slug+"/items/1").status == 200 && get(t, p.url+"/p/"+slug+"/things/1").status == 404
	})
	api(t, a, "PATCH", "projects/"+project, adminToken, `{"slug":"renamed-`+strings.ToLower(randomHex(4))+`"}`)
	seenWithin(t, "slug change", a, b, func(p *proc) bool { return get(t, p.url+"/p/"+slug+"/items/1").status == 404 })
	if err := a.admin().DeleteMock(context.Background(), m.ID); err != nil {
		t.Fatal(err)
	}
}

// CONTRACT §11.2 and the bound: --max-routes routes a project, and
// not one more.
func TestMaxRoutes(t *testing.T) {
	p := start(t, t.TempDir(), "--admin-token", adminToken, "--max-routes", "3")
	m := createMock(t, p, `[1]`, client.CreateOptions{})
	for i := range 3 {
		api(t, p, "POST", "projects/"+decoy.DefaultProjectID+"/routes", adminToken, `{"method":"GET","path":"/r`+string(rune('a'+i))+`","mock_id":"`+m.ID+`"}`)
	}
	a := api(t, p, "POST", "projects/"+decoy.DefaultProjectID+"/routes", adminToken, `{"method":"GET","path":"/rd","mock_id":"`+m.ID+`"}`)
	if a.status != 400 || !strings.Contains(a.body, "at most 3 routes") {
		t.Errorf("the 4th route: %d %s", a.status, a.body)
	}
	if a := get(t, p.url+"/p/default/rc"); a.status != 200 {
		t.Errorf("the 3rd route: %d", a.status)
	}
}
