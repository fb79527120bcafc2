package server_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/decoy-mock/decoy"
	"github.com/decoy-mock/decoy/client"
	"github.com/decoy-mock/decoy/internal/servertest"
)

// Close lets a read in its response delay finish and answers it whole,
// then accepts no more connections.
func TestCloseDuringDelay(t *testing.T) {
	h := servertest.New(t)
	m := h.Create(`[{"slow":true}]`, client.CreateOptions{DelayMS: 700})
	type answer struct {
		status int
		body   string
		err    error
	}
	got := make(chan answer, 1)
	go func() {
		resp, err := http.Get(h.URL + "/mock/" + m.ID)
		if err != nil {
			got <- answer{err: err}
			return
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		got <- answer{resp.StatusCode, string(b), err}
	}()
	// The quota is reserved before the delay: once it is counted, the
	// read is waiting out its delay.
	month := decoy.Month(h.Clock.Now())
	for deadline := time.Now().Add(10 * time.Second); ; {
		if n, _ := h.Store.QuotaUsed(context.Background(), m.ID, month); n == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the read never reached its delay")
		}
		time.Sleep(5 * time.Millisecond)
	}
	addr := strings.TrimPrefix(h.URL, "http://")
	closed := make(chan error, 1)
	go func() { closed <- h.Srv.Close() }()
	if err := <-closed; err != nil {
		t.Fatalf("Close: %v", err)
	}
	// Had Close not waited, the connection would have been cut.
	if a := <-got; a.err != nil || a.status != 200 || a.body != `[{"slow":true}]` {
		t.Fatalf("delayed read: %d %q %v", a.status, a.body, a.err)
	}
	if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		c.Close()
		t.Error("a connection was accepted after Close")
	}
}
