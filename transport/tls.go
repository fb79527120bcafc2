package transport

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// TLS returns ln serving TLS with config, for an http.Server to Serve.
//
// The handshake is done here rather than by net/http, each on a goroutine
// of its own and bounded by timeout, so that a client that never finishes
// it holds up no other (the connection caps under ln bound how many wait).
// Then a connection that chose HTTP/2 is handed over as the *tls.Conn
// itself, which net/http gives to its HTTP/2 server; one that speaks
// HTTP/1.x is handed over wrapped as JSONErrors wraps it, still telling
// net/http its TLS state so that Request.TLS is set. A client that sent
// plain HTTP is answered here, with a JSON 400, whatever its method
// (net/http answers only GET, HEAD, POST, PUT and OPTIONS). A handshake
// that failed is handed over too: net/http asks for it again, gets the
// same error, and logs it.
//
// config must offer "h2" and "http/1.1" (see Certificate.TLSConfig); the
// http.Server is given a copy of it, so that Serve sets up HTTP/2.
// maxHeaderBytes and header are JSONErrors's: every answer written here
// carries header.
func TLS(ln net.Listener, config *tls.Config, timeout time.Duration, maxHeaderBytes int, header ...string) net.Listener {
	if maxHeaderBytes <= 0 {
		maxHeaderBytes = http.DefaultMaxHeaderBytes
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &tlsListener{
		Listener:  ln,
		config:    config,
		timeout:   timeout,
		maxHeader: maxHeaderBytes,
		header:    slices.Clone(header),
		ready:     make(chan net.Conn),
		errs:      make(chan error),
		ctx:       ctx,
		cancel:    cancel,
	}
}

type tlsListener struct {
	net.Listener
	config    *tls.Config
	timeout   time.Duration
	maxHeader int
	header    []string

	// start starts the loop that accepts connections and hands each to a
	// handshake; ready carries the connections whose handshake is over,
	// errs the errors of the listener underneath.
	start sync.Once
	ready chan net.Conn
	errs  chan error
	// ctx is cancelled by Close, which cuts the handshakes in progress.
	ctx    context.Context
	cancel context.CancelFunc
}

// Accept implements net.Listener.
func (l *tlsListener) Accept() (net.Conn, error) {
	l.start.Do(func() { go l.acceptLoop() })
	select {
	case c := <-l.ready:
		return c, nil
	case err := <-l.errs:
		return nil, err
	case <-l.ctx.Done():
		return nil, net.ErrClosed
	}
}

// Close implements net.Listener.
func (l *tlsListener) Close() error {
	l.cancel()
	return l.Listener.Close()
}

func (l *tlsListener) acceptLoop() {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			// The error goes to Accept's caller, which decides whether to
			// go on (net/http backs off on a temporary error) or to stop
			// and Close; waiting for it to take the error paces the loop.
			select {
			case l.errs <- err:
				continue
			case <-l.ctx.Done():
				return
			}
		}
		go l.handshake(c)
	}
}

func (l *tlsListener) handshake(raw net.Conn) {
	// net/http writes its answer to plain HTTP on the raw connection.
	raw = &errorConn{Conn: raw, maxHeader: l.maxHeader, header: l.header}
	tc := tls.Server(raw, l.config)
	if l.timeout > 0 {
		_ = raw.SetDeadline(time.Now().Add(l.timeout))
	}
	err := tc.HandshakeContext(l.ctx)
	if l.ctx.Err() != nil {
		tc.Close()
		return
	}
	if re, ok := err.(tls.RecordHeaderError); ok && re.Conn != nil && plainHTTP(re.RecordHeader) {
		_ = re.Conn.SetWriteDeadline(time.Now().Add(time.Second))
		_, _ = re.Conn.Write(Reply(http.StatusBadRequest, "This port serves HTTPS: send the request with https://", l.header...))
		re.Conn.Close()
	}
	// net/http sets the deadlines of each request from here on.
	_ = raw.SetDeadline(time.Time{})
	var c net.Conn = tc
	if err == nil && tc.ConnectionState().NegotiatedProtocol != "h2" {
		c = &tlsErrorConn{errorConn: errorConn{Conn: tc, maxHeader: l.maxHeader, header: l.header}, tls: tc}
	}
	select {
	case l.ready <- c:
	case <-l.ctx.Done():
		c.Close()
	}
}

// plainHTTP reports whether the first bytes a client sent, where a TLS
// record header was expected, begin an HTTP/1.x request line: a method, in
// capitals, then a space. A TLS record begins with a byte under 32.
func plainHTTP(hdr [5]byte) bool {
	for i, b := range hdr {
		switch {
		case b >= 'A' && b <= 'Z':
		case b == ' ' && i > 0:
			return true
		default:
			return false
		}
	}
	return true // a method of five letters or more
}

