package main_test

// Teams (§6) on the real binary: the role every admin endpoint needs, for
// every kind of caller; no tenant reaching another's data; secrets kept out
// of logs and the audit log; the CLI of teams.

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

const password = "correct horse battery"

// template is a small template for the generated-data routes.
const template = `{"$repeat":2,"$item":{"n":"{{ index }}"}}`

// org is a server with one workspace's people and keys, and an outsider
// who owns another workspace.
type org struct {
	t                     *testing.T
	p                     *proc
	ws, project, project2 string
	other, otherProject   string
	mock, mock2           string // in project and project2
	otherMock             string
	tokens                map[string]string // by kind of caller
	users                 map[string]string // user ids by name
	seq                   atomic.Int64
}

// Kinds of callers, in the order of the matrix's columns.
var callerKinds = []string{"admin", "owner", "editor", "viewer", "editor key", "viewer key", "project key", "outsider", "expired key", "revoked key", "none"}

// api sends a JSON request with a bearer token ("" for none).
func api(t *testing.T, p *proc, method, path, token, body string) answer {
	t.Helper()
	h := []string{"Content-Type", "application/json"}
	if token != "" {
		h = append(h, "Authorization", "Bearer "+token)
	}
	return send(t, method, p.url+"/admin/v1/"+path, body, h...)
}

// field decodes an answer and returns one of its string fields.
func field(t *testing.T, a answer, status int, name string) string {
	t.Helper()
	if a.status != status {
		t.Fatalf("status %d, want %d: %s", a.status, status, a.body)
	}
	var v map[string]any
	if err := json.Unmarshal([]byte(a.body), &v); err != nil {
		t.Fatalf("%s: %v", a.body, err)
	}
	s, _ := v[name].(string)
	return s
}

func (o *org) admin(method, path, body string, status int, name string) string {
	o.t.Helper()
	return field(o.t, api(o.t, o.p, method, path, adminToken, body), status, name)
}

// unique returns a new name.
func (o *org) unique(prefix string) string {
	return fmt.Sprintf("%s%d", prefix, o.seq.Add(1))
}

// user creates a user, makes it a member of ws with role, and signs it in.
func (o *org) user(name, ws, role string) (id, token string) {
	o.t.Helper()
	email := name + "@example.com"
	id = o.admin("POST", "users", `{"email":"`+email+`","name":"`+name+`","password":"`+password+`"}`, 201, "id")
	o.admin("POST", "workspaces/"+ws+"/members", `{"email":"`+email+`","role":"`+role+`"}`, 201, "user_id")
	token = field(o.t, api(o.t, o.p, "POST", "auth/token", "", `{"email":"`+email+`","password":"`+password+`"}`), 201, "token")
	return id, token
}

func (o *org) key(body string) (id, secret string) {
	o.t.Helper()
	a := api(o.t, o.p, "POST", "workspaces/"+o.ws+"/keys", adminToken, body)
	return field(o.t, a, 201, "id"), field(o.t, a, 201, "secret")
}

func (o *org) newMock(project, query, data string) string {
	o.t.Helper()
	return field(o.t, send(o.t, "POST", o.p.url+"/admin/v1/mocks?project_id="+project+query, data,
		"Authorization", "Bearer "+adminToken, "Content-Type", "application/json"), 201, "id")
}

// route adds a route with a path of its own to project, on mock.
func (o *org) route(project, mock string) string {
	o.t.Helper()
	return o.admin("POST", "projects/"+project+"/routes", `{"method":"GET","path":"/`+o.unique("r")+`","mock_id":"`+mock+`"}`, 201, "id")
}

func (o *org) defaultProject(ws string) string {
	o.t.Helper()
	a := api(o.t, o.p, "GET", "workspaces/"+ws+"/projects", adminToken, "")
	var v struct{ Projects []struct{ ID, Name string } }
	json.Unmarshal([]byte(a.body), &v)
	for _, p := range v.Projects {
		if p.Name == "default" {
			return p.ID
		}
	}
	o.t.Fatalf("no default project: %s", a.body)
	return ""
}

