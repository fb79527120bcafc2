// Package server is Decoy's HTTP server: the public read endpoint
// (GET /mock/{id} and its /api/ alias), the health, metrics and OpenAPI
// endpoints, the Studio's routes, the middleware around them, and the one
// function that writes every error answer. It mounts the admin API
// (package admin) under /admin/v1, and owns the http.Server (Open, Close).
package server

import (
	"context"
	"errors"
	"hash/maphash"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/textproto"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/decoy-mock/decoy"
	"github.com/decoy-mock/decoy/admin"
	"github.com/decoy-mock/decoy/answer"
	"github.com/decoy-mock/decoy/fallback"
	"github.com/decoy-mock/decoy/generate"
	"github.com/decoy-mock/decoy/journal"
	"github.com/decoy-mock/decoy/mockcache"
	"github.com/decoy-mock/decoy/query"
	"github.com/decoy-mock/decoy/studio"
	"github.com/decoy-mock/decoy/upstream"
	"github.com/decoy-mock/decoy/usage"
	"github.com/prometheus/client_golang/prometheus"
)

// Config is what the server needs; cmd/decoy fills it from flags.
type Config struct {
	Store decoy.Store
	Quota decoy.QuotaCounter
	// QuotaInMemory is set when Quota counts in this process's memory
	// (the embedded store's journal): its calls never wait on a network,
	// so they are not bounded by a timeout.
	QuotaInMemory bool
	// Limiter counts each mock's requests per sliding minute.
	Limiter decoy.Limiter
	// AuthFailures counts failed authentication attempts per client address.
	AuthFailures decoy.Limiter
	// ClientLimiter counts every request per client address, against
	// ClientRateLimit per minute (0: off).
	ClientLimiter   decoy.Limiter
	ClientRateLimit int64
	// TrustedProxies are the proxies whose X-Forwarded-For is believed when
	// deciding a request's client address.
	TrustedProxies []netip.Prefix
	// LocalLimiter, when set, stands in for Limiter and AuthFailures while
	// they fail (they are shared by replicas, in Redis): requests are then
	// limited per replica instead of refused or failed.
	LocalLimiter decoy.Limiter

	// SharedStore is set when other replicas write to the same store.
	// Cached mocks are then trusted only while Invalidator hears the other
	// replicas' changes (never without one); otherwise each read checks the
	// store for a newer version.
	SharedStore bool
	// Invalidator, when set, announces this server's changes to other
	// replicas and, through Listen, hears theirs.
	Invalidator decoy.Invalidator

	// AdminTokenHash is the SHA-256 of the admin API bearer token.
	AdminTokenHash []byte

	// Teams, when set, keeps people, workspaces, projects, keys and the
	// audit log (§6): callers other than the admin token are let in, by
	// their role. Without it the admin token is the only caller.
	Teams decoy.TeamStore
	// Routes, when set, keeps projects' slugs and routes (§11): projects
	// answer at their APIs' own paths. Nil: no project answers.
	Routes decoy.RouteStore
	// RoutesDomain, when set, is a domain D under which {slug}.D is a
	// project's host, as {slug}.localhost always is.
	RoutesDomain string
	// MaxRoutes bounds the routes of a project (0: decoy.DefaultMaxRoutes).
	MaxRoutes int
	// RuleCounter counts the requests routes' rules with times hold for
	// (§13.1), across replicas when they share it. Nil: a rule with
	// times never holds.
	RuleCounter decoy.RuleCounter
	// OpenWorkspaces lets any signed-in user create workspaces.
	OpenWorkspaces bool

	DefaultRateLimit    int64 // per mock and minute; 0: unlimited
	DefaultMonthlyQuota int64 // per mock and month; 0: unlimited
	AuthFailureLimit    int64 // per client and minute; 0: unlimited
	MaxDataBytes        int64 // largest mock document accepted
	// MaxCacheBytes bounds the memory of the mocks kept ready to serve
	// (their documents and what is built over them); the least recently
	// read are dropped first. 0: no bound.
	MaxCacheBytes int64
	// MaxOpenDocuments bounds the mocks kept ready to serve whose
	// documents are mapped from their files (each holds a mapping, of
	// which a process has a limited number); the least recently read are
	// closed first. Small documents are held in memory and do not count.
	// 0: no bound.
	MaxOpenDocuments int
	// UploadDir is where uploaded documents are streamed to, on the same
	// file system as the store's files if it keeps any, so that it can
	// move them into place; empty: the system's temporary folder. The
	// cache keeps its large bodies there too, gzipped copies and kept
	// answers (mockcache.Config.SpillDir); empty: in memory.
	UploadDir string

	// CORSOrigins are the allowed origins; empty or "*" allows any.
	CORSOrigins []string
	// AllowedHosts are Host names the Studio and the admin API accept,
	// besides loopback ones, when Addr is a loopback address.
	AllowedHosts []string
	// TokenHeader is an extra header name that carries mock tokens.
	// Authorization is read as Bearer always is, and with no scheme too.
	TokenHeader string
	// PublicURL is the base URL mock URLs are given under; empty: derived
	// from each admin request.
	PublicURL string

	// Sessions, when set, turns Decoy Studio on at "/" and keeps its
	// sign-in sessions; Usage, when set, counts each mock's served and
	// refused reads for its charts.
	Sessions decoy.SessionStore
	Usage    *usage.Recorder
	// Journal, when set, records the requests projects answer (§13.2),
	// served by the admin API; nil: no journal (--journal-size 0).
	Journal *journal.Journal
	// Versions, when set, serves the versions of mocks' data that Store
	// keeps (§9), under /admin/v1/mocks/{id}/versions: the same store.
	Versions decoy.VersionStore

	// Templates, when set, keeps mocks' templates (generated data); nil:
	// the template calls answer 501.
	Templates decoy.TemplateStore
	// GenerateTimeout bounds the generation of one answer (default 2 s),
	// from when it starts running; waiting for its turn is bounded apart,
	// by as much again.
	GenerateTimeout time.Duration
	// GenerateWorkers is the most generations running at once, on the
	// read endpoint and in the admin API together (0: GOMAXPROCS);
	// GenerateWaiting the most waiting for their turn (0: 8 ×
	// GenerateWorkers). Past those, a generation answers 503 with
	// Retry-After (see generate.Queue).
	GenerateWorkers, GenerateWaiting int

	// UpstreamTimeout bounds each stage of an exchange with a project's
	// upstream (§14): connecting, and waiting for its answer's head (0:
	// upstream.DefaultTimeout).
	UpstreamTimeout time.Duration
	// UpstreamAllow are the networks upstreams may be in although they
	// are not public (--upstream-allow).
	UpstreamAllow []netip.Prefix

	// Addr is the address Open listens on ("127.0.0.1:0": a free port).
	Addr string
	// TLSCert and TLSKey, when set, are the PEM files of the certificate
	// (with its chain) and private key that Open serves HTTPS and HTTP/2
	// with; the pair is read again when the files change.
	TLSCert, TLSKey string
	// MaxConns and MaxClientConns cap the connections open at once, in
	// all and from one client address (trusted proxies excepted); 0: no
	// cap.
	MaxConns, MaxClientConns int
	// ReadHeaderTimeout cuts a client that takes longer to send a
	// request's head (default 10 s).
	ReadHeaderTimeout time.Duration
	// MinBodyRate is the floor of a request body's pace, in bytes a
	// second on average from the server's first read of it, after
	// BodyGrace (default 5 s) for its first bytes: a client that falls
	// behind is cut with 408 (see body.go). 0: DefaultMinBodyRate;
	// negative: no floor.
	MinBodyRate int64
	BodyGrace   time.Duration
	// ShutdownTimeout bounds how long Close lets requests in flight
	// finish before it cuts them (default 35 s).
	ShutdownTimeout time.Duration

	Logger   *slog.Logger
	Registry *prometheus.Registry
	// Now returns the current time. Tests replace it.
	Now func() time.Time
}

