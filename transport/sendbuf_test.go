//go:build unix

package transport_test

import (
	"net"
	"syscall"
	"testing"

	"github.com/decoy-mock/decoy/transport"
)

// Accepted connections get the send buffer asked for, not the kernel's
// autotuned one.
func TestSendBuffer(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	const size = 1 << 20
	l := transport.SendBuffer(ln, size)
	go func() {
		if c, err := net.Dial("tcp", ln.Addr().String()); err == nil {
			defer c.Close()
			c.Read(make([]byte, 1))
		}
	}()
	c, err := l.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	raw, err := c.(*net.TCPConn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var got int
	raw.Control(func(fd uintptr) { got, err = syscall.GetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_SNDBUF) })
	// Linux reports twice what was set; other systems what was set.
	if err != nil || got < size || got > 2*size {
		t.Errorf("SO_SNDBUF %d (%v), want %d or twice that", got, err, size)
	}
}
