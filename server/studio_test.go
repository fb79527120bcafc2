package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/decoy-mock/decoy"
	"github.com/decoy-mock/decoy/client"
	"github.com/decoy-mock/decoy/internal/servertest"
	"github.com/decoy-mock/decoy/secret"
	"github.com/decoy-mock/decoy/server"
	"github.com/decoy-mock/decoy/studio"
)

func TestStudioSignIn(t *testing.T) {
	h := servertest.NewStudio(t)
	cookie, csrf, r := h.SignIn(servertest.AdminToken)
	if r.Status != 200 || cookie == nil || csrf == "" {
		t.Fatalf("sign-in: %d %s, cookie %v", r.Status, r.Body, cookie)
	}
	if !cookie.HttpOnly || cookie.SameSite != http.SameSiteStrictMode || cookie.Path != "/" || cookie.Secure ||
		cookie.MaxAge != int(studio.MaxLifetime/time.Second) {
		t.Errorf("cookie attributes: %+v", cookie)
	}
	if r.Header.Get("Cache-Control") != "no-store" {
		t.Errorf("sign-in answer Cache-Control = %q", r.Header.Get("Cache-Control"))
	}
	if strings.Contains(r.Body, servertest.AdminToken) {
		t.Error("the answer repeats the admin token")
	}
	// The page learns its CSRF token from the session endpoint.
	r = h.StudioReq("GET", studio.SessionPath, cookie.Value, "")
	if r.Status != 200 || !strings.Contains(r.Body, `"signed_in":true,"csrf_token":"`+csrf+`"`) {
		t.Errorf("GET session: %d %s", r.Status, r.Body)
	}
	// Neither the token nor the session id reach the log.
	id, _, _ := studio.ParseCookie(cookie.Value)
	if logs := h.Logs.String(); strings.Contains(logs, servertest.AdminToken) || strings.Contains(logs, id) || strings.Contains(logs, csrf) {
		t.Errorf("secrets in the log:\n%s", logs)
	}
}

// Over TLS, or with an https public URL, the cookie is Secure.
func TestStudioSecureCookie(t *testing.T) {
	h := servertest.NewStudio(t, func(c *server.Config) { c.PublicURL = "https://decoy.example" })
	cookie, _, r := h.SignIn(servertest.AdminToken)
	if r.Status != 200 || cookie == nil || !cookie.Secure {
		t.Errorf("cookie with an https public URL: %+v (%d)", cookie, r.Status)
	}
}

func TestStudioAdminAPIWithSession(t *testing.T) {
	h := servertest.NewStudio(t)
	m := h.Create(`[{"a":1}]`, client.CreateOptions{Name: "m"})
	cookie, csrf, _ := h.SignIn(servertest.AdminToken)
	wrong := csrf[:len(csrf)-1] + "A"
	if wrong == csrf {
		wrong = csrf[:len(csrf)-1] + "B"
	}
	for _, tc := range []struct {
		name, method, path, csrf string
		body                     string
		status                   int
		msg                      string
	}{
		{"read with CSRF", "GET", "/admin/v1/mocks/" + m.ID, csrf, "", 200, ""},
		{"read without CSRF", "GET", "/admin/v1/mocks/" + m.ID, "", "", 403, "Missing or invalid CSRF token"},
		{"write without CSRF", "PATCH", "/admin/v1/mocks/" + m.ID, "", `{"name":"x"}`, 403, "Missing or invalid CSRF token"},
		{"write with a wrong CSRF", "PATCH", "/admin/v1/mocks/" + m.ID, wrong, `{"name":"x"}`, 403, "Missing or invalid CSRF token"},
		{"delete with another session's shape", "DELETE", "/admin/v1/mocks/" + m.ID, "x", "", 403, "Missing or invalid CSRF token"},
		{"write with CSRF", "PATCH", "/admin/v1/mocks/" + m.ID, csrf, `{"name":"renamed"}`, 200, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := h.StudioReq(tc.method, tc.path, cookie.Value, tc.body, studio.CSRFHeader, tc.csrf, "Content-Type", "application/json")
			if r.Status != tc.status || !strings.Contains(r.Body, tc.msg) {
				t.Errorf("%d %s, want %d %q", r.Status, r.Body, tc.status, tc.msg)
			}
			if tc.status == 403 && r.Header.Get("Content-Type") != "application/json" {
				t.Errorf("403 not in JSON: %q", r.Header.Get("Content-Type"))
			}
		})
	}
	got, _ := h.Admin.GetMock(context.Background(), m.ID)
	if got.Name != "renamed" {
		t.Errorf("name = %q: refused writes changed it, or the allowed one did not", got.Name)
	}
	// A cookie that is not a session is refused, and the bearer token
	// still works exactly as before, cookie or not.
	r := h.StudioReq("GET", "/admin/v1/mocks", "forged.cookie", "", studio.CSRFHeader, csrf)
	servertest.WantError(t, r, 401, "Session expired or signed out; sign in again")
	r = h.StudioReq("GET", "/admin/v1/mocks", cookie.Value, "", "Authorization", "Bearer "+servertest.AdminToken)
	if r.Status != 200 {
		t.Errorf("bearer token with a cookie: %d", r.Status)
	}
	r = h.StudioReq("GET", "/admin/v1/mocks", "", "")
	servertest.WantError(t, r, 401, "Admin token required")
}

