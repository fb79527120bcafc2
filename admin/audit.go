package admin

import (
	"net/http"
	"strings"

	"github.com/decoy-mock/decoy"
	"github.com/decoy-mock/decoy/answer"
)

// This file keeps the audit log (§6.4): Serve records every change a
// route declares, once its handler succeeded. Reads are never recorded, and
// an entry holds names and ids only: never a secret or a data body.

// audit appends the entry of a change a handler made. A change outside
// any workspace (a user's) is kept with no workspace.
func (s *API) audit(r *http.Request, call *adminCall, id string) {
	action := call.auditAction
	if action == "" && call.route != nil {
		action = call.route.audit
	}
	if action == "" || call.unchanged || s.cfg.Teams == nil || call.caller == nil {
		return
	}
	ws := call.auditWorkspace
	if ws == "" {
		ws = call.workspaceID
	}
	target := call.auditTarget
	switch {
	case target != nil:
	case call.mock != nil:
		target = &decoy.AuditTarget{Kind: "mock", ID: call.mock.ID, Name: call.mock.Name}
	case call.project != nil:
		target = &decoy.AuditTarget{Kind: "project", ID: call.project.ID, Name: call.project.Name}
	case call.workspace != nil:
		target = &decoy.AuditTarget{Kind: "workspace", ID: call.workspace.ID, Name: call.workspace.Name}
	default:
		target = &decoy.AuditTarget{Kind: "unknown", ID: id}
	}
	e := &decoy.AuditEntry{
		WorkspaceID: ws,
		At:          s.cfg.Now().UTC(),
		Actor:       call.caller.actor(),
		Action:      action,
		Target:      *target,
		IP:          s.cfg.Clients.Addr(r),
	}
	ctx, cancel := writeContext(r)
	defer cancel()
	if err := s.cfg.Teams.AppendAudit(ctx, e); err != nil {
		// The change is made; failing its answer now would only make
		// the client try it again.
		s.log.Error("could not append to the audit log", "action", action, "workspace", ws, "err", err)
	}
}

// auditList is a page of the audit log.
type auditList struct {
	Entries    []*decoy.AuditEntry `json:"entries"`
	NextCursor *string             `json:"next_cursor"`
}

// listAudit is GET /workspaces/{ws}/audit?limit=&cursor=.
func (s *API) listAudit(w http.ResponseWriter, r *http.Request, ws string) error {
	limit, err := pageLimit(r)
	if err != nil {
		return err
	}
	entries, next, err := s.cfg.Teams.ListAudit(r.Context(), ws, r.URL.Query().Get("cursor"), limit)
	if err != nil {
		return err
	}
	out := auditList{Entries: entries, NextCursor: cursorOf(next)}
	if out.Entries == nil {
		out.Entries = []*decoy.AuditEntry{}
	}
	answer.JSON(w, http.StatusOK, out)
	return nil
}

// invitationsPath starts the paths that carry an invitation's secret.
const invitationsPath = "/admin/v1/invitations/"

// RedactPath hides the secret of an invitation path, for the logs: it is
// the one admin API route that takes a secret in its path.
func RedactPath(path string) string {
	rest, ok := strings.CutPrefix(path, invitationsPath)
	if !ok {
		return path
	}
	_, after, found := strings.Cut(rest, "/")
	if found {
		return invitationsPath + "REDACTED/" + after
	}
	return invitationsPath + "REDACTED"
}
