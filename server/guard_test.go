package server_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/decoy-mock/decoy/server"
)

const guardMax = 64 << 10

// guardEcho answers 200 with what it saw of the request, one "key=value" a line.
var guardEcho = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	fmt.Fprintf(w, "method=%s\nuri=%s\npath=%s\nquery=%s\nbody=%d\nbodyerr=%v\ntrailer=%s\n",
		r.Method, r.RequestURI, r.URL.EscapedPath(), r.URL.RawQuery, len(body), err != nil, r.Trailer.Get("X-Trailer"))
})

// guardServer serves h on 127.0.0.1 behind GuardListener, or without it
// when guarded is false (to compare with net/http alone).
func guardServer(t *testing.T, h http.Handler, guarded bool, configure ...func(*http.Server)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h, MaxHeaderBytes: guardMax, ReadHeaderTimeout: 10 * time.Second}
	for _, f := range configure {
		f(srv)
	}
	var served net.Listener = ln
	if guarded {
		served = server.GuardListener(ln, guardMax, srv.ReadHeaderTimeout)
	}
	go srv.Serve(served)
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String()
}

// guardClient is a client connection that speaks bytes.
type guardClient struct {
	t  *testing.T
	c  net.Conn
	br *bufio.Reader
}

func dialGuard(t *testing.T, addr string) *guardClient {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(10 * time.Second))
	return &guardClient{t: t, c: c, br: bufio.NewReader(c)}
}

func (rc *guardClient) send(s string) {
	rc.t.Helper()
	if _, err := io.WriteString(rc.c, s); err != nil {
		rc.t.Fatal(err)
	}
}

// answer reads one response, body included.
func (rc *guardClient) answer() (*http.Response, string) {
	rc.t.Helper()
	resp, err := http.ReadResponse(rc.br, nil)
	if err != nil {
		rc.t.Fatalf("reading answer: %v", err)
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		rc.t.Fatalf("reading answer body: %v", err)
	}
	return resp, string(body)
}

// wantClosed checks that the server hung up.
func (rc *guardClient) wantClosed() {
	rc.t.Helper()
	if b, err := rc.br.ReadByte(); err == nil {
		rc.t.Errorf("connection still open: read %q", b)
	}
}

// echoed reads an answer of guardEcho.
func (rc *guardClient) echoed() map[string]string {
	t := rc.t
	t.Helper()
	resp, body := rc.answer()
	if resp.StatusCode != 200 {
		t.Fatalf("status %d, want 200; body %q", resp.StatusCode, body)
	}
	m := map[string]string{}
	for line := range strings.SplitSeq(strings.TrimSuffix(body, "\n"), "\n") {
		k, v, _ := strings.Cut(line, "=")
		m[k] = v
	}
	return m
}

// wantGuardJSONError checks a refusal: JSON error, Connection: close.
func wantGuardJSONError(t *testing.T, resp *http.Response, body string, status int, msg string) {
	t.Helper()
	want := `{"error":"` + msg + `"}` + "\n"
	if resp.StatusCode != status || body != want {
		t.Errorf("got %d %q, want %d %q", resp.StatusCode, body, status, want)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type = %q", ct)
	}
	if !resp.Close {
		t.Error("no Connection: close")
	}
	var e struct{ Error string }
	if err := json.Unmarshal([]byte(body), &e); err != nil || e.Error == "" {
		t.Errorf("body is not a JSON error: %q", body)
	}
}

