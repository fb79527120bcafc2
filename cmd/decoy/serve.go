package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/decoy-mock/decoy"
	"github.com/decoy-mock/decoy/docfile"
	"github.com/decoy-mock/decoy/importer"
	"github.com/decoy-mock/decoy/inmem"
	"github.com/decoy-mock/decoy/journal"
	"github.com/decoy-mock/decoy/postgres"
	"github.com/decoy-mock/decoy/redis"
	"github.com/decoy-mock/decoy/secret"
	"github.com/decoy-mock/decoy/server"
	"github.com/decoy-mock/decoy/sqlite"
	"github.com/decoy-mock/decoy/upstream"
	readusage "github.com/decoy-mock/decoy/usage"
	goredis "github.com/redis/go-redis/v9"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// adminTokenPrefix starts generated admin tokens, so they are not mistaken
// for mock tokens.
const adminTokenPrefix = "dcy_admin_"

// maxVersions is the most --max-versions takes: each mock may keep that
// many copies of its data, each up to --max-data-bytes.
const maxVersions = 1000

// maxJournalSize is the most --journal-size takes: a listing of a
// project's journal may read that many entries.
const maxJournalSize = 100_000

// Config is the configuration of decoy serve, from flags and DECOY_*
// variables.
type Config struct {
	Addr             string
	TLSCert          string
	TLSKey           string
	DataDir          string
	DatabaseURL      string
	RedisURL         string
	RedisKeyPrefix   string
	AdminToken       string
	RateLimit        int64
	MonthlyQuota     int64
	MaxDataBytes     byteSize
	MaxCacheBytes    boundSize
	MaxOpenDocuments int
	MaxVersions      int
	Seed             string
	CORSOrigins      listFlag
	AllowedHosts     listFlag
	TokenHeader      string
	AuthFailureLimit int64
	ClientRateLimit  int64
	MaxConns         int
	MaxClientConns   int
	MinBodyRate      boundSize
	TrustedProxies   prefixFlag
	PublicURL        string
	LogFormat        string
	LogLevel         string
	ShutdownTimeout  time.Duration
	Studio           bool
	OpenWorkspaces   bool
	RoutesDomain     string
	MaxRoutes        int
	JournalSize      int
	UpstreamTimeout  time.Duration
	UpstreamAllow    addedPrefixFlag
}

// Main is the decoy serve program: ParseFlags, then Run, then Close. An
// end-to-end test can run it in process as well as through the binary.
type Main struct {
	Config Config
	Stdout io.Writer
	Stderr io.Writer

	log   *slog.Logger
	store store
	// uploads is where uploaded documents are streamed to.
	uploads string
	redis   goredis.UniversalClient
	quota   *redis.Quota
	usage   *readusage.Recorder
	journal *journal.Journal
	server  *server.Server
	// stop ends the background work (listening for other replicas'
	// changes, flushing quota counts); done is closed when it has ended.
	stop context.CancelFunc
	done chan struct{}
	// logw buffers the log (see logwriter.go); stopLog ends its flushing,
	// after a last flush, and logDone is closed then.
	logw    *logWriter
	stopLog context.CancelFunc
	logDone chan struct{}
	// serving is set once the server listens.
	serving bool
	// seedTokens holds the tokens of the private mocks seeded from an
	// exported folder, printed once at start.
	seedTokens map[string]string
}

// NewMain returns a Main that writes to stdout and stderr.
func NewMain(stdout, stderr io.Writer) *Main {
	return &Main{Stdout: stdout, Stderr: stderr}
}

