package transport_test

import (
	"fmt"
	"net/netip"
	"testing"
	"time"

	"github.com/decoy-mock/decoy/transport"
)

// A client counts under its address (IPv4) or /64 (IPv6) until its range
// holds many clients in one period: then past the first MaxPerRange /64s
// of a /48, a /64 counts under the /48, and past the first MaxPerRange
// /48s of a /32, under the /32. Found by an audit: an IPv6 prefix made a
// limiter window per /64, as many as the requests it sent.
func TestClientKeys(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	k := &transport.ClientKeys{Now: func() time.Time { return now }, Period: time.Minute}
	key := func(addr string) string { return k.Key(netip.MustParseAddr(addr)).String() }
	for _, c := range []struct{ addr, want string }{
		{"203.0.113.7", "203.0.113.7/32"},
		{"::ffff:198.51.100.2", "198.51.100.2/32"},
		{"2001:db8:1:7::5", "2001:db8:1:7::/64"},
		{"2001:db8:1:7::9", "2001:db8:1:7::/64"},
	} {
		if got := key(c.addr); got != c.want {
			t.Errorf("Key(%s) = %s, want %s", c.addr, got, c.want)
		}
	}
	// The /64s of one /48: the first MaxPerRange apart (7 is one), then
	// the /48.
	for i := range transport.MaxPerRange - 1 {
		addr := fmt.Sprintf("2001:db8:1:%x::1", 0x100+i)
		if got, want := key(addr), fmt.Sprintf("2001:db8:1:%x::/64", 0x100+i); got != want {
			t.Fatalf("/64 number %d of a /48: %s, want %s", i+2, got, want)
		}
	}
	if got := key("2001:db8:1:ffff::1"); got != "2001:db8:1::/48" {
		t.Errorf("a /64 past %d of its /48: %s, want the /48", transport.MaxPerRange, got)
	}
	if got := key("2001:db8:1:7::1"); got != "2001:db8:1:7::/64" {
		t.Errorf("a /64 seen before the /48 filled: %s, want its own", got)
	}
	if got := key("2001:db8:2:1::1"); got != "2001:db8:2:1::/64" {
		t.Errorf("another /48 of the /32: %s, want its own /64", got)
	}
	// The /48s of one /32: 1 and 2 seen, then MaxPerRange-2 more, then the
	// /32.
	for i := range transport.MaxPerRange - 2 {
		addr := fmt.Sprintf("2001:db8:%x::1", 0x100+i)
		if got, want := key(addr), fmt.Sprintf("2001:db8:%x::/64", 0x100+i); got != want {
			t.Fatalf("/48 number %d of a /32: %s, want %s", i+3, got, want)
		}
	}
	if got := key("2001:db8:ffff::1"); got != "2001:db8::/32" {
		t.Errorf("a /48 past %d of its /32: %s, want the /32", transport.MaxPerRange, got)
	}
	if got := key("2001:db9::1"); got != "2001:db9::/64" {
		t.Errorf("another /32: %s, want its own /64", got)
	}
	// A new period starts from nothing.
	now = now.Add(time.Minute)
	if got := key("2001:db8:1:ffff::1"); got != "2001:db8:1:ffff::/64" {
		t.Errorf("a new period: %s, want the /64's own", got)
	}
	if got := key("2001:db8:ffff::1"); got != "2001:db8:ffff::/64" {
		t.Errorf("a new period: %s, want the /64's own", got)
	}
}

// At most MaxRanges ranges are followed in a period; a range seen past
// them counts under its own prefix, never another range's.
func TestClientKeysBounded(t *testing.T) {
	k := &transport.ClientKeys{}
	for i := range transport.MaxRanges / 2 { // a /32 and a /48 each
		k.Key(netip.AddrFrom16([16]byte{0x20, 0x01, byte(i >> 8), byte(i), 15: 1}))
	}
	if n := k.Ranges(); n != transport.MaxRanges {
		t.Fatalf("%d ranges followed, want %d", n, transport.MaxRanges)
	}
	if got := k.Key(netip.MustParseAddr("2a00:1:2:3::1")).String(); got != "2a00:1::/32" {
		t.Errorf("a /32 past the bound: %s, want its /32", got)
	}
	if got := k.Key(netip.MustParseAddr("2001:0:5:3::1")).String(); got != "2001:0:5::/48" {
		t.Errorf("a /48 past the bound, in a /32 followed: %s, want its /48", got)
	}
	if got := k.Key(netip.MustParseAddr("2001:0:0:9::1")).String(); got != "2001:0:0:9::/64" {
		t.Errorf("a /64 of a /48 followed: %s, want its /64", got)
	}
	if n := k.Ranges(); n != transport.MaxRanges {
		t.Errorf("%d ranges followed, want %d", n, transport.MaxRanges)
	}
}
