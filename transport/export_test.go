package transport

import (
	"net"
	"time"
)

// SetNow makes c take the time from now, and look at its files at the
// first handshake after now's next second.
func SetNow(c *Certificate, now func() time.Time) {
	c.now = now
	c.next.Store(now().Add(checkInterval).UnixNano())
}

// Refusing returns how many refusals a listener of LimitConnections has in
// progress.
func Refusing(ln net.Listener) int { return len(ln.(*connLimiter).refusing) }

// MaxRefusing is maxRefusing.
const MaxRefusing = maxRefusing

// PlainHTTP is plainHTTP.
var PlainHTTP = plainHTTP
