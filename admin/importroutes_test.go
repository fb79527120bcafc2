package admin_test

import (
	"encoding/json"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/decoy-mock/decoy"
	"github.com/decoy-mock/decoy/client"
	"github.com/decoy-mock/decoy/internal/servertest"
	"github.com/decoy-mock/decoy/server"
)

// routedImport is an import's answer with its routes.
type routedImport struct {
	Created []client.Mock    `json:"created"`
	Updated []client.Mock    `json:"updated"`
	Routes  []decoy.Route    `json:"routes"`
	Skipped []client.Skipped `json:"skipped"`
}

func decodeRouted(t *testing.T, r servertest.Response, status int) routedImport {
	t.Helper()
	if r.Status != status {
		t.Fatalf("status %d, want %d: %s", r.Status, status, r.Body)
	}
	var a routedImport
	if err := json.Unmarshal([]byte(r.Body), &a); err != nil {
		t.Fatal(err)
	}
	return a
}

func withRoutes(c *server.Config) {
	c.Teams = c.Store.(decoy.TeamStore)
	c.Routes = c.Store.(decoy.RouteStore)
	c.Versions = c.Store.(decoy.VersionStore)
}

// CONTRACT §11.5: an OpenAPI import is a working fake at the API's own
// paths, and importing it again changes it in place.
func TestImportMountsRoutes(t *testing.T) {
	h := servertest.New(t, withRoutes)
	doc, err := os.ReadFile("../importer/testdata/thirdparty/museum.yaml")
	if err != nil {
		t.Fatal(err)
	}
	a := decodeRouted(t, h.SendFile("POST", projectPath+"/import?format=openapi&base_path=/v1", doc), 201)
	routes := map[string]decoy.Route{}
	for _, rt := range a.Routes {
		routes[rt.Method+" "+rt.Path] = rt
	}
	events, ok := routes["GET /v1/special-events"]
	item := routes["GET /v1/special-events/{eventId}"]
	if !ok || item.MockID != events.MockID || item.Bind["eventId"] != "eventId" || routes["POST /v1/special-events"].Action != decoy.ActionCreate {
		t.Fatalf("routes %+v", a.Routes)
	}

	list := h.Get("/p/default/v1/special-events?limit=2")
	if list.Status != 200 || list.Header.Get("X-Total-Count") == "" || !strings.HasPrefix(list.Body, "[") {
		t.Fatalf("the collection: %d %s", list.Status, list.Body)
	}
	var first []map[string]any
	json.Unmarshal([]byte(list.Body), &first)
	id, _ := first[1]["eventId"].(string)
	one := h.Get("/p/default/v1/special-events/" + id)
	if one.Status != 200 || !strings.Contains(one.Body, `"eventId":"`+id+`"`) || strings.HasPrefix(one.Body, "[") {
		t.Fatalf("one event: %d %s", one.Status, one.Body)
	}
	servertest.WantError(t, h.Get("/p/default/v1/special-events/not-an-event"), 404, "Not found")

	// Again: the same routes and mocks, the data a new version.
	b := decodeRouted(t, h.SendFile("POST", projectPath+"/import?format=openapi&base_path=/v1", doc), 201)
	if len(b.Created) != 0 || len(b.Updated) != len(a.Created) || len(b.Routes) != len(a.Routes) {
		t.Fatalf("again: created %d, updated %d (want %d), routes %d (want %d)", len(b.Created), len(b.Updated), len(a.Created), len(b.Routes), len(a.Routes))
	}
	for _, rt := range b.Routes {
		if old := routes[rt.Method+" "+rt.Path]; old.ID != rt.ID || old.MockID != rt.MockID {
			t.Errorf("%s %s: %s on %s, was %s on %s", rt.Method, rt.Path, rt.ID, rt.MockID, old.ID, old.MockID)
		}
	}
	if n := mockCount(h); n != len(a.Created) {
		t.Errorf("%d mocks after importing twice, want %d", n, len(a.Created))
	}
	vs, err := h.Admin.Versions(t.Context(), events.MockID)
	if err != nil || len(vs) != 2 {
		t.Errorf("versions of the events' mock: %d %v", len(vs), err)
	}
	var listed struct{ Routes []decoy.Route }
	json.Unmarshal([]byte(h.Send("GET", projectPath+"/routes", "", "").Body), &listed)
	if len(listed.Routes) != len(a.Routes) {
		t.Errorf("%d routes listed, want %d", len(listed.Routes), len(a.Routes))
	}
}

