package server_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/decoy-mock/decoy/server"
)

// guardFuzzMax is the head limit in FuzzGuard: small, so that inputs reach it.
const guardFuzzMax = 1024

// FuzzGuard sends arbitrary bytes, as a client would, through the guard,
// which receives them in pieces and is read in pieces of sizes chosen by
// split. It checks that the guard:
//   - ends, without panicking, delivering no more than the input, its
//     repairs and a placeholder, and ends with io.EOF or a read error;
//   - answers a refusal in JSON on Close, and only a refusal;
//   - delivers well-formed requests unchanged;
//   - never lets net/http behind it answer in plain text;
//   - changes nothing that net/http alone accepts (but what it repairs and
//     what it deliberately refuses).
func FuzzGuard(f *testing.F) {
	for _, s := range []string{
		"GET /mock/a HTTP/1.1\r\nHost: decoy.test\r\n\r\n",
		"GET /a HTTP/1.1\r\nHost: x\r\n\r\nPOST /b?c=%41 HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhelloGET /c HTTP/1.1\r\nHost: x\r\n\r\n",
		"POST /c HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3;a=b\r\nabc\r\n0\r\nX-T: 1\r\n\r\nGET / HTTP/1.1\r\nHost: x\r\n\r\n",
	} {
		f.Add([]byte(s), uint8(0))
	}
	sizes := []int{1, 2, 3, 5, 8, 13, 64, 4096}
	f.Fuzz(func(t *testing.T, data []byte, split uint8) {
		in := guardRotate(sizes, int(split))
		out := guardRotate(sizes, int(split/8)+3)

		// A larger limit lets heads grow the guard's buffer and shrink it back.
		refused := false
		for _, maxHead := range []int{guardFuzzMax, 16 << 10} {
			got, reply, err := guardAlone(t, data, in, out, maxHead)
			if maxHead == guardFuzzMax {
				refused = reply != ""
			}
			guardWantEnd(t, data, got, err, reply)
			if guardWellFormed(data) && (err != io.EOF || !bytes.Equal(got, data)) {
				t.Fatalf("well-formed input changed: got %q, %v", got, err)
			}
		}

		guarded, text := guardServeFake(t, data, in, true)
		if bad := guardPlainTextAnswer(text); bad != "" {
			t.Fatalf("net/http answered in plain text behind the guard: %q", bad)
		}
		if len(data) > guardFuzzMax || guardNeedsRepair(data) || guardBothFramings(data) || guardStricter(data) {
			return
		}
		plain, text := guardServeFake(t, data, in, false)
		if refused && len(guarded) > 0 && len(guarded) == len(plain) {
			// A refused head right behind a request may end that
			// request's body read with the refusal, where net/http alone
			// would have read it whole before failing on the next head:
			// the last request is compared up to how its body ended.
			last := len(guarded) - 1
			guarded[last], _, _ = strings.Cut(guarded[last], " bodyerr=")
			plain[last], _, _ = strings.Cut(plain[last], " bodyerr=")
		}
		if guardPlainTextAnswer(text) == "" && !slices.Equal(guarded, plain) {
			t.Fatalf("the guard changed what net/http accepts:\nguarded %q\nalone   %q", guarded, plain)
		}
	})
}

func guardRotate(s []int, k int) []int {
	k %= len(s)
	return append(append([]int(nil), s[k:]...), s[:k]...)
}

// guardAlone reads what the guard delivers from data, and what it writes
// on Close.
func guardAlone(t *testing.T, data []byte, in, out []int, maxHead int) (got []byte, reply string, err error) {
	c := &guardFakeConn{in: data, sizes: in}
	gc, err := server.GuardListener(&guardOneListener{c: c}, maxHead, 0).Accept()
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 4096)
	for i := 0; ; i++ {
		// Each read delivers a byte or ends: more reads than this is a loop.
		if i > 3*len(data)+100 {
			t.Fatalf("no end after %d reads", i)
		}
		n, err := gc.Read(buf[:out[i%len(out)]])
		got = append(got, buf[:n]...)
		if n == 0 && err == nil {
			t.Fatal("read returned nothing and no error")
		}
		if err != nil {
			gc.Close()
			return got, c.output(), err
		}
	}
}