// Server serves Decoy over HTTP. It implements http.Handler.
type Server struct {
	cfg Config
	// docBound, when not 0, is the largest document writes may grow a
	// mock to, in place of --max-data-bytes (tests of the bodies' bound
	// set it past it).
	docBound int64
	// bodies bounds the bytes of request bodies held at once (bodies.go).
	bodies *bodies
	cache  *mockcache.Cache
	// projects keeps projects' routes, compiled (nil without Routes).
	projects *mockcache.Projects
	// routeDomains are the suffixes of projects' hosts: ".localhost" and
	// ".{RoutesDomain}".
	routeDomains []string
	metrics      *metrics
	log          *slog.Logger
	tokenHeaders []string
	// tokenHeaderKeys are tokenHeaders in canonical form, as a request's
	// header map holds them.
	tokenHeaderKeys []string
	// secretHeaders are the names of the request headers the journal
	// keeps REDACTED: the token headers and secretHeaders (journal.go).
	secretHeaders []string
	// secretFilter has the bit of each name of secretHeaders set
	// (secretBit): a header whose bit is unset is known to be no secret
	// without comparing names, as most are.
	secretFilter [64]uint32
	corsAny      bool
	corsOrigins  map[string]bool
	handler      http.Handler
	queries      mockcache.Queries
	dates        dates
	templates    mockcache.Templates
	generation   *generate.Queue
	studio       *studio.Handler // nil: the Studio is off
	// hosts are the names accepted besides loopback ones; nil: any (see
	// host.go).
	hosts map[string]bool

	// limiter and authLimiter are Limiter and AuthFailures with their
	// fallback, when there is a LocalLimiter.
	limiter, authLimiter *fallback.Limiter
	// failLogged holds, per kind of failure, when one was last logged (see
	// firstFailure).
	failLogged sync.Map

	// http serves the listener of Open; serving receives what its Serve
	// returned.
	http      *http.Server
	ln        net.Listener
	serving   chan error
	closeOnce sync.Once
	closeErr  error

	// readLimits caches workspaces' monthly read limits (limits.go).
	readLimits readLimits

	// admin is the admin API, under /admin/v1.
	admin *admin.API

	// live keeps mocks' live data (§12), when the store does; nil: routes
	// that write answer 501. writes are the turns of writes to one mock,
	// compact the compactions of their logs (write.go).
	live    decoy.LiveStore
	writes  writeLocks
	compact compactor

	// proxy passes projects' requests to their upstreams (upstream.go).
	proxy *upstream.Proxy
	// refusedUpstreams is when each project's refused upstream address
	// was last logged (upstream.go).
	refusedUpstreams onceAMinute
}