// CONTRACT §11.5: a json-server file mounts /K and /K/{id}.
func TestImportJSONServerRoutes(t *testing.T) {
	h := servertest.New(t, withRoutes)
	a := decodeRouted(t, h.SendFile("POST", projectPath+"/import?format=json-server", []byte(`{"posts":[{"id":1,"t":"a"},{"id":2,"t":"b"}],"profile":{"name":"x"}}`)), 201)
	if len(a.Routes) != 7 {
		t.Fatalf("routes %+v", a.Routes)
	}
	if r := h.Get("/p/default/posts/2"); r.Body != `{"id":2,"t":"b"}` {
		t.Errorf("GET /posts/2: %d %s", r.Status, r.Body)
	}
	if r := h.Get("/p/default/profile"); r.Body != `{"name":"x"}` {
		t.Errorf("GET /profile: %d %s", r.Status, r.Body)
	}
	servertest.WantError(t, h.Send("POST", projectPath+"/import?format=json-server&base_path=v1", "application/json", `{"a":[]}`), 400, "Invalid base_path: the path does not start with /")
}

// CONTRACT §11.2: an export carries the project's slug and routes, and an
// import recreates them, a taken slug with a suffix.
func TestExportCarriesRoutes(t *testing.T) {
	h := servertest.New(t, withRoutes)
	decodeRouted(t, h.SendFile("POST", projectPath+"/import?format=json-server", []byte(`{"posts":[{"id":1}]}`)), 201)
	if r := h.Send("PATCH", projectPath, "application/json", `{"slug":"blog"}`); r.Status != 200 {
		t.Fatal(r.Body)
	}
	export := h.Send("GET", projectPath+"/export", "", "")
	if export.Status != 200 {
		t.Fatal(export.Status)
	}
	if !strings.Contains(gunzip(t, []byte(export.Body)), `"slug": "blog"`) {
		t.Error("the manifest has no slug")
	}
	ws := h.Send("POST", "/admin/v1/workspaces", "application/json", `{"name":"copy"}`)
	var w struct{ ID string }
	json.Unmarshal([]byte(ws.Body), &w)
	var ps struct{ Projects []struct{ ID, Slug string } }
	json.Unmarshal([]byte(h.Send("GET", "/admin/v1/workspaces/"+w.ID+"/projects", "", "").Body), &ps)
	into := ps.Projects[0].ID
	a := decodeRouted(t, h.SendFile("POST", "/admin/v1/projects/"+into+"/import?format=decoy&new_ids=true", []byte(export.Body)), 201)
	if len(a.Routes) != 6 || len(a.Created) != 1 || a.Routes[0].MockID != a.Created[0].ID {
		t.Fatalf("imported %+v", a)
	}
	var p struct{ Slug string }
	json.Unmarshal([]byte(h.Send("GET", "/admin/v1/projects/"+into, "", "").Body), &p)
	if p.Slug != "blog-2" {
		t.Errorf("slug %q, want blog-2 (blog is taken)", p.Slug)
	}
	if r := h.Get("/p/blog-2/posts/1"); r.Status != 200 || r.Body != `{"id":1}` {
		t.Errorf("the copy's route: %d %s", r.Status, r.Body)
	}
}

// The third-party descriptions, end to end through their own
// paths: Xero's projects (collections wrapped as {"pagination","items"},
// parameters in the middle of paths) and microcks' API Pastry (bare
// arrays, records found by name).
func TestThirdPartyThroughRoutes(t *testing.T) {
	h := servertest.New(t, withRoutes)
	for _, f := range []string{"xero-projects.yaml", "api-pastry.yaml"} {
		doc, err := os.ReadFile("../importer/testdata/thirdparty/" + f)
		if err != nil {
			t.Fatal(err)
		}
		decodeRouted(t, h.SendFile("POST", projectPath+"/import?format=openapi", doc), 201)
	}

	// Xero: the list keeps its wrapper, an item is found by its id, a
	// project's tasks are narrowed by the project.
	list := h.Get("/p/default/Projects")
	var projects struct {
		Pagination map[string]any   `json:"pagination"`
		Items      []map[string]any `json:"items"`
	}
	if err := json.Unmarshal([]byte(list.Body), &projects); err != nil || list.Status != 200 || projects.Pagination == nil || len(projects.Items) == 0 {
		t.Fatalf("GET /Projects: %d %s", list.Status, list.Body)
	}
	id, _ := projects.Items[0]["projectId"].(string)
	one := h.Get("/p/default/Projects/" + id)
	var project map[string]any
	if err := json.Unmarshal([]byte(one.Body), &project); err != nil || project["projectId"] != id {
		t.Errorf("GET /Projects/%s: %d %s", id, one.Status, one.Body)
	}
	limited := h.Get("/p/default/Projects?limit=0")
	if !strings.Contains(limited.Body, `"items":[]`) || !strings.Contains(limited.Body, `"pagination"`) {
		t.Errorf("GET /Projects?limit=0: %s", limited.Body)
	}
	tasks := h.Get("/p/default/Projects/" + id + "/Tasks")
	var wrapped struct{ Items []map[string]any }
	if err := json.Unmarshal([]byte(tasks.Body), &wrapped); err != nil || tasks.Status != 200 {
		t.Fatalf("GET /Projects/%s/Tasks: %d %s", id, tasks.Status, tasks.Body)
	}
	for _, task := range wrapped.Items {
		if task["projectId"] != id {
			t.Errorf("a task of another project: %v", task)
		}
	}
	servertest.WantError(t, h.Get("/p/default/Projects/00000000-0000-0000-0000-000000000000"), 404, "Not found")

	// API Pastry: a bare list, an item by name.
	pastries := h.Get("/p/default/pastry?order_by=price&order_direction=desc&limit=1")
	var top []map[string]any
	if err := json.Unmarshal([]byte(pastries.Body), &top); err != nil || len(top) != 1 {
		t.Fatalf("GET /pastry: %d %s", pastries.Status, pastries.Body)
	}
	name, _ := top[0]["name"].(string)
	byName := h.Get("/p/default/pastry/" + url.PathEscape(name))
	var pastry map[string]any
	if err := json.Unmarshal([]byte(byName.Body), &pastry); err != nil || pastry["name"] != name {
		t.Errorf("GET /pastry/%s: %d %s", name, byName.Status, byName.Body)
	}
}

