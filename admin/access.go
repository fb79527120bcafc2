package admin

import (
	"context"
	"net/http"
	"slices"
	"strings"

	"github.com/decoy-mock/decoy"
	"github.com/decoy-mock/decoy/answer"
)

// This file is where the admin API decides who may do what (§6.2 of the
// contract): every route declares the role it needs and, through the first
// placeholder of its path, the workspace whose role decides. Serve
// checks both before any handler runs, so that no handler checks access
// itself.

// need is what a route asks of its caller.
type need int

const (
	// public: no sign-in; the route authenticates what it is sent itself
	// (a password, an invitation's secret).
	public need = iota
	// signedIn: any caller; the handler narrows what it shows to what the
	// caller sees.
	signedIn
	viewer
	editor
	owner
	// serverAdmin: the admin token, or a user who is a server admin.
	serverAdmin
	// person: a user, signed in by a personal access token or a Studio
	// session; not the admin token, nor an API key, which own no
	// personal access tokens.
	person
)

// role is the workspace role a need asks for, for viewer, editor and owner.
func (n need) role() decoy.Role {
	switch n {
	case viewer:
		return decoy.RoleViewer
	case editor:
		return decoy.RoleEditor
	case owner:
		return decoy.RoleOwner
	}
	return ""
}

// adminRoute is one line of the admin API's table.
//
// path is split on "/" below /admin/v1; a segment in braces matches any
// segment, and the first of {mock}, {route}, {project} and {ws} names the
// resource whose workspace the role is checked in (a mock id, a route id,
// a project id, a workspace id). Its value is what the handler gets as id; the values of
// all placeholders are in adminCall.params.
type adminRoute struct {
	method string
	path   string
	need   need
	// action names what the route does, in "Forbidden: <action> needs
	// the <role> role"; empty: the method and path.
	action string
	// audit is the action recorded in the audit log when the handler
	// succeeds; empty: none (reads, and changes outside a workspace).
	audit string
	// projectKey lets a key limited to one project through a workspace
	// route (the workspace's record, its projects); other workspace
	// routes are not found to it. Mock and project routes check that
	// the resource is in the key's project.
	projectKey bool
	handle     func(s *API, w http.ResponseWriter, r *http.Request, id string) error
}