// defineFlags defines the flags of decoy serve on fs, over m.Config.
func (m *Main) defineFlags(fs *pflag.FlagSet) {
	c := &m.Config
	c.MaxDataBytes = 64 << 20
	c.MaxCacheBytes = 1 << 30
	c.MinBodyRate = server.DefaultMinBodyRate
	c.CORSOrigins = listFlag{"*"}
	fs.StringVar(&c.Addr, "addr", "127.0.0.1:8080", "listen address")
	fs.StringVar(&c.TLSCert, "tls-cert", "", "PEM file of the certificate (and its chain) to serve HTTPS and HTTP/2 with; read again when it changes")
	fs.StringVar(&c.TLSKey, "tls-key", "", "PEM file of the private key of --tls-cert")
	fs.StringVar(&c.DataDir, "data-dir", "./decoy-data", "directory of the embedded store (SQLite) and state")
	fs.StringVar(&c.DatabaseURL, "database-url", "", "postgres://... to keep the store in PostgreSQL instead of SQLite, shared by replicas")
	fs.StringVar(&c.RedisURL, "redis-url", "", "redis://..., rediss://..., redis+cluster://... or redis+sentinel://... to share rate limits, quotas and cache invalidation between replicas")
	fs.StringVar(&c.RedisKeyPrefix, "redis-key-prefix", "decoy:", "prefix of every Redis key and channel, so that several deployments can share one Redis")
	fs.StringVar(&c.AdminToken, "admin-token", "", "admin API bearer token (default: generated at first start, printed once)")
	fs.Int64Var(&c.RateLimit, "rate-limit", decoy.DefaultRateLimit, "default requests per minute per mock; 0 = unlimited")
	fs.Int64Var(&c.MonthlyQuota, "monthly-quota", decoy.DefaultMonthlyQuota, "default served responses per month per mock; 0 = unlimited")
	fs.Var(&c.MaxDataBytes, "max-data-bytes", "largest mock document accepted (bytes, or with KiB, MiB, GiB; KB, MB, GB are powers of 1000)")
	fs.Var(&c.MaxCacheBytes, "max-cache-bytes", "memory for the mocks kept ready to serve, least recently read dropped first (bytes, or with KiB, MiB, GiB; KB, MB, GB are powers of 1000); 0 = no bound")
	fs.IntVar(&c.MaxOpenDocuments, "max-open-documents", 1024, "most mocks kept ready to serve with their documents mapped from files (those of 64 KiB or more; each holds a mapping), least recently read closed first; 0 = no bound")
	fs.IntVar(&c.MaxVersions, "max-versions", decoy.DefaultMaxVersions, fmt.Sprintf("versions of its data kept per mock, the current one included (1 to %d)", maxVersions))
	fs.StringVar(&c.Seed, "seed", "", "folder of *.json files loaded at start as open mocks, with ids stable across restarts; or a folder written by decoy export (ids and settings from its decoy.json)")
	fs.Var(&c.CORSOrigins, "cors-origins", "allowed CORS origins, comma-separated; * for any")
	fs.Var(&c.AllowedHosts, "allowed-hosts", "extra Host names, comma-separated, that the Studio and the admin API accept when listening on a loopback address (others are refused, against DNS rebinding)")
	fs.StringVar(&c.TokenHeader, "token-header", "", "an extra header name accepted for mock tokens (Authorization: Bearer is always read)")
	fs.Int64Var(&c.AuthFailureLimit, "auth-failure-limit", 30, "failed authentication attempts per client address and minute; 0 = unlimited")
	fs.Int64Var(&c.ClientRateLimit, "client-rate-limit", 0, "requests per client address and minute on every route but /healthz, /readyz and /metrics, per replica; 0 = off")
	fs.IntVar(&c.MaxConns, "max-connections", 4096, "most connections open at once; 0 = no cap")
	fs.IntVar(&c.MaxClientConns, "max-client-connections", 256, "most connections open at once from one client address (an IPv6 /64), trusted proxies excepted; 0 = no cap")
	fs.Var(&c.MinBodyRate, "min-body-rate", "slowest a request body may come, in bytes a second on average from the server's first read of it, after 5 s for its first bytes (or with KiB, MiB, GiB; KB, MB, GB are powers of 1000); a slower client is cut with 408; 0 = no floor")
	fs.Var(&c.TrustedProxies, "trusted-proxies", "comma-separated CIDRs or addresses of proxies whose X-Forwarded-For is believed for the client address")
	fs.StringVar(&c.PublicURL, "public-url", "", "base URL that mock URLs are printed and shown with (default: from the listen address or the request)")
	fs.StringVar(&c.LogFormat, "log-format", "text", "log format: text or json")
	fs.StringVar(&c.LogLevel, "log-level", "info", "log level: debug, info, warn or error")
	fs.BoolVar(&c.Studio, "studio", true, "serve Decoy Studio, the web dashboard, at /; --studio=false turns it off")
	fs.BoolVar(&c.OpenWorkspaces, "open-workspaces", false, "let any signed-in user create workspaces (else only server admins)")
	fs.StringVar(&c.RoutesDomain, "routes-domain", "", "a domain D under which SLUG.D serves project SLUG's routes at their own paths, as SLUG.localhost always does (point *.D at the server)")
	fs.IntVar(&c.MaxRoutes, "max-routes", decoy.DefaultMaxRoutes, "most routes a project holds (1 or more)")
	fs.IntVar(&c.JournalSize, "journal-size", decoy.DefaultJournalSize, fmt.Sprintf("requests kept in each project's request journal, the oldest leaving first (up to %d); 0 = no journal", maxJournalSize))
	fs.DurationVar(&c.UpstreamTimeout, "upstream-timeout", upstream.DefaultTimeout, "how long a project's upstream may take to accept a connection and to start its answer before the request gets 502 (pass-through and recording)")
	fs.Var(&c.UpstreamAllow, "upstream-allow", "CIDRs or addresses, comma-separated or repeated, where upstreams may be although not public (loopback, private, link-local…: refused otherwise)")
	fs.DurationVar(&c.ShutdownTimeout, "shutdown-timeout", 35*time.Second, "how long in-flight requests may take to finish at shutdown")
}

