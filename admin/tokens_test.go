package admin_test

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/decoy-mock/decoy"
	"github.com/decoy-mock/decoy/internal/servertest"
	"github.com/decoy-mock/decoy/secret"
	"github.com/decoy-mock/decoy/server"
	"github.com/decoy-mock/decoy/studio"
	"github.com/google/uuid"
)

// Personal access tokens as their users see them (§6.1): listed with their
// names, creation, expiry and last use, revoked one by one, and all of
// them revoked with a new password.

// tokenInfo is a token as GET /me/tokens lists it.
type tokenInfo struct {
	ID         string     `json:"id"`
	Name       string     `json:"name"`
	CreatedAt  time.Time  `json:"created_at"`
	ExpiresAt  time.Time  `json:"expires_at"`
	LastUsedAt *time.Time `json:"last_used_at"`
	Current    bool       `json:"current"`
}

// tokens lists the tokens at path (me/tokens, users/{id}/tokens) as token.
func (tm *teams) tokens(path, token string) []tokenInfo {
	tm.T.Helper()
	r := tm.call("GET", "/admin/v1/"+path, token, "")
	tm.want(r, 200)
	var out struct {
		Tokens []tokenInfo `json:"tokens"`
	}
	if err := json.Unmarshal([]byte(r.Body), &out); err != nil {
		tm.T.Fatalf("%s: %v", r.Body, err)
	}
	return out.Tokens
}

// loginAs asks for a named token.
func (tm *teams) loginAs(email, name string) (token, id string) {
	tm.T.Helper()
	v := tm.want(tm.call("POST", "/admin/v1/auth/token", "", `{"email":"`+email+`","password":"correct horse battery","name":"`+name+`"}`), 201)
	if v["name"] != name {
		tm.T.Fatalf("token named %v, want %q", v["name"], name)
	}
	return v["token"].(string), v["id"].(string)
}

func TestAccessTokensListedAndRevoked(t *testing.T) {
	tm := newTeams(t)
	tm.Clock.Add(time.Minute)
	laptop, laptopID := tm.loginAs("viewer@example.com", "laptop")
	tm.Clock.Add(time.Minute)
	ci, ciID := tm.loginAs("viewer@example.com", "ci")
	// No name: "token".
	tm.Clock.Add(time.Minute)
	if v := tm.want(tm.call("POST", "/admin/v1/auth/token", "", `{"email":"viewer@example.com","password":"correct horse battery"}`), 201); v["name"] != "token" {
		t.Errorf("a token asked for without a name is named %v", v["name"])
	}
	for _, bad := range []string{`""`, `"   "`, `"` + strings.Repeat("n", decoy.MaxNameLength+1) + `"`, `7`} {
		r := tm.call("POST", "/admin/v1/auth/token", "", `{"email":"viewer@example.com","password":"correct horse battery","name":`+bad+`}`)
		if r.Status != 400 {
			t.Errorf("name %.20s: %d %s", bad, r.Status, r.Body)
		}
	}

	r := tm.call("GET", "/admin/v1/me/tokens", ci, "")
	tm.want(r, 200)
	// Never a secret nor a hash.
	for _, tok := range []string{laptop, ci, tm.viewer} {
		h := secret.Hash(tok)
		for _, s := range []string{tok, tok[len("dcy_pat_"):], hex.EncodeToString(h), base64.StdEncoding.EncodeToString(h), base64.RawURLEncoding.EncodeToString(h)} {
			if strings.Contains(r.Body, s) {
				t.Errorf("the listing holds a secret or hash %q: %s", s, r.Body)
			}
		}
	}
	got := tm.tokens("me/tokens", ci)
	var names []string
	for _, x := range got {
		names = append(names, x.Name)
		if _, err := uuid.Parse(x.ID); err != nil || x.CreatedAt.IsZero() || !x.ExpiresAt.Equal(x.CreatedAt.Add(90*24*time.Hour)) {
			t.Errorf("listed %+v", x)
		}
		if x.Current != (x.ID == ciID) {
			t.Errorf("%s: current %v", x.Name, x.Current)
		}
	}
	// Newest first; the one of newTeams (named "token", made first) last.
	if strings.Join(names, ",") != "token,ci,laptop,token" {
		t.Errorf("tokens %v", names)
	}
	// Another user's tokens are not listed, nor revoked: not found.
	for _, x := range tm.tokens("me/tokens", tm.owner) {
		if x.ID == ciID || x.ID == laptopID {
			t.Errorf("the owner's listing shows the viewer's token %s", x.Name)
		}
	}
	servertest.WantError(t, tm.call("DELETE", "/admin/v1/me/tokens/"+laptopID, tm.owner, ""), 404, "Access token not found")
	tm.want(tm.call("GET", "/admin/v1/me", laptop, ""), 200)

	// Revoked from another token: refused at once, listed no more.
	tm.want(tm.call("DELETE", "/admin/v1/me/tokens/"+strings.ToUpper(laptopID), ci, ""), 204)
	servertest.WantError(t, tm.call("GET", "/admin/v1/me", laptop, ""), 401, "Invalid admin token")
	servertest.WantError(t, tm.call("DELETE", "/admin/v1/me/tokens/"+laptopID, ci, ""), 404, "Access token not found")
	servertest.WantError(t, tm.call("DELETE", "/admin/v1/me/tokens/not-an-id", ci, ""), 404, "Access token not found")
	for _, x := range tm.tokens("me/tokens", ci) {
		if x.ID == laptopID {
			t.Error("a revoked token is listed")
		}
	}
	// A token revokes itself too.
	tm.want(tm.call("DELETE", "/admin/v1/me/tokens/"+ciID, ci, ""), 204)
	servertest.WantError(t, tm.call("GET", "/admin/v1/me/tokens", ci, ""), 401, "Invalid admin token")

	// Expired tokens are not listed.
	tm.Clock.Add(90 * 24 * time.Hour)
	fresh, _ := tm.loginAs("viewer@example.com", "fresh")
	if got := tm.tokens("me/tokens", fresh); len(got) != 1 || got[0].Name != "fresh" {
		t.Errorf("after 90 days: %+v", got)
	}

	// The admin token and API keys own no tokens.
	for _, token := range []string{servertest.AdminToken, tm.editorKey} {
		servertest.WantError(t, tm.call("GET", "/admin/v1/me/tokens", token, ""), 403,
			"Forbidden: listing your access tokens needs a user signed in with a password or a personal access token")
		servertest.WantError(t, tm.call("DELETE", "/admin/v1/me/tokens/"+uuid.NewString(), token, ""), 403,
			"Forbidden: revoking your access tokens needs a user signed in with a password or a personal access token")
	}
}

