package main

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/decoy-mock/decoy"
	"github.com/decoy-mock/decoy/client"
)

// Handles: wherever a command takes a workspace, a project or a mock, it
// takes its id or its name. A name is looked up among what the caller
// sees, through the admin API the command calls anyway; one that names
// nothing, or more than one thing, is an error that lists the matches, so
// that the caller can pick an id. A project may also be WORKSPACE/PROJECT,
// which tells apart the projects of one name in several workspaces.

// uuidText is the form of the ids of workspaces, projects and mocks.
var uuidText = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

// isID reports whether a handle is an id, sent as it is.
func isID(handle string) bool { return uuidText.MatchString(handle) }

// mostHandleMatches bounds the mocks a name is looked for among: pages
// of 1,000 are read until it is reached.
const mostHandleMatches = 10000

// named is one thing a name may stand for.
type named struct {
	kind, name, id string
	// where places it, for the list of matches: the workspace of a
	// project, the project of a mock.
	where string
	// slug is a project's (§11.1): unique on the server, so one names it
	// when its name does not.
	slug string
}

// handles resolves handles to ids with the caller's client.
type handles struct {
	cl *client.Client
}

// pick returns the id of the one match of a name, else an error that
// lists them (or says there are none). Exact matches win over matches in
// another case.
func pick(kind, handle string, all []named) (string, error) {
	var exact, folded []named
	for _, n := range all {
		switch {
		case n.name == handle:
			exact = append(exact, n)
		case strings.EqualFold(n.name, handle):
			folded = append(folded, n)
		}
	}
	matches := exact
	if len(matches) == 0 {
		matches = folded
	}
	switch len(matches) {
	case 0:
		if kind == "project" {
			return "", fmt.Errorf("no project named %q among those you see, and none has it as its slug: give its id, its exact name or its slug", handle)
		}
		return "", fmt.Errorf("no %s named %q among those you see: give its id or its exact name", kind, handle)
	case 1:
		return matches[0].id, nil
	}
	sort.Slice(matches, func(i, j int) bool { return matches[i].where+matches[i].id < matches[j].where+matches[j].id })
	lines := make([]string, len(matches))
	for i, m := range matches {
		lines[i] = "  " + m.name + "  " + m.id
		if m.where != "" {
			lines[i] += "  (" + m.where + ")"
		}
	}
	return "", fmt.Errorf("%d %ss are named %q; give the id of the one you mean:\n%s", len(matches), kind, handle, strings.Join(lines, "\n"))
}

// workspaces lists the workspaces the caller sees.
func (h handles) workspaces(ctx context.Context) ([]named, error) {
	var page struct {
		Workspaces []struct{ ID, Name string } `json:"workspaces"`
	}
	if err := h.cl.Do(ctx, "GET", "/admin/v1/workspaces", nil, &page); err != nil {
		return nil, err
	}
	all := make([]named, len(page.Workspaces))
	for i, w := range page.Workspaces {
		all[i] = named{kind: "workspace", name: w.Name, id: w.ID}
	}
	return all, nil
}

// workspace returns the id of a workspace's handle.
func (h handles) workspace(ctx context.Context, handle string) (string, error) {
	if handle == "" || isID(handle) {
		return handle, nil
	}
	all, err := h.workspaces(ctx)
	if err != nil {
		return "", err
	}
	return pick("workspace", handle, all)
}

// projects lists the projects of the workspace ws, or of every workspace
// the caller sees when ws is empty.
func (h handles) projects(ctx context.Context, ws string) ([]named, error) {
	spaces := []named{{id: ws}}
	if ws == "" {
		var err error
		if spaces, err = h.workspaces(ctx); err != nil {
			return nil, err
		}
	}
	var all []named
	for _, w := range spaces {
		var page struct {
			Projects []struct{ ID, Name, Slug string } `json:"projects"`
		}
		if err := h.cl.Do(ctx, "GET", "/admin/v1/workspaces/"+url.PathEscape(w.id)+"/projects", nil, &page); err != nil {
			return nil, err
		}
		for _, p := range page.Projects {
			all = append(all, named{kind: "project", name: p.Name, id: p.ID, where: "workspace " + cmpName(w.name, w.id), slug: p.Slug})
		}
	}
	return all, nil
}

