package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/decoy-mock/decoy"
)

// RouteBackend is a store with routes (§11 of the contract), and the mocks,
// templates and versions an import writes with them.
type RouteBackend interface {
	TeamBackend
	decoy.MockBatchStore
	decoy.TemplateStore
	decoy.VersionStore
	decoy.RouteStore
}

// RunRoutes runs the suite of decoy.RouteStore. open returns an empty store
// (but for the default workspace and project) for each test.
func RunRoutes(t *testing.T, open func(t *testing.T) RouteBackend) {
	t.Run("Slugs", func(t *testing.T) { testSlugs(t, open(t)) })
	t.Run("DefaultSlug", func(t *testing.T) { testDefaultSlug(t, open(t)) })
	t.Run("SlugRoundTrip", func(t *testing.T) { testSlugRoundTrip(t, open(t)) })
	t.Run("SetProjectSlug", func(t *testing.T) { testSetProjectSlug(t, open(t)) })
	t.Run("Routes", func(t *testing.T) { testRoutes(t, open(t)) })
	t.Run("RouteShapes", func(t *testing.T) { testRouteShapes(t, open(t)) })
	t.Run("RouteMockNotInProject", func(t *testing.T) { testRouteMockNotInProject(t, open(t)) })
	t.Run("RoutesBound", func(t *testing.T) { testRoutesBound(t, open(t)) })
	t.Run("RoutesCascade", func(t *testing.T) { testRoutesCascade(t, open(t)) })
	t.Run("RoutesVersion", func(t *testing.T) { testRoutesVersion(t, open(t)) })
	t.Run("RoutesConcurrent", func(t *testing.T) { testRoutesConcurrent(t, open(t)) })
	t.Run("WriteImport", func(t *testing.T) { testWriteImport(t, open(t)) })
	t.Run("WriteImportAllOrNothing", func(t *testing.T) { testWriteImportAllOrNothing(t, open(t)) })
	t.Run("WriteImportInPlace", func(t *testing.T) { testWriteImportInPlace(t, open(t)) })
	t.Run("WriteImportLoaded", func(t *testing.T) { testWriteImportLoaded(t, open(t)) })
	t.Run("WriteImportAgainstResult", func(t *testing.T) { testWriteImportAgainstResult(t, open(t)) })
	t.Run("RouteRules", func(t *testing.T) { testRouteRules(t, open(t)) })
	t.Run("ProjectUpstream", func(t *testing.T) { testProjectUpstream(t, open(t)) })
}

func projectWithSlug(t *testing.T, s RouteBackend, workspaceID, name, slug string) (*decoy.Project, error) {
	t.Helper()
	return s.CreateProject(context.Background(), &decoy.Project{WorkspaceID: workspaceID, Name: name, Slug: slug})
}

func mustRoute(t *testing.T, s RouteBackend, r *decoy.Route) *decoy.Route {
	t.Helper()
	created, err := s.CreateRoute(context.Background(), r, decoy.DefaultMaxRoutes)
	if err != nil {
		t.Fatalf("CreateRoute(%s %s): %v", r.Method, r.Path, err)
	}
	return created
}

func get(projectID, path, mockID string) *decoy.Route {
	return &decoy.Route{ProjectID: projectID, Method: "GET", Path: path, MockID: mockID, Action: decoy.ActionRead}
}

// routesVersion returns a project's RoutesVersion.
func routesVersion(t *testing.T, s RouteBackend, projectID string) int64 {
	t.Helper()
	p, err := s.FindProject(context.Background(), projectID)
	if err != nil {
		t.Fatal(err)
	}
	return p.RoutesVersion
}

// paths lists the method and path of routes, in order.
func paths(rs []*decoy.Route) string {
	var b []string
	for _, r := range rs {
		b = append(b, r.Method+" "+r.Path)
	}
	return strings.Join(b, ", ")
}

func listRoutes(t *testing.T, s RouteBackend, projectID string) []*decoy.Route {
	t.Helper()
	rs, err := s.ListRoutes(context.Background(), projectID)
	if err != nil {
		t.Fatal(err)
	}
	return rs
}

// A project's slug is derived from its name, with a suffix while taken,
// unless it is given.
func testSlugs(t *testing.T, s RouteBackend) {
	ctx := context.Background()
	w := mustWorkspace(t, s, "acme", "")
	other := mustWorkspace(t, s, "other", "")
	long := strings.Repeat("Long name ", 10)
	for _, tt := range []struct {
		workspace, name, slug string
	}{
		{w.ID, "My API!", "my-api"},
		{other.ID, "my api", "my-api-2"},
		{w.ID, "***", "project"},
		{other.ID, "Ünïcode Tëst", "n-code-t-st"},
		{w.ID, "A", "a"},
		{w.ID, "a 2", "a-2"},
		{other.ID, "A", "a-3"}, // a-2 is taken by a project of that name
		{w.ID, long, decoy.Slugify(long)},
		{other.ID, long, decoy.Slugify(long) + "-2"},
	} {
		p := mustProject(t, s, tt.workspace, tt.name)
		if p.Slug != tt.slug || !decoy.ValidSlug(p.Slug) {
			t.Errorf("project %q: slug %q, want %q", tt.name, p.Slug, tt.slug)
		}
	}
	p, err := projectWithSlug(t, s, w.ID, "given", "my-own")
	if err != nil || p.Slug != "my-own" {
		t.Fatalf("a given slug: %+v, %v", p, err)
	}
	_, err = projectWithSlug(t, s, other.ID, "given", "my-own")
	wantError(t, err, decoy.ECONFLICT, "Slug taken")
	if !errors.Is(err, decoy.ErrSlugTaken) && decoy.ErrorMessage(err) != decoy.ErrSlugTaken.Message {
		t.Errorf("a taken slug: %v", err)
	}
	_, err = projectWithSlug(t, s, other.ID, "given", "my-api") // derived for another
	wantError(t, err, decoy.ECONFLICT, "Slug taken")
	for _, bad := range []string{"-a", "a-", "A", "a_b", strings.Repeat("a", 64)} {
		_, err = projectWithSlug(t, s, other.ID, "given", bad)
		wantError(t, err, decoy.EINVALID, "Invalid slug")
	}
	if ps, err := s.ListProjects(ctx, other.ID); err != nil || len(ps) != 5 {
		t.Errorf("projects of %s after refused creates: %d, %v", other.ID, len(ps), err)
	}
	// A project named as a slug taken by one given gets a suffix.
	if p := mustProject(t, s, other.ID, "My own"); p.Slug != "my-own-2" {
		t.Errorf("slug %q, want my-own-2", p.Slug)
	}
}

// The default project of the default workspace is "default"; the default
// projects of the other workspaces, named so too, are default-2, -3, …
func testDefaultSlug(t *testing.T, s RouteBackend) {
	ctx := context.Background()
	p, err := s.FindProject(ctx, decoy.DefaultProjectID)
	if err != nil || p.Slug != "default" {
		t.Fatalf("default project: %+v, %v", p, err)
	}
	for i, want := range []string{"default-2", "default-3"} {
		w := mustWorkspace(t, s, fmt.Sprint("w", i), "")
		if p := defaultProject(t, s, w.ID); p.Slug != want {
			t.Errorf("default project of workspace %d: slug %q, want %q", i, p.Slug, want)
		}
	}
	if p, err := s.FindProjectBySlug(ctx, "default"); err != nil || p.ID != decoy.DefaultProjectID {
		t.Errorf("FindProjectBySlug(default) = %+v, %v", p, err)
	}
	// Workspaces created at once: each default project has a slug of its
	// own.
	const n = 12
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			_, errs[i] = s.CreateWorkspace(ctx, &decoy.Workspace{Name: fmt.Sprint("c", i)}, "")
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Errorf("CreateWorkspace: %v", err)
		}
	}
	ws, err := s.ListWorkspaces(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	slugs := map[string]bool{}
	for _, w := range ws {
		slugs[defaultProject(t, s, w.ID).Slug] = true
	}
	if len(slugs) != len(ws) || len(ws) != n+3 {
		t.Errorf("%d slugs of %d default projects: %v", len(slugs), len(ws), slugs)
	}
}

