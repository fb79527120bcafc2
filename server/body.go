package server

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"

	"github.com/decoy-mock/decoy/admin"
	"github.com/decoy-mock/decoy/answer"
)

// The pace of request bodies. http.Server's ReadTimeout bounds a whole
// request, so it must leave room for a large upload over a slow link
// (2 min): a client that declared a large Content-Length and sent a byte
// every few seconds held its connection that long, and a few addresses
// held every connection the caps allow. A body is held instead to a floor
// rate, from when the server starts reading it: a trickle is cut within
// seconds, and an upload of any size gets the time its size needs. Its
// deadlines are the network's, so they are in real time (time.Now), not
// Config.Now's.

const (
	// DefaultMinBodyRate is the floor of a request body's pace, in bytes a
	// second: 64 KiB/s (512 kbit/s). A 64 MiB upload may take 17 min at
	// it; one over a 1 MB/s link takes 67 s and runs far ahead of it. A
	// client that held all 4,096 connections at the floor would send
	// 256 MiB/s.
	DefaultMinBodyRate = 64 << 10
	// defaultBodyGrace is the time a body's first bytes get: network
	// latency, a client's TCP slow start, and a client that waits for
	// 100 Continue (curl waits 1 s). A sign-in or any small JSON body
	// that has not come within it is cut.
	defaultBodyGrace = 5 * time.Second
)

// bodyPace is the rule a request body is held to: from the server's first
// read of it, the first bytes within grace, and then rate bytes a second
// on average, so that by grace + n/rate more than n bytes have come. A
// body that runs ahead of the floor builds credit: a fast upload may
// stall for a while without being cut, a trickle never builds any.
type bodyPace struct {
	rate  int64 // bytes a second, more than 0
	grace time.Duration
	// answerTime is the time the answer gets once the body is in (the
	// http.Server's WriteTimeout, which counts from the request's head).
	answerTime time.Duration
}

// due is when the bytes after the first n of a body whose reading began
// at start must have begun to come.
func (p bodyPace) due(start time.Time, n int64) time.Time {
	secs := min(n/p.rate, 1<<30) // bodies are bounded far below; no overflow
	return start.Add(p.grace + time.Duration(secs)*time.Second + time.Duration(n%p.rate)*time.Second/time.Duration(p.rate))
}

// paceBodies holds the body of each request to p. Each read of the body
// sets the connection's read deadline (through http.ResponseController:
// net/http reads, nothing else parses) to when the next bytes are due, so
// a body that falls behind has its read fail; the handler's answer to the
// failed read is then a 408 (see tooSlow, in writeError), and cut is
// called. After the handler, a body it left unread is held to the same
// pace, as net/http reads what is left of it.
func paceBodies(next http.Handler, p bodyPace, cut func(*http.Request, *pacedBody)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength == 0 && len(r.TransferEncoding) == 0 {
			next.ServeHTTP(w, r)
			return
		}
		b := &pacedBody{ReadCloser: r.Body, pace: p, rc: http.NewResponseController(w)}
		b.cut = func() { cut(r, b) }
		r.Body = b
		defer func() {
			r.Body = b.ReadCloser
			// net/http drains what is left over HTTP/1 only; HTTP/2
			// resets the stream.
			if r.ProtoMajor == 1 && !b.eof && !b.late {
				if b.start.IsZero() {
					b.start = time.Now()
				}
				b.setDeadline()
			}
		}()
		next.ServeHTTP(w, r)
	})
}

// pacedBody is a request body held to a bodyPace.
type pacedBody struct {
	io.ReadCloser
	pace bodyPace
	rc   *http.ResponseController
	cut  func()

	start time.Time // of the first read; zero before it
	n     int64     // bytes read
	set   time.Time // the read deadline set last
	// off is set when the ResponseWriter cannot set deadlines (a test's
	// recorder): the body is then read at any pace.
	off  bool
	eof  bool          // read to its end
	late bool          // cut: a read failed past its deadline
	took time.Duration // from the first read to the cut
}

func (b *pacedBody) Read(p []byte) (int, error) {
	if b.start.IsZero() {
		b.start = time.Now()
	}
	b.setDeadline()
	n, err := b.ReadCloser.Read(p)
	b.n += int64(n)
	switch {
	case err == io.EOF && !b.eof:
		b.eof = true
		// net/http lifts the read deadline itself, to watch for the
		// client going away; the answer gets its own time from here, a
		// long upload having used up the WriteTimeout's.
		_ = b.rc.SetWriteDeadline(time.Now().Add(b.pace.answerTime))
	case err != nil && !b.off && !b.late && errors.Is(err, os.ErrDeadlineExceeded):
		b.late, b.took = true, time.Since(b.start)
		b.cut()
	}
	return n, err
}

// setDeadline sets the connection's read deadline to when the bytes after
// those read so far are due. Not past the body's end: net/http reads on,
// with no deadline, to see the client go away.
func (b *pacedBody) setDeadline() {
	if b.off || b.eof {
		return
	}
	d := b.pace.due(b.start, b.n)
	if d.Equal(b.set) {
		return
	}
	if err := b.rc.SetReadDeadline(d); err != nil {
		b.off = true
		return
	}
	b.set = d
}

// tooSlow is the answer to a request whose body was cut for its pace,
// whatever the handler made of its failed read; nil for any other.
func tooSlow(r *http.Request) error {
	b, ok := r.Body.(*pacedBody)
	if !ok || !b.late {
		return nil
	}
	return answer.New(http.StatusRequestTimeout,
		fmt.Sprintf("Request body too slow: %d bytes in %s, under the minimum of %d bytes a second after the first %s (--min-body-rate)",
			b.n, b.took.Round(100*time.Millisecond), b.pace.rate, b.pace.grace),
		"Connection", "close")
}

// bodyPace is the pace bodies are held to, and false when they are not.
func (s *Server) bodyPace() (bodyPace, bool) {
	p := bodyPace{rate: s.cfg.MinBodyRate, grace: s.cfg.BodyGrace, answerTime: writeTimeout}
	if p.rate < 0 {
		return p, false
	}
	if p.rate == 0 {
		p.rate = DefaultMinBodyRate
	}
	if p.grace <= 0 {
		p.grace = defaultBodyGrace
	}
	return p, true
}

// bodyCut counts and logs a body cut for its pace.
func (s *Server) bodyCut(r *http.Request, b *pacedBody) {
	s.metrics.refusals.WithLabelValues(refusedSlowBody).Inc()
	s.log.Info("request body too slow; cut", "method", r.Method, "path", admin.RedactPath(r.URL.Path),
		"client", s.clientAddr(r), "bytes", b.n, "took", b.took.Round(time.Millisecond))
}
