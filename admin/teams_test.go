package admin_test

import (
	"context"
	"encoding/json"
	"io"
	"maps"
	"net/http"
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

// teams is a harness with teams on, and the people and keys of one
// workspace: an owner, an editor and a viewer (by personal token), an
// editor key, a viewer key and a key limited to one project, and an
// outsider who owns another workspace.
type teams struct {
	*servertest.Harness
	ws, other                  string // workspaces
	project, project2          string // projects of ws
	otherProject               string // the project of other
	owner, editor, viewer, out string // personal access tokens
	editorKey, viewerKey       string
	projectKey                 string // editor key of project
	users                      map[string]string
}

func withTeams(c *server.Config) { c.Teams = c.Store.(decoy.TeamStore) }

func newTeams(t *testing.T, configure ...func(*server.Config)) *teams {
	t.Helper()
	h := servertest.New(t, append([]func(*server.Config){withTeams}, configure...)...)
	tm := &teams{Harness: h, users: map[string]string{}}
	t.Cleanup(func() {
		for _, bad := range []string{"could not append to the audit log", "internal error", "panic"} {
			if strings.Contains(h.Logs.String(), bad) {
				t.Errorf("the log holds %q:\n%s", bad, h.Logs.String())
			}
		}
	})
	tm.ws = tm.mustID(tm.call("POST", "/admin/v1/workspaces", servertest.AdminToken, `{"name":"acme"}`), 201)
	tm.other = tm.mustID(tm.call("POST", "/admin/v1/workspaces", servertest.AdminToken, `{"name":"globex"}`), 201)
	tm.project = tm.defaultProject(tm.ws)
	tm.project2 = tm.mustID(tm.call("POST", "/admin/v1/workspaces/"+tm.ws+"/projects", servertest.AdminToken, `{"name":"second"}`), 201)
	tm.otherProject = tm.defaultProject(tm.other)
	for _, p := range []struct {
		name, ws, role string
		token          *string
	}{
		{"owner", tm.ws, "owner", &tm.owner},
		{"editor", tm.ws, "editor", &tm.editor},
		{"viewer", tm.ws, "viewer", &tm.viewer},
		{"out", tm.other, "owner", &tm.out},
	} {
		email := p.name + "@example.com"
		tm.users[p.name] = tm.mustID(tm.call("POST", "/admin/v1/users", servertest.AdminToken,
			`{"email":"`+email+`","name":"`+p.name+`","password":"correct horse battery"}`), 201)
		tm.want(tm.call("POST", "/admin/v1/workspaces/"+p.ws+"/members", servertest.AdminToken, `{"email":"`+email+`","role":"`+p.role+`"}`), 201)
		*p.token = tm.login(email, "correct horse battery")
	}
	tm.editorKey = tm.key(`{"name":"ci","role":"editor"}`)
	tm.viewerKey = tm.key(`{"name":"dash","role":"viewer"}`)
	tm.projectKey = tm.key(`{"name":"proj","role":"editor","project_id":"` + tm.project + `"}`)
	return tm
}

// call sends a JSON request with a bearer token ("" for none).
func (tm *teams) call(method, path, token, body string) servertest.Response {
	tm.T.Helper()
	req, err := http.NewRequest(method, tm.URL+path, strings.NewReader(body))
	if err != nil {
		tm.T.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		tm.T.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return servertest.Response{Status: resp.StatusCode, Header: resp.Header, Body: string(b)}
}

func (tm *teams) want(r servertest.Response, status int) map[string]any {
	tm.T.Helper()
	if r.Status != status {
		tm.T.Fatalf("status %d, want %d: %s", r.Status, status, r.Body)
	}
	var v map[string]any
	_ = json.Unmarshal([]byte(r.Body), &v)
	return v
}

func (tm *teams) mustID(r servertest.Response, status int) string {
	tm.T.Helper()
	id, _ := tm.want(r, status)["id"].(string)
	if id == "" {
		tm.T.Fatalf("no id in %s", r.Body)
	}
	return id
}

func (tm *teams) defaultProject(ws string) string {
	tm.T.Helper()
	var out struct {
		Projects []decoy.Project `json:"projects"`
	}
	r := tm.call("GET", "/admin/v1/workspaces/"+ws+"/projects", servertest.AdminToken, "")
	tm.want(r, 200)
	_ = json.Unmarshal([]byte(r.Body), &out)
	for _, p := range out.Projects {
		if p.Name == "default" {
			return p.ID
		}
	}
	tm.T.Fatalf("no default project in %s", r.Body)
	return ""
}

func (tm *teams) login(email, password string) string {
	tm.T.Helper()
	v := tm.want(tm.call("POST", "/admin/v1/auth/token", "", `{"email":"`+email+`","password":"`+password+`"}`), 201)
	return v["token"].(string)
}

func (tm *teams) key(body string) string {
	tm.T.Helper()
	v := tm.want(tm.call("POST", "/admin/v1/workspaces/"+tm.ws+"/keys", tm.owner, body), 201)
	return v["secret"].(string)
}

// mock creates a mock in a project as the server admin.
func (tm *teams) mock(project, data string) string {
	tm.T.Helper()
	return tm.mustID(tm.call("POST", "/admin/v1/mocks?name=m&project_id="+project, servertest.AdminToken, data), 201)
}

// TestTeamsAccess checks the role each route needs, for every kind of
// caller, against the handlers (the real binary has its own matrix).
func TestTeamsAccess(t *testing.T) {
	tm := newTeams(t)
	m := tm.mock(tm.project, `[1]`)
	m2 := tm.mock(tm.project2, `[2]`)
	mo := tm.mock(tm.otherProject, `[3]`)
	type row struct {
		method, path, body string
		// statuses of: admin, owner, editor, viewer, editor key, viewer
		// key, project key, outsider, none
		want [9]int
	}
	ws, p, p2 := tm.ws, tm.project, tm.project2
	rows := []row{
		{"GET", "/admin/v1/mocks/" + m, "", [9]int{200, 200, 200, 200, 200, 200, 200, 404, 401}},
		{"GET", "/admin/v1/mocks/" + m2, "", [9]int{200, 200, 200, 200, 200, 200, 404, 404, 401}},
		{"GET", "/admin/v1/mocks/" + mo, "", [9]int{200, 404, 404, 404, 404, 404, 404, 200, 401}},
		{"GET", "/admin/v1/mocks/" + m + "/data", "", [9]int{200, 200, 200, 200, 200, 200, 200, 404, 401}},
		{"GET", "/admin/v1/mocks/" + m + "/usage", "", [9]int{200, 200, 200, 200, 200, 200, 200, 404, 401}},
		{"PATCH", "/admin/v1/mocks/" + m, `{"delay_ms":1}`, [9]int{200, 200, 200, 403, 200, 403, 200, 404, 401}},
		{"PUT", "/admin/v1/mocks/" + m + "/data", `[1,2]`, [9]int{200, 200, 200, 403, 200, 403, 200, 404, 401}},
		{"POST", "/admin/v1/mocks/" + m + "/token", "", [9]int{409, 409, 409, 403, 409, 403, 409, 404, 401}},
		{"GET", "/admin/v1/workspaces/" + ws, "", [9]int{200, 200, 200, 200, 200, 200, 200, 404, 401}},
		{"PATCH", "/admin/v1/workspaces/" + ws, `{"name":"acme"}`, [9]int{200, 200, 403, 403, 403, 403, 404, 404, 401}},
		{"PATCH", "/admin/v1/workspaces/" + ws, `{"limits":{}}`, [9]int{200, 403, 403, 403, 403, 403, 404, 404, 401}},
		{"GET", "/admin/v1/workspaces/" + ws + "/members", "", [9]int{200, 200, 200, 200, 200, 200, 404, 404, 401}},
		{"POST", "/admin/v1/workspaces/" + ws + "/members", `{"email":"new@example.com","role":"viewer"}`, [9]int{201, 201, 403, 403, 403, 403, 404, 404, 401}},
		{"GET", "/admin/v1/workspaces/" + ws + "/keys", "", [9]int{200, 200, 403, 403, 403, 403, 404, 404, 401}},
		{"POST", "/admin/v1/workspaces/" + ws + "/keys", `{"name":"k","role":"viewer"}`, [9]int{201, 201, 403, 403, 403, 403, 404, 404, 401}},
		{"GET", "/admin/v1/workspaces/" + ws + "/projects", "", [9]int{200, 200, 200, 200, 200, 200, 200, 404, 401}},
		{"POST", "/admin/v1/workspaces/" + ws + "/projects", `{"name":"x {caller}"}`, [9]int{201, 201, 201, 403, 201, 403, 404, 404, 401}},
		{"GET", "/admin/v1/workspaces/" + ws + "/audit", "", [9]int{200, 200, 200, 200, 200, 200, 404, 404, 401}},
		{"GET", "/admin/v1/projects/" + p, "", [9]int{200, 200, 200, 200, 200, 200, 200, 404, 401}},
		{"GET", "/admin/v1/projects/" + p2, "", [9]int{200, 200, 200, 200, 200, 200, 404, 404, 401}},
		{"PATCH", "/admin/v1/projects/" + p2, `{"name":"second"}`, [9]int{200, 200, 200, 403, 200, 403, 404, 404, 401}},
		{"DELETE", "/admin/v1/projects/" + p2, "", [9]int{409, 409, 409, 403, 409, 403, 404, 404, 401}},
		{"GET", "/admin/v1/users", "", [9]int{200, 403, 403, 403, 403, 403, 403, 403, 401}},
		{"POST", "/admin/v1/workspaces", `{"name":"w"}`, [9]int{201, 403, 403, 403, 403, 403, 403, 403, 401}},
		{"GET", "/admin/v1/me", "", [9]int{200, 200, 200, 200, 200, 200, 200, 200, 401}},
		{"GET", "/admin/v1/workspaces", "", [9]int{200, 200, 200, 200, 200, 200, 200, 200, 401}},
		{"GET", "/admin/v1/mocks", "", [9]int{200, 200, 200, 200, 200, 200, 200, 200, 401}},
		{"GET", "/admin/v1/me/tokens", "", [9]int{403, 200, 200, 200, 403, 403, 403, 200, 401}},
		{"DELETE", "/admin/v1/me/tokens/" + uuid.NewString(), "", [9]int{403, 404, 404, 404, 403, 403, 403, 404, 401}},
		{"GET", "/admin/v1/users/" + tm.users["viewer"] + "/tokens", "", [9]int{200, 403, 403, 403, 403, 403, 403, 403, 401}},
		{"DELETE", "/admin/v1/users/" + tm.users["viewer"] + "/tokens/" + uuid.NewString(), "", [9]int{404, 403, 403, 403, 403, 403, 403, 403, 401}},
	}
	callers := []string{servertest.AdminToken, tm.owner, tm.editor, tm.viewer, tm.editorKey, tm.viewerKey, tm.projectKey, tm.out, ""}
	names := []string{"admin", "owner", "editor", "viewer", "editor key", "viewer key", "project key", "outsider", "none"}
	for _, r := range rows {
		for i, token := range callers {
			t.Run(r.method+" "+r.path+" "+names[i], func(t *testing.T) {
				got := tm.call(r.method, r.path, token, strings.ReplaceAll(r.body, "{caller}", names[i]))
				if got.Status != r.want[i] {
					t.Errorf("status %d, want %d: %s", got.Status, r.want[i], got.Body)
				}
				if got.Status == 403 && !strings.HasPrefix(got.Body, `{"error":"Forbidden: `) {
					t.Errorf("403 body %s", got.Body)
				}
			})
		}
	}
}

func TestTeamsNotFoundTexts(t *testing.T) {
	tm := newTeams(t)
	mo := tm.mock(tm.otherProject, `[3]`)
	for _, tc := range []struct{ method, path, body, msg string }{
		{"GET", "/admin/v1/mocks/" + mo, "", "Mock api not found"},
		{"PATCH", "/admin/v1/mocks/" + mo, `{"name":"x"}`, "Mock api not found"},
		{"GET", "/admin/v1/workspaces/" + tm.other, "", "Workspace not found"},
		{"GET", "/admin/v1/projects/" + tm.otherProject, "", "Project not found"},
		{"GET", "/admin/v1/projects/nope", "", "Project not found"},
		{"POST", "/admin/v1/mocks?project_id=" + tm.otherProject, `[1]`, "Project not found"},
	} {
		servertest.WantError(t, tm.call(tc.method, tc.path, tm.viewer, tc.body), 404, tc.msg)
	}
	servertest.WantError(t, tm.call("PATCH", "/admin/v1/mocks/"+tm.mock(tm.project, `[1]`), tm.viewer, `{"name":"x"}`), 403,
		"Forbidden: changing mocks needs the editor role")
	servertest.WantError(t, tm.call("GET", "/admin/v1/users", tm.owner, ""), 403, "Forbidden: listing users needs the server admin role")
}

func TestTeamsCreateMockProject(t *testing.T) {
	tm := newTeams(t)
	// The editor reaches two projects: it must say which.
	servertest.WantError(t, tm.call("POST", "/admin/v1/mocks", tm.editor, `[1]`), 400, "project_id is required")
	v := tm.want(tm.call("POST", "/admin/v1/mocks?project_id="+tm.project2, tm.editor, `[1]`), 201)
	if v["project_id"] != tm.project2 || v["workspace_id"] != tm.ws {
		t.Errorf("created in %v/%v", v["workspace_id"], v["project_id"])
	}
	// A project key creates in its project; the server admin in the
	// default one.
	if v := tm.want(tm.call("POST", "/admin/v1/mocks", tm.projectKey, `[1]`), 201); v["project_id"] != tm.project {
		t.Errorf("project key created in %v", v["project_id"])
	}
	if v := tm.want(tm.call("POST", "/admin/v1/mocks", servertest.AdminToken, `[1]`), 201); v["project_id"] != decoy.DefaultProjectID || v["workspace_id"] != decoy.DefaultWorkspaceID {
		t.Errorf("admin created in %v", v["project_id"])
	}
	servertest.WantError(t, tm.call("POST", "/admin/v1/mocks?project_id="+tm.project2, tm.projectKey, `[1]`), 404, "Project not found")
	servertest.WantError(t, tm.call("POST", "/admin/v1/mocks?project_id="+tm.project, tm.viewer, `[1]`), 403, "Forbidden: creating mocks needs the editor role")

	// No project to reach: a user in no workspace may not create mocks;
	// an owner whose workspace has no project left is told to make one.
	tm.mustID(tm.call("POST", "/admin/v1/users", servertest.AdminToken, `{"email":"new@example.com","name":"new","password":"correct horse battery"}`), 201)
	servertest.WantError(t, tm.call("POST", "/admin/v1/mocks", tm.login("new@example.com", "correct horse battery"), `[1]`), 403,
		"Forbidden: creating mocks needs the editor role")
	tm.want(tm.call("DELETE", "/admin/v1/projects/"+tm.otherProject, tm.out, ""), 204)
	servertest.WantError(t, tm.call("POST", "/admin/v1/mocks", tm.out, `[1]`), 400, "There is no project to create the mock in: create a project first")
}

func TestTeamsSearchNarrowed(t *testing.T) {
	tm := newTeams(t)
	tm.mock(tm.project, `[1]`)
	tm.mock(tm.project2, `[2]`)
	tm.mock(tm.otherProject, `[3]`)
	count := func(token, query string) int {
		t.Helper()
		v := tm.want(tm.call("GET", "/admin/v1/mocks"+query, token, ""), 200)
		return len(v["mocks"].([]any))
	}
	for _, tc := range []struct {
		name, token, query string
		want               int
	}{
		{"admin all", servertest.AdminToken, "", 3},
		{"viewer", tm.viewer, "", 2},
		{"viewer one project", tm.viewer, "?project_id=" + tm.project2, 1},
		{"viewer its workspace", tm.viewer, "?workspace_id=" + strings.ToUpper(tm.ws), 2},
		{"admin other workspace", servertest.AdminToken, "?workspace_id=" + tm.other, 1},
		{"project key", tm.projectKey, "", 1},
		{"project key its workspace", tm.projectKey, "?workspace_id=" + tm.ws, 1},
		{"outsider", tm.out, "", 1},
		{"q", tm.viewer, "?q=M", 2},
		{"q none", tm.viewer, "?q=zzz", 0},
	} {
		if got := count(tc.token, tc.query); got != tc.want {
			t.Errorf("%s: %d mocks, want %d", tc.name, got, tc.want)
		}
	}
	// A workspace or project the caller cannot see is not found, as at
	// its own route, whether it exists or not.
	for _, tc := range []struct {
		name, token, query, msg string
	}{
		{"viewer other workspace", tm.viewer, "?workspace_id=" + tm.other, "Workspace not found"},
		{"viewer other project", tm.viewer, "?project_id=" + tm.otherProject, "Project not found"},
		{"project key asks another", tm.projectKey, "?project_id=" + tm.project2, "Project not found"},
		{"outsider", tm.out, "?workspace_id=" + tm.ws, "Workspace not found"},
		{"no such workspace", servertest.AdminToken, "?workspace_id=" + uuid.NewString(), "Workspace not found"},
		{"no such project", servertest.AdminToken, "?project_id=" + uuid.NewString(), "Project not found"},
		{"not an id", tm.viewer, "?workspace_id=nope", "Workspace not found"},
		{"not a project id", servertest.AdminToken, "?project_id=../x", "Project not found"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			servertest.WantError(t, tm.call("GET", "/admin/v1/mocks"+tc.query, tc.token, ""), 404, tc.msg)
		})
	}
}

func TestTeamsAuthTokens(t *testing.T) {
	tm := newTeams(t)
	servertest.WantError(t, tm.call("POST", "/admin/v1/auth/token", "", `{"email":"owner@example.com","password":"wrong password!"}`), 401, "Invalid email or password")
	servertest.WantError(t, tm.call("POST", "/admin/v1/auth/token", "", `{"email":"nobody@example.com","password":"wrong password!"}`), 401, "Invalid email or password")
	// Email compared in any case.
	tok := tm.login("OWNER@example.com", "correct horse battery")
	tm.want(tm.call("GET", "/admin/v1/me", tok, ""), 200)
	tm.want(tm.call("DELETE", "/admin/v1/auth/token", tok, ""), 204)
	servertest.WantError(t, tm.call("GET", "/admin/v1/me", tok, ""), 401, "Invalid admin token")
	servertest.WantError(t, tm.call("DELETE", "/admin/v1/auth/token", servertest.AdminToken, ""), 400, "Send the personal access token to revoke as the bearer token")
	// A revoked key is refused at once.
	v := tm.want(tm.call("GET", "/admin/v1/workspaces/"+tm.ws+"/keys", tm.owner, ""), 200)
	var id string
	for _, k := range v["keys"].([]any) {
		if k.(map[string]any)["name"] == "dash" {
			id = k.(map[string]any)["id"].(string)
		}
	}
	tm.want(tm.call("DELETE", "/admin/v1/workspaces/"+tm.ws+"/keys/"+id, tm.owner, ""), 204)
	servertest.WantError(t, tm.call("GET", "/admin/v1/me", tm.viewerKey, ""), 401, "Invalid admin token")
}

func TestTeamsWrongPasswordsCountAsFailures(t *testing.T) {
	tm := newTeams(t, func(c *server.Config) { c.AuthFailureLimit = 3 })
	for range 3 {
		servertest.WantError(t, tm.call("POST", "/admin/v1/auth/token", "", `{"email":"owner@example.com","password":"wrong password!"}`), 401, "Invalid email or password")
	}
	r := tm.call("POST", "/admin/v1/auth/token", "", `{"email":"owner@example.com","password":"correct horse battery"}`)
	servertest.WantError(t, r, 429, "Too many failed authentication attempts")
}

func TestTeamsKeyExpiry(t *testing.T) {
	tm := newTeams(t)
	at := tm.Clock.Now().Add(200 * time.Second).UTC().Format("2006-01-02T15:04:05Z")
	key := tm.key(`{"name":"short","role":"viewer","expires_at":"` + at + `"}`)
	tm.want(tm.call("GET", "/admin/v1/me", key, ""), 200)
	tm.Clock.Add(200 * time.Second)
	servertest.WantError(t, tm.call("GET", "/admin/v1/me", key, ""), 401, "Invalid admin token")
	servertest.WantError(t, tm.call("POST", "/admin/v1/workspaces/"+tm.ws+"/keys", tm.owner, `{"name":"x","role":"viewer","expires_at":"2000-01-01T00:00:00Z"}`), 400, "expires_at must be in the future")
	servertest.WantError(t, tm.call("POST", "/admin/v1/workspaces/"+tm.ws+"/keys", tm.owner, `{"name":"x","role":"owner"}`), 400, "role must be editor, viewer")
}

func TestTeamsMembersAndInvitations(t *testing.T) {
	tm := newTeams(t)
	v := tm.want(tm.call("POST", "/admin/v1/workspaces/"+tm.ws+"/members", tm.owner, `{"email":"dana@example.com","role":"editor"}`), 201)
	link, _ := v["invitation_url"].(string)
	_, secret, ok := strings.Cut(link, "/#/invite/")
	if !ok {
		t.Fatalf("invitation_url %q", link)
	}
	inv := tm.want(tm.call("GET", "/admin/v1/invitations/"+secret, "", ""), 200)
	if inv["email"] != "dana@example.com" || inv["role"] != "editor" {
		t.Errorf("invitation %v", inv)
	}
	servertest.WantError(t, tm.call("GET", "/admin/v1/invitations/dcy_inv_wrong", "", ""), 404, "Invitation not found")
	servertest.WantError(t, tm.call("POST", "/admin/v1/invitations/"+secret+"/accept", "", `{"name":"Dana","password":"short"}`), 400, "password must be from 12 characters to 1024 bytes of UTF-8")
	acc := tm.want(tm.call("POST", "/admin/v1/invitations/"+secret+"/accept", "", `{"name":"Dana","password":"a long enough password"}`), 201)
	tok := acc["token"].(string)
	tm.want(tm.call("POST", "/admin/v1/mocks?project_id="+tm.project, tok, `[1]`), 201)
	// Single use.
	servertest.WantError(t, tm.call("POST", "/admin/v1/invitations/"+secret+"/accept", "", `{"name":"Dana","password":"a long enough password"}`), 404, "Invitation not found")
	// Roles change at once; the last owner stays.
	tm.want(tm.call("PATCH", "/admin/v1/workspaces/"+tm.ws+"/members/"+tm.users["viewer"], tm.owner, `{"role":"editor"}`), 200)
	tm.want(tm.call("POST", "/admin/v1/mocks?project_id="+tm.project, tm.viewer, `[1]`), 201)
	servertest.WantError(t, tm.call("PATCH", "/admin/v1/workspaces/"+tm.ws+"/members/"+tm.users["owner"], tm.owner, `{"role":"viewer"}`), 409, decoy.ErrLastOwner.Message)
	tm.want(tm.call("DELETE", "/admin/v1/workspaces/"+tm.ws+"/members/"+tm.users["editor"], tm.owner, ""), 204)
	servertest.WantError(t, tm.call("GET", "/admin/v1/workspaces/"+tm.ws, tm.editor, ""), 404, "Workspace not found")
	servertest.WantError(t, tm.call("DELETE", "/admin/v1/workspaces/"+tm.ws+"/members/"+tm.users["editor"], tm.owner, ""), 404, "Member not found")
}

// TestTeamsPendingInvitations: an invitation not yet accepted is listed
// to the workspace's members (never its secret), an owner revokes it by
// its email, its link stops working, and the audit log records who did.
func TestTeamsPendingInvitations(t *testing.T) {
	tm := newTeams(t)
	v := tm.want(tm.call("POST", "/admin/v1/workspaces/"+tm.ws+"/members", tm.owner, `{"email":"Dana@example.com","role":"editor"}`), 201)
	_, secret, _ := strings.Cut(v["invitation_url"].(string), "/#/invite/")
	tm.want(tm.call("POST", "/admin/v1/workspaces/"+tm.ws+"/members", tm.owner, `{"email":"eli@example.com","role":"viewer"}`), 201)
	r := tm.call("GET", "/admin/v1/workspaces/"+tm.ws+"/invitations", tm.viewer, "")
	tm.want(r, 200)
	var list struct {
		Invitations []struct {
			Email, Role string
			ExpiresAt   time.Time `json:"expires_at"`
		} `json:"invitations"`
	}
	if err := json.Unmarshal([]byte(r.Body), &list); err != nil || len(list.Invitations) != 2 ||
		list.Invitations[0].Email != "Dana@example.com" || list.Invitations[0].Role != "editor" || list.Invitations[1].Email != "eli@example.com" ||
		list.Invitations[0].ExpiresAt.IsZero() || strings.Contains(r.Body, secret) || strings.Contains(r.Body, "dcy_") {
		t.Fatalf("invitations: %s (%v)", r.Body, err)
	}
	if r := tm.call("GET", "/admin/v1/workspaces/"+tm.other+"/invitations", tm.owner, ""); r.Status != 404 {
		t.Errorf("another workspace's invitations: %d %s", r.Status, r.Body)
	}
	servertest.WantError(t, tm.call("DELETE", "/admin/v1/workspaces/"+tm.ws+"/invitations/dana@example.com", tm.editor, ""), 403, "Forbidden: revoking invitations needs the owner role")
	tm.want(tm.call("DELETE", "/admin/v1/workspaces/"+tm.ws+"/invitations/dana@example.com", tm.owner, ""), 204)
	servertest.WantError(t, tm.call("GET", "/admin/v1/invitations/"+secret, "", ""), 404, "Invitation not found")
	servertest.WantError(t, tm.call("POST", "/admin/v1/invitations/"+secret+"/accept", "", `{"name":"Dana","password":"a long enough password"}`), 404, "Invitation not found")
	servertest.WantError(t, tm.call("DELETE", "/admin/v1/workspaces/"+tm.ws+"/invitations/dana@example.com", tm.owner, ""), 404, "Invitation not found")
	if r := tm.call("GET", "/admin/v1/workspaces/"+tm.ws+"/invitations", tm.owner, ""); !strings.Contains(r.Body, "eli@") || strings.Contains(r.Body, "Dana") {
		t.Errorf("after revoking: %s", r.Body)
	}
	r = tm.call("GET", "/admin/v1/workspaces/"+tm.ws+"/audit?limit=1", tm.owner, "")
	if tm.want(r, 200); !strings.Contains(r.Body, `"action":"invitation.revoke"`) || !strings.Contains(r.Body, `"kind":"invitation"`) ||
		!strings.Contains(r.Body, `"name":"Dana@example.com"`) || !strings.Contains(r.Body, `"label":"owner@example.com"`) {
		t.Errorf("audit of the revocation: %s", r.Body)
	}
}

func TestTeamsAudit(t *testing.T) {
	tm := newTeams(t)
	m := tm.mustID(tm.call("POST", "/admin/v1/mocks?name=orders&project_id="+tm.project, tm.editor, `[{"secret":"body"}]`), 201)
	tm.want(tm.call("PUT", "/admin/v1/mocks/"+m+"/data", tm.editorKey, `[{"secret":"body2"}]`), 200)
	tm.want(tm.call("PATCH", "/admin/v1/mocks/"+m, tm.editor, `{"private":true}`), 200)
	tm.want(tm.call("POST", "/admin/v1/mocks/"+m+"/token", tm.editor, ""), 200)
	tm.want(tm.call("GET", "/admin/v1/mocks/"+m, tm.viewer, ""), 200) // a read: not logged
	tm.want(tm.call("DELETE", "/admin/v1/mocks/"+m, tm.editor, ""), 204)
	r := tm.call("GET", "/admin/v1/workspaces/"+tm.ws+"/audit?limit=6", tm.viewer, "")
	var page struct {
		Entries []struct {
			Action string      `json:"action"`
			Actor  decoy.Actor `json:"actor"`
			Target struct{ Kind, ID, Name string }
			IP     string `json:"ip"`
		} `json:"entries"`
		NextCursor *string `json:"next_cursor"`
	}
	tm.want(r, 200)
	if err := json.Unmarshal([]byte(r.Body), &page); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range page.Entries {
		got = append(got, e.Action+" "+e.Actor.Kind+" "+e.Target.Kind)
		if e.IP == "" {
			t.Errorf("%s: no ip", e.Action)
		}
	}
	want := []string{"mock.delete user mock", "mock.token user mock", "mock.settings user mock", "mock.data key mock", "mock.create user mock", "key.create user key"}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("audit\n got %v\nwant %v", got, want)
	}
	if page.NextCursor == nil {
		t.Error("no next cursor after a full page")
	}
	// A member given the role it holds is left as is, and not recorded;
	// nor is a PATCH that asks nothing.
	tm.want(tm.call("PATCH", "/admin/v1/workspaces/"+tm.ws, servertest.AdminToken, `{"limits":{}}`), 200)
	tm.want(tm.call("POST", "/admin/v1/workspaces/"+tm.ws+"/members", tm.owner, `{"email":"editor@example.com","role":"editor"}`), 201)
	tm.want(tm.call("PATCH", "/admin/v1/workspaces/"+tm.ws+"/members/"+tm.users["viewer"], tm.owner, `{"role":"viewer"}`), 200)
	tm.want(tm.call("PATCH", "/admin/v1/workspaces/"+tm.ws+"/members/"+tm.users["viewer"], tm.owner, `{"role":"editor"}`), 200)
	r = tm.call("GET", "/admin/v1/workspaces/"+tm.ws+"/audit?limit=2", tm.owner, "")
	tm.want(r, 200)
	page.Entries = nil
	if err := json.Unmarshal([]byte(r.Body), &page); err != nil {
		t.Fatal(err)
	}
	got = nil
	for _, e := range page.Entries {
		got = append(got, e.Action+" "+e.Target.ID)
	}
	if want := []string{"member.role " + tm.users["viewer"], "mock.delete " + m}; strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("audit after giving roles held\n got %v\nwant %v", got, want)
	}
	all := tm.call("GET", "/admin/v1/workspaces/"+tm.ws+"/audit?limit=1000", tm.owner, "").Body
	for _, secret := range []string{"body", tm.editorKey, tm.owner, "correct horse", "dcy_"} {
		if strings.Contains(all, secret) {
			t.Errorf("the audit log holds %q", secret)
		}
	}
	servertest.WantError(t, tm.call("GET", "/admin/v1/workspaces/"+tm.ws+"/audit?limit=0", tm.viewer, ""), 400, "limit must be an integer from 1 to 1000")
}

