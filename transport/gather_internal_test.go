package transport

import (
	"bytes"
	"context"
	"net"
	"strings"
	"testing"
)

// countingConn records each Write.
type countingConn struct {
	net.Conn
	writes [][]byte
}

func (c *countingConn) Write(p []byte) (int, error) {
	c.writes = append(c.writes, bytes.Clone(p))
	return len(p), nil
}

func gatherConn() (*errorConn, *countingConn, context.Context) {
	cc := &countingConn{}
	ec := &errorConn{Conn: cc, maxHeader: 1 << 10}
	return ec, cc, ConnContext(context.Background(), ec)
}

func TestGatherSendsOneWrite(t *testing.T) {
	ec, cc, ctx := gatherConn()
	head := []byte("HTTP/1.1 200 OK\r\n\r\n")
	body := bytes.Repeat([]byte("b"), gatherCopyMax+1) // kept by reference
	tail := []byte("tail")

	g := Gather(ctx)
	if g.c == nil {
		t.Fatal("Gather on a connection of this package gathered nothing")
	}
	if g2 := Gather(ctx); g2.c != nil {
		t.Fatal("a second Gather before Send gathered too")
	}
	for _, p := range [][]byte{head, body, tail} {
		if n, err := ec.Write(p); n != len(p) || err != nil {
			t.Fatalf("Write: %d, %v", n, err)
		}
	}
	copy(head, "XXXX") // net/http reuses its buffer once Write returns
	if len(cc.writes) != 0 {
		t.Fatalf("%d writes before Send", len(cc.writes))
	}
	if err := g.Send(); err != nil {
		t.Fatal(err)
	}
	want := "HTTP/1.1 200 OK\r\n\r\n" + string(body) + "tail"
	if len(cc.writes) != 1 || string(cc.writes[0]) != want {
		t.Fatalf("after Send: %d writes, want one of the head, body and tail", len(cc.writes))
	}
	// Gathering is over: writes go as they come, and Send again is a no-op.
	ec.Write([]byte("next"))
	if err := g.Send(); err != nil || len(cc.writes) != 2 || string(cc.writes[1]) != "next" {
		t.Fatalf("after gathering: %d writes, %v", len(cc.writes), err)
	}
	if ec.gather != nil {
		t.Fatal("still gathering")
	}
}

func TestGatherPastMaxSendsInOrder(t *testing.T) {
	ec, cc, ctx := gatherConn()
	g := Gather(ctx)
	ec.Write([]byte("head"))
	big := make([]byte, MaxGather)
	ec.Write(big)
	if len(cc.writes) != 2 || string(cc.writes[0]) != "head" || len(cc.writes[1]) != MaxGather {
		t.Fatalf("past MaxGather: %d writes, want the head then the rest", len(cc.writes))
	}
	if ec.gather != nil {
		t.Fatal("still gathering past MaxGather")
	}
	ec.Write([]byte("after"))
	g.Send()
	if len(cc.writes) != 3 || string(cc.writes[2]) != "after" {
		t.Fatalf("%d writes", len(cc.writes))
	}
}

func TestGatherReadFromSendsFirst(t *testing.T) {
	ec, cc, ctx := gatherConn()
	g := Gather(ctx)
	ec.Write([]byte("head"))
	if _, err := ec.ReadFrom(strings.NewReader("body")); err != nil {
		t.Fatal(err)
	}
	g.Send()
	if len(cc.writes) != 2 || string(cc.writes[0]) != "head" || string(cc.writes[1]) != "body" {
		t.Fatalf("writes %q", cc.writes)
	}
}

func TestGatherNothingElsewhere(t *testing.T) {
	// A connection that is not this package's (HTTP/2's *tls.Conn, a
	// test server's): Gather gathers nothing, and Send does nothing.
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	g := Gather(ConnContext(context.Background(), a))
	if g.c != nil {
		t.Fatal("gathered on a connection of another kind")
	}
	if err := g.Send(); err != nil {
		t.Fatal(err)
	}
	if err := (Gathered{}).Send(); err != nil {
		t.Fatal(err)
	}
}

func TestGatherCopiesJoin(t *testing.T) {
	// Consecutive small writes are copied into one run; a pooled
	// gathering comes back empty.
	for range 3 {
		ec, cc, ctx := gatherConn()
		g := Gather(ctx)
		var want strings.Builder
		for i := range 100 {
			p := []byte(strings.Repeat(string(rune('a'+i%26)), i))
			want.Write(p)
			ec.Write(p)
		}
		if n := len(ec.gather.segs); n != 1 {
			t.Fatalf("%d segments for consecutive copies, want 1", n)
		}
		g.Send()
		if len(cc.writes) != 1 || string(cc.writes[0]) != want.String() {
			t.Fatalf("%d writes", len(cc.writes))
		}
	}
}
