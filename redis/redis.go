// Package redis implements the parts of Decoy that replicas share through
// Redis: the sliding-window rate limiter (Limiter), a monthly quota counter
// that answers from Redis in front of the durable store (Quota), cache
// invalidation over publish/subscribe (Invalidator), projects' request
// journals in streams (Journal), and the counts of routes' rules with
// times (RuleCounter).
//
// # Keys
//
// All keys start with the prefix given to the constructors (say "decoy:"):
//
//	<prefix>{<key>}:rate                  sorted set: the events of rate-limit key <key>
//	<prefix>{<key>}:seq                   string: the last event id of <key>
//	<prefix>{mock:<id>}:quota:<YYYY-MM>   string: a mock's count for a month (UTC)
//	<prefix>invalidate                    channel: ids of changed mocks
//	<prefix>{project:<id>}:journal        stream: a project's request journal
//	<prefix>{route:<id>}:rules            hash: a route's rule counts, by rule index
//
// The server's rate-limit keys are "mock:<id>", so the keys of one mock share
// the hash tag "{mock:<id>}": every Lua script touches a single hash slot,
// and the package works unchanged on Redis Cluster. Rate-limit keys expire a
// window after their last event, quota counts 40 days after the first,
// journals JournalTTL after their last entry.
// The prefix should hold no "{", which would make it the hash tag of every
// key.
//
// # Addresses
//
// Open accepts three forms of URL:
//
//	redis://[user:password@]host[:port][/db][?option=value&...]
//	rediss://...                                          (the same over TLS)
//
//	redis+cluster://[user:password@]host:port[,host:port...][/][?option=value&...]
//	rediss+cluster://...
//
//	redis+sentinel://[user:password@]host:port[,host:port...]/master-name[?db=N&...]
//	rediss+sentinel://...
//
// The first form is parsed by go-redis's ParseURL and takes all of its
// options (dial_timeout, read_timeout, write_timeout, max_retries, pool_size,
// client_name, protocol, skip_verify, ...). The cluster and sentinel forms
// take the same options; a cluster URL also takes max_redirects, read_only,
// route_by_latency and route_randomly, and has no database (only db 0). In a
// sentinel URL the user and password are those of the Redis master; the
// sentinels' own credentials, when they have any, go in sentinel_username
// and sentinel_password. Ports default to 6379 (26379 for sentinels).
//
// Unless the URL sets them, timeouts are short, because every command runs on
// the path of a client's request and a slow Redis must not stall it: dial 1s
// with no second attempt (dialer_retries=1), read and write 500ms, one retry
// of a failed command (max_retries=1).
package redis

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

// Timeouts used unless the URL sets its own.
const (
	defaultDialTimeout   = time.Second
	defaultReadTimeout   = 500 * time.Millisecond
	defaultWriteTimeout  = 500 * time.Millisecond
	defaultMaxRetries    = 1
	defaultDialerRetries = 1
)

// Open connects to the Redis named by rawURL (see the package comment for
// the forms it takes) and pings it once.
//
// When the URL is malformed Open returns a nil client. When Redis cannot be
// reached it returns the client together with the error: the client
// reconnects by itself, so the caller may decide to start anyway.
func Open(ctx context.Context, rawURL string) (goredis.UniversalClient, error) {
	opts, err := parseURL(rawURL)
	if err != nil {
		return nil, err
	}
	c := goredis.NewUniversalClient(opts)
	if err := c.Ping(ctx).Err(); err != nil {
		return c, fmt.Errorf("redis: cannot reach %s: %w", redact(rawURL), err)
	}
	return c, nil
}

