package decoy

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Routes (§11 of the contract): a project answers at its API's own paths,
// under /p/{slug} on any host, and at the paths alone on {slug}.localhost
// and {slug}.{--routes-domain}. A route ties a method and a path template to
// one of the project's mocks, and says what it does with it.

// Route actions (§11.2): read answers the mock's data; the others write it
// (§12).
const (
	ActionRead    = "read"
	ActionCreate  = "create"
	ActionReplace = "replace"
	ActionUpdate  = "update"
	ActionDelete  = "delete"
)

// RouteMethods are the methods a route may have; a GET route also answers
// HEAD.
var RouteMethods = []string{"GET", "POST", "PUT", "PATCH", "DELETE"}

// DefaultMaxRoutes is the most routes a project holds unless --max-routes
// says otherwise.
const DefaultMaxRoutes = 10000

// Route is a project's answer at one method and path template.
type Route struct {
	ID        string `json:"id"`
	ProjectID string `json:"project_id"`
	// Method is one of RouteMethods.
	Method string `json:"method"`
	// Path is the template: "/" or segments that are literal or a whole
	// parameter "{name}" (see package route, which parses it).
	Path   string `json:"path"`
	MockID string `json:"mock_id"`
	// Action is one of the Action constants; the admin API fills in the
	// default (§11.2) before a route is stored.
	Action string `json:"action"`
	// Bind maps a parameter to the field path (§1.3 syntax) it is an $eq
	// condition on; a parameter not named binds to the field of its own
	// name. Never nil once stored (an empty map shows as {}).
	Bind map[string]string `json:"bind"`
	// Items is the dot path of the array inside the mock's data that the
	// route works on; nil: the whole data.
	Items *string `json:"items"`
	// Rules are the route's conditional answers (§13.1), tried in order;
	// never nil once stored (none shows as []).
	Rules []Rule `json:"rules"`
	// RequestSchema is the JSON Schema that bodies written through the
	// route must validate against (§12.3), kept from the OpenAPI operation
	// an import made the route from; nil: none.
	RequestSchema []byte    `json:"-"`
	CreatedAt     time.Time `json:"created_at"`
	UpdatedAt     time.Time `json:"updated_at"`
}

// Shape is the route's method and path with parameter names left out
// ("GET /u/{}"): two routes of a project may not share one (§11.2).
func (r *Route) Shape() string { return r.Method + " " + PathShape(r.Path) }

// PathShape is a path template with its parameters' names left out:
// "/u/{a}" and "/u/{b}" have the same shape, "/u/{}".
func PathShape(path string) string {
	if !strings.Contains(path, "{") {
		return path
	}
	segs := strings.Split(path, "/")
	for i, s := range segs {
		if strings.HasPrefix(s, "{") && strings.HasSuffix(s, "}") {
			segs[i] = "{}"
		}
	}
	return strings.Join(segs, "/")
}

// RouteUpdate is a PATCH of a route: nil fields stay. Items, when set,
// replaces the items path (a nil Value clears it).
type RouteUpdate struct {
	Method *string
	Path   *string
	MockID *string
	Action *string
	Bind   *map[string]string
	Items  *ItemsUpdate
	// Rules, when set, replaces the route's rules.
	Rules *[]Rule
}

// ItemsUpdate is the new items path of a route; a nil Value clears it.
type ItemsUpdate struct {
	Value *string
}

// Errors the route stores return.
var (
	// ErrRouteNotFound: no route with that id (404).
	ErrRouteNotFound = &Error{Code: ENOTFOUND, Message: "Route not found"}
	// ErrSlugTaken: another project has the slug (409).
	ErrSlugTaken = &Error{Code: ECONFLICT, Message: "Slug taken"}
	// ErrMockNotInProject: a route's mock is not in the route's project
	// (400).
	ErrMockNotInProject = &Error{Code: EINVALID, Message: "Mock is not in this project"}
)

// RouteExists is the conflict of two routes of a project with one shape:
// 409 {"error":"Route exists: GET /u/{a}"}, naming the route that is there.
func RouteExists(existing *Route) *Error {
	return Errorf(ECONFLICT, "Route exists: %s %s", existing.Method, existing.Path)
}