// adminRoutes is the admin API. A new route is one line: GET routes of
// mocks, projects and workspaces need viewer; changes need editor. A route
// that needs a role but names no resource (no {mock}, {project} or {ws})
// needs that role in some workspace.
var adminRoutes = []adminRoute{
	{method: "POST", path: "auth/token", need: public, handle: (*API).createAccessToken},
	{method: "DELETE", path: "auth/token", need: signedIn, handle: (*API).deleteAccessToken},
	{method: "GET", path: "invitations/{secret}", need: public, handle: (*API).getInvitation},
	{method: "POST", path: "invitations/{secret}/accept", need: public, handle: (*API).acceptInvitation},
	{method: "GET", path: "me", need: signedIn, handle: (*API).me},
	{method: "GET", path: "me/tokens", need: person, action: "listing your access tokens", handle: (*API).listMyTokens},
	{method: "DELETE", path: "me/tokens/{token}", need: person, action: "revoking your access tokens", audit: "token.revoke", handle: (*API).revokeMyToken},
	{method: "PUT", path: "me/password", need: person, action: "changing your password", audit: "user.password", handle: (*API).changeMyPassword},

	{method: "GET", path: "users", need: serverAdmin, action: "listing users", handle: (*API).listUsers},
	{method: "POST", path: "users", need: serverAdmin, action: "creating users", audit: "user.create", handle: (*API).createUser},
	{method: "GET", path: "users/{user}", need: serverAdmin, action: "reading users", handle: (*API).getUser},
	{method: "PATCH", path: "users/{user}", need: serverAdmin, action: "changing users", audit: "user.update", handle: (*API).patchUser},
	{method: "DELETE", path: "users/{user}", need: serverAdmin, action: "deleting users", audit: "user.delete", handle: (*API).deleteUser},
	{method: "GET", path: "users/{user}/tokens", need: serverAdmin, action: "listing users' access tokens", handle: (*API).listUserTokens},
	{method: "DELETE", path: "users/{user}/tokens/{token}", need: serverAdmin, action: "revoking users' access tokens", audit: "token.revoke", handle: (*API).revokeUserToken},

	{method: "GET", path: "workspaces", need: signedIn, handle: (*API).listWorkspaces},
	{method: "POST", path: "workspaces", need: signedIn, audit: "workspace.create", handle: (*API).createWorkspace},
	{method: "GET", path: "workspaces/{ws}", need: viewer, projectKey: true, handle: (*API).getWorkspace},
	{method: "PATCH", path: "workspaces/{ws}", need: owner, action: "changing the workspace", audit: "workspace.update", handle: (*API).patchWorkspace},
	{method: "DELETE", path: "workspaces/{ws}", need: owner, action: "deleting the workspace", audit: "workspace.delete", handle: (*API).deleteWorkspace},
	{method: "GET", path: "workspaces/{ws}/members", need: viewer, handle: (*API).listMembers},
	{method: "POST", path: "workspaces/{ws}/members", need: owner, action: "adding members", audit: "member.add", handle: (*API).addMember},
	{method: "PATCH", path: "workspaces/{ws}/members/{user}", need: owner, action: "changing members", audit: "member.role", handle: (*API).patchMember},
	{method: "DELETE", path: "workspaces/{ws}/members/{user}", need: owner, action: "removing members", audit: "member.remove", handle: (*API).removeMember},
	{method: "GET", path: "workspaces/{ws}/invitations", need: viewer, handle: (*API).listInvitations},
	{method: "DELETE", path: "workspaces/{ws}/invitations/{email}", need: owner, action: "revoking invitations", audit: "invitation.revoke", handle: (*API).revokeInvitation},
	{method: "GET", path: "workspaces/{ws}/keys", need: owner, action: "listing API keys", handle: (*API).listKeys},
	{method: "POST", path: "workspaces/{ws}/keys", need: owner, action: "creating API keys", audit: "key.create", handle: (*API).createKey},
	{method: "DELETE", path: "workspaces/{ws}/keys/{key}", need: owner, action: "revoking API keys", audit: "key.revoke", handle: (*API).revokeKey},
	{method: "GET", path: "workspaces/{ws}/projects", need: viewer, projectKey: true, handle: (*API).listProjects},
	{method: "POST", path: "workspaces/{ws}/projects", need: editor, action: "creating projects", audit: "project.create", handle: (*API).createProject},
	{method: "GET", path: "workspaces/{ws}/audit", need: viewer, handle: (*API).listAudit},

	{method: "GET", path: "projects/{project}", need: viewer, handle: (*API).getProject},
	{method: "PATCH", path: "projects/{project}", need: editor, action: "changing projects", audit: "project.rename", handle: (*API).patchProject},
	{method: "DELETE", path: "projects/{project}", need: editor, action: "deleting projects", audit: "project.delete", handle: (*API).deleteProject},
	{method: "POST", path: "projects/{project}/import", need: editor, action: "importing mocks", audit: "import", handle: (*API).importProject},
	{method: "GET", path: "projects/{project}/export", need: editor, action: "exporting projects", handle: (*API).exportProject},

	{method: "GET", path: "projects/{project}/routes", need: viewer, handle: (*API).listRoutes},
	{method: "POST", path: "projects/{project}/routes", need: editor, action: "creating routes", audit: "route.create", handle: (*API).createRoute},
	{method: "GET", path: "routes/{route}", need: viewer, handle: (*API).getRoute},
	{method: "PATCH", path: "routes/{route}", need: editor, action: "changing routes", audit: "route.update", handle: (*API).patchRoute},
	{method: "DELETE", path: "routes/{route}", need: editor, action: "deleting routes", audit: "route.delete", handle: (*API).deleteRoute},
	{method: "POST", path: "routes/{route}/rules/reset", need: editor, action: "resetting rules' counts", audit: "route.rules_reset", handle: (*API).resetRouteRules},

	{method: "GET", path: "projects/{project}/requests", need: viewer, handle: (*API).listRequests},
	{method: "DELETE", path: "projects/{project}/requests", need: editor, action: "clearing the request journal", audit: "journal.clear", handle: (*API).clearRequests},
	{method: "GET", path: "projects/{project}/requests/count", need: viewer, handle: (*API).countRequests},
	{method: "GET", path: "projects/{project}/requests/stream", need: viewer, handle: (*API).streamRequests},

	{method: "GET", path: "mocks", need: signedIn, handle: (*API).listMocks},
	{method: "POST", path: "mocks", need: signedIn, audit: "mock.create", handle: (*API).createMock},
	{method: "GET", path: "mocks/{mock}", need: viewer, handle: (*API).getMock},
	{method: "PATCH", path: "mocks/{mock}", need: editor, action: "changing mocks", audit: "mock.settings", handle: (*API).patchMock},
	{method: "DELETE", path: "mocks/{mock}", need: editor, action: "deleting mocks", audit: "mock.delete", handle: (*API).deleteMock},
	{method: "GET", path: "mocks/{mock}/data", need: viewer, handle: (*API).getData},
	{method: "PUT", path: "mocks/{mock}/data", need: editor, action: "changing mock data", audit: "mock.data", handle: (*API).replaceData},
	{method: "POST", path: "mocks/{mock}/token", need: editor, action: "rotating mock tokens", audit: "mock.token", handle: (*API).rotateToken},
	{method: "GET", path: "mocks/{mock}/usage", need: viewer, handle: (*API).usage},
	{method: "GET", path: "mocks/{mock}/usage/history", need: viewer, handle: (*API).usageHistory},
	{method: "GET", path: "mocks/{mock}/versions", need: viewer, handle: (*API).listVersions},
	{method: "GET", path: "mocks/{mock}/versions/{v}/data", need: viewer, handle: (*API).getVersionData},
	{method: "POST", path: "mocks/{mock}/versions", need: editor, action: "saving versions", audit: "mock.snapshot", handle: (*API).postSnapshot},
	{method: "POST", path: "mocks/{mock}/reset", need: editor, action: "resetting live data", audit: "mock.reset", handle: (*API).postReset},
	{method: "POST", path: "mocks/{mock}/versions/{v}/restore", need: editor, action: "restoring versions", audit: "mock.restore", handle: (*API).postRestore},
	{method: "GET", path: "mocks/{mock}/template", need: viewer, handle: (*API).getTemplate},
	{method: "PUT", path: "mocks/{mock}/template", need: editor, action: "changing templates", audit: "mock.template", handle: (*API).putTemplate},
	{method: "DELETE", path: "mocks/{mock}/template", need: editor, action: "changing templates", audit: "mock.template", handle: (*API).deleteTemplate},
	{method: "POST", path: "mocks/{mock}/regenerate", need: editor, action: "generating data", audit: "mock.data", handle: (*API).regenerate},

	{method: "POST", path: "generate", need: editor, action: "generating data", handle: (*API).previewGenerate},
	{method: "GET", path: "generate/functions", need: signedIn, handle: (*API).listFunctions},
}

