package server_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/decoy-mock/decoy/client"
	"github.com/decoy-mock/decoy/internal/servertest"
	"github.com/decoy-mock/decoy/server"
)

// CONTRACT §1.5: a mock token sent as Authorization: Bearer, as most
// apps and HTTP clients send one. The token headers rank first, then
// Authorization, then the auth_token parameter. Authorization carries a
// mock token only when its value is a Decoy secret (dcy_…): another
// kind of Decoy secret (an API key, the admin token) is a wrong token,
// while what an app sends its real API (a JWT, Basic credentials) is
// none of Decoy's, and is ignored as if absent.
func TestBearerTokens(t *testing.T) {
	h := servertest.New(t)
	priv := h.Create(`[{"a":1}]`, client.CreateOptions{Private: true})
	open := h.Create(`[{"a":1}]`, client.CreateOptions{})
	good, bad := priv.Token, "dcy_"+strings.Repeat("A", 43)
	apiKey, adminTok := "dcy_key_"+strings.Repeat("B", 43), "dcy_admin_"+strings.Repeat("C", 43)
	const jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl"
	p := "/mock/" + priv.ID
	for _, tc := range []struct {
		name   string
		path   string
		header []string
		status int
		msg    string
	}{
		{"bearer", p, []string{"Authorization", "Bearer " + good}, 200, ""},
		{"scheme in any case", p, []string{"Authorization", "bearer " + good}, 200, ""},
		{"spaces around the token", p, []string{"Authorization", "Bearer   " + good + " "}, 200, ""},
		{"wrong bearer", p, []string{"Authorization", "Bearer " + bad}, 401, "Invalid auth token"},
		{"an API key is not a mock token", p, []string{"Authorization", "Bearer " + apiKey}, 401, "Invalid auth token"},
		{"the admin token is not a mock token", p, []string{"Authorization", "Bearer " + adminTok}, 401, "Invalid auth token"},
		{"bearer wins over the query", p + "?auth_token=" + bad, []string{"Authorization", "Bearer " + good}, 200, ""},
		{"wrong bearer wins over a right query", p + "?auth_token=" + good, []string{"Authorization", "Bearer " + bad}, 401, "Invalid auth token"},
		{"a token header wins over bearer", p, []string{"serviceauthtoken", good, "Authorization", "Bearer " + bad}, 200, ""},
		{"a wrong token header wins over a right bearer", p, []string{"decoyauthtoken", bad, "Authorization", "Bearer " + good}, 401, "Invalid auth token"},
		{"empty bearer is absent", p + "?auth_token=" + good, []string{"Authorization", "Bearer "}, 200, ""},
		{"an app's own bearer is ignored", p + "?auth_token=" + good, []string{"Authorization", "Bearer " + jwt}, 200, ""},
		{"an app's own bearer alone is no token", p, []string{"Authorization", "Bearer " + jwt}, 401, "Auth token not found"},
		{"another scheme is ignored", p, []string{"Authorization", "Basic " + good}, 401, "Auth token not found"},
		{"no scheme is ignored", p, []string{"Authorization", good}, 401, "Auth token not found"},
		{"bearer to an open mock is ignored", "/mock/" + open.ID, []string{"Authorization", "Bearer " + bad}, 200, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := h.Get(tc.path, tc.header...)
			if tc.status == 200 {
				if r.Status != 200 || r.Body != `[{"a":1}]` {
					t.Errorf("got %d %q", r.Status, r.Body)
				}
				return
			}
			servertest.WantError(t, r, tc.status, tc.msg)
		})
	}

	// A preflight allows the header, for browser apps.
	r := h.Do(http.MethodOptions, p, "Origin", "https://app.example", "Access-Control-Request-Method", "GET", "Access-Control-Request-Headers", "authorization")
	if r.Status != 204 || !hasName(r.Header.Get("Access-Control-Allow-Headers"), "Authorization") {
		t.Errorf("preflight: %d, Allow-Headers %q", r.Status, r.Header.Get("Access-Control-Allow-Headers"))
	}
}

