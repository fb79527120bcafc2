package transport_test

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/decoy-mock/decoy/internal/testcert"
	"github.com/decoy-mock/decoy/transport"
)

// newPair returns a self-signed pair with the given serial number.
func newPair(t *testing.T, serial int64) *testcert.Pair {
	t.Helper()
	p, err := testcert.New(serial)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// writePair writes p to cert.pem and key.pem in dir, stamped with mtime so
// that a rewrite within one clock tick is still a change.
func writePair(t *testing.T, dir string, p *testcert.Pair, mtime time.Time) (certFile, keyFile string) {
	t.Helper()
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := p.Write(certFile, keyFile); err != nil {
		t.Fatal(err)
	}
	touch(t, mtime, certFile, keyFile)
	return certFile, keyFile
}

func touch(t *testing.T, mtime time.Time, files ...string) {
	t.Helper()
	for _, f := range files {
		if err := os.Chtimes(f, mtime, mtime); err != nil {
			t.Fatal(err)
		}
	}
}

// logBuffer collects what a logger writes, for concurrent writers.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string { l.mu.Lock(); defer l.mu.Unlock(); return l.b.String() }

// serveTLS serves cert over TLS as Decoy does, with a handler that tells
// the protocol and whether the request knows it came over TLS, and returns
// the address. The answers written in net/http's stead carry corsHeader.
func serveTLS(t *testing.T, cert *transport.Certificate, timeout time.Duration) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	config := cert.TLSConfig()
	srv := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprintf(w, "%s tls=%v", r.Proto, r.TLS != nil && r.TLS.HandshakeComplete)
		}),
		TLSConfig:      config.Clone(),
		MaxHeaderBytes: 4 << 10,
		// Failed handshakes are logged by net/http; not here.
		ErrorLog: log.New(io.Discard, "", 0),
	}
	go srv.Serve(transport.TLS(ln, config, timeout, 4<<10, corsHeader))
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String()
}

// corsHeader is the header line that serveTLS gives its listener.
const corsHeader = "Access-Control-Allow-Origin: *"

// loadPair writes a new pair to a temporary folder and loads it.
func loadPair(t *testing.T) (*testcert.Pair, *transport.Certificate) {
	t.Helper()
	p := newPair(t, 1)
	certFile, keyFile := writePair(t, t.TempDir(), p, time.Now())
	cert, err := transport.LoadCertificate(certFile, keyFile, nil)
	if err != nil {
		t.Fatal(err)
	}
	return p, cert
}

func getBody(t *testing.T, c *http.Client, url string) (*http.Response, string) {
	t.Helper()
	resp, err := c.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(b)
}

// A client that offers HTTP/2 gets it, and one that does not gets
// HTTP/1.1; either way the handler sees the request came over TLS.
func TestTLSProtocols(t *testing.T) {
	p, cert := loadPair(t)
	addr := serveTLS(t, cert, 10*time.Second)
	h1 := &http.Client{Transport: &http.Transport{TLSClientConfig: p.ClientConfig()}}
	for _, tc := range []struct {
		name   string
		client *http.Client
		proto  string
	}{
		{"HTTP/2", p.Client(), "HTTP/2.0"},
		{"HTTP/1.1", h1, "HTTP/1.1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := getBody(t, tc.client, "https://"+addr+"/mock/x")
			if resp.Proto != tc.proto || body != tc.proto+" tls=true" {
				t.Errorf("got %s %q, want %s with the TLS state", resp.Proto, body, tc.proto)
			}
		})
	}
}

