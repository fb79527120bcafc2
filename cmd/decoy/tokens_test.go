package main_test

// Personal access tokens on the real binary (§6.1): a password reset by a
// server admin ends every token of the user, on each store; decoy login
// names its token, and decoy token lists and revokes them.

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestAccessTokensEndWithPasswordReset: the tokens a user holds answer 401
// once a server admin resets its password, at once, on each store; other
// users' tokens and the API keys keep working, and the new password gives
// a token that works.
func TestAccessTokensEndWithPasswordReset(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) {
		accessTokensEndWithPasswordReset(t, start(t, t.TempDir(), "--admin-token", adminToken, "--auth-failure-limit", "0"))
	})
	t.Run("postgres", func(t *testing.T) {
		accessTokensEndWithPasswordReset(t, start(t, t.TempDir(), "--admin-token", adminToken, "--auth-failure-limit", "0", "--database-url", postgresURL(t)))
	})
}

func accessTokensEndWithPasswordReset(t *testing.T, p *proc) {
	o := newOrg(t, p)
	laptop := field(t, api(t, p, "POST", "auth/token", "", `{"email":"viewer@example.com","password":"`+password+`","name":"laptop"}`), 201, "token")
	viewer := []string{o.tokens["viewer"], laptop}
	others := []string{o.tokens["owner"], o.tokens["editor"], o.tokens["outsider"], o.tokens["editor key"]}
	for _, tok := range append(viewer, others...) {
		if a := api(t, p, "GET", "me", tok, ""); a.status != 200 {
			t.Fatalf("before the reset: %d %s", a.status, a.body)
		}
	}
	o.admin("PATCH", "users/"+o.users["viewer"], `{"password":"a brand new password"}`, 200, "id")
	for i, tok := range viewer {
		if a := api(t, p, "GET", "workspaces/"+o.ws, tok, ""); a.status != 401 || a.body != `{"error":"Invalid admin token"}`+"\n" {
			t.Errorf("the viewer's token %d after the reset: %d %s", i, a.status, a.body)
		}
	}
	for i, tok := range others {
		if a := api(t, p, "GET", "me", tok, ""); a.status != 200 {
			t.Errorf("another caller's token %d after the reset: %d %s", i, a.status, a.body)
		}
	}
	if a := api(t, p, "POST", "auth/token", "", `{"email":"viewer@example.com","password":"`+password+`"}`); a.status != 401 {
		t.Errorf("the old password: %d %s", a.status, a.body)
	}
	fresh := field(t, api(t, p, "POST", "auth/token", "", `{"email":"viewer@example.com","password":"a brand new password"}`), 201, "token")
	a := api(t, p, "GET", "me/tokens", fresh, "")
	var list struct {
		Tokens []struct {
			Name    string `json:"name"`
			Current bool   `json:"current"`
		} `json:"tokens"`
	}
	if err := json.Unmarshal([]byte(a.body), &list); err != nil || a.status != 200 || len(list.Tokens) != 1 || !list.Tokens[0].Current {
		t.Errorf("the viewer's tokens after the reset: %d %s", a.status, a.body)
	}
}