// hasName reports whether a comma-separated list of header names has
// name, once.
func hasName(list, name string) bool {
	n := 0
	for _, v := range strings.Split(list, ",") {
		if strings.EqualFold(strings.TrimSpace(v), name) {
			n++
		}
	}
	return n == 1
}

// A wrong mock token sent as a bearer token is a failed attempt, as any
// other wrong token; an app's own bearer token, none of Decoy's, is not.
func TestWrongBearerIsAFailedAttempt(t *testing.T) {
	h := servertest.New(t, func(c *server.Config) { c.AuthFailureLimit = 2 })
	priv := h.Create(`[]`, client.CreateOptions{Private: true})
	p := "/mock/" + priv.ID
	for range 5 {
		servertest.WantError(t, h.Get(p, "Authorization", "Bearer not-decoys-own"), 401, "Auth token not found")
	}
	h.Clock.Add(time.Second)
	servertest.WantError(t, h.Get(p, "Authorization", "Bearer dcy_"+strings.Repeat("A", 43)), 401, "Invalid auth token")
	h.Clock.Add(time.Second)
	servertest.WantError(t, h.Get(p, "Authorization", "Bearer dcy_key_"+strings.Repeat("B", 43)), 401, "Invalid auth token")
	r := h.Get(p, "Authorization", "Bearer "+priv.Token)
	servertest.WantError(t, r, 429, "Too many failed authentication attempts")
	h.Clock.Add(time.Minute)
	if r := h.Get(p, "Authorization", "Bearer "+priv.Token); r.Status != 200 {
		t.Errorf("after the window freed: %d %s", r.Status, r.Body)
	}
}

// --token-header Authorization, which read the whole header as the token,
// reads it as the built-in source does (the Bearer scheme stripped), and
// still takes a token sent with no scheme, as it did.
func TestTokenHeaderAuthorization(t *testing.T) {
	h := servertest.New(t, func(c *server.Config) { c.TokenHeader = "authorization" })
	priv := h.Create(`[{"a":1}]`, client.CreateOptions{Private: true})
	p := "/mock/" + priv.ID
	for _, tc := range []struct {
		name, value string
		status      int
		msg         string
	}{
		{"bearer", "Bearer " + priv.Token, 200, ""},
		{"no scheme", priv.Token, 200, ""},
		{"wrong bearer", "Bearer dcy_" + strings.Repeat("A", 43), 401, "Invalid auth token"},
		{"wrong, no scheme", "dcy_" + strings.Repeat("A", 43), 401, "Invalid auth token"},
		{"empty bearer", "Bearer ", 401, "Auth token not found"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := h.Get(p, "Authorization", tc.value)
			if tc.status == 200 {
				if r.Status != 200 {
					t.Errorf("got %d %s", r.Status, r.Body)
				}
				return
			}
			servertest.WantError(t, r, tc.status, tc.msg)
		})
	}
	r := h.Do(http.MethodOptions, p, "Origin", "https://app.example", "Access-Control-Request-Method", "GET")
	if !hasName(r.Header.Get("Access-Control-Allow-Headers"), "Authorization") {
		t.Errorf("preflight Allow-Headers %q: want Authorization once", r.Header.Get("Access-Control-Allow-Headers"))
	}
}

// A token sent as a bearer token is never logged, nor is any Authorization
// header.
func TestBearerTokenNeverLogged(t *testing.T) {
	h := servertest.New(t)
	priv := h.Create(`[]`, client.CreateOptions{Private: true})
	if r := h.Get("/mock/"+priv.ID, "Authorization", "Bearer "+priv.Token); r.Status != 200 {
		t.Fatalf("bearer: %d %s", r.Status, r.Body)
	}
	h.Get("/mock/"+priv.ID, "Authorization", "Bearer dcy_"+strings.Repeat("A", 43))
	h.Get("/nope", "Authorization", "Bearer "+priv.Token)
	logs := h.Logs.String()
	if strings.Contains(logs, priv.Token) || strings.Contains(logs, strings.Repeat("A", 43)) || strings.Contains(strings.ToLower(logs), "bearer") {
		t.Fatalf("a bearer token reached the logs:\n%s", logs)
	}
}