func TestStudioSignOut(t *testing.T) {
	h := servertest.NewStudio(t)
	cookie, csrf, _ := h.SignIn(servertest.AdminToken)
	// Signing out needs the CSRF token too.
	if r := h.StudioReq("DELETE", studio.SessionPath, cookie.Value, ""); r.Status != 403 {
		t.Errorf("sign-out without CSRF: %d %s", r.Status, r.Body)
	}
	r := h.StudioReq("DELETE", studio.SessionPath, cookie.Value, "", studio.CSRFHeader, csrf)
	if r.Status != 204 {
		t.Fatalf("sign-out: %d %s", r.Status, r.Body)
	}
	cleared := false
	for _, c := range (&http.Response{Header: r.Header}).Cookies() {
		cleared = cleared || c.Name == studio.CookieName && c.MaxAge < 0
	}
	if !cleared {
		t.Errorf("sign-out does not clear the cookie: %v", r.Header["Set-Cookie"])
	}
	// The old cookie, kept by whoever copied it, opens nothing.
	r = h.StudioReq("GET", "/admin/v1/mocks", cookie.Value, "", studio.CSRFHeader, csrf)
	servertest.WantError(t, r, 401, "Session expired or signed out; sign in again")
	if r := h.StudioReq("GET", studio.SessionPath, cookie.Value, ""); r.Status != 200 || r.Body != `{"signed_in":false}`+"\n" {
		t.Errorf("GET session after sign-out: %d %s", r.Status, r.Body)
	}
}

func TestStudioSessionExpiry(t *testing.T) {
	for _, tc := range []struct {
		name string
		// steps are the times between requests; the last one must fail.
		steps []time.Duration
	}{
		{"idle", []time.Duration{studio.IdleTimeout}},
		{"absolute", []time.Duration{11 * time.Hour, 11 * time.Hour, 11 * time.Hour, 11 * time.Hour, 11 * time.Hour, 11 * time.Hour,
			11 * time.Hour, 11 * time.Hour, 11 * time.Hour, 11 * time.Hour, 11 * time.Hour, 11 * time.Hour, 11 * time.Hour, 11 * time.Hour,
			11 * time.Hour, 11 * time.Hour}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := servertest.NewStudio(t)
			cookie, csrf, _ := h.SignIn(servertest.AdminToken)
			for i, d := range tc.steps {
				h.Clock.Add(d)
				r := h.StudioReq("GET", "/admin/v1/mocks", cookie.Value, "", studio.CSRFHeader, csrf)
				last := i == len(tc.steps)-1
				if !last && r.Status != 200 {
					t.Fatalf("request %d after %v: %d %s", i, d, r.Status, r.Body)
				}
				if last {
					servertest.WantError(t, r, 401, "Session expired or signed out; sign in again")
				}
			}
		})
	}
}