func TestGuardRepairsTargets(t *testing.T) {
	addr := guardServer(t, guardEcho, true)
	for _, tc := range []struct {
		name, target, path, query string
	}{
		{"bad escape", "/mock/%zz", "/mock/%25zz", ""},
		{"lone percent", "/mock/%", "/mock/%25", ""},
		{"short escape", "/mock/a%2", "/mock/a%252", ""},
		{"percent before escape", "/mock/%%41", "/mock/%25%41", ""},
		{"bad escape in query", "/mock/x?filters=%zz", "/mock/x", "filters=%25zz"},
		{"short escape in query", "/mock/x?limit=1%", "/mock/x", "limit=1%25"},
		{"NUL", "/mock/a\x00b", "/mock/a%00b", ""},
		{"control bytes", "/mock/\x01\x1f\x7f", "/mock/%01%1F%7F", ""},
		{"tab", "/mock/a\tb", "/mock/a%09b", ""},
		{"CR", "/mock/a\rb", "/mock/a%0Db", ""},
		{"NUL in query", "/mock/x?a=\x00", "/mock/x", "a=%00"},
		{"valid escapes untouched", "/mock/a%2Fb?q=%41%e9", "/mock/a%2Fb", "q=%41%e9"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rc := dialGuard(t, addr)
			rc.send("GET " + tc.target + " HTTP/1.1\r\nHost: decoy.test\r\n\r\n")
			got := rc.echoed()
			if got["path"] != tc.path || got["query"] != tc.query {
				t.Errorf("handler saw path %q query %q, want %q %q", got["path"], got["query"], tc.path, tc.query)
			}
			// The connection goes on.
			rc.send("GET /next HTTP/1.1\r\nHost: decoy.test\r\n\r\n")
			if got := rc.echoed(); got["path"] != "/next" {
				t.Errorf("next request: path %q", got["path"])
			}
		})
	}
}

