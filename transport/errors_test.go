package transport_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/decoy-mock/decoy/transport"
)

// serve starts an http.Server behind JSONErrors, with the extra header
// lines given, whose handler answers in plain text, and returns its
// address.
func serve(t *testing.T, header ...string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			// What a handler writes is never rewritten, even an answer
			// that looks like net/http's own.
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			w.Header().Set("Connection", "close")
			w.WriteHeader(http.StatusBadRequest)
			io.WriteString(w, "400 Bad Request")
		}),
		MaxHeaderBytes: 4 << 10,
	}
	go srv.Serve(transport.JSONErrors(ln, 4<<10, header...))
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String()
}

// exchange sends request on a new connection and reads one answer.
func exchange(t *testing.T, addr, request string) (*http.Response, string) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.WriteString(c, request); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("%q: %v", request, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// Each answer net/http writes itself comes out as the same status with a
// JSON error.
func TestJSONErrors(t *testing.T) {
	const generic = "Malformed request: the request line or a header cannot be parsed (is every % in the URL followed by two hex digits?)"
	addr := serve(t)
	for _, tc := range []struct {
		name, request string
		status        int
		msg           string
	}{
		{"bad escape in the target", "GET /mock/%zz HTTP/1.1\r\nHost: x\r\n\r\n", 400, generic},
		{"control byte in the target", "GET /a\x01 HTTP/1.1\r\nHost: x\r\n\r\n", 400, generic},
		{"missing Host", "GET / HTTP/1.1\r\n\r\n", 400, "Malformed request: missing required Host header"},
		{"two Hosts", "GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400, generic},
		{"bad Host", "GET / HTTP/1.1\r\nHost: a/b\r\n\r\n", 400, "Malformed request: malformed Host header"},
		{"header without colon", "GET / HTTP/1.1\r\nHost: x\r\nnonsense\r\n\r\n", 400, generic},
		{"NUL in a header", "GET / HTTP/1.1\r\nHost: x\r\nX-A: a\x00b\r\n\r\n", 400, generic},
		{"bad method", "G@T / HTTP/1.1\r\nHost: x\r\n\r\n", 400, generic},
		{"bad version", "GET / HTTP/1.x\r\nHost: x\r\n\r\n", 400, generic},
		{"head too large", "GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + strings.Repeat("a", 8<<10) + "\r\n\r\n", 431, "Request headers too large (at most 4 KiB)"},
		{"HTTP/2.0 head", "GET / HTTP/2.0\r\nHost: x\r\n\r\n", 505, "HTTP version not supported"},
		{"unknown Transfer-Encoding", "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n", 501, "Unsupported Transfer-Encoding: only chunked is supported"},
		{"unsupported Expect", "GET / HTTP/1.1\r\nHost: x\r\nExpect: foo\r\n\r\n", 417, "Unsupported Expect header: only 100-continue is supported"},
		{"unsupported Expect, HTTP/1.0", "GET / HTTP/1.0\r\nExpect: foo\r\n\r\n", 417, "Unsupported Expect header: only 100-continue is supported"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := exchange(t, addr, tc.request)
			var e struct{ Error string }
			if err := json.Unmarshal([]byte(body), &e); err != nil || resp.StatusCode != tc.status ||
				resp.Header.Get("Content-Type") != "application/json" || resp.Header.Get("X-Content-Type-Options") != "nosniff" {
				t.Fatalf("got %d %q %q, want %d with a JSON error", resp.StatusCode, resp.Header.Get("Content-Type"), body, tc.status)
			}
			if e.Error != tc.msg {
				t.Errorf("message %q, want %q", e.Error, tc.msg)
			}
		})
	}
	t.Run("a handler's own answer", func(t *testing.T) {
		resp, body := exchange(t, addr, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
		if resp.StatusCode != 400 || body != "400 Bad Request" || resp.Header.Get("Content-Type") != "text/plain; charset=utf-8" {
			t.Errorf("rewritten: %d %q %q", resp.StatusCode, resp.Header.Get("Content-Type"), body)
		}
	})
}

// The answers written in net/http's stead carry the header lines the
// listener was given (the server's CORS policy), whatever the request,
// which is never parsed here; a handler's own answers are left alone.
func TestJSONErrorsCarryHeader(t *testing.T) {
	addr := serve(t, "Access-Control-Allow-Origin: *", "Access-Control-Expose-Headers: Retry-After")
	for _, tc := range []struct {
		name, request string
		status        int
	}{
		{"400 bad escape", "GET /nope%zz HTTP/1.1\r\nHost: x\r\nOrigin: https://app.example\r\n\r\n", 400},
		{"400 missing Host", "GET / HTTP/1.1\r\nOrigin: https://app.example\r\n\r\n", 400},
		{"431", "GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + strings.Repeat("a", 8<<10) + "\r\n\r\n", 431},
		{"505", "GET / HTTP/2.0\r\nHost: x\r\n\r\n", 505},
		{"417", "GET / HTTP/1.1\r\nHost: x\r\nExpect: foo\r\n\r\n", 417},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := exchange(t, addr, tc.request)
			if resp.StatusCode != tc.status || !json.Valid([]byte(body)) {
				t.Fatalf("got %d %q, want %d with a JSON error", resp.StatusCode, body, tc.status)
			}
			if got := resp.Header.Get("Access-Control-Allow-Origin"); got != "*" {
				t.Errorf("Access-Control-Allow-Origin = %q, want *", got)
			}
			if got := resp.Header.Get("Access-Control-Expose-Headers"); got != "Retry-After" {
				t.Errorf("Access-Control-Expose-Headers = %q", got)
			}
		})
	}
	resp, _ := exchange(t, addr, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	if got := resp.Header.Get("Access-Control-Allow-Origin"); got != "" {
		t.Errorf("a handler's answer got Access-Control-Allow-Origin %q", got)
	}
	out, ok := transport.Rewrite([]byte("HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n400 Bad Request"), 4<<10, "Vary: Origin")
	if !ok || !bytes.Contains(out, []byte("\r\nVary: Origin\r\n")) {
		t.Errorf("Rewrite with a header line gave %q", out)
	}
}

// net/http's answers, as written, are recognised whole; near misses are
// not.
func TestRewrite(t *testing.T) {
	const hdr = "\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n"
	for _, tc := range []struct {
		name, in string
		status   int // 0: not rewritten
	}{
		{"plain 400", "HTTP/1.1 400 Bad Request" + hdr + "400 Bad Request", 400},
		{"400 with a reason", "HTTP/1.1 400 Bad Request: missing required Host header" + hdr + "400 Bad Request: missing required Host header", 400},
		{"431", "HTTP/1.1 431 Request Header Fields Too Large" + hdr + "431 Request Header Fields Too Large", 431},
		{"501", "HTTP/1.1 501 Not Implemented" + hdr + "Unsupported transfer encoding", 501},
		{"505", "HTTP/1.1 505 HTTP Version Not Supported: unsupported protocol version" + hdr + "505 HTTP Version Not Supported: unsupported protocol version", 505},
		{"417", "HTTP/1.1 417 Expectation Failed\r\nConnection: close\r\nDate: Fri, 27 Nov 2026 05:33:22 GMT\r\nContent-Length: 0\r\n\r\n", 417},
		{"417 to HTTP/1.0", "HTTP/1.0 417 Expectation Failed\r\nConnection: close\r\nDate: Fri, 27 Nov 2026 05:33:22 GMT\r\nContent-Length: 0\r\n\r\n", 417},
		{"417 with a bad date", "HTTP/1.1 417 Expectation Failed\r\nConnection: close\r\nDate: yesterday\r\nContent-Length: 0\r\n\r\n", 0},
		{"a handler's 417", "HTTP/1.1 417 Expectation Failed\r\nContent-Type: application/json\r\nDate: Fri, 27 Nov 2026 05:33:22 GMT\r\nContent-Length: 2\r\n\r\n{}", 0},
		{"body differs", "HTTP/1.1 400 Bad Request" + hdr + "400 Bad Request!", 0},
		{"a handler's head", "HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Type: text/plain; charset=utf-8\r\nDate: x\r\n\r\n", 0},
		{"success", "HTTP/1.1 200 OK" + hdr + "200 OK", 0},
		{"unknown status", "HTTP/1.1 499 Bad Request" + hdr + "499 Bad Request", 0},
		{"body of another answer", "[1,2,3]", 0},
		{"empty", "", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, ok := transport.Rewrite([]byte(tc.in), 64<<10)
			if ok != (tc.status != 0) {
				t.Fatalf("rewritten: %v, want %v", ok, tc.status != 0)
			}
			if !ok {
				return
			}
			resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(out)), nil)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			var e struct{ Error string }
			if resp.StatusCode != tc.status || json.Unmarshal(body, &e) != nil || e.Error == "" || !resp.Close {
				t.Errorf("got %d %q (close %v)", resp.StatusCode, body, resp.Close)
			}
		})
	}
}