// A new password, set by a server admin, revokes every personal access
// token of the user (and ends its Studio sessions); a change of name
// keeps them, and other users' tokens are untouched.
func TestAccessTokensEndWithPassword(t *testing.T) {
	tm := newTeams(t, func(c *server.Config) { c.Sessions = c.Store.(decoy.SessionStore) })
	second, _ := tm.loginAs("viewer@example.com", "second")
	cookie, csrf, r := tm.studioSignIn("viewer@example.com", "correct horse battery")
	if r.Status != 200 {
		t.Fatalf("sign-in: %d %s", r.Status, r.Body)
	}
	user := "/admin/v1/users/" + tm.users["viewer"]
	tm.want(tm.call("PATCH", user, servertest.AdminToken, `{"name":"Vera","server_admin":false}`), 200)
	for _, tok := range []string{tm.viewer, second} {
		tm.want(tm.call("GET", "/admin/v1/me", tok, ""), 200)
	}
	tm.want(tm.call("PATCH", user, servertest.AdminToken, `{"password":"a new horse battery"}`), 200)
	for _, tok := range []string{tm.viewer, second} {
		servertest.WantError(t, tm.call("GET", "/admin/v1/me", tok, ""), 401, "Invalid admin token")
	}
	servertest.WantError(t, tm.StudioReq("GET", "/admin/v1/me", cookie, "", studio.CSRFHeader, csrf), 401, "Session expired or signed out; sign in again")
	if got := tm.tokens("users/"+tm.users["viewer"]+"/tokens", servertest.AdminToken); len(got) != 0 {
		t.Errorf("tokens left after a new password: %+v", got)
	}
	for _, tok := range []string{tm.owner, tm.editor, tm.out, tm.editorKey} {
		tm.want(tm.call("GET", "/admin/v1/me", tok, ""), 200)
	}
	// The old password gives no token; the new one does.
	servertest.WantError(t, tm.call("POST", "/admin/v1/auth/token", "", `{"email":"viewer@example.com","password":"correct horse battery"}`), 401, "Invalid email or password")
	tok := tm.login("viewer@example.com", "a new horse battery")
	tm.want(tm.call("GET", "/admin/v1/me", tok, ""), 200)

	// A server admin who changes its own password, by its own token,
	// revokes that token too.
	adminID := tm.mustID(tm.call("POST", "/admin/v1/users", servertest.AdminToken,
		`{"email":"root@example.com","name":"Root","password":"correct horse battery","server_admin":true}`), 201)
	own := tm.login("root@example.com", "correct horse battery")
	tm.want(tm.call("PATCH", "/admin/v1/users/"+adminID, own, `{"password":"another horse battery"}`), 200)
	servertest.WantError(t, tm.call("GET", "/admin/v1/me", own, ""), 401, "Invalid admin token")
}