// New returns a server for cfg.
func New(cfg Config) *Server {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Registry == nil {
		cfg.Registry = prometheus.NewRegistry()
	}
	s := &Server{
		cfg:          cfg,
		metrics:      newMetrics(cfg.Registry),
		log:          cfg.Logger,
		tokenHeaders: []string{"serviceauthtoken", "decoyauthtoken"},
		corsOrigins:  map[string]bool{},
		generation: generate.NewQueue(generate.QueueConfig{Workers: cfg.GenerateWorkers, Waiting: cfg.GenerateWaiting,
			Timeout: cfg.GenerateTimeout, MaxBytes: cfg.MaxDataBytes}),
	}
	s.live, _ = cfg.Store.(decoy.LiveStore)
	s.writes.seed = maphash.MakeSeed()
	s.cache = mockcache.New(mockcache.Config{
		Store:            cfg.Store,
		Live:             s.live,
		Shared:           cfg.SharedStore,
		MaxBytes:         cfg.MaxCacheBytes,
		MaxOpenDocuments: cfg.MaxOpenDocuments,
		SpillDir:         cfg.UploadDir,
		Now:              cfg.Now,
		OnEvict:          func(n int) { s.metrics.cacheEvictions.Add(float64(n)) },
		OnStale: func(id string, err error) {
			s.metrics.sharedErrors.WithLabelValues("store").Inc()
			s.log.Warn("store unreachable; serving the cached mock unchecked", "mock", id, "err", err)
		},
	})
	cfg.Registry.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "decoy_cache_bytes",
		Help: "Memory held by the mocks kept ready to serve: their documents and what is built over them (columns, indexes, sort orders, digests, gzipped copies, kept answers), counted before it is allocated, within --max-cache-bytes.",
	}, func() float64 { return float64(s.cache.Footprint()) }))
	cfg.Registry.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "decoy_cache_mapped_documents",
		Help: "Mocks kept ready to serve that hold a mapped file: their documents, or the document a write was made over (bounded by --max-open-documents).",
	}, func() float64 { _, n := s.cache.Len(); return float64(n) }))
	if !s.cache.Trusted() {
		s.metrics.cacheTrusted.Set(0)
	}
	registerJournalMetrics(cfg.Registry, cfg.Journal)
	if cfg.LocalLimiter != nil {
		newLimiter := func(shared decoy.Limiter, use string) *fallback.Limiter {
			return fallback.NewLimiter(fallback.Config{Shared: shared, Local: cfg.LocalLimiter, Use: use, Logger: s.log, Now: cfg.Now,
				OnFail: func() { s.metrics.sharedErrors.WithLabelValues(use).Inc() }})
		}
		s.limiter = newLimiter(cfg.Limiter, "rate_limit")
		s.authLimiter = newLimiter(cfg.AuthFailures, "auth_failures")
		s.cfg.Limiter, s.cfg.AuthFailures = s.limiter, s.authLimiter
	}
	if s.limiter != nil {
		cfg.Registry.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "decoy_shared_limits_up",
			Help: "1 while rate limits are shared with other replicas, 0 while this replica limits alone (only with a shared limiter).",
		}, func() float64 {
			if s.sharedLimitsUp(context.Background()) {
				return 1
			}
			return 0
		}))
	}
	if cfg.TokenHeader != "" && !isAuthorization(cfg.TokenHeader) { // Authorization: see bearerToken
		s.tokenHeaders = append(s.tokenHeaders, cfg.TokenHeader)
	}
	for _, n := range s.tokenHeaders {
		s.tokenHeaderKeys = append(s.tokenHeaderKeys, textproto.CanonicalMIMEHeaderKey(n))
	}
	s.secretHeaders = append(slices.Clone(s.tokenHeaders), secretHeaders...)
	for _, n := range s.secretHeaders {
		w, bit := secretBit(n)
		s.secretFilter[w] |= bit
	}
	if cfg.Routes != nil {
		s.projects = mockcache.NewProjects(cfg.Routes, s.cache, func(projectID string, err error) {
			s.log.Warn("routes left out of a project's table", "project", projectID, "err", err)
		})
	}
	s.routeDomains = []string{".localhost"}
	if d := strings.Trim(strings.ToLower(cfg.RoutesDomain), "."); d != "" {
		s.routeDomains = append(s.routeDomains, "."+d)
	}
	for _, o := range cfg.CORSOrigins {
		if o == "*" {
			s.corsAny = true
		}
		s.corsOrigins[strings.TrimRight(o, "/")] = true
	}
	if len(cfg.CORSOrigins) == 0 {
		s.corsAny = true
	}
	s.admin = admin.New(admin.Config{
		Store:               cfg.Store,
		Quota:               cfg.Quota,
		Limiter:             s.cfg.Limiter, // with its fallback
		Invalidator:         cfg.Invalidator,
		CountSharedFailure:  func(use string) { s.metrics.sharedErrors.WithLabelValues(use).Inc() },
		WriteTurn:           func(id string) sync.Locker { return s.writeLock(id) },
		Cache:               s.cache,
		AdminTokenHash:      cfg.AdminTokenHash,
		Teams:               cfg.Teams,
		Routes:              cfg.Routes,
		Projects:            s.projects,
		MaxRoutes:           cfg.MaxRoutes,
		RuleCounter:         cfg.RuleCounter,
		OpenWorkspaces:      cfg.OpenWorkspaces,
		Versions:            cfg.Versions,
		Templates:           cfg.Templates,
		TemplateCache:       &s.templates,
		Usage:               cfg.Usage,
		Journal:             cfg.Journal,
		DefaultRateLimit:    cfg.DefaultRateLimit,
		DefaultMonthlyQuota: cfg.DefaultMonthlyQuota,
		MaxDataBytes:        cfg.MaxDataBytes,
		GenerateTimeout:     cfg.GenerateTimeout,
		Generate:            s.generating,
		UploadDir:           cfg.UploadDir,
		PublicURL:           cfg.PublicURL,
		Clients:             (*clients)(s),
		Session:             s.studioSession,
		ReadLimitChanged:    s.forgetReadLimit,
		Logger:              s.log,
		Now:                 cfg.Now,
	})
	s.studio = s.newStudio()
	s.proxy = s.newProxy()
	s.hosts = newHostCheck(cfg.Addr, cfg.AllowedHosts, cfg.PublicURL)
	var h http.Handler = s.observe(s.recover(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := s.route(w, r); err != nil {
			s.writeError(w, r, err)
		}
	})))
	if pace, ok := s.bodyPace(); ok {
		h = paceBodies(h, pace, s.bodyCut)
	}
	s.bodies = newBodies(bodyBudget(s.bodyLimit()), s.bodyLimit())
	s.handler = closeUnread(h, s.bodies, s.clientKey)
	return s
}

