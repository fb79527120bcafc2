package transport

import "net/netip"

// RangeScale is how many clients' worth of a limit an IPv6 range gets: a
// /48 that of RangeScale /64s, a /32 that of RangeScale /48s.
const RangeScale = 64

// ClientRange is a prefix a client's events count under, and how many
// times the client's own limit the prefix gets.
type ClientRange struct {
	Prefix netip.Prefix
	Scale  int64
}

// ClientRanges returns the ranges the events of client a count under
// (failed authentications, the client rate limit), the broadest first,
// and how many there are: an IPv4 address alone (scale 1); for IPv6, its
// /32 (RangeScale²), its /48 (RangeScale) and its /64 (1, ClientKey).
//
// A limiter keeps a window per key, and one host of IPv6 can hold a /48 or
// a /32: with its /64 alone, it would get as many budgets as /64s it
// sends from. An event is admitted when every range has room, so that a
// /48 gets RangeScale budgets at most, and a /32 RangeScale² at most, but
// no /64 takes another's: a client is refused for its range only once the
// range's own budget is used up. A limiter asked about the broadest
// first, and stopping at the first refusal, makes a window of a /64 only
// for an event its ranges admitted, so the windows of a range are bounded
// by its budget.
func ClientRanges(a netip.Addr) (r [3]ClientRange, n int) {
	a = ClientKey(a) // the IPv4 address, or the first of the /64
	if !a.Is6() {
		r[0] = ClientRange{netip.PrefixFrom(a, a.BitLen()), 1}
		return r, 1
	}
	p32, _ := a.Prefix(32)
	p48, _ := a.Prefix(48)
	r[0] = ClientRange{p32, RangeScale * RangeScale}
	r[1] = ClientRange{p48, RangeScale}
	r[2] = ClientRange{netip.PrefixFrom(a, 64), 1}
	return r, 3
}