// TestTokenCLI: decoy login names its token; decoy token lists the
// caller's tokens, marks the current one, revokes one by id; a server
// admin manages a user's with --user; a password reset signs decoy login
// out.
func TestTokenCLI(t *testing.T) {
	p := start(t, t.TempDir(), "--admin-token", adminToken)
	config := t.TempDir()
	cli := func(stdin string, args ...string) (string, string, int) {
		t.Helper()
		return decoyCLIEnv(t, []string{"DECOY_SERVER=" + p.url, "XDG_CONFIG_HOME=" + config, "HOME=" + config}, stdin, args...)
	}
	must := func(stdin string, args ...string) string {
		t.Helper()
		out, errOut, code := cli(stdin, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errOut)
		}
		return out
	}
	type tokenList struct {
		Tokens []struct {
			ID, Name string
			Current  bool
		}
	}
	list := func(args ...string) tokenList {
		t.Helper()
		var l tokenList
		out := must("", append([]string{"token", "list"}, args...)...)
		if err := json.Unmarshal([]byte(out), &l); err != nil {
			t.Fatalf("decoy token list: %v: %s", err, out)
		}
		return l
	}
	var ann struct{ ID string }
	json.Unmarshal([]byte(must(password+"\n", "user", "create", "--email", "ann@example.com", "--name", "Ann", "--admin-token", adminToken)), &ann)

	// Without --name, the token says where it was made.
	must(password+"\n", "login", "--email", "ann@example.com", "--password-stdin")
	if l := list(); len(l.Tokens) != 1 || !strings.HasPrefix(l.Tokens[0].Name, "decoy login on ") || !l.Tokens[0].Current {
		t.Errorf("after decoy login: %+v", l)
	}
	must(password+"\n", "login", "--email", "ann@example.com", "--password-stdin", "--name", "laptop")
	ci := field(t, api(t, p, "POST", "auth/token", "", `{"email":"ann@example.com","password":"`+password+`","name":"ci"}`), 201, "token")
	l := list()
	var names []string
	var ciID string
	for _, tok := range l.Tokens {
		names = append(names, tok.Name)
		if tok.Current != (tok.Name == "laptop") {
			t.Errorf("%s: current %v", tok.Name, tok.Current)
		}
		if tok.Name == "ci" {
			ciID = tok.ID
		}
	}
	if len(names) != 3 || names[0] != "ci" || names[1] != "laptop" {
		t.Errorf("tokens %v, want ci, laptop, then the first", names)
	}
	if out := must("", "token", "revoke", ciID); out != "" {
		t.Errorf("decoy token revoke printed %q off a terminal", out)
	}
	if a := api(t, p, "GET", "me", ci, ""); a.status != 401 {
		t.Errorf("a revoked token: %d %s", a.status, a.body)
	}
	if _, errOut, code := cli("", "token", "revoke", ciID); code != 1 || !strings.Contains(errOut, "Access token not found") {
		t.Errorf("revoked twice: exit %d: %s", code, errOut)
	}
	if _, errOut, code := cli("", "token", "revoke"); code != 2 || !strings.Contains(errOut, "needs a token id") {
		t.Errorf("no id: exit %d: %s", code, errOut)
	}
	if _, errOut, code := cli("", "token", "list", "--user", ann.ID); code != 1 || !strings.Contains(errOut, "needs the server admin role") {
		t.Errorf("--user as a member: exit %d: %s", code, errOut)
	}
	// A server admin lists and revokes another user's tokens.
	asAdmin := list("--user", ann.ID, "--admin-token", adminToken)
	if len(asAdmin.Tokens) != 2 || asAdmin.Tokens[0].Name != "laptop" || asAdmin.Tokens[0].Current {
		t.Errorf("ann's tokens, to the server admin: %+v", asAdmin)
	}
	must("", "token", "revoke", "--user", ann.ID, asAdmin.Tokens[1].ID, "--admin-token", adminToken)
	if l := list(); len(l.Tokens) != 1 || l.Tokens[0].Name != "laptop" {
		t.Errorf("after the server admin revoked one: %+v", l)
	}
	// A password reset ends decoy login's token.
	must("a brand new password\n", "user", "patch", ann.ID, "--password-stdin", "--admin-token", adminToken)
	if _, errOut, code := cli("", "token", "list"); code != 1 || !strings.Contains(errOut, "Invalid admin token") {
		t.Errorf("after a password reset: exit %d: %s", code, errOut)
	}

	// Ann changes her own password: decoy password, with the current one.
	must("a brand new password\n", "login", "--email", "ann@example.com", "--password-stdin", "--name", "laptop")
	other := field(t, api(t, p, "POST", "auth/token", "", `{"email":"ann@example.com","password":"a brand new password","name":"other"}`), 201, "token")
	if _, errOut, code := cli("", "password", "--admin-token", adminToken); code != 1 || !strings.Contains(errOut, "which have no password") {
		t.Errorf("decoy password as the admin token: exit %d: %s", code, errOut)
	}
	if _, errOut, code := cli("a brand new password\n", "password", "--password-stdin"); code != 1 || !strings.Contains(errOut, "reading the new password") {
		t.Errorf("decoy password without a second line: exit %d: %s", code, errOut)
	}
	if _, errOut, code := cli("wrong password here\na third new password\n", "password", "--password-stdin"); code != 1 || !strings.Contains(errOut, "The current password is wrong") {
		t.Errorf("decoy password with a wrong current password: exit %d: %s", code, errOut)
	}
	if _, errOut, code := cli("a brand new password\n\xff\xfe third new password\n", "password", "--password-stdin"); code != 1 || !strings.Contains(errOut, "the password is not UTF-8") {
		t.Errorf("decoy password with a new password of Latin-1 bytes: exit %d: %s", code, errOut)
	}
	if _, errOut, code := cli("\xff\xfe a password of bytes\n", "user", "create", "--email", "bo@example.com", "--name", "Bo", "--admin-token", adminToken); code != 1 || !strings.Contains(errOut, "the password is not UTF-8") {
		t.Errorf("decoy user create with a password of Latin-1 bytes: exit %d: %s", code, errOut)
	}
	if out := must("a brand new password\na third new password\n", "password", "--password-stdin"); !strings.Contains(out, "Password of ann@example.com changed") {
		t.Errorf("decoy password printed %q", out)
	}
	if a := api(t, p, "GET", "me", other, ""); a.status != 401 {
		t.Errorf("another token of Ann after her new password: %d %s", a.status, a.body)
	}
	if _, errOut, code := cli("", "token", "list"); code != 1 || !strings.Contains(errOut, "no admin token") {
		t.Errorf("decoy login's token is kept after decoy password: exit %d: %s", code, errOut)
	}
	must("a third new password\n", "login", "--email", "ann@example.com", "--password-stdin")
}