func TestTeamsSecretsNotLogged(t *testing.T) {
	tm := newTeams(t)
	tm.call("GET", "/admin/v1/me", "dcy_key_"+strings.Repeat("A", 43), "")
	tm.call("POST", "/admin/v1/auth/token", "", `{"email":"owner@example.com","password":"wrong password!"}`)
	inv := tm.want(tm.call("POST", "/admin/v1/workspaces/"+tm.ws+"/members", tm.owner, `{"email":"hal@example.com","role":"viewer"}`), 201)
	_, secret, _ := strings.Cut(inv["invitation_url"].(string), "/#/invite/")
	tm.want(tm.call("GET", "/admin/v1/invitations/"+secret, "", ""), 200)
	tm.want(tm.call("POST", "/admin/v1/invitations/"+secret+"/accept", "", `{"name":"Hal","password":"a long enough password"}`), 201)
	if !strings.Contains(tm.Logs.String(), "/admin/v1/invitations/REDACTED/accept") {
		t.Error("no access-log line of the accepted invitation")
	}
	logs := tm.Logs.String()
	for _, secret := range []string{secret, "a long enough password", tm.owner, tm.editor, tm.editorKey, tm.projectKey, "correct horse", "wrong password", strings.Repeat("A", 43)} {
		if strings.Contains(logs, secret) {
			t.Errorf("the log holds %q", secret)
		}
	}
}