// ParseFlags reads the configuration from args and the environment.
func (m *Main) ParseFlags(args []string) error {
	fs := pflag.NewFlagSet("decoy serve", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	m.defineFlags(fs)
	if err := fs.Parse(args); err != nil {
		return flagError(err)
	}
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q", fs.Arg(0))
	}
	return m.finishFlags(fs)
}

// finishFlags fills the flags not given from DECOY_* variables, and
// checks the configuration.
func (m *Main) finishFlags(fs *pflag.FlagSet) error {
	c := &m.Config
	if err := applyEnv(fs); err != nil {
		return err
	}
	switch {
	case decoy.CheckRateLimit("--rate-limit", c.RateLimit) != nil:
		return decoy.CheckRateLimit("--rate-limit", c.RateLimit)
	case c.MonthlyQuota < 0:
		return fmt.Errorf("--monthly-quota must be 0 or more")
	case decoy.CheckRateLimit("--auth-failure-limit", c.AuthFailureLimit) != nil:
		return decoy.CheckRateLimit("--auth-failure-limit", c.AuthFailureLimit)
	case c.MaxOpenDocuments < 0:
		return fmt.Errorf("--max-open-documents must be 0 or more")
	case c.MaxVersions < 1 || c.MaxVersions > maxVersions:
		return fmt.Errorf("--max-versions must be from 1 to %d", maxVersions)
	case decoy.CheckRateLimit("--client-rate-limit", c.ClientRateLimit) != nil:
		return decoy.CheckRateLimit("--client-rate-limit", c.ClientRateLimit)
	case c.MaxConns < 0 || c.MaxClientConns < 0:
		return fmt.Errorf("--max-connections and --max-client-connections must be 0 or more")
	case c.LogFormat != "text" && c.LogFormat != "json":
		return fmt.Errorf("--log-format must be text or json")
	case c.DatabaseURL != "" && !strings.HasPrefix(c.DatabaseURL, "postgres://") && !strings.HasPrefix(c.DatabaseURL, "postgresql://"):
		return fmt.Errorf("--database-url must be a postgres:// or postgresql:// URL")
	case strings.ContainsAny(c.RedisKeyPrefix, "{}"):
		return fmt.Errorf("--redis-key-prefix must not contain { or }: they choose the Redis Cluster hash slot")
	case (c.TLSCert == "") != (c.TLSKey == ""):
		return fmt.Errorf("--tls-cert and --tls-key go together: give both to serve HTTPS, or neither")
	case c.TokenHeader != "" && !validHeaderName(c.TokenHeader):
		return fmt.Errorf("--token-header %q is not a valid header name", c.TokenHeader)
	case c.MaxRoutes < 1:
		return fmt.Errorf("--max-routes must be 1 or more")
	case c.JournalSize < 0 || c.JournalSize > maxJournalSize:
		return fmt.Errorf("--journal-size must be from 0 (no journal) to %d", maxJournalSize)
	case c.UpstreamTimeout <= 0:
		return fmt.Errorf("--upstream-timeout must be more than 0")
	case c.ShutdownTimeout <= 0:
		return fmt.Errorf("--shutdown-timeout must be more than 0")
	case c.RoutesDomain != "" && !validDomain(c.RoutesDomain):
		return fmt.Errorf("--routes-domain %q is not a domain name (such as mocks.example.com)", c.RoutesDomain)
	}
	if c.PublicURL != "" {
		if u, err := url.Parse(c.PublicURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("--public-url must be an http:// or https:// URL")
		}
	}
	return nil
}

