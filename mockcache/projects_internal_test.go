package mockcache

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/decoy-mock/decoy"
)

// routeStore is a store of projects' routes in memory, counting its calls.
type routeStore struct {
	decoy.RouteStore // what the tests do not call
	projects         map[string]*decoy.Project
	routes           map[string][]*decoy.Route
	finds, lists     atomic.Int64
	// gate, when set, holds every ListRoutes until it is closed.
	gate chan struct{}
}

func (s *routeStore) FindProjectBySlug(_ context.Context, slug string) (*decoy.Project, error) {
	s.finds.Add(1)
	p, ok := s.projects[slug]
	if !ok {
		return nil, decoy.Errorf(decoy.ENOTFOUND, "Project not found")
	}
	cp := *p
	return &cp, nil
}

func (s *routeStore) ListRoutes(_ context.Context, projectID string) ([]*decoy.Route, error) {
	s.lists.Add(1)
	if s.gate != nil {
		<-s.gate
	}
	return s.routes[projectID], nil
}

// newRouteStore has n projects, p0…, each with routes routes.
func newRouteStore(n, routes int) *routeStore {
	s := &routeStore{projects: map[string]*decoy.Project{}, routes: map[string][]*decoy.Route{}}
	for i := range n {
		id := fmt.Sprintf("id%d", i)
		slug := fmt.Sprintf("p%d", i)
		s.projects[slug] = &decoy.Project{ID: id, Slug: slug, RoutesVersion: 1}
		for k := range routes {
			s.routes[id] = append(s.routes[id], &decoy.Route{ID: fmt.Sprint(k), Method: "GET", Path: fmt.Sprintf("/r%d", k), MockID: "m", Action: decoy.ActionRead})
		}
	}
	return s
}

// The tables kept are bounded in number and in routes; the least recently
// used leave first, and a table is served whatever the bounds.
func TestProjectsBound(t *testing.T) {
	ctx := context.Background()
	store := newRouteStore(10, 3)
	p := NewProjects(store, New(Config{}), nil)
	p.maxProjects, p.maxRoutes = 4, 9 // three tables of three routes
	for i := range 10 {
		pr, err := p.Get(ctx, fmt.Sprintf("p%d", i))
		if err != nil || pr.Table.Len() != 3 {
			t.Fatalf("p%d: %v", i, err)
		}
		if n, routes := p.Len(); n > 3 || routes > 9 {
			t.Fatalf("after p%d: %d tables of %d routes kept, bound 4 and 9", i, n, routes)
		}
	}
	// p9, p8 and p7 are kept: reading them again asks the store nothing.
	before := store.lists.Load()
	for _, slug := range []string{"p9", "p8", "p7"} {
		p.Get(ctx, slug)
	}
	if store.lists.Load() != before {
		t.Error("the most recently used tables were not kept")
	}
	// A table larger than the bound is served, and kept alone: the bound
	// drops other tables, never the one being read (a project holds at
	// most --max-routes, far under maxCachedRoutes).
	big := newRouteStore(1, 20)
	p = NewProjects(big, New(Config{}), nil)
	p.maxRoutes = 10
	if pr, err := p.Get(ctx, "p0"); err != nil || pr.Table.Len() != 20 {
		t.Fatalf("a project past the bound: %v", err)
	}
	if n, routes := p.Len(); n != 1 || routes != 20 {
		t.Errorf("kept %d tables, %d routes", n, routes)
	}
}

// On a shared store, a table is trusted while changes are heard, for
// maxTrust at a time; then one read checks the project's version, and a new
// version loads the routes again.
func TestProjectsRevalidate(t *testing.T) {
	ctx := context.Background()
	store := newRouteStore(1, 1)
	now := time.Unix(1000, 0)
	c := New(Config{Shared: true, Now: func() time.Time { return now }})
	c.listening.Store(true)
	p := NewProjects(store, c, nil)
	if _, err := p.Get(ctx, "p0"); err != nil {
		t.Fatal(err)
	}
	finds := store.finds.Load()
	p.Get(ctx, "p0")
	if store.finds.Load() != finds {
		t.Error("a trusted table was checked")
	}
	now = now.Add(maxTrust)
	p.Get(ctx, "p0")
	if store.finds.Load() != finds+1 || store.lists.Load() != 1 {
		t.Errorf("after maxTrust: %d finds, %d lists; want one find, no list", store.finds.Load()-finds, store.lists.Load())
	}
	store.projects["p0"].RoutesVersion = 2
	store.routes["id0"] = append(store.routes["id0"], &decoy.Route{ID: "x", Method: "GET", Path: "/new", MockID: "m", Action: decoy.ActionRead})
	now = now.Add(maxTrust)
	pr, err := p.Get(ctx, "p0")
	if err != nil || pr.Table.Len() != 2 {
		t.Errorf("a new version: %v, %d routes", err, pr.Table.Len())
	}
	// Not heard: every read checks.
	c.listening.Store(false)
	finds = store.finds.Load()
	p.Get(ctx, "p0")
	p.Get(ctx, "p0")
	if store.finds.Load() != finds+2 {
		t.Errorf("while not listening: %d checks for 2 reads", store.finds.Load()-finds)
	}
	// A project gone is not found, and forgotten.
	delete(store.projects, "p0")
	if _, err := p.Get(ctx, "p0"); decoy.ErrorCode(err) != decoy.ENOTFOUND {
		t.Errorf("a deleted project: %v", err)
	}
}

// Requests that miss a project's table together wait for one load of it,
// not each for its own: a table is up to 10,000 routes, compiled, and a
// change to a project makes every request to it miss at once.
func TestProjectsLoadOnce(t *testing.T) {
	store := newRouteStore(1, 100)
	store.gate = make(chan struct{})
	p := NewProjects(store, New(Config{}), nil)
	const readers = 32
	got := make(chan *ProjectRoutes, readers)
	for range readers {
		go func() {
			pr, err := p.Get(context.Background(), "p0")
			if err != nil {
				t.Error(err)
			}
			got <- pr
		}()
	}
	for store.lists.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(20 * time.Millisecond) // the others reach the load, and wait
	close(store.gate)
	first := <-got
	for range readers - 1 {
		if pr := <-got; pr != first {
			t.Fatal("requests given different tables")
		}
	}
	if n := store.lists.Load(); n != 1 {
		t.Errorf("%d loads of the routes for %d requests at once", n, readers)
	}
}