// parseURL turns any of the accepted URL forms into client options.
func parseURL(rawURL string) (*goredis.UniversalOptions, error) {
	scheme, rest, ok := strings.Cut(rawURL, "://")
	if !ok {
		return nil, fmt.Errorf("redis: %s: not a URL", redact(rawURL))
	}
	base, mode, _ := strings.Cut(strings.ToLower(scheme), "+")
	if base != "redis" && base != "rediss" {
		return nil, fmt.Errorf("redis: %s: scheme must be redis, rediss, redis+cluster or redis+sentinel", redact(rawURL))
	}

	// Split the authority by hand: net/url rejects several hosts in one
	// authority when they are IPv6 literals.
	authority, pathQuery := rest, ""
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		authority, pathQuery = rest[:i], rest[i:]
	}
	userinfo, hostList := "", authority
	if i := strings.LastIndex(authority, "@"); i >= 0 {
		userinfo, hostList = authority[:i+1], authority[i+1:]
	}
	u, err := url.Parse(base + "://" + userinfo + "placeholder" + pathQuery)
	if err != nil {
		return nil, fmt.Errorf("redis: %s: %w", redact(rawURL), stripURL(err))
	}

	// go-redis reads dialer_retries only in cluster and sentinel URLs; here
	// it is read for all forms, since its default is too high (see
	// withDefaults).
	q := u.Query()
	var qerr error
	dialerRetries := takeInt(q, "dialer_retries", &qerr)
	if qerr != nil {
		return nil, fmt.Errorf("redis: %s: %w", redact(rawURL), qerr)
	}

	switch mode {
	case "":
		if strings.Contains(hostList, ",") {
			return nil, fmt.Errorf("redis: %s: several hosts need redis+cluster:// or redis+sentinel://", redact(rawURL))
		}
		u.Host = hostList
		u.RawQuery = q.Encode()
		o, err := goredis.ParseURL(u.String())
		if err != nil {
			return nil, fmt.Errorf("redis: %s: %w", redact(rawURL), stripURL(err))
		}
		uo := universal(o)
		uo.DialerRetries = dialerRetries
		return withDefaults(uo), nil

	case "cluster":
		hosts, err := splitHosts(hostList, "6379")
		if err != nil {
			return nil, fmt.Errorf("redis: %s: %w", redact(rawURL), err)
		}
		if p := strings.Trim(u.Path, "/"); p != "" && p != "0" {
			return nil, fmt.Errorf("redis: %s: Redis Cluster has only database 0", redact(rawURL))
		}
		if q.Has("db") {
			return nil, fmt.Errorf("redis: %s: Redis Cluster has only database 0", redact(rawURL))
		}
		var cerr error
		maxRedirects := takeInt(q, "max_redirects", &cerr)
		readOnly := takeBool(q, "read_only", &cerr)
		byLatency := takeBool(q, "route_by_latency", &cerr)
		randomly := takeBool(q, "route_randomly", &cerr)
		if cerr != nil {
			return nil, fmt.Errorf("redis: %s: %w", redact(rawURL), cerr)
		}
		o, err := parseCommon(base, userinfo, hosts[0], q)
		if err != nil {
			return nil, fmt.Errorf("redis: %s: %w", redact(rawURL), err)
		}
		uo := universal(o)
		uo.Addrs = hosts
		clearServerName(uo)
		uo.DialerRetries = dialerRetries
		uo.IsClusterMode = true // a ClusterClient even with a single seed host
		uo.MaxRedirects = maxRedirects
		uo.ReadOnly = readOnly
		uo.RouteByLatency = byLatency
		uo.RouteRandomly = randomly
		return withDefaults(uo), nil

	case "sentinel":
		hosts, err := splitHosts(hostList, "26379")
		if err != nil {
			return nil, fmt.Errorf("redis: %s: %w", redact(rawURL), err)
		}
		master := strings.Trim(u.Path, "/")
		if master == "" || strings.Contains(master, "/") {
			return nil, fmt.Errorf("redis: %s: the path must be the master name, as in redis+sentinel://host:26379/mymaster", redact(rawURL))
		}
		sentinelUser, sentinelPassword := q.Get("sentinel_username"), q.Get("sentinel_password")
		q.Del("sentinel_username")
		q.Del("sentinel_password")
		o, err := parseCommon(base, userinfo, hosts[0], q)
		if err != nil {
			return nil, fmt.Errorf("redis: %s: %w", redact(rawURL), err)
		}
		uo := universal(o)
		uo.Addrs = hosts
		clearServerName(uo)
		uo.DialerRetries = dialerRetries
		uo.MasterName = master
		uo.SentinelUsername = sentinelUser
		uo.SentinelPassword = sentinelPassword
		return withDefaults(uo), nil
	}
	return nil, fmt.Errorf("redis: %s: unknown scheme %q (want redis+cluster or redis+sentinel)", redact(rawURL), scheme)
}

// parseCommon reads the options shared by all forms with go-redis's own
// parser, by handing it a single-node URL with the remaining query.
func parseCommon(scheme, userinfo, host string, q url.Values) (*goredis.Options, error) {
	u := scheme + "://" + userinfo + host
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	o, err := goredis.ParseURL(u)
	if err != nil {
		return nil, stripURL(err)
	}
	return o, nil
}

// splitHosts splits a comma-separated host list, adding the default port
// where one is missing.
func splitHosts(list, defaultPort string) ([]string, error) {
	var hosts []string
	for h := range strings.SplitSeq(list, ",") {
		if h == "" {
			return nil, fmt.Errorf("empty host in %q", list)
		}
		host, port, err := net.SplitHostPort(h)
		if err != nil {
			// No port: strip IPv6 brackets so JoinHostPort adds them once.
			host, port = strings.TrimSuffix(strings.TrimPrefix(h, "["), "]"), defaultPort
		}
		if host == "" {
			return nil, fmt.Errorf("empty host in %q", list)
		}
		if _, err := strconv.ParseUint(port, 10, 16); err != nil {
			return nil, fmt.Errorf("invalid port in %q", h)
		}
		hosts = append(hosts, net.JoinHostPort(host, port))
	}
	return hosts, nil
}