const serveLong = `Run the Decoy server: the public read endpoint of mocks, the admin API,
Decoy Studio (the web dashboard) at /, /healthz, /readyz, /metrics and
/openapi.json.

Every flag can also be set with DECOY_<FLAG>, upper case with - as _:
DECOY_ADDR, DECOY_DATA_DIR, DECOY_MAX_DATA_BYTES=64MiB, and so on. A flag
given on the command line wins over its variable.`

func serveCommand() *cobra.Command {
	m := NewMain(nil, nil)
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run the server",
		Long:  serveLong,
		Example: `  decoy serve
  decoy serve --addr 0.0.0.0:8080 --data-dir /var/lib/decoy --max-data-bytes 128MiB
  DECOY_DATABASE_URL=postgres://decoy@db/decoy DECOY_REDIS_URL=redis://cache:6379/0 decoy serve
  decoy serve --seed ./mocks --tls-cert cert.pem --tls-key key.pem`,
		Args: exactArgs(0, "no argument"),
	}
	m.defineFlags(cmd.Flags())
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		m.Stdout, m.Stderr = cmd.OutOrStdout(), cmd.ErrOrStderr()
		if err := m.finishFlags(cmd.Flags()); err != nil {
			return err
		}
		ctx := cmd.Context()
		if err := m.Run(ctx); err != nil {
			m.Close()
			return err
		}
		<-ctx.Done()
		return m.Close()
	}
	return cmd
}

// validDomain reports whether s is a domain name: dot-separated labels of
// letters, digits and '-', not starting or ending with '-'.
func validDomain(s string) bool {
	s = strings.TrimSuffix(s, ".")
	if s == "" || len(s) > 253 {
		return false
	}
	for _, label := range strings.Split(s, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for _, c := range label {
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-') {
				return false
			}
		}
	}
	return true
}

func validHeaderName(s string) bool {
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("!#$%&'*+-.^_`|~", c)) {
			return false
		}
	}
	return s != ""
}