// guardWantEnd checks how the guard ended with data: got, err and reply.
func guardWantEnd(t *testing.T, data, got []byte, err error, reply string) {
	t.Helper()
	repairable := 0
	for _, b := range data {
		if b < 0x20 || b == 0x7f || b == '%' {
			repairable++
		}
	}
	if limit := len(data) + 2*repairable + len("GET / HTTP/1.1\r\n"); len(got) > limit {
		t.Fatalf("delivered %d bytes from %d", len(got), len(data))
	}
	var oe *net.OpError
	switch {
	case err == io.EOF:
		if reply != "" {
			t.Fatalf("reply %q after a clean end", reply)
		}
	case errors.As(err, &oe) && oe.Op == "read":
		if reply == "" {
			return // a malformed body: net/http's handler answers
		}
		resp, rerr := http.ReadResponse(bufio.NewReader(strings.NewReader(reply)), nil)
		if rerr != nil {
			t.Fatalf("reply %q: %v", reply, rerr)
		}
		body, _ := io.ReadAll(resp.Body)
		var e struct{ Error string }
		if resp.StatusCode < 400 || resp.Header.Get("Content-Type") != "application/json" || !resp.Close ||
			json.Unmarshal(body, &e) != nil || e.Error == "" {
			t.Fatalf("reply is not a JSON error: %q", reply)
		}
	default:
		t.Fatalf("ended with %v", err)
	}
}

// guardServeFake runs net/http, behind the guard or not, on a connection that
// sends data. It returns what the handler saw and what was written back.
func guardServeFake(t *testing.T, data []byte, in []int, guarded bool) ([]string, string) {
	c := &guardFakeConn{in: data, sizes: in, closed: make(chan struct{})}
	var ln net.Listener = &guardOneListener{c: c}
	if guarded {
		ln = server.GuardListener(ln, guardFuzzMax, 0)
	}
	var mu sync.Mutex
	var seen []string
	srv := &http.Server{
		MaxHeaderBytes: guardFuzzMax,
		ErrorLog:       log.New(io.Discard, "", 0),
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, err := io.ReadAll(r.Body)
			mu.Lock()
			seen = append(seen, fmt.Sprintf("%s %q %q bodyerr=%v trailer=%v", r.Method, r.RequestURI, body, err != nil, r.Trailer))
			mu.Unlock()
			w.Header().Set("Content-Type", "application/x-fuzz")
			io.WriteString(w, "ok")
		}),
	}
	go srv.Serve(ln)
	select {
	case <-c.closed:
	case <-time.After(10 * time.Second):
		t.Fatal("net/http never closed the connection")
	}
	srv.Close()
	mu.Lock()
	defer mu.Unlock()
	return seen, c.output()
}

var guardStatusLine = regexp.MustCompile(`HTTP/1\.[01] (\d{3}) [^\r]*\r\n`)

// guardPlainTextAnswer returns the first answer in text that is neither the
// handler's, nor an interim 100, nor a JSON error.
func guardPlainTextAnswer(text string) string {
	for _, m := range guardStatusLine.FindAllStringSubmatchIndex(text, -1) {
		status, _ := strconv.Atoi(text[m[2]:m[3]])
		rest := text[m[1]:]
		end, _, _ := strings.Cut(rest, "\r\n\r\n")
		switch {
		case status == 100 || status == 200:
		case strings.Contains(end, "Content-Type: application/json\r\n"):
		default:
			return text[m[0]:]
		}
	}
	if i := strings.Index(text, "text/plain"); i >= 0 {
		return text[i:]
	}
	return ""
}

// guardNeedsRepair reports whether data has bytes the guard would escape in a
// target: then the handler is meant to see something else.
func guardNeedsRepair(data []byte) bool {
	for i, b := range data {
		if b == '%' && (i+2 >= len(data) || !isGuardHex(data[i+1]) || !isGuardHex(data[i+2])) {
			return true
		}
		if b < 0x20 && b != '\r' && b != '\n' || b == 0x7f {
			return true
		}
	}
	return false
}

func isGuardHex(b byte) bool {
	return strings.IndexByte("0123456789abcdefABCDEF", b) >= 0
}

// guardStricter reports whether data may hold what else the guard refuses
// though net/http accepts it: a folded header line, or Transfer-Encoding in
// an HTTP/1.0 request.
func guardStricter(data []byte) bool {
	l := bytes.ToLower(data)
	return bytes.Contains(data, []byte("\n ")) || bytes.Contains(data, []byte("\n\t")) ||
		bytes.Contains(l, []byte("transfer-encoding")) && bytes.Contains(l, []byte("http/1.0"))
}