func TestGuardRefuses(t *testing.T) {
	guarded := guardServer(t, guardEcho, true)
	plain := guardServer(t, guardEcho, false)
	big := func(n int) string {
		return "GET / HTTP/1.1\r\nHost: decoy.test\r\nX-Big: " + strings.Repeat("a", n) + "\r\n\r\n"
	}
	for _, tc := range []struct {
		name, request string
		status        int
		msg           string
		// netHTTPAccepts is set where the guard is deliberately stricter
		// than net/http.
		netHTTPAccepts bool
	}{
		// net/http counts bytes read, its 4 KiB buffer included.
		{"head too large", big(guardMax), 431, "Request headers too large (at most 64 KiB)", true},
		{"head far too large", big(guardMax + 8<<10), 431, "Request headers too large (at most 64 KiB)", false},
		{"request line too large", "GET /" + strings.Repeat("a", guardMax) + " HTTP/1.1\r\n\r\n", 431, "Request headers too large (at most 64 KiB)", false},
		{"NUL in header value", "GET / HTTP/1.1\r\nHost: decoy.test\r\nX-A: a\x00b\r\n\r\n", 400, "Malformed request: invalid header value", false},
		{"control byte in header value", "GET / HTTP/1.1\r\nHost: decoy.test\r\nX-A: a\x1bb\r\n\r\n", 400, "Malformed request: invalid header value", false},
		{"NUL in header name", "GET / HTTP/1.1\r\nHost: decoy.test\r\nX\x00A: b\r\n\r\n", 400, "Malformed request: invalid header name", false},
		{"header without colon", "GET / HTTP/1.1\r\nHost: decoy.test\r\nNoColon\r\n\r\n", 400, "Malformed request: header line without colon", false},
		{"space in header name", "GET / HTTP/1.1\r\nHost: decoy.test\r\nBad Name: x\r\n\r\n", 400, "Malformed request: invalid header name", false},
		{"space before colon", "GET / HTTP/1.1\r\nHost : decoy.test\r\n\r\n", 400, "Malformed request: invalid header name", false},
		{"separator in header name", "GET / HTTP/1.1\r\nHost: decoy.test\r\nX(y): z\r\n\r\n", 400, "Malformed request: invalid header name", false},
		{"continuation first", "GET / HTTP/1.1\r\n Host: decoy.test\r\n\r\n", 400, "Malformed request: header continuation without a field", false},
		{"folded header", "GET / HTTP/1.1\r\nHost: decoy.test\r\nX-Folded: a\r\n  b\r\n\r\n", 400, "Malformed request: obsolete line folding", true},
		{"folded Transfer-Encoding", "POST / HTTP/1.1\r\nHost: decoy.test\r\nTransfer-Encoding:\r\n chunked\r\n\r\n0\r\n\r\n", 400, "Malformed request: obsolete line folding", true},
		{"TE in HTTP/1.0", "POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\nConnection: keep-alive\r\n\r\n0\r\n\r\n", 400, "Malformed request: Transfer-Encoding in an HTTP/1.0 request", true},
		{"CL and TE", "POST / HTTP/1.1\r\nHost: decoy.test\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n", 400, "Malformed request: both Transfer-Encoding and Content-Length", true},
		{"bad CL", "POST / HTTP/1.1\r\nHost: decoy.test\r\nContent-Length: abc\r\n\r\n", 400, "Malformed request: invalid Content-Length", false},
		{"negative CL", "POST / HTTP/1.1\r\nHost: decoy.test\r\nContent-Length: -1\r\n\r\n", 400, "Malformed request: invalid Content-Length", false},
		{"empty CL", "POST / HTTP/1.1\r\nHost: decoy.test\r\nContent-Length: \r\n\r\n", 400, "Malformed request: invalid Content-Length", false},
		{"conflicting CL", "POST / HTTP/1.1\r\nHost: decoy.test\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab", 400, "Malformed request: conflicting Content-Length headers", false},
		{"TE gzip", "POST / HTTP/1.1\r\nHost: decoy.test\r\nTransfer-Encoding: gzip\r\n\r\n", 400, "Malformed request: unsupported Transfer-Encoding", false},
		{"TE chunked twice", "POST / HTTP/1.1\r\nHost: decoy.test\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400, "Malformed request: unsupported Transfer-Encoding", false},
		{"forbidden trailer", "POST / HTTP/1.1\r\nHost: decoy.test\r\nTransfer-Encoding: chunked\r\nTrailer: Content-Length\r\n\r\n0\r\n\r\n", 400, "Malformed request: invalid Trailer header", false},
		{"space in target", "GET /a b HTTP/1.1\r\nHost: decoy.test\r\n\r\n", 400, "Malformed request: invalid HTTP version", false},
		{"no version", "GET /\r\nHost: decoy.test\r\n\r\n", 400, "Malformed request: invalid request line", false},
		{"bad method", "G@T / HTTP/1.1\r\nHost: decoy.test\r\n\r\n", 400, "Malformed request: invalid request line", false},
		{"empty line first", "\r\nGET / HTTP/1.1\r\nHost: decoy.test\r\n\r\n", 400, "Malformed request: invalid request line", false},
		{"relative target", "GET mock HTTP/1.1\r\nHost: decoy.test\r\n\r\n", 400, "Malformed request: invalid request target", false},
		{"bad authority", "GET http://[::1/ HTTP/1.1\r\nHost: decoy.test\r\n\r\n", 400, "Malformed request: invalid request target", false},
		{"bad version", "GET / HTTP/1.x\r\nHost: decoy.test\r\n\r\n", 400, "Malformed request: invalid HTTP version", false},
		{"HTTP/2.0", "GET / HTTP/2.0\r\nHost: decoy.test\r\n\r\n", 505, "HTTP version not supported", false},
		{"missing Host", "GET / HTTP/1.1\r\n\r\n", 400, "Malformed request: missing Host header", false},
		{"two Hosts", "GET / HTTP/1.1\r\nHost: a\r\nhost: b\r\n\r\n", 400, "Malformed request: too many Host headers", false},
		{"bad Host", "GET / HTTP/1.1\r\nHost: a/b\r\n\r\n", 400, "Malformed request: invalid Host header", false},
		{"Expect other", "GET / HTTP/1.1\r\nHost: decoy.test\r\nExpect: teapot\r\n\r\n", 417, "Unsupported Expect header: only 100-continue is supported", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rc := dialGuard(t, guarded)
			rc.send(tc.request)
			resp, body := rc.answer()
			wantGuardJSONError(t, resp, body, tc.status, tc.msg)
			rc.wantClosed()

			// What net/http alone does with it.
			rc = dialGuard(t, plain)
			rc.send(tc.request)
			resp, body = rc.answer()
			if accepted := resp.StatusCode < 400; accepted != tc.netHTTPAccepts {
				t.Errorf("net/http alone answers %d %q", resp.StatusCode, body)
			}
		})
	}
}