// Run opens the store, seeds it, and starts serving. It returns once the
// server listens; Close stops it.
func (m *Main) Run(ctx context.Context) error {
	c := &m.Config
	gogc := setGCPercent()
	var level slog.Level
	if err := level.UnmarshalText([]byte(c.LogLevel)); err != nil {
		return fmt.Errorf("--log-level: %w", err)
	}
	opts := &slog.HandlerOptions{Level: level}
	m.logw = newLogWriter(m.Stderr)
	var h slog.Handler = slog.NewTextHandler(m.logw, opts)
	if c.LogFormat == "json" {
		h = slog.NewJSONHandler(m.logw, opts)
	}
	m.log = slog.New(flushingHandler{h, m.logw})
	logCtx, stopLog := context.WithCancel(context.WithoutCancel(ctx))
	m.logDone = make(chan struct{})
	m.stopLog = stopLog
	go func() { m.logw.Run(logCtx); close(m.logDone) }()

	var err error
	if c.RedisURL != "" {
		// go-redis logs every failed dial; the server logs what they mean.
		goredis.SetLogger(redisLog{m.log})
		if m.redis, err = redis.Open(ctx, c.RedisURL); m.redis == nil {
			return fmt.Errorf("--redis-url: %w", err)
		} else if err != nil {
			// Replicas go on without Redis, so one may start without it.
			m.log.Warn("Redis unreachable at start; limiting per replica until it is", "err", err)
		}
	}
	if m.store, err = m.openStore(ctx); err != nil {
		return err
	}
	if m.uploads, err = m.uploadDir(); err != nil {
		return err
	}
	if pg, ok := m.store.(pgStore); ok {
		// Documents read from PostgreSQL are written to files there and
		// mapped, as the sqlite store's are, rather than held in the heap.
		pg.SpillDir = m.uploads
		pg.SpillMinSize = docfile.MinMapSize
		pg.SpillFailed = func(err error) {
			m.log.Warn("a document from PostgreSQL is held in memory: it could not be written to the temporary folder", "dir", m.uploads, "err", err)
		}
	}
	adminHash, generated, tokenSource, err := m.adminToken(ctx)
	if err != nil {
		return err
	}
	rates := inmem.NewLimiter()
	if db, ok := m.store.(*sqlite.DB); ok {
		// The reads of the last minute before this start count against
		// each mock's rate limit, as they would have without a restart:
		// as many of each mock's as its limit, the most recent (none
		// without a limit), whatever the traffic was.
		recent := db.RecentReads(func(id string) int {
			mock, err := db.FindMock(ctx, id)
			if err != nil {
				return 0 // deleted: its reads count for nothing
			}
			return int(min(mock.EffectiveRateLimit(c.RateLimit), math.MaxInt32))
		})
		for id, times := range recent {
			rates.Restore(decoy.RateKey(id), times)
		}
	}
	var rules string // where rules with times are counted
	cfg := server.Config{
		Store:               m.store,
		Quota:               m.store,
		QuotaInMemory:       c.DatabaseURL == "", // SQLite's journal
		Limiter:             rates,
		AuthFailures:        inmem.NewLimiter(),
		ClientLimiter:       inmem.NewLimiter(),
		ClientRateLimit:     c.ClientRateLimit,
		TrustedProxies:      c.TrustedProxies,
		UpstreamTimeout:     c.UpstreamTimeout,
		UpstreamAllow:       c.UpstreamAllow.prefixFlag,
		SharedStore:         c.DatabaseURL != "",
		AdminTokenHash:      adminHash,
		DefaultRateLimit:    c.RateLimit,
		DefaultMonthlyQuota: c.MonthlyQuota,
		AuthFailureLimit:    c.AuthFailureLimit,
		MaxDataBytes:        int64(c.MaxDataBytes),
		MaxCacheBytes:       int64(c.MaxCacheBytes),
		MaxOpenDocuments:    c.MaxOpenDocuments,
		Versions:            m.store,
		UploadDir:           m.uploads,
		Templates:           m.store,
		CORSOrigins:         c.CORSOrigins,
		AllowedHosts:        c.AllowedHosts,
		TokenHeader:         c.TokenHeader,
		PublicURL:           c.PublicURL,
		Teams:               m.store,
		Routes:              m.store,
		RoutesDomain:        c.RoutesDomain,
		MaxRoutes:           c.MaxRoutes,
		OpenWorkspaces:      c.OpenWorkspaces,
		Addr:                c.Addr,
		TLSCert:             c.TLSCert,
		TLSKey:              c.TLSKey,
		MaxConns:            c.MaxConns,
		MaxClientConns:      c.MaxClientConns,
		MinBodyRate:         minBodyRate(int64(c.MinBodyRate)),
		ShutdownTimeout:     c.ShutdownTimeout,
		Logger:              m.log,
	}
	m.usage = readusage.NewRecorder(m.store, m.log)
	cfg.Usage = m.usage
	if c.Studio {
		cfg.Sessions = m.store
	}
	if m.redis != nil {
		m.quota = redis.NewQuota(m.redis, c.RedisKeyPrefix, m.store)
		cfg.Quota, cfg.QuotaInMemory = m.quota, false
		cfg.Limiter = redis.NewLimiter(m.redis, c.RedisKeyPrefix)
		cfg.AuthFailures = cfg.Limiter
		cfg.LocalLimiter = inmem.NewLimiter()
		if cfg.SharedStore {
			// Only replicas on one database have changes to hear of.
			cfg.Invalidator = redis.NewInvalidator(m.redis, c.RedisKeyPrefix)
		}
	}
	if c.JournalSize > 0 {
		// One journal across replicas in Redis when there is one, else
		// this process's memory.
		var store decoy.JournalStore = journal.NewRing(journal.RingConfig{Size: c.JournalSize})
		if m.redis != nil {
			store = redis.NewJournal(m.redis, c.RedisKeyPrefix, c.JournalSize)
		}
		m.journal = journal.New(journal.Config{Store: store, Logger: m.log})
		cfg.Journal = m.journal
	}
	cfg.RuleCounter, rules = m.ruleCounter()
	m.server = server.New(cfg)
	bg, stop := context.WithCancel(context.WithoutCancel(ctx))
	var wg sync.WaitGroup
	m.stop, m.done = stop, make(chan struct{})
	if q := m.quota; q != nil {
		q.OnFallback = func(err error) { m.server.SharedFailed("quota", err) }
		wg.Go(func() { q.Run(bg) })
	}
	wg.Go(func() { m.server.Listen(bg) })
	// Flushes usage counts every few seconds, and once more when stopped.
	wg.Go(func() { m.usage.Run(bg) })
	if j := m.journal; j != nil {
		// Writes the journal's entries, and what is queued when stopped.
		wg.Go(func() { j.Run(bg) })
	}
	go func() { wg.Wait(); close(m.done) }()
	m.log.Info("config",
		"version", Version(),
		"addr", c.Addr,
		"tls_cert", c.TLSCert,
		"tls_key", c.TLSKey,
		"store", storeName(c),
		"redis_url", redactURL(c.RedisURL),
		"redis_key_prefix", c.RedisKeyPrefix,
		"admin_token", tokenSource,
		"rate_limit", c.RateLimit,
		"monthly_quota", c.MonthlyQuota,
		"max_data_bytes", formatSize(int64(c.MaxDataBytes)),
		"max_cache_bytes", formatSize(int64(c.MaxCacheBytes)),
		"max_open_documents", c.MaxOpenDocuments,
		"max_versions", c.MaxVersions,
		"seed", c.Seed,
		"cors_origins", c.CORSOrigins.String(),
		"allowed_hosts", c.AllowedHosts.String(),
		"token_header", c.TokenHeader,
		"auth_failure_limit", c.AuthFailureLimit,
		"client_rate_limit", c.ClientRateLimit,
		"max_connections", c.MaxConns,
		"max_client_connections", c.MaxClientConns,
		"min_body_rate", formatSize(int64(c.MinBodyRate)),
		"trusted_proxies", c.TrustedProxies.String(),
		"public_url", c.PublicURL,
		"shutdown_timeout", c.ShutdownTimeout.String(),
		"gogc", gogc,
		"studio", c.Studio,
		"open_workspaces", c.OpenWorkspaces,
		"routes_domain", c.RoutesDomain,
		"max_routes", c.MaxRoutes,
		"journal_size", c.JournalSize,
		"upstream_timeout", c.UpstreamTimeout.String(),
		"upstream_allow", c.UpstreamAllow.String(),
		"rule_counts", rules,
	)

	seeded, err := m.seed(ctx)
	if err != nil {
		return err
	}

	if err := m.server.Open(); err != nil {
		return err
	}
	m.serving = true
	if generated != "" {
		if err := m.storeAdminToken(ctx, adminHash); err != nil {
			return err
		}
	}

	base := m.BaseURL()
	m.log.Info("listening", "addr", m.server.Addr().String())
	// Started: what only starting needed of the binary goes (see
	// releaseStartPages), while the first requests are answered.
	go func() {
		if before, after := releaseStartPages(); before > after {
			m.log.Debug("released the binary's start-up pages", "file_rss_before", formatSize(before), "file_rss_after", formatSize(after))
		}
	}()
	fmt.Fprintf(m.Stdout, "Decoy %s serving on %s\n", Version(), base)
	if c.Studio {
		fmt.Fprintf(m.Stdout, "Decoy Studio: %s/ (sign in with the admin token)\n", base)
	}
	if generated != "" {
		fmt.Fprintf(m.Stdout, "\nAdmin token (generated now and shown only once; store it):\n  %s\n"+
			"Use it with the CLI as: export DECOY_ADMIN_TOKEN=%s\n", generated, generated)
	} else if c.AdminToken == "" {
		fmt.Fprintf(m.Stdout, "\nAdmin token: generated at first start and shown then; lost it? %s\n", m.resetCommand())
	}
	if len(seeded) > 0 {
		fmt.Fprintf(m.Stdout, "\nMocks from %s:\n", c.Seed)
		width := 0
		for _, s := range seeded {
			width = max(width, len(s.Name))
		}
		for _, s := range seeded {
			fmt.Fprintf(m.Stdout, "  %-*s  %s/mock/%s", width, s.Name, base, s.ID)
			if token := m.seedTokens[s.ID]; token != "" {
				fmt.Fprintf(m.Stdout, "  token %s (shown once)", token)
			}
			fmt.Fprintln(m.Stdout)
		}
	}
	return nil
}