// A session opened with one admin token ends when the server's token
// changes (a restart with another --admin-token).
func TestStudioSessionEndsWithAdminToken(t *testing.T) {
	h := servertest.NewStudio(t)
	cookie, csrf, _ := h.SignIn(servertest.AdminToken)
	other := server.New(server.Config{
		Store: h.Store, Quota: h.Store, Sessions: h.Store, AdminTokenHash: secret.Hash("another token"),
	})
	req, _ := http.NewRequest("GET", "/admin/v1/mocks", nil)
	req.AddCookie(&http.Cookie{Name: studio.CookieName, Value: cookie.Value})
	req.Header.Set(studio.CSRFHeader, csrf)
	rec := httptest.NewRecorder()
	other.ServeHTTP(rec, req)
	if rec.Code != 401 {
		t.Errorf("session of the old admin token: %d %s", rec.Code, rec.Body.String())
	}
	// Ended for good: back under the token it was opened with, it stays
	// ended.
	if rec := h.StudioReq("GET", "/admin/v1/mocks", cookie.Value, "", studio.CSRFHeader, csrf); rec.Status != 401 {
		t.Errorf("the session came back under its own token: %d %s", rec.Status, rec.Body)
	}

	// A server started with another token ends the sessions of the old
	// one at once, without waiting for them to be used.
	cookie, csrf, _ = h.SignIn(servertest.AdminToken)
	restarted := server.New(server.Config{
		Addr: "127.0.0.1:0", Store: h.Store, Quota: h.Store, Sessions: h.Store, AdminTokenHash: secret.Hash("another token"),
	})
	if err := restarted.Open(); err != nil {
		t.Fatal(err)
	}
	restarted.Close()
	if rec := h.StudioReq("GET", "/admin/v1/mocks", cookie.Value, "", studio.CSRFHeader, csrf); rec.Status != 401 {
		t.Errorf("a session survived a start with another token: %d %s", rec.Status, rec.Body)
	}
}

func TestStudioSignInRefusals(t *testing.T) {
	h := servertest.NewStudio(t, func(c *server.Config) { c.AuthFailureLimit = 3 })
	for _, tc := range []struct {
		name, body string
		header     []string
		status     int
		msg        string
	}{
		{"not JSON", "token=x", []string{"Content-Type", "application/x-www-form-urlencoded"}, 415, "Sign in with a JSON body"},
		{"no token", `{}`, []string{"Content-Type", "application/json"}, 400, "Sign in with a JSON body"},
		{"another site", `{"token":"` + servertest.AdminToken + `"}`, []string{"Content-Type", "application/json", "Origin", "https://evil.example"}, 403, "Sign-in from another site refused"},
		{"cross-site fetch", `{"token":"` + servertest.AdminToken + `"}`, []string{"Content-Type", "application/json", "Sec-Fetch-Site", "cross-site"}, 403, "Sign-in from another site refused"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := h.StudioReq("POST", studio.SessionPath, "", tc.body, tc.header...)
			if r.Status != tc.status || !strings.Contains(r.Body, tc.msg) || len(r.Header["Set-Cookie"]) > 0 {
				t.Errorf("%d %s %v, want %d %q and no cookie", r.Status, r.Body, r.Header["Set-Cookie"], tc.status, tc.msg)
			}
		})
	}
	// The same origin, as a browser sends it, is fine.
	u := strings.TrimPrefix(h.URL, "http://")
	r := h.StudioReq("POST", studio.SessionPath, "", `{"token":"`+servertest.AdminToken+`"}`, "Content-Type", "application/json", "Origin", "http://"+u, "Sec-Fetch-Site", "same-origin")
	if r.Status != 200 {
		t.Errorf("same-origin sign-in: %d %s", r.Status, r.Body)
	}
	// Wrong admin tokens count against the failed-authentication limit,
	// with those of the bearer token: past it, even the right one waits.
	for i := range 2 {
		_, _, r := h.SignIn("wrong")
		servertest.WantError(t, r, 401, "Invalid admin token")
		if i == 0 {
			if r := h.Get("/admin/v1/mocks", "Authorization", "Bearer wrong"); r.Status != 401 {
				t.Fatalf("bearer: %d", r.Status)
			}
		}
	}
	_, _, r = h.SignIn(servertest.AdminToken)
	servertest.WantError(t, r, 429, "Too many failed authentication attempts")
	if r.Header.Get("Retry-After") == "" {
		t.Error("429 without Retry-After")
	}
	h.Clock.Add(time.Minute)
	if _, _, r := h.SignIn(servertest.AdminToken); r.Status != 200 {
		t.Errorf("after the window: %d %s", r.Status, r.Body)
	}
}