// Admin returns the admin API the server serves under /admin/v1, which
// also seeds mocks at start (admin.API.Seed).
func (s *Server) Admin() *admin.API { return s.admin }

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.handler.ServeHTTP(w, r)
}

// sectionOf names the part of the server a request belongs to: section's,
// unless its Host is a project's, whose every path is the project's.
func (s *Server) sectionOf(r *http.Request) string {
	if _, ok := s.projectHost(r.Host); ok {
		return "project"
	}
	return section(r.URL.Path)
}

// section names the part of the server a path belongs to, for metrics.
func section(path string) string {
	switch {
	case path == "/mock" || path == "/api" || strings.HasPrefix(path, "/mock/") || strings.HasPrefix(path, "/api/"):
		return "mock"
	case path == "/p" || strings.HasPrefix(path, "/p/"):
		return "project"
	case path == "/admin/v1" || strings.HasPrefix(path, "/admin/v1/"):
		return "admin"
	case path == "/healthz", path == "/readyz", path == "/metrics", path == "/openapi.json":
		return path[1:]
	case studio.IsRoute(path):
		return "studio"
	}
	return "other"
}

// errMonitoringMethod answers a method other than GET or HEAD on /healthz,
// /readyz, /metrics and /openapi.json.
var errMonitoringMethod = answer.New(http.StatusMethodNotAllowed, "Method not allowed", "Allow", "GET, HEAD")

