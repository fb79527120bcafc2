package server

import (
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"

	"github.com/decoy-mock/decoy/answer"
)

// Hosts: a browser page on any site can reach a server on the visitor's own
// machine under a name the attacker's DNS points at 127.0.0.1 (DNS
// rebinding), and then reads the answers as same-origin. A server on a
// loopback address is only ever meant to be reached by loopback names, so
// the Studio and the admin API refuse any other Host there, unless it is
// named with --allowed-hosts. Reads of mocks are open to any Host, as the
// contract wants: they carry their own CORS rules and tokens.

// newHostCheck returns the names accepted besides loopback ones, or nil
// when the server does not listen on a loopback address (then every Host
// is accepted: it is reached over a network, by whatever name).
func newHostCheck(addr string, allowed []string, publicURL string) map[string]bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil
	}
	if a, err := netip.ParseAddr(host); !(err == nil && a.IsLoopback() || isLoopbackName(host)) {
		return nil
	}
	names := map[string]bool{}
	for _, h := range allowed {
		names[strings.ToLower(strings.TrimSpace(h))] = true
	}
	if u, err := url.Parse(publicURL); err == nil && u.Hostname() != "" {
		names[strings.ToLower(u.Hostname())] = true
	}
	return names
}

func isLoopbackName(h string) bool {
	h = strings.ToLower(strings.TrimSuffix(h, "."))
	return h == "localhost" || strings.HasSuffix(h, ".localhost")
}

// checkHost refuses a request to the Studio or the admin API whose Host is
// not a loopback name or address, nor an allowed one, when the server
// listens on loopback.
func (s *Server) checkHost(r *http.Request) error {
	if s.hosts == nil {
		return nil
	}
	host := r.Host
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if a, err := netip.ParseAddr(host); err == nil && a.IsLoopback() || isLoopbackName(host) || s.hosts[strings.ToLower(host)] {
		return nil
	}
	return answer.New(http.StatusForbidden, "Host "+strconv.Quote(host)+" is not allowed: this server listens on a loopback address, "+
		"so the Studio and the admin API answer loopback names only; add the name with --allowed-hosts")
}