func TestTeamsKeyLastUseFlushedAtClose(t *testing.T) {
	tm := newTeams(t)
	tm.want(tm.call("GET", "/admin/v1/me", tm.viewerKey, ""), 200)
	tm.Srv.Close()
	keys, err := tm.Store.ListKeys(context.Background(), tm.ws)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		if k.Name == "dash" && k.LastUsedAt == nil {
			t.Error("the viewer key's last use was not recorded")
		}
	}
}

// The store's QuotaCounter counts a workspace's reads under
// WorkspaceQuotaKey, exactly, as it counts a mock's.
func TestWorkspaceMonthlyReads(t *testing.T) {
	tm := newTeams(t)
	a, b := tm.mock(tm.project, `[1]`), tm.mock(tm.project2, `[2]`)
	other := tm.mock(tm.otherProject, `[3]`)
	tm.want(tm.call("PATCH", "/admin/v1/workspaces/"+tm.ws, servertest.AdminToken, `{"limits":{"monthly_reads":5}}`), 200)
	var wg sync.WaitGroup
	var mu sync.Mutex
	statuses := map[int]int{}
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id := a
			if i%2 == 1 {
				id = b
			}
			r := tm.Get("/mock/" + id)
			mu.Lock()
			statuses[r.Status]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	if statuses[200] != 5 || statuses[429] != 15 {
		t.Errorf("statuses %v, want 5 200s and 15 429s", statuses)
	}
	r := tm.Get("/mock/" + a)
	servertest.WantError(t, r, 429, "Monthly request quota exceeded")
	// Its quota headers are the workspace's, which refused it.
	if l, rem := r.Header.Get("X-Quota-Limit"), r.Header.Get("X-Quota-Remaining"); l != "5" || rem != "0" {
		t.Errorf("X-Quota-Limit %q, X-Quota-Remaining %q; want 5 and 0", l, rem)
	}
	// HEAD only looks, and other workspaces are not limited.
	if r := tm.Do("HEAD", "/mock/"+a); r.Status != 429 {
		t.Errorf("HEAD: %d", r.Status)
	}
	if r := tm.Get("/mock/" + other); r.Status != 200 {
		t.Errorf("other workspace: %d", r.Status)
	}
	// The per-mock counts gave back what the workspace refused.
	if r := tm.want(tm.call("GET", "/admin/v1/mocks/"+a+"/usage", servertest.AdminToken, ""), 200); r["month"].(map[string]any)["used"].(float64) > 5 {
		t.Errorf("mock usage %v", r)
	}
	// Lifting the limit takes effect here at once.
	tm.want(tm.call("PATCH", "/admin/v1/workspaces/"+tm.ws, servertest.AdminToken, `{"limits":{"monthly_reads":null}}`), 200)
	if r := tm.Get("/mock/" + a); r.Status != 200 {
		t.Errorf("after lifting: %d", r.Status)
	}
}

