package server

import (
	"net/http"

	"github.com/decoy-mock/decoy/answer"
	"github.com/decoy-mock/decoy/studio"
)

// This file joins Decoy Studio to the server: its routes, sign-in through
// the admin token (counted by the failed-authentication limit) or a
// password (checked by the admin API), and the Studio session that
// authorizes admin API requests.

// newStudio returns the Studio handler, or nil when the Studio is off.
func (s *Server) newStudio() *studio.Handler {
	if s.cfg.Sessions == nil {
		return nil
	}
	var checkPassword func(*http.Request, string, string) (string, error)
	if s.cfg.Teams != nil {
		checkPassword = s.admin.CheckPassword
	}
	return studio.New(studio.Config{
		Sessions:        s.cfg.Sessions,
		AdminTokenHash:  s.cfg.AdminTokenHash,
		CheckAdminToken: s.admin.CheckAdminToken,
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
		return answer.ErrNotFound
	}
	s.studio.ServeHTTP(w, r)
	return nil
}

// studioSession authorizes an admin API request that carries a Studio
// session cookie and no bearer token: the session must be live and the
// X-CSRF-Token header right. ok is false when the request is not the
// Studio's, and the bearer token decides.
func (s *Server) studioSession(w http.ResponseWriter, r *http.Request) (userID string, ok bool, err error) {
	if s.studio == nil || r.Header.Get("Authorization") != "" || !studio.HasSession(r) {
		return "", false, nil
	}
	userID, err = s.studio.Authorize(r)
	return userID, true, err
}
