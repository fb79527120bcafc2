package studio_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/decoy-mock/decoy"
	"github.com/decoy-mock/decoy/answer"
	"github.com/decoy-mock/decoy/studio"
)

func TestParseCookie(t *testing.T) {
	id := base64.RawURLEncoding.EncodeToString(make([]byte, 16))
	secret := base64.RawURLEncoding.EncodeToString([]byte("0123456789abcdef0123456789abcdef"))
	for _, tc := range []struct {
		name, value string
		ok          bool
	}{
		{"well formed", id + "." + secret, true},
		{"empty", "", false},
		{"no dot", id + secret, false},
		{"dot elsewhere", id[:5] + "." + id[5:] + secret, false},
		{"short secret", id + "." + secret[:42], false},
		{"long secret", id + "." + secret + "A", false},
		{"padded", id + "." + secret[:42] + "=", false},
		{"standard base64", id + "." + strings.Replace(secret, secret[:1], "+", 1), false},
		{"non-canonical last character", id + "." + secret[:42] + "B", false},
		{"two parts swapped", secret + "." + id, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			gotID, gotSecret, ok := studio.ParseCookie(tc.value)
			if ok != tc.ok {
				t.Fatalf("ParseCookie(%q) ok = %v, want %v", tc.value, ok, tc.ok)
			}
			if ok && (gotID != id || string(gotSecret) != "0123456789abcdef0123456789abcdef") {
				t.Errorf("ParseCookie = %q, %q", gotID, gotSecret)
			}
		})
	}
}

func TestCheckCSRF(t *testing.T) {
	a, b := []byte("secret a, thirty-two bytes long!"), []byte("secret b, thirty-two bytes long!")
	h := newHandler(t)
	// The token of a session comes from signing in: it must check against
	// its own secret only.
	tok := signIn(t, h)
	_, secret, _ := studio.ParseCookie(tok.cookie)
	if !studio.CheckCSRF(tok.csrf, secret) {
		t.Error("a session's own CSRF token is refused")
	}
	for _, bad := range []string{"", tok.csrf[:len(tok.csrf)-1], tok.csrf + "A", strings.ToUpper(tok.csrf)} {
		if bad != tok.csrf && studio.CheckCSRF(bad, secret) {
			t.Errorf("CSRF token %q accepted", bad)
		}
	}
	if studio.CheckCSRF(tok.csrf, a) || studio.CheckCSRF(tok.csrf, b) {
		t.Error("a token passes for another session")
	}
}

func FuzzParseCookie(f *testing.F) {
	f.Add(base64.RawURLEncoding.EncodeToString(make([]byte, 16)) + "." + base64.RawURLEncoding.EncodeToString(make([]byte, 32)))
	f.Add("")
	f.Add(".")
	f.Add("AAAAAAAAAAAAAAAAAAAAAA.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=")
	f.Fuzz(func(t *testing.T, v string) {
		id, secret, ok := studio.ParseCookie(v)
		if !ok {
			return
		}
		// Accepted values are exactly the canonical encoding of what they
		// decode to, so one session has one cookie.
		if len(secret) != 32 || id+"."+base64.RawURLEncoding.EncodeToString(secret) != v {
			t.Fatalf("ParseCookie(%q) = %q, %x", v, id, secret)
		}
		if studio.CheckCSRF(v, secret) {
			t.Fatalf("the cookie passes as its CSRF token")
		}
	})
}

func FuzzCheckCSRF(f *testing.F) {
	f.Add("", []byte("0123456789abcdef0123456789abcdef"))
	f.Add("x", []byte{})
	f.Fuzz(func(t *testing.T, header string, secret []byte) {
		studio.CheckCSRF(header, secret) // must not panic, whatever it gets
	})
}

// memSessions is a SessionStore in memory.
type memSessions struct{ m map[string]decoy.Session }

func (s *memSessions) CreateSession(_ context.Context, x *decoy.Session) error {
	s.m[x.ID] = *x
	return nil
}
func (s *memSessions) FindSession(_ context.Context, id string) (*decoy.Session, error) {
	x, ok := s.m[id]
	if !ok {
		return nil, decoy.Errorf(decoy.ENOTFOUND, "Session not found")
	}
	return &x, nil
}
func (s *memSessions) TouchSession(_ context.Context, id string, t time.Time) error {
	if x, ok := s.m[id]; ok {
		x.LastSeenAt = t
		s.m[id] = x
	}
	return nil
}
func (s *memSessions) DeleteSession(_ context.Context, id string) error { delete(s.m, id); return nil }
func (s *memSessions) DeleteExpiredSessions(context.Context, time.Time, time.Time) (int64, error) {
	return 0, nil
}
func (s *memSessions) DeleteSessionsNotOf(_ context.Context, adminHash []byte) (int64, error) {
	var n int64
	for id, x := range s.m {
		if !bytes.Equal(x.AdminHash, adminHash) {
			delete(s.m, id)
			n++
		}
	}
	return n, nil
}

func newHandler(t *testing.T) *studio.Handler {
	t.Helper()
	return studio.New(studio.Config{
		Sessions:       &memSessions{m: map[string]decoy.Session{}},
		AdminTokenHash: []byte("hash"),
		CheckAdminToken: func(r *http.Request, token string) error {
			if token == "admin" {
				return nil
			}
			return decoy.Errorf(decoy.EUNAUTHORIZED, "no")
		},
		Fail: fail,
	})
}

