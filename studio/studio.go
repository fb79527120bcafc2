// Package studio is Decoy Studio, the web dashboard served at "/": its
// front end, built from web/ and embedded from dist/, and the sign-in
// sessions it runs on.
//
// Signing in exchanges the admin token for a session: a random cookie
// (HttpOnly, SameSite=Strict, Secure over TLS) whose secret the store keeps
// only hashed. The page then calls the admin API with the cookie and the
// session's CSRF token in the X-CSRF-Token header; a cookie without the
// header authorizes nothing.
package studio

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/decoy-mock/decoy"
	"github.com/decoy-mock/decoy/answer"
)

// Paths of the Studio.
const (
	// SessionPath is the session endpoint: GET tells the page its CSRF
	// token, POST signs in, DELETE signs out.
	SessionPath = "/studio/session"
	// AssetPrefix starts the paths of the front end's files.
	AssetPrefix = "/studio/assets/"
)

// ContentSecurityPolicy is the policy of every Studio page: scripts and
// style sheets only from Decoy's own files (no inline scripts, no inline
// <style>), requests only to the same origin, and never in a frame. Style
// attributes are allowed: the editor (CodeMirror) sets them, and they
// cannot run code or select elements.
const ContentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; style-src-attr 'unsafe-inline'; img-src 'self' data:; " +
	"font-src 'self'; connect-src 'self'; manifest-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// maxSignInBytes caps the body of a sign-in.
const maxSignInBytes = 4 << 10

// Config is what the Studio needs from the server.
type Config struct {
	Sessions decoy.SessionStore
	// AdminTokenHash is the SHA-256 of the admin token.
	AdminTokenHash []byte
	// CheckAdminToken checks the admin token given at sign-in against the
	// server's, counting a wrong one against the failed-authentication
	// limit; it returns the error to answer with, or nil.
	CheckAdminToken func(r *http.Request, token string) error
	// CheckPassword, when set, lets people sign in with an email and a
	// password (§6): it returns the user's id, or the error to answer
	// with, counting a wrong pair as CheckAdminToken counts a wrong
	// token.
	CheckPassword func(r *http.Request, email, password string) (userID string, err error)
	// Fail answers with an error: the server's one error writer, which
	// answers an *answer.Error with its status and headers, a
	// *decoy.Error with the status of its code and its message, and any
	// other error with a generic message (logged).
	Fail func(w http.ResponseWriter, r *http.Request, err error)
	// PublicURL, when https, makes cookies Secure even over plain HTTP
	// (behind a proxy that ends TLS); its host is a same origin too.
	PublicURL string
	// Now returns the current time. Tests replace it.
	Now func() time.Time
}

// Handler serves the Studio: its page, its files and its session endpoint.
type Handler struct {
	cfg      Config
	sessions *sessions
	assets   *assets
	secure   bool
	host     string // of PublicURL
}

// New returns the Studio handler for cfg.
func New(cfg Config) *Handler {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	h := &Handler{
		cfg:      cfg,
		sessions: &sessions{store: cfg.Sessions, adminHash: adminFingerprint(cfg.AdminTokenHash), now: cfg.Now},
		assets:   loadAssets(),
	}
	if u, err := url.Parse(cfg.PublicURL); err == nil && cfg.PublicURL != "" {
		h.secure = u.Scheme == "https"
		h.host = u.Host
	}
	return h
}

// IsRoute reports whether a path is the Studio's: its page, its files or
// its session endpoint.
func IsRoute(path string) bool {
	return path == "/" || path == SessionPath || strings.HasPrefix(path, AssetPrefix)
}

// EndStaleSessions ends, for good, the server admin's sessions opened under
// another admin token than the one in force: a server restarted with a new
// token signs the server admin out, and one restarted with the old token
// again signs nobody back in. Users signed in with a password stay signed
// in. It returns how many ended.
func (h *Handler) EndStaleSessions(ctx context.Context) (int64, error) {
	return h.sessions.endStale(ctx)
}

