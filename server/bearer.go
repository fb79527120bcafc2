package server

import (
	"net/http"
	"strings"

	"github.com/decoy-mock/decoy/admin"
)

// bearerToken returns the mock token a request sends as Authorization:
// Bearer, the source that ranks after the token headers and before the
// auth_token parameter (§1.5). Only a Decoy secret (dcy_…) counts: one
// of another kind (an API key, the admin token) is then a wrong token,
// refused and counted as a failed attempt, while a value that is none of
// Decoy's (the JWT an app sends its real API, Basic credentials) is
// ignored, as if absent, so that an app's own credentials neither count
// against its address nor hide the auth_token parameter. With
// --token-header Authorization, a token sent with no scheme at all is
// taken too, as that flag made it be before Bearer was read.
func (s *Server) bearerToken(r *http.Request) string {
	v := strings.TrimSpace(headerValue(r.Header, "Authorization"))
	scheme, token, ok := strings.Cut(v, " ")
	switch {
	case ok && strings.EqualFold(scheme, "Bearer"):
		if token = strings.TrimSpace(token); strings.HasPrefix(token, admin.TokenPrefix) {
			return token
		}
	case !ok && v != "" && !strings.EqualFold(v, "Bearer") && isAuthorization(s.cfg.TokenHeader):
		return v
	}
	return ""
}

// isAuthorization reports whether a header name is Authorization.
func isAuthorization(name string) bool { return strings.EqualFold(name, "Authorization") }
