package admin

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/decoy-mock/decoy"
	"github.com/decoy-mock/decoy/answer"
	"github.com/decoy-mock/decoy/route"
	"github.com/decoy-mock/decoy/rule"
)

// Routes (§11.2 of the contract): a project's answers at its API's own
// paths. GET, POST /projects/{project}/routes; GET, PATCH, DELETE
// /routes/{route}. Viewers see them, editors change them (access.go). A
// change drops the project's compiled routes here and is announced to the
// other replicas, as a mock's change is.

// routeFields names the fields of a route a request may send.
const routeFields = "method, path, mock_id and optionally action, bind, items and rules"

// routeIn is a route as a request sends it. Items is raw so that a PATCH
// can tell null (clear it) from absent (keep it); Rules so that each rule
// is read strictly, naming the rule that is wrong (decodeRules).
type routeIn struct {
	Method *string            `json:"method"`
	Path   *string            `json:"path"`
	MockID *string            `json:"mock_id"`
	Action *string            `json:"action"`
	Bind   *map[string]string `json:"bind"`
	Items  json.RawMessage    `json:"items"`
	Rules  json.RawMessage    `json:"rules"`
}

// items reads the items field: set reports whether it was sent, and a nil
// value means null.
func (in *routeIn) items() (value *string, set bool, err error) {
	if in.Items == nil {
		return nil, false, nil
	}
	if err := json.Unmarshal(in.Items, &value); err != nil {
		return nil, true, decoy.Errorf(decoy.EINVALID, "Invalid items: it must be a dot path or null")
	}
	return value, true, nil
}

type routeList struct {
	Routes []*decoy.Route `json:"routes"`
}

// routeStore returns the store of routes, or a 501 without one.
func (s *API) routeStore() (decoy.RouteStore, error) {
	if s.cfg.Routes == nil {
		return nil, answer.New(http.StatusNotImplemented, "This server keeps no routes")
	}
	return s.cfg.Routes, nil
}

// listRoutes is GET /projects/{project}/routes.
func (s *API) listRoutes(w http.ResponseWriter, r *http.Request, id string) error {
	rs, err := s.routeStore()
	if err != nil {
		return err
	}
	routes, err := rs.ListRoutes(r.Context(), id)
	if err != nil {
		return err
	}
	if routes == nil {
		routes = []*decoy.Route{}
	}
	answer.JSON(w, http.StatusOK, routeList{Routes: routes})
	return nil
}