func (s *Server) route(w http.ResponseWriter, r *http.Request) error {
	if err := s.limitClient(w, r); err != nil {
		return err
	}
	rt := s.sectionOf(r)
	if rt == "admin" || rt == "studio" {
		if err := s.checkHost(r); err != nil {
			return err
		}
	}
	switch rt {
	case "healthz", "readyz", "metrics", "openapi.json":
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			return errMonitoringMethod
		}
	}
	switch rt {
	case "mock":
		return s.serveMock(w, r)
	case "project":
		return s.serveProject(w, r)
	case "admin":
		if s.adminCORS(w, r) {
			return nil // a preflight
		}
		return s.admin.Serve(w, r)
	case "healthz":
		answer.JSON(w, http.StatusOK, map[string]string{"status": "ok"})
	case "readyz":
		return s.ready(w, r)
	case "metrics":
		s.metrics.handler.ServeHTTP(w, r)
	case "openapi.json":
		serveOpenAPI(w, r)
	case "studio":
		return s.serveStudio(w, r)
	default:
		return answer.ErrNotFound
	}
	return nil
}

// sharedLimitsUp reports whether both shared limiters work.
func (s *Server) sharedLimitsUp(ctx context.Context) bool {
	return s.limiter.Up(ctx) && s.authLimiter.Up(ctx)
}

