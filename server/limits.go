package server

import (
	"context"
	"sync"
	"time"

	"github.com/decoy-mock/decoy"
	"golang.org/x/sync/singleflight"
)

// This file brings a workspace's monthly_reads limit (§6.2) to the read
// path. Reads past it are counted by the same QuotaCounter as the per-mock
// quota, under the workspace's id; the limit itself is kept here for
// readLimitTTL, so that a read does not ask the store, and a change made on
// any replica is in force everywhere within a second.

// readLimitTTL is how long a workspace's limit is used before the store is
// asked again.
const readLimitTTL = 500 * time.Millisecond

// maxReadLimits bounds the workspaces whose limit is kept; past it the
// cache starts over.
const maxReadLimits = 10000

// readLimits caches workspaces' monthly_reads limits.
type readLimits struct {
	mu      sync.RWMutex
	limits  map[string]readLimit
	flights singleflight.Group
}

type readLimit struct {
	limit int64 // 0: none
	at    time.Time
}

// WorkspaceQuotaKey is the id under which the QuotaCounter counts the
// reads of a workspace's mocks. Workspace ids are UUIDs, as mock ids are,
// and never equal to one.
func WorkspaceQuotaKey(workspaceID string) string { return workspaceID }

// workspaceReadLimit returns the monthly_reads limit of a workspace (0:
// none). When the store cannot say, the last limit known is used (none
// when there is none), so that a read does not fail for it.
func (s *Server) workspaceReadLimit(ctx context.Context, workspaceID string) (int64, error) {
	if s.cfg.Teams == nil || workspaceID == "" {
		return 0, nil
	}
	c := &s.readLimits
	now := s.cfg.Now()
	c.mu.RLock()
	l, ok := c.limits[workspaceID]
	c.mu.RUnlock()
	if ok && now.Sub(l.at) < readLimitTTL && now.Sub(l.at) >= 0 {
		return l.limit, nil
	}
	v, err, _ := c.flights.Do(workspaceID, func() (any, error) {
		qctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), quotaTimeout)
		defer cancel()
		w, err := s.cfg.Teams.FindWorkspace(qctx, workspaceID)
		if err != nil {
			return int64(0), err
		}
		var n int64
		if w.Limits.MonthlyReads != nil {
			n = *w.Limits.MonthlyReads
		}
		s.keepReadLimit(workspaceID, n)
		return n, nil
	})
	switch {
	case err == nil:
		return v.(int64), nil
	case decoy.ErrorCode(err) == decoy.ENOTFOUND:
		return 0, nil // deleted with its mocks meanwhile
	}
	// The store cannot say: the last limit known holds, or none, as the
	// server goes on without the store while it serves cached mocks.
	// Kept for readLimitTTL as if read, so that reads do not each wait
	// on a store that is down.
	s.metrics.sharedErrors.WithLabelValues("store").Inc()
	if s.firstFailure("workspace limits") {
		s.log.Warn("workspace limits unavailable; using the last known, or none", "workspace", workspaceID, "err", err)
	}
	s.keepReadLimit(workspaceID, l.limit)
	return l.limit, nil
}

// keepReadLimit caches the limit of a workspace.
func (s *Server) keepReadLimit(workspaceID string, limit int64) {
	c := &s.readLimits
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.limits == nil || len(c.limits) >= maxReadLimits {
		c.limits = map[string]readLimit{}
	}
	c.limits[workspaceID] = readLimit{limit: limit, at: s.cfg.Now()}
}

// forgetReadLimit drops the cached limit of a workspace this server
// changed, so that it is in force here at once.
func (s *Server) forgetReadLimit(workspaceID string) {
	s.readLimits.mu.Lock()
	delete(s.readLimits.limits, workspaceID)
	s.readLimits.mu.Unlock()
}

// reserveWorkspaceRead counts one served read of a workspace's mocks
// against its monthly_reads limit, through the QuotaCounter that counts the
// mock's own quota: when reserve is false (a read that will not return the
// data) it only looks. It returns whether it reserved, the limit and the
// reads counted (this one included), and an ERATELIMIT error when the
// limit is reached.
func (s *Server) reserveWorkspaceRead(ctx context.Context, workspaceID, month string, reserve bool) (bool, int64, int64, error) {
	limit, err := s.workspaceReadLimit(ctx, workspaceID)
	if err != nil || limit == 0 {
		return false, 0, 0, err
	}
	key := WorkspaceQuotaKey(workspaceID)
	var ok bool
	var used int64
	if reserve {
		qctx, cancel := s.quotaContext(ctx, true)
		used, ok, err = s.cfg.Quota.ReserveQuota(qctx, key, month, limit)
		cancel()
	} else {
		qctx, cancel := s.quotaContext(ctx, false)
		used, err = s.cfg.Quota.QuotaUsed(qctx, key, month)
		cancel()
		ok = used < limit
	}
	switch {
	case err != nil:
		if s.firstFailure("workspace quota") {
			s.log.Warn("workspace reads cannot be counted; refusing the reads that would be", "workspace", workspaceID, "err", err)
		}
		return false, limit, 0, decoy.Errorf(decoy.EUNAVAILABLE, "The monthly quota of this mock cannot be counted right now; try again later")
	case !ok:
		return false, limit, limit, decoy.Errorf(decoy.ERATELIMIT, "Monthly request quota exceeded")
	}
	return reserve, limit, used, nil
}