// Whatever is written, Rewrite never panics, and what it makes of a write
// is a whole answer with the status of the original and a JSON error.
func FuzzRewrite(f *testing.F) {
	const hdr = "\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n"
	f.Add([]byte("HTTP/1.1 400 Bad Request" + hdr + "400 Bad Request"))
	f.Add([]byte("HTTP/1.1 400 Bad Request: invalid header" + hdr + "400 Bad Request: invalid header"))
	f.Add([]byte("HTTP/1.1 501 Not Implemented" + hdr + "Unsupported transfer encoding"))
	f.Add([]byte("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}"))
	f.Add([]byte("HTTP/1."))
	f.Add([]byte("HTTP/1.1 417 Expectation Failed\r\nConnection: close\r\nDate: Fri, 27 Nov 2026 05:33:22 GMT\r\nContent-Length: 0\r\n\r\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		out, ok := transport.Rewrite(in, 64<<10)
		if !ok {
			return
		}
		if !bytes.HasPrefix(in, []byte("HTTP/1.")) || len(in) < 12 {
			t.Fatalf("rewrote %q", in)
		}
		resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(out)), nil)
		if err != nil {
			t.Fatalf("%q gave %q: %v", in, out, err)
		}
		body, err := io.ReadAll(resp.Body)
		var e struct{ Error string }
		if err != nil || json.Unmarshal(body, &e) != nil || e.Error == "" {
			t.Fatalf("%q gave body %q", in, body)
		}
		if string(in[9:12]) != resp.Status[:3] {
			t.Fatalf("%q gave status %q", in, resp.Status)
		}
	})
}
