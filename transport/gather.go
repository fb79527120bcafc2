package transport

import (
	"context"
	"net"
	"sync"
)

// An answer of more than about 4 KiB leaves net/http in several writes to
// the connection: its head and the start of the body when its 4 KiB buffer
// fills, then the rest. On loopback and on a LAN, each write is a segment
// sent and a wake-up of the reader: for a 5 KiB answer, twice the cost of
// the one write nginx makes. A handler that knows its whole answer may
// gather it instead (see Gather): what net/http writes meanwhile is kept
// aside, and sent with one writev when the handler is done.

// MaxGather is the most bytes an answer is gathered to: past it, what was
// gathered is sent and the rest goes as it comes.
const MaxGather = 4 << 20

// gatherCopyMax is the longest write that is copied aside: net/http's own
// buffers (its 4 KiB connection buffer, a chunk's head) are reused once a
// write returns. A longer write is the handler's body itself, passed
// through net/http's buffers as it is, and kept by reference: a handler
// that gathers promises not to change its body before Send.
const gatherCopyMax = 4 << 10

// maxPooledCopy bounds the copies a pooled gathering keeps room for.
const maxPooledCopy = 64 << 10

type gatherKey struct{}

// ConnContext is an http.Server's ConnContext: it lets the handlers of the
// requests that come on c gather their answers (see Gather), when c is a
// connection this package handed over for HTTP/1.x.
func ConnContext(ctx context.Context, c net.Conn) context.Context {
	if g, ok := c.(interface{ gatherer() *errorConn }); ok {
		return context.WithValue(ctx, gatherKey{}, g.gatherer())
	}
	return ctx
}

// gathering is an answer being gathered.
type gathering struct {
	segs   []segment
	copied []byte // the writes copied aside
	size   int
	bufs   net.Buffers
}

// segment is one write: copied[off:off+n], or ref.
type segment struct {
	off, n int
	ref    []byte
}

var gatherings = sync.Pool{New: func() any {
	return &gathering{copied: make([]byte, 0, 8<<10)}
}}

// Gathered is an answer being gathered; the zero Gathered gathers nothing.
type Gathered struct{ c *errorConn }

// Gather starts gathering the writes to the connection of ctx's request
// (see ConnContext). Once the handler has written the whole answer and
// flushed it out of net/http's buffers, Send sends it; until then, the
// body it wrote must not change. Only an HTTP/1.x handler may gather:
// under HTTP/2, a connection carries other requests' answers too.
func Gather(ctx context.Context) Gathered {
	c, _ := ctx.Value(gatherKey{}).(*errorConn)
	if c == nil || c.gather != nil {
		return Gathered{}
	}
	c.gather = gatherings.Get().(*gathering)
	return Gathered{c}
}

// Send writes what was gathered in one write (a writev on TCP), and stops
// gathering.
func (g Gathered) Send() error {
	c := g.c
	if c == nil || c.gather == nil {
		return nil
	}
	return c.sendGathered()
}

func (c *errorConn) sendGathered() error {
	ga := c.gather
	c.gather = nil
	var err error
	if len(ga.segs) > 0 {
		for _, s := range ga.segs {
			if s.ref != nil {
				ga.bufs = append(ga.bufs, s.ref)
			} else {
				ga.bufs = append(ga.bufs, ga.copied[s.off:s.off+s.n])
			}
		}
		if tc, ok := c.direct().(*net.TCPConn); ok {
			bufs := ga.bufs // WriteTo consumes it
			_, err = bufs.WriteTo(tc)
		} else { // TLS, say: one write all the same
			all := make([]byte, 0, ga.size)
			for _, b := range ga.bufs {
				all = append(all, b...)
			}
			_, err = c.Conn.Write(all)
		}
	}
	clear(ga.segs)
	clear(ga.bufs)
	ga.segs, ga.bufs, ga.copied, ga.size = ga.segs[:0], ga.bufs[:0], ga.copied[:0], 0
	if cap(ga.copied) <= maxPooledCopy {
		gatherings.Put(ga)
	}
	return err
}

// gatherWrite takes p into the answer being gathered, or, when it would
// pass MaxGather, sends what was gathered and p, and stops gathering.
func (c *errorConn) gatherWrite(p []byte) (int, error) {
	ga := c.gather
	if ga.size+len(p) > MaxGather {
		if err := c.sendGathered(); err != nil {
			return 0, err
		}
		return c.Conn.Write(p)
	}
	ga.size += len(p)
	if len(p) > gatherCopyMax {
		ga.segs = append(ga.segs, segment{ref: p})
		return len(p), nil
	}
	if n := len(ga.segs); n > 0 && ga.segs[n-1].ref == nil && ga.segs[n-1].off+ga.segs[n-1].n == len(ga.copied) {
		ga.segs[n-1].n += len(p) // follows the last copy
	} else {
		ga.segs = append(ga.segs, segment{off: len(ga.copied), n: len(p)})
	}
	ga.copied = append(ga.copied, p...)
	return len(p), nil
}