func TestStudioOff(t *testing.T) {
	h := servertest.New(t) // no Sessions: the Studio is off
	for _, p := range []string{"/", studio.SessionPath, "/studio/assets/x.js"} {
		servertest.WantError(t, h.Get(p), 404, "Not found")
	}
	// A cookie does nothing either.
	r := h.StudioReq("GET", "/admin/v1/mocks", "a.b", "", studio.CSRFHeader, "x")
	servertest.WantError(t, r, 401, "Admin token required")
}

// The Studio takes only its own paths: the others answer as before.
func TestStudioRoutes(t *testing.T) {
	h := servertest.NewStudio(t)
	m := h.Create(`[1]`, client.CreateOptions{})
	if r := h.Get("/"); r.Status != 200 || !strings.HasPrefix(r.Header.Get("Content-Type"), "text/html") {
		t.Errorf("GET /: %d %s", r.Status, r.Header.Get("Content-Type"))
	}
	for _, tc := range []struct {
		path   string
		status int
	}{
		{"/mock/" + m.ID, 200}, {"/api/" + m.ID, 200}, {"/healthz", 200}, {"/readyz", 200}, {"/metrics", 200}, {"/openapi.json", 200},
		{"/admin/v1/mocks", 401}, {"/index.html", 404}, {"/studio", 404}, {"/studio/", 404}, {"/studio/other", 404},
		{"/studio/assets/missing.js", 404}, {"/nothing", 404},
	} {
		r := h.Get(tc.path)
		if r.Status != tc.status {
			t.Errorf("GET %s: %d, want %d", tc.path, r.Status, tc.status)
		}
		if tc.status == 404 && r.Header.Get("Content-Type") != "application/json" {
			t.Errorf("GET %s: 404 in %q, not JSON", tc.path, r.Header.Get("Content-Type"))
		}
	}
	if r := h.Do("POST", "/"); r.Status != 405 {
		t.Errorf("POST /: %d", r.Status)
	}
}

func TestUsageHistoryEndpoint(t *testing.T) {
	h := servertest.NewStudio(t, func(c *server.Config) { c.DefaultRateLimit = 2 })
	m := h.Create(`[1]`, client.CreateOptions{})
	for range 3 {
		h.Get("/mock/" + m.ID) // 2 served, 1 refused
	}
	auth := []string{"Authorization", "Bearer " + servertest.AdminToken}
	r := h.Get("/admin/v1/mocks/"+m.ID+"/usage/history", auth...)
	if r.Status != 200 {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
	var hist decoy.UsageHistory
	if err := json.Unmarshal([]byte(r.Body), &hist); err != nil {
		t.Fatal(err)
	}
	last := hist.Minutes[len(hist.Minutes)-1]
	if len(hist.Minutes) != 60 || last.Served != 2 || last.Refused != 1 || !last.Start.Equal(h.Clock.Now().Truncate(time.Minute)) {
		t.Errorf("last minute: %+v of %d", last, len(hist.Minutes))
	}
	if len(hist.Days) != 22 || hist.Days[21].Served != 2 || hist.Days[21].Refused != 1 {
		t.Errorf("days: %d, today %+v", len(hist.Days), hist.Days[len(hist.Days)-1])
	}
	servertest.WantError(t, h.Get("/admin/v1/mocks/00000000-0000-4000-8000-000000000009/usage/history", auth...), 404, "Mock api not found")
	servertest.WantError(t, h.Get("/admin/v1/mocks/"+m.ID+"/usage/history"), 401, "Admin token required")
	if r := h.Do("POST", "/admin/v1/mocks/"+m.ID+"/usage/history", auth...); r.Status != 405 {
		t.Errorf("POST history: %d", r.Status)
	}
}