// A user changes its own password (PUT /me/password) with its current
// one: every token of the user is revoked and its Studio sessions end,
// the ones the change came with included; a wrong current password is
// refused and counted as a failed authentication; a key or the admin
// token has no password of its own to change.
func TestOwnPasswordChange(t *testing.T) {
	tm := newTeams(t, func(c *server.Config) { c.Sessions = c.Store.(decoy.SessionStore) })
	second, _ := tm.loginAs("viewer@example.com", "second")
	cookie, csrf, r := tm.studioSignIn("viewer@example.com", "correct horse battery")
	if r.Status != 200 {
		t.Fatalf("sign-in: %d %s", r.Status, r.Body)
	}
	servertest.WantError(t, tm.call("PUT", "/admin/v1/me/password", second, `{"current_password":"wrong horse battery","password":"a new horse battery"}`), 400, "The current password is wrong")
	servertest.WantError(t, tm.call("PUT", "/admin/v1/me/password", second, `{"current_password":"correct horse battery","password":"short"}`), 400, "password must be from 12 characters to 1024 bytes of UTF-8")
	servertest.WantError(t, tm.call("PUT", "/admin/v1/me/password", second, `{"password":"a new horse battery"}`), 400, "current_password and password are required")
	servertest.WantError(t, tm.call("PUT", "/admin/v1/me/password", tm.editorKey, `{"current_password":"x","password":"a new horse battery"}`), 403,
		"Forbidden: changing your password needs a user signed in with a password or a personal access token")
	tm.want(tm.call("GET", "/admin/v1/me", second, ""), 200) // refusals changed nothing

	tm.want(tm.call("PUT", "/admin/v1/me/password", second, `{"current_password":"correct horse battery","password":"a new horse battery"}`), 200)
	for _, tok := range []string{tm.viewer, second} {
		servertest.WantError(t, tm.call("GET", "/admin/v1/me", tok, ""), 401, "Invalid admin token")
	}
	servertest.WantError(t, tm.StudioReq("GET", "/admin/v1/me", cookie, "", studio.CSRFHeader, csrf), 401, "Session expired or signed out; sign in again")
	servertest.WantError(t, tm.call("POST", "/admin/v1/auth/token", "", `{"email":"viewer@example.com","password":"correct horse battery"}`), 401, "Invalid email or password")
	tm.login("viewer@example.com", "a new horse battery")
	for _, other := range []string{tm.owner, tm.editor} {
		tm.want(tm.call("GET", "/admin/v1/me", other, ""), 200)
	}
}

// Wrong current passwords count as failed authentications: past the
// limit, even the right one waits.
func TestOwnPasswordChangeGuessesLimited(t *testing.T) {
	tm := newTeams(t, func(c *server.Config) { c.AuthFailureLimit = 2 })
	for range 2 {
		servertest.WantError(t, tm.call("PUT", "/admin/v1/me/password", tm.viewer, `{"current_password":"wrong horse battery","password":"a new horse battery"}`), 400, "The current password is wrong")
	}
	if r := tm.call("PUT", "/admin/v1/me/password", tm.viewer, `{"current_password":"correct horse battery","password":"a new horse battery"}`); r.Status != 429 {
		t.Errorf("the right password past the failure limit: %d %s, want 429", r.Status, r.Body)
	}
}

