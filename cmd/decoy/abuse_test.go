package main_test

// Decoy under abuse: slow and oversized requests, garbage paths, brute
// force and floods, against the real binary.

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/decoy-mock/decoy/client"
)

// raw sends bytes on a new connection and returns the status line, the
// Content-Type and the body of the answer.
func raw(t *testing.T, base, request string) (status int, contentType, body string) {
	t.Helper()
	c, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(c, request); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("%q: %v", request, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Content-Type"), string(b)
}

// isJSONError reports whether body is {"error":"..."}.
func isJSONError(body string) bool {
	var e struct {
		Error string `json:"error"`
	}
	return json.Unmarshal([]byte(body), &e) == nil && e.Error != ""
}

// A client that sends its headers slowly is cut: not before the 10 s the
// server gives a request's head, and not much later. The upper bound is
// loose on purpose: a busy machine may be seconds late to close the
// connection, and what matters is that the client is cut at all.
func TestSlowHeadersAreCut(t *testing.T) {
	t.Parallel()
	const headerTimeout = 10 * time.Second // server.defaultReadHeaderTimeout
	const cutWithin = 40 * time.Second
	p := start(t, t.TempDir())
	// The clock starts before the dial, so before the server's: the time
	// measured is never shorter than the server's timeout.
	begin := time.Now()
	c, err := net.Dial("tcp", strings.TrimPrefix(p.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: x\r\n")
	closed := make(chan struct{})
	go func() {
		buf := make([]byte, 512)
		for {
			if _, err := c.Read(buf); err != nil {
				close(closed)
				return
			}
		}
	}()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for i := 0; ; i++ {
		select {
		case <-closed:
			d := time.Since(begin)
			if d < headerTimeout {
				t.Errorf("cut after %v, before the %v header timeout", d, headerTimeout)
			}
			t.Logf("cut after %v", d.Round(time.Millisecond))
			return
		case <-tick.C:
			if time.Since(begin) > cutWithin {
				t.Fatalf("a client sending a header a second was not cut within %v", cutWithin)
			}
			fmt.Fprintf(c, "X-%d: y\r\n", i) // a header a second, never the end
		}
	}
}

// A client that trickles a body, a byte a second of the 60,000 it
// declared, to the sign-in is cut once the 5 s a body's first bytes get
// are over, with a 408 in JSON and its connection closed, rather than hold
// the connection for minutes; meanwhile an upload that keeps a steady
// pace above the floor (64 KiB/s) lasts longer than that and is stored.
// The upper bound is loose on purpose: a busy machine may be seconds
// late, and what matters is that the trickle is cut long before the
// 2 min it held its connection for.
func TestSlowBodiesAreCut(t *testing.T) {
	t.Parallel()
	const grace = 5 * time.Second // server.defaultBodyGrace
	const cutWithin = 40 * time.Second
	p := start(t, t.TempDir(), "--admin-token", adminToken)

	const size, chunk, every = 2 << 20, 32 << 10, 125 * time.Millisecond // 256 KiB/s for 8 s
	doc := "[" + strings.Repeat("0,", size/2-1) + "0]"
	steady := make(chan string, 1)
	go func() {
		req, _ := http.NewRequest("POST", p.url+"/admin/v1/mocks", &pacedReader{r: strings.NewReader(doc), chunk: chunk, every: every})
		req.ContentLength = int64(len(doc))
		req.Header.Set("Authorization", "Bearer "+adminToken)
		req.Header.Set("Content-Type", "application/json")
		begin := time.Now()
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			steady <- err.Error()
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		steady <- fmt.Sprintf("%d after %v: %.80s", resp.StatusCode, time.Since(begin).Round(100*time.Millisecond), b)
	}()

	// The clock starts before the dial, so before the server's: the time
	// measured is never shorter than the server's grace.
	begin := time.Now()
	c, err := net.Dial("tcp", strings.TrimPrefix(p.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetReadDeadline(begin.Add(cutWithin))
	io.WriteString(c, "POST /admin/v1/auth/token HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 60000\r\n\r\n{")
	type result struct {
		status      int
		ct, body    string
		answered    time.Duration
		closed      time.Duration
		err, endErr error
	}
	done := make(chan result, 1)
	go func() {
		var res result
		br := bufio.NewReader(c)
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			res.err = err
			done <- res
			return
		}
		b, _ := io.ReadAll(resp.Body)
		res.status, res.ct, res.body, res.answered = resp.StatusCode, resp.Header.Get("Content-Type"), string(b), time.Since(begin)
		_, res.endErr = io.Copy(io.Discard, br) // until the server closes
		res.closed = time.Since(begin)
		done <- res
	}()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	var res result
	for trickling := true; trickling; {
		select {
		case res = <-done:
			trickling = false
		case <-tick.C:
			c.Write([]byte(" ")) // a byte a second; fails once the server has closed
		}
	}
	switch {
	case res.err != nil:
		t.Fatalf("no answer to the trickle within %v: %v", cutWithin, res.err)
	case res.status != 408 || res.ct != "application/json" || !strings.HasPrefix(res.body, `{"error":"Request body too slow: `):
		t.Errorf("trickle answered %d %q %s, want 408 and a JSON error", res.status, res.ct, res.body)
	case res.endErr != nil && !errors.Is(res.endErr, syscall.ECONNRESET):
		t.Errorf("the trickle's connection was not closed within %v: %v", cutWithin, res.endErr)
	case res.answered < grace:
		t.Errorf("trickle cut after %v, before the %v grace", res.answered, grace)
	}
	t.Logf("trickle answered %d after %v, connection closed after %v", res.status, res.answered.Round(time.Millisecond), res.closed.Round(time.Millisecond))
	if !p.waitLog("request body too slow") {
		t.Errorf("the cut was not logged:\n%s", p.stderr)
	}

	got := <-steady
	if !strings.HasPrefix(got, "201 ") {
		t.Errorf("steady upload of %d bytes at 256 KiB/s: %s", len(doc), got)
	}
	t.Logf("steady upload: %s", got)
}

// pacedReader reads r in pieces of chunk bytes, one every so often from
// its first read: a client on a slow but steady link.
type pacedReader struct {
	r     io.Reader
	chunk int
	every time.Duration
	start time.Time
	i     int
}

func (p *pacedReader) Read(b []byte) (int, error) {
	if p.start.IsZero() {
		p.start = time.Now()
	}
	time.Sleep(time.Until(p.start.Add(time.Duration(p.i) * p.every)))
	p.i++
	return p.r.Read(b[:min(len(b), p.chunk)])
}

// Malformed paths and queries, oversized heads and hostile bodies get a
// JSON 4xx, never a 5xx or a text error.
func TestHostileRequestsGetJSONErrors(t *testing.T) {
	p := start(t, t.TempDir(), "--admin-token", adminToken, "--max-data-bytes", "4KiB")
	m := createMock(t, p, `[{"a":1}]`, client.CreateOptions{})
	auth := "Authorization: Bearer " + adminToken + "\r\n"
	deep := strings.Repeat("[", 600) + strings.Repeat("]", 600)
	for _, tc := range []struct {
		name    string
		request string
		status  int
	}{
		// net/http refuses these; nothing repairs a request target.
		{"bad escape in the path", "GET /mock/%zz HTTP/1.1\r\nHost: x\r\n\r\n", 400},
		{"truncated escape", "GET /mock/" + m.ID + "% HTTP/1.1\r\nHost: x\r\n\r\n", 400},
		{"NUL byte in the path", "GET /mock/\x00 HTTP/1.1\r\nHost: x\r\n\r\n", 400},
		{"escaped NUL", "GET /mock/%00 HTTP/1.1\r\nHost: x\r\n\r\n", 404},
		{"dot segments", "GET /mock/../admin/v1/mocks HTTP/1.1\r\nHost: x\r\n\r\n", 404},
		{"extra segment", "GET /mock/" + m.ID + "/extra HTTP/1.1\r\nHost: x\r\n\r\n", 404},
		{"bad escape in filters", "GET /mock/" + m.ID + "?filters=%zz HTTP/1.1\r\nHost: x\r\n\r\n", 400},
		{"control byte in the query", "GET /mock/" + m.ID + "?filters=a\x01 HTTP/1.1\r\nHost: x\r\n\r\n", 400},
		{"too many conditions", "GET /mock/" + m.ID + "?filters=" + strings.Repeat("a%3D1%26", 40) + " HTTP/1.1\r\nHost: x\r\n\r\n", 400},
		{"headers over 64 KiB", "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: " + strings.Repeat("a", 70<<10) + "\r\n\r\n", 431},
		{"NUL in a header", "GET /healthz HTTP/1.1\r\nHost: x\r\nX-A: a\x00b\r\n\r\n", 400},
		{"header without colon", "GET /healthz HTTP/1.1\r\nHost: x\r\nnonsense\r\n\r\n", 400},
		{"upload over --max-data-bytes", "POST /admin/v1/mocks HTTP/1.1\r\nHost: localhost\r\n" + auth + "Content-Length: 5000\r\n\r\n" + "[" + strings.Repeat(" ", 4998) + "]", 413},
		{"chunked upload over the cap", "POST /admin/v1/mocks HTTP/1.1\r\nHost: localhost\r\n" + auth + "Transfer-Encoding: chunked\r\n\r\n1400\r\n" + strings.Repeat(" ", 0x1400) + "\r\n0\r\n\r\n", 413},
		{"nesting too deep", "POST /admin/v1/mocks HTTP/1.1\r\nHost: localhost\r\n" + auth + fmt.Sprintf("Content-Length: %d\r\n\r\n", len(deep)) + deep, 400},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, ct, body := raw(t, p.url, tc.request)
			if status != tc.status || ct != "application/json" || !isJSONError(body) {
				t.Errorf("got %d %q %q, want %d with a JSON error", status, ct, body, tc.status)
			}
		})
	}
	if strings.Contains(p.stderr.String(), "panic") {
		t.Errorf("panic logged:\n%s", p.stderr)
	}
}

// Guessing tokens is cut off with 429 and Retry-After; behind a trusted
// proxy each client is counted apart, and a forged X-Forwarded-For from an
// untrusted peer changes nothing.
func TestBruteForceIsRefused(t *testing.T) {
	p := start(t, t.TempDir(), "--admin-token", adminToken, "--auth-failure-limit", "5", "--trusted-proxies", "127.0.0.1/32")
	m := createMock(t, p, `[1]`, client.CreateOptions{Private: true})
	url := p.url + "/mock/" + m.ID
	for i := range 5 {
		if a := get(t, url, "serviceauthtoken", fmt.Sprint("guess", i), "X-Forwarded-For", "198.51.100.1"); a.status != 401 {
			t.Fatalf("guess %d: %d %s", i, a.status, a.body)
		}
	}
	req, _ := http.NewRequest("GET", url, nil)
	req.Header.Set("serviceauthtoken", "guess6")
	req.Header.Set("X-Forwarded-For", "198.51.100.1")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 429 || resp.Header.Get("Retry-After") == "" {
		t.Errorf("6th guess: %d, Retry-After %q", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	// Another client behind the same proxy is not blocked.
	if a := get(t, url, "serviceauthtoken", m.Token, "X-Forwarded-For", "198.51.100.2"); a.status != 200 {
		t.Errorf("another client: %d %s", a.status, a.body)
	}
}

// With --client-rate-limit, a flood of unknown ids is refused cheaply.
func TestClientRateLimitEndToEnd(t *testing.T) {
	p := start(t, t.TempDir(), "--client-rate-limit", "5")
	statuses := map[int]int{}
	for range 8 {
		statuses[get(t, p.url+"/mock/00000000-0000-4000-8000-000000000000").status]++
	}
	if statuses[404] != 5 || statuses[429] != 3 {
		t.Errorf("8 requests with a client limit of 5: %v", statuses)
	}
	if a := get(t, p.url+"/healthz"); a.status != 200 {
		t.Errorf("healthz: %d", a.status)
	}
}

// On SIGTERM, a delayed request in flight finishes, new connections are
// refused while it waits, and the process exits once it is done, long
// before the shutdown timeout. The bounds are loose: a busy machine may be
// slow to act on the signal, but not by seconds.
func TestSIGTERMDuringDelayedResponse(t *testing.T) {
	const delay = 5 * time.Second
	p := start(t, t.TempDir(), "--admin-token", adminToken, "--shutdown-timeout", "2m")
	m := createMock(t, p, `[{"slow":true}]`, client.CreateOptions{DelayMS: int(delay.Milliseconds())})
	result, sent := getAsync(p.url + "/mock/" + m.ID)
	<-sent
	time.Sleep(500 * time.Millisecond) // the server has accepted it; it is in its delay
	p.cmd.Process.Signal(syscall.SIGTERM)
	refused := false
	for deadline := time.Now().Add(delay / 2); !refused && time.Now().Before(deadline); {
		c, err := net.DialTimeout("tcp", strings.TrimPrefix(p.url, "http://"), time.Second)
		if err != nil {
			refused = true
			break
		}
		c.Close()
		time.Sleep(20 * time.Millisecond)
	}
	if !refused {
		t.Errorf("new connections were still accepted %v after SIGTERM", delay/2)
	}
	var a answer
	select {
	case a = <-result:
		t.Errorf("the delayed request was answered (%d) before new connections were refused", a.status)
	default:
		a = <-result
	}
	if a.status != 200 || a.body != `[{"slow":true}]` {
		t.Errorf("delayed request: %d %s", a.status, a.body)
	}
	select {
	case err := <-p.done:
		p.done <- err // for stop, at cleanup
	case <-time.After(30 * time.Second):
		t.Fatal("did not exit within 30 s of the delayed request's answer (the shutdown timeout is 2 min)")
	}
}

// On SIGTERM, a large answer being sent is sent to its end before the
// process exits.
func TestSIGTERMDuringLargeAnswer(t *testing.T) {
	p := start(t, t.TempDir(), "--admin-token", adminToken, "--rate-limit", "0")
	doc := `[` + strings.Repeat(`"0123456789abcdef0123456789abcdef",`, 1<<18) + `0]` // 9 MiB
	m := createMock(t, p, doc, client.CreateOptions{})
	c, err := net.Dial("tcp", strings.TrimPrefix(p.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(30 * time.Second))
	br := bufio.NewReader(c)
	read := func() (int, []byte) {
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatalf("body: %d bytes, %v", len(body), err)
		}
		return resp.StatusCode, body
	}
	// The client reads nothing of the answer until after the signal.
	fmt.Fprintf(c, "GET /mock/%s HTTP/1.1\r\nHost: d\r\n\r\n", m.ID)
	if _, err := br.Peek(1); err != nil {
		t.Fatal(err)
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	time.Sleep(500 * time.Millisecond)
	select {
	case err := <-p.done:
		p.done <- err
		t.Fatalf("exited (%v) with the answer unsent", err)
	default:
	}
	if status, body := read(); status != 200 || string(body) != doc {
		t.Errorf("answer in flight: %d, %d bytes of %d", status, len(body), len(doc))
	}
	select {
	case err := <-p.done:
		p.done <- err // for stop, at cleanup
	case <-time.After(10 * time.Second):
		t.Fatal("did not exit after the answer was sent")
	}
}

// Stored HTML is served sandboxed, so its scripts cannot run in Decoy's
// origin; JSON is served as is.
func TestStoredHTMLIsSandboxed(t *testing.T) {
	p := start(t, t.TempDir(), "--admin-token", adminToken)
	m, err := p.admin().CreateMock(context.Background(), strings.NewReader(`<script>alert(document.cookie)</script>`),
		client.CreateOptions{ContentType: "text/html"})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get(p.url + "/mock/" + m.ID)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.Header.Get("Content-Security-Policy") != "sandbox" || resp.Header.Get("X-Content-Type-Options") != "nosniff" {
		t.Errorf("HTML mock headers: %v", resp.Header)
	}
}

// A client that goes away (here: half-closes) during a delay gets no empty
// 200: the connection is closed without an answer.
func TestNoEmptyAnswerAfterAbandonedDelay(t *testing.T) {
	p := start(t, t.TempDir(), "--admin-token", adminToken)
	m := createMock(t, p, `[{"late":true}]`, client.CreateOptions{DelayMS: 2000})
	c, err := net.Dial("tcp", strings.TrimPrefix(p.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	io.WriteString(c, "GET /mock/"+m.ID+" HTTP/1.1\r\nHost: x\r\n\r\n")
	c.(*net.TCPConn).CloseWrite()
	got, _ := io.ReadAll(c)
	if len(got) > 0 {
		t.Errorf("answer to an abandoned delayed request: %q", got)
	}
}

// One client cannot hold more than --max-client-connections connections.
func TestClientConnectionCap(t *testing.T) {
	p := start(t, t.TempDir(), "--max-client-connections", "3")
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for range 3 {
		c, err := net.Dial("tcp", strings.TrimPrefix(p.url, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
	}
	status, ct, body := raw(t, p.url, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
	if status != 503 || ct != "application/json" || !isJSONError(body) {
		t.Errorf("4th connection: %d %q %q", status, ct, body)
	}
}