// readiness is the answer of /readyz.
type readiness struct {
	Status string `json:"status"`
	// Limits is "shared" while rate limits are shared with other replicas,
	// "local" while each replica limits alone (the shared limiter failed),
	// and absent on a single server.
	Limits string `json:"limits,omitempty"`
	// Cache is "trusted" while cached mocks are served as they are and
	// "revalidating" while each read checks the store for changes.
	Cache string `json:"cache"`
}

// ready answers /readyz: ready while the store can be reached and has room
// to write (a full disk would fail writes, and refuse the reads it cannot
// count). Shared limits failing does not make the server unready, since it
// goes on without them; the answer says so.
func (s *Server) ready(w http.ResponseWriter, r *http.Request) error {
	if err := s.cfg.Store.Ping(r.Context()); err != nil {
		if s.firstFailure("readiness") { // a balancer may ask every second
			s.log.Warn("store not ready", "err", err)
		}
		msg := "Store unavailable"
		if decoy.ErrorCode(err) == decoy.ENOSPACE {
			msg += ": " + decoy.ErrorMessage(err)
		}
		return answer.New(http.StatusServiceUnavailable, msg)
	}
	rd := readiness{Status: "ready", Cache: "trusted"}
	if !s.cache.Trusted() {
		rd.Cache = "revalidating"
	}
	if s.limiter != nil {
		rd.Limits = "shared"
		if !s.sharedLimitsUp(r.Context()) {
			rd.Limits = "local"
		}
	}
	answer.JSON(w, http.StatusOK, rd)
	return nil
}

// seconds rounds d up to whole seconds, as Retry-After and X-RateLimit-Reset
// want them.
func seconds(d time.Duration) string {
	if d <= 0 {
		return "0"
	}
	return strconv.FormatInt(int64((d+time.Second-1)/time.Second), 10)
}

// recorder remembers the status and size of a response for logs and
// metrics, and what the journal records of its request (journal.go).
type recorder struct {
	http.ResponseWriter
	status  int
	bytes   int64
	journal journalRequest
}

func (rec *recorder) WriteHeader(status int) {
	if rec.status == 0 {
		rec.status = status
	}
	rec.ResponseWriter.WriteHeader(status)
}

func (rec *recorder) Write(b []byte) (int, error) {
	if rec.status == 0 {
		rec.status = http.StatusOK
	}
	n, err := rec.ResponseWriter.Write(b)
	rec.bytes += int64(n)
	return n, err
}

// ReadFrom hands a body read from a file to net/http's own ReadFrom, which
// sends it with sendfile (see mockcache.Config.SpillDir).
func (rec *recorder) ReadFrom(r io.Reader) (int64, error) {
	if rec.status == 0 {
		rec.status = http.StatusOK
	}
	n, err := io.Copy(rec.ResponseWriter, r)
	rec.bytes += n
	return n, err
}

func (rec *recorder) Unwrap() http.ResponseWriter { return rec.ResponseWriter }