// The quota headers of a served read say what runs out first: the
// workspace's monthly_reads when fewer are left of it than of the mock's
// quota (a walkthrough saw 49,997 left on the read before the workspace's
// 429). A mock with no quota has no quota headers, as §1.6 says.
func TestWorkspaceMonthlyReadsHeaders(t *testing.T) {
	tm := newTeams(t)
	a := tm.mock(tm.project, `[1]`)
	tm.want(tm.call("PATCH", "/admin/v1/workspaces/"+tm.ws, servertest.AdminToken, `{"limits":{"monthly_reads":3}}`), 200)
	for i, want := range []string{"2", "1", "0"} {
		r := tm.Get("/mock/" + a)
		if l, rem := r.Header.Get("X-Quota-Limit"), r.Header.Get("X-Quota-Remaining"); r.Status != 200 || l != "3" || rem != want {
			t.Errorf("read %d: %d, X-Quota-Limit %q, X-Quota-Remaining %q; want 3 and %s", i+1, r.Status, l, rem, want)
		}
	}
	servertest.WantError(t, tm.Get("/mock/"+a), 429, "Monthly request quota exceeded")
	// A workspace limit looser than the mock's quota leaves the mock's.
	tm.want(tm.call("PATCH", "/admin/v1/workspaces/"+tm.ws, servertest.AdminToken, `{"limits":{"monthly_reads":1000000}}`), 200)
	if r := tm.Get("/mock/" + a); r.Header.Get("X-Quota-Limit") != "50000" || r.Header.Get("X-Quota-Remaining") != "49996" {
		t.Errorf("under a looser workspace limit: X-Quota-Limit %q, X-Quota-Remaining %q; want 50000 and 49996", r.Header.Get("X-Quota-Limit"), r.Header.Get("X-Quota-Remaining"))
	}
	tm.want(tm.call("PATCH", "/admin/v1/workspaces/"+tm.ws, servertest.AdminToken, `{"limits":{"monthly_reads":10}}`), 200)
	tm.want(tm.call("PATCH", "/admin/v1/mocks/"+a, servertest.AdminToken, `{"monthly_quota":0}`), 200)
	if r := tm.Get("/mock/" + a); r.Status != 200 || r.Header.Get("X-Quota-Limit") != "" || r.Header.Get("X-Quota-Remaining") != "" {
		t.Errorf("a mock with no quota: %d, X-Quota-Limit %q, X-Quota-Remaining %q; want none", r.Status, r.Header.Get("X-Quota-Limit"), r.Header.Get("X-Quota-Remaining"))
	}
}