// redisLog passes go-redis's own messages to the log at debug level.
type redisLog struct{ log *slog.Logger }

func (l redisLog) Printf(ctx context.Context, format string, v ...any) {
	l.log.Log(ctx, slog.LevelDebug, "redis: "+fmt.Sprintf(format, v...))
}

// store is what a store backend gives the server.
type store interface {
	decoy.Store
	decoy.MockBatchStore // imports
	decoy.QuotaCounter
	decoy.SessionStore
	decoy.UsageHistoryStore
	decoy.VersionStore
	decoy.TeamStore
	decoy.RouteStore
	Close() error
	decoy.TemplateStore
}

// pgStore gives the PostgreSQL store the Close of the store interface.
type pgStore struct{ *postgres.DB }

func (s pgStore) Close() error { s.DB.Close(); return nil }

// openStore opens PostgreSQL when --database-url is set, else SQLite in
// the data directory.
func (m *Main) openStore(ctx context.Context) (store, error) {
	c := &m.Config
	if c.DatabaseURL != "" {
		db, err := postgres.Open(ctx, c.DatabaseURL)
		if err != nil {
			return nil, fmt.Errorf("open PostgreSQL store %s: %w", redactURL(c.DatabaseURL), err)
		}
		db.MaxVersions = c.MaxVersions
		return pgStore{db}, nil
	}
	db, err := sqlite.Open(ctx, c.DataDir)
	if err != nil {
		return nil, fmt.Errorf("open store in %s: %w", c.DataDir, err)
	}
	db.MaxVersions = c.MaxVersions
	return db, nil
}