// A dry run shows an updated mock as the import would leave it (its own
// name and settings); a base path's trailing slash, or "/" alone, says
// nothing more.
func TestImportDryRunAndBasePath(t *testing.T) {
	h := servertest.New(t, withRoutes)
	decodeRouted(t, h.SendFile("POST", projectPath+"/import?format=json-server", []byte(`{"posts":[{"id":1}]}`)), 201)
	a := decodeRouted(t, h.SendFile("POST", projectPath+"/import?format=json-server&dry_run=true", []byte(`{"posts":[{"id":1},{"id":2}]}`)), 200)
	if len(a.Updated) != 1 || a.Updated[0].Name != "posts" || a.Updated[0].Size != int64(len(`[{"id":1},{"id":2}]`)) {
		t.Errorf("dry run: %+v", a.Updated)
	}
	for _, bp := range []string{"/", "/api/"} {
		a := decodeRouted(t, h.SendFile("POST", projectPath+"/import?format=json-server&dry_run=true&base_path="+bp, []byte(`{"x":[]}`)), 200)
		want := strings.TrimRight(bp, "/") + "/x"
		if len(a.Routes) == 0 || a.Routes[0].Path != want {
			t.Errorf("base_path %s: %+v", bp, a.Routes)
		}
	}
}

// CONTRACT §14: an export carries the project's upstream and mode, and an
// import sets them on the project it goes into.
func TestExportCarriesUpstream(t *testing.T) {
	h := servertest.New(t, withRoutes)
	if r := h.Send("PATCH", projectPath, "application/json", `{"upstream":"https://api.example.com/v1/","mode":"passthrough"}`); r.Status != 200 ||
		!strings.Contains(r.Body, `"upstream":"https://api.example.com/v1","mode":"passthrough"`) {
		t.Fatalf("PATCH: %d %s", r.Status, r.Body)
	}
	export := h.Send("GET", projectPath+"/export", "", "")
	manifest := gunzip(t, []byte(export.Body))
	if !strings.Contains(manifest, `"upstream": "https://api.example.com/v1"`) || !strings.Contains(manifest, `"mode": "passthrough"`) {
		t.Fatalf("the manifest: %s", manifest)
	}
	r := h.Send("POST", "/admin/v1/workspaces/"+decoy.DefaultWorkspaceID+"/projects", "application/json", `{"name":"copy"}`)
	var p struct{ ID, Upstream, Mode string }
	json.Unmarshal([]byte(r.Body), &p)
	if p.Mode != "mock" || p.Upstream != "" {
		t.Fatalf("a new project: %s", r.Body)
	}
	decodeRouted(t, h.SendFile("POST", "/admin/v1/projects/"+p.ID+"/import?format=decoy&new_ids=true", []byte(export.Body)), 201)
	json.Unmarshal([]byte(h.Send("GET", "/admin/v1/projects/"+p.ID, "", "").Body), &p)
	if p.Upstream != "https://api.example.com/v1" || p.Mode != "passthrough" {
		t.Errorf("after the import: upstream %q, mode %q", p.Upstream, p.Mode)
	}
}