// project returns the id of a project's handle: an id, a name, or
// WORKSPACE/NAME; ws (a workspace's handle, may be empty) narrows the
// names looked among. "default" is the server's default project when the
// caller sees it, as it always was.
func (h handles) project(ctx context.Context, handle, ws string) (string, error) {
	if handle == "" || isID(handle) {
		return handle, nil
	}
	if w, name, ok := strings.Cut(handle, "/"); ok && ws == "" {
		ws, handle = w, name
	}
	if handle == decoy.DefaultName && ws == "" {
		// The server's default project, when the caller sees it, is the
		// one "default" names among several, as it always was: asked
		// first, it spares a look through every workspace.
		err := h.cl.Do(ctx, "GET", "/admin/v1/projects/"+decoy.DefaultProjectID, nil, nil)
		if err == nil {
			return decoy.DefaultProjectID, nil
		}
	}
	wsID, err := h.workspace(ctx, ws)
	if err != nil {
		return "", err
	}
	all, err := h.projects(ctx, wsID)
	if err != nil {
		if handle == decoy.DefaultName && ws == "" && notFound(err) {
			return decoy.DefaultProjectID, nil // a server without teams
		}
		return "", err
	}
	if !slices.ContainsFunc(all, func(p named) bool { return strings.EqualFold(p.name, handle) }) {
		// A slug names one project on the server, the one /p/{slug}
		// answers at: looked for when no name matches.
		for _, p := range all {
			if p.slug == handle {
				return p.id, nil
			}
		}
	}
	id, err := pick("project", handle, all)
	if err != nil && ws == "" && len(all) > 0 {
		err = fmt.Errorf("%w\n(or name it WORKSPACE/%s)", err, handle)
	}
	return id, err
}

// projectOrDefault returns the id of the project of --project, the
// default one when it is empty.
func (h handles) projectOrDefault(ctx context.Context, handle string) (string, error) {
	if handle == "" {
		handle = decoy.DefaultName
	}
	return h.project(ctx, handle, "")
}

// mock returns the id of a mock's handle, looked for among the mocks of
// project (an id; empty: every mock the caller sees).
func (h handles) mock(ctx context.Context, handle, project string) (string, error) {
	if handle == "" || isID(handle) {
		return handle, nil
	}
	var all []named
	cursor := ""
	for len(all) < mostHandleMatches {
		mocks, next, err := h.cl.SearchMocks(ctx, client.MockQuery{Q: handle, ProjectID: project}, cursor, 1000)
		if err != nil {
			return "", err
		}
		for _, m := range mocks {
			all = append(all, named{kind: "mock", name: m.Name, id: m.ID, where: "project " + m.ProjectID})
		}
		if next == "" {
			break
		}
		cursor = next
	}
	return pick("mock", handle, all)
}

// route returns the id of a route's handle: an id, or "METHOD PATH" (as
// decoy route list shows them) in the project of the handle project, where
// a method and a path name one route at most.
func (h handles) route(ctx context.Context, handle, project string) (string, error) {
	if handle == "" || isID(handle) {
		return handle, nil
	}
	method, path, ok := strings.Cut(strings.TrimSpace(handle), " ")
	if !ok || !strings.HasPrefix(strings.TrimSpace(path), "/") {
		return "", usagef("a route is its id, or its METHOD PATH with --project, such as \"GET /users/{id}\"; not %q", handle)
	}
	if project == "" {
		return "", usagef("a route named by its method and path needs --project")
	}
	id, err := h.project(ctx, project, "")
	if err != nil {
		return "", err
	}
	var page struct {
		Routes []struct{ ID, Method, Path string } `json:"routes"`
	}
	if err := h.cl.Do(ctx, "GET", "/admin/v1/projects/"+url.PathEscape(id)+"/routes", nil, &page); err != nil {
		return "", err
	}
	method, path = strings.ToUpper(method), strings.TrimSpace(path)
	// As the server tells two routes apart (§11.2): by method and path,
	// its parameters' names aside (/users/{uid} is /users/{id}).
	for _, r := range page.Routes {
		if r.Method == method && decoy.PathShape(r.Path) == decoy.PathShape(path) {
			return r.ID, nil
		}
	}
	return "", fmt.Errorf("no route %s %s in project %s: decoy route list --project %s shows its routes", method, path, project, project)
}

