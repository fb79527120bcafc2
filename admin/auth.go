package admin

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/decoy-mock/decoy"
	"github.com/decoy-mock/decoy/answer"
	"github.com/decoy-mock/decoy/secret"
)

// This file finds who sent an admin API request (§6): the server admin by
// its token or a Studio session, a user by a personal access token, or a
// workspace's API key. Lookups are not cached, so that a revoked key or
// token, or a deleted user, is refused at once on every replica.

// Prefixes of the secrets the admin API is called with.
const (
	AccessTokenPrefix = "dcy_pat_"
	KeyPrefix         = "dcy_key_"
	invitationPrefix  = "dcy_inv_"
)

// Lifetimes of what people are given.
const (
	AccessTokenLifetime = 90 * 24 * time.Hour
	InvitationLifetime  = 7 * 24 * time.Hour
)

// caller is who sent an admin API request: the server admin (admin), a
// user (who may also be a server admin), or an API key.
type caller struct {
	admin bool
	user  *decoy.User
	key   *decoy.APIKey
	// token is the personal access token a user's request came with, for
	// DELETE /auth/token and the "current" mark of listings.
	token *decoy.AccessToken
}

// actor is the caller as the audit log names it.
func (c *caller) actor() decoy.Actor {
	switch {
	case c.key != nil:
		return decoy.Actor{Kind: "key", ID: c.key.ID, Label: c.key.Name}
	case c.user != nil:
		return decoy.Actor{Kind: "user", ID: c.user.ID, Label: c.user.Email}
	}
	return decoy.ServerAdmin
}

var errInvalidAdminToken = answer.New(http.StatusUnauthorized, "Invalid admin token",
	"WWW-Authenticate", `Bearer realm="decoy-admin", error="invalid_token"`)

// resolveCaller finds the caller of an admin API request. A wrong bearer
// token counts as a failed attempt of the client, with its wrong mock
// tokens and passwords.
func (s *API) resolveCaller(w http.ResponseWriter, r *http.Request) (*caller, error) {
	if c, err, done := s.studioAuthorized(w, r); done {
		return c, err
	}
	key := s.failureKey(r)
	if err := s.cfg.Clients.AuthBlocked(r, key); err != nil {
		return nil, err
	}
	token := bearerToken(r)
	if token == "" {
		return nil, answer.New(http.StatusUnauthorized, "Admin token required", "WWW-Authenticate", `Bearer realm="decoy-admin"`)
	}
	c, err := s.lookupCaller(r.Context(), token)
	if err != nil {
		return nil, err
	}
	if c == nil {
		return nil, s.cfg.Clients.AuthFailed(r, key, errInvalidAdminToken)
	}
	return c, nil
}

// bearerToken returns the bearer token of a request, or "".
func bearerToken(r *http.Request) string {
	scheme, token, _ := strings.Cut(r.Header.Get("Authorization"), " ")
	if !strings.EqualFold(scheme, "Bearer") {
		return ""
	}
	return strings.TrimSpace(token)
}

// lookupCaller returns the caller a bearer token stands for, or nil when
// it stands for none (wrong, expired, revoked).
func (s *API) lookupCaller(ctx context.Context, token string) (*caller, error) {
	if secret.Matches(token, s.cfg.AdminTokenHash) {
		return &caller{admin: true}, nil
	}
	if s.cfg.Teams == nil {
		return nil, nil
	}
	now := s.cfg.Now()
	switch {
	case strings.HasPrefix(token, AccessTokenPrefix) && len(token) == len(AccessTokenPrefix)+secret.Length:
		t, u, err := s.cfg.Teams.FindAccessToken(ctx, secret.Hash(token), now)
		if decoy.ErrorCode(err) == decoy.ENOTFOUND {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		s.tokenUsed(t.ID, now)
		return &caller{admin: u.ServerAdmin, user: u, token: t}, nil
	case strings.HasPrefix(token, KeyPrefix) && len(token) == len(KeyPrefix)+secret.Length:
		k, err := s.cfg.Teams.FindKey(ctx, secret.Hash(token))
		if decoy.ErrorCode(err) == decoy.ENOTFOUND {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		if k.ExpiresAt != nil && !now.Before(*k.ExpiresAt) {
			return nil, nil
		}
		s.keyUsed(k.ID, now)
		return &caller{key: k}, nil
	}
	return nil, nil
}

// keyUses collects the last use of each API key and personal access token
// in memory; they are written to the store in one batch at most every
// keyFlushInterval, and at Close, so that a request never waits on a write.
type keyUses struct {
	// flushMu is held by a flush from start to end, so that Close waits
	// for one in flight.
	flushMu sync.Mutex
	mu      sync.Mutex
	// used are API keys' last uses, tokens personal access tokens', by
	// id.
	used     map[string]time.Time
	tokens   map[string]time.Time
	flushed  time.Time
	flushing bool
}

const (
	keyFlushInterval = 10 * time.Second
	// maxKeyUses bounds the keys and tokens waiting: past it, a flush
	// starts and further uses wait for the next one (a last use is a
	// hint).
	maxKeyUses = 10000
)

// keyUsed notes that API key id was used at now, and starts a flush in the
// background when one is due.
func (s *API) keyUsed(id string, now time.Time) { s.noteUse(&s.keyUses.used, id, now) }

// tokenUsed notes that personal access token id was used at now, as
// keyUsed does.
func (s *API) tokenUsed(id string, now time.Time) { s.noteUse(&s.keyUses.tokens, id, now) }

// noteUse notes the use of id in *used, one of keyUses' maps.
func (s *API) noteUse(used *map[string]time.Time, id string, now time.Time) {
	k := &s.keyUses
	k.mu.Lock()
	if *used == nil {
		*used = map[string]time.Time{}
	}
	if len(k.used)+len(k.tokens) < maxKeyUses {
		(*used)[id] = now
	}
	due := !k.flushing && (now.Sub(k.flushed) >= keyFlushInterval || len(k.used)+len(k.tokens) >= maxKeyUses)
	if due {
		k.flushing = true
	}
	k.mu.Unlock()
	if due {
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), writeTimeout)
			defer cancel()
			s.flushKeyUses(ctx)
		}()
	}
}

// flushKeyUses writes the last uses collected so far.
func (s *API) flushKeyUses(ctx context.Context) {
	k := &s.keyUses
	k.flushMu.Lock()
	defer k.flushMu.Unlock()
	k.mu.Lock()
	used, tokens := k.used, k.tokens
	k.used, k.tokens = nil, nil
	k.flushed = s.cfg.Now()
	k.mu.Unlock()
	if len(used) > 0 && s.cfg.Teams != nil {
		if err := s.cfg.Teams.TouchKeys(ctx, used); err != nil {
			s.log.Warn("could not record the last use of API keys", "keys", len(used), "err", err)
		}
	}
	if len(tokens) > 0 && s.cfg.Teams != nil {
		if err := s.cfg.Teams.TouchAccessTokens(ctx, tokens); err != nil {
			s.log.Warn("could not record the last use of personal access tokens", "tokens", len(tokens), "err", err)
		}
	}
	k.mu.Lock()
	k.flushing = false
	k.mu.Unlock()
}
