package upstream_test

import (
	"net/netip"
	"testing"

	"github.com/decoy-mock/decoy/upstream"
)

// addressCases are addresses and whether an upstream may be at them with
// no exception: the check runs on each address the dialer is about to
// connect to.
var addressCases = []struct {
	addr   string
	public bool
}{
	{"127.0.0.1", false},
	{"127.255.255.254", false},
	{"10.1.2.3", false},
	{"172.16.0.1", false},
	{"172.31.255.255", false},
	{"192.168.1.1", false},
	{"169.254.169.254", false}, // cloud metadata
	{"169.254.0.1", false},
	{"100.64.0.1", false}, // CGNAT
	{"100.127.255.254", false},
	{"0.0.0.0", false},
	{"0.1.2.3", false},
	{"224.0.0.1", false},
	{"239.255.255.250", false},
	{"255.255.255.255", false},
	{"240.0.0.1", false},
	{"192.0.2.10", false},
	{"198.18.0.1", false},
	{"::", false},
	{"::1", false},
	{"::ffff:127.0.0.1", false},
	{"::ffff:10.0.0.1", false},
	{"::ffff:169.254.169.254", false},
	{"::127.0.0.1", false}, // IPv4-compatible
	{"fc00::1", false},
	{"fd12:3456:789a::1", false},
	{"fe80::1", false},
	{"fe80::1%eth0", false},
	{"ff02::1", false},
	{"64:ff9b::a00:1", false}, // NAT64 of 10.0.0.1
	{"2002:7f00:1::1", false}, // 6to4 of 127.0.0.1
	{"2001::1", false},        // Teredo
	{"2001:db8::1", false},
	{"fec0::1", false},
	{"8.8.8.8", true},
	{"1.1.1.1", true},
	{"100.63.255.255", true}, // just below CGNAT
	{"100.128.0.0", true},    // just above
	{"172.32.0.1", true},
	{"::ffff:8.8.8.8", true},
	{"2606:4700:4700::1111", true},
	{"2a00:1450:4001::1", true},
}

func TestPublic(t *testing.T) {
	for _, c := range addressCases {
		if got := upstream.Public(netip.MustParseAddr(c.addr)); got != c.public {
			t.Errorf("Public(%s) = %v; want %v", c.addr, got, c.public)
		}
	}
}

// TestGuardControl: the dialer's Control refuses an address that is not
// public, before the connection is made, unless --upstream-allow names its
// network; and refuses every network but TCP.
func TestGuardControl(t *testing.T) {
	none := upstream.NewGuard(nil)
	for _, c := range addressCases {
		ap := netip.AddrPortFrom(netip.MustParseAddr(c.addr), 443).String()
		network := "tcp4"
		if netip.MustParseAddr(c.addr).Is6() {
			network = "tcp6"
		}
		err := none.Control(network, ap, nil)
		if (err == nil) != c.public {
			t.Errorf("Control(%s, %s) = %v; want allowed %v", network, ap, err, c.public)
		}
		if err != nil && !upstream.Refused(err) {
			t.Errorf("Control(%s): %v is not a refusal", ap, err)
		}
	}
	allow := upstream.NewGuard([]netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("10.0.0.0/16"),
		netip.MustParsePrefix("fd00::/8")})
	for _, c := range []struct {
		addr string
		ok   bool
	}{
		{"127.0.0.1:80", true},
		{"[::ffff:127.0.0.1]:80", true},
		{"10.0.9.9:80", true},
		{"10.1.0.1:80", false},
		{"[fd12::1]:80", true},
		{"[::1]:80", false},
		{"169.254.169.254:80", false},
		{"8.8.8.8:443", true},
	} {
		if err := allow.Control("tcp", c.addr, nil); (err == nil) != c.ok {
			t.Errorf("allowed guard: Control(%s) = %v; want allowed %v", c.addr, err, c.ok)
		}
	}
	for _, network := range []string{"udp", "udp4", "unix", "ip4:icmp"} {
		if err := allow.Control(network, "8.8.8.8:53", nil); err == nil {
			t.Errorf("Control(%s) allowed", network)
		}
	}
	for _, bad := range []string{"", "example.com:80", "8.8.8.8", "[::1"} {
		if err := allow.Control("tcp", bad, nil); err == nil {
			t.Errorf("Control(tcp, %q) allowed", bad)
		}
	}
}
