package server

import (
	"net/http"
	"strings"
)

// CORS beyond the reads (§1.7, §11.3): a web app on another origin must
// read Decoy's JSON errors as it reads its data, or it sees a CORS failure
// instead of "Mock api not found". So every error answer carries the
// headers a read would (setCORS, under --cors-origins), whatever failed:
// an unknown path, a method, the client rate limit, a panic; and so do
// the answers net/http writes itself, rewritten by package transport,
// which carry what connHeader gives.
//
// The admin API answers other origins too, its successes included, with
// its preflights answered: it authenticates by bearer tokens, which a page
// of another origin can only send if it holds one. No answer ever carries
// Access-Control-Allow-Credentials, so a browser never lets another
// origin read an answer to a request that carried the Studio's session
// cookie (which is SameSite=Strict besides, so such a request does not
// carry it); and the preflight does not allow X-CSRF-Token, without which
// a session authorizes nothing. The Host check against DNS rebinding
// (host.go) runs before any of this, as before.
//
// The Studio's own answers (its page, files and session endpoint) carry no
// CORS headers: they are for the Studio's own origin only.

// adminMethods and adminHeaders are what a preflight of the admin API
// allows.
const (
	adminMethods = "GET, HEAD, POST, PUT, PATCH, DELETE"
	adminHeaders = "Authorization, Content-Type, If-None-Match, Decoy-Seed"
)

// corsAnswers reports whether the answers of r's section carry CORS
// headers: all but the Studio's, while it is on.
func (s *Server) corsAnswers(r *http.Request) bool {
	return s.sectionOf(r) != "studio" || s.studio == nil
}

// setErrorCORS sets the CORS headers of an error answer to r, unless the
// handler set them already or r's section has none.
func (s *Server) setErrorCORS(h http.Header, r *http.Request) {
	if _, set := h["Access-Control-Allow-Origin"]; set || varyOrigin(h) || !s.corsAnswers(r) {
		return
	}
	s.setCORS(h, r)
}

// varyOrigin reports whether h varies on Origin: setCORS ran, and found
// no allowed origin.
func varyOrigin(h http.Header) bool {
	for _, v := range h["Vary"] {
		for _, name := range strings.Split(v, ",") {
			if strings.EqualFold(strings.TrimSpace(name), "Origin") {
				return true
			}
		}
	}
	return false
}

// adminCORS sets the CORS headers of an admin API answer and answers a
// preflight, which it reports.
func (s *Server) adminCORS(w http.ResponseWriter, r *http.Request) bool {
	h := w.Header()
	s.setCORS(h, r)
	if !isPreflight(r) {
		return false
	}
	if h.Get("Access-Control-Allow-Origin") != "" {
		h.Set("Access-Control-Allow-Methods", adminMethods)
		h.Set("Access-Control-Allow-Headers", adminHeaders)
		h.Set("Access-Control-Max-Age", "600")
	}
	w.WriteHeader(http.StatusNoContent)
	return true
}

// connHeader is the CORS header lines of the answers package transport
// writes in net/http's stead. No request is parsed there, so its Origin is
// unknown: an open policy (*) applies all the same, but a list of origins
// cannot be checked against it, and those answers then carry none.
func (s *Server) connHeader() []string {
	if !s.corsAny {
		return nil
	}
	return []string{"Access-Control-Allow-Origin: *", "Access-Control-Expose-Headers: " + exposedHeaders}
}
