package transport_test

import (
	"bufio"
	"crypto/tls"
	"io"
	"log"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/decoy-mock/decoy/transport"
)

// A client over its connection cap gets a JSON 503 and is hung up on;
// once it closes one, it may connect again. Exempt addresses count only
// towards the total.
func TestLimitConnections(t *testing.T) {
	for _, tc := range []struct {
		name             string
		total, perClient int
		exempt           bool
		refusedThird     bool
	}{
		{"per client", 0, 2, false, true},
		{"total", 2, 0, false, true},
		{"exempt proxy, under total", 5, 2, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			exempt := func(netip.Addr) bool { return tc.exempt }
			srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {})}
			go srv.Serve(transport.LimitConnections(ln, transport.ConnLimits{Total: tc.total, PerClient: tc.perClient, Exempt: exempt,
				Header: []string{"Access-Control-Allow-Origin: *"}}))
			t.Cleanup(func() { srv.Close() })

			var conns []net.Conn
			for range 2 {
				c, err := net.Dial("tcp", ln.Addr().String())
				if err != nil {
					t.Fatal(err)
				}
				conns = append(conns, c)
				c.Write([]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"))
				if resp, err := http.ReadResponse(bufio.NewReader(c), nil); err != nil || resp.StatusCode != 200 {
					t.Fatalf("connection %d: %v", len(conns), err)
				}
			}
			third := func() int {
				c, err := net.Dial("tcp", ln.Addr().String())
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				c.SetDeadline(time.Now().Add(5 * time.Second))
				c.Write([]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"))
				resp, err := http.ReadResponse(bufio.NewReader(c), nil)
				if err != nil {
					t.Fatal(err)
				}
				if resp.StatusCode == 503 && resp.Header.Get("Content-Type") != "application/json" {
					t.Errorf("refusal Content-Type %q", resp.Header.Get("Content-Type"))
				}
				if resp.StatusCode == 503 && (resp.Header.Get("Access-Control-Allow-Origin") != "*" || resp.Header.Get("Retry-After") != "1") {
					t.Errorf("refusal lacks its header lines: %v", resp.Header)
				}
				return resp.StatusCode
			}
			if got := third(); (got == 503) != tc.refusedThird {
				t.Errorf("third connection: %d", got)
			}
			conns[0].Close()
			time.Sleep(100 * time.Millisecond) // the server notices the close
			if got := third(); got != 200 {
				t.Errorf("after closing one: %d", got)
			}
			for _, c := range conns[1:] {
				c.Close()
			}
		})
	}
}

// Over TLS, a connection over a cap is answered after a handshake that
// offers HTTP/1.1 only, so that the client reads the JSON 503 rather than
// a TLS error. Refusals in progress are bounded: past the bound, a
// connection over the cap is closed with no answer.
func TestLimitConnectionsTLS(t *testing.T) {
	pair, cert := loadPair(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	config := cert.TLSConfig()
	limited := transport.LimitConnections(ln, transport.ConnLimits{Total: 1, TLS: config, Header: []string{corsHeader}})
	srv := &http.Server{
		Handler:   http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}),
		TLSConfig: config.Clone(),
		ErrorLog:  log.New(io.Discard, "", 0),
	}
	go srv.Serve(transport.TLS(limited, config, 5*time.Second, 4<<10))
	t.Cleanup(func() { srv.Close() })
	addr := ln.Addr().String()

	held, err := net.Dial("tcp", addr) // the one connection allowed
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()

	refused := func() {
		t.Helper()
		config := pair.ClientConfig()
		config.NextProtos = []string{"h2", "http/1.1"}
		c, err := tls.Dial("tcp", addr, config)
		if err != nil {
			t.Fatalf("handshake over the cap: %v", err)
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(5 * time.Second))
		if p := c.ConnectionState().NegotiatedProtocol; p != "http/1.1" {
			t.Errorf("negotiated %q, want http/1.1", p)
		}
		c.Write([]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"))
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 503 || resp.Header.Get("Content-Type") != "application/json" || resp.Header.Get("Retry-After") != "1" ||
			resp.Header.Get("Access-Control-Allow-Origin") != "*" || !strings.Contains(string(body), "Too many connections") {
			t.Errorf("over the cap: %d %v %s", resp.StatusCode, resp.Header, body)
		}
	}
	refused()

	// Clients that never start their handshake hold every refusal.
	var silent []net.Conn
	defer func() {
		for _, c := range silent {
			c.Close()
		}
	}()
	for range transport.MaxRefusing {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		silent = append(silent, c)
	}
	waitFor(t, func() bool { return transport.Refusing(limited) == transport.MaxRefusing })
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	c.SetDeadline(time.Now().Add(refuseWait))
	if n, err := c.Read(make([]byte, 1)); n != 0 || err != io.EOF {
		t.Errorf("past the bound of refusals: read %d, %v; want the connection closed", n, err)
	}
	c.Close()

	for _, c := range silent {
		c.Close()
	}
	silent = nil
	waitFor(t, func() bool { return transport.Refusing(limited) == 0 })
	refused()
}

// refuseWait is how long a test waits for what the server does at once.
const refuseWait = 3 * time.Second

// waitFor waits until cond holds, or fails the test.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(refuseWait); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("condition not met")
		}
	}
}
