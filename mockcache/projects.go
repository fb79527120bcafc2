package mockcache

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/decoy-mock/decoy"
	"github.com/decoy-mock/decoy/bodyschema"
	"github.com/decoy-mock/decoy/query"
	"github.com/decoy-mock/decoy/route"
	"github.com/decoy-mock/decoy/rule"

	"golang.org/x/sync/singleflight"
)

// Projects keeps the routes of the projects that requests reached (§11),
// compiled into tables, by slug: a routed read then costs a map lookup
// and a walk of the table, not a store call. Its coherence with a store
// that other replicas write to is the mock cache's (see Cache): while
// their changes are heard, a table is trusted for maxTrust at a time, and
// otherwise each request asks the store for the project's RoutesVersion.
//
// Bounded: at most maxProjects tables and maxCachedRoutes routes in all;
// past either, the least recently used tables go.
type Projects struct {
	store decoy.RouteStore
	cache *Cache // whose trust (shared, listening) and clock it shares

	mu     sync.RWMutex
	bySlug map[string]*ProjectRoutes
	routes int // in all the tables held
	gen    uint64
	clock  atomic.Int64

	// maxProjects and maxRoutes are the bounds; tests lower them.
	maxProjects, maxRoutes int
	onBadRoutes            func(projectID string, err error)

	// flights are the loads under way, one per slug and generation: the
	// requests that miss a table together wait for one load of it, not
	// each for its own (up to 10,000 routes each, compiled).
	flights singleflight.Group
}

// Bounds of the projects kept ready: a table of 10,000 routes takes a few
// MiB, so the routes of all the tables kept are bounded, and their number.
const (
	maxProjects     = 4096
	maxCachedRoutes = 200_000
)

// ProjectRoutes is a project and its routes, compiled. It never changes:
// a change to the routes makes a new one.
type ProjectRoutes struct {
	Project *decoy.Project
	Table   *route.Table
	// bindings are what each route adds to a read, worked out once.
	bindings map[*decoy.Route]*Binding

	checked atomic.Int64 // when last known current (Unix nanoseconds)
	used    atomic.Int64 // Projects.clock when last read
	size    int          // routes
}

// Binding is what a route adds to a read of its mock (§11.4), worked out
// from the route once, when its project's routes are loaded.
type Binding struct {
	// Fields are the field paths the route's parameters bind, in the
	// order of its path: a parameter not named in Bind binds the field of
	// its own name.
	Fields []query.Field
	// Items is the path of the array the route works on; nil: the data.
	Items []string
	// One is set for an item route that reads: it answers one record.
	One bool
	// Key tells the route's answers apart from other ways in to its mock
	// among the answers kept for one query string.
	Key string
	// Rules are the route's rules (§13.1), compiled; nil: none.
	Rules *rule.Set

	// What a route that writes (§12) adds. ID is the path of the records'
	// id field: the field an item route binds with its last parameter (the
	// route's own, or the first item route's on the same collection for a
	// create route), else "id". Location, on a create route, is the GET
	// item route on the same collection, whose path names a new record
	// (nil: none, and no Location). Schema checks the bodies written
	// (§12.3); nil: none, or one that does not compile.
	ID       []string
	Location *route.Template
	Schema   *bodyschema.Schema
}

// Binding returns what route r of the project adds to a read.
func (pr *ProjectRoutes) Binding(r *decoy.Route) *Binding { return pr.bindings[r] }

// bindingOf works out what r adds to a read; nil for a route whose path
// does not parse (Compile leaves it out).
func bindingOf(r *decoy.Route) *Binding {
	t, err := route.Parse(r.Path)
	if err != nil {
		return nil
	}
	b := &Binding{One: t.Item() && r.Action == decoy.ActionRead, Key: "\x00" + r.ID, Rules: rule.Compile(r.Rules)}
	for _, name := range t.Params() {
		field := name
		if f, ok := r.Bind[name]; ok {
			field = f
		}
		b.Fields = append(b.Fields, query.NewField(strings.Split(field, ".")))
	}
	if r.Items != nil && *r.Items != "" {
		b.Items = strings.Split(*r.Items, ".")
	}
	return b
}

// bindWrites works out what the routes that write add (see Binding): the
// id field of their records and, for create routes, the item route of a
// new record's Location.
func bindWrites(routes []*decoy.Route, bindings map[*decoy.Route]*Binding) {
	type collection struct{ mock, items string }
	itemsOf := func(r *decoy.Route) string {
		if r.Items == nil {
			return ""
		}
		return *r.Items
	}
	// The item routes of each collection, GET ones first.
	items := map[collection][]*decoy.Route{}
	for _, r := range routes {
		if t, err := route.Parse(r.Path); err == nil && t.Item() && bindings[r] != nil {
			k := collection{r.MockID, itemsOf(r)}
			if r.Method == "GET" {
				items[k] = append([]*decoy.Route{r}, items[k]...)
			} else {
				items[k] = append(items[k], r)
			}
		}
	}
	for _, r := range routes {
		b := bindings[r]
		if b == nil || r.Action == decoy.ActionRead {
			continue
		}
		b.ID = []string{"id"}
		idOf := func(item *decoy.Route) {
			if f := bindings[item].Fields; len(f) > 0 {
				b.ID = f[len(f)-1].Segs()
			}
		}
		if r.Action == decoy.ActionCreate {
			k := collection{r.MockID, itemsOf(r)}
			if found := items[k]; len(found) > 0 {
				idOf(found[0])
				if found[0].Method == "GET" {
					b.Location, _ = route.Parse(found[0].Path)
				}
			}
		} else {
			idOf(r)
		}
		if len(r.RequestSchema) > 0 {
			b.Schema, _ = bodyschema.Compile(r.RequestSchema)
		}
	}
}