// Every way of reading a project gives its slug and routes version.
func testSlugRoundTrip(t *testing.T, s RouteBackend) {
	ctx := context.Background()
	w := mustWorkspace(t, s, "acme", "")
	p := mustProject(t, s, w.ID, "Shop API")
	m := createIn(t, s, 1, p.ID, "m", "[]")
	mustRoute(t, s, get(p.ID, "/a", m.ID))
	want, err := s.FindProject(ctx, p.ID)
	if err != nil {
		t.Fatal(err)
	}
	if want.Slug != "shop-api" || want.RoutesVersion <= p.RoutesVersion {
		t.Fatalf("project %+v after a route, created as %+v", want, p)
	}
	bySlug, err := s.FindProjectBySlug(ctx, "shop-api")
	if err != nil {
		t.Fatal(err)
	}
	listed, err := s.ListProjects(ctx, w.ID)
	if err != nil {
		t.Fatal(err)
	}
	var inList *decoy.Project
	for _, l := range listed {
		if l.ID == p.ID {
			inList = l
		}
	}
	renamed, err := s.RenameProject(ctx, p.ID, "Shop")
	if err != nil {
		t.Fatal(err)
	}
	for name, got := range map[string]*decoy.Project{"FindProjectBySlug": bySlug, "ListProjects": inList, "RenameProject": renamed} {
		if got == nil || got.ID != p.ID || got.Slug != want.Slug || got.RoutesVersion != want.RoutesVersion || !got.CreatedAt.Equal(p.CreatedAt) {
			t.Errorf("%s = %+v, want %+v", name, got, want)
		}
	}
	// A rename keeps the slug.
	if renamed.Name != "Shop" || renamed.Slug != "shop-api" {
		t.Errorf("renamed: %+v", renamed)
	}
	_, err = s.FindProjectBySlug(ctx, "nope")
	wantError(t, err, decoy.ENOTFOUND, "Project not found")
	_, err = s.FindProjectBySlug(ctx, "Shop-API") // slugs are lower case, compared exactly
	wantError(t, err, decoy.ENOTFOUND, "Project not found")
}

func testSetProjectSlug(t *testing.T, s RouteBackend) {
	ctx := context.Background()
	w := mustWorkspace(t, s, "acme", "")
	a := mustProject(t, s, w.ID, "a")
	b := mustProject(t, s, w.ID, "b")
	got, err := s.SetProjectSlug(ctx, a.ID, "shop")
	if err != nil || got.Slug != "shop" || got.ID != a.ID || got.Name != "a" || got.RoutesVersion <= a.RoutesVersion {
		t.Fatalf("SetProjectSlug = %+v, %v (was %+v)", got, err, a)
	}
	if p, err := s.FindProjectBySlug(ctx, "shop"); err != nil || p.ID != a.ID {
		t.Errorf("by its new slug: %+v, %v", p, err)
	}
	_, err = s.FindProjectBySlug(ctx, "a")
	wantError(t, err, decoy.ENOTFOUND, "Project not found")
	for _, taken := range []string{"shop", "default"} {
		_, err = s.SetProjectSlug(ctx, b.ID, taken)
		wantError(t, err, decoy.ECONFLICT, "Slug taken")
	}
	if p, _ := s.FindProject(ctx, b.ID); p.Slug != "b" || p.RoutesVersion != b.RoutesVersion {
		t.Errorf("a refused change changed %+v", p)
	}
	// Its own slug is no conflict.
	if p, err := s.SetProjectSlug(ctx, a.ID, "shop"); err != nil || p.Slug != "shop" {
		t.Errorf("setting its own slug: %+v, %v", p, err)
	}
	// The slug given up is free.
	if p := mustProject(t, s, w.ID, "A!"); p.Slug != "a" {
		t.Errorf("a new project named a: slug %q", p.Slug)
	}
	_, err = s.SetProjectSlug(ctx, a.ID, "Not a slug")
	wantError(t, err, decoy.EINVALID, "Invalid slug")
	_, err = s.SetProjectSlug(ctx, id(99), "free")
	wantError(t, err, decoy.ENOTFOUND, "Project not found")
	_, err = s.SetProjectSlug(ctx, id(99), "shop")
	wantError(t, err, decoy.ENOTFOUND, "Project not found")
}

func testRoutes(t *testing.T, s RouteBackend) {
	ctx := context.Background()
	w := mustWorkspace(t, s, "acme", "")
	p := mustProject(t, s, w.ID, "api")
	users := createIn(t, s, 1, p.ID, "users", `{"data":[]}`)
	posts := createIn(t, s, 2, p.ID, "posts", `[]`)
	if rs := listRoutes(t, s, p.ID); rs == nil || len(rs) != 0 {
		t.Errorf("routes of a new project: %#v", rs)
	}
	items := "data"
	in := &decoy.Route{ProjectID: p.ID, Method: "GET", Path: "/users/{id}", MockID: users.ID, Action: decoy.ActionRead,
		Bind: map[string]string{"id": "uid"}, Items: &items, RequestSchema: []byte(`{"type":"object"}`)}
	r, err := s.CreateRoute(ctx, in, decoy.DefaultMaxRoutes)
	if err != nil {
		t.Fatal(err)
	}
	if r.ID == "" || r.CreatedAt.IsZero() || !r.UpdatedAt.Equal(r.CreatedAt) || r.ProjectID != p.ID || r.Method != "GET" ||
		r.Path != "/users/{id}" || r.MockID != users.ID || r.Action != decoy.ActionRead || !maps.Equal(r.Bind, in.Bind) ||
		r.Items == nil || *r.Items != "data" || string(r.RequestSchema) != `{"type":"object"}` {
		t.Errorf("created %+v", r)
	}
	if in.ID != "" {
		t.Errorf("CreateRoute changed its argument: %+v", in)
	}
	// A bind not given is an empty one, never nil; a route without items
	// or a request schema has none.
	r2 := mustRoute(t, s, get(p.ID, "/posts", posts.ID))
	r3 := mustRoute(t, s, &decoy.Route{ID: id(77), ProjectID: p.ID, Method: "POST", Path: "/posts", MockID: posts.ID, Action: decoy.ActionCreate, Bind: map[string]string{}})
	if r2.Bind == nil || len(r2.Bind) != 0 || r2.Items != nil || r2.RequestSchema != nil || r3.ID != id(77) {
		t.Errorf("created %+v and %+v", r2, r3)
	}
	_, err = s.CreateRoute(ctx, &decoy.Route{ID: id(77), ProjectID: p.ID, Method: "PUT", Path: "/x", MockID: posts.ID, Action: decoy.ActionRead}, decoy.DefaultMaxRoutes)
	wantError(t, err, decoy.ECONFLICT, "")
	found, err := s.FindRoute(ctx, r.ID)
	if err != nil || found.ID != r.ID || found.Path != r.Path || !maps.Equal(found.Bind, r.Bind) || *found.Items != "data" ||
		!found.CreatedAt.Equal(r.CreatedAt) || string(found.RequestSchema) != `{"type":"object"}` {
		t.Errorf("FindRoute = %+v, %v", found, err)
	}
	if f, err := s.FindRoute(ctx, r2.ID); err != nil || f.Bind == nil || f.Items != nil || f.RequestSchema != nil {
		t.Errorf("FindRoute = %+v, %v", f, err)
	}
	if rs := listRoutes(t, s, p.ID); paths(rs) != "GET /users/{id}, GET /posts, POST /posts" || rs[1].Bind == nil {
		t.Errorf("listed %s", paths(rs))
	}

	// An update changes what it names and keeps the rest.
	upd, err := s.UpdateRoute(ctx, r.ID, decoy.RouteUpdate{Path: ptr("/people/{pid}"), Bind: &map[string]string{"pid": "id"}, Items: &decoy.ItemsUpdate{}})
	if err != nil {
		t.Fatal(err)
	}
	if upd.ID != r.ID || upd.Path != "/people/{pid}" || upd.Method != "GET" || upd.MockID != users.ID || upd.Action != decoy.ActionRead ||
		!maps.Equal(upd.Bind, map[string]string{"pid": "id"}) || upd.Items != nil || !upd.CreatedAt.Equal(r.CreatedAt) ||
		upd.UpdatedAt.Before(r.UpdatedAt) || string(upd.RequestSchema) != `{"type":"object"}` {
		t.Errorf("updated %+v", upd)
	}
	upd, err = s.UpdateRoute(ctx, r.ID, decoy.RouteUpdate{Method: ptr("DELETE"), MockID: &posts.ID, Action: ptr(decoy.ActionDelete),
		Bind: &map[string]string{}, Items: &decoy.ItemsUpdate{Value: ptr("data")}})
	if err != nil || upd.Method != "DELETE" || upd.MockID != posts.ID || upd.Action != decoy.ActionDelete || upd.Bind == nil ||
		len(upd.Bind) != 0 || upd.Items == nil || *upd.Items != "data" || upd.Path != "/people/{pid}" {
		t.Errorf("updated %+v, %v", upd, err)
	}
	if found, err := s.FindRoute(ctx, r.ID); err != nil || found.Method != "DELETE" || *found.Items != "data" {
		t.Errorf("FindRoute after updates = %+v, %v", found, err)
	}
	if upd, err := s.UpdateRoute(ctx, r.ID, decoy.RouteUpdate{}); err != nil || upd.Path != "/people/{pid}" {
		t.Errorf("an empty update: %+v, %v", upd, err)
	}
	// Still in creation order.
	if rs := listRoutes(t, s, p.ID); paths(rs) != "DELETE /people/{pid}, GET /posts, POST /posts" {
		t.Errorf("listed %s", paths(rs))
	}

	if err := s.DeleteRoute(ctx, r2.ID); err != nil {
		t.Fatal(err)
	}
	_, err = s.FindRoute(ctx, r2.ID)
	wantError(t, err, decoy.ENOTFOUND, "Route not found")
	wantError(t, s.DeleteRoute(ctx, r2.ID), decoy.ENOTFOUND, "Route not found")
	_, err = s.UpdateRoute(ctx, r2.ID, decoy.RouteUpdate{Path: ptr("/x")})
	wantError(t, err, decoy.ENOTFOUND, "Route not found")
	if rs := listRoutes(t, s, p.ID); paths(rs) != "DELETE /people/{pid}, POST /posts" {
		t.Errorf("listed %s", paths(rs))
	}
	// The path freed is free.
	mustRoute(t, s, get(p.ID, "/posts", posts.ID))

	_, err = s.CreateRoute(ctx, get(id(99), "/x", users.ID), decoy.DefaultMaxRoutes)
	wantError(t, err, decoy.ENOTFOUND, "Project not found")
	_, err = s.ListRoutes(ctx, id(99))
	wantError(t, err, decoy.ENOTFOUND, "Project not found")
}