// RouteStore keeps projects' slugs and routes. Both stores implement it;
// storetest holds them to one behaviour.
type RouteStore interface {
	// FindProjectBySlug returns the project with that slug, compared
	// exactly (slugs are lower case). Returns ENOTFOUND "Project not
	// found".
	FindProjectBySlug(ctx context.Context, slug string) (*Project, error)
	// SetProjectSlug changes a project's slug; ErrSlugTaken when another
	// project has it. The caller checks ValidSlug (a store refuses an
	// invalid slug too, EINVALID "Invalid slug"). Returns ENOTFOUND
	// "Project not found".
	SetProjectSlug(ctx context.Context, projectID, slug string) (*Project, error)
	// UpstreamStore sets a project's upstream and mode (§14).
	UpstreamStore

	// CreateRoute stores r (ID, CreatedAt and UpdatedAt filled in when
	// empty, nil Rules stored as none; r itself is not changed) when its
	// project holds fewer than maxRoutes routes (else EINVALID "A project
	// has at most N routes").
	// ErrMockNotInProject when its mock is not in its project (or does not
	// exist), RouteExists when the project has a route of the same Shape,
	// ENOTFOUND "Project not found", ECONFLICT when a route has the ID
	// given. They are checked in that order: project, id, mock, shape,
	// bound.
	CreateRoute(ctx context.Context, r *Route, maxRoutes int) (*Route, error)
	// FindRoute returns ErrRouteNotFound.
	FindRoute(ctx context.Context, id string) (*Route, error)
	// ListRoutes lists a project's routes in creation order (at most the
	// project's bound, which CreateRoute keeps); an empty project's is an
	// empty slice. Returns ENOTFOUND "Project not found".
	ListRoutes(ctx context.Context, projectID string) ([]*Route, error)
	// UpdateRoute changes a route, with CreateRoute's checks on the
	// result but the bound (a route changed adds none). It keeps
	// CreatedAt and RequestSchema, and sets UpdatedAt. Returns
	// ErrRouteNotFound.
	UpdateRoute(ctx context.Context, id string, upd RouteUpdate) (*Route, error)
	// DeleteRoute returns ErrRouteNotFound.
	DeleteRoute(ctx context.Context, id string) error

	// WriteImport writes what an import makes of a file into one
	// project, all of it or none (see ImportBatch). Returns ENOTFOUND
	// "Project not found", and the errors of the writes it is made of.
	WriteImport(ctx context.Context, b ImportBatch) (*ImportWritten, error)
}

// Every change to a project's routes or slug (a route created, changed or
// deleted; a mock deleted with its routes; the slug changed) advances the
// project's RoutesVersion, in the same transaction, so that a replica that
// serves the routes from memory can tell whether they are current.

// ImportBatch is what an import writes into a project (§11.5): the mocks it
// creates, the existing mocks it gives new data (an import of the same file
// again updates in place), and the routes it creates or updates. A store
// applies it in one transaction: when one part cannot be written, nothing
// is.
type ImportBatch struct {
	ProjectID string
	// Create are new mocks, as MockBatchStore.CreateMocks creates them;
	// their ProjectID is the batch's.
	Create []NewMock
	// Replace gives existing mocks of the project new data, each a new
	// version as ReplaceMockData makes one (ENOTFOUND "Mock api not found"
	// when one is gone or in another project).
	Replace []MockReplacement
	// Routes are created when their ID is empty, and otherwise replace the
	// route with that ID (its method, path, mock, action, bind, items,
	// rules and request schema), keeping its id and CreatedAt (ErrRouteNotFound when
	// the project has no route of that ID; EINVALID when an ID is given
	// twice); a route given with nil Rules keeps the rules of the route
	// it replaces (an OpenAPI import knows nothing of them), and a new one
	// gets none. Their ProjectID is the batch's (EINVALID when it is
	// another, as for the mocks of Create). They may name the mocks of
	// Create and Replace. The checks are CreateRoute's, against the
	// routes as they are once the batch is written (routes of the batch
	// may trade shapes); MaxRoutes bounds the project's routes afterwards
	// when the batch adds some. The workspace's limits are checked on the
	// batch whole: the mocks it creates and the bytes it adds, created
	// and replaced.
	Routes    []*Route
	MaxRoutes int
	// Load, when not nil, gives the batch's documents one at a time, as
	// the store writes them, in place of the Data of Create and Replace
	// (empty then): document i is Create[i]'s, and len(Create)+j is
	// Replace[j]'s. The store calls release once it wrote a document, and
	// before it loads the next, so that a batch holds one document in
	// memory however many it writes (an import that streams). Their sizes
	// are known before: Create's mocks' Size and Replace's Size; a
	// document of another size is refused, and so is the batch.
	Load func(ctx context.Context, i int) (d Data, release func(), err error)
}