// NewProjects returns an empty cache of the routes of store's projects,
// coherent with other replicas as c is. onBadRoutes, when set, is told of
// the routes a project's table leaves out (see route.Compile).
func NewProjects(store decoy.RouteStore, c *Cache, onBadRoutes func(projectID string, err error)) *Projects {
	return &Projects{store: store, cache: c, bySlug: map[string]*ProjectRoutes{},
		maxProjects: maxProjects, maxRoutes: maxCachedRoutes, onBadRoutes: onBadRoutes}
}

// Get returns the routes of the project with slug, loading them on a miss.
// Returns ENOTFOUND "Project not found".
func (p *Projects) Get(ctx context.Context, slug string) (*ProjectRoutes, error) {
	p.mu.RLock()
	pr, gen := p.bySlug[slug], p.gen
	p.mu.RUnlock()
	if pr == nil {
		return p.load(ctx, slug, gen)
	}
	if u := p.clock.Load(); pr.used.Load() != u {
		pr.used.Store(u)
	}
	c := p.cache
	if !c.shared {
		return pr, nil
	}
	if c.listening.Load() {
		last, now := pr.checked.Load(), c.now().UnixNano()
		if now-last < int64(maxTrust) || !pr.checked.CompareAndSwap(last, now) {
			return pr, nil
		}
	}
	sctx, cancel := context.WithTimeout(ctx, storeCheckTimeout)
	cur, err := p.store.FindProjectBySlug(sctx, slug)
	cancel()
	switch {
	case decoy.ErrorCode(err) == decoy.ENOTFOUND:
		p.Remove(pr.Project.ID)
		return nil, err
	case err != nil:
		if ctx.Err() != nil {
			return nil, err
		}
		if c.onStale != nil {
			c.onStale("project:"+pr.Project.ID, err)
		}
		return pr, nil // stale rather than nothing while the store is down
	case cur.ID == pr.Project.ID && cur.RoutesVersion == pr.Project.RoutesVersion:
		pr.checked.Store(c.now().UnixNano())
		return pr, nil
	}
	p.Remove(pr.Project.ID)
	return p.load(ctx, slug, p.generation())
}

func (p *Projects) generation() uint64 {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return p.gen
}

// load reads a project's routes from the store and keeps them, unless a
// change came since generation gen; one load at a time per slug and
// generation, shared by the requests that wait for it.
func (p *Projects) load(ctx context.Context, slug string, gen uint64) (*ProjectRoutes, error) {
	v, err, _ := p.flights.Do(strconv.FormatUint(gen, 10)+" "+slug, func() (any, error) {
		return p.loadOnce(ctx, slug, gen)
	})
	if err != nil {
		return nil, err
	}
	return v.(*ProjectRoutes), nil
}

// loadOnce is load's one load.
func (p *Projects) loadOnce(ctx context.Context, slug string, gen uint64) (*ProjectRoutes, error) {
	lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), storeLoadTimeout)
	defer cancel()
	proj, err := p.store.FindProjectBySlug(lctx, slug)
	if err != nil {
		return nil, err
	}
	routes, err := p.store.ListRoutes(lctx, proj.ID)
	if err != nil {
		return nil, err
	}
	// The version read before the routes: if they changed in between, the
	// next check sees a newer version and loads them again.
	table, err := route.Compile(routes)
	if err != nil && p.onBadRoutes != nil {
		// Stored under older rules: served without the routes left out.
		p.onBadRoutes(proj.ID, err)
	}
	pr := &ProjectRoutes{Project: proj, Table: table, size: len(routes), bindings: make(map[*decoy.Route]*Binding, len(routes))}
	for _, r := range routes {
		pr.bindings[r] = bindingOf(r)
	}
	bindWrites(routes, pr.bindings)
	pr.checked.Store(p.cache.now().UnixNano())
	pr.used.Store(p.clock.Add(1))
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.gen != gen {
		return pr, nil // served, not kept: a change overtook the load
	}
	if old := p.bySlug[slug]; old != nil {
		p.routes -= old.size
	}
	p.bySlug[slug] = pr
	p.routes += pr.size
	p.boundLocked(pr)
	return pr, nil
}

// boundLocked drops the least recently used tables but keep until the
// bounds hold.
func (p *Projects) boundLocked(keep *ProjectRoutes) {
	for len(p.bySlug) > p.maxProjects || p.routes > p.maxRoutes {
		var oldest *ProjectRoutes
		for _, pr := range p.bySlug {
			if pr != keep && (oldest == nil || pr.used.Load() < oldest.used.Load()) {
				oldest = pr
			}
		}
		if oldest == nil {
			return
		}
		delete(p.bySlug, oldest.Project.Slug)
		p.routes -= oldest.size
	}
}

// Remove forgets the routes of a project after a change to them (or to its
// slug), here or announced by another replica.
func (p *Projects) Remove(projectID string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for slug, pr := range p.bySlug {
		if pr.Project.ID == projectID {
			delete(p.bySlug, slug)
			p.routes -= pr.size
		}
	}
	p.gen++
}

// Flush forgets every project, for when changes may have been missed.
func (p *Projects) Flush() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.bySlug = map[string]*ProjectRoutes{}
	p.routes = 0
	p.gen++
}

// Len returns how many projects' routes are kept, and their routes.
func (p *Projects) Len() (projects, routes int) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return len(p.bySlug), p.routes
}