// adminCall is what Serve found out about a request before its
// handler runs: who sent it and, for a route of a workspace's resource,
// the resource and the caller's role there. Handlers read it with callOf.
type adminCall struct {
	caller *caller
	route  *adminRoute
	params map[string]string
	// workspaceID is the workspace of the resource (empty for routes
	// outside one); role is the caller's role there.
	workspaceID string
	role        decoy.Role
	mock        *decoy.Mock
	project     *decoy.Project
	workspace   *decoy.Workspace
	// projectRoute is the route of a /routes/{route} call (§11.2).
	projectRoute *decoy.Route

	// Set by handlers for the audit log: the workspace and target of a
	// resource they created or changed (default: the route's resource),
	// and an action more precise than the route's; or that the request
	// changed nothing, and is not recorded.
	auditWorkspace string
	auditTarget    *decoy.AuditTarget
	auditAction    string
	unchanged      bool
}

type callKey struct{}

// callOf returns the adminCall of a request Serve let through.
func callOf(r *http.Request) *adminCall {
	c, _ := r.Context().Value(callKey{}).(*adminCall)
	if c == nil {
		return &adminCall{caller: &caller{admin: true}} // handlers called directly by tests
	}
	return c
}

// matchRoute finds the routes of a path: the one of the method, and the
// methods the path answers to.
func matchRoute(method string, segs []string) (match *adminRoute, params map[string]string, allow []string) {
	for i := range adminRoutes {
		rt := &adminRoutes[i]
		p, ok := matchPath(rt.path, segs)
		if !ok {
			continue
		}
		if rt.method == method {
			match, params = rt, p
		}
		if !slices.Contains(allow, rt.method) {
			allow = append(allow, rt.method)
		}
	}
	return match, params, allow
}