// Two routes of a project may not share a method and a path once
// parameter names are left out.
func testRouteShapes(t *testing.T, s RouteBackend) {
	ctx := context.Background()
	w := mustWorkspace(t, s, "acme", "")
	p := mustProject(t, s, w.ID, "api")
	q := mustProject(t, s, w.ID, "other")
	m := createIn(t, s, 1, p.ID, "m", "[]")
	n := createIn(t, s, 2, q.ID, "n", "[]")
	a := mustRoute(t, s, get(p.ID, "/u/{a}", m.ID))
	_, err := s.CreateRoute(ctx, get(p.ID, "/u/{b}", m.ID), decoy.DefaultMaxRoutes)
	wantError(t, err, decoy.ECONFLICT, "Route exists: GET /u/{a}")
	_, err = s.CreateRoute(ctx, get(p.ID, "/u/{a}", m.ID), decoy.DefaultMaxRoutes)
	wantError(t, err, decoy.ECONFLICT, "Route exists: GET /u/{a}")
	// Another method, a literal segment, another depth, another project:
	// other shapes.
	for _, r := range []*decoy.Route{
		{ProjectID: p.ID, Method: "PUT", Path: "/u/{b}", MockID: m.ID, Action: decoy.ActionReplace},
		get(p.ID, "/u/me", m.ID),
		get(p.ID, "/u/{a}/posts", m.ID),
		get(p.ID, "/u", m.ID),
		get(q.ID, "/u/{b}", n.ID),
	} {
		mustRoute(t, s, r)
	}
	// An update into another's shape is refused; one that renames its own
	// parameter is not.
	b := mustRoute(t, s, get(p.ID, "/v/{x}", m.ID))
	_, err = s.UpdateRoute(ctx, b.ID, decoy.RouteUpdate{Path: ptr("/u/{x}")})
	wantError(t, err, decoy.ECONFLICT, "Route exists: GET /u/{a}")
	_, err = s.UpdateRoute(ctx, b.ID, decoy.RouteUpdate{Method: ptr("PUT"), Path: ptr("/u/{x}")})
	wantError(t, err, decoy.ECONFLICT, "Route exists: PUT /u/{b}")
	if got, _ := s.FindRoute(ctx, b.ID); got.Method != "GET" || got.Path != "/v/{x}" {
		t.Errorf("a refused update changed the route: %+v", got)
	}
	if got, err := s.UpdateRoute(ctx, a.ID, decoy.RouteUpdate{Path: ptr("/u/{id}")}); err != nil || got.Path != "/u/{id}" {
		t.Errorf("renaming a parameter: %+v, %v", got, err)
	}
	_, err = s.CreateRoute(ctx, get(p.ID, "/u/{a}", m.ID), decoy.DefaultMaxRoutes)
	wantError(t, err, decoy.ECONFLICT, "Route exists: GET /u/{id}")
	// A deleted route's shape is free.
	if err := s.DeleteRoute(ctx, a.ID); err != nil {
		t.Fatal(err)
	}
	mustRoute(t, s, get(p.ID, "/u/{b}", m.ID))
}

func testRouteMockNotInProject(t *testing.T, s RouteBackend) {
	ctx := context.Background()
	w := mustWorkspace(t, s, "acme", "")
	p := mustProject(t, s, w.ID, "api")
	q := mustProject(t, s, w.ID, "other")
	m := createIn(t, s, 1, p.ID, "m", "[]")
	n := createIn(t, s, 2, q.ID, "n", "[]")
	for _, mockID := range []string{n.ID, id(99)} {
		_, err := s.CreateRoute(ctx, get(p.ID, "/a", mockID), decoy.DefaultMaxRoutes)
		wantError(t, err, decoy.EINVALID, "Mock is not in this project")
	}
	r := mustRoute(t, s, get(p.ID, "/a", m.ID))
	_, err := s.UpdateRoute(ctx, r.ID, decoy.RouteUpdate{MockID: &n.ID})
	wantError(t, err, decoy.EINVALID, "Mock is not in this project")
	if rs := listRoutes(t, s, p.ID); len(rs) != 1 || rs[0].MockID != m.ID {
		t.Errorf("routes after refused writes: %s", paths(rs))
	}
	if rs := listRoutes(t, s, q.ID); len(rs) != 0 {
		t.Errorf("routes of the other project: %s", paths(rs))
	}
}

