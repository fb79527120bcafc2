package transport_test

import (
	"fmt"
	"net/netip"
	"testing"

	"github.com/decoy-mock/decoy/transport"
)

// A client's events count under its IPv4 address, or under the /32, the
// /48 and the /64 of an IPv6 one, each with its scale of the limit. Found
// by an audit: an IPv6 host counted per /64 had as many budgets as /64s.
func TestClientRanges(t *testing.T) {
	for _, c := range []struct{ addr, want string }{
		{"203.0.113.7", "203.0.113.7/32×1"},
		{"::ffff:198.51.100.2", "198.51.100.2/32×1"},
		{"fe80::1%eth0", "fe80::/32×4096 fe80::/48×64 fe80::/64×1"},
		{"2001:db8:1:7::5", "2001:db8::/32×4096 2001:db8:1::/48×64 2001:db8:1:7::/64×1"},
		{"2001:db8:ffff:ffff:1:2:3:4", "2001:db8::/32×4096 2001:db8:ffff::/48×64 2001:db8:ffff:ffff::/64×1"},
	} {
		r, n := transport.ClientRanges(netip.MustParseAddr(c.addr))
		got := ""
		for i, x := range r[:n] {
			if i > 0 {
				got += " "
			}
			got += fmt.Sprintf("%s×%d", x.Prefix, x.Scale)
		}
		if got != c.want {
			t.Errorf("ClientRanges(%s) = %s, want %s", c.addr, got, c.want)
		}
	}
}