// createRoute is POST /projects/{project}/routes.
func (s *API) createRoute(w http.ResponseWriter, r *http.Request, projectID string) error {
	rs, err := s.routeStore()
	if err != nil {
		return err
	}
	var in routeIn
	if err := decodeBodyUpTo(w, r, &in, routeFields, maxRouteBytes); err != nil {
		return err
	}
	for _, f := range []struct {
		name string
		v    *string
	}{{"method", in.Method}, {"path", in.Path}, {"mock_id", in.MockID}} {
		if f.v == nil || *f.v == "" {
			return decoy.Errorf(decoy.EINVALID, "Invalid route: %s is required", f.name)
		}
	}
	rt := &decoy.Route{ProjectID: projectID, Method: *in.Method, Path: *in.Path, MockID: *in.MockID}
	if err := in.applyTo(rt); err != nil {
		return err
	}
	if err := s.checkRoute(rt); err != nil {
		return err
	}
	if err := s.checkRules(r.Context(), rt); err != nil {
		return err
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	ctx, cancel := writeContext(r)
	defer cancel()
	created, err := rs.CreateRoute(ctx, rt, s.maxRoutes())
	if err != nil {
		return err
	}
	s.routesChanged(ctx, projectID)
	callOf(r).auditTarget = routeTarget(created)
	w.Header().Set("Location", "/admin/v1/routes/"+created.ID)
	answer.JSON(w, http.StatusCreated, created)
	return nil
}

// applyTo sets on rt the optional fields in sends.
func (in *routeIn) applyTo(rt *decoy.Route) error {
	if in.Action != nil {
		rt.Action = *in.Action
	}
	if in.Bind != nil {
		rt.Bind = *in.Bind
	}
	items, set, err := in.items()
	if err != nil {
		return err
	}
	if set {
		rt.Items = items
	}
	if in.Rules != nil {
		if rt.Rules, err = decodeRules(in.Rules); err != nil {
			return err
		}
		// Rules sent now; those stored before, kept by a PATCH that
		// sends none, pass Check alone.
		if err := rule.CheckSent(rt.Rules); err != nil {
			return err
		}
	}
	return nil
}

// checkRoute validates a route (§11.2) and fills in its defaults: the
// action its method and path imply, an empty bind.
func (s *API) checkRoute(rt *decoy.Route) error {
	t, err := route.Validate(rt)
	if err != nil {
		return err
	}
	if rt.Action == "" {
		rt.Action = t.DefaultAction(rt.Method)
	}
	if rt.Bind == nil {
		rt.Bind = map[string]string{}
	}
	id, ok := decoy.CanonicalID(rt.MockID)
	if !ok {
		return decoy.ErrMockNotInProject
	}
	rt.MockID = id
	return nil
}

// getRoute is GET /routes/{route}.
func (s *API) getRoute(w http.ResponseWriter, r *http.Request, _ string) error {
	answer.JSON(w, http.StatusOK, callOf(r).projectRoute)
	return nil
}

// patchRoute is PATCH /routes/{route}: any of the fields; items null
// clears it, and an empty action is the default one. A new method or path
// that implies another default action changes the action too, unless the
// route's action was chosen (not its old default) or one is sent.
func (s *API) patchRoute(w http.ResponseWriter, r *http.Request, id string) error {
	rs, err := s.routeStore()
	if err != nil {
		return err
	}
	call := callOf(r)
	var in routeIn
	if err := decodeBodyUpTo(w, r, &in, routeFields, maxRouteBytes); err != nil {
		return err
	}
	old := call.projectRoute
	next := *old
	if in.Method != nil {
		next.Method = *in.Method
	}
	if in.Path != nil {
		next.Path = *in.Path
	}
	if in.MockID != nil {
		next.MockID = *in.MockID
	}
	if err := in.applyTo(&next); err != nil {
		return err
	}
	if in.Action == nil && (in.Method != nil || in.Path != nil) {
		if t, err := route.Parse(old.Path); err == nil && old.Action == t.DefaultAction(old.Method) {
			next.Action = "" // the default of the new method and path
		}
	}
	if err := s.checkRoute(&next); err != nil {
		return err
	}
	// The rules are checked against the route as it will be: a new path
	// may lose a parameter they read.
	if err := s.checkRules(r.Context(), &next); err != nil {
		return err
	}
	upd := decoy.RouteUpdate{Method: in.Method, Path: in.Path}
	if in.MockID != nil {
		upd.MockID = &next.MockID
	}
	if in.Bind != nil {
		upd.Bind = &next.Bind
	}
	if next.Action != old.Action {
		upd.Action = &next.Action
	}
	if in.Items != nil {
		upd.Items = &decoy.ItemsUpdate{Value: next.Items}
	}
	if in.Rules != nil {
		upd.Rules = &next.Rules
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	ctx, cancel := writeContext(r)
	defer cancel()
	updated, err := rs.UpdateRoute(ctx, id, upd)
	if err != nil {
		return err
	}
	s.routesChanged(ctx, updated.ProjectID)
	if upd.Rules != nil {
		s.resetRules(ctx, id) // new rules are counted from nothing
	}
	call.auditTarget = routeTarget(updated)
	answer.JSON(w, http.StatusOK, updated)
	return nil
}

// deleteRoute is DELETE /routes/{route}.
func (s *API) deleteRoute(w http.ResponseWriter, r *http.Request, id string) error {
	rs, err := s.routeStore()
	if err != nil {
		return err
	}
	call := callOf(r)
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	ctx, cancel := writeContext(r)
	defer cancel()
	if err := rs.DeleteRoute(ctx, id); err != nil {
		return err
	}
	s.routesChanged(ctx, call.projectRoute.ProjectID)
	s.resetRules(ctx, id) // the counts go with the route
	call.auditTarget = routeTarget(call.projectRoute)
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// routeTarget names a route in the audit log.
func routeTarget(rt *decoy.Route) *decoy.AuditTarget {
	return &decoy.AuditTarget{Kind: "route", ID: rt.ID, Name: rt.Method + " " + rt.Path}
}

// maxRoutes is the bound of a project's routes.
func (s *API) maxRoutes() int {
	if s.cfg.MaxRoutes > 0 {
		return s.cfg.MaxRoutes
	}
	return decoy.DefaultMaxRoutes
}

// routesChanged drops a project's compiled routes, after a change to them
// or to its slug (or its mocks' deletion, which takes their routes), and
// announces it to the other replicas. The caller holds writeMu.
func (s *API) routesChanged(ctx context.Context, projectID string) {
	s.announce(ctx, decoy.ProjectAnnouncement+projectID)
	if s.cfg.Projects != nil {
		s.cfg.Projects.Remove(projectID)
	}
}
