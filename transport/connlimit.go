package transport

import (
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"net/netip"
	"sync"
	"time"
)

// ConnLimits are the caps of LimitConnections. Zero means no cap.
type ConnLimits struct {
	// Total caps the connections open at once; PerClient, those from one
	// address (an IPv6 client counts per /64, which one host usually
	// holds whole).
	Total, PerClient int
	// Exempt addresses (trusted proxies, which carry many clients) count
	// only towards Total.
	Exempt func(netip.Addr) bool
	// TLS is the server's TLS configuration when the connections carry
	// TLS: a connection over a cap is then answered after a handshake, so
	// that its client reads the 503 rather than a TLS error.
	TLS *tls.Config
	// Header are header lines ("Name: value") the 503 carries besides its
	// own, as JSONErrors's answers do: the server's CORS policy.
	Header []string
}

// LimitConnections caps the connections ln hands out. A connection over a
// cap is answered 503 in JSON and closed at once, so that one client cannot
// take every file descriptor the server has.
func LimitConnections(ln net.Listener, limits ConnLimits) net.Listener {
	l := &connLimiter{Listener: ln, ConnLimits: limits, open: map[netip.Addr]int{}, refusing: make(chan struct{}, maxRefusing)}
	if limits.TLS != nil {
		// The refusal is an HTTP/1.1 answer: no HTTP/2 is offered.
		l.TLS = limits.TLS.Clone()
		l.TLS.NextProtos = []string{"http/1.1"}
	}
	return l
}

// maxRefusing bounds the refusals in progress: past it, a connection over
// a cap is closed with no answer. refuseTimeout bounds each, its TLS
// handshake included.
const (
	maxRefusing   = 64
	refuseTimeout = 5 * time.Second
)

type connLimiter struct {
	net.Listener
	ConnLimits
	// refusing holds a token for each refusal in progress.
	refusing chan struct{}

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
		over := l.Total > 0 && l.n >= l.Total || counted && l.PerClient > 0 && l.open[key] >= l.PerClient
		if !over {
			l.n++
			if counted {
				l.open[key]++
			}
		}
		l.mu.Unlock()
		if over {
			l.refuse(c)
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
	if l.Exempt != nil && l.Exempt(a) {
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

// refuse answers a connection over a cap and closes it, without reading
// what it sent.
func (l *connLimiter) refuse(c net.Conn) {
	select {
	case l.refusing <- struct{}{}:
	default:
		c.Close()
		return
	}
	go func() {
		defer func() { <-l.refusing }()
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(refuseTimeout))
		w := c
		if l.TLS != nil {
			tc := tls.Server(c, l.TLS)
			if tc.Handshake() != nil {
				return
			}
			w = tc
		}
		_, _ = w.Write(Reply(http.StatusServiceUnavailable, "Too many connections; try again later", append([]string{"Retry-After: 1"}, l.Header...)...))
	}()
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

// ReadFrom hands a response body to the connection's own ReadFrom
// (sendfile for a file, on a *net.TCPConn), as errorConn does.
func (c *limitedConn) ReadFrom(r io.Reader) (int64, error) {
	if rf, ok := c.Conn.(io.ReaderFrom); ok {
		return rf.ReadFrom(r)
	}
	return io.Copy(writerOnly{c.Conn}, r)
}

// NetConn returns the connection under the limit.
func (c *limitedConn) NetConn() net.Conn { return c.Conn }