func TestWorkspaceLimitsFromStore(t *testing.T) {
	tm := newTeams(t)
	// Each PATCH sets the limits it names and keeps the others.
	limits := func(body string) map[string]any {
		t.Helper()
		return tm.want(tm.call("PATCH", "/admin/v1/workspaces/"+tm.ws, servertest.AdminToken, body), 200)["limits"].(map[string]any)
	}
	if l := limits(`{"limits":{"max_bytes":1000000,"monthly_reads":9}}`); l["max_bytes"] != 1e6 || l["monthly_reads"] != 9.0 || l["max_mocks"] != nil {
		t.Errorf("limits %v", l)
	}
	if l := limits(`{"limits":{"max_mocks":1}}`); l["max_bytes"] != 1e6 || l["monthly_reads"] != 9.0 || l["max_mocks"] != 1.0 {
		t.Errorf("limits %v after setting max_mocks", l)
	}
	if l := limits(`{"limits":{"monthly_reads":null},"name":"acme"}`); l["max_bytes"] != 1e6 || l["monthly_reads"] != nil || l["max_mocks"] != 1.0 {
		t.Errorf("limits %v after clearing monthly_reads", l)
	}
	servertest.WantError(t, tm.call("PATCH", "/admin/v1/workspaces/"+tm.ws, servertest.AdminToken, `{"limits":{"max_reads":1}}`), 400,
		"limits may hold max_mocks, max_bytes, monthly_reads")
	tm.want(tm.call("POST", "/admin/v1/mocks?project_id="+tm.project, tm.editor, `[1]`), 201)
	servertest.WantError(t, tm.call("POST", "/admin/v1/mocks?project_id="+tm.project, tm.editor, `[1]`), 403, "Workspace limit reached: max_mocks")
}