func newOrg(t *testing.T, p *proc) *org {
	t.Helper()
	o := &org{t: t, p: p, tokens: map[string]string{"admin": adminToken, "none": ""}, users: map[string]string{}}
	o.ws = o.admin("POST", "workspaces", `{"name":"acme"}`, 201, "id")
	o.other = o.admin("POST", "workspaces", `{"name":"globex"}`, 201, "id")
	o.project = o.defaultProject(o.ws)
	o.project2 = o.admin("POST", "workspaces/"+o.ws+"/projects", `{"name":"second"}`, 201, "id")
	o.otherProject = o.defaultProject(o.other)
	for _, u := range []struct{ name, ws, role string }{
		{"owner", o.ws, "owner"}, {"editor", o.ws, "editor"}, {"viewer", o.ws, "viewer"}, {"outsider", o.other, "owner"},
	} {
		o.users[u.name], o.tokens[u.name] = o.user(u.name, u.ws, u.role)
	}
	_, o.tokens["editor key"] = o.key(`{"name":"ci","role":"editor"}`)
	_, o.tokens["viewer key"] = o.key(`{"name":"dash","role":"viewer"}`)
	_, o.tokens["project key"] = o.key(`{"name":"proj","role":"editor","project_id":"` + o.project + `"}`)
	revoked, secret := o.key(`{"name":"gone","role":"editor"}`)
	api(t, p, "DELETE", "workspaces/"+o.ws+"/keys/"+revoked, adminToken, "")
	o.tokens["revoked key"] = secret
	expires := time.Now().Add(1500 * time.Millisecond).UTC().Format(time.RFC3339Nano)
	_, o.tokens["expired key"] = o.key(`{"name":"short","role":"editor","expires_at":"` + expires + `"}`)
	o.mock = o.newMock(o.project, "&private=true", `[{"secret":"acme-data"}]`)
	o.mock2 = o.newMock(o.project2, "", `[{"secret":"acme-data-2"}]`)
	o.otherMock = o.newMock(o.otherProject, "", `[{"secret":"globex-data"}]`)
	time.Sleep(time.Until(time.Now().Add(1600 * time.Millisecond))) // until the short key expired
	return o
}

// TestAccessMatrix checks, on the real binary, the status of every admin
// endpoint for every kind of caller, on each store.
func TestAccessMatrix(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) {
		accessMatrix(t, start(t, t.TempDir(), "--admin-token", adminToken, "--auth-failure-limit", "0"))
	})
	t.Run("postgres", func(t *testing.T) {
		accessMatrix(t, start(t, t.TempDir(), "--admin-token", adminToken, "--auth-failure-limit", "0", "--database-url", postgresURL(t)))
	})
}