// MockReplacement is an existing mock's new data.
type MockReplacement struct {
	ID   string
	Data MockData
	// Template, when not nil, is stored as the mock's template (see
	// TemplateStore); nil leaves the template as it is.
	Template *Template
	// Size is the size of the data ImportBatch.Load gives for it; unused
	// otherwise.
	Size int64
}

// DocSize is the size of document i of the batch (see Load).
func (b *ImportBatch) DocSize(i int) int64 {
	switch {
	case i < len(b.Create) && b.Load != nil:
		return b.Create[i].Mock.Size
	case i < len(b.Create):
		return int64(len(b.Create[i].Data.Bytes))
	case b.Load != nil:
		return b.Replace[i-len(b.Create)].Size
	}
	return int64(len(b.Replace[i-len(b.Create)].Data.Data.Bytes))
}

// Doc returns document i of the batch and the function that releases it:
// the Data given in the batch, or what Load gives, checked against its
// size.
func (b *ImportBatch) Doc(ctx context.Context, i int) (Data, func(), error) {
	if b.Load == nil {
		if i < len(b.Create) {
			return b.Create[i].Data, func() {}, nil
		}
		return b.Replace[i-len(b.Create)].Data.Data, func() {}, nil
	}
	d, release, err := b.Load(ctx, i)
	if err != nil {
		return Data{}, nil, err
	}
	if want := b.DocSize(i); int64(len(d.Bytes)) != want {
		release()
		return Data{}, nil, fmt.Errorf("document %d of the import holds %d bytes, not the %d it was given with", i, len(d.Bytes), want)
	}
	return d, release, nil
}

// ImportWritten is what WriteImport wrote, in the batch's order.
type ImportWritten struct {
	Created  []*Mock
	Replaced []*Mock
	Routes   []*Route
}

// Slugs (§11.1): 1–63 characters of a-z, 0-9 and '-', not starting or
// ending with '-'.
const maxSlugLength = 63

// ValidSlug reports whether s is a slug.
func ValidSlug(s string) bool {
	if len(s) == 0 || len(s) > maxSlugLength || s[0] == '-' || s[len(s)-1] == '-' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// Slugify derives a project's slug from its name (§11.1): lower-cased,
// every run of other characters than a-z and 0-9 made one '-', trimmed of
// '-', cut to leave room for a suffix; "project" when nothing is left. A
// store appends "-2", "-3", … while the result is taken (SlugCandidate).
func Slugify(name string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(name) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			dash = false
			b.WriteRune(r)
			continue
		}
		dash = true
	}
	s := b.String()
	// Room for a suffix of up to "-99999" within the bound.
	if len(s) > maxSlugLength-6 {
		s = strings.TrimRight(s[:maxSlugLength-6], "-")
	}
	if s == "" {
		return "project"
	}
	return s
}

// SlugCandidate is the n-th slug a store tries for base (n from 1): base
// itself, then base-2, base-3, …
func SlugCandidate(base string, n int) string {
	if n <= 1 {
		return base
	}
	return base + "-" + strconv.Itoa(n)
}

// ProjectAnnouncement starts the announcements (Invalidator) that a
// project's routes or slug changed: it is followed by the project's id.
// Other announcements name a mock.
const ProjectAnnouncement = "project:"
