// Package upstream passes a project's requests to its upstream, the real
// backend it stands in for (§14 of the contract): an
// httputil.ReverseProxy with Rewrite, which keeps the method, the path
// under the upstream's base, the query, the body (streamed) and the
// headers, less hop-by-hop headers and Decoy's own secrets; and a dialer
// that refuses, at every connection, an address that is not public
// unless --upstream-allow names its network, so that neither a user nor a
// DNS answer can point Decoy at a loopback, private or metadata address.
// It also captures, for recording, the JSON answers it passes on.
package upstream

import (
	"errors"
	"net"
	"net/http"
	"net/netip"
	"syscall"
	"time"

	"github.com/decoy-mock/decoy/answer"
)

// ErrNotAllowed is the answer to a request whose upstream resolves to an
// address that is not public and not allowed (§14).
var ErrNotAllowed = answer.New(http.StatusBadRequest, "Upstream address not allowed")

// refusal is what the dialer's Control returns for an address not
// allowed; it wraps ErrNotAllowed, through the errors of the dial and the
// transport, and names the address for the server's log.
type refusal struct{ addr string }

func (r *refusal) Error() string { return "upstream address " + r.addr + " not allowed" }
func (*refusal) Unwrap() error   { return ErrNotAllowed }

// RefusedAddress returns the address the guard refused, when err is such
// a refusal: the client is told only that it is not allowed (§14), the
// server's log which address and why.
func RefusedAddress(err error) (string, bool) {
	var r *refusal
	if errors.As(err, &r) {
		return r.addr, true
	}
	return "", false
}

// notPublic are the networks no upstream may be in unless allowed: every
// range IANA's special-purpose registries mark as not globally reachable,
// or that reaches this machine, its network or a translated IPv4 address.
// IPv4-mapped IPv6 addresses (::ffff:a.b.c.d) are checked as the IPv4
// address they are.
var notPublic = prefixes(
	"0.0.0.0/8",       // "this network", unspecified
	"10.0.0.0/8",      // private
	"100.64.0.0/10",   // shared address space (CGNAT)
	"127.0.0.0/8",     // loopback
	"169.254.0.0/16",  // link-local (cloud metadata among it)
	"172.16.0.0/12",   // private
	"192.0.0.0/24",    // IETF protocol assignments
	"192.0.2.0/24",    // documentation
	"192.88.99.0/24",  // 6to4 relay anycast
	"192.168.0.0/16",  // private
	"198.18.0.0/15",   // benchmarking
	"198.51.100.0/24", // documentation
	"203.0.113.0/24",  // documentation
	"224.0.0.0/4",     // multicast
	"240.0.0.0/4",     // reserved, and the broadcast address
	"::/96",           // unspecified, loopback, IPv4-compatible
	"::ffff:0:0:0/96", // IPv4-translated
	"64:ff9b::/96",    // NAT64: reaches any IPv4 address
	"64:ff9b:1::/48",  // local-use NAT64
	"100::/64",        // discard
	"2001::/32",       // Teredo: reaches any IPv4 address
	"2001:2::/48",     // benchmarking
	"2001:db8::/32",   // documentation
	"2001:10::/28",    // ORCHID
	"2002::/16",       // 6to4: reaches any IPv4 address
	"fc00::/7",        // unique local
	"fe80::/10",       // link-local
	"fec0::/10",       // site-local (deprecated)
	"ff00::/8",        // multicast
)

func prefixes(ss ...string) []netip.Prefix {
	ps := make([]netip.Prefix, len(ss))
	for i, s := range ss {
		ps[i] = netip.MustParsePrefix(s)
	}
	return ps
}

// Public reports whether an upstream may be at ip without an exception:
// it is a global unicast address in none of the networks above.
func Public(ip netip.Addr) bool {
	ip = ip.Unmap()
	if !ip.IsValid() || !ip.IsGlobalUnicast() || ip.Zone() != "" {
		return false
	}
	for _, p := range notPublic {
		if p.Contains(ip) {
			return false
		}
	}
	return true
}

// Guard decides which addresses upstreams may be at: the public ones, and
// those in the networks of --upstream-allow.
type Guard struct {
	allow []netip.Prefix
}

// NewGuard returns a guard that lets upstreams be at public addresses and
// in the networks of allow.
func NewGuard(allow []netip.Prefix) *Guard {
	return &Guard{allow: allow}
}

// Allowed reports whether an upstream may be at ip.
func (g *Guard) Allowed(ip netip.Addr) bool {
	for _, p := range g.allow {
		if p.Contains(ip) || p.Contains(ip.Unmap()) {
			return true
		}
	}
	return Public(ip)
}

// Control is the net.Dialer's Control function: it runs once a name has
// been resolved, on the very address about to be connected to, before any
// packet is sent, so that a name resolving (or later re-resolving) to an
// address not allowed is refused whatever a check made earlier saw. It
// refuses every network but TCP.
func (g *Guard) Control(network, address string, _ syscall.RawConn) error {
	switch network {
	case "tcp", "tcp4", "tcp6":
	default:
		return &refusal{addr: network + " " + address}
	}
	ap, err := netip.ParseAddrPort(address)
	if err != nil || !g.Allowed(ap.Addr()) {
		return &refusal{addr: address}
	}
	return nil
}

// Refused reports whether err is, or wraps, a refusal of the guard.
func Refused(err error) bool { return errors.Is(err, ErrNotAllowed) }

// dialer returns a dialer that asks g before each connection.
func (g *Guard) dialer(timeout time.Duration) *net.Dialer {
	return &net.Dialer{Timeout: timeout, KeepAlive: 30 * time.Second, Control: g.Control}
}