func accessMatrix(t *testing.T, p *proc) {
	o := newOrg(t, p)
	// A row's path and body may hold {fresh:…}, made anew for each
	// caller: a mock, a project, a workspace the people are members
	// of, a member, a key, a user, an invitation's secret, a name, a
	// route, a personal access token of the viewer's.
	fresh := func(kind string) string {
		switch kind {
		case "mock":
			return o.newMock(o.project, "", `[1]`)
		case "templated":
			m := o.newMock(o.project, "", `[1]`)
			o.admin("PUT", "mocks/"+m+"/template?mode=once", template, 200, "id")
			return m
		case "project":
			return o.admin("POST", "workspaces/"+o.ws+"/projects", `{"name":"`+o.unique("p")+`"}`, 201, "id")
		case "workspace":
			ws := o.admin("POST", "workspaces", `{"name":"`+o.unique("w")+`"}`, 201, "id")
			for _, u := range []string{"owner", "editor", "viewer"} {
				o.admin("POST", "workspaces/"+ws+"/members", `{"email":"`+u+`@example.com","role":"`+u+`"}`, 201, "user_id")
			}
			return ws
		case "member":
			id, _ := o.user(o.unique("m"), o.ws, "viewer")
			return id
		case "key":
			id, _ := o.key(`{"name":"` + o.unique("k") + `","role":"viewer"}`)
			return id
		case "user":
			return o.admin("POST", "users", `{"email":"`+o.unique("u")+`@example.com","name":"u","password":"`+password+`"}`, 201, "id")
		case "invitation":
			url := o.admin("POST", "workspaces/"+o.ws+"/members", `{"email":"`+o.unique("i")+`@example.com","role":"viewer"}`, 201, "invitation_url")
			_, secret, _ := strings.Cut(url, "/#/invite/")
			return secret
		case "invitee":
			email := o.unique("i") + "@example.com"
			o.admin("POST", "workspaces/"+o.ws+"/members", `{"email":"`+email+`","role":"viewer"}`, 201, "invitation_url")
			return email
		case "name":
			return o.unique("n")
		case "route":
			return o.route(o.project, o.mock)
		case "token":
			// A personal access token of the viewer's.
			return field(t, api(t, p, "POST", "auth/token", "", `{"email":"viewer@example.com","password":"`+password+`","name":"`+o.unique("t")+`"}`), 201, "id")
		}
		t.Fatalf("fresh %s", kind)
		return ""
	}
	expand := func(s string) string {
		for {
			i := strings.Index(s, "{fresh:")
			if i < 0 {
				return s
			}
			j := strings.Index(s[i:], "}")
			s = s[:i] + fresh(s[i+7:i+j]) + s[i+j+1:]
		}
	}
	const u401 = 401
	type row struct {
		method, path, body string
		// admin, owner, editor, viewer, editor key, viewer key, project
		// key, outsider; the expired key, the revoked key and no token
		// get 401 unless public.
		want   [8]int
		public bool
	}
	ws, p1, p2, m, m2 := o.ws, o.project, o.project2, o.mock, o.mock2
	r1, r2 := o.route(p1, m), o.route(p2, m2)
	all := func(s int) [8]int { return [8]int{s, s, s, s, s, s, s, s} }
	viewers := [8]int{200, 200, 200, 200, 200, 200, 200, 404}
	wsViewers := [8]int{200, 200, 200, 200, 200, 200, 404, 404}
	editors := func(s int) [8]int { return [8]int{s, s, s, 403, s, 403, s, 404} }
	wsEditors := func(s int) [8]int { return [8]int{s, s, s, 403, s, 403, 404, 404} }
	owners := func(s int) [8]int { return [8]int{s, s, 403, 403, 403, 403, 404, 404} }
	admins := func(s int) [8]int { return [8]int{s, 403, 403, 403, 403, 403, 403, 403} }
	rows := []row{
		{"POST", "auth/token", `{"email":"viewer@example.com","password":"` + password + `"}`, all(201), true},
		{"GET", "invitations/{fresh:invitation}", "", all(200), true},
		{"POST", "invitations/{fresh:invitation}/accept", `{"name":"N","password":"` + password + `"}`, all(201), true},
		{"GET", "me", "", all(200), false},
		{"GET", "users", "", admins(200), false},
		{"POST", "users", `{"email":"{fresh:name}@example.com","name":"n","password":"` + password + `"}`, admins(201), false},
		{"GET", "users/" + o.users["viewer"], "", admins(200), false},
		{"PATCH", "users/" + o.users["viewer"], `{"name":"viewer"}`, admins(200), false},
		{"DELETE", "users/{fresh:user}", "", admins(204), false},
		{"GET", "workspaces", "", all(200), false},
		{"POST", "workspaces", `{"name":"{fresh:name}"}`, admins(201), false},
		{"GET", "workspaces/" + ws, "", viewers, false},
		{"PATCH", "workspaces/" + ws, `{"name":"acme"}`, owners(200), false},
		{"PATCH", "workspaces/" + ws, `{"limits":{}}`, [8]int{200, 403, 403, 403, 403, 403, 404, 404}, false},
		{"DELETE", "workspaces/{fresh:workspace}", "", [8]int{204, 204, 403, 403, 404, 404, 404, 404}, false},
		{"GET", "workspaces/" + ws + "/members", "", wsViewers, false},
		{"POST", "workspaces/" + ws + "/members", `{"email":"{fresh:name}@example.com","role":"viewer"}`, owners(201), false},
		{"PATCH", "workspaces/" + ws + "/members/{fresh:member}", `{"role":"editor"}`, owners(200), false},
		{"DELETE", "workspaces/" + ws + "/members/{fresh:member}", "", owners(204), false},
		{"GET", "workspaces/" + ws + "/invitations", "", wsViewers, false},
		{"DELETE", "workspaces/" + ws + "/invitations/{fresh:invitee}", "", owners(204), false},
		{"GET", "workspaces/" + ws + "/keys", "", owners(200), false},
		{"POST", "workspaces/" + ws + "/keys", `{"name":"k","role":"viewer"}`, owners(201), false},
		{"DELETE", "workspaces/" + ws + "/keys/{fresh:key}", "", owners(204), false},
		{"GET", "workspaces/" + ws + "/projects", "", viewers, false},
		{"POST", "workspaces/" + ws + "/projects", `{"name":"{fresh:name}"}`, wsEditors(201), false},
		{"GET", "workspaces/" + ws + "/audit", "", wsViewers, false},
		{"GET", "projects/" + p1, "", viewers, false},
		{"GET", "projects/" + p2, "", wsViewers, false},
		{"PATCH", "projects/" + p2, `{"name":"second"}`, wsEditors(200), false},
		{"DELETE", "projects/{fresh:project}", "", wsEditors(204), false},
		{"POST", "projects/" + p1 + "/import?format=json-server", `{"imported":[1]}`, editors(201), false},
		{"POST", "projects/" + p2 + "/import?format=json-server&dry_run=true", `{"imported":[1]}`, wsEditors(200), false},
		{"GET", "projects/" + p1 + "/export", "", editors(200), false},
		{"GET", "projects/" + p2 + "/export", "", wsEditors(200), false},
		{"PATCH", "projects/" + p2, `{"slug":"{fresh:name}"}`, wsEditors(200), false},
		{"PATCH", "projects/" + p2, `{"upstream":"https://api.example.com","mode":"passthrough"}`, wsEditors(200), false},
		{"PATCH", "projects/" + p2, `{"mode":"mock"}`, wsEditors(200), false},
		{"GET", "projects/" + p1 + "/routes", "", viewers, false},
		{"GET", "projects/" + p2 + "/routes", "", wsViewers, false},
		{"POST", "projects/" + p1 + "/routes", `{"method":"GET","path":"/{fresh:name}","mock_id":"` + m + `"}`, editors(201), false},
		{"POST", "projects/" + p2 + "/routes", `{"method":"GET","path":"/{fresh:name}","mock_id":"` + m2 + `"}`, wsEditors(201), false},
		{"GET", "routes/" + r1, "", viewers, false},
		{"GET", "routes/" + r2, "", wsViewers, false},
		{"PATCH", "routes/" + r1, `{"path":"/{fresh:name}"}`, editors(200), false},
		{"PATCH", "routes/" + r2, `{"path":"/{fresh:name}"}`, wsEditors(200), false},
		{"DELETE", "routes/{fresh:route}", "", editors(204), false},
		{"GET", "projects/" + p1 + "/requests", "", viewers, false},
		{"GET", "projects/" + p2 + "/requests?status=200", "", wsViewers, false},
		{"GET", "projects/" + p1 + "/requests/count", "", viewers, false},
		{"GET", "projects/" + p2 + "/requests/count", "", wsViewers, false},
		{"DELETE", "projects/" + p1 + "/requests", "", editors(204), false},
		{"DELETE", "projects/" + p2 + "/requests", "", wsEditors(204), false},
		{"GET", "mocks", "", all(200), false},
		{"POST", "mocks?project_id=" + p1, `[1]`, editors(201), false},
		{"GET", "mocks/" + m, "", viewers, false},
		{"GET", "mocks/" + m2, "", wsViewers, false},
		{"PATCH", "mocks/" + m, `{"delay_ms":0}`, editors(200), false},
		{"DELETE", "mocks/{fresh:mock}", "", editors(204), false},
		{"GET", "mocks/" + m + "/data", "", viewers, false},
		{"PUT", "mocks/" + m + "/data", `[{"secret":"acme-data"}]`, editors(200), false},
		{"POST", "mocks/" + m + "/token", "", editors(200), false},
		{"GET", "mocks/" + m + "/usage", "", viewers, false},
		{"GET", "mocks/" + m + "/usage/history", "", viewers, false},
		{"GET", "mocks/" + m + "/versions", "", viewers, false},
		{"GET", "mocks/" + m + "/versions/1/data", "", viewers, false},
		{"POST", "mocks/" + m + "/versions/1/restore", "", editors(200), false},
		{"PUT", "mocks/" + m + "/template?mode=once", template, editors(200), false},
		{"GET", "mocks/" + m + "/template", "", viewers, false},
		{"POST", "mocks/" + m + "/regenerate", "", editors(200), false},
		{"DELETE", "mocks/{fresh:templated}/template", "", editors(204), false},
		// A preview names no resource: it needs the editor role in some
		// workspace (the outsider owns one).
		{"POST", "generate", template, [8]int{200, 200, 200, 403, 200, 403, 200, 200}, false},
		{"GET", "generate/functions", "", all(200), false},
		// Personal access tokens: a user's own (the admin token and keys
		// own none), any user's for server admins.
		{"GET", "me/tokens", "", [8]int{403, 200, 200, 200, 403, 403, 403, 200}, false},
		{"DELETE", "me/tokens/00000000-0000-4000-8000-000000000099", "", [8]int{403, 404, 404, 404, 403, 403, 403, 404}, false},
		{"GET", "users/" + o.users["viewer"] + "/tokens", "", admins(200), false},
		{"DELETE", "users/" + o.users["viewer"] + "/tokens/{fresh:token}", "", admins(204), false},
		// Last: it signs the people out.
		{"DELETE", "auth/token", "", [8]int{400, 204, 204, 204, 400, 400, 400, 204}, false},
	}
	// The journal's live feed does not end: its status alone.
	for _, r := range []struct {
		path string
		want [8]int
	}{{"projects/" + p1 + "/requests/stream", viewers}, {"projects/" + p2 + "/requests/stream", wsViewers}} {
		for i, kind := range callerKinds {
			want := u401
			if i < 8 {
				want = r.want[i]
			}
			if got := streamStatus(t, p, r.path, o.tokens[kind]); got != want {
				t.Errorf("GET %s as %s: %d, want %d", r.path, kind, got, want)
			}
		}
	}
	for _, r := range rows {
		for i, kind := range callerKinds {
			want := u401
			if i < 8 {
				want = r.want[i]
			}
			if r.public {
				want = r.want[0]
			}
			path, body := expand(r.path), expand(r.body)
			a := api(t, p, r.method, path, o.tokens[kind], body)
			if a.status != want {
				t.Errorf("%s %s as %s: %d, want %d: %s", r.method, r.path, kind, a.status, want, a.body)
			}
			if a.status == 403 && !strings.HasPrefix(a.body, `{"error":"Forbidden: `) {
				t.Errorf("%s %s as %s: 403 %s", r.method, r.path, kind, a.body)
			}
		}
	}
}

