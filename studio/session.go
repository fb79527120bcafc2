package studio

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"time"

	"github.com/decoy-mock/decoy"
)

// Session lifetimes: a session ends after IdleTimeout without a request, and
// after MaxLifetime however active it is.
const (
	IdleTimeout = 12 * time.Hour
	MaxLifetime = 7 * 24 * time.Hour
	// touchEvery is how stale LastSeenAt may get before a request writes
	// it: at most one write a minute per session.
	touchEvery = time.Minute
)

// CookieName is the name of the session cookie.
const CookieName = "decoy_session"

// CSRFHeader is the request header that carries the session's CSRF token.
const CSRFHeader = "X-CSRF-Token"

// Sizes of the two halves of a session cookie, in bytes before encoding.
const (
	idBytes     = 16
	secretBytes = 32
)

var (
	idLen     = base64.RawURLEncoding.EncodedLen(idBytes)
	secretLen = base64.RawURLEncoding.EncodedLen(secretBytes)
)

// errSession is the answer to a cookie that opens no session: unknown,
// expired, signed out, or from before the admin token changed. Which one is
// not told.
var errSession = decoy.Errorf(decoy.EUNAUTHORIZED, "Session expired or signed out; sign in again")

// ParseCookie splits the value of a session cookie, "<id>.<secret>" in
// unpadded base64url, into the id and the decoded secret. It accepts nothing
// else.
func ParseCookie(v string) (id string, secret []byte, ok bool) {
	if len(v) != idLen+1+secretLen || v[idLen] != '.' {
		return "", nil, false
	}
	id = v[:idLen]
	if _, err := base64.RawURLEncoding.Strict().DecodeString(id); err != nil {
		return "", nil, false
	}
	secret, err := base64.RawURLEncoding.Strict().DecodeString(v[idLen+1:])
	if err != nil || len(secret) != secretBytes {
		return "", nil, false
	}
	return id, secret, true
}

// csrfToken is the CSRF token of the session whose secret is given: an
// HMAC of a fixed label under the secret. It needs no storage, differs per
// session, ends with it, and cannot be derived without the cookie, which
// scripts cannot read (HttpOnly).
func csrfToken(secret []byte) string {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte("decoy studio csrf v1"))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// CheckCSRF reports, in constant time, whether a CSRF header value is the
// token of the session whose secret is given.
func CheckCSRF(header string, secret []byte) bool {
	want := csrfToken(secret)
	return len(header) == len(want) && subtle.ConstantTimeCompare([]byte(header), []byte(want)) == 1
}

// sessions opens, checks and ends sessions kept in a store.
type sessions struct {
	store decoy.SessionStore
	// adminHash identifies the admin token in force; sessions opened
	// with another one are refused.
	adminHash []byte
	now       func() time.Time
}

func hash(b []byte) []byte {
	h := sha256.Sum256(b)
	return h[:]
}

func random(n int) []byte {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic("crypto/rand failed: " + err.Error()) // never, on supported platforms
	}
	return b
}

// opened is a session as a request sees it.
type opened struct {
	session *decoy.Session
	secret  []byte
	cookie  string // the cookie value, set when the session was just opened
}

func (o *opened) csrf() string { return csrfToken(o.secret) }

// open starts a new session. Expired sessions of anyone are deleted on the
// way, so that the table holds only live ones and a few dead ones.
func (s *sessions) open(ctx context.Context, userID string) (*opened, error) {
	now := s.now().UTC().Truncate(time.Millisecond)
	if _, err := s.store.DeleteExpiredSessions(ctx, now, now.Add(-IdleTimeout)); err != nil {
		return nil, err
	}
	id, secret := random(idBytes), random(secretBytes)
	sess := &decoy.Session{
		ID:         base64.RawURLEncoding.EncodeToString(id),
		SecretHash: hash(secret),
		AdminHash:  s.owner(userID),
		UserID:     userID,
		CreatedAt:  now,
		LastSeenAt: now,
		ExpiresAt:  now.Add(MaxLifetime),
	}
	if err := s.store.CreateSession(ctx, sess); err != nil {
		return nil, err
	}
	return &opened{session: sess, secret: secret, cookie: sess.ID + "." + base64.RawURLEncoding.EncodeToString(secret)}, nil
}

// check returns the live session a cookie value opens, or errSession.
func (s *sessions) check(ctx context.Context, cookie string) (*opened, error) {
	id, secret, ok := ParseCookie(cookie)
	if !ok {
		return nil, errSession
	}
	sess, err := s.store.FindSession(ctx, id)
	if decoy.ErrorCode(err) == decoy.ENOTFOUND {
		return nil, errSession
	}
	if err != nil {
		return nil, err
	}
	now := s.now()
	if subtle.ConstantTimeCompare(hash(secret), sess.SecretHash) != 1 {
		return nil, errSession
	}
	if subtle.ConstantTimeCompare(sess.AdminHash, s.owner(sess.UserID)) != 1 ||
		!now.Before(sess.ExpiresAt) || !now.Before(sess.LastSeenAt.Add(IdleTimeout)) {
		// Over for good: a session of another admin token must not come
		// back when that token is in force again.
		if err := s.store.DeleteSession(ctx, id); err != nil {
			return nil, err
		}
		return nil, errSession
	}
	if now.Sub(sess.LastSeenAt) >= touchEvery {
		if err := s.store.TouchSession(ctx, id, now.UTC().Truncate(time.Millisecond)); err != nil {
			return nil, err
		}
	}
	return &opened{session: sess, secret: secret}, nil
}

// endStale deletes the sessions opened under another admin token than the
// one in force, and returns how many.
func (s *sessions) endStale(ctx context.Context) (int64, error) {
	return s.store.DeleteSessionsNotOf(ctx, s.adminHash)
}

// end deletes the session of a cookie value, if it is one.
func (s *sessions) end(ctx context.Context, cookie string) error {
	id, _, ok := ParseCookie(cookie)
	if !ok {
		return nil
	}
	return s.store.DeleteSession(ctx, id)
}

// owner is the AdminHash of a session of userID: the admin token's
// fingerprint for the server admin (""), else the user's.
func (s *sessions) owner(userID string) []byte {
	if userID == "" {
		return s.adminHash
	}
	return hash([]byte("decoy studio user session v1:" + userID))
}

// adminFingerprint identifies an admin token hash without repeating it.
func adminFingerprint(adminTokenHash []byte) []byte {
	return hash(append([]byte("decoy studio session v1:"), adminTokenHash...))
}