func TestGuardIncompleteHead(t *testing.T) {
	addr := guardServer(t, guardEcho, true)
	rc := dialGuard(t, addr)
	rc.send("GET / HTTP/1.1\r\nHost: decoy.test\r\n")
	rc.c.(*net.TCPConn).CloseWrite()
	resp, body := rc.answer()
	wantGuardJSONError(t, resp, body, 400, "Malformed request: incomplete request head")
	rc.wantClosed()
}

func TestGuardPipelining(t *testing.T) {
	addr := guardServer(t, guardEcho, true)
	smuggled := "GET /smuggled HTTP/1.1\r\nHost: decoy.test\r\n\r\n"
	rc := dialGuard(t, addr)
	rc.send("GET /one HTTP/1.1\r\nHost: decoy.test\r\n\r\n" +
		"GET /two?x=%zz HTTP/1.1\r\nHost: decoy.test\r\n\r\n" +
		fmt.Sprintf("POST /three HTTP/1.1\r\nHost: decoy.test\r\nContent-Length: %d\r\n\r\n%s", len(smuggled), smuggled) +
		"\r\n" + // a stray CRLF after a POST body, which net/http skips
		"POST /four HTTP/1.1\r\nHost: decoy.test\r\nTransfer-Encoding: chunked\r\nTrailer: X-Trailer\r\n\r\n" +
		"5;ext=1\r\nhello\r\n6;a;b=\"q;x\"\r\n world\r\n0;last\r\nX-Trailer: t\r\n\r\n" +
		"GET /five HTTP/1.0\r\n\r\n")
	for _, want := range []struct{ method, path, query, body, trailer string }{
		{"GET", "/one", "", "0", ""},
		{"GET", "/two", "x=%25zz", "0", ""},
		{"POST", "/three", "", fmt.Sprint(len(smuggled)), ""},
		{"POST", "/four", "", "11", "t"},
		{"GET", "/five", "", "0", ""},
	} {
		got := rc.echoed()
		if got["method"] != want.method || got["path"] != want.path || got["query"] != want.query ||
			got["body"] != want.body || got["trailer"] != want.trailer || got["bodyerr"] != "false" {
			t.Errorf("got %v, want %+v", got, want)
		}
	}
	rc.wantClosed() // HTTP/1.0
}

// A malformed request pipelined behind good ones is answered after them.
func TestGuardPipelinedRefusal(t *testing.T) {
	addr := guardServer(t, guardEcho, true)
	rc := dialGuard(t, addr)
	rc.send("GET /one HTTP/1.1\r\nHost: decoy.test\r\n\r\n" +
		"POST /two HTTP/1.1\r\nHost: decoy.test\r\nContent-Length: 3\r\n\r\nabc" +
		"GET /three HTTP/1.1\r\nHost: decoy.test\r\nBad\x00: x\r\n\r\n" +
		"GET /four HTTP/1.1\r\nHost: decoy.test\r\n\r\n")
	for _, path := range []string{"/one", "/two"} {
		if got := rc.echoed(); got["path"] != path {
			t.Errorf("path %q, want %q", got["path"], path)
		}
	}
	resp, body := rc.answer()
	wantGuardJSONError(t, resp, body, 400, "Malformed request: invalid header name")
	rc.wantClosed()
}