// TestNoTenantCrossing checks that a member of another workspace, and a
// key limited to another project, reach none of a workspace's data
// through any route.
func TestNoTenantCrossing(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) {
		noTenantCrossing(t, start(t, t.TempDir(), "--admin-token", adminToken, "--auth-failure-limit", "0"))
	})
	t.Run("postgres", func(t *testing.T) {
		noTenantCrossing(t, start(t, t.TempDir(), "--admin-token", adminToken, "--auth-failure-limit", "0", "--database-url", postgresURL(t)))
	})
}

func noTenantCrossing(t *testing.T, p *proc) {
	o := newOrg(t, p)
	api(t, p, "GET", "mocks/"+o.mock+"/data", o.tokens["owner"], "") // something in the audit log
	for _, c := range []struct {
		caller string
		// the mock and the workspace it must not reach, and the
		// secret in that mock's data
		mock, ws, secret string
	}{
		{"outsider", o.mock, o.ws, "acme-data"},
		{"outsider", o.mock2, o.ws, "acme-data-2"},
		{"viewer", o.otherMock, o.other, "globex-data"},
		{"editor key", o.otherMock, o.other, "globex-data"},
		{"project key", o.mock2, o.ws, "acme-data-2"},
	} {
		tok := o.tokens[c.caller]
		for _, path := range []string{
			"mocks/" + c.mock, "mocks/" + c.mock + "/data", "mocks/" + c.mock + "/usage", "mocks/" + c.mock + "/usage/history",
			"mocks/" + c.mock + "/versions", "mocks/" + c.mock + "/versions/1/data", "mocks/" + c.mock + "/template",
		} {
			if a := api(t, p, "GET", path, tok, ""); a.status != 404 || strings.Contains(a.body, c.secret) {
				t.Errorf("%s GET %s: %d %s", c.caller, path, a.status, a.body)
			}
		}
		for _, path := range []string{
			"mocks", "mocks?workspace_id=" + c.ws, "mocks?q=" + c.mock[:8], "mocks?project_id=" + o.project2, "workspaces", "me",
		} {
			// A listing narrowed to what the caller cannot see is a 404.
			a := api(t, p, "GET", path, tok, "")
			if (a.status != 200 && a.status != 404) || strings.Contains(a.body, c.mock) {
				t.Errorf("%s GET %s shows %s: %d %s", c.caller, path, c.mock, a.status, a.body)
			}
		}
		if c.caller != "project key" {
			for _, path := range []string{"workspaces/" + c.ws + "/audit", "workspaces/" + c.ws + "/members", "workspaces/" + c.ws} {
				if a := api(t, p, "GET", path, tok, ""); a.status != 404 {
					t.Errorf("%s GET %s: %d %s", c.caller, path, a.status, a.body)
				}
			}
		}
		// Nor its project's export, nor an import into it.
		project := field(t, api(t, p, "GET", "mocks/"+c.mock, adminToken, ""), 200, "project_id")
		if a := api(t, p, "GET", "projects/"+project+"/export", tok, ""); a.status != 404 {
			t.Errorf("%s GET the export of %s: %d", c.caller, project, a.status)
		}
		if a := api(t, p, "POST", "projects/"+project+"/import?format=json-server", tok, `{"x":[1]}`); a.status != 404 {
			t.Errorf("%s POST an import into %s: %d %s", c.caller, project, a.status, a.body)
		}
		for _, w := range []struct{ method, path, body string }{
			{"PUT", "mocks/" + c.mock + "/data", `[]`}, {"PATCH", "mocks/" + c.mock, `{"name":"x"}`},
			{"DELETE", "mocks/" + c.mock, ""}, {"POST", "mocks/" + c.mock + "/token", ""},
			{"POST", "mocks/" + c.mock + "/versions/1/restore", ""}, {"PUT", "mocks/" + c.mock + "/template", template},
			{"POST", "mocks/" + c.mock + "/regenerate", ""},
		} {
			if a := api(t, p, w.method, w.path, tok, w.body); a.status != 404 {
				t.Errorf("%s %s %s: %d %s", c.caller, w.method, w.path, a.status, a.body)
			}
		}
	}
	// Routes (§11): another workspace's routes are not found, and no route
	// reaches a mock of another project.
	acmeRoute := o.route(o.project2, o.mock2)
	for _, w := range []struct{ method, path, body string }{
		{"GET", "routes/" + acmeRoute, ""}, {"PATCH", "routes/" + acmeRoute, `{"path":"/x"}`}, {"DELETE", "routes/" + acmeRoute, ""},
		{"GET", "projects/" + o.project2 + "/routes", ""}, {"POST", "projects/" + o.project2 + "/routes", `{"method":"GET","path":"/x","mock_id":"` + o.mock2 + `"}`},
		{"PATCH", "projects/" + o.project2, `{"slug":"taken-over"}`},
		{"GET", "projects/" + o.project2 + "/requests", ""}, {"GET", "projects/" + o.project2 + "/requests/count", ""},
		{"DELETE", "projects/" + o.project2 + "/requests", ""},
	} {
		for _, caller := range []string{"outsider", "project key"} {
			if a := api(t, p, w.method, w.path, o.tokens[caller], w.body); a.status != 404 || strings.Contains(a.body, "acme-data") {
				t.Errorf("%s %s %s: %d %s", caller, w.method, w.path, a.status, a.body)
			}
		}
	}
	// Nor the requests another workspace's project answered (§13.2): the
	// journal of project2 holds a read of mock2, which they do not see.
	if a := get(t, p.url+"/mock/"+o.mock2); a.status != 200 {
		t.Fatalf("read of mock2: %d", a.status)
	}
	for _, caller := range []string{"outsider", "project key"} {
		if got := streamStatus(t, p, "projects/"+o.project2+"/requests/stream", o.tokens[caller]); got != 404 {
			t.Errorf("%s GET the journal's feed of project2: %d", caller, got)
		}
	}
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		a := api(t, p, "GET", "projects/"+o.project2+"/requests", o.tokens["editor key"], "")
		if a.status == 200 && strings.Contains(a.body, o.mock2) {
			break
		}
		if time.Now().After(deadline) {
			t.Errorf("the workspace's own key reads the journal of project2: %d %s", a.status, a.body)
			break
		}
	}
	otherSlug := field(t, api(t, p, "GET", "projects/"+o.otherProject, adminToken, ""), 200, "slug")
	outsider := o.tokens["outsider"]
	a := api(t, p, "POST", "projects/"+o.otherProject+"/routes", outsider, `{"method":"GET","path":"/steal","mock_id":"`+o.mock2+`"}`)
	if a.status != 400 || !strings.Contains(a.body, "Mock is not in this project") {
		t.Errorf("a route on another workspace's mock: %d %s", a.status, a.body)
	}
	own := field(t, api(t, p, "POST", "projects/"+o.otherProject+"/routes", outsider, `{"method":"GET","path":"/mine","mock_id":"`+o.otherMock+`"}`), 201, "id")
	if a := api(t, p, "PATCH", "routes/"+own, outsider, `{"mock_id":"`+o.mock2+`"}`); a.status != 400 {
		t.Errorf("a route moved onto another workspace's mock: %d %s", a.status, a.body)
	}
	for _, path := range []string{"/p/" + otherSlug + "/steal", "/p/" + otherSlug + "/mine/../steal"} {
		if a := get(t, p.url+path); a.status != 404 || strings.Contains(a.body, "acme-data") {
			t.Errorf("GET %s: %d %s", path, a.status, a.body)
		}
	}
	if a := get(t, p.url+"/p/"+otherSlug+"/mine"); a.status != 200 || !strings.Contains(a.body, "globex-data") {
		t.Errorf("the outsider's own route: %d %s", a.status, a.body)
	}

	// The public read endpoint is unchanged: a private mock needs its token.
	if a := get(t, p.url+"/mock/"+o.mock); a.status != 401 {
		t.Errorf("private mock read without token: %d", a.status)
	}
}

