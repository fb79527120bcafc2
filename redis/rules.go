package redis

import (
	"context"
	"strconv"
	"time"

	"github.com/decoy-mock/decoy"
	goredis "github.com/redis/go-redis/v9"
)

// ruleTTL keeps a route's counts this long after its last take: a route
// deleted (or whose mock was) leaves nothing behind for ever.
const ruleTTL = 30 * 24 * time.Hour

// takeRuleScript counts one more request for a rule (field ARGV[1] of the
// route's hash) when fewer than ARGV[2] were counted, and keeps the hash
// ARGV[3] milliseconds from now. It answers 1 when it counted, 0 when not.
var takeRuleScript = goredis.NewScript(`
local n = tonumber(redis.call('HGET', KEYS[1], ARGV[1]) or '0')
if n >= tonumber(ARGV[2]) then return 0 end
redis.call('HINCRBY', KEYS[1], ARGV[1], 1)
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1
`)

// ruleClient is what the rule counter needs of a Redis client.
type ruleClient interface {
	goredis.Scripter
	Pipelined(ctx context.Context, fn func(goredis.Pipeliner) error) ([]goredis.Cmder, error)
}

// RuleCounter counts the requests routes' rules with times held for
// (decoy.RuleCounter, §13.1), shared by every replica that uses the same
// Redis and prefix: a route's counts are one hash,
// prefix+"{route:<id>}:rules", a field per rule (its index), counted by a
// Lua script that takes only below times, so that replicas never count
// more than times between them. A reset deletes the hash. The hash lives
// 30 days after its last take, so the counts survive a restart of any
// replica, as Redis does.
type RuleCounter struct {
	c      ruleClient
	prefix string
}

// NewRuleCounter returns a counter whose keys start with prefix (for
// example "decoy:").
func NewRuleCounter(c goredis.UniversalClient, prefix string) *RuleCounter {
	return &RuleCounter{c: c, prefix: prefix}
}

var _ decoy.RuleCounter = (*RuleCounter)(nil)

func (rc *RuleCounter) key(routeID string) string { return rc.prefix + "{route:" + routeID + "}:rules" }

// TakeRule counts one more request for rule index of route when fewer than
// times were counted. It returns EUNAVAILABLE when Redis cannot answer.
func (rc *RuleCounter) TakeRule(ctx context.Context, routeID string, index int, times int64) (bool, error) {
	n, err := takeRuleScript.Run(ctx, rc.c, []string{rc.key(routeID)},
		strconv.Itoa(index), times, ruleTTL.Milliseconds()).Int64()
	if err != nil {
		return false, unavailable("take rule", err)
	}
	return n == 1, nil
}

// ResetRules deletes routes' counts: one DEL a route, up to resetBatch of
// them in one pipeline (each route's key has a hash slot of its own, so
// that one DEL of several keys fails on Redis Cluster; a cluster client
// splits a pipeline by slot). It returns EUNAVAILABLE when Redis cannot
// answer.
func (rc *RuleCounter) ResetRules(ctx context.Context, routeIDs ...string) error {
	for len(routeIDs) > 0 {
		n := min(len(routeIDs), resetBatch)
		_, err := rc.c.Pipelined(ctx, func(p goredis.Pipeliner) error {
			for _, id := range routeIDs[:n] {
				p.Del(ctx, rc.key(id))
			}
			return nil
		})
		if err != nil {
			return unavailable("reset rules", err)
		}
		routeIDs = routeIDs[n:]
	}
	return nil
}

// resetBatch bounds the DELs of one pipeline, so that a project's
// deletion does not hold Redis for long.
const resetBatch = 1000