// A handler still running when a malformed request arrives behind it must
// not see its context cancelled: net/http reads ahead while it runs.
func TestGuardRefusalWhileHandlerRuns(t *testing.T) {
	bad := "GET /%zz HTTP/1.1\r\nHost: decoy.test\r\nNoColon\r\n\r\n"
	for _, tc := range []struct {
		name     string
		together bool // the malformed request comes with the first
	}{
		{"sent together", true},
		{"sent while handling", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			release := make(chan struct{})
			entered := make(chan struct{}, 1)
			addr := guardServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				entered <- struct{}{}
				<-release
				if err := r.Context().Err(); err != nil {
					http.Error(w, "context: "+err.Error(), 500)
					return
				}
				io.WriteString(w, "done")
			}), true)
			rc := dialGuard(t, addr)
			first := "GET /slow HTTP/1.1\r\nHost: decoy.test\r\n\r\n"
			if tc.together {
				rc.send(first + bad)
				<-entered
			} else {
				rc.send(first)
				<-entered
				rc.send(bad)
			}
			// Give the server's background read the malformed request
			// before the handler returns: what is tested is that nothing
			// happens, so there is nothing to wait for.
			time.Sleep(50 * time.Millisecond)
			close(release)
			if resp, body := rc.answer(); resp.StatusCode != 200 || body != "done" {
				t.Errorf("first answer: %d %q", resp.StatusCode, body)
			}
			resp, body := rc.answer()
			wantGuardJSONError(t, resp, body, 400, "Malformed request: header line without colon")
			rc.wantClosed()
		})
	}
}

func TestGuardExpectContinue(t *testing.T) {
	addr := guardServer(t, guardEcho, true)
	rc := dialGuard(t, addr)
	rc.send("POST /upload HTTP/1.1\r\nHost: decoy.test\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n")
	resp, err := http.ReadResponse(rc.br, nil)
	if err != nil || resp.StatusCode != 100 {
		t.Fatalf("interim answer: %v %v", resp, err)
	}
	rc.send("hello")
	if got := rc.echoed(); got["body"] != "5" {
		t.Errorf("body length %s", got["body"])
	}
}

func TestGuardSlowClient(t *testing.T) {
	addr := guardServer(t, guardEcho, true)
	rc := dialGuard(t, addr)
	rc.c.(*net.TCPConn).SetNoDelay(true)
	req := "POST /slow%zz HTTP/1.1\r\nHost: decoy.test\r\nTransfer-Encoding: chunked\r\n\r\n3;x\r\nabc\r\n0\r\n\r\n"
	for i := range len(req) {
		rc.send(req[i : i+1])
		time.Sleep(100 * time.Microsecond) // so that bytes arrive apart
	}
	got := rc.echoed()
	if got["path"] != "/slow%25zz" || got["body"] != "3" {
		t.Errorf("got %v", got)
	}
}

// net/http's ReadHeaderTimeout still ends a head that does not come, without
// an answer. On a later request of a keep-alive connection it is its
// IdleTimeout that does: net/http only sees the head once it is whole.
func TestGuardReadHeaderTimeout(t *testing.T) {
	addr := guardServer(t, guardEcho, true, func(s *http.Server) {
		s.ReadHeaderTimeout = 200 * time.Millisecond
		s.IdleTimeout = 300 * time.Millisecond
	})
	for _, head := range []string{"G", "GET / HT", "GET / HTTP/1.1\r\nHost: deco", "GET / HTTP/1.1\r\nHost: decoy.test\r\n"} {
		rc := dialGuard(t, addr)
		rc.send(head)
		rc.wantClosed()

		rc = dialGuard(t, addr)
		rc.send("GET / HTTP/1.1\r\nHost: decoy.test\r\n\r\n")
		rc.echoed()
		rc.send(head)
		rc.wantClosed()
	}
}

