package server

import (
	"net/http/httptest"
	"net/netip"
	"testing"
)

func TestClientAddr(t *testing.T) {
	trusted := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("::1/128")}
	for _, tc := range []struct {
		name    string
		proxies []netip.Prefix
		remote  string
		xff     []string
		want    string
	}{
		{"no proxies: the peer", nil, "203.0.113.7:5000", []string{"198.51.100.1"}, "203.0.113.7"},
		{"untrusted peer: its header is ignored", trusted, "203.0.113.7:5000", []string{"198.51.100.1"}, "203.0.113.7"},
		{"trusted peer without header", trusted, "10.1.2.3:5000", nil, "10.1.2.3"},
		{"trusted peer: the address it saw", trusted, "10.1.2.3:5000", []string{"198.51.100.1"}, "198.51.100.1"},
		{"spoofed left part is skipped", trusted, "10.1.2.3:5000", []string{"1.2.3.4, 198.51.100.1"}, "198.51.100.1"},
		{"chain of trusted proxies", trusted, "10.1.2.3:5000", []string{"198.51.100.1, 10.9.9.9"}, "198.51.100.1"},
		{"several header fields", trusted, "10.1.2.3:5000", []string{"1.2.3.4", "198.51.100.1, 10.9.9.9"}, "198.51.100.1"},
		{"all trusted: the leftmost", trusted, "10.1.2.3:5000", []string{"10.4.4.4, 10.9.9.9"}, "10.4.4.4"},
		{"garbage written by a trusted proxy names the client", trusted, "10.1.2.3:5000", []string{"<script>, 10.9.9.9"}, "<script>"},
		{"unknown is a client of its own, not the proxy", trusted, "10.1.2.3:5000", []string{"unknown"}, "unknown"},
		{"address with a port", trusted, "10.1.2.3:5000", []string{"198.51.100.1:4711"}, "198.51.100.1"},
		{"bracketed IPv6", trusted, "10.1.2.3:5000", []string{"[2001:db8::1]"}, "2001:db8::1"},
		{"bracketed IPv6 with a port", trusted, "10.1.2.3:5000", []string{"[2001:db8::1]:443"}, "2001:db8::1"},
		{"empty hops are skipped", trusted, "10.1.2.3:5000", []string{"198.51.100.1,, 10.9.9.9"}, "198.51.100.1"},
		{"zone dropped", trusted, "10.1.2.3:5000", []string{"fe80::1%eth0"}, "fe80::1"},
		{"IPv6 peer", trusted, "[::1]:5000", []string{"2001:db8::5"}, "2001:db8::5"},
		{"IPv4-mapped", trusted, "[::ffff:10.1.2.3]:5000", []string{"::ffff:198.51.100.1"}, "198.51.100.1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &Server{cfg: Config{TrustedProxies: tc.proxies}}
			r := httptest.NewRequest("GET", "/mock/x", nil)
			r.RemoteAddr = tc.remote
			for _, v := range tc.xff {
				r.Header.Add("X-Forwarded-For", v)
			}
			if got := s.clientAddr(r); got != tc.want {
				t.Errorf("clientAddr = %q, want %q", got, tc.want)
			}
		})
	}
}

// Limits count an IPv6 client per /64, an IPv4 one per address.
func TestClientKey(t *testing.T) {
	s := &Server{}
	for _, tc := range []struct{ remote, want string }{
		{"203.0.113.7:1", "203.0.113.7"},
		{"[2001:db8:1:2:3:4:5:6]:1", "2001:db8:1:2::"},
		{"[2001:db8:1:2:ffff::1]:1", "2001:db8:1:2::"},
		{"[::ffff:203.0.113.7]:1", "203.0.113.7"},
	} {
		r := httptest.NewRequest("GET", "/", nil)
		r.RemoteAddr = tc.remote
		if got := s.clientKey(r); got != tc.want {
			t.Errorf("clientKey(%s) = %q, want %q", tc.remote, got, tc.want)
		}
	}
}
