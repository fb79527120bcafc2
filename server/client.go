package server

import (
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"

	"github.com/decoy-mock/decoy/answer"
)

// clientAddr is the address of the client behind a request: the one failed
// authentication and the client rate limit are counted per, and that logs
// show. It is the peer's address, unless the peer is a trusted proxy: then
// X-Forwarded-For is read from the right, skipping trusted proxies, and the
// first address that is not one is the client. A client cannot spoof it by
// sending its own X-Forwarded-For, since only what trusted proxies appended
// is believed.
func (s *Server) clientAddr(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	if len(s.cfg.TrustedProxies) == 0 {
		return host
	}
	peer, err := netip.ParseAddr(host)
	if err != nil || !s.trusted(peer) {
		return host
	}
	client := peer
	fields := r.Header.Values("X-Forwarded-For")
	for i := len(fields) - 1; i >= 0; i-- {
		hops := strings.Split(fields[i], ",")
		for j := len(hops) - 1; j >= 0; j-- {
			hop := strings.TrimSpace(hops[j])
			if hop == "" {
				continue
			}
			a, ok := parseHop(hop)
			if !ok {
				// Not an address ("unknown", say), written by a trusted
				// proxy: it names the client as well as anything can,
				// and lumping it with the proxy would make one bucket of
				// every client.
				return hop[:min(len(hop), 64)]
			}
			client = a
			if !s.trusted(a) {
				return a.String()
			}
		}
	}
	return client.Unmap().String()
}

// parseHop reads an address of X-Forwarded-For, with or without a port or
// brackets, as proxies write them.
func parseHop(hop string) (netip.Addr, bool) {
	if a, err := netip.ParseAddr(hop); err == nil {
		return a.Unmap().WithZone(""), true
	}
	if ap, err := netip.ParseAddrPort(hop); err == nil {
		return ap.Addr().Unmap().WithZone(""), true
	}
	if strings.HasPrefix(hop, "[") && strings.HasSuffix(hop, "]") {
		if a, err := netip.ParseAddr(hop[1 : len(hop)-1]); err == nil {
			return a.Unmap().WithZone(""), true
		}
	}
	return netip.Addr{}, false
}

// limitKey is what the limits of a client count under: its address, or the
// /64 of an IPv6 one, since a host usually holds a whole /64 and could
// otherwise take a fresh budget per address; or, when its range holds many
// clients at once, the /48 or /32 around it (transport.ClientKeys), so
// that a flood of addresses makes a bounded number of windows. A /64 is
// written as its first address, as before; a /48 or a /32 with its length.
func (s *Server) limitKey(r *http.Request) string {
	addr := s.clientAddr(r)
	if a, err := netip.ParseAddr(addr); err == nil {
		p := s.clientKeys.Key(a)
		if p.Bits() == 64 || p.Bits() == p.Addr().BitLen() {
			return p.Addr().String()
		}
		return p.String()
	}
	return addr
}

// authKey is the key a client's failed authentications are counted under,
// whatever it guessed (mock tokens, the admin token, API keys, personal
// access tokens, passwords, invitations): one budget per client, so that
// guessing two kinds of credential gets it no more tries than one.
func (s *Server) authKey(r *http.Request) string { return "auth:" + s.limitKey(r) }

// TrustedProxy reports whether a is one of the trusted proxies.
func (s *Server) TrustedProxy(a netip.Addr) bool { return s.trusted(a) }

// trusted reports whether a is a trusted proxy.
func (s *Server) trusted(a netip.Addr) bool {
	a = a.Unmap()
	for _, p := range s.cfg.TrustedProxies {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// limitClient returns a 429 when the client behind r made more than
// ClientRateLimit requests in the last minute. Health, readiness and
// metrics are not limited, so monitoring is never locked out.
func (s *Server) limitClient(w http.ResponseWriter, r *http.Request) error {
	if s.cfg.ClientRateLimit == 0 || s.cfg.ClientLimiter == nil {
		return nil
	}
	switch s.sectionOf(r) {
	case "healthz", "readyz", "metrics":
		return nil
	}
	res, err := s.cfg.ClientLimiter.Allow(r.Context(), "client:"+s.limitKey(r), s.cfg.ClientRateLimit)
	if err != nil || res.Allowed {
		return nil // a limiter that fails lets requests through to the other limits
	}
	s.metrics.refusals.WithLabelValues(refusedClient).Inc()
	s.setCORS(w.Header(), r)
	return answer.New(http.StatusTooManyRequests, "Too many requests from this client. Maximum "+strconv.FormatInt(s.cfg.ClientRateLimit, 10)+" per minute.",
		"Retry-After", seconds(res.RetryAfter),
		"Connection", "close") // a flood of connections is not kept open either
}

// clients is the Server as the admin API's admin.Clients: failed
// authentications there are counted with those of mock tokens.
type clients Server

func (c *clients) Addr(r *http.Request) string     { return (*Server)(c).clientAddr(r) }
func (c *clients) LimitKey(r *http.Request) string { return (*Server)(c).authKey(r) }
func (c *clients) AuthBlocked(r *http.Request, key string) error {
	return (*Server)(c).authBlocked(r, key)
}
func (c *clients) AuthFailed(r *http.Request, key string, refusal *answer.Error) error {
	return (*Server)(c).authFailed(r, key, refusal)
}
