package server

import (
	"context"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/decoy-mock/decoy"
)

// This file is what the server does when it shares its store, limits and
// quotas with other replicas: it announces its changes, listens for theirs,
// and degrades to what one replica can do alone when the shared services
// fail.

// Listen receives other replicas' changes from the Invalidator until ctx
// ends, dropping the cached copies they make stale. Until the Invalidator
// is listening, and whenever it loses its channel, the cache is not trusted:
// each read checks the store for a newer version. Without an Invalidator,
// Listen returns at once.
func (s *Server) Listen(ctx context.Context) {
	if s.cfg.Invalidator == nil {
		return
	}
	s.cfg.Invalidator.Listen(ctx, (*listener)(s))
}

// listener is the Server as the Invalidator's handler.
type listener Server

func (l *listener) Listening() {
	s := (*Server)(l)
	s.cache.Listening()
	if s.projects != nil {
		s.projects.Flush()
	}
	s.metrics.cacheTrusted.Set(1)
	s.log.Info("listening for changes from other replicas")
}

func (l *listener) Lost(err error) {
	s := (*Server)(l)
	s.cache.Lost()
	s.metrics.cacheTrusted.Set(0)
	s.metrics.sharedErrors.WithLabelValues("invalidation").Inc()
	s.log.Warn("lost the channel of changes from other replicas; checking the store on every read until it is back", "err", err)
}

func (l *listener) Invalidated(id string) {
	s := (*Server)(l)
	if project, ok := strings.CutPrefix(id, decoy.ProjectAnnouncement); ok {
		if s.projects != nil {
			s.projects.Remove(project)
		}
		return
	}
	if write, ok := strings.CutPrefix(id, decoy.WriteAnnouncement); ok {
		mock, seqText, _ := strings.Cut(write, ":")
		if seq, err := strconv.ParseInt(seqText, 10, 64); err == nil {
			s.cache.Advance(mock, seq)
			return
		}
		s.cache.Remove(mock)
		return
	}
	s.cache.Remove(id)
}

// SharedFailed records that a shared backend failed and the server fell back
// to what it can do alone (use says what for: "quota", ...). Backends call
// it through their fallback hooks.
func (s *Server) SharedFailed(use string, err error) {
	s.metrics.sharedErrors.WithLabelValues(use).Inc()
	if s.firstFailure(use) {
		s.log.Warn("shared backend failed; going on without it", "use", use, "err", err)
	}
}

// firstFailure reports whether a failure of kind is the first since
// failureLogInterval. Every read may fail the same way while a backend is
// down or the disk full: the first of each kind per interval is logged,
// and all are counted.
func (s *Server) firstFailure(kind string) bool {
	now := s.cfg.Now().UnixNano()
	last, _ := s.failLogged.LoadOrStore(kind, new(atomic.Int64))
	at := last.(*atomic.Int64)
	prev := at.Load()
	return now-prev >= int64(failureLogInterval) && at.CompareAndSwap(prev, now)
}

// failureLogInterval is how often a failure of one kind is logged.
const failureLogInterval = 10 * time.Second