// teamsOnly reports whether a route's path is of teams (people,
// workspaces, projects), which a server without a TeamStore does not
// serve; mocks and generated data it does.
func teamsOnly(path string) bool {
	first, _, _ := strings.Cut(path, "/")
	// Import and export reach the default project, the one a server
	// without teams has (see findProject).
	transfer := strings.HasSuffix(path, "/import") || strings.HasSuffix(path, "/export")
	return first != "mocks" && first != "generate" && !transfer
}

// matchPath matches a route's path against a request's segments.
func matchPath(pattern string, segs []string) (map[string]string, bool) {
	pat := strings.Split(pattern, "/")
	if len(pat) != len(segs) {
		return nil, false
	}
	var params map[string]string
	for i, p := range pat {
		if strings.HasPrefix(p, "{") {
			if params == nil {
				params = map[string]string{}
			}
			params[p[1:len(p)-1]] = segs[i]
			continue
		}
		if p != segs[i] {
			return nil, false
		}
	}
	return params, true
}

// scopeOf returns the placeholder whose resource places a route in a
// workspace: "mock", "route", "project", "ws", or "".
func scopeOf(pattern string) string {
	for _, p := range strings.Split(pattern, "/") {
		switch p {
		case "{mock}", "{route}", "{project}", "{ws}":
			return p[1 : len(p)-1]
		}
	}
	return ""
}

// Not-found answers of the resources a route is placed by.
var (
	errProjectNotFound   = answer.New(http.StatusNotFound, "Project not found")
	errWorkspaceNotFound = answer.New(http.StatusNotFound, "Workspace not found")
)

// idParams are the placeholders that hold ids (UUIDs), with the answer to
// one that is not.
var idParams = map[string]error{
	"mock":    answer.ErrMockNotFound,
	"project": errProjectNotFound,
	"ws":      errWorkspaceNotFound,
	"user":    answer.New(http.StatusNotFound, "User not found"),
	"key":     answer.New(http.StatusNotFound, "Key not found"),
	"token":   answer.New(http.StatusNotFound, "Access token not found"),
	"route":   errRouteNotFound,
}

// errRouteNotFound answers a route that is not there, or not seen.
var errRouteNotFound = answer.New(http.StatusNotFound, "Route not found")

// forbidden is the answer to a caller who sees a resource but lacks the
// role to do what it asked.
func forbidden(action, role string) error {
	return answer.New(http.StatusForbidden, "Forbidden: "+action+" needs the "+role+" role")
}