func TestTeamsOpenWorkspaces(t *testing.T) {
	tm := newTeams(t, func(c *server.Config) { c.OpenWorkspaces = true })
	v := tm.want(tm.call("POST", "/admin/v1/workspaces", tm.viewer, `{"name":"mine"}`), 201)
	ws := v["id"].(string)
	ms := tm.want(tm.call("GET", "/admin/v1/workspaces/"+ws+"/members", tm.viewer, ""), 200)
	if m := ms["members"].([]any); len(m) != 1 || m[0].(map[string]any)["role"] != "owner" {
		t.Errorf("members %v", ms)
	}
	servertest.WantError(t, tm.call("POST", "/admin/v1/workspaces", tm.editorKey, `{"name":"k"}`), 403, "Forbidden: creating workspaces needs the server admin role")
}

func TestTeamsBadBodies(t *testing.T) {
	tm := newTeams(t)
	for _, tc := range []struct{ method, path, body, msg string }{
		{"POST", "/admin/v1/workspaces", `{"name":""}`, "name must be valid UTF-8 of 1 to 200 bytes"},
		{"POST", "/admin/v1/workspaces", `{"nom":"x"}`, `Unknown field \"nom\"; the body must be a JSON object with name`},
		{"POST", "/admin/v1/workspaces", `{"name":7}`, "name must be a string; the body must be a JSON object with name"},
		{"PATCH", "/admin/v1/workspaces/" + tm.ws, `{"limits":{"max_mocks":"x"}}`, "Each value of limits must be an integer; the body must be a JSON object with any of name and limits"},
		{"POST", "/admin/v1/workspaces", "{\n\"name\":\"x\",}", "Invalid JSON at line 2, column 12: unexpected '}', expected a string key; the body must be a JSON object with name"},
		{"POST", "/admin/v1/workspaces", `[]`, "The body must be a JSON object with name"},
		{"POST", "/admin/v1/users", `{"email":"x","name":"x","password":"long enough pass"}`, "email must be an email address"},
		{"POST", "/admin/v1/workspaces/" + tm.ws + "/members", `{"email":"a@b.c","role":"boss"}`, "role must be owner, editor, viewer"},
		{"PATCH", "/admin/v1/workspaces/" + tm.ws, `{"limits":{"max_mocks":-1}}`, "limits must be null (none) or integers of 0 or more"},
		{"DELETE", "/admin/v1/projects/" + tm.project2 + "?cascade=maybe", "", "cascade must be true or false"},
	} {
		servertest.WantError(t, tm.call(tc.method, tc.path, servertest.AdminToken, tc.body), 400, tc.msg)
	}
	tm.want(tm.call("GET", "/admin/v1/mocks?q="+strings.Repeat("q", 200), tm.viewer, ""), 200)
	servertest.WantError(t, tm.call("GET", "/admin/v1/mocks?q="+strings.Repeat("q", 201), tm.viewer, ""), 400, "q must be valid UTF-8 of at most 200 bytes")
	servertest.WantError(t, tm.call("DELETE", "/admin/v1/workspaces/"+decoy.DefaultWorkspaceID, servertest.AdminToken, ""), 409, "The default workspace cannot be deleted")
	servertest.WantError(t, tm.call("PUT", "/admin/v1/workspaces", servertest.AdminToken, ""), 405, "Method not allowed")
}

