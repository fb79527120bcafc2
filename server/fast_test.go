package server_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/decoy-mock/decoy/client"
	"github.com/decoy-mock/decoy/server"
)

// exchange sends raw, one or more requests written at once, on a new
// connection to the server at url, and returns the answers, each whole and
// as sent. It reads until want answers have come, or the server closes.
func exchange(t *testing.T, url, raw string, want int) []string {
	t.Helper()
	rc := dialRaw(t, url)
	defer rc.c.Close()
	_ = rc.c.SetDeadline(time.Now().Add(10 * time.Second))
	rc.send(raw)
	br := rc.br
	var out []string
	for len(out) < want {
		var head bytes.Buffer
		for {
			line, err := br.ReadString('\n')
			head.WriteString(line)
			if err != nil {
				if head.Len() > 0 {
					t.Fatalf("answer cut short: %q", head.String())
				}
				return out
			}
			if line == "\r\n" {
				break
			}
		}
		resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(head.Bytes())), nil)
		if err != nil {
			t.Fatalf("%v in %q", err, head.String())
		}
		body := make([]byte, max(resp.ContentLength, 0))
		if !strings.HasPrefix(raw, "HEAD ") && resp.StatusCode != http.StatusNotModified {
			if _, err := io.ReadFull(br, body); err != nil {
				t.Fatalf("body: %v", err)
			}
		} else {
			body = nil
		}
		out = append(out, head.String()+string(body))
	}
	return out
}

var (
	dateLine  = regexp.MustCompile(`(?m)^Date: .*\r\n`)
	quotaLeft = regexp.MustCompile(`(?m)^(X-Quota-Remaining|X-RateLimit-Remaining): \d+\r\n`)
)

// comparable drops what differs between two answers given one after the
// other: the Date, and the quota and rate limit left, which the first
// request used.
func comparable(answer string) string {
	answer = dateLine.ReplaceAllString(answer, "Date: -\r\n")
	return quotaLeft.ReplaceAllString(answer, "$1 -\r\n")
}

// fastServer starts a server for h.srv behind its fast guard, configure
// setting its http.Server first.
func fastServer(t *testing.T, h *harness, configure func(*http.Server)) *httptest.Server {
	ts := httptest.NewUnstartedServer(h.srv)
	if configure != nil {
		configure(ts.Config)
	}
	ts.Listener = h.srv.GuardListener(ts.Listener, ts.Config)
	ts.Start()
	t.Cleanup(ts.Close)
	return ts
}

// rawClient is one keep-alive connection, written to as given.
type rawClient struct {
	t  *testing.T
	c  net.Conn
	br *bufio.Reader
}