// ruleCounter returns where the counts of rules with times (§13.1) are
// kept, and its name for the log: in Redis, shared by the replicas, when
// --redis-url is set; else in PostgreSQL (--database-url), shared by the
// replicas of the database; else in this process's memory, the one that
// owns the embedded store. Counts are test state: in Redis and PostgreSQL
// they survive the restart of a replica, in memory they start again with
// the process, as a reset starts them.
func (m *Main) ruleCounter() (decoy.RuleCounter, string) {
	switch {
	case m.redis != nil:
		return redis.NewRuleCounter(m.redis, m.Config.RedisKeyPrefix), "redis"
	case m.Config.DatabaseURL != "":
		return m.store.(pgStore).DB, "postgres"
	}
	return inmem.NewRuleCounter(), "memory"
}

// uploadDir returns the folder uploads are streamed to. With SQLite it is
// in the data directory, next to the store's files, so that they are moved
// into place rather than copied; this process holds the directory, so what
// a crash left there is removed. A replica on PostgreSQL takes a folder of
// its own in the system's temporary folder, gone at Close, for uploads and
// for the documents it reads from the database (postgres.DB.SpillDir).
func (m *Main) uploadDir() (string, error) {
	if m.Config.DatabaseURL != "" {
		return os.MkdirTemp("", "decoy-uploads-*")
	}
	dir := filepath.Join(m.Config.DataDir, "tmp")
	if err := os.RemoveAll(dir); err != nil {
		return "", fmt.Errorf("clear %s: %w", dir, err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	return dir, nil
}

// storeName says where the store is, for the config log.
func storeName(c *Config) string {
	if c.DatabaseURL != "" {
		return "postgres " + redactURL(c.DatabaseURL)
	}
	return "sqlite " + c.DataDir
}

// redactURL hides the passwords of a URL, for logs: that of its user, and
// every query parameter named like one (password, sentinel_password, ...).
func redactURL(s string) string {
	if s == "" {
		return ""
	}
	u, err := url.Parse(s)
	if err != nil {
		return "(unparsable URL)"
	}
	q := u.Query()
	for name := range q {
		if n := strings.ToLower(name); strings.Contains(n, "password") || strings.Contains(n, "secret") || strings.Contains(n, "token") {
			q[name] = []string{"xxxxx"}
		}
	}
	if len(q) > 0 {
		u.RawQuery = q.Encode()
	}
	return u.Redacted()
}

// BaseURL is the address the server can be reached at: https:// when it
// serves TLS.
func (m *Main) BaseURL() string {
	if m.Config.PublicURL != "" {
		return strings.TrimRight(m.Config.PublicURL, "/")
	}
	addr := m.server.Addr().(*net.TCPAddr)
	host := addr.IP.String()
	if addr.IP.IsUnspecified() {
		host = "127.0.0.1"
	}
	scheme := "http"
	if m.Config.TLSCert != "" {
		scheme = "https"
	}
	return scheme + "://" + net.JoinHostPort(host, fmt.Sprint(addr.Port))
}

// adminToken returns the hash of the admin token, the token when it is
// generated now, and where the token comes from (for the config log). A
// token generated now is stored by storeAdminToken, once the server
// listens.
func (m *Main) adminToken(ctx context.Context) (hash []byte, generated, source string, err error) {
	if t := m.Config.AdminToken; t != "" {
		return secret.Hash(t), "", "set (flag or DECOY_ADMIN_TOKEN)", nil
	}
	hash, err = m.store.AdminTokenHash(ctx)
	if err != nil {
		return nil, "", "", err
	}
	if hash != nil {
		return hash, "", "stored (generated at first start)", nil
	}
	generated = secret.New(adminTokenPrefix)
	return secret.Hash(generated), generated, "generated now, stored once listening", nil
}

// storeAdminToken stores the hash of the admin token generated at this
// start. Only once the server listens: a start that fails before (its
// port taken, say) must not leave stored a token that nobody was shown.
func (m *Main) storeAdminToken(ctx context.Context, hash []byte) error {
	switch err := m.store.SetAdminTokenHash(ctx, hash); {
	case decoy.ErrorCode(err) == decoy.ECONFLICT:
		// Another replica on the same store generated one meanwhile;
		// this one serves with its own, which nobody knows.
		return fmt.Errorf("another replica stored the admin token it generated while this one started: " +
			"start this one again and it uses that token (or give every replica the same --admin-token)")
	case err != nil:
		return fmt.Errorf("store the generated admin token: %w", err)
	}
	return nil
}

// resetCommand is the command that replaces the generated admin token
// stored where this server keeps its store.
func (m *Main) resetCommand() string {
	if u := m.Config.DatabaseURL; u != "" {
		return "decoy admin-token reset --database-url " + shellQuote(redactURL(u))
	}
	return "decoy admin-token reset --data-dir " + shellQuote(m.Config.DataDir)
}

// seed loads every *.json file of the seed folder as an open mock.
func (m *Main) seed(ctx context.Context) ([]*decoy.Mock, error) {
	dir := m.Config.Seed
	if dir == "" {
		return nil, nil
	}
	if importer.HasManifest(dir) {
		return m.seedExport(ctx, dir)
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		if _, err := os.Stat(dir); err != nil {
			return nil, fmt.Errorf("--seed: %w", err)
		}
		m.log.Warn("no *.json files to seed", "dir", dir)
	}
	sort.Strings(files)
	var mocks []*decoy.Mock
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("--seed: %w", err)
		}
		name := strings.TrimSuffix(filepath.Base(f), ".json")
		mock, changed, err := m.server.Admin().Seed(ctx, name, data)
		if err != nil {
			return nil, fmt.Errorf("--seed %s: %s", f, decoy.ErrorMessage(err))
		}
		m.log.Info("seeded mock", "name", name, "id", mock.ID, "bytes", len(data), "changed", changed)
		mocks = append(mocks, mock)
	}
	return mocks, nil
}

