package transport

import "time"

// SetNow makes c take the time from now, and look at its files at the
// first handshake after now's next second.
func SetNow(c *Certificate, now func() time.Time) {
	c.now = now
	c.next.Store(now().Add(checkInterval).UnixNano())
}