func takeInt(q url.Values, name string, err *error) int {
	s := q.Get(name)
	q.Del(name)
	if s == "" {
		return 0
	}
	n, e := strconv.Atoi(s)
	if e != nil && *err == nil {
		*err = fmt.Errorf("invalid %s: %q", name, s)
	}
	return n
}

func takeBool(q url.Values, name string, err *error) bool {
	s := q.Get(name)
	q.Del(name)
	if s == "" {
		return false
	}
	b, e := strconv.ParseBool(s)
	if e != nil && *err == nil {
		*err = fmt.Errorf("invalid %s: %q", name, s)
	}
	return b
}

// universal copies what go-redis's URL parser can set.
func universal(o *goredis.Options) *goredis.UniversalOptions {
	return &goredis.UniversalOptions{
		Addrs:                   []string{o.Addr},
		ClientName:              o.ClientName,
		DB:                      o.DB,
		Protocol:                o.Protocol,
		Username:                o.Username,
		Password:                o.Password,
		MaxRetries:              o.MaxRetries,
		MinRetryBackoff:         o.MinRetryBackoff,
		MaxRetryBackoff:         o.MaxRetryBackoff,
		DialTimeout:             o.DialTimeout,
		ReadTimeout:             o.ReadTimeout,
		WriteTimeout:            o.WriteTimeout,
		PoolFIFO:                o.PoolFIFO,
		PoolSize:                o.PoolSize,
		PoolTimeout:             o.PoolTimeout,
		MinIdleConns:            o.MinIdleConns,
		MaxIdleConns:            o.MaxIdleConns,
		MaxActiveConns:          o.MaxActiveConns,
		MaxConcurrentDials:      o.MaxConcurrentDials,
		PipelinePoolSize:        o.PipelinePoolSize,
		PipelineReadBufferSize:  o.PipelineReadBufferSize,
		PipelineWriteBufferSize: o.PipelineWriteBufferSize,
		ConnMaxIdleTime:         o.ConnMaxIdleTime,
		ConnMaxLifetime:         o.ConnMaxLifetime,
		ConnMaxLifetimeJitter:   o.ConnMaxLifetimeJitter,
		TLSConfig:               o.TLSConfig,
	}
}

// clearServerName lets TLS check each node against the address it dials:
// with several nodes, the first host's name would be wrong for the others.
func clearServerName(o *goredis.UniversalOptions) {
	if o.TLSConfig != nil {
		o.TLSConfig.ServerName = ""
	}
}

// withDefaults sets the short request-path timeouts where the URL left the
// go-redis defaults (zero; a negative value, which disables, is kept).
func withDefaults(o *goredis.UniversalOptions) *goredis.UniversalOptions {
	if o.DialTimeout == 0 {
		o.DialTimeout = defaultDialTimeout
	}
	if o.ReadTimeout == 0 {
		o.ReadTimeout = defaultReadTimeout
	}
	if o.WriteTimeout == 0 {
		o.WriteTimeout = defaultWriteTimeout
	}
	// A caller's deadline bounds every step of a command (the wait for a
	// pooled connection, a dial, the reads), so that a budget given to
	// Redis is kept whatever Redis does.
	o.ContextTimeoutEnabled = true
	if o.MaxRetries == 0 {
		o.MaxRetries = defaultMaxRetries
	}
	// go-redis dials five times (100ms apart) before a command fails, and
	// retries the command on top: against an unreachable Redis that is many
	// dial timeouts on a request's path.
	if o.DialerRetries <= 0 {
		o.DialerRetries = defaultDialerRetries
	}
	return o
}

// redact hides the password of a URL, which may be in any accepted form, so
// it can appear in errors and logs.
func redact(rawURL string) string {
	scheme, rest, ok := strings.Cut(rawURL, "://")
	if !ok {
		if strings.Contains(rawURL, "@") {
			return "(URL hidden)"
		}
		return rawURL
	}
	authority, tail := rest, ""
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		authority, tail = rest[:i], rest[i:]
	}
	if i := strings.LastIndex(authority, "@"); i >= 0 {
		user, _, hasPassword := strings.Cut(authority[:i], ":")
		if hasPassword {
			authority = user + ":xxxxx" + authority[i:]
		}
	}
	if i := strings.IndexAny(tail, "?#"); i >= 0 && strings.Contains(tail[i:], "password=") {
		tail = tail[:i] + "?(options hidden)"
	}
	return scheme + "://" + authority + tail
}

// stripURL drops the URL that net/url errors repeat, which may hold a
// password (the caller names the URL, redacted), and go-redis's "redis: "
// that the caller's message already starts with.
func stripURL(err error) error {
	if ue, ok := err.(*url.Error); ok {
		err = ue.Err
	}
	if msg, ok := strings.CutPrefix(err.Error(), "redis: "); ok {
		return errors.New(msg)
	}
	return err
}