// tlsErrorConn is an HTTP/1.x connection over TLS with net/http's error
// answers rewritten. net/http takes the TLS state of a connection that is
// not a *tls.Conn from its ConnectionState.
type tlsErrorConn struct {
	errorConn
	tls *tls.Conn
}

// ConnectionState returns the state of the TLS connection underneath.
func (c *tlsErrorConn) ConnectionState() tls.ConnectionState { return c.tls.ConnectionState() }

// Certificate is the certificate and private key served over TLS, read
// from two PEM files and read again when either changes (its size or its
// modification time), so that a renewed certificate is served without a
// restart. The files are looked at when a client connects, at most once a
// second. A pair that cannot be read (files half written, a key that does
// not match the certificate) is logged, and the pair read before goes on
// being served.
type Certificate struct {
	certFile, keyFile string
	log               *slog.Logger
	now               func() time.Time

	pair atomic.Pointer[tls.Certificate]
	// next is when the files are next looked at, in Unix nanoseconds.
	next atomic.Int64

	mu sync.Mutex // held while the files are looked at
	// seen is the state of the files when last read; err, what reading
	// them then gave.
	seen [2]fileStamp
	err  error
}

// checkInterval is how often at most the files of a Certificate are looked
// at: a stat of each, once a second, costs a handshake nothing measurable.
const checkInterval = time.Second

// fileStamp is what tells that a file has changed.
type fileStamp struct {
	size, mtime int64
	err         string // the file cannot be looked at
}

func stampOf(name string) fileStamp {
	fi, err := os.Stat(name)
	if err != nil {
		return fileStamp{err: err.Error()}
	}
	return fileStamp{size: fi.Size(), mtime: fi.ModTime().UnixNano()}
}

// LoadCertificate reads the certificate and key of certFile and keyFile
// (PEM; the certificate file may hold a chain after the certificate). log
// receives the reloads and the warnings of failed ones.
func LoadCertificate(certFile, keyFile string, log *slog.Logger) (*Certificate, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	c := &Certificate{certFile: certFile, keyFile: keyFile, log: log, now: time.Now}
	c.next.Store(c.now().Add(checkInterval).UnixNano())
	if err := c.check(); err != nil {
		return nil, err
	}
	return c, nil
}

// GetCertificate returns the pair to present, after reading the files
// again if they changed; it is the GetCertificate of a tls.Config.
func (c *Certificate) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	now := c.now().UnixNano()
	// One handshake a second looks at the files; the others, and those
	// that arrive while it reads them, present the pair as it is.
	if next := c.next.Load(); now >= next && c.next.CompareAndSwap(next, now+int64(checkInterval)) {
		_ = c.check()
	}
	return c.pair.Load(), nil
}

// TLSConfig returns the TLS settings to serve c with: TLS 1.2 or later,
// HTTP/2 offered before HTTP/1.1.
func (c *Certificate) TLSConfig() *tls.Config {
	return &tls.Config{
		MinVersion:     tls.VersionTLS12,
		NextProtos:     []string{"h2", "http/1.1"},
		GetCertificate: c.GetCertificate,
	}
}

// check reads the files when they changed since they were last read, and
// returns the error of the last read. A failed read is tried again only
// once the files change again, so that it is logged once.
func (c *Certificate) check() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	// Stamped before they are read: a change during the read is seen at
	// the next look.
	stamps := [2]fileStamp{stampOf(c.certFile), stampOf(c.keyFile)}
	if c.pair.Load() != nil && stamps == c.seen {
		return c.err
	}
	c.seen = stamps
	pair, err := tls.LoadX509KeyPair(c.certFile, c.keyFile)
	if err == nil && pair.Leaf == nil {
		pair.Leaf, err = x509.ParseCertificate(pair.Certificate[0])
	}
	if err != nil {
		c.err = fmt.Errorf("TLS certificate %s and key %s: %w", c.certFile, c.keyFile, err)
		if c.pair.Load() != nil {
			c.log.Warn("TLS certificate not reloaded; serving the previous one", "err", c.err)
		}
		return c.err
	}
	c.err = nil
	first := c.pair.Load() == nil
	c.pair.Store(&pair)
	msg := "TLS certificate reloaded"
	if first {
		msg = "TLS certificate loaded"
	}
	leaf := pair.Leaf
	c.log.Info(msg, "cert", c.certFile, "subject", leaf.Subject.String(), "dns_names", leaf.DNSNames,
		"serial", leaf.SerialNumber.String(), "not_after", leaf.NotAfter.UTC().Format(time.RFC3339))
	if c.now().After(leaf.NotAfter) {
		c.log.Warn("TLS certificate has expired", "cert", c.certFile, "not_after", leaf.NotAfter.UTC().Format(time.RFC3339))
	}
	return nil
}
