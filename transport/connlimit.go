package transport

import (
	"net"
	"net/http"
	"net/netip"
	"sync"
	"time"
)

// LimitConnections caps the connections ln hands out: at most total open at
// once, and at most perClient from one address (an IPv6 client counts per
// /64, which one host usually holds whole). Connections from exempt
// addresses (trusted proxies, which carry many clients) count only towards
// total. A connection over a cap is answered 503 in JSON and closed at once,
// so that one client cannot take every file descriptor the server has.
// Zero means no cap.
func LimitConnections(ln net.Listener, total, perClient int, exempt func(netip.Addr) bool) net.Listener {
	return &connLimiter{Listener: ln, total: total, perClient: perClient, exempt: exempt, open: map[netip.Addr]int{}}
}

type connLimiter struct {
	net.Listener
	total, perClient int
	exempt           func(netip.Addr) bool

	mu   sync.Mutex
	n    int
	open map[netip.Addr]int
}

// Accept implements net.Listener.
func (l *connLimiter) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		key, counted := l.key(c)
		l.mu.Lock()
		over := l.total > 0 && l.n >= l.total || counted && l.perClient > 0 && l.open[key] >= l.perClient
		if !over {
			l.n++
			if counted {
				l.open[key]++
			}
		}
		l.mu.Unlock()
		if over {
			go refuseConn(c)
			continue
		}
		return &limitedConn{Conn: c, l: l, key: key, counted: counted}, nil
	}
}

// key is the address c counts under, and whether it counts per client.
func (l *connLimiter) key(c net.Conn) (netip.Addr, bool) {
	ap, err := netip.ParseAddrPort(c.RemoteAddr().String())
	if err != nil {
		return netip.Addr{}, false
	}
	a := ap.Addr().Unmap().WithZone("")
	if l.exempt != nil && l.exempt(a) {
		return a, false
	}
	return ClientKey(a), true
}

// ClientKey is the address a client's connections and requests are counted
// under: an IPv4 address, or the /64 of an IPv6 one.
func ClientKey(a netip.Addr) netip.Addr {
	a = a.Unmap().WithZone("")
	if a.Is6() {
		p, _ := a.Prefix(64)
		return p.Addr()
	}
	return a
}

func (l *connLimiter) release(key netip.Addr, counted bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.n--
	if counted {
		if l.open[key]--; l.open[key] <= 0 {
			delete(l.open, key)
		}
	}
}

// refuseConn answers a connection over a cap and closes it, without reading
// what it sent.
func refuseConn(c net.Conn) {
	defer c.Close()
	_ = c.SetWriteDeadline(time.Now().Add(time.Second))
	_, _ = c.Write(Reply(http.StatusServiceUnavailable, "Too many connections; try again later", "Retry-After: 1"))
}

// limitedConn gives its place back when closed.
type limitedConn struct {
	net.Conn
	l       *connLimiter
	key     netip.Addr
	counted bool
	once    sync.Once
}

func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() { c.l.release(c.key, c.counted) })
	return err
}

// CloseWrite lets net/http half-close the connection, as on *net.TCPConn.
func (c *limitedConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// NetConn returns the connection under the limit.
func (c *limitedConn) NetConn() net.Conn { return c.Conn }