// TestTeamSecretsStaySecret checks that passwords, personal tokens and
// keys appear in neither the log nor the audit log.
func TestTeamSecretsStaySecret(t *testing.T) {
	p := start(t, t.TempDir(), "--admin-token", adminToken, "--log-level", "debug")
	o := newOrg(t, p)
	api(t, p, "POST", "auth/token", "", `{"email":"owner@example.com","password":"a wrong password"}`)
	api(t, p, "GET", "me", "dcy_key_"+strings.Repeat("Z", 43), "")
	api(t, p, "PATCH", "users/"+o.users["viewer"], adminToken, `{"password":"another long password"}`)
	link := field(t, api(t, p, "POST", "workspaces/"+o.ws+"/members", o.tokens["owner"], `{"email":"ivy@example.com","role":"viewer"}`), 201, "invitation_url")
	_, invitation, _ := strings.Cut(link, "/#/invite/")
	api(t, p, "GET", "invitations/"+invitation, "", "")
	accepted := field(t, api(t, p, "POST", "invitations/"+invitation+"/accept", "", `{"name":"Ivy","password":"ivy's long password"}`), 201, "token")
	audit := api(t, p, "GET", "workspaces/"+o.ws+"/audit?limit=1000", o.tokens["owner"], "").body
	if !strings.Contains(audit, "key.create") || !strings.Contains(audit, "mock.create") {
		t.Errorf("audit log misses changes: %s", audit)
	}
	p.stop()
	logs := p.stdout.String() + p.stderr.String()
	secrets := []string{password, "a wrong password", "another long password", strings.Repeat("Z", 43), "acme-data",
		invitation, "ivy's long password", accepted}
	for _, kind := range callerKinds[1:] {
		if s := o.tokens[kind]; s != "" {
			secrets = append(secrets, s)
		}
	}
	for _, s := range secrets {
		if strings.Contains(logs, s) {
			t.Errorf("the log holds %q", s)
		}
		if strings.Contains(audit, s) {
			t.Errorf("the audit log holds %q", s)
		}
	}
}