func dialRaw(t *testing.T, url string) *rawClient {
	c, err := net.Dial("tcp", strings.TrimPrefix(url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &rawClient{t: t, c: c, br: bufio.NewReader(c)}
}

func (rc *rawClient) send(raw string) {
	rc.t.Helper()
	if _, err := io.WriteString(rc.c, raw); err != nil {
		rc.t.Fatal(err)
	}
}

// answer reads the next answer whole.
func (rc *rawClient) answer() (*http.Response, []byte, error) {
	resp, err := http.ReadResponse(rc.br, nil)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp, body, err
}

// do sends raw and reads its answer whole.
func (rc *rawClient) do(raw string) (*http.Response, []byte) {
	rc.t.Helper()
	rc.send(raw)
	resp, body, err := rc.answer()
	if err != nil {
		rc.t.Fatal(err)
	}
	return resp, body
}

// The guard answers a plain read of a whole public mock itself (fast.go),
// and every such answer is the one net/http and serveMock give, byte for
// byte; every other request, or any mock with limits, a delay or a token,
// goes to net/http. Each request here goes to a listener without the fast
// path, then to one with it, and the two answers are compared.
func TestFastPathSameAnswers(t *testing.T) {
	big := fmt.Sprintf(`[%s{"id":0}]`, strings.Repeat(`{"id":1,"name":"a user with a name"},`, 200))
	// Large enough for its filtered answer to be kept (built.go): the
	// first answer is built from the records, the next ones sent as kept.
	large := fmt.Sprintf(`[%s{"id":0}]`, strings.Repeat(`{"id":1,"name":"a user with a name"},`, 3000))
	type mockCase struct {
		name string
		data string
		o    client.CreateOptions
		fast bool // plain GETs of it are answered by the guard
	}
	thousand := int64(1000)
	mocks := []mockCase{
		{"array, sendfile", big, client.CreateOptions{}, true},
		{"large array", large, client.CreateOptions{}, true},
		{"small array", `[{"id":1},{"id":2}]`, client.CreateOptions{}, true},
		{"object", `{"id":1,"nested":{"a":[1,2]}}`, client.CreateOptions{}, true},
		{"html", strings.Repeat("<p>hi</p>", 500), client.CreateOptions{ContentType: "text/html; charset=utf-8"}, true},
		{"status 201", `[1,2,3]`, client.CreateOptions{Status: 201}, true},
		{"status 404", `{"error":"gone"}`, client.CreateOptions{Status: 404}, true},
		{"status 503", big, client.CreateOptions{Status: 503}, true},
		{"status 205", `[1]`, client.CreateOptions{Status: 205}, true},
		{"status 599", `[1]`, client.CreateOptions{Status: 599}, true},
		{"status 204", `[1]`, client.CreateOptions{Status: 204}, false},
		{"status 304", `[1]`, client.CreateOptions{Status: 304}, false},
		{"monthly quota", big, client.CreateOptions{MonthlyQuota: &thousand}, true},
		{"rate limit", big, client.CreateOptions{RateLimit: &thousand}, false},
		{"private", big, client.CreateOptions{Private: true}, false},
		{"delay", `[1]`, client.CreateOptions{DelayMS: 1}, false},
	}
	type reqCase struct {
		name   string
		method string
		suffix string // after the id
		header string // lines, each ending in \r\n
		proto  string
		fast   bool
	}
	reqs := []reqCase{
		{"plain", "GET", "", "", "HTTP/1.1", true},
		{"browser headers", "GET", "", "User-Agent: x\r\nAccept: application/json\r\nAccept-Language: fr\r\nReferer: http://a/\r\nCache-Control: no-cache\r\nPragma: no-cache\r\nSec-Fetch-Mode: cors\r\n", "HTTP/1.1", true},
		{"keep-alive", "GET", "", "Connection: Keep-Alive\r\n", "HTTP/1.1", true},
		{"identity", "GET", "", "Accept-Encoding: identity\r\n", "HTTP/1.1", true},
		{"gzip refused", "GET", "", "Accept-Encoding: gzip;q=0, br\r\n", "HTTP/1.1", true},
		{"gzip", "GET", "", "Accept-Encoding: gzip, deflate\r\n", "HTTP/1.1", false},
		{"star", "GET", "", "Accept-Encoding: *\r\n", "HTTP/1.1", false},
		{"two encodings", "GET", "", "Accept-Encoding: br\r\nAccept-Encoding: gzip\r\n", "HTTP/1.1", false},
		{"origin", "GET", "", "Origin: https://app.example\r\n", "HTTP/1.1", true}, // fast only with CORS open to all
		{"if-none-match", "GET", "", "If-None-Match: *\r\n", "HTTP/1.1", false},
		{"forwarded", "GET", "", "X-Forwarded-For: 10.0.0.1\r\n", "HTTP/1.1", false},
		{"token header", "GET", "", "serviceauthtoken: x\r\n", "HTTP/1.1", false},
		{"connection close", "GET", "", "Connection: close\r\n", "HTTP/1.1", false},
		{"HTTP/1.0", "GET", "", "", "HTTP/1.0", false},
		{"HEAD", "HEAD", "", "", "HTTP/1.1", false},
		{"limit", "GET", "?limit=1", "", "HTTP/1.1", true},
		{"large answer", "GET", "?offset=1&limit=150", "", "HTTP/1.1", true},
		{"filter and order", "GET", "?filters=id%3D1&order_by=name&order_direction=desc&limit=3", "", "HTTP/1.1", true},
		{"no match", "GET", "?filters=id%3D7", "", "HTTP/1.1", true},
		{"large filter", "GET", "?filters=id%3D1&order_by=name", "", "HTTP/1.1", true},
		{"large filter, gzip", "GET", "?filters=id%3D1&order_by=name", "Accept-Encoding: gzip\r\n", "HTTP/1.1", false},
		{"large filter, HEAD", "HEAD", "?filters=id%3D1&order_by=name", "", "HTTP/1.1", false},
		{"large filter again", "GET", "?filters=id%3D1&order_by=name", "", "HTTP/1.1", true},
		{"unknown parameter", "GET", "?x=1&limit", "", "HTTP/1.1", true},
		{"bad limit", "GET", "?limit=-1", "", "HTTP/1.1", false},
		{"bad operator", "GET", "?filters=id%5B%24gt%5D%3D1", "", "HTTP/1.1", false},
		{"token parameter", "GET", "?auth_token=x&limit=1", "", "HTTP/1.1", false},
		{"empty query", "GET", "?", "", "HTTP/1.1", false},
	}
	for _, cors := range [][]string{nil, {"https://app.example"}} {
		t.Run(fmt.Sprintf("cors %v", cors), func(t *testing.T) {
			h := newHarness(t, func(c *server.Config) {
				c.DefaultRateLimit, c.DefaultMonthlyQuota, c.CORSOrigins = 0, 0, cors
			})
			slow := h.slowURL()
			for _, mc := range mocks {
				m := h.create(mc.data, mc.o)
				for _, rc := range reqs {
					raw := fmt.Sprintf("%s /mock/%s%s %s\r\nHost: decoy.test\r\n%s\r\n", rc.method, m.ID, rc.suffix, rc.proto, rc.header)
					want := exchange(t, slow, raw, 1)
					before := server.FastAnswers(h.srv)
					got := exchange(t, h.url, raw, 1)
					fast := server.FastAnswers(h.srv) - before
					if len(want) != 1 || len(got) != 1 {
						t.Fatalf("%s, %s: %d and %d answers", mc.name, rc.name, len(want), len(got))
					}
					if g, w := comparable(got[0]), comparable(want[0]); g != w {
						gh, gb, _ := strings.Cut(g, "\r\n\r\n")
						wh, wb, _ := strings.Cut(w, "\r\n\r\n")
						t.Errorf("%s, %s: the guard answered\n%s\n(%d body bytes, same: %v)\nnet/http answered\n%s\n(%d body bytes)",
							mc.name, rc.name, gh, len(gb), gb == wb, wh, len(wb))
					}
					wantFast := mc.fast && rc.fast && (cors == nil || rc.name != "origin")
					if !strings.HasPrefix(mc.data, "[") && rc.suffix != "" && rc.suffix != "?" {
						// Parameters of data that is not an array are ignored.
						wantFast = mc.fast && rc.method == "GET" && rc.header == ""
					}
					if (fast == 1) != wantFast {
						t.Errorf("%s, %s: answered by the guard: %v, want %v", mc.name, rc.name, fast == 1, wantFast)
					}
				}
			}
		})
	}
}

// A fast answer (here of a query) counts the quota, the metrics and the
// access log as net/http's does.
func TestFastPathCounts(t *testing.T) {
	quota := int64(3)
	h := newHarness(t, func(c *server.Config) { c.DefaultRateLimit = 0 })
	m := h.create(`[{"id":1}]`, client.CreateOptions{MonthlyQuota: &quota})
	slow := h.slowURL()
	raw := "GET /mock/" + m.ID + "?filters=id%3D1&limit=5 HTTP/1.1\r\nHost: decoy.test\r\n\r\n"
	metric := `decoy_http_requests_total{code="200",route="mock"}`
	before := h.metric(metric)
	var lefts []string
	for i, url := range []string{slow, h.url, h.url} {
		a := exchange(t, url, raw, 1)[0]
		if !strings.HasPrefix(a, "HTTP/1.1 200 OK\r\n") {
			t.Fatalf("request %d: %q", i, a)
		}
		lefts = append(lefts, regexp.MustCompile(`X-Quota-Remaining: (\d+)`).FindStringSubmatch(a)[1])
	}
	if strings.Join(lefts, ",") != "2,1,0" {
		t.Errorf("X-Quota-Remaining: %v, want 2,1,0", lefts)
	}
	if server.FastAnswers(h.srv) != 2 {
		t.Errorf("answered by the guard: %d, want 2", server.FastAnswers(h.srv))
	}
	// The quota is spent: the guard hands the request on, and net/http
	// refuses it.
	a := exchange(t, h.url, raw, 1)[0]
	if !strings.HasPrefix(a, "HTTP/1.1 429 ") || !strings.Contains(a, "Monthly request quota exceeded") {
		t.Errorf("past the quota: %q", a)
	}
	// Both record an answer once it is written, which may be just after
	// the client has it.
	b, _ := strconv.Atoi(before)
	got := ""
	var lines []string
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		got, lines = h.metric(metric), nil
		for _, l := range strings.Split(h.logs.String(), "\n") {
			if strings.Contains(l, "msg=request") && strings.Contains(l, m.ID) && strings.Contains(l, "status=200") {
				lines = append(lines, regexp.MustCompile(` duration=\S+`).ReplaceAllString(strings.SplitN(l, " ", 2)[1], ""))
			}
		}
		if got == strconv.Itoa(b+3) && len(lines) == 3 {
			break
		}
	}
	if got != strconv.Itoa(b+3) {
		t.Errorf("%s: %s, want %d", metric, got, b+3)
	}
	if len(lines) != 3 || lines[0] != lines[1] || lines[1] != lines[2] {
		t.Errorf("access log lines differ:\n%s", strings.Join(lines, "\n"))
	}
}

// Pipelined requests are answered in order, whoever answers each.
func TestFastPathPipelined(t *testing.T) {
	h := newHarness(t, func(c *server.Config) { c.DefaultRateLimit, c.DefaultMonthlyQuota = 0, 0 })
	m := h.create(`[{"id":1},{"id":2},{"id":3}]`, client.CreateOptions{})
	// Requests with a query carry an If-None-Match that matches nothing:
	// the guard leaves them to net/http.
	get := func(suffix string) string {
		if suffix != "" {
			return "GET /mock/" + m.ID + suffix + " HTTP/1.1\r\nHost: decoy.test\r\nIf-None-Match: \"other\"\r\n\r\n"
		}
		return "GET /mock/" + m.ID + " HTTP/1.1\r\nHost: decoy.test\r\n\r\n"
	}
	raw := get("") + get("?limit=1") + get("") + "POST /mock/" + m.ID + " HTTP/1.1\r\nHost: d\r\nContent-Length: 0\r\n\r\n" +
		get("") + get("?offset=2") + get("")
	answers := exchange(t, h.url, raw, 7)
	wantTotals := []string{"3", "3", "3", "", "3", "3", "3"}
	wantBodies := []string{`[{"id":1},{"id":2},{"id":3}]`, `[{"id":1}]`, `[{"id":1},{"id":2},{"id":3}]`, `{"error":"Invalid Method"}`,
		`[{"id":1},{"id":2},{"id":3}]`, `[{"id":3}]`, `[{"id":1},{"id":2},{"id":3}]`}
	if len(answers) != 7 {
		t.Fatalf("%d answers, want 7", len(answers))
	}
	for i, a := range answers {
		head, body, _ := strings.Cut(a, "\r\n\r\n")
		if strings.TrimSpace(body) != wantBodies[i] {
			t.Errorf("answer %d: body %q, want %q", i, body, wantBodies[i])
		}
		if wantTotals[i] != "" && !strings.Contains(head, "X-Total-Count: "+wantTotals[i]) {
			t.Errorf("answer %d: %q", i, head)
		}
	}
	// The guard answered the first; the others came while net/http had
	// requests before them, and went to net/http in order.
	if n := server.FastAnswers(h.srv); n != 1 {
		t.Errorf("answered by the guard: %d, want 1", n)
	}

	// Once net/http has answered, the guard answers plain reads on the
	// same connection again. (A request that comes while net/http is still
	// ending its answer goes to net/http: the pause leaves it time.)
	rc := dialRaw(t, h.url)
	for _, suffix := range []string{"", "?limit=1", "", "?offset=2", ""} {
		rc.do(get(suffix))
		time.Sleep(20 * time.Millisecond)
	}
	if n := server.FastAnswers(h.srv); n != 4 {
		t.Errorf("answered by the guard: %d, want 4", n)
	}
}

// A connection kept busy by fast answers is not cut at the idle timeout
// net/http set before they came; one left idle is.
func TestFastPathIdleTimeout(t *testing.T) {
	h := newHarness(t, func(c *server.Config) { c.DefaultRateLimit, c.DefaultMonthlyQuota = 0, 0 })
	m := h.create(`[1]`, client.CreateOptions{})
	ts := fastServer(t, h, func(hs *http.Server) { hs.IdleTimeout = 300 * time.Millisecond })
	rc := dialRaw(t, ts.URL)
	for i := range 8 {
		time.Sleep(100 * time.Millisecond)
		rc.send("GET /mock/" + m.ID + " HTTP/1.1\r\nHost: d\r\n\r\n")
		if _, _, err := rc.answer(); err != nil {
			t.Fatalf("request %d, %v after start: %v", i, time.Duration(i+1)*100*time.Millisecond, err)
		}
	}
	_ = rc.c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := rc.br.ReadByte(); err != io.EOF {
		t.Errorf("idle connection: %v, want EOF", err)
	}
}

// A graceful stop (Shutdown, then DrainFast) lets an answer the guard is
// writing finish, and returns only then; the connection is closed after it.
func TestFastPathShutdown(t *testing.T) {
	h := newHarness(t, func(c *server.Config) {
		c.DefaultRateLimit, c.DefaultMonthlyQuota, c.MaxDataBytes = 0, 0, 64<<20
	})
	doc := `[` + strings.Repeat(`"0123456789abcdef0123456789abcdef",`, 1<<18) + `0]` // 9 MiB
	m := h.create(doc, client.CreateOptions{})
	ts := fastServer(t, h, nil)
	// net/http answers a first request, and then takes the connection
	// for idle, as it is while the guard answers the second: Shutdown
	// closes idle connections at once.
	rc := dialRaw(t, ts.URL)
	rc.do("GET /mock/" + m.ID + "?limit=1 HTTP/1.1\r\nHost: d\r\nIf-None-Match: \"other\"\r\n\r\n")
	time.Sleep(20 * time.Millisecond)
	rc.send("GET /mock/" + m.ID + " HTTP/1.1\r\nHost: d\r\n\r\n")
	if _, err := rc.br.Peek(1); err != nil { // the answer has begun; the rest waits on the reader
		t.Fatal(err)
	}
	stopped := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		err := ts.Config.Shutdown(ctx)
		if err == nil {
			err = h.srv.DrainFast(ctx)
		}
		stopped <- err
	}()
	time.Sleep(300 * time.Millisecond) // Shutdown closes idle connections at once
	select {
	case err := <-stopped:
		t.Fatalf("the stop returned (%v) before the answer was written", err)
	default:
	}
	_ = rc.c.SetReadDeadline(time.Now().Add(20 * time.Second))
	_, body, err := rc.answer()
	if err != nil || len(body) != len(doc) {
		t.Fatalf("body: %d bytes of %d, %v", len(body), len(doc), err)
	}
	if _, err := rc.br.ReadByte(); err != io.EOF {
		t.Errorf("after the answer: %v, want EOF", err)
	}
	if err := <-stopped; err != nil {
		t.Errorf("Shutdown: %v", err)
	}
	if server.FastAnswers(h.srv) != 1 {
		t.Errorf("answered by the guard: %d, want 1", server.FastAnswers(h.srv))
	}
}