// authorize checks that the caller may use the route: it finds the
// route's resource and the caller's role in its workspace. What the
// caller cannot see is not found; what it sees but may not do is
// forbidden.
func (s *API) authorize(ctx context.Context, call *adminCall) (string, error) {
	rt, c := call.route, call.caller
	action := rt.action
	if action == "" {
		action = rt.method + " /admin/v1/" + rt.path
	}
	scope := scopeOf(rt.path)
	var id string
	if rt.need == serverAdmin && !c.admin {
		return "", forbidden(action, "server admin")
	}
	for name, notFound := range idParams {
		if v, ok := call.params[name]; ok {
			if call.params[name], ok = decoy.CanonicalID(v); !ok {
				return "", notFound
			}
		}
	}
	id = call.params[scope]
	if s.cfg.Teams == nil && teamsOnly(rt.path) {
		return "", answer.ErrNotFound // no teams here
	}
	if rt.need == person && c.user == nil {
		return "", answer.New(http.StatusForbidden, "Forbidden: "+action+" needs a user signed in with a password or a personal access token")
	}
	switch rt.need {
	case public, signedIn, serverAdmin, person:
		return id, nil
	}
	if s.cfg.Teams == nil {
		// Without teams there is one caller, the server admin, and
		// the handlers find the resource themselves.
		return id, nil
	}
	var notFound error
	var projectID string
	switch scope {
	case "mock":
		notFound = answer.ErrMockNotFound
		m, err := s.cfg.Store.FindMock(ctx, id)
		if err != nil {
			return "", err
		}
		call.mock, call.workspaceID, projectID = m, m.WorkspaceID, m.ProjectID
	case "route":
		notFound = errRouteNotFound
		if s.cfg.Routes == nil {
			return "", notFound
		}
		rt, err := s.cfg.Routes.FindRoute(ctx, id)
		if err != nil {
			return "", err
		}
		p, err := s.cfg.Teams.FindProject(ctx, rt.ProjectID)
		if decoy.ErrorCode(err) == decoy.ENOTFOUND {
			return "", notFound // deleted meanwhile
		}
		if err != nil {
			return "", err
		}
		call.projectRoute, call.project, call.workspaceID, projectID = rt, p, p.WorkspaceID, p.ID
	case "project":
		notFound = errProjectNotFound
		p, err := s.cfg.Teams.FindProject(ctx, id)
		if err != nil {
			return "", err
		}
		call.project, call.workspaceID, projectID = p, p.WorkspaceID, p.ID
	case "ws":
		notFound = errWorkspaceNotFound
		w, err := s.cfg.Teams.FindWorkspace(ctx, id)
		if err != nil {
			return "", err
		}
		call.workspace, call.workspaceID = w, w.ID
	default:
		// A route of no workspace's resource (a preview, say) needs the
		// role in some workspace.
		ok, err := s.hasRole(ctx, c, rt.need.role())
		if err != nil {
			return "", err
		}
		if !ok {
			return "", forbidden(action, string(rt.need.role()))
		}
		return id, nil
	}
	role, err := s.roleIn(ctx, c, call.workspaceID, projectID)
	if err != nil {
		return "", err
	}
	if role == "" {
		return "", notFound
	}
	if c.key != nil && c.key.ProjectID != nil && scope == "ws" && !rt.projectKey {
		return "", answer.ErrNotFound
	}
	call.role = role
	if !role.Allows(rt.need.role()) {
		return "", forbidden(action, string(rt.need.role()))
	}
	return id, nil
}

// roleIn returns the caller's role in a workspace, for a resource of
// projectID (empty: the workspace itself), or "" when the caller cannot
// see it. The server admin is an owner everywhere.
func (s *API) roleIn(ctx context.Context, c *caller, workspaceID, projectID string) (decoy.Role, error) {
	switch {
	case c.admin:
		return decoy.RoleOwner, nil
	case c.key != nil:
		if c.key.WorkspaceID != workspaceID || (c.key.ProjectID != nil && projectID != "" && *c.key.ProjectID != projectID) {
			return "", nil
		}
		return c.key.Role, nil
	case c.user != nil:
		role, err := s.cfg.Teams.MemberRole(ctx, workspaceID, c.user.ID)
		if decoy.ErrorCode(err) == decoy.ENOTFOUND {
			return "", nil
		}
		return role, err
	}
	return "", nil
}

// hasRole reports whether the caller holds role in some workspace.
func (s *API) hasRole(ctx context.Context, c *caller, role decoy.Role) (bool, error) {
	switch {
	case c.admin:
		return true, nil
	case c.key != nil:
		return c.key.Role.Allows(role), nil
	case c.user != nil:
		ms, err := s.cfg.Teams.Memberships(ctx, c.user.ID)
		if err != nil {
			return false, err
		}
		for _, m := range ms {
			if m.Role.Allows(role) {
				return true, nil
			}
		}
	}
	return false, nil
}