// cmpName is a thing's name, or its id when it has none (a workspace
// given by id).
func cmpName(name, id string) string {
	if name == "" {
		return id
	}
	return name
}

// notFound reports whether err is the server's 404.
func notFound(err error) bool {
	var ce *client.Error
	return errors.As(err, &ce) && ce.Status == 404
}

// The commands of the teams groups build their calls before they have a
// client: a handle goes into a call's path or body as a reference,
// {kind:handle:scope}, which resolve replaces with the id. The parts are
// query-escaped, so that neither braces nor colons of a name (nor of a
// path segment, which is path-escaped) are taken for a reference's.
var reference = regexp.MustCompile(`\{(ws|project|mock|route):([^{}:]*):([^{}:]*)\}`)

func ref(kind, handle, scope string) string {
	if handle == "" {
		return ""
	}
	return "{" + kind + ":" + url.QueryEscape(handle) + ":" + url.QueryEscape(scope) + "}"
}

// wsRef is a reference to a workspace's handle.
func wsRef(handle string) string { return ref("ws", handle, "") }

// projectRef is a reference to a project's handle, among the projects
// of the workspace of the handle ws (empty: of every workspace).
func projectRef(handle, ws string) string { return ref("project", handle, ws) }

// mockRef is a reference to a mock's handle, among the mocks of the
// project of the handle project (empty: every mock).
func mockRef(handle, project string) string { return ref("mock", handle, project) }

// routeRef is a reference to a route's handle: its id, or its METHOD PATH
// in the project of the handle project.
func routeRef(handle, project string) string { return ref("route", handle, project) }

// resolveRef returns the id a reference stands for.
func (h handles) resolveRef(ctx context.Context, kind, handle, scope string) (string, error) {
	handle, _ = url.QueryUnescape(handle)
	scope, _ = url.QueryUnescape(scope)
	switch kind {
	case "ws":
		return h.workspace(ctx, handle)
	case "project":
		return h.project(ctx, handle, scope)
	case "route":
		return h.route(ctx, handle, scope)
	}
	project, err := h.project(ctx, scope, "")
	if err != nil {
		return "", err
	}
	return h.mock(ctx, handle, project)
}

// resolve replaces the references of a call's path (with the path-escaped
// id) and of its body's values (with the id).
func (h handles) resolve(ctx context.Context, c call) (call, error) {
	var err error
	path := reference.ReplaceAllStringFunc(c.path, func(r string) string {
		m := reference.FindStringSubmatch(r)
		id, rerr := h.resolveRef(ctx, m[1], m[2], m[3])
		if rerr != nil && err == nil {
			err = rerr
		}
		return url.PathEscape(id)
	})
	if err != nil {
		return c, err
	}
	c.path = path
	value := func(v string) (string, error) {
		if m := reference.FindStringSubmatch(v); m != nil && m[0] == v {
			return h.resolveRef(ctx, m[1], m[2], m[3])
		}
		return v, nil
	}
	switch body := c.body.(type) {
	case map[string]string:
		for k, v := range body {
			if body[k], err = value(v); err != nil {
				return c, err
			}
		}
	case map[string]any:
		for k, v := range body {
			if s, ok := v.(string); ok {
				if body[k], err = value(s); err != nil {
					return c, err
				}
			}
		}
	}
	return c, nil
}