// TestTeamsCLI signs in with decoy login, manages a workspace through the
// CLI, and signs out.
func TestTeamsCLI(t *testing.T) {
	p := start(t, t.TempDir(), "--admin-token", adminToken)
	config := t.TempDir()
	cli := func(stdin string, args ...string) (string, string, int) {
		t.Helper()
		return decoyCLIEnv(t, []string{"DECOY_SERVER=" + p.url, "XDG_CONFIG_HOME=" + config, "HOME=" + config}, stdin, args...)
	}
	admin := func(stdin string, args ...string) string {
		t.Helper()
		out, errOut, code := cli(stdin, append(args, "--admin-token", adminToken)...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errOut)
		}
		return out
	}
	var ws struct{ ID string }
	json.Unmarshal([]byte(admin("", "workspace", "create", "team")), &ws)
	admin(password+"\n", "user", "create", "--email", "ann@example.com", "--name", "Ann")
	admin("", "member", "add", "--workspace", ws.ID, "--email", "ann@example.com", "--role", "owner")
	if out := admin("", "member", "add", "--workspace", ws.ID, "--email", "bob@example.com", "--role", "viewer"); !strings.Contains(out, "/#/invite/dcy_inv_") {
		t.Errorf("invitation: %s", out)
	}
	if _, errOut, code := cli(password+"\n", "login", "--email", "ann@example.com", "--password-stdin"); code != 0 {
		t.Fatalf("login: %d %s", code, errOut)
	}
	path := filepath.Join(config, "decoy", "credentials.json")
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("credentials: %v %v", fi, err)
	}
	// Signed in: no --admin-token needed.
	for _, tc := range []struct {
		args  []string
		stdin string
		want  string
	}{
		{[]string{"workspace", "list"}, "", `"name": "team"`},
		{[]string{"project", "create", "--workspace", ws.ID, "api"}, "", `"name": "api"`},
		{[]string{"project", "list", "--workspace", ws.ID}, "", `"name": "default"`},
		{[]string{"key", "create", "--workspace", ws.ID, "--name", "ci", "--role", "editor", "--expires", "720h"}, "", `"secret": "dcy_key_`},
		{[]string{"key", "list", "--workspace", ws.ID}, "", `"name": "ci"`},
		{[]string{"member", "list", "--workspace", ws.ID}, "", `"email": "ann@example.com"`},
		{[]string{"mock", "list", "--workspace", ws.ID}, "", `"mocks": []`},
		{[]string{"audit", "--workspace", ws.ID, "--limit", "2"}, "", `"action": "key.create"`},
	} {
		out, errOut, code := cli(tc.stdin, tc.args...)
		if code != 0 || !strings.Contains(out, tc.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want %q", tc.args, code, out, errOut, tc.want)
		}
	}
	// Two projects: a mock needs --project.
	if _, errOut, code := cli("[1]", "mock", "create", "--file", "-"); code != 1 || !strings.Contains(errOut, "project_id is required") {
		t.Errorf("mock create without --project: %d %s", code, errOut)
	}
	var proj struct{ ID string }
	out, _, _ := cli("", "project", "create", "--workspace", ws.ID, "web")
	json.Unmarshal([]byte(out), &proj)
	if out, errOut, code := cli("[1]", "mock", "create", "--file", "-", "--project", proj.ID); code != 0 || !strings.Contains(out, proj.ID) {
		t.Errorf("mock create --project: %d %s %s", code, out, errOut)
	}
	if _, errOut, code := cli("", "user", "list"); code != 1 || !strings.Contains(errOut, "needs the server admin role") {
		t.Errorf("user list as a member: %d %s", code, errOut)
	}
	if _, errOut, code := cli("", "logout"); code != 0 {
		t.Fatalf("logout: %s", errOut)
	}
	if _, errOut, code := cli("", "workspace", "list"); code != 1 || !strings.Contains(errOut, "no admin token") {
		t.Errorf("after logout: %d %s", code, errOut)
	}
}

