package main_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/decoy-mock/decoy/client"
)

// cliJSON runs the CLI against p, wants exit 0, and decodes what it printed.
func cliJSON(t *testing.T, p *proc, v any, args ...string) {
	t.Helper()
	out, errOut, code := decoyCLI(t, p, "", args...)
	if code != 0 {
		t.Fatalf("decoy %s: exit %d %s", strings.Join(args, " "), code, errOut)
	}
	if v != nil {
		if err := json.Unmarshal([]byte(out), v); err != nil {
			t.Fatalf("decoy %s printed %q: %v", strings.Join(args, " "), out, err)
		}
	}
}

// TestHandles: workspaces, projects and mocks are named on the command
// line by their names as well as by their ids; a name that stands for
// more than one thing is refused with the list of them, a project's may be
// told apart as WORKSPACE/PROJECT, and a name that stands for nothing says
// so.
func TestHandles(t *testing.T) {
	p := start(t, t.TempDir(), "--admin-token", adminToken)
	var acme, globex, api, globexAPI struct{ ID, Name string }
	cliJSON(t, p, &acme, "workspace", "create", "acme")
	cliJSON(t, p, &globex, "workspace", "create", "globex")
	cliJSON(t, p, &api, "project", "create", "--workspace", "acme", "api")
	cliJSON(t, p, &globexAPI, "project", "create", "--workspace", globex.ID, "api")
	var got struct{ ID, Name, WorkspaceID string }
	if cliJSON(t, p, &got, "workspace", "get", "acme"); got.ID != acme.ID {
		t.Errorf("workspace get acme: %+v, want id %s", got, acme.ID)
	}
	if cliJSON(t, p, &got, "workspace", "get", "ACME"); got.ID != acme.ID {
		t.Errorf("workspace get ACME (another case): %+v", got)
	}

	// A mock of one name in two projects; another of a name of its own.
	data := filepath.Join(t.TempDir(), "data.json")
	if err := os.WriteFile(data, []byte(`[]`), 0o600); err != nil {
		t.Fatal(err)
	}
	var users, otherUsers, orders client.Mock
	cliJSON(t, p, &users, "mock", "create", "--file", data, "--name", "users", "--project", "acme/api")
	if users.ProjectID != api.ID {
		t.Errorf("mock create --project acme/api went to project %s, want %s", users.ProjectID, api.ID)
	}
	cliJSON(t, p, &otherUsers, "mock", "create", "--file", data, "--name", "users", "--project", globexAPI.ID)
	cliJSON(t, p, &orders, "mock", "create", "--file", data, "--name", "orders", "--project", "default")

	for _, tc := range []struct {
		name string
		args []string
		// want is the id printed; else err is in the error, with exit 1.
		want string
		err  []string
	}{
		{"mock by name", []string{"mock", "get", "orders"}, orders.ID, nil},
		{"mock by id", []string{"mock", "get", users.ID}, users.ID, nil},
		{"ambiguous mock", []string{"mock", "get", "users"}, "", []string{`2 mocks are named "users"; give the id of the one you mean:`, users.ID, otherUsers.ID}},
		{"no such mock", []string{"mock", "get", "nosuch"}, "", []string{`no mock named "nosuch" among those you see`}},
		{"project by name in its workspace", []string{"project", "get", "acme/api"}, api.ID, nil},
		{"ambiguous project", []string{"project", "get", "api"}, "", []string{`2 projects are named "api"`, api.ID + "  (workspace acme)", globexAPI.ID + "  (workspace globex)", "(or name it WORKSPACE/api)"}},
		{"no such workspace", []string{"project", "list", "--workspace", "initech"}, "", []string{`no workspace named "initech"`}},
		// A slug names a project where no name does (§11.1: acme's api
		// has "api", globex's "api-2").
		{"project by slug", []string{"project", "get", "api-2"}, globexAPI.ID, nil},
		{"route list by slug", []string{"route", "list", "--project", "api-2"}, "", nil},
		{"no such project", []string{"project", "get", "nosuch"}, "", []string{`no project named "nosuch" among those you see, and none has it as its slug: give its id, its exact name or its slug`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, code := decoyCLI(t, p, "", tc.args...)
			if tc.err == nil {
				var v struct{ ID string }
				if code != 0 || json.Unmarshal([]byte(out), &v) != nil || v.ID != tc.want {
					t.Errorf("exit %d, %s %s; want id %s", code, out, errOut, tc.want)
				}
				return
			}
			for _, s := range tc.err {
				if code != 1 || !strings.Contains(errOut, s) {
					t.Errorf("exit %d, stderr\n%s\nwant exit 1 and %q", code, errOut, s)
				}
			}
		})
	}

	// The commands of a mock, its versions, the lists narrowed by name.
	if out, errOut, code := decoyCLI(t, p, "", "mock", "data", "orders"); code != 0 || out != "[]" {
		t.Errorf("mock data orders: exit %d %q %s", code, out, errOut)
	}
	if _, errOut, code := decoyCLI(t, p, "", "mock", "versions", "orders"); code != 0 {
		t.Errorf("mock versions orders: exit %d %s", code, errOut)
	}
	var page struct{ Mocks []client.Mock }
	if cliJSON(t, p, &page, "mock", "list", "--workspace", "globex"); len(page.Mocks) != 1 || page.Mocks[0].ID != otherUsers.ID {
		t.Errorf("mock list --workspace globex: %+v", page.Mocks)
	}
	if cliJSON(t, p, &page, "mock", "list", "--workspace", "acme", "--project", "api"); len(page.Mocks) != 1 || page.Mocks[0].ID != users.ID {
		t.Errorf("mock list --workspace acme --project api: %+v", page.Mocks)
	}

	// A route's mock is looked for in the route's project: "users" is
	// one there.
	var route struct {
		MockID string `json:"mock_id"`
	}
	if cliJSON(t, p, &route, "route", "create", "--project", "acme/api", "--method", "GET", "--path", "/users", "--mock", "users"); route.MockID != users.ID {
		t.Errorf("route create --mock users in acme/api: mock %s, want %s", route.MockID, users.ID)
	}
	var routes struct{ Routes []json.RawMessage }
	if cliJSON(t, p, &routes, "route", "list", "--project", "acme/api"); len(routes.Routes) != 1 {
		t.Errorf("route list --project acme/api: %d routes", len(routes.Routes))
	}
	// A route by its METHOD PATH in its project.
	var r struct{ ID, Items string }
	cliJSON(t, p, &r, "route", "get", "--project", "acme/api", "GET /users")
	if cliJSON(t, p, &r, "route", "update", "--project", "acme/api", "get /users", "--items", "data"); r.ID == "" || r.Items != "data" {
		t.Errorf("route update 'get /users': %+v", r)
	}
	// Its parameters' names aside, as the server tells routes apart.
	var item, same struct{ ID string }
	cliJSON(t, p, &item, "route", "create", "--project", "acme/api", "--method", "GET", "--path", "/users/{id}", "--mock", "users")
	if cliJSON(t, p, &same, "route", "get", "--project", "acme/api", "GET /users/{uid}"); same.ID != item.ID {
		t.Errorf("route get 'GET /users/{uid}': %s, want %s", same.ID, item.ID)
	}
	for _, tc := range []struct {
		args []string
		code int
		err  string
	}{
		{[]string{"route", "get", "GET /users"}, 2, "a route named by its method and path needs --project"},
		{[]string{"route", "get", "--project", "acme/api", "GET /nope"}, 1, "no route GET /nope in project acme/api"},
		{[]string{"route", "get", "--project", "acme/api", "users"}, 2, `a route is its id, or its METHOD PATH with --project`},
	} {
		if _, errOut, code := decoyCLI(t, p, "", tc.args...); code != tc.code || !strings.Contains(errOut, tc.err) {
			t.Errorf("%v: exit %d %s", tc.args, code, errOut)
		}
	}
	if _, errOut, code := decoyCLI(t, p, "", "route", "delete", "--project", "acme/api", "GET /users"); code != 0 {
		t.Errorf("route delete 'GET /users': exit %d %s", code, errOut)
	}

	// Export and import by name.
	dir := filepath.Join(t.TempDir(), "export")
	if _, errOut, code := decoyCLI(t, p, "", "export", "--project", "acme/api", "--out", dir); code != 0 {
		t.Fatalf("export --project acme/api: exit %d %s", code, errOut)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "decoy.json")); err != nil || !strings.Contains(string(b), users.ID) || strings.Contains(string(b), otherUsers.ID) {
		t.Errorf("export of acme/api: %v\n%s", err, b)
	}
	if _, errOut, code := decoyCLI(t, p, "", "import", dir, "--project", "globex/api", "--new-ids"); code != 0 {
		t.Errorf("import --project globex/api: exit %d %s", code, errOut)
	}
	if cliJSON(t, p, &page, "mock", "list", "--project", "globex/api"); len(page.Mocks) != 2 {
		t.Errorf("globex/api after the import: %d mocks", len(page.Mocks))
	}
	if _, errOut, code := decoyCLI(t, p, "", "workspace", "rename", "globex", "globex2"); code != 0 {
		t.Errorf("workspace rename globex: exit %d %s", code, errOut)
	}
	if cliJSON(t, p, &got, "workspace", "get", "globex2"); got.ID != globex.ID {
		t.Errorf("workspace get globex2: %+v", got)
	}
}