// FuzzFastPath sends arbitrary headers, methods and targets for a mock to
// a listener with the fast path and to one without: the answers are the
// same, whoever gives them.
func FuzzFastPath(f *testing.F) {
	f.Add("GET", "", "")
	f.Add("GET", "", "Accept-Encoding: gzip\r\n")
	f.Add("GET", "", "accept-encoding: br;q=1, gzip;q=0\r\nConnection: keep-alive\r\n")
	f.Add("GET", "", "Connection: Keep-Alive, close\r\n")
	f.Add("GET", "", "Origin: https://x\r\nIf-None-Match: W/\"x\"\r\n")
	f.Add("GET", "?limit=1", "User-Agent: a\r\n")
	f.Add("HEAD", "", "")
	f.Add("GET", "", "X: 1\r\n\r\nGET /mock/ HTTP/1.1\r\nHost: d\r\n")
	h := newHarness(f, func(c *server.Config) { c.DefaultRateLimit, c.DefaultMonthlyQuota = 0, 0 })
	m := h.create(`[{"id":1,"name":"a"},{"id":2,"name":"b"}]`, client.CreateOptions{})
	slow := h.slowURL()
	f.Fuzz(func(t *testing.T, method, suffix, header string) {
		raw := method + " /mock/" + m.ID + suffix + " HTTP/1.1\r\nHost: d\r\n" + header + "\r\n"
		want, got := exchangeAll(t, slow, raw), exchangeAll(t, h.url, raw)
		if dateLine.ReplaceAllString(got, "Date: -\r\n") != dateLine.ReplaceAllString(want, "Date: -\r\n") {
			t.Errorf("for %q\nthe guard answered %q\nnet/http answered %q", raw, got, want)
		}
	})
}