type signedIn struct{ cookie, csrf string }

func signIn(t *testing.T, h *studio.Handler) signedIn {
	t.Helper()
	req := httptest.NewRequest("POST", studio.SessionPath, strings.NewReader(`{"token":"admin"}`))
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != 200 {
		t.Fatalf("sign-in: %d %s", rec.Code, rec.Body)
	}
	var s signedIn
	for _, c := range rec.Result().Cookies() {
		if c.Name == studio.CookieName {
			s.cookie = c.Value
		}
	}
	m := regexp.MustCompile(`"csrf_token":"([^"]+)"`).FindStringSubmatch(rec.Body.String())
	if s.cookie == "" || m == nil {
		t.Fatalf("sign-in gave no cookie or token: %v %s", rec.Result().Cookies(), rec.Body)
	}
	s.csrf = m[1]
	return s
}

var assetRef = regexp.MustCompile(`(?:src|href)="(/studio/assets/[^"]+)"`)

func get(h http.Handler, path string, header ...string) *http.Response {
	req := httptest.NewRequest("GET", path, nil)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Result()
}

func TestAssets(t *testing.T) {
	h := newHandler(t)
	index := get(h, "/")
	body, _ := io.ReadAll(index.Body)
	if index.StatusCode != 200 || index.Header.Get("Content-Type") != "text/html; charset=utf-8" ||
		index.Header.Get("Cache-Control") != "no-cache" {
		t.Fatalf("GET /: %d %v", index.StatusCode, index.Header)
	}
	csp := index.Header.Get("Content-Security-Policy")
	for _, want := range []string{"default-src 'none'", "script-src 'self';", "connect-src 'self'", "frame-ancestors 'none'", "style-src 'self';"} {
		if !strings.Contains(csp, want) {
			t.Errorf("CSP %q lacks %q", csp, want)
		}
	}
	if strings.Contains(csp, "unsafe-eval") || strings.Contains(csp, "script-src 'self' 'unsafe-inline'") {
		t.Errorf("CSP allows inline or eval'd scripts: %q", csp)
	}
	if index.Header.Get("X-Frame-Options") != "DENY" || index.Header.Get("X-Content-Type-Options") != "nosniff" {
		t.Errorf("security headers: %v", index.Header)
	}
	// No inline script: every script is a file of the build.
	if regexp.MustCompile(`<script(?:\s[^>]*)?>[^<]`).Match(body) || regexp.MustCompile(`\son[a-z]+=`).Match(body) {
		t.Error("index.html has inline script")
	}
	refs := assetRef.FindAllStringSubmatch(string(body), -1)
	types := map[string]string{".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8", ".svg": "image/svg+xml"}
	seen := map[string]bool{}
	for _, m := range refs {
		path := m[1]
		ext := path[strings.LastIndex(path, "."):]
		seen[ext] = true
		r := get(h, path)
		if r.StatusCode != 200 || r.Header.Get("Content-Type") != types[ext] {
			t.Errorf("GET %s: %d %q", path, r.StatusCode, r.Header.Get("Content-Type"))
		}
		if r.Header.Get("Cache-Control") != "public, max-age=31536000, immutable" {
			t.Errorf("GET %s: Cache-Control %q for a hashed name", path, r.Header.Get("Cache-Control"))
		}
		if ext == ".js" {
			gz := get(h, path, "Accept-Encoding", "gzip")
			if gz.Header.Get("Content-Encoding") != "gzip" || gz.Header.Get("Vary") != "Accept-Encoding" {
				t.Errorf("GET %s with gzip: %v", path, gz.Header)
			}
		}
	}
	for _, ext := range []string{".js", ".css", ".svg"} {
		if !seen[ext] {
			t.Errorf("index.html names no %s file: %v", ext, refs)
		}
	}
	if r := get(h, "/studio/assets/missing.js"); r.StatusCode != 404 || r.Header.Get("Content-Type") != "application/json" {
		t.Errorf("missing asset: %d %q", r.StatusCode, r.Header.Get("Content-Type"))
	}
	req := httptest.NewRequest("POST", "/", nil)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != 405 || rec.Header().Get("Allow") != "GET, HEAD" {
		t.Errorf("POST /: %d %v", rec.Code, rec.Header())
	}
}

func TestIsRoute(t *testing.T) {
	for path, want := range map[string]bool{
		"/": true, "/studio/session": true, "/studio/assets/app-AAAAAAAA.js": true,
		"/studio": false, "/studio/": false, "/mock/x": false, "/admin/v1/mocks": false, "/index.html": false, "/healthz": false,
	} {
		if got := studio.IsRoute(path); got != want {
			t.Errorf("IsRoute(%q) = %v, want %v", path, got, want)
		}
	}
}

// fail answers an error as the server's one error writer does, in short:
// the status of an *answer.Error with its headers, or of the error's code,
// and a JSON body.
func fail(w http.ResponseWriter, _ *http.Request, err error) {
	status, msg, header := answer.Of(err)
	for k, v := range header {
		w.Header()[k] = v
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(decoy.ErrorJSON(msg))
}
