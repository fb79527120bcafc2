package transport_test

import (
	"bufio"
	"net"
	"net/http"
	"net/netip"
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
			go srv.Serve(transport.LimitConnections(ln, tc.total, tc.perClient, exempt))
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