// TestInvitationsCLI: a pending invitation shows in decoy member list
// (under its own title on a terminal, under "invitations" in JSON) and
// decoy invitation list, and decoy invitation revoke ends it.
func TestInvitationsCLI(t *testing.T) {
	p := start(t, t.TempDir(), "--admin-token", adminToken)
	env := append(cleanEnv(), "DECOY_SERVER="+p.url, "DECOY_ADMIN_TOKEN="+adminToken, "XDG_CONFIG_HOME="+t.TempDir())
	var ws struct{ ID string }
	cliJSON(t, p, &ws, "workspace", "create", "team")
	var inv struct {
		URL string `json:"invitation_url"`
	}
	cliJSON(t, p, &inv, "member", "add", "--workspace", "team", "--email", "bob@example.com", "--role", "editor")
	if inv.URL == "" {
		t.Fatal("no invitation link")
	}

	out, errOut, code := ttyRun(t, env, false, "member", "list", "--workspace", "team")
	if code != 0 || !strings.Contains(out, "No members.\n\nPending invitations") ||
		!regexp.MustCompile(`(?m)^EMAIL\s+ROLE\s+SENT\s+EXPIRES$`).MatchString(out) ||
		!regexp.MustCompile(`(?m)^bob@example\.com\s+editor\s+just now\s+in [67] days$`).MatchString(out) {
		t.Errorf("member list on a terminal: exit %d %s\n%s", code, errOut, out)
	}
	var members struct {
		Members     []json.RawMessage `json:"members"`
		Invitations []struct{ Email, Role string }
	}
	if cliJSON(t, p, &members, "member", "list", "--workspace", ws.ID); len(members.Members) != 0 || len(members.Invitations) != 1 || members.Invitations[0].Email != "bob@example.com" {
		t.Errorf("member list -o json: %+v", members)
	}
	var list struct{ Invitations []struct{ Email string } }
	if cliJSON(t, p, &list, "invitation", "list", "--workspace", "team"); len(list.Invitations) != 1 {
		t.Errorf("invitation list: %+v", list)
	}
	if out, errOut, code := ttyRun(t, env, false, "invitation", "revoke", "--workspace", "team", "BOB@example.com"); code != 0 ||
		out != "Revoked the invitation of BOB@example.com; its link no longer works\n" || errOut != "" {
		t.Errorf("invitation revoke on a terminal: exit %d %q %s", code, out, errOut)
	}
	if cliJSON(t, p, &list, "invitation", "list", "--workspace", "team"); len(list.Invitations) != 0 {
		t.Errorf("invitation list after revoking: %+v", list)
	}
	if _, errOut, code := decoyCLI(t, p, "", "invitation", "revoke", "--workspace", "team", "bob@example.com"); code != 1 || !strings.Contains(errOut, "404 Invitation not found") {
		t.Errorf("second revoke: exit %d %s", code, errOut)
	}
	_, secret, _ := strings.Cut(inv.URL, "/#/invite/")
	if a := get(t, p.url+"/admin/v1/invitations/"+secret); a.status != 404 {
		t.Errorf("the revoked link: %d %s", a.status, a.body)
	}
	if out, _, _ := ttyRun(t, env, false, "member", "list", "--workspace", "team"); strings.Contains(out, "Pending") {
		t.Errorf("member list after revoking:\n%s", out)
	}
}