// ServeHTTP serves a path of which IsRoute is true.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var err error
	switch {
	case r.URL.Path == SessionPath:
		h.serveSession(w, r)
	case r.URL.Path == "/":
		err = h.assets.serveIndex(w, r)
	default:
		err = h.assets.serveAsset(w, r, strings.TrimPrefix(r.URL.Path, AssetPrefix))
	}
	if err != nil {
		h.cfg.Fail(w, r, err)
	}
}

// HasSession reports whether a request carries a session cookie, so that
// the admin API is to authorize it with Authorize.
func HasSession(r *http.Request) bool {
	c, err := r.Cookie(CookieName)
	return err == nil && c.Value != ""
}

// Authorize checks the session cookie and the CSRF header of an admin API
// request: it returns a 401 error for a cookie that opens no live session,
// a 403 one for a missing or wrong CSRF token, and else the
// id of the user signed in ("" for the server admin) to let the request
// through as that user.
func (h *Handler) Authorize(r *http.Request) (userID string, err error) {
	o, err := h.lookup(r)
	if err != nil {
		return "", err
	}
	if !CheckCSRF(r.Header.Get(CSRFHeader), o.secret) {
		return "", errCSRF
	}
	return o.session.UserID, nil
}

var errCSRF = decoy.Errorf(decoy.EFORBIDDEN, "Missing or invalid CSRF token: send the X-CSRF-Token header that GET "+SessionPath+" gives")

// session returns the live session of a request; without one it answers
// 401 and returns false.
func (h *Handler) session(w http.ResponseWriter, r *http.Request) (*opened, bool) {
	o, err := h.lookup(r)
	if err != nil {
		h.cfg.Fail(w, r, err)
		return nil, false
	}
	return o, true
}

// lookup returns the live session of a request, or errSession. A cookie
// that opens none is not cleared: by the time the answer arrives, the
// browser may hold a newer one (another tab signed in while this request
// was under way), and clearing it would sign that session out too.
func (h *Handler) lookup(r *http.Request) (*opened, error) {
	c, err := r.Cookie(CookieName)
	if err != nil {
		return nil, errSession
	}
	return h.sessions.check(r.Context(), c.Value)
}

// sessionInfo is what the session endpoint tells the page.
type sessionInfo struct {
	SignedIn  bool      `json:"signed_in"`
	CSRFToken string    `json:"csrf_token,omitempty"`
	ExpiresAt time.Time `json:"expires_at,omitzero"`
	// IdleTimeout is how long the session lasts without a request.
	IdleTimeout int64 `json:"idle_timeout_seconds,omitempty"`
	// UserID is the user signed in; absent for the server admin.
	UserID string `json:"user_id,omitempty"`
}

func (h *Handler) serveSession(w http.ResponseWriter, r *http.Request) {
	hd := w.Header()
	hd.Set("Cache-Control", "no-store")
	hd.Set("X-Content-Type-Options", "nosniff")
	switch r.Method {
	case http.MethodGet:
		// Not signed in is an answer, not an error: the page asks this
		// on every load.
		o, err := h.lookup(r)
		switch {
		case errors.Is(err, errSession):
			answer.JSON(w, http.StatusOK, sessionInfo{})
		case err != nil:
			h.cfg.Fail(w, r, err)
		default:
			answer.JSON(w, http.StatusOK, info(o))
		}
	case http.MethodPost:
		h.signIn(w, r)
	case http.MethodDelete:
		h.signOut(w, r)
	default:
		hd.Set("Allow", "GET, POST, DELETE")
		h.cfg.Fail(w, r, decoy.Errorf(decoy.EMETHOD, "Method not allowed"))
	}
}

func info(o *opened) sessionInfo {
	return sessionInfo{SignedIn: true, CSRFToken: o.csrf(), ExpiresAt: o.session.ExpiresAt, IdleTimeout: int64(IdleTimeout / time.Second), UserID: o.session.UserID}
}