// A server admin lists and revokes any user's tokens; nobody else may.
func TestAccessTokensOfUsers(t *testing.T) {
	tm := newTeams(t)
	tm.Clock.Add(time.Minute)
	laptop, laptopID := tm.loginAs("editor@example.com", "laptop")
	path := "users/" + tm.users["editor"] + "/tokens"
	got := tm.tokens(path, servertest.AdminToken)
	if len(got) != 2 || got[0].Name != "laptop" || got[0].Current || got[1].Name != "token" {
		t.Errorf("the editor's tokens, to the server admin: %+v", got)
	}
	for _, token := range []string{tm.owner, tm.editor, tm.editorKey} {
		servertest.WantError(t, tm.call("GET", "/admin/v1/"+path, token, ""), 403, "Forbidden: listing users' access tokens needs the server admin role")
		servertest.WantError(t, tm.call("DELETE", "/admin/v1/"+path+"/"+laptopID, token, ""), 403, "Forbidden: revoking users' access tokens needs the server admin role")
	}
	servertest.WantError(t, tm.call("DELETE", "/admin/v1/users/"+tm.users["owner"]+"/tokens/"+laptopID, servertest.AdminToken, ""), 404, "Access token not found")
	servertest.WantError(t, tm.call("GET", "/admin/v1/users/"+uuid.NewString()+"/tokens", servertest.AdminToken, ""), 404, "User not found")
	servertest.WantError(t, tm.call("GET", "/admin/v1/users/nope/tokens", servertest.AdminToken, ""), 404, "User not found")
	tm.want(tm.call("DELETE", "/admin/v1/"+path+"/"+laptopID, servertest.AdminToken, ""), 204)
	servertest.WantError(t, tm.call("GET", "/admin/v1/me", laptop, ""), 401, "Invalid admin token")
	tm.want(tm.call("GET", "/admin/v1/me", tm.editor, ""), 200)
}

// A token's last use is recorded in batches, as an API key's, and written
// at Close at the latest.
func TestAccessTokenLastUse(t *testing.T) {
	tm := newTeams(t)
	tok, id := tm.loginAs("viewer@example.com", "laptop")
	lastUse := func() *time.Time {
		t.Helper()
		ts, err := tm.Store.ListAccessTokens(context.Background(), tm.users["viewer"], tm.Clock.Now())
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range ts {
			if x.ID == id {
				return x.LastUsedAt
			}
		}
		t.Fatal("the token is not listed")
		return nil
	}
	if lastUse() != nil {
		t.Error("a token never used has a last use")
	}
	tm.Clock.Add(time.Minute)
	used := tm.Clock.Now()
	tm.want(tm.call("GET", "/admin/v1/me", tok, ""), 200)
	tm.Srv.Close()
	if at := lastUse(); at == nil || !at.Equal(used) {
		t.Errorf("last use %v, want %v", at, used)
	}
}

// auditRecorder is a TeamStore that keeps the audit entries appended.
type auditRecorder struct {
	decoy.TeamStore
	mu      sync.Mutex
	entries []decoy.AuditEntry
}

func (a *auditRecorder) AppendAudit(ctx context.Context, e *decoy.AuditEntry) error {
	a.mu.Lock()
	a.entries = append(a.entries, *e)
	a.mu.Unlock()
	return a.TeamStore.AppendAudit(ctx, e)
}

// Each revocation is in the audit log as token.revoke: who, which token
// (its id and name, never its secret), from where.
func TestAccessTokenRevocationsAudited(t *testing.T) {
	rec := &auditRecorder{}
	tm := newTeams(t, func(c *server.Config) {
		rec.TeamStore = c.Store.(decoy.TeamStore)
		c.Teams = rec
	})
	a, aID := tm.loginAs("viewer@example.com", "a")
	_, bID := tm.loginAs("viewer@example.com", "b")
	c, cID := tm.loginAs("viewer@example.com", "c")
	tm.want(tm.call("DELETE", "/admin/v1/me/tokens/"+bID, a, ""), 204)
	tm.want(tm.call("DELETE", "/admin/v1/users/"+tm.users["viewer"]+"/tokens/"+aID, servertest.AdminToken, ""), 204)
	tm.want(tm.call("DELETE", "/admin/v1/auth/token", c, ""), 204)
	servertest.WantError(t, tm.call("DELETE", "/admin/v1/me/tokens/"+bID, tm.viewer, ""), 404, "Access token not found") // not recorded
	rec.mu.Lock()
	defer rec.mu.Unlock()
	var got []string
	for _, e := range rec.entries {
		if e.Action != "token.revoke" {
			continue
		}
		got = append(got, e.Actor.Kind+" "+e.Actor.Label+" "+e.Target.Kind+" "+e.Target.ID+" "+e.Target.Name)
		if e.WorkspaceID != "" || e.IP == "" {
			t.Errorf("entry %+v", e)
		}
		for _, s := range []string{a, c} {
			if strings.Contains(e.Target.Name+e.Target.ID+e.Actor.Label, s) {
				t.Errorf("the audit log holds a secret: %+v", e)
			}
		}
	}
	want := []string{
		"user viewer@example.com token " + bID + " b",
		"server_admin  token " + aID + " a",
		"user viewer@example.com token " + cID + " c",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("audit\n got %q\nwant %q", got, want)
	}
}

