package transport

import (
	"encoding/binary"
	"net/netip"
	"sync"
	"time"
)

// ClientKeys chooses the prefix a client's limits count under (failed
// authentications, the client rate limit, its share of the request
// bodies held): an IPv4 address, or the /64 of an IPv6 one (ClientKey),
// unless its range holds many clients at once.
//
// A limiter keeps a window per key, and one host of IPv6 can hold a /48 or
// a /32: a /64 per request would make as many windows as requests, and as
// many fresh budgets. So, within one period, the first MaxPerRange /64s of
// a /48 each count under their own /64, and any more under that /48; the
// first MaxPerRange /48s of a /32 are followed apart, any more count under
// that /32. A flood of addresses thus shares one budget of its own range,
// never one of another range's. A range seen for the first time when
// MaxRanges ranges are followed already counts under its own prefix
// (/48, or /32). Everything starts again each period.
//
// Its memory is bounded by MaxRanges ranges of MaxPerRange members each.
type ClientKeys struct {
	// Now returns the current time (default time.Now).
	Now func() time.Time
	// Period is how long the ranges seen are kept (default a minute: the
	// rate limits' window).
	Period time.Duration

	mu     sync.Mutex
	since  time.Time
	ranges map[netip.Prefix]*clientRange
}

// clientRange is a /48 (members: its /64s) or a /32 (members: its /48s)
// seen in the period: the first MaxPerRange members of it, by their
// leading 64 bits.
type clientRange struct {
	members []uint64
}

const (
	// MaxPerRange is how many /64s of a /48, or /48s of a /32, count apart
	// in a period.
	MaxPerRange = 64
	// MaxRanges is how many /48s and /32s are followed in a period.
	MaxRanges = 16384
)

// Key returns the prefix client a's limits count under now.
func (k *ClientKeys) Key(a netip.Addr) netip.Prefix {
	a = ClientKey(a) // the IPv4 address, or the first of the /64
	if !a.Is6() {
		return netip.PrefixFrom(a, a.BitLen())
	}
	p64 := netip.PrefixFrom(a, 64)
	p48, _ := a.Prefix(48)
	p32, _ := a.Prefix(32)
	k.mu.Lock()
	defer k.mu.Unlock()
	k.rotate()
	if !k.admit(p32, p48) {
		return p32
	}
	if !k.admit(p48, p64) {
		return p48
	}
	return p64
}

// admit reports whether member counts apart within rng: it is one of the
// range's first MaxPerRange members this period. k.mu is held.
func (k *ClientKeys) admit(rng, member netip.Prefix) bool {
	r := k.ranges[rng]
	if r == nil {
		if len(k.ranges) >= MaxRanges {
			return false
		}
		r = &clientRange{}
		k.ranges[rng] = r
	}
	b := member.Addr().As16()
	m := binary.BigEndian.Uint64(b[:8])
	for _, x := range r.members {
		if x == m {
			return true
		}
	}
	if len(r.members) >= MaxPerRange {
		return false
	}
	r.members = append(r.members, m)
	return true
}

// rotate starts a new period when the last ended. k.mu is held.
func (k *ClientKeys) rotate() {
	now := time.Now
	if k.Now != nil {
		now = k.Now
	}
	period := k.Period
	if period <= 0 {
		period = time.Minute
	}
	t := now()
	if k.ranges != nil && t.Sub(k.since) < period && !t.Before(k.since) {
		return
	}
	k.since = t
	k.ranges = make(map[netip.Prefix]*clientRange, len(k.ranges)/2)
}

// Ranges returns how many ranges are followed in the period.
func (k *ClientKeys) Ranges() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return len(k.ranges)
}
