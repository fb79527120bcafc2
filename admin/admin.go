// Package admin is Decoy's admin API, served under /admin/v1 (§6–§9 of the
// contract): mocks and their data, settings, tokens and usage; people,
// workspaces, projects, API keys and the audit log; generated data;
// import and export; versions. It decides who may do what (access.go), and
// it is the one writer of mocks: each change goes to the store, then to the
// cache the read endpoint serves from, and is announced to other replicas.
//
// The server mounts it (server.Server routes /admin/v1 to API.Serve) and
// writes the errors its handlers return; the admin API writes no error
// answer itself.
package admin

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/decoy-mock/decoy"
	"github.com/decoy-mock/decoy/answer"
	"github.com/decoy-mock/decoy/generate"
	"github.com/decoy-mock/decoy/journal"
	"github.com/decoy-mock/decoy/mockcache"
	"github.com/decoy-mock/decoy/secret"
	"github.com/decoy-mock/decoy/usage"
)

// Config is what the admin API needs. The server fills it from its own
// configuration (server.Config), which cmd/decoy fills from flags.
type Config struct {
	// Store keeps mocks and their data; Quota counts their monthly reads,
	// which usage shows. Required.
	Store decoy.Store
	Quota decoy.QuotaCounter
	// Limiter counts each mock's reads per sliding minute: usage shows
	// the count. Required.
	Limiter decoy.Limiter
	// Invalidator, when set, is told of every change, for other replicas.
	Invalidator decoy.Invalidator
	// CountSharedFailure counts a failure of a shared backend, by use
	// ("invalidation": a change announced late), in the server's metrics.
	CountSharedFailure func(use string)
	// WriteTurn, when set, is the lock the writes through a mock's routes
	// take on this replica: a data write of the mock holds it while it
	// keeps the live data and replaces it, so that a stream of writes
	// cannot keep it from ever doing so (see keptLive).
	WriteTurn func(mockID string) sync.Locker
	// Cache holds the mocks the read endpoint serves: data is read from
	// it, and every change is put in it or drops the mock from it.
	// Required.
	Cache *mockcache.Cache

	// AdminTokenHash is the SHA-256 of the admin token (secret.Hash).
	AdminTokenHash []byte
	// Teams, when set, keeps people, workspaces, projects, keys and the
	// audit log (§6): callers other than the admin token are let in, by
	// their role. Without it the admin token is the only caller, and the
	// routes of teams are not found.
	Teams decoy.TeamStore
	// OpenWorkspaces lets any signed-in user create workspaces.
	OpenWorkspaces bool
	// Routes, when set, keeps projects' slugs and routes (§11); nil: the
	// route calls answer 501. Projects holds the routes compiled for the
	// server: a change drops the project's from it. MaxRoutes bounds a
	// project's routes (0: decoy.DefaultMaxRoutes).
	Routes    decoy.RouteStore
	Projects  *mockcache.Projects
	MaxRoutes int
	// RuleCounter counts the requests routes' rules with times held for
	// (§13.1): the admin API starts them again (POST
	// /routes/{id}/rules/reset, and every change to a route's rules). Nil:
	// the reset answers 501.
	RuleCounter decoy.RuleCounter
	// Versions, when set, keeps the versions of mocks' data (§9).
	Versions decoy.VersionStore
	// Templates, when set, keeps mocks' templates (§7); nil: the template
	// calls answer 501. TemplateCache holds them compiled, shared with
	// the read endpoint, which runs "always" templates.
	Templates     decoy.TemplateStore
	TemplateCache *mockcache.Templates
	// Usage, when set, keeps each mock's reads per minute and day, for
	// the usage history.
	Usage *usage.Recorder
	// Journal, when set, is the request journal (§13.2); nil: its calls
	// answer 501.
	Journal *journal.Journal

	// DefaultRateLimit and DefaultMonthlyQuota are the limits of a mock
	// that sets none (0: unlimited).
	DefaultRateLimit    int64
	DefaultMonthlyQuota int64
	// MaxDataBytes is the largest document, template and generated data
	// accepted.
	MaxDataBytes int64
	// GenerateTimeout bounds one generation (0: generate.DefaultTimeout).
	GenerateTimeout time.Duration
	// Generate, when set, runs f in a turn to generate for ctx among the
	// server's generations (see generate.Queue), within the bounds of a
	// generation of at most run (0: GenerateTimeout) that starts with the
	// turn; it returns f's error, or the error to answer with when the
	// server is too busy. Nil: a queue of the admin API's own.
	Generate func(ctx context.Context, run time.Duration, f func(generate.Limits) error) error
	// UploadDir is where uploads are streamed to (empty: the system's
	// temporary folder).
	UploadDir string
	// PublicURL is the base URL mock URLs are given under; empty: derived
	// from each request.
	PublicURL string

	// Clients is what the server knows of a request's client: its address,
	// and the failed authentications it counts across the server. Nil: no
	// addresses, and failed authentications are not limited.
	Clients Clients
	// Session authorizes a request by a Studio session: ok is false when
	// it carries none, and the bearer token decides; userID is empty for
	// the server admin's session. Nil: no Studio.
	Session func(w http.ResponseWriter, r *http.Request) (userID string, ok bool, err error)
	// ReadLimitChanged is called when a workspace's monthly read limit
	// may have changed, or the workspace is gone.
	ReadLimitChanged func(workspaceID string)

	Logger *slog.Logger
	// Now returns the current time. Tests replace it.
	Now func() time.Time
}

