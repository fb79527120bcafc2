package redis

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/decoy-mock/decoy"
	goredis "github.com/redis/go-redis/v9"
)

// rateScript is the whole limiter: an exact sliding window log in a sorted
// set whose scores are the admission times in microseconds, on the Redis
// server's clock so that every replica agrees on "now". It does what
// inmem.Limiter does under its lock, and answers the same.
//
// KEYS[1] the window (sorted set), KEYS[2] the event sequence (string).
// ARGV: limit, window (µs), admit ("1" for Allow, "0" for Peek), now (µs,
// empty for the server's clock).
// Returns {allowed, used, reset µs, retry µs, event}.
var rateScript = goredis.NewScript(`
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local now
if ARGV[4] ~= '' then
  now = tonumber(ARGV[4])
else
  -- TIME makes the script non-deterministic; older servers must be told to
  -- replicate its effects rather than the script itself.
  if redis.replicate_commands then redis.replicate_commands() end
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000000 + tonumber(t[2])
end

-- Events at or before the cutoff have left the window.
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
local used = redis.call('ZCARD', KEYS[1])

local allowed, retry, event = 0, 0, 0
if ARGV[3] == '1' then
  if used < limit then
    allowed = 1
    event = redis.call('INCR', KEYS[2])
    redis.call('ZADD', KEYS[1], now, string.format('%d', event))
    used = used + 1
    -- The window outlives its newest event by one window; the sequence
    -- outlives the window, so that an event id is never reused while an
    -- event with that id may still be in the window.
    local ttl = math.ceil(window / 1000)
    redis.call('PEXPIRE', KEYS[1], ttl)
    redis.call('PEXPIRE', KEYS[2], 2 * ttl)
  else
    -- A slot frees when enough events have left for fewer than limit to
    -- remain: more than one if the limit was lowered.
    local e = redis.call('ZRANGE', KEYS[1], used - limit, used - limit, 'WITHSCORES')
    retry = tonumber(e[2]) + window - now
  end
elseif used < limit then
  allowed = 1
end

local reset = 0
if used > 0 then
  local o = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
  reset = tonumber(o[2]) + window - now
end
-- A clock that stepped back (a failover to a server whose clock is behind)
-- must not promise a wait longer than a window.
if reset > window then reset = window end
if retry > window then retry = window end
return {allowed, used, reset, retry, event}
`)

// limiterClient is what the limiter needs of a Redis client.
type limiterClient interface {
	goredis.Scripter
	ZRem(ctx context.Context, key string, members ...any) *goredis.IntCmd
}

// Limiter is an exact sliding-window limiter shared by every replica that
// uses the same Redis and prefix. It keeps, per key, the admission time of
// each event of the last decoy.RateWindow, so it answers exactly as
// inmem.Limiter does, to the microsecond. Idle keys expire one window after
// their last admitted event.
//
// The keys of limiter key K are prefix+"{"+K+"}:rate" (a sorted set of
// event ids scored by admission time in microseconds) and
// prefix+"{"+K+"}:seq" (the last event id); the braces put both in one hash
// slot of a Redis Cluster.
type Limiter struct {
	// Now, when set, replaces the Redis server's clock; tests set it to
	// move time without sleeping. Leave it nil in production: replicas
	// agree on the window only through the one clock of the server.
	Now func() time.Time

	c      limiterClient
	prefix string
}

// NewLimiter returns a limiter whose keys start with prefix (for example
// "decoy:").
func NewLimiter(c goredis.UniversalClient, prefix string) *Limiter {
	return &Limiter{c: c, prefix: prefix}
}

var _ decoy.Limiter = (*Limiter)(nil)

// Allow admits one event for key when fewer than limit were admitted in the
// window ending now. It returns EUNAVAILABLE when Redis cannot answer.
func (l *Limiter) Allow(ctx context.Context, key string, limit int64) (decoy.RateResult, error) {
	return l.do(ctx, key, limit, true)
}

// Peek reports the state of key as Allow would see it, admitting nothing.
// It returns EUNAVAILABLE when Redis cannot answer.
func (l *Limiter) Peek(ctx context.Context, key string, limit int64) (decoy.RateResult, error) {
	return l.do(ctx, key, limit, false)
}

// Undo removes the event that Allow admitted and returned in r, and no
// other. It returns EUNAVAILABLE when Redis cannot answer.
func (l *Limiter) Undo(ctx context.Context, key string, r decoy.RateResult) error {
	if !r.Allowed || r.Event <= 0 {
		return nil
	}
	rate, _ := l.keys(key)
	if err := l.c.ZRem(ctx, rate, strconv.FormatInt(r.Event, 10)).Err(); err != nil {
		return unavailable("undo rate-limit event", err)
	}
	return nil
}

func (l *Limiter) do(ctx context.Context, key string, limit int64, admit bool) (decoy.RateResult, error) {
	if limit <= 0 {
		return decoy.RateResult{}, fmt.Errorf("redis: rate limit %d for %q is not positive", limit, key)
	}
	if key == "" {
		// "{}" is no hash tag: the two keys could land in different slots.
		return decoy.RateResult{}, errors.New("redis: empty rate-limit key")
	}
	now := ""
	if l.Now != nil {
		now = strconv.FormatInt(l.Now().UnixMicro(), 10)
	}
	flag := "0"
	if admit {
		flag = "1"
	}
	rate, seq := l.keys(key)
	v, err := rateScript.Run(ctx, l.c, []string{rate, seq},
		limit, decoy.RateWindow.Microseconds(), flag, now).Int64Slice()
	if err != nil {
		return decoy.RateResult{}, unavailable("rate limit", err)
	}
	if len(v) != 5 {
		return decoy.RateResult{}, fmt.Errorf("redis: rate script returned %d values", len(v))
	}
	r := decoy.RateResult{
		Allowed:    v[0] == 1,
		Limit:      limit,
		Used:       v[1],
		Remaining:  max(limit-v[1], 0),
		Reset:      time.Duration(v[2]) * time.Microsecond,
		RetryAfter: time.Duration(v[3]) * time.Microsecond,
		Event:      v[4],
	}
	return r, nil
}

func (l *Limiter) keys(key string) (rate, seq string) {
	tag := l.prefix + "{" + key + "}"
	return tag + ":rate", tag + ":seq"
}

// unavailableError is a failed Redis call: EUNAVAILABLE for the server,
// with the cause kept for logs and errors.Is.
type unavailableError struct {
	op  string
	err error
}

func unavailable(op string, err error) error {
	return &unavailableError{op: op, err: err}
}

func (e *unavailableError) Error() string { return "redis: " + e.op + ": " + e.err.Error() }

func (e *unavailableError) Unwrap() []error {
	return []error{e.err, decoy.Errorf(decoy.EUNAVAILABLE, "Service temporarily unavailable")}
}
