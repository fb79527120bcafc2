package server

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/decoy-mock/decoy"
	"github.com/decoy-mock/decoy/answer"
	"github.com/decoy-mock/decoy/fallback"
	"github.com/decoy-mock/decoy/transport"
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

// clientKey is what a client's limits count under: its address, or the
// /64 of an IPv6 one (transport.ClientKey), since a host usually holds a
// whole /64 and could otherwise take a fresh budget per address. An IPv6
// client's events count under its /48 and /32 too (clientWindows).
func (s *Server) clientKey(r *http.Request) string {
	addr := s.clientAddr(r)
	if strings.IndexByte(addr, ':') < 0 {
		return addr // IPv4, or what a trusted proxy wrote
	}
	if a, err := netip.ParseAddr(addr); err == nil {
		return transport.ClientKey(a).String()
	}
	return addr
}

// authKey is the key a client's failed authentications are counted under,
// whatever it guessed (mock tokens, the admin token, API keys, personal
// access tokens, passwords, invitations): one budget per client, so that
// guessing two kinds of credential gets it no more tries than one.
func (s *Server) authKey(r *http.Request) string { return authPrefix + s.clientKey(r) }

// authPrefix begins the keys of failed authentications.
const authPrefix = "auth:"

// clientWindow is a limiter's key an event of a client counts under, and
// the limit there.
type clientWindow struct {
	key   string
	limit int64
	// client is false for a range of clients around the client (an IPv6
	// /48 or /32).
	client bool
}

// clientWindows returns the windows an event of client (as clientKey
// gives it) counts in, with prefix before each key, under a limit of per:
// the client's own, and for an IPv6 /64 also its /48 and /32, with 64 and
// 4,096 times the limit (transport.ClientRanges), the broadest first.
func clientWindows(prefix, client string, per int64) []clientWindow {
	own := clientWindow{key: prefix + client, limit: per, client: true} // a /64 keyed as before
	if strings.IndexByte(client, ':') < 0 {
		return []clientWindow{own}
	}
	a, err := netip.ParseAddr(client)
	if err != nil {
		return []clientWindow{own}
	}
	rs, n := transport.ClientRanges(a)
	ws := make([]clientWindow, 0, n)
	for _, r := range rs[:n-1] {
		ws = append(ws, clientWindow{key: prefix + r.Prefix.String(), limit: per * r.Scale})
	}
	return append(ws, own)
}

// allowClient admits one event in every window of ws. The client's own
// window is looked at first, admitting nothing, so that a client over its
// own limit is refused without holding its ranges' budget meanwhile; then
// each is asked the broadest first, so that a narrower window is made
// only for an event its ranges admitted. At the first that refuses, those
// admitted are taken back. A refusal returns the result and window of the
// refusing window that frees last.
func (s *Server) allowClient(ctx context.Context, l decoy.Limiter, ws []clientWindow) (decoy.RateResult, clientWindow, error) {
	if len(ws) > 1 {
		own := ws[len(ws)-1]
		st, err := l.Peek(ctx, own.key, own.limit)
		if err != nil || !st.Allowed {
			return st, own, err
		}
	}
	admitted := make([]decoy.RateResult, 0, 3)
	for i, w := range ws {
		res, err := l.Allow(ctx, w.key, w.limit)
		if err == nil && res.Allowed {
			admitted = append(admitted, res)
			continue
		}
		// Taken back: the event is refused, or not counted where it
		// could not be.
		undo := context.WithoutCancel(ctx)
		for j, a := range admitted {
			if err := l.Undo(undo, ws[j].key, a); err != nil && !errors.Is(err, fallback.ErrSharedDown) {
				s.log.Error("undo a client's event", "key", ws[j].key, "err", err)
			}
		}
		if err != nil {
			return res, w, err
		}
		// A narrower range may be full too, and free later.
		for _, n := range ws[i+1 : max(i+1, len(ws)-1)] {
			if st, err := l.Peek(ctx, n.key, n.limit); err == nil && !st.Allowed && freesIn(st) > freesIn(res) {
				res, w = st, n
			}
		}
		return res, w, nil
	}
	return decoy.RateResult{Allowed: true}, clientWindow{}, nil
}

// peekClient reports whether an event of ws would be admitted, admitting
// nothing; when not, the result of the refusing window that frees last.
func peekClient(ctx context.Context, l decoy.Limiter, ws []clientWindow) (decoy.RateResult, bool, error) {
	refused := decoy.RateResult{Allowed: true}
	for _, w := range ws {
		st, err := l.Peek(ctx, w.key, w.limit)
		if err != nil {
			return st, false, err
		}
		if !st.Allowed && (refused.Allowed || freesIn(st) > freesIn(refused)) {
			refused = st
		}
	}
	return refused, refused.Allowed, nil
}

// freesIn is how long until the window of a refusal admits again.
func freesIn(r decoy.RateResult) time.Duration {
	if r.RetryAfter > 0 {
		return r.RetryAfter
	}
	return r.Reset // a Peek's: when the oldest event leaves
}

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
	res, win, err := s.allowClient(r.Context(), s.cfg.ClientLimiter, clientWindows("client:", s.clientKey(r), s.cfg.ClientRateLimit))
	if err != nil || res.Allowed {
		return nil // a limiter that fails lets requests through to the other limits
	}
	s.metrics.refusals.WithLabelValues(refusedClient).Inc()
	s.setCORS(w.Header(), r)
	msg := "Too many requests from this client. Maximum " + strconv.FormatInt(win.limit, 10) + " per minute."
	if !win.client {
		msg = "Too many requests from this client's network. Maximum " + strconv.FormatInt(win.limit, 10) + " per minute."
	}
	return answer.New(http.StatusTooManyRequests, msg,
		"Retry-After", seconds(freesIn(res)),
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