// With a header timeout, a later request on a keep-alive connection whose
// head trickles in is cut once the timeout has passed since its first byte,
// long before the connection's IdleTimeout.
func TestGuardHeaderTimeoutOnKeptAliveConnections(t *testing.T) {
	addr := guardServer(t, guardEcho, true, func(s *http.Server) {
		s.ReadHeaderTimeout = 300 * time.Millisecond
		s.IdleTimeout = time.Minute
	})
	rc := dialGuard(t, addr)
	rc.send("GET / HTTP/1.1\r\nHost: decoy.test\r\n\r\n")
	rc.echoed()
	start := time.Now()
	rc.send("GET / HTTP/1.1\r\nHost: decoy.test\r\n")
	closed := make(chan struct{})
	go func() {
		rc.wantClosed()
		close(closed)
	}()
	for i := 0; ; i++ {
		select {
		case <-closed:
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("cut after %v", d)
			}
			return
		case <-time.After(100 * time.Millisecond):
			if time.Since(start) > 10*time.Second {
				t.Fatal("a trickling head was not cut")
			}
			rc.c.Write([]byte(fmt.Sprintf("X-%d: y\r\n", i)))
		}
	}
}

// A head near the limit grows the guard's buffer; the connection goes on
// after it, bodies large and small included.
func TestGuardLargeHeadsAndBodies(t *testing.T) {
	addr := guardServer(t, guardEcho, true)
	rc := dialGuard(t, addr)
	bigHead := "GET /big HTTP/1.1\r\nHost: decoy.test\r\nX-Big: " + strings.Repeat("a", guardMax-100) + "\r\n\r\n"
	bigBody := strings.Repeat("b", 1<<20)
	rc.send(bigHead)
	if got := rc.echoed(); got["path"] != "/big" {
		t.Errorf("got %v", got)
	}
	rc.send(fmt.Sprintf("POST /cl HTTP/1.1\r\nHost: decoy.test\r\nContent-Length: %d\r\n\r\n%s", len(bigBody), bigBody))
	if got := rc.echoed(); got["body"] != fmt.Sprint(len(bigBody)) {
		t.Errorf("got %v", got)
	}
	rc.send(fmt.Sprintf("POST /chunked HTTP/1.1\r\nHost: decoy.test\r\nTransfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\n0\r\n\r\n", len(bigBody), bigBody))
	if got := rc.echoed(); got["body"] != fmt.Sprint(len(bigBody)) {
		t.Errorf("got %v", got)
	}
	rc.send(bigHead + bigHead)
	rc.echoed()
	if got := rc.echoed(); got["path"] != "/big" {
		t.Errorf("got %v", got)
	}
}

// A chunked body net/http could not decode fails in the handler, which
// answers; the connection then closes.
func TestGuardMalformedChunkedBody(t *testing.T) {
	addr := guardServer(t, guardEcho, true)
	for name, chunks := range map[string]string{
		"bare LF":       "5\nhello\r\n0\r\n\r\n",
		"bad size":      "5x\r\nhello\r\n0\r\n\r\n",
		"no CRLF after": "5\r\nhelloX\r\n0\r\n\r\n",
		"bad trailer":   "0\r\nNoColon\r\n\r\n",
	} {
		t.Run(name, func(t *testing.T) {
			rc := dialGuard(t, addr)
			rc.send("POST / HTTP/1.1\r\nHost: decoy.test\r\nTransfer-Encoding: chunked\r\n\r\n" + chunks +
				"GET /next HTTP/1.1\r\nHost: decoy.test\r\n\r\n")
			if got := rc.echoed(); got["bodyerr"] != "true" {
				t.Errorf("got %v", got)
			}
			rc.wantClosed()
		})
	}
}