// TestDoneSaid: a command whose answer is empty says what it did, on a
// terminal and in a script's log (standard error, its standard output
// left empty); decoy mock delete too.
func TestDoneSaid(t *testing.T) {
	p := start(t, t.TempDir(), "--admin-token", adminToken)
	cliJSON(t, p, nil, "workspace", "create", "team")
	cliJSON(t, p, nil, "member", "add", "--workspace", "team", "--email", "bob@example.com")
	if out, errOut, code := decoyCLI(t, p, "", "invitation", "revoke", "--workspace", "team", "bob@example.com"); code != 0 || out != "" ||
		errOut != "Revoked the invitation of bob@example.com; its link no longer works\n" {
		t.Errorf("invitation revoke: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	var m struct{ ID string }
	if out, errOut, code := decoyCLI(t, p, "[1]", "mock", "create", "--file", "-", "--name", "gone"); code != 0 || json.Unmarshal([]byte(out), &m) != nil {
		t.Fatalf("mock create: exit %d %s %s", code, out, errOut)
	}
	if out, errOut, code := decoyCLI(t, p, "", "mock", "delete", "gone"); code != 0 || out != "" || errOut != "Deleted mock "+m.ID+"\n" {
		t.Errorf("mock delete: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

// TestWorkspaceCreateTwin: a workspace whose name another has already is
// made, with a warning on standard error naming the other's id and the
// ambiguity; a name of its own warns of nothing.
func TestWorkspaceCreateTwin(t *testing.T) {
	p := start(t, t.TempDir(), "--admin-token", adminToken)
	var first, second struct{ ID string }
	out, errOut, code := decoyCLI(t, p, "", "workspace", "create", "acme")
	if code != 0 || errOut != "" || json.Unmarshal([]byte(out), &first) != nil {
		t.Fatalf("the first acme: exit %d %s %s", code, out, errOut)
	}
	out, errOut, code = decoyCLI(t, p, "", "workspace", "create", "acme")
	if code != 0 || json.Unmarshal([]byte(out), &second) != nil || second.ID == first.ID {
		t.Fatalf("the second acme: exit %d %s %s", code, out, errOut)
	}
	want := `decoy: warning: another workspace is named "acme" already (` + first.ID + `): the name now stands for more than one, and --workspace "acme" is refused as ambiguous. ` +
		`Give the new one's id (` + second.ID + `), or rename one with "decoy workspace rename ID NAME".` + "\n"
	if errOut != want {
		t.Errorf("the second acme's warning:\n got %q\nwant %q", errOut, want)
	}
	if _, errOut, code := decoyCLI(t, p, "", "workspace", "create", "acme"); code != 0 || !strings.Contains(errOut, "2 other workspaces are named \"acme\" already") {
		t.Errorf("the third acme: exit %d %s", code, errOut)
	}
	if _, errOut, code := decoyCLI(t, p, "", "workspace", "create", "Acme corp"); code != 0 || errOut != "" {
		t.Errorf("another name: exit %d %s", code, errOut)
	}
}

// TestMockCreateTemplateSeed: decoy mock create --template --seed N
// stores the data decoy generate --seed N prints; --seed goes only with a
// template generated once.
func TestMockCreateTemplateSeed(t *testing.T) {
	p := start(t, t.TempDir(), "--admin-token", adminToken)
	file := filepath.Join(t.TempDir(), "users.json")
	if err := os.WriteFile(file, []byte(usersTemplate), 0o600); err != nil {
		t.Fatal(err)
	}
	want, errOut, code := decoyCLI(t, p, "", "generate", file, "--seed", "42")
	if code != 0 {
		t.Fatalf("generate: %d %s", code, errOut)
	}
	var m client.TemplateMock
	cliJSON(t, p, &m, "mock", "create", "--template", file, "--seed", "42", "--name", "seeded")
	if data, errOut, code := decoyCLI(t, p, "", "mock", "data", "seeded"); code != 0 || data != strings.TrimSuffix(want, "\n") {
		t.Errorf("the data of --seed 42: exit %d %s\n%s\nwant\n%s", code, errOut, data, want)
	}
	for _, tc := range []struct {
		args []string
		err  string
	}{
		{[]string{"mock", "create", "--template", file, "--mode", "always", "--seed", "1"}, "--seed goes with --mode once"},
		{[]string{"mock", "create", "--file", file, "--seed", "1"}, "--seed goes with --template"},
		{[]string{"mock", "create", "--template", file, "--seed", "x"}, "--seed must be an integer of 0 or more"},
	} {
		if _, errOut, code := decoyCLI(t, p, "", tc.args...); code != 2 || !strings.Contains(errOut, tc.err) {
			t.Errorf("%v: exit %d %s", tc.args, code, errOut)
		}
	}
}

// TestMockListGeneratedSize: on a terminal, a mock whose data a template
// makes on every read shows "generated" as its size, not the bytes of the
// empty array it stores.
func TestMockListGeneratedSize(t *testing.T) {
	p := start(t, t.TempDir(), "--admin-token", adminToken)
	env := append(cleanEnv(), "DECOY_SERVER="+p.url, "DECOY_ADMIN_TOKEN="+adminToken, "XDG_CONFIG_HOME="+t.TempDir())
	if _, errOut, code := decoyCLI(t, p, usersTemplate, "mock", "create", "--template", "-", "--mode", "always", "--name", "fresh"); code != 0 {
		t.Fatalf("create: exit %d %s", code, errOut)
	}
	createMock(t, p, `[1]`, client.CreateOptions{Name: "stored"})
	out, errOut, code := ttyRun(t, env, false, "mock", "list")
	if code != 0 || !regexp.MustCompile(`(?m)^fresh\s+\S+\s+generated\s+open\s`).MatchString(out) ||
		!regexp.MustCompile(`(?m)^stored\s+\S+\s+3 B\s+open\s`).MatchString(out) {
		t.Errorf("mock list: exit %d %s\n%s", code, errOut, out)
	}
	out, _, _ = ttyRun(t, env, false, "mock", "get", "fresh")
	if !regexp.MustCompile(`(?m)^size:\s+generated on every read$`).MatchString(out) {
		t.Errorf("mock get fresh:\n%s", out)
	}
	out, _, _ = ttyRun(t, env, false, "mock", "get", "stored")
	if !regexp.MustCompile(`(?m)^size:\s+3 B$`).MatchString(out) {
		t.Errorf("mock get stored:\n%s", out)
	}
}