// TestOpenAPITeamsResponses validates live answers of the teams endpoints
// against the document.
func TestOpenAPITeamsResponses(t *testing.T) {
	router := servertest.OpenAPIRouter(t)
	tm := newTeams(t)
	m := tm.mock(tm.project, `[1]`)
	inv := tm.want(tm.call("POST", "/admin/v1/workspaces/"+tm.ws+"/members", tm.owner, `{"email":"eve@example.com","role":"viewer"}`), 201)
	_, secret, _ := strings.Cut(inv["invitation_url"].(string), "/#/invite/")
	keyID := tm.mustID(tm.call("POST", "/admin/v1/workspaces/"+tm.ws+"/keys", tm.owner, `{"name":"gone","role":"viewer"}`), 201)
	ws, p2, owner := tm.ws, tm.project2, tm.owner
	for _, tc := range []struct {
		method, path, token, body string
		status                    int
	}{
		{"POST", "/admin/v1/auth/token", "", `{"email":"owner@example.com","password":"correct horse battery"}`, 201},
		{"POST", "/admin/v1/auth/token", "", `{"email":"owner@example.com","password":"nope"}`, 401},
		{"GET", "/admin/v1/me", owner, "", 200},
		{"GET", "/admin/v1/me", tm.projectKey, "", 200},
		{"GET", "/admin/v1/invitations/" + secret, "", "", 200},
		{"GET", "/admin/v1/invitations/dcy_inv_x", "", "", 404},
		{"POST", "/admin/v1/invitations/" + secret + "/accept", "", `{"name":"Eve","password":"a long enough password"}`, 201},
		{"GET", "/admin/v1/users?limit=2", servertest.AdminToken, "", 200},
		{"POST", "/admin/v1/users", servertest.AdminToken, `{"email":"f@example.com","name":"F","password":"a long enough password"}`, 201},
		{"GET", "/admin/v1/users", owner, "", 403},
		{"GET", "/admin/v1/users/" + tm.users["viewer"], servertest.AdminToken, "", 200},
		{"PATCH", "/admin/v1/users/" + tm.users["viewer"], servertest.AdminToken, `{"name":"V"}`, 200},
		{"GET", "/admin/v1/workspaces", owner, "", 200},
		{"POST", "/admin/v1/workspaces", servertest.AdminToken, `{"name":"new"}`, 201},
		{"GET", "/admin/v1/workspaces/" + ws, owner, "", 200},
		{"PATCH", "/admin/v1/workspaces/" + ws, owner, `{"name":"acme2"}`, 200},
		{"PATCH", "/admin/v1/workspaces/" + ws, tm.viewer, `{"name":"acme2"}`, 403},
		{"GET", "/admin/v1/workspaces/" + tm.other, owner, "", 404},
		{"GET", "/admin/v1/workspaces/" + ws + "/members", owner, "", 200},
		{"POST", "/admin/v1/workspaces/" + ws + "/members", owner, `{"email":"viewer@example.com","role":"viewer"}`, 201},
		{"POST", "/admin/v1/workspaces/" + ws + "/members", owner, `{"email":"gus@example.com","role":"viewer"}`, 201},
		{"GET", "/admin/v1/workspaces/" + ws + "/invitations", tm.viewer, "", 200},
		{"DELETE", "/admin/v1/workspaces/" + ws + "/invitations/gus@example.com", tm.editor, "", 403},
		{"DELETE", "/admin/v1/workspaces/" + ws + "/invitations/gus@example.com", owner, "", 204},
		{"DELETE", "/admin/v1/workspaces/" + ws + "/invitations/gus@example.com", owner, "", 404},
		{"PATCH", "/admin/v1/workspaces/" + ws + "/members/" + tm.users["viewer"], owner, `{"role":"viewer"}`, 200},
		{"PATCH", "/admin/v1/workspaces/" + ws + "/members/" + tm.users["owner"], owner, `{"role":"viewer"}`, 409},
		{"GET", "/admin/v1/workspaces/" + ws + "/keys", owner, "", 200},
		{"POST", "/admin/v1/workspaces/" + ws + "/keys", owner, `{"name":"k","role":"editor","project_id":"` + tm.project + `","expires_at":"2100-01-01T00:00:00Z"}`, 201},
		{"DELETE", "/admin/v1/workspaces/" + ws + "/keys/" + keyID, owner, "", 204},
		{"GET", "/admin/v1/workspaces/" + ws + "/projects", owner, "", 200},
		{"POST", "/admin/v1/workspaces/" + ws + "/projects", owner, `{"name":"third"}`, 201},
		{"GET", "/admin/v1/workspaces/" + ws + "/audit?limit=3", owner, "", 200},
		{"GET", "/admin/v1/projects/" + p2, owner, "", 200},
		{"PATCH", "/admin/v1/projects/" + p2, owner, `{"name":"renamed"}`, 200},
		{"GET", "/admin/v1/mocks?workspace_id=" + ws + "&q=m", owner, "", 200},
		{"POST", "/admin/v1/mocks?project_id=" + p2, owner, `[1]`, 201},
		{"PATCH", "/admin/v1/mocks/" + m, tm.viewer, `{"name":"x"}`, 403},
		{"DELETE", "/admin/v1/projects/" + tm.project, owner, "", 409},
		{"DELETE", "/admin/v1/projects/" + p2 + "?cascade=true", owner, "", 204},
		{"DELETE", "/admin/v1/workspaces/" + tm.other, tm.out, "", 204},
		{"DELETE", "/admin/v1/users/" + tm.users["editor"], servertest.AdminToken, "", 204},
		{"DELETE", "/admin/v1/auth/token", owner, "", 204},
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

// lostUsers is a store that loses the UserID of the sessions it keeps.
type lostUsers struct{ decoy.SessionStore }

func (s lostUsers) FindSession(ctx context.Context, id string) (*decoy.Session, error) {
	sess, err := s.SessionStore.FindSession(ctx, id)
	if err == nil {
		sess.UserID = ""
	}
	return sess, err
}

// studioSignIn signs in to the Studio with an email and a password.
func (tm *teams) studioSignIn(email, password string) (cookie, csrf string, r servertest.Response) {
	tm.T.Helper()
	body, _ := json.Marshal(map[string]string{"email": email, "password": password})
	r = tm.StudioReq("POST", studio.SessionPath, "", string(body), "Content-Type", "application/json")
	for _, c := range (&http.Response{Header: r.Header}).Cookies() {
		if c.Name == studio.CookieName {
			cookie = c.Value
		}
	}
	var info struct {
		CSRF string `json:"csrf_token"`
	}
	json.Unmarshal([]byte(r.Body), &info)
	return cookie, info.CSRF, r
}

func TestStudioUserSignIn(t *testing.T) {
	tm := newTeams(t, func(c *server.Config) { c.Sessions = c.Store.(decoy.SessionStore) })
	cookie, csrf, r := tm.studioSignIn("viewer@example.com", "correct horse battery")
	if r.Status != 200 || cookie == "" || !strings.Contains(r.Body, `"user_id":"`+tm.users["viewer"]+`"`) {
		t.Fatalf("sign-in: %d %s", r.Status, r.Body)
	}
	// The session acts as the viewer: it sees its workspace, may not
	// change it, and does not see another.
	if r := tm.StudioReq("GET", "/admin/v1/workspaces/"+tm.ws, cookie, "", studio.CSRFHeader, csrf); r.Status != 200 {
		t.Errorf("GET workspace: %d %s", r.Status, r.Body)
	}
	servertest.WantError(t, tm.StudioReq("PATCH", "/admin/v1/workspaces/"+tm.ws, cookie, `{"name":"x"}`, studio.CSRFHeader, csrf, "Content-Type", "application/json"),
		403, "Forbidden: changing the workspace needs the owner role")
	servertest.WantError(t, tm.StudioReq("GET", "/admin/v1/workspaces/"+tm.other, cookie, "", studio.CSRFHeader, csrf), 404, "Workspace not found")
	if r := tm.StudioReq("GET", "/admin/v1/me", cookie, "", studio.CSRFHeader, csrf); !strings.Contains(r.Body, `"kind":"user"`) {
		t.Errorf("me: %s", r.Body)
	}
	// A wrong password is refused and counted; the admin token still signs
	// in the server admin.
	if _, _, r := tm.studioSignIn("viewer@example.com", "not the password"); r.Status != 401 {
		t.Errorf("wrong password: %d %s", r.Status, r.Body)
	}
	if c, _, r := tm.SignIn(servertest.AdminToken); r.Status != 200 || c == nil {
		t.Errorf("admin sign-in: %d %s", r.Status, r.Body)
	}
	// A deleted user's session ends, in the store too.
	tm.want(tm.call("DELETE", "/admin/v1/users/"+tm.users["viewer"], servertest.AdminToken, ""), 204)
	servertest.WantError(t, tm.StudioReq("GET", "/admin/v1/me", cookie, "", studio.CSRFHeader, csrf), 401, "Session expired or signed out; sign in again")
	id, _, _ := studio.ParseCookie(cookie)
	if _, err := tm.Store.FindSession(context.Background(), id); decoy.ErrorCode(err) != decoy.ENOTFOUND {
		t.Errorf("the deleted user's session is still stored: %v", err)
	}
}

// A request with the cookie of a session that ended is refused, and leaves
// the cookie alone: the browser may hold a newer one by the time the 401
// arrives (another tab signed in while this one's calls were under way),
// and clearing it signed that session out too (found by a browser test).
func TestStudioStaleCookieNotCleared(t *testing.T) {
	tm := newTeams(t, func(c *server.Config) { c.Sessions = c.Store.(decoy.SessionStore) })
	old, csrf, r := tm.studioSignIn("viewer@example.com", "correct horse battery")
	if r.Status != 200 {
		t.Fatalf("sign-in: %d %s", r.Status, r.Body)
	}
	// Signing in again from the same browser ends the session it had.
	body, _ := json.Marshal(map[string]string{"email": "owner@example.com", "password": "correct horse battery"})
	if r := tm.StudioReq("POST", studio.SessionPath, old, string(body), "Content-Type", "application/json"); r.Status != 200 {
		t.Fatalf("second sign-in: %d %s", r.Status, r.Body)
	}
	for _, c := range []struct{ method, path string }{{"GET", "/admin/v1/me"}, {"GET", studio.SessionPath}, {"DELETE", studio.SessionPath}} {
		r := tm.StudioReq(c.method, c.path, old, "", studio.CSRFHeader, csrf)
		if c.path != studio.SessionPath || c.method == "DELETE" {
			servertest.WantError(t, r, 401, "Session expired or signed out; sign in again")
		}
		if sc := r.Header.Values("Set-Cookie"); len(sc) > 0 {
			t.Errorf("%s %s with the ended session's cookie sets %q", c.method, c.path, sc)
		}
	}
}

// A user's Studio session outlives a restart, with the same admin token or
// another, and ends when the user's password changes.
func TestStudioUserSessionLifetime(t *testing.T) {
	tm := newTeams(t, func(c *server.Config) { c.Sessions = c.Store.(decoy.SessionStore) })
	cookie, csrf, r := tm.studioSignIn("viewer@example.com", "correct horse battery")
	if r.Status != 200 {
		t.Fatalf("sign-in: %d %s", r.Status, r.Body)
	}
	admin, adminCSRF, _ := tm.SignIn(servertest.AdminToken)
	for _, token := range []string{servertest.AdminToken, "another token"} {
		restarted := server.New(server.Config{
			Addr: "127.0.0.1:0", Store: tm.Store, Quota: tm.Store, Sessions: tm.Store, AdminTokenHash: secret.Hash(token),
		})
		if err := restarted.Open(); err != nil {
			t.Fatal(err)
		}
		restarted.Close()
		if r := tm.StudioReq("GET", "/admin/v1/me", cookie, "", studio.CSRFHeader, csrf); r.Status != 200 {
			t.Errorf("the user's session after a start with admin token %q: %d %s", token, r.Status, r.Body)
		}
	}
	// The server admin's session ended with its token.
	if r := tm.StudioReq("GET", "/admin/v1/mocks", admin.Value, "", studio.CSRFHeader, adminCSRF); r.Status != 401 {
		t.Errorf("the admin's session after a start with another token: %d %s", r.Status, r.Body)
	}
	// A new password signs the user out; signing in with it works.
	tm.want(tm.call("PATCH", "/admin/v1/users/"+tm.users["viewer"], servertest.AdminToken, `{"name":"Vera"}`), 200)
	if r := tm.StudioReq("GET", "/admin/v1/me", cookie, "", studio.CSRFHeader, csrf); r.Status != 200 {
		t.Errorf("after a change of name: %d %s", r.Status, r.Body)
	}
	tm.want(tm.call("PATCH", "/admin/v1/users/"+tm.users["viewer"], servertest.AdminToken, `{"password":"a new horse battery"}`), 200)
	servertest.WantError(t, tm.StudioReq("GET", "/admin/v1/me", cookie, "", studio.CSRFHeader, csrf), 401, "Session expired or signed out; sign in again")
	if _, _, r := tm.studioSignIn("viewer@example.com", "a new horse battery"); r.Status != 200 {
		t.Errorf("sign-in with the new password: %d %s", r.Status, r.Body)
	}
}

// A store that loses a session's user signs nobody in with it, least of
// all the server admin.
func TestStudioUserSessionLostUser(t *testing.T) {
	tm := newTeams(t, func(c *server.Config) { c.Sessions = lostUsers{c.Store.(decoy.SessionStore)} })
	cookie, csrf, r := tm.studioSignIn("viewer@example.com", "correct horse battery")
	if r.Status != 200 {
		t.Fatalf("sign-in: %d %s", r.Status, r.Body)
	}
	if r := tm.StudioReq("GET", "/admin/v1/users", cookie, "", studio.CSRFHeader, csrf); r.Status != 401 {
		t.Errorf("a session whose user the store lost: %d %s", r.Status, r.Body)
	}
}

// A revoked key is named in the audit log by its name, as people know it.
func TestTeamsAuditNamesRevokedKey(t *testing.T) {
	tm := newTeams(t)
	k := tm.mustID(tm.call("POST", "/admin/v1/workspaces/"+tm.ws+"/keys", tm.owner, `{"name":"deploy","role":"viewer"}`), 201)
	tm.want(tm.call("DELETE", "/admin/v1/workspaces/"+tm.ws+"/keys/"+k, tm.owner, ""), 204)
	r := tm.call("GET", "/admin/v1/workspaces/"+tm.ws+"/audit?limit=1", tm.owner, "")
	tm.want(r, 200)
	var page struct {
		Entries []struct {
			Action string
			Target decoy.AuditTarget
		}
	}
	if err := json.Unmarshal([]byte(r.Body), &page); err != nil {
		t.Fatal(err)
	}
	if len(page.Entries) != 1 || page.Entries[0].Action != "key.revoke" || page.Entries[0].Target != (decoy.AuditTarget{Kind: "key", ID: k, Name: "deploy"}) {
		t.Errorf("newest entry: %+v, want key.revoke of key %s named deploy", page.Entries, k)
	}
}

// GET /me tells every caller the server's own limits, as decoy serve was
// started: Studio checks a file's size against max_data_bytes before it
// sends it.
func TestMeServerLimits(t *testing.T) {
	tm := newTeams(t, func(c *server.Config) {
		c.MaxDataBytes = 12345
		c.DefaultRateLimit = 7
		c.DefaultMonthlyQuota = 0
	})
	for _, tok := range []string{servertest.AdminToken, tm.viewer, tm.viewerKey} {
		r := tm.call("GET", "/admin/v1/me", tok, "")
		tm.want(r, 200)
		var me struct {
			Limits map[string]int64 `json:"limits"`
		}
		if err := json.Unmarshal([]byte(r.Body), &me); err != nil {
			t.Fatal(err)
		}
		want := map[string]int64{"max_data_bytes": 12345, "default_rate_limit": 7, "default_monthly_quota": 0}
		if !maps.Equal(me.Limits, want) {
			t.Errorf("limits = %v, want %v", me.Limits, want)
		}
	}
}

// An invitation sent before its email had an account never signs anyone
// in as the account made since: accepting it is refused, and only that
// account's own password opens it.
func TestTeamsInvitationNeverActsAsAnAccount(t *testing.T) {
	tm := newTeams(t)
	v := tm.want(tm.call("POST", "/admin/v1/workspaces/"+tm.ws+"/members", tm.owner, `{"email":"Victim@example.com","role":"viewer"}`), 201)
	link, _ := v["invitation_url"].(string)
	_, secret, ok := strings.Cut(link, "/#/invite/")
	if !ok {
		t.Fatalf("invitation_url %q", link)
	}
	victim := tm.mustID(tm.call("POST", "/admin/v1/users", servertest.AdminToken,
		`{"email":"victim@example.com","name":"Victim","password":"the victim's own password"}`), 201)
	tm.want(tm.call("PATCH", "/admin/v1/users/"+victim, servertest.AdminToken, `{"server_admin":true}`), 200)

	servertest.WantError(t, tm.call("POST", "/admin/v1/invitations/"+secret+"/accept", "", `{"name":"Mallory","password":"the attacker's password"}`),
		409, "Victim@example.com has an account already: sign in with it, and ask an owner of the workspace to add it as a member")
	servertest.WantError(t, tm.call("POST", "/admin/v1/auth/token", "", `{"email":"victim@example.com","password":"the attacker's password"}`),
		401, "Invalid email or password")
	tm.login("victim@example.com", "the victim's own password")
}

// The audit log writes every entry in §6.4's shape: the actor with its
// kind, id and label, the target with its kind, id and name, even when
// they are empty (the server admin has neither id nor label).
func TestTeamsAuditShape(t *testing.T) {
	tm := newTeams(t)
	tm.want(tm.call("PATCH", "/admin/v1/workspaces/"+tm.ws, servertest.AdminToken, `{"name":"acme2"}`), 200)
	r := tm.call("GET", "/admin/v1/workspaces/"+tm.ws+"/audit?limit=1", tm.owner, "")
	tm.want(r, 200)
	var page struct {
		Entries []map[string]json.RawMessage `json:"entries"`
	}
	if err := json.Unmarshal([]byte(r.Body), &page); err != nil || len(page.Entries) != 1 {
		t.Fatalf("%s: %v", r.Body, err)
	}
	e := page.Entries[0]
	for _, k := range []string{"at", "actor", "action", "target", "ip"} {
		if _, ok := e[k]; !ok {
			t.Errorf("no %q in %s", k, r.Body)
		}
	}
	if got := string(e["actor"]); got != `{"kind":"server_admin","id":"","label":""}` {
		t.Errorf("actor = %s", got)
	}
	var target map[string]string
	if err := json.Unmarshal(e["target"], &target); err != nil || len(target) != 3 || target["kind"] != "workspace" || target["id"] != tm.ws {
		t.Errorf("target = %s (%v)", e["target"], err)
	}
}
