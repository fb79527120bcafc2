package server

import (
	"net"
	"net/http"
	"strconv"
	"strings"

	"github.com/decoy-mock/decoy"
	"github.com/decoy-mock/decoy/answer"
	"github.com/decoy-mock/decoy/mockcache"
	"github.com/decoy-mock/decoy/query"
	"github.com/decoy-mock/decoy/route"
)

// This file is the entry of a project's routes (§11 of the contract): a
// project answers at /p/{slug} followed by a route's path on any host,
// and at the route's path alone on {slug}.localhost and
// {slug}.{--routes-domain}. It finds the mock a request reaches through
// the project's routes, with what the route adds to the query; from there
// the read is the one every mock gets (read.go).

// errProjectNotFound answers an unknown slug.
var errProjectNotFound = answer.New(http.StatusNotFound, "Project not found")

// projectHost returns the slug of a request's Host when it is a project's
// host, {slug}.localhost or {slug}.{--routes-domain} (any port, any letter
// case), and false otherwise. The slug is not checked.
func (s *Server) projectHost(host string) (string, bool) {
	if !strings.Contains(host, ".") {
		return "", false // the usual case, an address or a bare name: no work
	}
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	for _, domain := range s.routeDomains {
		if slug, ok := strings.CutSuffix(host, domain); ok && slug != "" {
			return slug, true
		}
	}
	return "", false
}

// projectOf returns the slug of the project a request is for and the path
// after the project's prefix, escaped as it came (§11.1): on a project's
// host, every path; elsewhere, /p/{slug}/…. ok is false for a request that
// is no project's.
func (s *Server) projectOf(r *http.Request) (slug, path string, ok bool) {
	if slug, ok := s.projectHost(r.Host); ok {
		return slug, r.URL.EscapedPath(), true
	}
	if section(r.URL.Path) != "project" {
		return "", "", false
	}
	rest := strings.TrimPrefix(strings.TrimPrefix(r.URL.EscapedPath(), "/p"), "/")
	slug, path, _ = strings.Cut(rest, "/")
	return slug, "/" + path, true
}

// serveProject answers a request for a project: it finds the route and
// the mock it reaches, then reads it.
func (s *Server) serveProject(w http.ResponseWriter, r *http.Request) error {
	h := w.Header()
	s.setCORS(h, r)
	h["X-Content-Type-Options"] = valNosniff
	slug, path, _ := s.projectOf(r)
	if s.projects == nil || !decoy.ValidSlug(slug) {
		return errProjectNotFound
	}
	ctx := r.Context()
	pr, err := s.projects.Get(ctx, slug)
	if err != nil {
		return err
	}
	n := noteOf(w)
	n.project = pr.Project.ID
	if done, err := s.serveUpstream(w, r, pr, path); done {
		return err // passed to the project's upstream (§14, upstream.go)
	}
	if isPreflight(r) {
		allowed := pr.Table.Allowed(path)
		if allowed == 0 {
			return noRoute(r.Header.Get("Access-Control-Request-Method"), path)
		}
		s.preflightRoute(w, r, allowed)
		return nil
	}
	m := pr.Table.Match(r.Method, path)
	switch {
	case m.Route == nil && m.Allowed == 0:
		return noRoute(r.Method, path)
	case m.Route == nil:
		return answer.New(http.StatusMethodNotAllowed, "Method not allowed", "Allow", m.Allowed.String())
	}
	rt := m.Route
	n.route = rt.ID
	e, err := s.cache.Get(ctx, rt.MockID)
	if decoy.ErrorCode(err) == decoy.ENOTFOUND {
		// Deleted with its routes since the table was read.
		s.projects.Remove(pr.Project.ID)
		return noRoute(r.Method, path)
	}
	if err != nil {
		return err
	}
	n.mock = e.Mock.ID
	defer e.Release()
	t := routeTarget(e, pr, m)
	t.prefix = strings.TrimSuffix(r.URL.EscapedPath(), path)
	return s.read(w, r, t)
}

// errWriteNotServed answers a route that writes (§12) on a server whose
// store keeps no live data.
func errWriteNotServed(action string) error {
	return answer.New(http.StatusNotImplemented, "This route "+action+"s records: this server's store does not keep writes")
}

// noRoute is the 404 of a path no route of the project matches.
func noRoute(method, path string) error {
	return answer.New(http.StatusNotFound, "No route for "+method+" "+path)
}

// routeTarget is what a read through route m adds to the read of its mock
// e: each path parameter an $eq condition on its bound field, the items
// array, and for an item route its record alone (§11.4). The answers of an
// item route are not kept (one record costs little to find); those of a
// collection route are, under the route and its parameters.
func routeTarget(e *mockcache.Entry, pr *mockcache.ProjectRoutes, m route.Match) target {
	b := pr.Binding(m.Route)
	t := target{e: e, scope: query.Scope{Items: b.Items, One: b.One}, key: b.Key, keep: true}
	if b.Rules != nil {
		t.rules, t.routeID, t.params = b.Rules, m.Route.ID, m.Params
	}
	if m.Route.Action != decoy.ActionRead {
		t.write, t.binding, t.params = m.Route.Action, b, m.Params
	}
	if len(m.Params) == 0 {
		return t
	}
	t.scope.Conditions = make([]query.Condition, len(m.Params))
	for k, p := range m.Params {
		t.scope.Conditions[k] = query.Bound(b.Fields[k], p.Value)
	}
	if b.One {
		t.keep = false
		return t
	}
	key := make([]byte, 0, len(b.Key)+32)
	key = append(key, b.Key...)
	for _, p := range m.Params {
		key = strconv.AppendInt(append(key, 0), int64(len(p.Value)), 10)
		key = append(append(key, ':'), p.Value...)
	}
	t.key = string(key)
	return t
}

// preflightRoute answers a CORS preflight on a path with routes: it
// allows the path's methods and the headers the request asks for.
func (s *Server) preflightRoute(w http.ResponseWriter, r *http.Request, allowed route.Methods) {
	h := w.Header()
	if h.Get("Access-Control-Allow-Origin") != "" {
		h.Set("Access-Control-Allow-Methods", allowed.String())
		headers := append([]string{"Content-Type", "Authorization", "If-None-Match"}, s.tokenHeaders...)
		for _, v := range r.Header.Values("Access-Control-Request-Headers") {
			for _, name := range strings.Split(v, ",") {
				if name = strings.TrimSpace(name); validHeaderName(name) && len(headers) < 64 {
					headers = append(headers, name)
				}
			}
		}
		h.Set("Access-Control-Allow-Headers", strings.Join(headers, ", "))
		h.Set("Access-Control-Max-Age", "600")
	}
	w.WriteHeader(http.StatusNoContent)
}

// validHeaderName reports whether s is a header name (an RFC 9110 token).
func validHeaderName(s string) bool {
	if s == "" || len(s) > 128 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return false
		}
	}
	return true
}