// A project holds at most maxRoutes routes.
func testRoutesBound(t *testing.T, s RouteBackend) {
	ctx := context.Background()
	w := mustWorkspace(t, s, "acme", "")
	p := mustProject(t, s, w.ID, "api")
	q := mustProject(t, s, w.ID, "other")
	m := createIn(t, s, 1, p.ID, "m", "[]")
	n := createIn(t, s, 2, q.ID, "n", "[]")
	const max = 3
	var rs []*decoy.Route
	for i := range max {
		r, err := s.CreateRoute(ctx, get(p.ID, fmt.Sprint("/r", i), m.ID), max)
		if err != nil {
			t.Fatalf("route %d of %d: %v", i+1, max, err)
		}
		rs = append(rs, r)
	}
	_, err := s.CreateRoute(ctx, get(p.ID, "/one-more", m.ID), max)
	wantError(t, err, decoy.EINVALID, "A project has at most 3 routes")
	if got := listRoutes(t, s, p.ID); len(got) != max {
		t.Errorf("%d routes past the bound", len(got))
	}
	// Another project has its own.
	mustRoute(t, s, get(q.ID, "/one-more", n.ID))
	// A project at its bound still changes its routes.
	if _, err := s.UpdateRoute(ctx, rs[0].ID, decoy.RouteUpdate{Path: ptr("/changed")}); err != nil {
		t.Errorf("an update at the bound: %v", err)
	}
	if err := s.DeleteRoute(ctx, rs[1].ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateRoute(ctx, get(p.ID, "/one-more", m.ID), max); err != nil {
		t.Errorf("a route once there is room: %v", err)
	}
	// A lowered bound refuses growth.
	_, err = s.CreateRoute(ctx, get(p.ID, "/two-more", m.ID), 1)
	wantError(t, err, decoy.EINVALID, "A project has at most 1 routes")
}

// A deleted mock takes its routes with it, as do a deleted project and
// workspace.
func testRoutesCascade(t *testing.T, s RouteBackend) {
	ctx := context.Background()
	w := mustWorkspace(t, s, "acme", "")
	p := mustProject(t, s, w.ID, "api")
	m := createIn(t, s, 1, p.ID, "m", "[]")
	keep := createIn(t, s, 2, p.ID, "keep", "[]")
	r1 := mustRoute(t, s, get(p.ID, "/m", m.ID))
	r2 := mustRoute(t, s, &decoy.Route{ProjectID: p.ID, Method: "POST", Path: "/m", MockID: m.ID, Action: decoy.ActionCreate})
	k := mustRoute(t, s, get(p.ID, "/keep", keep.ID))
	before := routesVersion(t, s, p.ID)
	if err := s.DeleteMock(ctx, m.ID); err != nil {
		t.Fatal(err)
	}
	for _, r := range []*decoy.Route{r1, r2} {
		_, err := s.FindRoute(ctx, r.ID)
		wantError(t, err, decoy.ENOTFOUND, "Route not found")
	}
	if rs := listRoutes(t, s, p.ID); len(rs) != 1 || rs[0].ID != k.ID {
		t.Errorf("routes after their mock went: %s", paths(rs))
	}
	if v := routesVersion(t, s, p.ID); v <= before {
		t.Errorf("routes version %d after a mock took routes with it, was %d", v, before)
	}
	// The path is free again.
	mustRoute(t, s, get(p.ID, "/m", keep.ID))

	q := mustProject(t, s, w.ID, "web")
	n := createIn(t, s, 3, q.ID, "n", "[]")
	rq := mustRoute(t, s, get(q.ID, "/n", n.ID))
	if _, err := s.DeleteProject(ctx, q.ID, true); err != nil {
		t.Fatal(err)
	}
	_, err := s.FindRoute(ctx, rq.ID)
	wantError(t, err, decoy.ENOTFOUND, "Route not found")
	_, err = s.ListRoutes(ctx, q.ID)
	wantError(t, err, decoy.ENOTFOUND, "Project not found")

	if _, err := s.DeleteWorkspace(ctx, w.ID); err != nil {
		t.Fatal(err)
	}
	_, err = s.FindRoute(ctx, k.ID)
	wantError(t, err, decoy.ENOTFOUND, "Route not found")
	_, err = s.FindProjectBySlug(ctx, p.Slug)
	wantError(t, err, decoy.ENOTFOUND, "Project not found")
}

// Every kind of change to a project's routes, and to its slug, advances
// its RoutesVersion; changes to another project's do not.
func testRoutesVersion(t *testing.T, s RouteBackend) {
	ctx := context.Background()
	w := mustWorkspace(t, s, "acme", "")
	p := mustProject(t, s, w.ID, "api")
	q := mustProject(t, s, w.ID, "other")
	m := createIn(t, s, 1, p.ID, "m", "[]")
	n := createIn(t, s, 2, q.ID, "n", "[]")
	gone := createIn(t, s, 3, p.ID, "gone", "[]")
	var r *decoy.Route
	last, other := routesVersion(t, s, p.ID), routesVersion(t, s, q.ID)
	for _, step := range []struct {
		name string
		do   func() error
	}{
		{"CreateRoute", func() (err error) { r, err = s.CreateRoute(ctx, get(p.ID, "/a", m.ID), 10); return err }},
		{"CreateRoute", func() error { _, err := s.CreateRoute(ctx, get(p.ID, "/gone", gone.ID), 10); return err }},
		{"UpdateRoute", func() error { _, err := s.UpdateRoute(ctx, r.ID, decoy.RouteUpdate{Path: ptr("/b")}); return err }},
		{"UpdateRoute", func() error { _, err := s.UpdateRoute(ctx, r.ID, decoy.RouteUpdate{}); return err }},
		{"SetProjectSlug", func() error { _, err := s.SetProjectSlug(ctx, p.ID, "shop"); return err }},
		{"DeleteMock", func() error { return s.DeleteMock(ctx, gone.ID) }},
		{"WriteImport", func() error {
			_, err := s.WriteImport(ctx, decoy.ImportBatch{ProjectID: p.ID, MaxRoutes: 10, Routes: []*decoy.Route{get("", "/c", m.ID)}})
			return err
		}},
		{"WriteImportUpdate", func() error {
			_, err := s.WriteImport(ctx, decoy.ImportBatch{ProjectID: p.ID, MaxRoutes: 10, Routes: []*decoy.Route{{ID: r.ID, Method: "GET", Path: "/d", MockID: m.ID, Action: decoy.ActionRead}}})
			return err
		}},
		{"DeleteRoute", func() error { return s.DeleteRoute(ctx, r.ID) }},
	} {
		if err := step.do(); err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		v := routesVersion(t, s, p.ID)
		if v <= last {
			t.Errorf("%s: routes version %d, was %d", step.name, v, last)
		}
		last = v
		if v := routesVersion(t, s, q.ID); v != other {
			t.Errorf("%s changed another project's routes version: %d, was %d", step.name, v, other)
		}
	}
	// Refused changes change nothing.
	_, err := s.CreateRoute(ctx, get(p.ID, "/x", n.ID), 10)
	wantError(t, err, decoy.EINVALID, "")
	if v := routesVersion(t, s, p.ID); v != last {
		t.Errorf("a refused route moved the routes version: %d, was %d", v, last)
	}
}

// Concurrent creates of one shape: exactly one wins. Concurrent creates of
// many shapes against a bound: exactly the bound are stored.
func testRoutesConcurrent(t *testing.T, s RouteBackend) {
	ctx := context.Background()
	w := mustWorkspace(t, s, "acme", "")
	p := mustProject(t, s, w.ID, "api")
	m := createIn(t, s, 1, p.ID, "m", "[]")
	const n = 12
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			_, errs[i] = s.CreateRoute(ctx, get(p.ID, fmt.Sprintf("/items/{p%d}", i), m.ID), decoy.DefaultMaxRoutes)
		})
	}
	wg.Wait()
	won := 0
	for _, err := range errs {
		switch {
		case err == nil:
			won++
		case decoy.ErrorCode(err) != decoy.ECONFLICT || !strings.HasPrefix(decoy.ErrorMessage(err), "Route exists: GET /items/{p"):
			t.Errorf("a create that lost: %v", err)
		}
	}
	if rs := listRoutes(t, s, p.ID); won != 1 || len(rs) != 1 {
		t.Errorf("%d creates of one shape won, %d routes stored", won, len(rs))
	}

	const bound = 5
	for i := range n {
		wg.Go(func() {
			_, errs[i] = s.CreateRoute(ctx, get(p.ID, fmt.Sprintf("/bound/%d", i), m.ID), bound)
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil && decoy.ErrorMessage(err) != fmt.Sprintf("A project has at most %d routes", bound) {
			t.Errorf("a create past the bound: %v", err)
		}
	}
	if rs := listRoutes(t, s, p.ID); len(rs) != bound {
		t.Errorf("%d routes stored by concurrent creates against a bound of %d", len(rs), bound)
	}

	// Routes written on a mock while it is deleted: each write is refused
	// or goes with the mock, and none waits on another for ever.
	doomed := createIn(t, s, 2, p.ID, "doomed", "[]")
	old := mustRoute(t, s, get(p.ID, "/doomed/old", doomed.ID))
	errs = make([]error, 3*n)
	for i := range n {
		wg.Go(func() {
			_, errs[3*i] = s.CreateRoute(ctx, get(p.ID, fmt.Sprint("/doomed/", i), doomed.ID), decoy.DefaultMaxRoutes)
		})
		wg.Go(func() {
			_, errs[3*i+1] = s.UpdateRoute(ctx, old.ID, decoy.RouteUpdate{Path: ptr(fmt.Sprint("/doomed/old", i))})
		})
		if i == n/2 {
			wg.Go(func() { errs[3*i+2] = s.DeleteMock(ctx, doomed.ID) })
		}
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil && !errors.Is(err, decoy.ErrMockNotInProject) && !errors.Is(err, decoy.ErrRouteNotFound) {
			t.Errorf("a write while the mock went: %v", err)
		}
	}
	for _, r := range listRoutes(t, s, p.ID) {
		if r.MockID == doomed.ID {
			t.Errorf("a route of a deleted mock: %s %s", r.Method, r.Path)
		}
	}
}

// importBatch creates mocks n (a collection) and n+1 in project p, with
// routes on them.
func importBatch(p string, n int) decoy.ImportBatch {
	items := "data"
	return decoy.ImportBatch{
		ProjectID: p,
		MaxRoutes: decoy.DefaultMaxRoutes,
		Create: []decoy.NewMock{
			{Mock: &decoy.Mock{ID: id(n), Name: "users", ContentType: "application/json", Status: 200, ETag: `"u"`},
				Data: bytesOf(`{"data":[{"id":1}]}`)},
			{Mock: &decoy.Mock{ID: id(n + 1), Name: "health", ContentType: "application/json", Status: 204, ETag: `"h"`},
				Data: bytesOf(`{}`), Template: &decoy.Template{Mode: decoy.TemplateOnce, ContentType: "application/json", Body: []byte(`{"ok":true}`)}},
		},
		Routes: []*decoy.Route{
			{Method: "GET", Path: "/users", MockID: id(n), Action: decoy.ActionRead, Items: &items},
			{Method: "POST", Path: "/users", MockID: id(n), Action: decoy.ActionCreate, Items: &items, RequestSchema: []byte(`{"type":"object"}`)},
			{Method: "GET", Path: "/users/{id}", MockID: id(n), Action: decoy.ActionRead, Items: &items, Bind: map[string]string{"id": "id"}},
			{Method: "GET", Path: "/health", MockID: id(n + 1), Action: decoy.ActionRead},
		},
	}
}

func testWriteImport(t *testing.T, s RouteBackend) {
	ctx := context.Background()
	w := mustWorkspace(t, s, "acme", "")
	p := mustProject(t, s, w.ID, "api")
	old := createIn(t, s, 9, p.ID, "old", `["v1"]`)
	b := importBatch(p.ID, 1)
	b.Replace = []decoy.MockReplacement{{ID: old.ID, Data: decoy.MockData{ContentType: "text/plain", Data: bytesOf("v2"), ETag: `"v2"`}}}
	b.Routes = append(b.Routes, get("", "/old", old.ID))
	got, err := s.WriteImport(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Created) != 2 || got.Created[0].ID != id(1) || got.Created[1].ID != id(2) || got.Created[0].ProjectID != p.ID ||
		got.Created[0].WorkspaceID != w.ID || got.Created[1].TemplateMode != decoy.TemplateOnce || got.Created[1].Status != 204 {
		t.Errorf("created %+v", got.Created)
	}
	if len(got.Replaced) != 1 || got.Replaced[0].ID != old.ID || got.Replaced[0].ContentType != "text/plain" || got.Replaced[0].Size != 2 {
		t.Errorf("replaced %+v", got.Replaced)
	}
	if paths(got.Routes) != "GET /users, POST /users, GET /users/{id}, GET /health, GET /old" {
		t.Errorf("routes %s", paths(got.Routes))
	}
	for _, r := range got.Routes {
		if r.ID == "" || r.ProjectID != p.ID || r.Bind == nil || r.CreatedAt.IsZero() {
			t.Errorf("route %+v", r)
		}
	}
	if string(got.Routes[1].RequestSchema) != `{"type":"object"}` || *got.Routes[0].Items != "data" || got.Routes[2].Bind["id"] != "id" {
		t.Errorf("routes %+v", got.Routes)
	}
	if d, err := find(t, s, 1); err != nil || d != `{"data":[{"id":1}]}` {
		t.Errorf("data of a created mock: %q, %v", d, err)
	}
	if d, err := find(t, s, 9); err != nil || d != "v2" {
		t.Errorf("replaced data: %q, %v", d, err)
	}
	if vs, err := s.MockVersions(ctx, old.ID); err != nil || numbers(vs) != "2* 1" {
		t.Errorf("versions of the replaced mock: %s, %v", numbers(vs), err)
	}
	if tpl, err := s.FindTemplate(ctx, id(2)); err != nil || string(tpl.Body) != `{"ok":true}` {
		t.Errorf("template of a created mock: %+v, %v", tpl, err)
	}
	if rs := listRoutes(t, s, p.ID); paths(rs) != paths(got.Routes) {
		t.Errorf("listed %s", paths(rs))
	}
	// An empty batch writes nothing; one into no project is refused.
	if got, err := s.WriteImport(ctx, decoy.ImportBatch{ProjectID: p.ID}); err != nil || len(got.Created)+len(got.Replaced)+len(got.Routes) != 0 {
		t.Errorf("an empty batch: %+v, %v", got, err)
	}
	_, err = s.WriteImport(ctx, importBatch(id(99), 3))
	wantError(t, err, decoy.ENOTFOUND, "Project not found")
}

// A batch that cannot be written whole writes nothing: no mock, no data,
// no version, no route.
func testWriteImportAllOrNothing(t *testing.T, s RouteBackend) {
	ctx := context.Background()
	w := mustWorkspace(t, s, "acme", "")
	p := mustProject(t, s, w.ID, "api")
	q := mustProject(t, s, w.ID, "other")
	old := createIn(t, s, 9, p.ID, "old", `["v1"]`)
	elsewhere := createIn(t, s, 8, q.ID, "elsewhere", `[]`)
	taken := mustRoute(t, s, get(p.ID, "/taken/{a}", old.ID))
	theirs := mustRoute(t, s, get(q.ID, "/theirs", elsewhere.ID))
	version := routesVersion(t, s, p.ID)
	mocks, bytes, err := s.WorkspaceUsage(ctx, w.ID)
	if err != nil {
		t.Fatal(err)
	}
	replace := []decoy.MockReplacement{{ID: old.ID, Data: decoy.MockData{ContentType: "application/json", Data: bytesOf(`["v2"]`), ETag: `"v2"`},
		Template: &decoy.Template{Mode: decoy.TemplateAlways, ContentType: "application/json", Body: []byte(`[]`)}}}
	for _, tt := range []struct {
		name      string
		change    func(b *decoy.ImportBatch)
		code, msg string
	}{
		{"LastRouteConflicts", func(b *decoy.ImportBatch) {
			b.Routes = append(b.Routes, get("", "/taken/{b}", id(1)))
		}, decoy.ECONFLICT, "Route exists: GET /taken/{a}"},
		{"TwoRoutesConflict", func(b *decoy.ImportBatch) {
			b.Routes = append(b.Routes, get("", "/users/{other}", id(1)))
		}, decoy.ECONFLICT, "Route exists: GET /users/{id}"},
		{"MockNotInProject", func(b *decoy.ImportBatch) {
			b.Routes = append(b.Routes, get("", "/elsewhere", elsewhere.ID))
		}, decoy.EINVALID, "Mock is not in this project"},
		{"PastMaxRoutes", func(b *decoy.ImportBatch) { b.MaxRoutes = 4 }, decoy.EINVALID, "A project has at most 4 routes"},
		{"ReplaceElsewhere", func(b *decoy.ImportBatch) {
			b.Replace = append(b.Replace, decoy.MockReplacement{ID: elsewhere.ID, Data: decoy.MockData{ContentType: "application/json", Data: bytesOf("[1]")}})
		}, decoy.ENOTFOUND, ""},
		{"ReplaceGone", func(b *decoy.ImportBatch) {
			b.Replace = append(b.Replace, decoy.MockReplacement{ID: id(99), Data: decoy.MockData{ContentType: "application/json", Data: bytesOf("[1]")}})
		}, decoy.ENOTFOUND, ""},
		{"MockTaken", func(b *decoy.ImportBatch) {
			b.Create = append(b.Create, decoy.NewMock{Mock: &decoy.Mock{ID: old.ID, ContentType: "application/json", Status: 200}, Data: bytesOf("[]")})
		}, decoy.ECONFLICT, ""},
		{"UpdateOfAnotherProjectsRoute", func(b *decoy.ImportBatch) {
			b.Routes = append(b.Routes, &decoy.Route{ID: theirs.ID, Method: "GET", Path: "/mine", MockID: id(1), Action: decoy.ActionRead})
		}, decoy.ENOTFOUND, "Route not found"},
		{"MockOfAnotherProject", func(b *decoy.ImportBatch) {
			b.Create[1].Mock.ProjectID = q.ID
		}, decoy.EINVALID, ""},
		{"RouteOfAnotherProject", func(b *decoy.ImportBatch) {
			b.Routes[0].ProjectID = q.ID
		}, decoy.EINVALID, ""},
		{"RouteGivenTwice", func(b *decoy.ImportBatch) {
			b.Routes = append(b.Routes,
				&decoy.Route{ID: taken.ID, Method: "GET", Path: "/t1", MockID: id(1), Action: decoy.ActionRead},
				&decoy.Route{ID: taken.ID, Method: "GET", Path: "/t2", MockID: id(1), Action: decoy.ActionRead})
		}, decoy.EINVALID, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			b := importBatch(p.ID, 1)
			b.Replace = replace
			tt.change(&b)
			_, err := s.WriteImport(ctx, b)
			wantError(t, err, tt.code, tt.msg)
			for _, n := range []int{1, 2} {
				if _, err := s.FindMock(ctx, id(n)); decoy.ErrorCode(err) != decoy.ENOTFOUND {
					t.Errorf("mock %d of a refused import: %v", n, err)
				}
			}
			if d, err := find(t, s, 9); err != nil || d != `["v1"]` {
				t.Errorf("data of a mock a refused import replaced: %q, %v", d, err)
			}
			if vs, err := s.MockVersions(ctx, old.ID); err != nil || numbers(vs) != "1*" {
				t.Errorf("versions after a refused import: %s, %v", numbers(vs), err)
			}
			if m, err := s.FindMock(ctx, old.ID); err != nil || m.TemplateMode != "" || m.Version != old.Version {
				t.Errorf("the mock a refused import replaced: %+v, %v", m, err)
			}
			if rs := listRoutes(t, s, p.ID); len(rs) != 1 || rs[0].ID != taken.ID || rs[0].Path != "/taken/{a}" {
				t.Errorf("routes after a refused import: %s", paths(rs))
			}
			if r, err := s.FindRoute(ctx, theirs.ID); err != nil || r.Path != "/theirs" {
				t.Errorf("another project's route: %+v, %v", r, err)
			}
			if v := routesVersion(t, s, p.ID); v != version {
				t.Errorf("routes version %d after a refused import, was %d", v, version)
			}
			if m, b, err := s.WorkspaceUsage(ctx, w.ID); err != nil || m != mocks || b != bytes {
				t.Errorf("usage %d mocks, %d bytes after a refused import, was %d, %d (%v)", m, b, mocks, bytes, err)
			}
		})
	}
	// The workspace's limits count the batch whole: the mocks it creates,
	// and the data it replaces, kept as versions.
	t.Run("Limits", func(t *testing.T) {
		if _, err := s.UpdateWorkspace(ctx, w.ID, decoy.WorkspaceUpdate{Limits: map[string]*int64{"max_mocks": ptr(mocks + 1)}}); err != nil {
			t.Fatal(err)
		}
		b := importBatch(p.ID, 1)
		_, err := s.WriteImport(ctx, b)
		wantError(t, err, decoy.EFORBIDDEN, "Workspace limit reached: max_mocks")
		size := int64(len(`{"data":[{"id":1}]}`) + len(`{}`))
		if _, err := s.UpdateWorkspace(ctx, w.ID, decoy.WorkspaceUpdate{Limits: map[string]*int64{"max_mocks": nil, "max_bytes": ptr(bytes + size + 5)}}); err != nil {
			t.Fatal(err)
		}
		b.Replace = replace // 6 bytes more
		_, err = s.WriteImport(ctx, b)
		wantError(t, err, decoy.EFORBIDDEN, "Workspace limit reached: max_bytes")
		if m, _, _ := s.WorkspaceUsage(ctx, w.ID); m != mocks {
			t.Errorf("%d mocks after imports past the limits, was %d", m, mocks)
		}
		if _, err := s.UpdateWorkspace(ctx, w.ID, decoy.WorkspaceUpdate{Limits: map[string]*int64{"max_bytes": ptr(bytes + size + 6)}}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.WriteImport(ctx, b); err != nil {
			t.Errorf("an import up to the limit exactly: %v", err)
		}
	})
}

// Importing again updates in place: the routes and mocks keep their ids,
// the mocks get their new data as a new version, and nothing is doubled.
func testWriteImportInPlace(t *testing.T, s RouteBackend) {
	ctx := context.Background()
	w := mustWorkspace(t, s, "acme", "")
	p := mustProject(t, s, w.ID, "api")
	first, err := s.WriteImport(ctx, importBatch(p.ID, 1))
	if err != nil {
		t.Fatal(err)
	}
	version := routesVersion(t, s, p.ID)
	again := decoy.ImportBatch{ProjectID: p.ID, MaxRoutes: len(first.Routes)}
	for _, m := range first.Created {
		again.Replace = append(again.Replace, decoy.MockReplacement{ID: m.ID,
			Data: decoy.MockData{ContentType: "application/json", Data: bytesOf(`{"data":[{"id":2}]}`), ETag: `"2"`}})
	}
	again.Replace[1].Template = &decoy.Template{Mode: decoy.TemplateAlways, ContentType: "application/schema+json", Body: []byte(`{"type":"null"}`)}
	for _, r := range first.Routes {
		nr := *r
		nr.CreatedAt, nr.UpdatedAt = time.Time{}, time.Time{}
		nr.RequestSchema = []byte(`{"type":"array"}`)
		nr.Bind = nil
		again.Routes = append(again.Routes, &nr)
	}
	got, err := s.WriteImport(ctx, again)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Created) != 0 || len(got.Replaced) != 2 || got.Replaced[0].ID != id(1) || got.Replaced[1].TemplateMode != decoy.TemplateAlways {
		t.Errorf("written %+v", got)
	}
	for i, r := range got.Routes {
		f := first.Routes[i]
		if r.ID != f.ID || r.MockID != f.MockID || r.Path != f.Path || !r.CreatedAt.Equal(f.CreatedAt) || r.UpdatedAt.Before(f.UpdatedAt) ||
			string(r.RequestSchema) != `{"type":"array"}` || r.Bind == nil || len(r.Bind) != 0 {
			t.Errorf("route %d: %+v, was %+v", i, r, f)
		}
	}
	rs := listRoutes(t, s, p.ID)
	if len(rs) != len(first.Routes) {
		t.Errorf("%d routes after importing again, was %d", len(rs), len(first.Routes))
	}
	for i, r := range rs {
		if r.ID != first.Routes[i].ID {
			t.Errorf("listed route %d: %s, want %s", i, r.ID, first.Routes[i].ID)
		}
	}
	if mocks, _, err := s.SearchMocks(ctx, decoy.MockFilter{ProjectID: p.ID}, "", 10); err != nil || len(mocks) != 2 {
		t.Errorf("%d mocks after importing again (%v)", len(mocks), err)
	}
	if d, err := find(t, s, 1); err != nil || d != `{"data":[{"id":2}]}` {
		t.Errorf("data after importing again: %q, %v", d, err)
	}
	if vs, err := s.MockVersions(ctx, id(1)); err != nil || numbers(vs) != "2* 1" {
		t.Errorf("versions after importing again: %s, %v", numbers(vs), err)
	}
	if tpl, err := s.FindTemplate(ctx, id(2)); err != nil || tpl.Mode != decoy.TemplateAlways || string(tpl.Body) != `{"type":"null"}` {
		t.Errorf("template after importing again: %+v, %v", tpl, err)
	}
	if v := routesVersion(t, s, p.ID); v <= version {
		t.Errorf("routes version %d after importing again, was %d", v, version)
	}
}