// closeUnread closes the connection after an answer whose head is written
// before the request's body was read whole (an upload refused for its
// token, a body sent to a read), rather than let net/http read the rest at
// the client's pace, holding a graceful stop. After a body read whole, the
// connection is kept for the client's next request.
func closeUnread(next http.Handler, bodies *bodies, client func(*http.Request) string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength == 0 && len(r.TransferEncoding) == 0 {
			next.ServeHTTP(w, r)
			return
		}
		body := &trackedBody{ReadCloser: r.Body}
		r.Body = body
		// net/http looks at its own body once the handler returns: one
		// closed early is half-closed and waited for, so that a client
		// still sending it reads the answer rather than a reset.
		defer func() { r.Body = body.ReadCloser }()
		hr, release := withBodyHold(r, bodies, client(r))
		defer release()
		next.ServeHTTP(&unreadCloser{ResponseWriter: w, body: body}, hr)
	})
}

// trackedBody is a request body that knows when it was read to its end.
type trackedBody struct {
	io.ReadCloser
	read bool
}

func (b *trackedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF {
		b.read = true
	}
	return n, err
}

// unreadCloser asks for the connection to be closed when the answer's head
// is written before its request's body was read whole.
type unreadCloser struct {
	http.ResponseWriter
	body  *trackedBody
	wrote bool
}

func (w *unreadCloser) WriteHeader(status int) {
	if !w.wrote {
		w.wrote = true
		if !w.body.read {
			w.Header().Set("Connection", "close")
		}
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *unreadCloser) Write(b []byte) (int, error) {
	if !w.wrote {
		w.WriteHeader(http.StatusOK)
	}
	return w.ResponseWriter.Write(b)
}

func (w *unreadCloser) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// observe logs every request (with auth_token redacted) and records metrics.
func (s *Server) observe(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := &recorder{ResponseWriter: w}
		defer s.copyBody(rec, r)()
		// Deferred, so that a request aborted by panic(http.ErrAbortHandler)
		// is logged and counted too.
		defer s.logRequest(rec, r, start)
		next.ServeHTTP(rec, r)
	})
}

// logRequest writes the access-log line of a request, records its
// metrics, and hands it to the journal.
func (s *Server) logRequest(rec *recorder, r *http.Request, start time.Time) {
	if rec.status == 0 {
		rec.status = 499 // the client went away before an answer
	}
	elapsed := time.Since(start)
	s.record(rec, r, s.sectionOf(r), elapsed)
	s.recordJournal(rec, r, elapsed)
}

// record counts rec, the answer to r, in the metrics and writes its
// access-log line (path escaped, query raw, both redacted), when the log
// takes it.
func (s *Server) record(rec *recorder, r *http.Request, rt string, elapsed time.Duration) {
	s.metrics.observe(rt, rec.status, elapsed)
	ctx := r.Context()
	level := slog.LevelInfo
	if rt == "healthz" || rt == "readyz" || rt == "metrics" {
		level = slog.LevelDebug
	}
	if !s.log.Enabled(ctx, level) {
		return // not written: do not build its fields (the path escaped, redactions, client address)
	}
	path, client := rec.journal.text(s, r)
	s.log.LogAttrs(ctx, level, "request",
		slog.String("method", r.Method),
		slog.String("path", admin.RedactPath(query.Redact(path))),
		slog.String("query", query.Redact(r.URL.RawQuery)),
		slog.Int("status", rec.status),
		slog.Int64("bytes", rec.bytes),
		slog.Duration("duration", elapsed),
		slog.String("client", client),
	)
}

// recover turns a panic into a logged JSON 500.
func (s *Server) recover(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			v := recover()
			if v == nil {
				return
			}
			if err, ok := v.(error); ok && errors.Is(err, http.ErrAbortHandler) {
				panic(v)
			}
			s.metrics.panics.Inc()
			s.log.Error("panic serving request", "method", r.Method, "path", admin.RedactPath(r.URL.Path), "panic", v, "stack", string(debug.Stack()))
			if rec, ok := w.(*recorder); !ok || rec.status == 0 {
				s.writeError(w, r, answer.New(http.StatusInternalServerError, "Internal server error"))
			}
		}()
		next.ServeHTTP(w, r)
	})
}