// guardBothFramings reports whether data may hold a request with both
// Transfer-Encoding and Content-Length, which the guard refuses though
// net/http accepts it.
func guardBothFramings(data []byte) bool {
	l := bytes.ToLower(data)
	return bytes.Contains(l, []byte("transfer-encoding")) && bytes.Contains(l, []byte("content-length"))
}

// guardWellFormed reports whether data is a sequence of requests in a strict
// subset of HTTP/1.1, written independently of the guard: those must pass
// unchanged.
func guardWellFormed(data []byte) bool {
	if len(data) > 8<<10 {
		return false // keeps chunk overhead far from net/http's limit
	}
	s := string(data)
	line := func() (string, bool) {
		l, rest, ok := strings.Cut(s, "\r\n")
		s = rest
		return l, ok
	}
	for s != "" {
		start := len(s)
		l, ok := line()
		method, rest, ok1 := strings.Cut(l, " ")
		target, proto, ok2 := strings.Cut(rest, " ")
		if !ok || !ok1 || !ok2 || proto != "HTTP/1.1" || !guardStrictMethod(method) || !guardStrictTarget(target) {
			return false
		}
		hosts, length, chunked := 0, -1, false
		for {
			l, ok := line()
			if !ok {
				return false
			}
			if l == "" {
				break
			}
			name, value, ok := strings.Cut(l, ": ")
			if !ok || !guardStrictName(name) || !guardStrictValue(value) {
				return false
			}
			switch strings.ToLower(name) {
			case "host":
				if strings.Trim(value, "abcdefghijklmnopqrstuvwxyz0123456789.-:") != "" {
					return false
				}
				hosts++
			case "content-length":
				n, err := strconv.Atoi(value)
				if err != nil || length >= 0 || len(value) > 6 || value != strconv.Itoa(n) {
					return false
				}
				length = n
			case "transfer-encoding":
				if value != "chunked" || chunked {
					return false
				}
				chunked = true
			case "expect", "trailer":
				return false
			}
		}
		if hosts != 1 || chunked && length >= 0 || start-len(s) > guardFuzzMax {
			return false
		}
		switch {
		case chunked:
			for {
				l, ok := line()
				size, ext, _ := strings.Cut(l, ";")
				n, err := strconv.ParseUint(size, 16, 32)
				if !ok || err != nil || len(size) > 8 || len(ext) > 16 || !guardStrictValue(ext) || strings.ContainsAny(ext, " \t") {
					return false
				}
				if n == 0 {
					break
				}
				if uint64(len(s)) < n+2 || s[n:n+2] != "\r\n" {
					return false
				}
				s = s[n+2:]
			}
			for {
				l, ok := line()
				if !ok {
					return false
				}
				if l == "" {
					break
				}
				name, value, ok := strings.Cut(l, ": ")
				if !ok || !guardStrictName(name) || !guardStrictValue(value) {
					return false
				}
			}
		case length > 0:
			if len(s) < length {
				return false
			}
			s = s[length:]
		}
	}
	return true
}

func guardStrictMethod(m string) bool {
	switch m {
	case "GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS":
		return true
	}
	return false
}

func guardStrictTarget(t string) bool {
	if !strings.HasPrefix(t, "/") {
		return false
	}
	for i := 0; i < len(t); i++ {
		switch b := t[i]; {
		case b == '%':
			if i+2 >= len(t) || !isGuardHex(t[i+1]) || !isGuardHex(t[i+2]) {
				return false
			}
		case 'a' <= b && b <= 'z', 'A' <= b && b <= 'Z', '0' <= b && b <= '9':
		case strings.IndexByte("-._~!$&'()*+,;=:@/?", b) >= 0:
		default:
			return false
		}
	}
	return true
}

func guardStrictName(n string) bool {
	if n == "" {
		return false
	}
	for i := 0; i < len(n); i++ {
		b := n[i]
		if !('a' <= b && b <= 'z' || 'A' <= b && b <= 'Z' || '0' <= b && b <= '9' || b == '-') {
			return false
		}
	}
	return true
}

func guardStrictValue(v string) bool {
	for i := 0; i < len(v); i++ {
		if v[i] < 0x21 || v[i] > 0x7e {
			return false
		}
	}
	return true
}