// readJSONError reads one answer from c and returns its status and error
// message, checking that it is a JSON error that carries corsHeader.
func readJSONError(t *testing.T, c net.Conn) (int, string) {
	t.Helper()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var e struct{ Error string }
	if err := json.Unmarshal(body, &e); err != nil || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("not a JSON error: %d %q %q", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
	if got := resp.Header.Get("Access-Control-Allow-Origin"); got != "*" {
		t.Errorf("Access-Control-Allow-Origin = %q, want *", got)
	}
	return resp.StatusCode, e.Error
}

// net/http's own answers to what it cannot serve are JSON over TLS too: a
// malformed HTTP/1.1 request, and plain HTTP sent to the TLS port.
func TestTLSJSONErrors(t *testing.T) {
	p, cert := loadPair(t)
	addr := serveTLS(t, cert, 10*time.Second)

	t.Run("malformed request over TLS", func(t *testing.T) {
		config := p.ClientConfig()
		config.NextProtos = []string{"http/1.1"}
		c, err := tls.Dial("tcp", addr, config)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		io.WriteString(c, "GET /mock/%zz HTTP/1.1\r\nHost: x\r\n\r\n")
		status, msg := readJSONError(t, c)
		if status != 400 || !strings.HasPrefix(msg, "Malformed request") {
			t.Errorf("got %d %q", status, msg)
		}
	})
	// Whatever the method: net/http itself answers only five of them.
	for _, method := range []string{"GET", "HEAD", "POST", "PUT", "OPTIONS", "DELETE", "PATCH", "TRACE", "CONNECT", "MKCOL"} {
		t.Run("plain HTTP "+method, func(t *testing.T) {
			c, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			io.WriteString(c, method+" /mock/x HTTP/1.1\r\nHost: x\r\n\r\n")
			status, msg := readJSONError(t, c)
			if status != 400 || !strings.Contains(msg, "HTTPS") {
				t.Errorf("got %d %q", status, msg)
			}
		})
	}
}

// Only the first bytes of an HTTP/1.x request line are taken for plain
// HTTP: a method in capitals, then a space.
func TestPlainHTTP(t *testing.T) {
	for _, tc := range []struct {
		hdr  string
		want bool
	}{
		{"GET /", true},
		{"PUT /", true},
		{"HEAD ", true},
		{"DELET", true},
		{"PATCH", true},
		{"M / H", true},
		{"\x16\x03\x01\x02\x00", false}, // a TLS handshake record
		{" GET ", false},
		{"get /", false},
		{"GE\x00T ", false},
		{"SSH-2", false},
	} {
		var hdr [5]byte
		copy(hdr[:], tc.hdr)
		if got := transport.PlainHTTP(hdr); got != tc.want {
			t.Errorf("%q: %v, want %v", tc.hdr, got, tc.want)
		}
	}
}

// A client that connects and never sends its hello holds up no other
// connection, and is cut at the handshake timeout.
func TestTLSSlowHandshake(t *testing.T) {
	p, cert := loadPair(t)
	addr := serveTLS(t, cert, 2*time.Second)
	var idle []net.Conn
	for range 3 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		idle = append(idle, c)
	}
	// Half a record header: the handshake waits for the rest.
	io.WriteString(idle[0], "\x16\x03")

	start := time.Now()
	if resp, body := getBody(t, p.Client(), "https://"+addr+"/"); resp.StatusCode != 200 || !strings.HasSuffix(body, "tls=true") {
		t.Errorf("got %d %q beside clients that never finish their handshake", resp.StatusCode, body)
	}
	// Handshakes one after the other would take 3 timeouts first.
	if d := time.Since(start); d > 1500*time.Millisecond {
		t.Errorf("a request beside silent clients took %v", d)
	}
	for i, c := range idle {
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		_, err := c.Read(make([]byte, 1))
		var ne net.Error
		if err == nil || errors.As(err, &ne) && ne.Timeout() {
			t.Errorf("silent client %d: not cut at the handshake timeout (%v)", i, err)
		}
	}
}