// What reaches net/http from a valid stream is the stream itself.
func TestGuardPassesValidBytesUnchanged(t *testing.T) {
	stream := "GET /mock/a%2Fb?filters=a%3D1&x=%C3%A9 HTTP/1.1\r\nHost: decoy.test\r\nAccept: */*\r\n\r\n" +
		"PUT /mock/x HTTP/1.1\nHost: decoy.test\nContent-Length: 4\n\n\x00\r\n\x7f" +
		"POST /chunks HTTP/1.1\r\nHost: [::1]:80\r\nTransfer-Encoding: Chunked\r\n\r\n" +
		"a;name=\"va;lue\"\r\n0123456789\r\n0\r\nX-T: 1\r\n  2\r\n\r\n" +
		"\r\n\n" +
		"OPTIONS * HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 0\r\n\r\n" +
		"CONNECT decoy.test:443 HTTP/1.1\r\nHost: decoy.test:443\r\n\r\n" +
		"GET http://decoy.test/abs?q HTTP/1.1\r\nHost: other\r\n\r\n" +
		"GET / HTTP/1.0\r\nAccept: */*\r\n\r\n"
	for _, size := range []int{1, 2, 3, 7, 64, 4096} {
		got, err := readGuarded([]byte(stream), size, size)
		if err != io.EOF {
			t.Errorf("reads of %d: ended with %v", size, err)
		}
		if string(got) != stream {
			t.Errorf("reads of %d: got\n%q\nwant\n%q", size, got, stream)
		}
	}
}

// The real Decoy handler behind the guard.
func TestGuardDecoy(t *testing.T) {
	h := newHarness(t)
	addr := guardServer(t, h.srv, true)
	for _, tc := range []struct {
		name, request string
		status        int
		msg           string
	}{
		{"bad escape", "GET /mock/%zz HTTP/1.1\r\nHost: decoy.test\r\n\r\n", 404, "Mock api not found"},
		{"NUL in path", "GET /mock/a\x00 HTTP/1.1\r\nHost: decoy.test\r\n\r\n", 404, "Mock api not found"},
		{"bad escape elsewhere", "GET /nowhere/%zz HTTP/1.1\r\nHost: decoy.test\r\n\r\n", 404, "Not found"},
		{"NUL in header", "GET /mock/x HTTP/1.1\r\nHost: decoy.test\r\nX: \x00\r\n\r\n", 400, "Malformed request: invalid header value"},
		{"head too large", "GET /mock/x HTTP/1.1\r\nHost: decoy.test\r\nX: " + strings.Repeat("a", guardMax) + "\r\n\r\n", 431, "Request headers too large (at most 64 KiB)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rc := dialGuard(t, addr)
			rc.send(tc.request)
			resp, body := rc.answer()
			want := `{"error":"` + tc.msg + `"}` + "\n"
			if resp.StatusCode != tc.status || body != want || resp.Header.Get("Content-Type") != "application/json" {
				t.Errorf("got %d %s %q, want %d %q", resp.StatusCode, resp.Header.Get("Content-Type"), body, tc.status, want)
			}
		})
	}
}

// BenchmarkGuard measures what the guard costs on the read path: keep-alive
// GETs, and a large body, as net/http reads them.
func BenchmarkGuard(b *testing.B) {
	var gets strings.Builder
	for range 64 {
		gets.WriteString("GET /mock/0123456789abcdef?filters=a%3D1&limit=10 HTTP/1.1\r\nHost: decoy.test\r\n" +
			"User-Agent: bench\r\nAccept: application/json\r\nServiceAuthToken: tok_0123456789\r\n\r\n")
	}
	for _, bc := range []struct{ name, stream string }{
		{"gets", gets.String()},
		{"body", "POST /admin/v1/mocks HTTP/1.1\r\nHost: decoy.test\r\nContent-Length: 1048576\r\n\r\n" + strings.Repeat("x", 1<<20)},
	} {
		b.Run(bc.name, func(b *testing.B) {
			stream := []byte(bc.stream)
			buf := make([]byte, 4096) // net/http's bufio size
			b.SetBytes(int64(len(stream)))
			for b.Loop() {
				c := &guardFakeConn{in: stream, sizes: []int{64 << 10}}
				gc, _ := server.GuardListener(&guardOneListener{c: c}, guardMax, 0).Accept()
				var err error
				for err == nil {
					_, err = gc.Read(buf)
				}
				if err != io.EOF {
					b.Fatal(err)
				}
			}
		})
	}
}