// signIn exchanges the admin token, or a user's email and password, for a
// session. There is no session yet
// to take a CSRF token from, so a sign-in must come from the Studio's own
// origin: a JSON body (which a cross-site form cannot send), and an Origin
// and Sec-Fetch-Site, when the browser sends them, of this site.
func (h *Handler) signIn(w http.ResponseWriter, r *http.Request) {
	if !h.sameOrigin(r) {
		h.cfg.Fail(w, r, decoy.Errorf(decoy.EFORBIDDEN, "Sign-in from another site refused"))
		return
	}
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		h.cfg.Fail(w, r, decoy.Errorf(decoy.EUNSUPPORTED, "Sign in with a JSON body: {\"token\": \"<admin token>\"}"))
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxSignInBytes))
	var in struct {
		Token    string `json:"token"`
		Email    string `json:"email"`
		Password string `json:"password"`
	}
	if err == nil && !utf8.Valid(body) {
		// Not decoded with bad bytes replaced: see the admin API's parseBody.
		h.cfg.Fail(w, r, decoy.NotUTF8(body))
		return
	}
	if err == nil {
		err = json.Unmarshal(body, &in)
	}
	byPassword := h.cfg.CheckPassword != nil && in.Token == "" && in.Email != ""
	if err != nil || (in.Token == "" && !byPassword) {
		h.cfg.Fail(w, r, decoy.Errorf(decoy.EINVALID, "Sign in with a JSON body: {\"token\": \"<admin token>\"}"))
		return
	}
	userID := ""
	if byPassword {
		userID, err = h.cfg.CheckPassword(r, in.Email, in.Password)
	} else {
		err = h.cfg.CheckAdminToken(r, in.Token)
	}
	if err != nil {
		h.cfg.Fail(w, r, err)
		return
	}
	// A session the browser still had ends: one browser, one session.
	if c, err := r.Cookie(CookieName); err == nil {
		if err := h.sessions.end(r.Context(), c.Value); err != nil {
			h.cfg.Fail(w, r, err)
			return
		}
	}
	o, err := h.sessions.open(r.Context(), userID)
	if err != nil {
		h.cfg.Fail(w, r, err)
		return
	}
	http.SetCookie(w, h.cookie(r, o.cookie, int(MaxLifetime/time.Second)))
	answer.JSON(w, http.StatusOK, info(o))
}

// signOut ends the session on the server and clears the cookie.
func (h *Handler) signOut(w http.ResponseWriter, r *http.Request) {
	o, ok := h.session(w, r)
	if !ok {
		return
	}
	if !CheckCSRF(r.Header.Get(CSRFHeader), o.secret) {
		h.cfg.Fail(w, r, errCSRF)
		return
	}
	if err := h.sessions.store.DeleteSession(r.Context(), o.session.ID); err != nil {
		h.cfg.Fail(w, r, err)
		return
	}
	h.clearCookie(w, r)
	w.WriteHeader(http.StatusNoContent)
}

// sameOrigin reports whether a request comes from the Studio's own origin,
// as far as the browser says: requests without Origin or Sec-Fetch-Site
// (curl, say) are not a browser's cross-site ones.
func (h *Handler) sameOrigin(r *http.Request) bool {
	if site := r.Header.Get("Sec-Fetch-Site"); site != "" && site != "same-origin" && site != "none" {
		return false
	}
	origin := r.Header.Get("Origin")
	if origin == "" {
		return true
	}
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" {
		return false
	}
	return strings.EqualFold(u.Host, r.Host) || h.host != "" && strings.EqualFold(u.Host, h.host)
}

// cookie returns the session cookie with value, lasting maxAge seconds
// (negative: delete it).
func (h *Handler) cookie(r *http.Request, value string, maxAge int) *http.Cookie {
	return &http.Cookie{
		Name:     CookieName,
		Value:    value,
		Path:     "/",
		MaxAge:   maxAge,
		HttpOnly: true,
		SameSite: http.SameSiteStrictMode,
		Secure:   h.secure || r.TLS != nil,
	}
}

func (h *Handler) clearCookie(w http.ResponseWriter, r *http.Request) {
	http.SetCookie(w, h.cookie(r, "", -1))
}