// Close stops accepting connections, lets in-flight requests finish (up to
// the shutdown timeout), and closes the store.
func (m *Main) Close() error {
	var errs []error
	if m.serving {
		m.log.Info("shutting down", "timeout", m.Config.ShutdownTimeout)
		if err := m.server.Close(); err != nil {
			errs = append(errs, err)
		}
	}
	if m.stop != nil {
		m.stop()
		<-m.done
	}
	if m.quota != nil {
		// Counts kept while the database was unreachable: a last try.
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		if err := m.quota.Flush(ctx); err != nil {
			errs = append(errs, fmt.Errorf("write quota counts kept in memory: %w", err))
		}
		cancel()
	}
	if m.store != nil {
		errs = append(errs, m.store.Close())
	}
	if m.redis != nil {
		errs = append(errs, m.redis.Close())
	}
	if m.uploads != "" && m.Config.DatabaseURL != "" {
		os.RemoveAll(m.uploads) // this process's own
	}
	err := errors.Join(errs...)
	if m.log != nil {
		if err != nil {
			m.log.Error("stopped", "err", err)
		} else {
			m.log.Info("stopped")
		}
	}
	if m.stopLog != nil {
		m.stopLog()
		<-m.logDone // flushed
	}
	return err
}

// minBodyRate is --min-body-rate as server.Config takes it: 0 there is
// the default, and no floor is negative.
func minBodyRate(n int64) int64 {
	if n == 0 {
		return -1
	}
	return n
}