// Clients is the server's view of the clients of requests. A wrong
// password, admin token, API key, access token or invitation counts as a
// failed authentication of the client, in one budget with its wrong mock
// tokens: guessing several kinds gets no more tries than guessing one.
type Clients interface {
	// Addr is the client's address, as the audit log records it.
	Addr(r *http.Request) string
	// LimitKey is the key the client's failed authentications, of every
	// kind, are counted under.
	LimitKey(r *http.Request) string
	// AuthBlocked returns a 429 when the client behind key failed too
	// often in the last minute.
	AuthBlocked(r *http.Request, key string) error
	// AuthFailed counts a failure for key and returns refusal, or a 429
	// when this failure is past the limit.
	AuthFailed(r *http.Request, key string, refusal *answer.Error) error
}

// unknownClients are the Clients of an API without a server's view of
// them.
type unknownClients struct{}

func (unknownClients) Addr(*http.Request) string               { return "" }
func (unknownClients) LimitKey(*http.Request) string           { return "" }
func (unknownClients) AuthBlocked(*http.Request, string) error { return nil }
func (unknownClients) AuthFailed(_ *http.Request, _ string, refusal *answer.Error) error {
	return refusal
}

// API serves the admin API.
type API struct {
	cfg   Config
	cache *mockcache.Cache
	log   *slog.Logger

	// keyUses collects the last use of API keys and personal access
	// tokens, written in batches (auth.go).
	keyUses keyUses
	// writeMu serialises admin writes, so that a write and the cache update
	// that follows it never interleave with another write.
	writeMu sync.Mutex
	// imports lets one import at a time per workspace, and maxImports on
	// the server, hold a file and the mocks made of it in memory.
	imports *importSlots
	// streams are the live feeds of the request journal (journal.go).
	streams *streams
}

// New returns the admin API for cfg.
func New(cfg Config) *API {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.TemplateCache == nil {
		cfg.TemplateCache = new(mockcache.Templates)
	}
	if cfg.Generate == nil {
		q := generate.NewQueue(generate.QueueConfig{Timeout: cfg.GenerateTimeout, MaxBytes: cfg.MaxDataBytes})
		cfg.Generate = func(ctx context.Context, run time.Duration, f func(generate.Limits) error) error {
			lim, end, err := q.Start(ctx, run)
			if err != nil {
				return err
			}
			defer end()
			return f(lim)
		}
	}
	if cfg.Clients == nil {
		cfg.Clients = unknownClients{}
	}
	if cfg.CountSharedFailure == nil {
		cfg.CountSharedFailure = func(string) {}
	}
	if cfg.ReadLimitChanged == nil {
		cfg.ReadLimitChanged = func(string) {}
	}
	return &API{cfg: cfg, cache: cfg.Cache, log: cfg.Logger, imports: newImportSlots(), streams: newStreams()}
}

// Serve answers a request under /admin/v1, through adminRoutes, or returns
// the error to answer with. Authentication comes first, so that nothing
// about the API shows to a caller who is not signed in; then authorize
// checks the caller's role (access.go); then the handler runs, and a
// change it made is recorded in the audit log.
func (s *API) Serve(w http.ResponseWriter, r *http.Request) error {
	w.Header().Set("Cache-Control", "no-store")
	segs := strings.Split(strings.Trim(strings.TrimPrefix(r.URL.Path, "/admin/v1"), "/"), "/")
	rt, params, allow := matchRoute(r.Method, segs)
	call := &adminCall{route: rt, params: params}
	if rt == nil || rt.need != public {
		c, err := s.resolveCaller(w, r)
		if err != nil {
			return err
		}
		call.caller = c
	}
	switch {
	case rt == nil && allow == nil:
		return answer.ErrNotFound
	case rt == nil:
		return answer.New(http.StatusMethodNotAllowed, "Method not allowed", "Allow", strings.Join(allow, ", "))
	}
	id, err := s.authorize(r.Context(), call)
	if err != nil {
		return err
	}
	ctx := context.WithValue(r.Context(), callKey{}, call)
	if call.caller != nil {
		// The writer of the data versions the request makes (§9).
		ctx = decoy.WithActor(ctx, call.caller.actor())
	}
	r = r.WithContext(ctx)
	if err := rt.handle(s, w, r, id); err != nil {
		return err
	}
	s.audit(r, call, id)
	return nil
}

