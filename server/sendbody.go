package server

import (
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"sync"

	"github.com/decoy-mock/decoy/jsondoc"
)

// Answers are spans of stored bytes: the records a query selected, or a
// whole document. Written through net/http's response, they would be copied
// into its 4 KiB buffer and leave in several writes (the head with the first
// part of the body, then the rest). On a guarded connection they leave
// instead with the response head in one writev(2), straight from the
// stored bytes: the handler asks the connection to hold what net/http
// writes (the head), then hands the body to ReadFrom, which the response
// passes on to the connection.

type connKey struct{}

// ConnContext is for http.Server.ConnContext: it gives handlers the
// connection, so that answers can leave without copies (see sendbody.go).
func ConnContext(ctx context.Context, c net.Conn) context.Context {
	return context.WithValue(ctx, connKey{}, c)
}

// bodyConn is a connection that can send a response head and a body of
// spans together.
type bodyConn interface {
	// holdWrites keeps what is written from now on, until the next
	// ReadFrom or releaseWrites.
	holdWrites()
	// releaseWrites writes what is held, if anything, and stops holding.
	releaseWrites() error
}

// spansBody is a response body of stored bytes, read once: a whole
// document, or '[', the records an answer selected joined by ',', then ']'.
// Its slices are produced as they are written, a window at a time, so that
// a large answer needs no list of them all.
type spansBody struct {
	doc     *jsondoc.Document
	records []int32  // with doc
	data    []byte   // without doc: the body
	file    *os.File // when not nil, holds data from its start (sendfile)

	n       int // slices in all
	k       int // the next slice to read
	off     int // bytes of slice k already read
	vec     net.Buffers
	used    int // slots of vec filled so far, to clear at release
	scratch []byte
}

var spansBodies = sync.Pool{New: func() any { return &spansBody{vec: make(net.Buffers, 0, maxVec+1)} }}

// maxVec is how many slices go to one writev(2) (Linux's IOV_MAX).
const maxVec = 1024

// recordsBody returns the body of an answer of records.
func recordsBody(doc *jsondoc.Document, records []int32) *spansBody {
	b := spansBodies.Get().(*spansBody)
	b.doc, b.records, b.data, b.file = doc, records, nil, nil
	b.n, b.k, b.off = 2*len(records)+1, 0, 0
	if len(records) == 0 {
		b.n = 2
	}
	return b
}

// bytesBody returns a body of stored bytes, which file, when not nil, holds
// from its start.
func bytesBody(data []byte, file *os.File) *spansBody {
	b := spansBodies.Get().(*spansBody)
	b.doc, b.records, b.data, b.file = nil, nil, data, file
	b.n, b.k, b.off = 1, 0, 0
	return b
}

func (b *spansBody) release() {
	clear(b.vec[:b.used]) // drop references to stored bytes
	b.used = 0
	b.doc, b.records, b.data, b.file = nil, nil, nil, nil
	spansBodies.Put(b)
}

// span returns slice k of the body.
func (b *spansBody) span(k int) []byte {
	switch {
	case b.doc == nil:
		return b.data
	case k == 0:
		return openBracket
	case k == b.n-1:
		return closeBracket
	case k%2 == 1:
		return b.doc.Record(int(b.records[k/2]))
	}
	return comma
}

var openBracket, comma, closeBracket = []byte{'['}, []byte{','}, []byte{']'}

// Read implements io.Reader, for what is read before ReadFrom (net/http
// copies the first 512 bytes) and for connections that cannot writev.
func (b *spansBody) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) && b.k < b.n {
		s := b.span(b.k)
		c := copy(p[n:], s[b.off:])
		n += c
		if b.off += c; b.off == len(s) {
			b.k, b.off = b.k+1, 0
		}
	}
	if n == 0 && len(p) > 0 {
		return 0, io.EOF
	}
	return n, nil
}

// Small slices (records) are copied into a scratch buffer and leave as one
// slice: the kernel copies a slice of a writev at a cost per slice that
// dwarfs a record's. Large ones (a whole document) leave as they are.
const (
	scratchSize = 64 << 10
	largeSpan   = 8 << 10
)