// exchangeAll sends raw on a new connection to url, ends its input, and
// returns all that comes back.
func exchangeAll(t *testing.T, url, raw string) string {
	rc := dialRaw(t, url)
	defer rc.c.Close()
	_ = rc.c.SetDeadline(time.Now().Add(10 * time.Second))
	rc.send(raw)
	_ = rc.c.(*net.TCPConn).CloseWrite()
	b, err := io.ReadAll(rc.br)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// At Shutdown, a connection on which only the guard answered (new, to
// net/http) and that waits for a request is closed at once, as net/http
// closes its idle ones.
func TestFastPathShutdownIdle(t *testing.T) {
	h := newHarness(t, func(c *server.Config) { c.DefaultRateLimit, c.DefaultMonthlyQuota = 0, 0 })
	m := h.create(`[1]`, client.CreateOptions{})
	ts := fastServer(t, h, nil)
	answers := exchange(t, ts.URL, "GET /mock/"+m.ID+" HTTP/1.1\r\nHost: d\r\n\r\n", 1) // warms the cache
	if len(answers) != 1 {
		t.Fatal("no answer")
	}
	rc := dialRaw(t, ts.URL)
	rc.do("GET /mock/" + m.ID + " HTTP/1.1\r\nHost: d\r\n\r\n")
	if server.FastAnswers(h.srv) != 2 {
		t.Fatalf("answered by the guard: %d, want 2", server.FastAnswers(h.srv))
	}
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := ts.Config.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("Shutdown took %v", d)
	}
	_ = rc.c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := rc.br.ReadByte(); err != io.EOF {
		t.Errorf("after Shutdown: %v, want EOF", err)
	}
}

