package server

import (
	"net/http"

	"github.com/decoy-mock/decoy"
	"github.com/decoy-mock/decoy/studio"
)

// This file joins Decoy Studio to the server: its routes, sign-in through
// the admin token (counted by the failed-authentication limit), the admin
// API authorized by a Studio session, and the usage history its charts
// read.

// newStudio returns the Studio handler, or nil when the Studio is off.
func (s *Server) newStudio() *studio.Handler {
	if s.cfg.Sessions == nil {
		return nil
	}
	var checkPassword func(*http.Request, string, string) (string, error)
	if s.cfg.Teams != nil {
		checkPassword = s.checkStudioPassword
	}
	return studio.New(studio.Config{
		Sessions:        s.cfg.Sessions,
		AdminTokenHash:  s.cfg.AdminTokenHash,
		CheckAdminToken: s.checkAdminToken,
		CheckPassword:   checkPassword,
		Fail:            s.writeError,
		PublicURL:       s.cfg.PublicURL,
		Now:             s.cfg.Now,
	})
}

// serveStudio serves the Studio's routes; with the Studio off they are
// unknown paths, as any other.
func (s *Server) serveStudio(w http.ResponseWriter, r *http.Request) error {
	if s.studio == nil {
		return errNotFound
	}
	s.studio.ServeHTTP(w, r)
	return nil
}

// checkAdminToken checks the admin token given at a Studio sign-in, exactly
// as the bearer token of the admin API is checked: a wrong one counts as a
// failed attempt of the client, and a client past the limit is refused
// even the right one.
func (s *Server) checkAdminToken(r *http.Request, token string) error {
	key := "admin-token:" + s.limitKey(r)
	if err := s.authBlocked(r, key); err != nil {
		return err
	}
	if tokenMatches(token, s.cfg.AdminTokenHash) {
		return nil
	}
	return s.authFailed(r, key, errorAnswer(http.StatusUnauthorized, "Invalid admin token"))
}

// studioAuthorized authorizes an admin API request that carries a Studio
// session cookie and no bearer token: the session must be live and the
// X-CSRF-Token header right; its caller is the server admin, or the user
// who signed in with a password. done is false when the request is not
// the Studio's, and the bearer token decides.
func (s *Server) studioAuthorized(w http.ResponseWriter, r *http.Request) (c *caller, err error, done bool) {
	if s.studio == nil || r.Header.Get("Authorization") != "" || !studio.HasSession(r) {
		return nil, nil, false
	}
	userID, err := s.studio.Authorize(w, r)
	switch {
	case err != nil:
		return nil, err, true
	case userID == "":
		return &caller{admin: true}, nil, true
	case s.cfg.Teams == nil:
		return nil, errorAnswer(http.StatusUnauthorized, "Session expired or signed out; sign in again"), true
	}
	u, err := s.cfg.Teams.FindUser(r.Context(), userID)
	if decoy.ErrorCode(err) == decoy.ENOTFOUND { // deleted since
		return nil, errorAnswer(http.StatusUnauthorized, "Session expired or signed out; sign in again"), true
	}
	if err != nil {
		return nil, err, true
	}
	return &caller{user: u, admin: u.ServerAdmin}, nil, true
}

// checkStudioPassword checks the email and password of a Studio sign-in.
func (s *Server) checkStudioPassword(r *http.Request, email, password string) (string, error) {
	u, err := s.checkPassword(r, email, password)
	if err != nil {
		return "", err
	}
	return u.ID, nil
}

// usageHistory is GET /admin/v1/mocks/{id}/usage/history: the mock's
// served and refused reads per minute over the last hour and per day over
// the month.
func (s *Server) usageHistory(w http.ResponseWriter, r *http.Request, id string) error {
	if _, err := s.cfg.Store.FindMock(r.Context(), id); err != nil {
		return err
	}
	if s.cfg.Usage == nil {
		return decoy.Errorf(decoy.ENOTFOUND, "This server keeps no usage history")
	}
	h, err := s.cfg.Usage.History(r.Context(), id, s.cfg.Now())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, h)
	return nil
}