// The answers of the token endpoints are as the OpenAPI document says.
func TestOpenAPIAccessTokens(t *testing.T) {
	router := servertest.OpenAPIRouter(t)
	tm := newTeams(t)
	_, id := tm.loginAs("viewer@example.com", "laptop")
	_, id2 := tm.loginAs("viewer@example.com", "ci")
	viewer := "/admin/v1/users/" + tm.users["viewer"] + "/tokens"
	for _, tc := range []struct {
		method, path, token, body string
		status                    int
	}{
		{"POST", "/admin/v1/auth/token", "", `{"email":"owner@example.com","password":"correct horse battery","name":"decoy login on host"}`, 201},
		{"POST", "/admin/v1/auth/token", "", `{"email":"owner@example.com","password":"correct horse battery","name":""}`, 400},
		{"PUT", "/admin/v1/me/password", tm.editor, `{"current_password":"wrong horse battery","password":"a new horse battery"}`, 400},
		{"PUT", "/admin/v1/me/password", tm.editor, `{"password":"a new horse battery"}`, 400},
		{"PUT", "/admin/v1/me/password", tm.editorKey, `{"current_password":"x","password":"a new horse battery"}`, 403},
		{"PUT", "/admin/v1/me/password", tm.editor, `{"current_password":"correct horse battery","password":"a new horse battery"}`, 200},
		{"GET", "/admin/v1/me/tokens", tm.viewer, "", 200},
		{"GET", "/admin/v1/me/tokens", tm.editorKey, "", 403},
		{"GET", "/admin/v1/me/tokens", "", "", 401},
		{"DELETE", "/admin/v1/me/tokens/" + id, tm.owner, "", 404},
		{"DELETE", "/admin/v1/me/tokens/" + id, tm.viewer, "", 204},
		{"DELETE", "/admin/v1/me/tokens/" + id, servertest.AdminToken, "", 403},
		{"GET", viewer, servertest.AdminToken, "", 200},
		{"GET", viewer, tm.owner, "", 403},
		{"GET", "/admin/v1/users/" + uuid.NewString() + "/tokens", servertest.AdminToken, "", 404},
		{"DELETE", viewer + "/" + id2, servertest.AdminToken, "", 204},
		{"DELETE", viewer + "/" + id2, servertest.AdminToken, "", 404},
	} {
		t.Run(tc.method+" "+tc.path, func(t *testing.T) {
			var header []string
			if tc.token != "" {
				header = append(header, "Authorization", "Bearer "+tc.token)
			}
			if tc.body != "" {
				header = append(header, "Content-Type", "application/json")
			}
			tm.CheckDocumented(t, router, tc.method, tc.path, []byte(tc.body), tc.status, header...)
		})
	}
}

// A server without teams has no users, hence no tokens to list: the
// routes are not found, as every route of teams.
func TestAccessTokensWithoutTeams(t *testing.T) {
	h := servertest.New(t)
	for _, path := range []string{"/admin/v1/me/tokens", "/admin/v1/users/" + uuid.NewString() + "/tokens"} {
		r := h.Do("GET", path, "Authorization", "Bearer "+servertest.AdminToken)
		if r.Status != 404 {
			t.Errorf("GET %s: %d %s", path, r.Status, r.Body)
		}
	}
}

