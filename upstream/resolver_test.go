package upstream_test

import (
	"context"
	"encoding/binary"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/decoy-mock/decoy/upstream"
)

// fakeDNS answers every A question with 127.0.0.1 and every other question
// with no record, on a loopback UDP port: a name that resolves to
// loopback, as an attacker's DNS would make one. It returns a resolver
// that asks it.
func fakeDNS(t *testing.T) *net.Resolver {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
	go func() {
		buf := make([]byte, 1500)
		for {
			n, addr, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			q := buf[:n]
			end := 12
			for end < len(q) && q[end] != 0 {
				end += int(q[end]) + 1
			}
			if end+5 > len(q) {
				continue
			}
			question := q[12 : end+5]
			isA := binary.BigEndian.Uint16(q[end+1:]) == 1
			resp := append([]byte{q[0], q[1], 0x81, 0x80, 0, 1, 0, 0, 0, 0, 0, 0}, question...)
			if isA {
				resp[7] = 1
				resp = append(resp, 0xc0, 0x0c, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4, 127, 0, 0, 1)
			}
			pc.WriteTo(resp, addr)
		}
	}()
	return &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "udp", pc.LocalAddr().String())
	}}
}

// TestNameResolvingToLoopback: a name whose DNS answer is a loopback
// address is refused at connect time, and the server there sees nothing;
// allowed, the same name reaches it (so the refusal was the guard's, on
// the resolved address).
func TestNameResolvingToLoopback(t *testing.T) {
	var seen atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { seen.Add(1) }))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	base := "http://internal.rebind.test:" + port
	resolver := fakeDNS(t)

	refusing := upstream.New(upstream.Config{Resolver: resolver})
	_, err := forward(t, refusing, base, "/x", httptest.NewRequest("GET", "/p/s/x", nil), nil)
	if addr, _ := upstream.RefusedAddress(err); !errors.Is(err, upstream.ErrNotAllowed) || addr != "127.0.0.1:"+port || seen.Load() != 0 {
		t.Fatalf("refused: %v; the server saw %d requests", err, seen.Load())
	}
	allowing := upstream.New(upstream.Config{Resolver: resolver, Allow: loopback})
	w, err := forward(t, allowing, base, "/x", httptest.NewRequest("GET", "/p/s/x", nil), nil)
	if err != nil || w.Code != 200 || seen.Load() != 1 {
		t.Fatalf("allowed: %v %d; the server saw %d requests", err, w.Code, seen.Load())
	}
}