// Closing the listener cuts the handshakes it is waiting for, rather than
// leaving them to their timeout.
func TestTLSCloseCutsHandshakes(t *testing.T) {
	_, cert := loadPair(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	tl := transport.TLS(ln, cert.TLSConfig(), time.Minute, 0)
	accepted := make(chan error, 1)
	go func() {
		c, err := tl.Accept()
		if err == nil {
			c.Close()
		}
		accepted <- err
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	time.Sleep(50 * time.Millisecond) // the connection reaches its handshake
	tl.Close()
	if err := <-accepted; !errors.Is(err, net.ErrClosed) {
		t.Errorf("Accept after Close: %v", err)
	}
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Read(make([]byte, 1)); err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("the connection in its handshake is still open after Close (%v)", err)
	}
}

// clock is a manual clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Add(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

// The files are looked at once a second at most; a changed pair is served
// from then on, and a pair that cannot be read leaves the last good one
// served, with a warning.
func TestCertificateReload(t *testing.T) {
	dir := t.TempDir()
	mtime := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	pairs := map[int64]*testcert.Pair{}
	roots := x509.NewCertPool()
	for serial := range int64(4) {
		pairs[serial] = newPair(t, serial)
		roots.AddCert(pairs[serial].Leaf)
	}
	certFile, keyFile := writePair(t, dir, pairs[1], mtime)
	logs := &logBuffer{}
	cert, err := transport.LoadCertificate(certFile, keyFile, slog.New(slog.NewTextHandler(logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	clk := &clock{t: time.Now()}
	transport.SetNow(cert, clk.Now)
	addr := serveTLS(t, cert, 10*time.Second)
	served := func() int64 {
		t.Helper()
		c, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: roots})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		return c.ConnectionState().PeerCertificates[0].SerialNumber.Int64()
	}
	step := func(name string, want int64, warned bool) {
		t.Helper()
		before := strings.Count(logs.String(), "level=WARN")
		if got := served(); got != want {
			t.Errorf("%s: serial %d served, want %d", name, got, want)
		}
		if got := strings.Count(logs.String(), "level=WARN") > before; got != warned {
			t.Errorf("%s: warned %v, want %v; log:\n%s", name, got, warned, logs)
		}
	}

	step("at start", 1, false)
	mtime = mtime.Add(time.Minute)
	writePair(t, dir, pairs[2], mtime)
	step("changed within the second", 1, false)
	clk.Add(time.Second)
	step("a second later", 2, false)

	// A certificate with another pair's key.
	clk.Add(time.Second)
	mtime = mtime.Add(time.Minute)
	if err := os.WriteFile(certFile, pairs[3].CertPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	touch(t, mtime, certFile)
	step("key not yet replaced", 2, true)
	clk.Add(time.Second)
	step("unchanged since the failure: not logged again", 2, false)

	// A key file half written.
	clk.Add(time.Second)
	mtime = mtime.Add(time.Minute)
	if err := os.WriteFile(keyFile, pairs[3].KeyPEM[:len(pairs[3].KeyPEM)/2], 0o600); err != nil {
		t.Fatal(err)
	}
	touch(t, mtime, keyFile)
	step("key half written", 2, true)

	clk.Add(time.Second)
	mtime = mtime.Add(time.Minute)
	if err := os.WriteFile(keyFile, pairs[3].KeyPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	touch(t, mtime, keyFile)
	step("key written whole", 3, false)
	if !strings.Contains(logs.String(), "TLS certificate reloaded") {
		t.Errorf("reloads not logged:\n%s", logs)
	}
}

// A pair that cannot be served is an error at start, naming the files.
func TestLoadCertificateErrors(t *testing.T) {
	dir := t.TempDir()
	a, b := newPair(t, 1), newPair(t, 2)
	write := func(name string, data []byte) string {
		f := filepath.Join(dir, name)
		if err := os.WriteFile(f, data, 0o600); err != nil {
			t.Fatal(err)
		}
		return f
	}
	aCert, aKey := write("a.pem", a.CertPEM), write("a.key", a.KeyPEM)
	bKey := write("b.key", b.KeyPEM)
	garbage := write("garbage.pem", []byte("not PEM"))
	for _, tc := range []struct{ name, cert, key string }{
		{"missing certificate", filepath.Join(dir, "none.pem"), aKey},
		{"missing key", aCert, filepath.Join(dir, "none.key")},
		{"key of another certificate", aCert, bKey},
		{"not PEM", garbage, aKey},
		{"files swapped", aKey, aCert},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := transport.LoadCertificate(tc.cert, tc.key, nil)
			if err == nil || !strings.Contains(err.Error(), tc.cert) || !strings.Contains(err.Error(), tc.key) {
				t.Errorf("got %v, want an error naming %s and %s", err, tc.cert, tc.key)
			}
		})
	}
	if _, err := transport.LoadCertificate(aCert, aKey, nil); err != nil {
		t.Errorf("a good pair: %v", err)
	}
}