// decoyCLIEnv runs the CLI with env added to a clean environment.
func decoyCLIEnv(t *testing.T, env []string, stdin string, args ...string) (string, string, int) {
	t.Helper()
	return runCLI(t, append(cleanEnv(), env...), stdin, args...)
}

// TestWorkspaceMonthlyReads: 20 concurrent reads of a workspace's mocks
// against its monthly_reads of 5 serve exactly 5, on the embedded store.
func TestWorkspaceMonthlyReads(t *testing.T) {
	p := start(t, t.TempDir(), "--admin-token", adminToken)
	o := &org{t: t, p: p}
	ws := o.admin("POST", "workspaces", `{"name":"q"}`, 201, "id")
	project := o.defaultProject(ws)
	m1, m2 := o.newMock(project, "", `[1]`), o.newMock(project, "", `[2]`)
	o.admin("PATCH", "workspaces/"+ws, `{"limits":{"monthly_reads":5}}`, 200, "id")
	counts := concurrentGets(t, 20, func(i int) string {
		if i%2 == 0 {
			return p.url + "/mock/" + m1
		}
		return p.url + "/mock/" + m2
	})
	if counts[200] != 5 || counts[429] != 15 {
		t.Errorf("20 reads against monthly_reads 5: %v, want 5 200s and 15 429s", counts)
	}
}