// next returns the next window of what is left to read, after first, and
// marks it read. The window is valid until the next call.
func (b *spansBody) next(first []byte) net.Buffers {
	v := b.vec[:0]
	if first != nil {
		v = append(v, first)
	}
	if b.scratch == nil {
		b.scratch = make([]byte, 0, scratchSize)
	}
	buf, start := b.scratch[:0], 0
	for len(v) < maxVec-1 && b.k < b.n {
		s := b.span(b.k)[b.off:]
		if len(s) >= largeSpan {
			if len(buf) > start {
				v = append(v, buf[start:])
				start = len(buf)
			}
			v = append(v, s)
			b.k, b.off = b.k+1, 0
			continue
		}
		c := copy(buf[len(buf):cap(buf)], s)
		buf = buf[:len(buf)+c]
		if c < len(s) {
			b.off += c
			break // scratch full
		}
		b.k, b.off = b.k+1, 0
	}
	if len(buf) > start {
		v = append(v, buf[start:])
	}
	b.used = max(b.used, len(v))
	return v
}

// writeTo writes the rest of the body, after head, to c: with writev when
// c is a *net.TCPConn. It returns the bytes of the body written.
func (b *spansBody) writeTo(c net.Conn, head []byte) (int64, error) {
	var total int64
	first := head
	if first == nil {
		first = []byte{} // the first window is written even if empty
	}
	for first != nil || b.k < b.n {
		v := b.next(first)
		n, err := v.WriteTo(c)
		total += n
		if err != nil {
			return max(total-int64(len(head)), 0), err
		}
		first = nil
	}
	return total - int64(len(head)), nil
}

// sendAfter writes head, then the rest of the body, to c: a file body with
// sendfile (its pages go to the socket without a copy through this
// process), any other with writev. It returns the bytes of the body
// written.
func (b *spansBody) sendAfter(c net.Conn, head []byte) (int64, error) {
	if b.file != nil && b.k < b.n {
		off := int64(b.off)
		if n, handled, err := sendFile(c, head, b.file, off, int64(len(b.data))-off); handled {
			b.k, b.off = b.n, 0
			return n, err
		}
	}
	return b.writeTo(c, head)
}

// sendSpans writes body as the answer's body, without copies where the
// connection allows.
func sendSpans(w http.ResponseWriter, r *http.Request, body *spansBody) {
	rf, ok := w.(io.ReaderFrom)
	bc, ok2 := r.Context().Value(connKey{}).(bodyConn)
	if !ok || !ok2 {
		_, _ = io.Copy(writerOnly{w}, body)
		return
	}
	bc.holdWrites()
	_, _ = rf.ReadFrom(body)
	_ = bc.releaseWrites()
}

// writerOnly hides every method of a writer but Write, so that io.Copy
// copies through it.
type writerOnly struct{ io.Writer }

// rawConn returns the connection under the wrappers: a *net.TCPConn in
// production, which writes net.Buffers with writev and files with sendfile.
func rawConn(c net.Conn) net.Conn {
	for {
		u, ok := c.(interface{ NetConn() net.Conn })
		if !ok {
			return c
		}
		c = u.NetConn()
	}
}

func (c *guardConn) holdWrites() { c.holding = true }

func (c *guardConn) releaseWrites() error {
	c.holding = false
	if len(c.held) == 0 {
		return nil
	}
	_, err := c.Conn.Write(c.held)
	c.held = c.held[:0]
	return err
}

// Write implements net.Conn; while holding, it keeps what it is given.
func (c *guardConn) Write(p []byte) (int, error) {
	if c.holding {
		c.held = append(c.held, p...)
		return len(p), nil
	}
	return c.Conn.Write(p)
}

// ReadFrom implements io.ReaderFrom, for net/http's response. A spans body
// leaves with the held head in one writev; any other body after the head,
// by the connection's own ReadFrom (sendfile for a file). It returns the
// bytes of the body written.
func (c *guardConn) ReadFrom(src io.Reader) (int64, error) {
	c.holding = false
	raw := rawConn(c.Conn)
	if body, ok := src.(*spansBody); ok {
		defer func() { c.held = c.held[:0] }()
		return body.sendAfter(raw, c.held)
	}
	if err := c.releaseWrites(); err != nil {
		return 0, err
	}
	if rf, ok := raw.(io.ReaderFrom); ok {
		return rf.ReadFrom(src)
	}
	return io.Copy(writerOnly{raw}, src)
}

// NetConn returns the connection under the limit.
func (c *limitedConn) NetConn() net.Conn { return c.Conn }