// A password that is not UTF-8 is refused wherever one is sent, rather than
// decoded with each bad byte replaced by U+FFFD: "\xff…" and "\xfe…" would
// otherwise be the same password. Nothing is created or changed.
func TestPasswordNotUTF8(t *testing.T) {
	tm := newTeams(t, func(c *server.Config) { c.Sessions = c.Store.(decoy.SessionStore) })
	v := tm.want(tm.call("POST", "/admin/v1/workspaces/"+tm.ws+"/members", tm.owner, `{"email":"dana@example.com","role":"editor"}`), 201)
	_, secret, _ := strings.Cut(v["invitation_url"].(string), "/#/invite/")
	const bad = "\xff\xfe correct horse battery"
	for _, c := range []struct{ name, method, path, token, body string }{
		{"sign-in for a token", "POST", "/admin/v1/auth/token", "", `{"email":"viewer@example.com","password":"` + bad + `"}`},
		{"own password, new", "PUT", "/admin/v1/me/password", tm.viewer, `{"current_password":"correct horse battery","password":"` + bad + `"}`},
		{"own password, current", "PUT", "/admin/v1/me/password", tm.viewer, `{"current_password":"` + bad + `","password":"a new horse battery"}`},
		{"new user", "POST", "/admin/v1/users", servertest.AdminToken, `{"email":"eve@example.com","name":"Eve","password":"` + bad + `"}`},
		{"user's new password", "PATCH", "/admin/v1/users/" + tm.users["editor"], servertest.AdminToken, `{"password":"` + bad + `"}`},
		{"invitation accepted", "POST", "/admin/v1/invitations/" + secret + "/accept", "", `{"name":"Dana","password":"` + bad + `"}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			at := strings.Index(c.body, bad) + 1
			servertest.WantError(t, tm.call(c.method, c.path, c.token, c.body), 400, fmt.Sprintf("The body must be UTF-8: byte 0xFF at line 1, column %d is not", at))
		})
	}
	if _, _, r := tm.studioSignIn("viewer@example.com", "x"); r.Status != 401 {
		t.Fatalf("Studio sign-in, wrong password: %d %s", r.Status, r.Body)
	}
	body := `{"email":"viewer@example.com","password":"` + bad + `"}`
	r := tm.StudioReq("POST", studio.SessionPath, "", body, "Content-Type", "application/json")
	servertest.WantError(t, r, 400, fmt.Sprintf("The body must be UTF-8: byte 0xFF at line 1, column %d is not", strings.Index(body, bad)+1))
	// Refusals changed nothing: the viewer's password and token still work,
	// nobody was added, the invitation is still open.
	tm.want(tm.call("GET", "/admin/v1/me", tm.viewer, ""), 200)
	tm.login("viewer@example.com", "correct horse battery")
	tm.want(tm.call("GET", "/admin/v1/invitations/"+secret, "", ""), 200)
	for _, email := range []string{"eve@example.com", "dana@example.com"} {
		servertest.WantError(t, tm.call("POST", "/admin/v1/auth/token", "", `{"email":"`+email+`","password":"\ufffd\ufffd correct horse battery"}`), 401, "Invalid email or password")
	}
	// A lone surrogate escape is UTF-8 text, but decodes to U+FFFD as a
	// bad byte does: "\ud800…" and "\udfff…" would be the same password.
	// No password set may hold U+FFFD, so none tried with one matches.
	const fffd = "password must not hold U+FFFD, the replacement character, which a lone UTF-16 surrogate escape also decodes to"
	servertest.WantError(t, tm.call("POST", "/admin/v1/users", servertest.AdminToken, `{"email":"eve@example.com","name":"Eve","password":"\ud800 correct horse battery"}`), 400, fffd)
	servertest.WantError(t, tm.call("PUT", "/admin/v1/me/password", tm.viewer, `{"current_password":"correct horse battery","password":"\udfff a new horse battery"}`), 400, fffd)
	servertest.WantError(t, tm.call("PATCH", "/admin/v1/users/"+tm.users["editor"], servertest.AdminToken, `{"password":"\ud800 correct horse battery"}`), 400, fffd)
	servertest.WantError(t, tm.call("POST", "/admin/v1/invitations/"+secret+"/accept", "", `{"name":"Dana","password":"\ud800 correct horse battery"}`), 400, fffd)
	servertest.WantError(t, tm.call("POST", "/admin/v1/auth/token", "", `{"email":"eve@example.com","password":"\udfff correct horse battery"}`), 401, "Invalid email or password")
}