// net/http times a connection's first request (ReadTimeout) from when it
// began to read it; answers the guard gave meanwhile do not count against
// the request net/http reads after them.
func TestFastPathReadTimeout(t *testing.T) {
	h := newHarness(t, func(c *server.Config) { c.DefaultRateLimit, c.DefaultMonthlyQuota = 0, 0 })
	m := h.create(`[1]`, client.CreateOptions{})
	ts := fastServer(t, h, func(hs *http.Server) { hs.ReadTimeout, hs.IdleTimeout = 400*time.Millisecond, 5*time.Second })
	rc := dialRaw(t, ts.URL)
	for range 4 {
		rc.do("GET /mock/" + m.ID + " HTTP/1.1\r\nHost: d\r\n\r\n")
		time.Sleep(150 * time.Millisecond)
	}
	if server.FastAnswers(h.srv) != 4 {
		t.Fatalf("answered by the guard: %d, want 4", server.FastAnswers(h.srv))
	}
	body := `[{"id":2}]`
	rc.send("POST /admin/v1/mocks HTTP/1.1\r\nHost: d\r\nAuthorization: Bearer " + adminToken +
		"\r\nContent-Type: application/json\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n")
	time.Sleep(30 * time.Millisecond)
	resp, b := rc.do(body)
	if resp.StatusCode != http.StatusCreated {
		t.Errorf("upload after the guard's answers: %d %s", resp.StatusCode, b)
	}
}