// The checks of an import are made against the routes as they are once it
// is written: routes of the batch may trade shapes, and a new route may
// take the shape an updated one leaves.
func testWriteImportAgainstResult(t *testing.T, s RouteBackend) {
	ctx := context.Background()
	w := mustWorkspace(t, s, "acme", "")
	p := mustProject(t, s, w.ID, "api")
	m := createIn(t, s, 1, p.ID, "m", "[]")
	a := mustRoute(t, s, get(p.ID, "/a/{x}", m.ID))
	b := mustRoute(t, s, get(p.ID, "/b", m.ID))
	got, err := s.WriteImport(ctx, decoy.ImportBatch{ProjectID: p.ID, MaxRoutes: 3, Routes: []*decoy.Route{
		{ID: a.ID, Method: "GET", Path: "/b", MockID: m.ID, Action: decoy.ActionRead},
		get("", "/a/{y}", m.ID),
		{ID: b.ID, Method: "GET", Path: "/c", MockID: m.ID, Action: decoy.ActionRead},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if paths(got.Routes) != "GET /b, GET /a/{y}, GET /c" || got.Routes[0].ID != a.ID || got.Routes[2].ID != b.ID {
		t.Errorf("written %s", paths(got.Routes))
	}
	if rs := listRoutes(t, s, p.ID); paths(rs) != "GET /b, GET /c, GET /a/{y}" {
		t.Errorf("listed %s", paths(rs))
	}
	// At its bound, a batch that only updates passes; one that adds does
	// not.
	all := listRoutes(t, s, p.ID)
	_, err = s.WriteImport(ctx, decoy.ImportBatch{ProjectID: p.ID, MaxRoutes: 3, Routes: []*decoy.Route{
		{ID: all[0].ID, Method: "GET", Path: "/c", MockID: m.ID, Action: decoy.ActionRead},
		{ID: all[1].ID, Method: "GET", Path: "/b", MockID: m.ID, Action: decoy.ActionRead},
	}})
	if err != nil {
		t.Errorf("a swap at the bound: %v", err)
	}
	_, err = s.WriteImport(ctx, decoy.ImportBatch{ProjectID: p.ID, MaxRoutes: 3, Routes: []*decoy.Route{get("", "/d", m.ID)}})
	wantError(t, err, decoy.EINVALID, "A project has at most 3 routes")
}

// A route keeps its rules (§13.1) as they were given, bodies and
// templates byte for byte (compact), and none as an empty list; an update
// replaces them only when it names them, and advances the routes'
// version; an import keeps the rules of a route it replaces unless it
// gives some.
func testRouteRules(t *testing.T, s RouteBackend) {
	ctx := context.Background()
	w := mustWorkspace(t, s, "acme", "")
	p := mustProject(t, s, w.ID, "api")
	users := createIn(t, s, 1, p.ID, "users", `[]`)
	status, times := 503, int64(2)
	rules := []decoy.Rule{
		{Name: "down", When: "header.x-mode=down&method=GET", Status: &status, Times: &times,
			Headers: map[string]string{"Retry-After": "1"}, DelayMS: 250, Body: json.RawMessage(`{"error":"<down> & out","n":[1,2.50,{}]}`)},
		{Name: "who", Template: json.RawMessage(`{"id":"{{ request.path.id }}"}`)},
		{Fault: decoy.FaultReset, When: "query.fail=1"},
		{},
	}
	r, err := s.CreateRoute(ctx, &decoy.Route{ProjectID: p.ID, Method: "GET", Path: "/users/{id}", MockID: users.ID, Action: decoy.ActionRead, Rules: rules}, decoy.DefaultMaxRoutes)
	if err != nil {
		t.Fatal(err)
	}
	same := func(what string, got []decoy.Rule, want []decoy.Rule) {
		t.Helper()
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(want)
		if got == nil || string(g) != string(w) {
			t.Errorf("%s: rules %s, want %s", what, g, w)
		}
	}
	same("created", r.Rules, rules)
	if string(r.Rules[0].Body) != `{"error":"<down> & out","n":[1,2.50,{}]}` {
		t.Errorf("a body stored as %s", r.Rules[0].Body)
	}
	found, err := s.FindRoute(ctx, r.ID)
	if err != nil {
		t.Fatal(err)
	}
	same("found", found.Rules, rules)
	same("listed", listRoutes(t, s, p.ID)[0].Rules, rules)

	plain := mustRoute(t, s, get(p.ID, "/users", users.ID))
	same("none", plain.Rules, []decoy.Rule{})

	// Named, replaced; not named, kept.
	version := routesVersion(t, s, p.ID)
	upd, err := s.UpdateRoute(ctx, r.ID, decoy.RouteUpdate{Rules: &[]decoy.Rule{rules[3]}})
	if err != nil {
		t.Fatal(err)
	}
	same("updated", upd.Rules, []decoy.Rule{{}})
	if v := routesVersion(t, s, p.ID); v <= version {
		t.Errorf("routes version %d after a change of rules, was %d", v, version)
	}
	if _, err = s.UpdateRoute(ctx, r.ID, decoy.RouteUpdate{Rules: &rules}); err != nil {
		t.Fatal(err)
	}
	upd, err = s.UpdateRoute(ctx, r.ID, decoy.RouteUpdate{Path: ptr("/people/{id}")})
	if err != nil {
		t.Fatal(err)
	}
	same("kept by another update", upd.Rules, rules)
	upd, err = s.UpdateRoute(ctx, r.ID, decoy.RouteUpdate{Rules: &[]decoy.Rule{}})
	if err != nil {
		t.Fatal(err)
	}
	same("cleared", upd.Rules, []decoy.Rule{})

	// An import that gives no rules keeps them; one that gives some sets
	// them; a new route of an import has none unless given.
	if _, err := s.UpdateRoute(ctx, r.ID, decoy.RouteUpdate{Rules: &rules}); err != nil {
		t.Fatal(err)
	}
	again := *upd
	again.Rules, again.CreatedAt, again.UpdatedAt = nil, time.Time{}, time.Time{}
	given := *plain
	given.Rules, given.CreatedAt, given.UpdatedAt = rules[1:2], time.Time{}, time.Time{}
	got, err := s.WriteImport(ctx, decoy.ImportBatch{ProjectID: p.ID, MaxRoutes: decoy.DefaultMaxRoutes, Routes: []*decoy.Route{
		&again, &given, {Method: "POST", Path: "/users", MockID: users.ID, Action: decoy.ActionCreate},
	}})
	if err != nil {
		t.Fatal(err)
	}
	same("kept by an import", got.Routes[0].Rules, rules)
	same("set by an import", got.Routes[1].Rules, rules[1:2])
	same("new by an import", got.Routes[2].Rules, []decoy.Rule{})
}

// loader gives an import's documents from files, as an import that
// streams does (see decoy.ImportBatch.Load), and counts those held.
type loader struct {
	t    *testing.T
	docs []string
	// failAt is the document whose load fails (-1: none).
	failAt       int
	held, most   int
	loaded, done int
}

func (l *loader) load(_ context.Context, i int) (decoy.Data, func(), error) {
	if i == l.failAt {
		return decoy.Data{}, nil, errors.New("the upload ended")
	}
	f, err := os.CreateTemp(l.t.TempDir(), "doc-*")
	if err != nil {
		return decoy.Data{}, nil, err
	}
	if _, err := f.WriteString(l.docs[i]); err != nil {
		return decoy.Data{}, nil, err
	}
	l.loaded++
	l.held++
	l.most = max(l.most, l.held)
	released := false
	return decoy.Data{Bytes: []byte(l.docs[i]), File: f}, func() {
		if released {
			l.t.Errorf("document %d released twice", i)
		}
		released = true
		l.held--
		l.done++
		f.Close()
	}, nil
}

// loadedBatch creates mocks 1 to n of project p and replaces the data of
// mock old, their documents given by l, with a route on each.
func loadedBatch(p string, n int, old string, l *loader) decoy.ImportBatch {
	b := decoy.ImportBatch{ProjectID: p, MaxRoutes: decoy.DefaultMaxRoutes, Load: l.load}
	for i := 1; i <= n; i++ {
		doc := fmt.Sprintf(`[{"id":%d,"pad":"%s"}]`, i, strings.Repeat("x", 100*i))
		l.docs = append(l.docs, doc)
		b.Create = append(b.Create, decoy.NewMock{Mock: &decoy.Mock{ID: id(i), Name: fmt.Sprint("m", i), ContentType: "application/json",
			Status: 200, ETag: fmt.Sprintf(`"%d"`, i), Size: int64(len(doc))}})
		b.Routes = append(b.Routes, get("", fmt.Sprint("/m", i), id(i)))
	}
	l.docs = append(l.docs, `"replaced"`)
	b.Replace = []decoy.MockReplacement{{ID: old, Data: decoy.MockData{ContentType: "application/json", ETag: `"r"`}, Size: int64(len(`"replaced"`))}}
	return b
}

// An import whose documents are loaded one at a time (an import that
// streams) holds one at a time, releases each, and stores them; one whose
// load fails midway, or that gives a document of another size than said,
// stores nothing.
func testWriteImportLoaded(t *testing.T, s RouteBackend) {
	ctx := context.Background()
	w := mustWorkspace(t, s, "acme", "")
	p := mustProject(t, s, w.ID, "api")
	old := createIn(t, s, 99, p.ID, "old", `["v1"]`)
	mocks, bytes, err := s.WorkspaceUsage(ctx, w.ID)
	if err != nil {
		t.Fatal(err)
	}
	const n = 5
	nothing := func(t *testing.T) {
		t.Helper()
		for i := 1; i <= n; i++ {
			if _, err := s.FindMock(ctx, id(i)); decoy.ErrorCode(err) != decoy.ENOTFOUND {
				t.Errorf("mock %d of a failed import: %v", i, err)
			}
		}
		if d, err := find(t, s, 99); err != nil || d != `["v1"]` {
			t.Errorf("data of the mock a failed import replaced: %q, %v", d, err)
		}
		if vs, err := s.MockVersions(ctx, old.ID); err != nil || numbers(vs) != "1*" {
			t.Errorf("versions after a failed import: %s, %v", numbers(vs), err)
		}
		if rs := listRoutes(t, s, p.ID); len(rs) != 0 {
			t.Errorf("routes after a failed import: %s", paths(rs))
		}
		if m, b, err := s.WorkspaceUsage(ctx, w.ID); err != nil || m != mocks || b != bytes {
			t.Errorf("usage %d mocks, %d bytes after a failed import, was %d, %d (%v)", m, b, mocks, bytes, err)
		}
	}
	for _, failAt := range []int{0, 2, n} {
		t.Run(fmt.Sprint("FailAt", failAt), func(t *testing.T) {
			l := &loader{t: t, failAt: failAt}
			if _, err := s.WriteImport(ctx, loadedBatch(p.ID, n, old.ID, l)); err == nil || !strings.Contains(err.Error(), "the upload ended") {
				t.Fatalf("an import whose document %d failed to load: %v", failAt, err)
			}
			if l.held != 0 || l.loaded != failAt {
				t.Errorf("%d documents loaded, %d held after the import, want %d and 0", l.loaded, l.held, failAt)
			}
			nothing(t)
		})
	}
	t.Run("WrongSize", func(t *testing.T) {
		l := &loader{t: t, failAt: -1}
		b := loadedBatch(p.ID, n, old.ID, l)
		b.Create[3].Mock.Size++
		if _, err := s.WriteImport(ctx, b); err == nil {
			t.Fatal("a document of another size than said was stored")
		}
		if l.held != 0 {
			t.Errorf("%d documents held after the import", l.held)
		}
		nothing(t)
	})
	t.Run("Written", func(t *testing.T) {
		l := &loader{t: t, failAt: -1}
		got, err := s.WriteImport(ctx, loadedBatch(p.ID, n, old.ID, l))
		if err != nil {
			t.Fatal(err)
		}
		if l.most != 1 || l.loaded != n+1 || l.done != n+1 {
			t.Errorf("%d documents held at once, %d loaded, %d released; want 1, %d, %d", l.most, l.loaded, l.done, n+1, n+1)
		}
		if len(got.Created) != n || len(got.Replaced) != 1 || len(got.Routes) != n {
			t.Fatalf("written %d created, %d replaced, %d routes", len(got.Created), len(got.Replaced), len(got.Routes))
		}
		for i := 1; i <= n; i++ {
			if d, err := find(t, s, i); err != nil || d != l.docs[i-1] {
				t.Errorf("data of mock %d: %q, %v", i, d, err)
			}
			if m := got.Created[i-1]; m.Size != int64(len(l.docs[i-1])) || m.ETag != fmt.Sprintf(`"%d"`, i) {
				t.Errorf("mock %d: size %d, etag %s", i, m.Size, m.ETag)
			}
		}
		if d, err := find(t, s, 99); err != nil || d != `"replaced"` || got.Replaced[0].Size != int64(len(`"replaced"`)) {
			t.Errorf("replaced data: %q, %v", d, err)
		}
		var sum int64
		for _, d := range l.docs {
			sum += int64(len(d))
		}
		if m, b, err := s.WorkspaceUsage(ctx, w.ID); err != nil || m != mocks+n || b != bytes+sum {
			t.Errorf("usage %d mocks, %d bytes, want %d, %d (%v)", m, b, mocks+n, bytes+sum, err)
		}
	})
}