// readGuarded passes stream through a guarded connection that receives it
// in pieces of inSize bytes and reads what the guard delivers outSize bytes
// at a time. It returns the bytes and the error that ended them.
func readGuarded(stream []byte, inSize, outSize int) ([]byte, error) {
	c := &guardFakeConn{in: stream, sizes: []int{inSize}}
	gc, err := server.GuardListener(&guardOneListener{c: c}, guardMax, 0).Accept()
	if err != nil {
		return nil, err
	}
	defer gc.Close()
	var out []byte
	buf := make([]byte, outSize)
	for {
		n, err := gc.Read(buf)
		out = append(out, buf[:n]...)
		if err != nil {
			return out, err
		}
	}
}

// guardFakeConn is a client that has sent in, in pieces of the sizes given in
// turn, then closed its side. It never blocks.
type guardFakeConn struct {
	in    []byte
	sizes []int
	next  int

	mu      sync.Mutex
	written bytes.Buffer
	closed  chan struct{}
	once    sync.Once
}

func (c *guardFakeConn) Read(p []byte) (int, error) {
	if len(c.in) == 0 {
		return 0, io.EOF
	}
	size := c.sizes[c.next%len(c.sizes)]
	c.next++
	n := copy(p[:min(len(p), size)], c.in)
	c.in = c.in[n:]
	return n, nil
}

func (c *guardFakeConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.written.Write(p)
}

func (c *guardFakeConn) output() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.written.String()
}

func (c *guardFakeConn) Close() error {
	c.once.Do(func() {
		if c.closed != nil {
			close(c.closed)
		}
	})
	return nil
}

func (c *guardFakeConn) LocalAddr() net.Addr                { return guardAddr{} }
func (c *guardFakeConn) RemoteAddr() net.Addr               { return guardAddr{} }
func (c *guardFakeConn) SetDeadline(t time.Time) error      { return nil }
func (c *guardFakeConn) SetReadDeadline(t time.Time) error  { return nil }
func (c *guardFakeConn) SetWriteDeadline(t time.Time) error { return nil }

type guardAddr struct{}

func (guardAddr) Network() string { return "tcp" }
func (guardAddr) String() string  { return "192.0.2.1:1234" }

// guardOneListener accepts c once, then waits until closed.
type guardOneListener struct {
	c      net.Conn
	mu     sync.Mutex
	done   chan struct{}
	served bool
}

func (l *guardOneListener) Accept() (net.Conn, error) {
	l.mu.Lock()
	if l.done == nil {
		l.done = make(chan struct{})
	}
	done := l.done
	if !l.served {
		l.served = true
		l.mu.Unlock()
		return l.c, nil
	}
	l.mu.Unlock()
	<-done
	return nil, net.ErrClosed
}

func (l *guardOneListener) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.done == nil {
		l.done = make(chan struct{})
	}
	select {
	case <-l.done:
	default:
		close(l.done)
	}
	return nil
}

func (l *guardOneListener) Addr() net.Addr { return guardAddr{} }

// The head timer of a pipelined next request does not cancel the request
// being handled: net/http's background read meets that head.
func TestGuardHeadTimerSparesRunningHandler(t *testing.T) {
	slow := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(time.Second):
			io.WriteString(w, "done")
		case <-r.Context().Done():
			io.WriteString(w, "cancelled")
		}
	})
	addr := guardServer(t, slow, true, func(s *http.Server) { s.ReadHeaderTimeout = 200 * time.Millisecond })
	rc := dialGuard(t, addr)
	rc.send("GET / HTTP/1.1\r\nHost: decoy.test\r\n\r\n")
	time.Sleep(100 * time.Millisecond)
	rc.send("G") // the start of a next request, alone in its segment
	resp, body := rc.answer()
	if resp.StatusCode != 200 || body != "done" {
		t.Errorf("got %d %q, want the handler to finish", resp.StatusCode, body)
	}
}