// After a POST, the guard leaves the next request to net/http, which then
// knows it was not a POST: a blank line before the request after it is an
// error, as without the guard.
func TestFastPathAfterPost(t *testing.T) {
	h := newHarness(t, func(c *server.Config) { c.DefaultRateLimit, c.DefaultMonthlyQuota = 0, 0 })
	m := h.create(`[1]`, client.CreateOptions{})
	slow := h.slowURL()
	get := "GET /mock/" + m.ID + " HTTP/1.1\r\nHost: d\r\n\r\n"
	steps := []string{"POST /mock/" + m.ID + " HTTP/1.1\r\nHost: d\r\nContent-Length: 0\r\n\r\n", get, "\r\n" + get}
	talk := func(url string) string {
		rc := dialRaw(t, url)
		_ = rc.c.SetDeadline(time.Now().Add(10 * time.Second))
		var out strings.Builder
		for _, step := range steps {
			resp, b := rc.do(step)
			fmt.Fprintf(&out, "%d %s\n", resp.StatusCode, b)
			time.Sleep(20 * time.Millisecond) // net/http ends its answer
		}
		return out.String()
	}
	want, got := talk(slow), talk(h.url)
	if got != want {
		t.Errorf("the guard answered\n%s\nnet/http answered\n%s", got, want)
	}
}