// writeContext is the context of admin writes. A write, once started,
// finishes even if the client goes away, so that the store and the cache
// never disagree about a change the client may or may not have seen; but
// not after writeTimeout, so that a stalled database does not hold the
// write lock, and every write behind it, indefinitely.
func writeContext(r *http.Request) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(r.Context()), writeTimeout)
}

// writeTimeout bounds an admin write, which may store a large document.
const writeTimeout = 30 * time.Second

// Close writes what the API holds in memory for the store: the last uses of
// API keys and personal access tokens, within writeTimeout.
func (s *API) Close() {
	ctx, cancel := context.WithTimeout(context.Background(), writeTimeout)
	defer cancel()
	s.flushKeyUses(ctx)
}

// announce tells the other replicas that mock id changed, right after the
// store call and before the answer, so that a client told of a change finds
// it on every replica. The change is in the store already, so a failure only
// delays what they see: it is logged and counted, and the Invalidator sends
// it again once it can.
func (s *API) announce(ctx context.Context, id string) { s.Announce(ctx, id) }

// Announce tells the other replicas of a change named id (a mock's id, or
// one of the announcements of package decoy), as announce does: for the
// server's own changes, such as writes through routes.
func (s *API) Announce(ctx context.Context, id string) {
	if s.cfg.Invalidator == nil {
		return
	}
	// Bounded: a stalled Redis must not hold the write lock; the entries
	// of other replicas are checked against the store within maxTrust
	// anyway.
	ctx, cancel := context.WithTimeout(ctx, announceTimeout)
	defer cancel()
	if err := s.cfg.Invalidator.Invalidate(ctx, id); err != nil {
		s.cfg.CountSharedFailure("invalidation")
		s.log.Warn("could not announce a change to other replicas", "mock", id, "err", err)
	}
}

// announceTimeout bounds the announcement of a change.
const announceTimeout = time.Second

// sessionExpired answers a Studio session whose user is gone.
var sessionExpired = answer.New(http.StatusUnauthorized, "Session expired or signed out; sign in again")

// studioAuthorized authorizes an admin API request by its Studio session
// (Config.Session): its caller is the server admin, or the user who signed
// in with a password. done is false when the request has no session, and
// the bearer token decides.
func (s *API) studioAuthorized(w http.ResponseWriter, r *http.Request) (c *caller, err error, done bool) {
	if s.cfg.Session == nil {
		return nil, nil, false
	}
	userID, ok, err := s.cfg.Session(w, r)
	switch {
	case !ok:
		return nil, nil, false
	case err != nil:
		return nil, err, true
	case userID == "":
		return &caller{admin: true}, nil, true
	case s.cfg.Teams == nil:
		return nil, sessionExpired, true
	}
	u, err := s.cfg.Teams.FindUser(r.Context(), userID)
	if decoy.ErrorCode(err) == decoy.ENOTFOUND { // deleted since
		return nil, sessionExpired, true
	}
	if err != nil {
		return nil, err, true
	}
	return &caller{user: u, admin: u.ServerAdmin}, nil, true
}

// failureKey is the key a client's wrong admin tokens, API keys, access
// tokens, passwords and invitations are counted under: the one its wrong
// mock tokens are counted under too (Clients).
func (s *API) failureKey(r *http.Request) string {
	return s.cfg.Clients.LimitKey(r)
}

// CheckAdminToken checks the admin token given at a Studio sign-in exactly
// as the bearer token of the admin API is checked: a wrong one counts as a
// failed attempt of the client, and a client past the limit is refused
// even the right one.
func (s *API) CheckAdminToken(r *http.Request, token string) error {
	key := s.failureKey(r)
	if err := s.cfg.Clients.AuthBlocked(r, key); err != nil {
		return err
	}
	if secret.Matches(token, s.cfg.AdminTokenHash) {
		return nil
	}
	return s.cfg.Clients.AuthFailed(r, key, answer.New(http.StatusUnauthorized, "Invalid admin token"))
}

// CheckPassword checks the email and password of a Studio sign-in, as
// POST /auth/token does, and returns the user's id.
func (s *API) CheckPassword(r *http.Request, email, password string) (string, error) {
	u, err := s.checkPassword(r, email, password)
	if err != nil {
		return "", err
	}
	return u.ID, nil
}

// usageHistory is GET /admin/v1/mocks/{id}/usage/history: the mock's
// served and refused reads per minute over the last hour and per day over
// the month.
func (s *API) usageHistory(w http.ResponseWriter, r *http.Request, id string) error {
	if _, err := s.cfg.Store.FindMock(r.Context(), id); err != nil {
		return err
	}
	if s.cfg.Usage == nil {
		return decoy.Errorf(decoy.ENOTFOUND, "This server keeps no usage history")
	}
	h, err := s.cfg.Usage.History(r.Context(), id, s.cfg.Now())
	if err != nil {
		return err
	}
	answer.JSON(w, http.StatusOK, h)
	return nil
}