// A kept answer (built.go) follows its mock: settings changed keep the
// document and its kept answers, with the new settings in the answer; data
// replaced, or the mock deleted and created again under its id, drops them.
// Through the guard and through net/http alike.
func TestKeptAnswersFollowTheMock(t *testing.T) {
	h := newHarness(t, func(c *server.Config) { c.DefaultRateLimit, c.DefaultMonthlyQuota = 0, 0 })
	slow := h.slowURL()
	doc := func(name string) string {
		return fmt.Sprintf(`[%s{"id":0}]`, strings.Repeat(`{"id":1,"name":"`+name+`"},`, 3000))
	}
	m := h.create(doc("first"), client.CreateOptions{ID: "00000000-0000-4000-8000-0000000000aa"})
	target := "/mock/" + m.ID + "?filters=id%3D1&order_by=name"
	get := func(url string) (*http.Response, string) {
		t.Helper()
		rc := dialRaw(t, url)
		resp, body := rc.do("GET " + target + " HTTP/1.1\r\nHost: decoy.test\r\n\r\n")
		return resp, string(body)
	}
	check := func(when string, status int, name string) {
		t.Helper()
		for i := range 3 {
			for _, url := range []string{h.url, slow} {
				resp, body := get(url)
				if resp.StatusCode != status || resp.Header.Get("X-Total-Count") != "3000" ||
					strings.Count(body, `"name":"`+name+`"`) != 3000 || strings.Contains(body, `"id":0`) {
					t.Fatalf("%s, read %d: %d, X-Total-Count %q, %d bytes: %.80s", when, i, resp.StatusCode,
						resp.Header.Get("X-Total-Count"), len(body), body)
				}
			}
		}
		if n := server.KeptAnswers(h.srv, m.ID); n != 1 {
			t.Fatalf("%s: %d answers kept, want 1", when, n)
		}
	}
	ctx := context.Background()
	check("created", 200, "first")
	if _, err := h.admin.UpdateMock(ctx, m.ID, map[string]any{"status": 201}); err != nil {
		t.Fatal(err)
	}
	check("status changed", 201, "first")
	if _, err := h.admin.ReplaceData(ctx, m.ID, strings.NewReader(doc("second")), "application/json"); err != nil {
		t.Fatal(err)
	}
	check("data replaced", 201, "second")
	if err := h.admin.DeleteMock(ctx, m.ID); err != nil {
		t.Fatal(err)
	}
	h.create(doc("third"), client.CreateOptions{ID: m.ID})
	check("created again", 200, "third")
}
