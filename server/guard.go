package server

// The guard stands between the listener and net/http. net/http answers
// request heads it cannot parse itself, in plain text and before any handler
// runs; Decoy promises JSON errors. The guard reads the byte stream of each
// connection ahead of net/http, request by request, and:
//
//   - repairs request targets that net/http would refuse only for their
//     escapes or control bytes, so that the real handler answers them;
//   - refuses the other heads net/http would refuse (and a few more, see
//     checkHead), answering them itself in JSON;
//   - passes everything else through byte for byte;
//   - on listeners made by Server.GuardListener, answers the plainest reads
//     of whole mocks itself, as net/http and the handler would (fast.go).
//
// A refused head is never shown to net/http. Instead net/http reads a
// harmless request line followed by a read error it treats as an ordinary
// network failure: it then closes the connection without answering, and the
// guard writes its JSON answer in Close. Going through Close means the answer
// follows whatever net/http was still writing for earlier, pipelined
// requests.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// GuardListener returns ln with each accepted connection guarded, so that
// malformed HTTP/1.x requests are answered with Decoy's JSON errors instead
// of net/http's plain-text ones. maxHeaderBytes should be the
// http.Server's MaxHeaderBytes (zero or less means
// http.DefaultMaxHeaderBytes, as for http.Server): request heads larger than
// it get a JSON 431 before net/http sees them.
//
// Targets with a '%' not followed by two hex digits, or with control bytes,
// are repaired by escaping those bytes; other malformed heads get a JSON
// 400 (417 for an Expect other than 100-continue, 505 for an HTTP version
// net/http does not serve) and the connection is closed.
//
// ln must yield plain connections: a guarded *tls.Conn is no longer seen as
// one by net/http. The guard frames the whole stream as HTTP/1.x, so it does
// not suit handlers that hijack connections (WebSocket, CONNECT tunnels),
// nor unencrypted HTTP/2; Decoy has neither.
//
// headerTimeout, when positive, bounds the time from the first byte of a
// request head to its last. net/http's ReadHeaderTimeout cannot do that for
// the requests after the first on a connection, since it sees their heads
// only once the guard has them whole.
func GuardListener(ln net.Listener, maxHeaderBytes int, headerTimeout time.Duration) net.Listener {
	if maxHeaderBytes <= 0 {
		maxHeaderBytes = http.DefaultMaxHeaderBytes
	}
	return &guardListener{Listener: ln, max: maxHeaderBytes, headerTimeout: headerTimeout}
}

type guardListener struct {
	net.Listener
	max           int
	headerTimeout time.Duration

	// For the fast path (see fast.go): nil when it is off.
	fast                                   *Server
	idleTimeout, readTimeout, writeTimeout time.Duration
}

// Accept implements net.Listener.
func (l *guardListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	gc := &guardConn{Conn: c, max: l.max, headerTimeout: l.headerTimeout,
		fast: l.fast, idleTimeout: l.idleTimeout, readTimeout: l.readTimeout, writeTimeout: l.writeTimeout}
	if l.fast != nil {
		l.fast.fastOpened(gc)
	}
	return gc, nil
}

const (
	// guardBufSize is the guard's usual buffer. It is also net/http's
	// bufio size, which bounds chunk-size lines and trailers.
	guardBufSize = 4 << 10
	// maxChunkLine is the longest chunk-size line, CRLF included, that
	// net/http reads: it must fit its 4 KiB buffer.
	maxChunkLine = 4 << 10
	// maxTrailer is the most trailer bytes net/http accepts: it looks for
	// their end within its 4 KiB buffer.
	maxTrailer = 4 << 10
	// maxChunkExcess is net/http's limit on chunk overhead beyond what
	// it allows per chunk (see net/http/internal/chunked.go).
	maxChunkExcess = 16 << 10

	// replyTimeout bounds the write of a refusal, which Close waits for.
	replyTimeout = 5 * time.Second
	// lingerTime is how long Close reads and discards what the client
	// still sends after a refusal, so that the kernel does not reset the
	// connection (and lose the answer) over unread input. It is
	// net/http's rstAvoidanceDelay; lingerBytes caps what is discarded.
	lingerTime  = 500 * time.Millisecond
	lingerBytes = 256 << 10

	// placeholder is the request line net/http reads in place of a
	// refused head: valid, so that the read error after it is the only
	// thing wrong. Without it, a read error met while net/http's
	// background read runs would cancel the request being handled.
	placeholder = "GET / HTTP/1.1\r\n"
)

// errGuardRefused and errGuardMalformedBody are what net/http reads after
// a refused head or a body it would fail to decode itself. They are
// *net.OpError with Op "read" because net/http closes the connection
// quietly on those (isCommonNetReadError), where io.EOF in the middle of a
// head would make it answer 400 in plain text.
var (
	errGuardRefused       = &net.OpError{Op: "read", Net: "tcp", Err: errors.New("request refused by the guard")}
	errGuardMalformedBody = &net.OpError{Op: "read", Net: "tcp", Err: errors.New("malformed chunked request body")}
	errGuardFailed        = &net.OpError{Op: "read", Net: "tcp", Err: errors.New("the request guard failed")}
)

type guardPhase uint8

const (
	phaseHead      guardPhase = iota // request line and header lines
	phaseBody                        // remain bytes of a Content-Length body
	phaseChunkSize                   // a chunk-size line
	phaseChunkData                   // remain bytes of chunk data
	phaseChunkEnd                    // the CRLF after chunk data
	phaseTrailer                     // trailer lines, up to an empty line
	phaseStopped                     // nothing more is checked or delivered
)

// guardConn is a guarded connection. Read is called by one goroutine at a
// time (net/http's connReader sees to it); Close may be called from any.
type guardConn struct {
	net.Conn
	max int

	// headerTimeout bounds a head from its first byte (headBegan). The
	// deadline net/http sets (readDeadline) still applies when sooner;
	// deadlineMu orders the two, since net/http moves its deadline from
	// other goroutines to interrupt a read.
	headerTimeout time.Duration
	headBegan     time.Time
	deadlineMu    sync.Mutex
	readDeadline  time.Time
	capped        bool // the underlying deadline is the head's, not readDeadline
	background    bool // the current Read is net/http's background read

	// buf[r:scan] is checked and may be delivered; buf[scan:w] is input
	// not checked yet. During phaseHead the whole head, from hs, stays in
	// buf until it is accepted or refused.
	buf         []byte
	r, scan, w  int
	emptyReads  int
	phase       guardPhase
	eof         bool  // the client sent all it will
	pendingErr  error // a read error to return once what was read is delivered
	stopErr     error // returned, for good, once buf[r:scan] and tail are delivered
	tail        string
	reply       []byte      // the answer to a refused head
	replyOwed   atomic.Bool // net/http has read stopErr after the refused head
	closeOnce   sync.Once
	closeErr    error
	lastPOST    bool // the previous request was a POST (see skip)
	head        guardHead
	ts, te      int // buf[ts:te] is a target escaped as it is delivered
	esc         [3]byte
	escAt, escN int
	remain      uint64 // left in a Content-Length body or a chunk
	excess      int64  // chunk overhead, counted as net/http does
	trailerLen  int
	trailerMore bool // a trailer field line came last: continuations may follow

	// What the handler's goroutine writes is held while holding, to leave
	// with the body that follows (see sendbody.go).
	holding bool
	held    []byte

	// The fast path (see fast.go): the server, nil when it is off;
	// whether net/http waits for a request (set through ConnState); the
	// timeouts net/http would apply; the head of the last answer, kept
	// for the next. The server's fastMu guards fastBusy (an answer is
	// being given) and closeAfter (Close came meanwhile).
	fast                                   *Server
	idle                                   atomic.Bool
	idleTimeout, readTimeout, writeTimeout time.Duration
	fastHead                               []byte
	peer                                   *http.Request // the client, for access logs
	fastBusy, closeAfter                   bool
	// Under deadlineMu: fastSince is set when the guard answered since
	// net/http last set the read deadline; stretch, when a head was then
	// handed to net/http, which times the whole request (ReadTimeout)
	// from before the guard's answers: its next deadline is moved to
	// stretchFrom (when the head began) plus ReadTimeout.
	fastSince, stretch bool
	stretchFrom        time.Time
}

// guardHead is the state of the head being read, at buf[hs:]. Offsets are
// relative to hs, so that moving the buffer only moves hs.
type guardHead struct {
	hs     int
	skip   int  // leading CR/LF bytes net/http still discards (after a POST)
	method int  // method bytes checked, up to the first space
	line   int  // start of the next line to check
	look   int  // bytes of that line already searched for '\n'
	size   int  // size of the head's complete lines, as delivered
	fields int  // header lines that start a field
	req    bool // the request line is complete and valid

	// From the request line, once req.
	reqEnd             int // end of the request line
	tStart, tEnd       int // the target
	repairs            int // bytes the target's repair adds
	major, minor       int
	post, connect, pri bool
	starURI, starPath  bool // target is "*", path is "*"
	proto20            bool
}

// Read implements net.Conn. It delivers only checked bytes and blocks only
// when it has nothing to deliver.
func (c *guardConn) Read(p []byte) (n int, err error) {
	// A bug here must not crash the server: net/http's background read
	// runs on a goroutine of its own, with no recover.
	defer func() {
		if v := recover(); v != nil {
			c.stop(errGuardFailed)
			n, err = 0, errGuardFailed
		}
	}()
	return c.read(p)
}

func (c *guardConn) read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	// net/http's background read, which watches for the client going
	// away while a handler runs, reads one byte at a time: the head it may
	// meet belongs to the next request, and timing it out would cancel the
	// running one. Its head is timed once net/http reads it for real.
	c.background = len(p) == 1
	for {
		if n := c.deliver(p); n > 0 {
			return n, nil
		}
		if c.phase != phaseStopped {
			// Input may be waiting: held back behind a repaired head,
			// or all there is, at end of input.
			c.advance()
			if n := c.deliver(p); n > 0 {
				return n, nil
			}
		}
		if c.phase == phaseStopped {
			if c.reply != nil {
				c.replyOwed.Store(true)
			}
			return 0, c.stopErr
		}
		if err := c.pendingErr; err != nil {
			c.pendingErr = nil
			return 0, err
		}
		var n int
		var err error
		if (c.phase == phaseBody || c.phase == phaseChunkData) && c.scan == c.w {
			// Body bytes need no buffer: read them straight into p,
			// no further than the body goes.
			q := p
			if uint64(len(q)) > c.remain {
				q = q[:c.remain]
			}
			c.limitHead()
			n, err = c.Conn.Read(q)
			c.remain -= uint64(n)
			c.noteErr(err)
			if c.remain == 0 {
				c.endData()
			}
			if n > 0 {
				return n, nil
			}
		} else {
			n, err = c.fill()
			c.noteErr(err)
		}
		if err = c.checkNoProgress(n, err); err != nil {
			return 0, err
		}
	}
}

// noteErr keeps err from the underlying connection for after the bytes read
// with it. End of input is for good; other errors (a deadline, which
// net/http also uses to interrupt its background read) are returned once.
func (c *guardConn) noteErr(err error) {
	switch {
	case err == nil:
	case err == io.EOF:
		c.eof = true
	default:
		c.pendingErr = err
	}
}

// checkNoProgress guards against a connection that returns nothing and no
// error forever, as bufio does.
func (c *guardConn) checkNoProgress(n int, err error) error {
	if n > 0 || err != nil {
		c.emptyReads = 0
		return nil
	}
	c.emptyReads++
	if c.emptyReads >= 100 {
		return io.ErrNoProgress
	}
	return nil
}

// fill reads more input into buf, making room first.
func (c *guardConn) fill() (int, error) {
	keep := c.r
	if c.phase == phaseHead {
		keep = min(keep, c.head.hs) // the head stays whole
	}
	if keep == c.w || keep > 0 && c.w == len(c.buf) {
		copy(c.buf, c.buf[keep:c.w])
		c.r -= keep
		c.scan -= keep
		c.w -= keep
		c.head.hs -= keep
	}
	if c.w == 0 && len(c.buf) > 2*guardBufSize {
		c.buf = nil // a large head is over: give its memory back
	}
	if c.buf == nil {
		c.buf = make([]byte, guardBufSize)
	}
	if c.w == len(c.buf) {
		limit := guardBufSize
		if c.phase == phaseHead {
			limit = c.max + guardBufSize
		}
		if len(c.buf) >= limit {
			// The checks stop before this; never loop on a full buffer.
			if c.phase == phaseHead {
				c.refuse(http.StatusRequestHeaderFieldsTooLarge, "")
			} else {
				c.stop(errGuardMalformedBody)
			}
			return 0, nil
		}
		b := make([]byte, min(2*len(c.buf), limit))
		copy(b, c.buf[:c.w])
		c.buf = b
	}
	c.limitHead()
	n, err := c.Conn.Read(c.buf[c.w:])
	c.w += n
	if c.phase == phaseHead && c.headBegan.IsZero() && c.w > c.head.hs {
		c.headBegan = time.Now()
	}
	return n, err
}

// limitHead sets the underlying read deadline for the next read: the
// sooner of net/http's and the end of the head's time while a head is being
// read, net/http's otherwise.
func (c *guardConn) limitHead() {
	if c.headerTimeout <= 0 {
		return
	}
	c.deadlineMu.Lock()
	defer c.deadlineMu.Unlock()
	if c.phase == phaseHead && !c.headBegan.IsZero() && !c.background {
		dl := c.headBegan.Add(c.headerTimeout)
		if !c.readDeadline.IsZero() && c.readDeadline.Before(dl) {
			dl = c.readDeadline
		}
		_ = c.Conn.SetReadDeadline(dl)
		c.capped = true
	} else if c.capped {
		_ = c.Conn.SetReadDeadline(c.readDeadline)
		c.capped = false
	}
}

// SetReadDeadline implements net.Conn.
func (c *guardConn) SetReadDeadline(t time.Time) error { return c.setReadDeadline(t, false) }

// setReadDeadline sets the read deadline; fast says whether the guard sets
// it after an answer of its own (see fastSince).
func (c *guardConn) setReadDeadline(t time.Time, fast bool) error {
	c.deadlineMu.Lock()
	defer c.deadlineMu.Unlock()
	if c.stretch && !t.IsZero() && c.readTimeout > 0 {
		if d := c.stretchFrom.Add(c.readTimeout); t.Before(d) {
			t = d
		}
	}
	c.stretch, c.fastSince = false, fast
	c.readDeadline, c.capped = t, false
	return c.Conn.SetReadDeadline(t)
}

// SetDeadline implements net.Conn.
func (c *guardConn) SetDeadline(t time.Time) error {
	c.deadlineMu.Lock()
	defer c.deadlineMu.Unlock()
	c.readDeadline, c.capped = t, false
	return c.Conn.SetDeadline(t)
}

// deliver copies checked bytes, then the tail, into p.
func (c *guardConn) deliver(p []byte) int {
	n := 0
	for c.escAt < c.escN && n < len(p) {
		p[n] = c.esc[c.escAt]
		n++
		c.escAt++
	}
	for n < len(p) && c.r < c.scan {
		if c.r < c.ts || c.r >= c.te {
			end := c.scan
			if c.r < c.ts {
				end = min(end, c.ts)
			}
			k := copy(p[n:], c.buf[c.r:end])
			n += k
			c.r += k
			continue
		}
		b := c.buf[c.r]
		c.r++
		if !needsEscape(c.buf[c.ts:c.te], c.r-1-c.ts) {
			p[n] = b
			n++
			continue
		}
		c.esc = [3]byte{'%', "0123456789ABCDEF"[b>>4], "0123456789ABCDEF"[b&15]}
		c.escAt, c.escN = 0, 3
		for c.escAt < c.escN && n < len(p) {
			p[n] = c.esc[c.escAt]
			n++
			c.escAt++
		}
	}
	if c.r >= c.te {
		c.ts, c.te = 0, 0
	}
	if n == 0 && c.r == c.scan {
		// The tail goes in a read of its own. net/http reads ahead into
		// its buffer; had it read the tail along with good bytes, its
		// background read, while the handler runs, would meet stopErr and
		// cancel the request being handled. Reading the tail alone, that
		// read gets at most one byte of it and never the error.
		n = copy(p, c.tail)
		c.tail = c.tail[n:]
	}
	return n
}

// needsEscape reports whether the target byte t[i] is repaired: a control
// byte, or a '%' that does not start an escape. net/http refuses both in
// paths; in queries they would reach handlers that cannot decode them.
func needsEscape(t []byte, i int) bool {
	b := t[i]
	if b < 0x20 || b == 0x7f {
		return true
	}
	return b == '%' && (i+2 >= len(t) || !isHex(t[i+1]) || !isHex(t[i+2]))
}

func isHex(b byte) bool {
	return '0' <= b && b <= '9' || 'a' <= b && b <= 'f' || 'A' <= b && b <= 'F'
}

// advance checks as much buffered input as it can.
func (c *guardConn) advance() {
	for {
		if c.phase == phaseHead && c.te > c.r {
			// There is one repair range: the next head waits until
			// the repaired one is delivered.
			return
		}
		var more bool
		switch c.phase {
		case phaseHead:
			more = c.advanceHead()
		case phaseBody, phaseChunkData:
			n := uint64(c.w - c.scan)
			if n == 0 {
				break
			}
			n = min(n, c.remain)
			c.scan += int(n)
			c.remain -= n
			if c.remain == 0 {
				c.endData()
			}
			more = true
		case phaseChunkSize:
			more = c.advanceChunkSize()
		case phaseChunkEnd:
			if c.w-c.scan < 2 {
				break
			}
			if c.buf[c.scan] != '\r' || c.buf[c.scan+1] != '\n' {
				c.stop(errGuardMalformedBody)
				return
			}
			c.scan += 2
			c.phase = phaseChunkSize
			more = true
		case phaseTrailer:
			more = c.advanceTrailer()
		case phaseStopped:
			return
		}
		if !more {
			break
		}
	}
	if !c.eof || c.phase == phaseStopped {
		return
	}
	// All input is checked: what is left is incomplete.
	switch {
	case c.phase == phaseHead && c.w == c.head.hs:
		c.stop(io.EOF) // between requests: net/http expects this
	case c.phase == phaseHead:
		c.refuse(http.StatusBadRequest, "incomplete request head")
	default:
		c.stop(io.EOF) // net/http reports the body as cut short
	}
}

// endData moves on after the last byte of a body or of a chunk.
func (c *guardConn) endData() {
	if c.phase == phaseChunkData {
		c.phase = phaseChunkEnd
		return
	}
	c.startHead()
}

// startHead gets ready for the next request's head at scan.
func (c *guardConn) startHead() {
	c.phase = phaseHead
	c.head = guardHead{hs: c.scan}
	c.headBegan = time.Time{}
	if c.lastPOST {
		// net/http discards up to 4 CR or LF bytes after a POST, for
		// old clients that end bodies with a stray CRLF.
		c.head.skip = 4
	}
}

// stop ends checking: once what is checked is delivered, Read returns err.
func (c *guardConn) stop(err error) {
	c.phase = phaseStopped
	c.stopErr = err
}

// refuse stops at the current head, which net/http never sees, and keeps
// the JSON answer for Close.
func (c *guardConn) refuse(status int, reason string) {
	msg := "Malformed request: " + reason
	switch status {
	case http.StatusRequestHeaderFieldsTooLarge:
		msg = "Request headers too large (at most " + byteSize(c.max) + ")"
	case http.StatusHTTPVersionNotSupported:
		msg = "HTTP version not supported"
	case http.StatusExpectationFailed:
		msg = "Unsupported Expect header: only 100-continue is supported"
	}
	c.reply = guardReply(status, msg)
	c.tail = placeholder
	c.stop(errGuardRefused)
}

// guardReply is a whole HTTP response carrying Decoy's JSON error.
func guardReply(status int, msg string) []byte {
	var body strings.Builder
	enc := json.NewEncoder(&body)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(errorBody{Error: msg}) // a struct of one string always encodes
	return fmt.Appendf(nil, "HTTP/1.1 %d %s\r\n"+
		"Content-Type: application/json\r\n"+
		"Content-Length: %d\r\n"+
		"Cache-Control: no-store\r\n"+
		"X-Content-Type-Options: nosniff\r\n"+
		"Connection: close\r\n\r\n%s",
		status, http.StatusText(status), body.Len(), body.String())
}

// byteSize formats n for people: 64 KiB, 1 MiB, 1000 bytes.
func byteSize(n int) string {
	switch {
	case n%(1<<20) == 0:
		return strconv.Itoa(n>>20) + " MiB"
	case n%(1<<10) == 0:
		return strconv.Itoa(n>>10) + " KiB"
	}
	return strconv.Itoa(n) + " bytes"
}

// Close implements net.Conn. If net/http gave up on a refused head, the
// refusal is answered first.
func (c *guardConn) Close() error {
	if s := c.fast; s != nil {
		s.fastMu.Lock()
		if c.fastBusy {
			// net/http takes the connection for idle while the guard
			// answers: it is closed once the answer is written.
			c.closeAfter = true
			s.fastMu.Unlock()
			return nil
		}
		s.fastMu.Unlock()
	}
	return c.closeNow()
}

// closeNow closes the connection, answering a refused head first.
func (c *guardConn) closeNow() error {
	if s := c.fast; s != nil {
		s.fastClosed(c)
	}
	c.closeOnce.Do(func() {
		if c.replyOwed.Load() {
			c.sendReply()
		}
		c.closeErr = c.Conn.Close()
	})
	return c.closeErr
}

// CloseWrite lets net/http half-close the connection, as it does on
// *net.TCPConn, when it hangs up on a client still sending.
func (c *guardConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

func (c *guardConn) sendReply() {
	_ = c.Conn.SetWriteDeadline(time.Now().Add(replyTimeout))
	if _, err := c.Conn.Write(c.reply); err != nil {
		return
	}
	_ = c.CloseWrite()
	_ = c.Conn.SetReadDeadline(time.Now().Add(lingerTime))
	var b [guardBufSize]byte
	for n := 0; n < lingerBytes; {
		k, err := c.Conn.Read(b[:])
		n += k
		if err != nil {
			return
		}
	}
}

// advanceHead checks the head's new bytes. Nothing of a head is delivered
// before all of it is checked: net/http must never hold part of a line when
// a read fails (a deadline, say), or it would answer the part.
func (c *guardConn) advanceHead() bool {
	h := &c.head
	// net/http discards these unseen: deliver them as they come.
	for h.skip > 0 && h.hs < c.w {
		if b := c.buf[h.hs]; b != '\r' && b != '\n' {
			h.skip = 0
			break
		}
		h.hs++
		h.skip--
		h.size++
		c.scan = h.hs
	}
	if h.skip > 0 {
		return false // the next byte may be one more to skip
	}
	// Refuse a bad method without waiting for the rest of the line.
	for !h.req && h.method < c.w-h.hs {
		b := c.buf[h.hs+h.method]
		if b == ' ' && h.method > 0 {
			break
		}
		if !isTokenByte(b) {
			c.refuse(http.StatusBadRequest, "invalid request line")
			return false
		}
		h.method++
	}
	for {
		start := h.hs + h.line
		i := bytes.IndexByte(c.buf[start+h.look:c.w], '\n')
		if i < 0 {
			h.look = c.w - start
			if h.size+h.look > c.max {
				c.refuse(http.StatusRequestHeaderFieldsTooLarge, "")
			}
			return false
		}
		end := start + h.look + i + 1
		h.look = 0
		line := c.buf[start:end]
		content := trimEOL(line)
		size, repairs := len(line), 0
		if !h.req {
			repairs = targetRepairs(content)
			size += repairs
		}
		if h.size+size > c.max {
			c.refuse(http.StatusRequestHeaderFieldsTooLarge, "")
			return false
		}
		h.size += size
		h.line = end - h.hs
		switch {
		case !h.req:
			if reason := c.checkRequestLine(content, repairs); reason != "" {
				c.refuse(http.StatusBadRequest, reason)
				return false
			}
			h.reqEnd = h.line
		case len(content) == 0:
			c.acceptHead(c.buf[h.hs+h.reqEnd : start])
			return true
		default:
			if reason := checkHeaderLine(content, h.fields == 0); reason != "" {
				c.refuse(http.StatusBadRequest, reason)
				return false
			}
			if content[0] != ' ' && content[0] != '\t' {
				h.fields++
			}
		}
	}
}

// trimEOL drops the line end: "\n" or "\r\n", as bufio.Reader.ReadLine.
func trimEOL(line []byte) []byte {
	line = line[:len(line)-1]
	if n := len(line); n > 0 && line[n-1] == '\r' {
		line = line[:n-1]
	}
	return line
}

// splitRequestLine splits a request line as net/http does: at the first two
// spaces.
func splitRequestLine(line []byte) (method, target, proto []byte, ok bool) {
	method, rest, ok1 := bytes.Cut(line, []byte(" "))
	target, proto, ok2 := bytes.Cut(rest, []byte(" "))
	return method, target, proto, ok1 && ok2
}

// targetRepairs is how many bytes repairing the target of line adds.
func targetRepairs(line []byte) int {
	_, target, _, ok := splitRequestLine(line)
	if !ok {
		return 0
	}
	n := 0
	for i := range target {
		if needsEscape(target, i) {
			n += 2
		}
	}
	return n
}

// checkRequestLine checks the request line as net/http's readRequest does,
// the target once repaired (which adds repairs bytes). It returns why it is
// refused, or "".
func (c *guardConn) checkRequestLine(line []byte, repairs int) string {
	h := &c.head
	method, target, proto, ok := splitRequestLine(line)
	if !ok {
		return "invalid request line"
	}
	if !isToken(method) {
		return "invalid method"
	}
	major, minor, ok := http.ParseHTTPVersion(string(proto))
	if !ok {
		return "invalid HTTP version"
	}
	h.tStart = len(method) + 1
	h.tEnd = h.tStart + len(target)
	h.repairs = repairs
	raw := string(target)
	if h.repairs > 0 {
		var b strings.Builder
		for i, t := range target {
			if needsEscape(target, i) {
				fmt.Fprintf(&b, "%%%02X", t)
			} else {
				b.WriteByte(t)
			}
		}
		raw = b.String()
	}
	h.connect = string(method) == http.MethodConnect
	if h.connect && !strings.HasPrefix(raw, "/") {
		raw = "http://" + raw // a CONNECT target is an authority
	}
	u, err := url.ParseRequestURI(raw)
	if err != nil {
		return "invalid request target"
	}
	h.req = true
	h.major, h.minor = major, minor
	h.post = string(method) == http.MethodPost
	h.pri = string(method) == "PRI"
	h.starURI = string(target) == "*"
	h.starPath = u.Path == "*"
	h.proto20 = string(proto) == "HTTP/2.0"
	return ""
}

// checkHeaderLine checks one header line as net/textproto and net/http do.
func checkHeaderLine(line []byte, first bool) string {
	if line[0] == ' ' || line[0] == '\t' {
		if first {
			return "header continuation without a field"
		}
		// Obsolete line folding (RFC 9112 §5.2): refused, since a proxy
		// in front may read a folded Transfer-Encoding or Content-Length
		// otherwise than net/http does.
		return "obsolete line folding"
	}
	name, value, ok := bytes.Cut(line, []byte(":"))
	if !ok {
		return "header line without colon"
	}
	if !isToken(name) {
		return "invalid header name"
	}
	if !validValue(value) {
		return "invalid header value"
	}
	return ""
}

// headerFields calls f with each field of a header section (the lines
// after the request line, without the empty line) that want accepts, its
// value joined from continuation lines as net/textproto joins them.
func headerFields(hdr []byte, want func(name []byte) bool, f func(name []byte, value string)) {
	for len(hdr) > 0 {
		line, rest := nextLine(hdr)
		hdr = rest
		name, _, _ := bytes.Cut(line, []byte(":"))
		kv := trimOWS(line)
		if want(name) {
			kv = bytes.Clone(kv)
		}
		for len(hdr) > 0 && (hdr[0] == ' ' || hdr[0] == '\t') {
			line, hdr = nextLine(hdr)
			if want(name) {
				kv = append(append(kv, ' '), trimOWS(line)...)
			}
		}
		if want(name) {
			_, v, _ := bytes.Cut(kv, []byte(":"))
			f(name, string(bytes.TrimLeft(v, " \t")))
		}
	}
}

func nextLine(b []byte) (line, rest []byte) {
	i := bytes.IndexByte(b, '\n')
	return trimEOL(b[:i+1]), b[i+1:]
}

// trimOWS trims spaces and tabs, as net/textproto trims header lines.
func trimOWS(b []byte) []byte {
	return bytes.Trim(b, " \t")
}

// acceptHead runs the checks that need the whole head (hdr is its header
// section) and, if they pass, delivers it and frames its body.
func (c *guardConn) acceptHead(hdr []byte) {
	h := &c.head
	status, reason, chunked, length := checkHead(h, hdr)
	if status != 0 {
		c.refuse(status, reason)
		return
	}
	if c.tryFast(hdr, chunked, length) {
		return
	}
	if c.idle.Swap(false) { // net/http has a request to answer
		c.deadlineMu.Lock()
		if c.fastSince {
			c.stretch, c.stretchFrom = true, c.headBegan
			if c.stretchFrom.IsZero() {
				c.stretchFrom = time.Now()
			}
		}
		c.deadlineMu.Unlock()
	}
	c.scan = h.hs + h.line
	if h.repairs > 0 {
		c.ts, c.te = h.hs+h.tStart, h.hs+h.tEnd
	}
	c.lastPOST = h.post
	switch {
	case chunked:
		c.phase = phaseChunkSize
		c.excess = 0
	case length > 0:
		c.phase = phaseBody
		c.remain = uint64(length)
	default:
		c.startHead()
	}
}

// checkHead applies the rules of net/http's readRequest, readTransfer and
// conn.readRequest to a head whose lines are each valid, and returns the
// status and reason of a refusal (status 0 if none) and how the body is
// framed.
//
// Deliberately stricter than net/http: a request with both
// Transfer-Encoding and Content-Length is refused (net/http 1.26 drops
// Content-Length and reads chunks), since a proxy in front may frame it the
// other way; an unsupported Transfer-Encoding gets 400 rather than 501.
func checkHead(h *guardHead, hdr []byte) (status int, reason string, chunked bool, length int64) {
	var (
		hosts, cls, tes []string
		expect          *string
		trailers        []string
	)
	want := func(name []byte) bool {
		for _, n := range [...]string{"Host", "Content-Length", "Transfer-Encoding", "Expect", "Trailer"} {
			if bytes.EqualFold(name, []byte(n)) {
				return true
			}
		}
		return false
	}
	headerFields(hdr, want, func(name []byte, v string) {
		switch {
		case bytes.EqualFold(name, []byte("Host")):
			hosts = append(hosts, v)
		case bytes.EqualFold(name, []byte("Content-Length")):
			cls = append(cls, v)
		case bytes.EqualFold(name, []byte("Transfer-Encoding")):
			tes = append(tes, v)
		case bytes.EqualFold(name, []byte("Expect")):
			if expect == nil {
				expect = &v
			}
		default:
			trailers = append(trailers, v)
		}
	})
	bad := func(reason string) (int, string, bool, int64) {
		return http.StatusBadRequest, reason, false, 0
	}
	if len(hosts) > 1 {
		return bad("too many Host headers")
	}
	// net/http ignores Transfer-Encoding in HTTP/1.0 (0.0 counts as 1.1
	// there) and would read the chunks as the next request: such framing
	// is faulty (RFC 9112 §6.1) and refused.
	major, minor := h.major, h.minor
	if major == 0 && minor == 0 {
		major, minor = 1, 1
	}
	if len(tes) > 0 && major == 1 && minor == 0 {
		return bad("Transfer-Encoding in an HTTP/1.0 request")
	}
	if len(tes) > 0 && (major > 1 || major == 1 && minor >= 1) {
		if len(tes) != 1 || !strings.EqualFold(tes[0], "chunked") {
			return bad("unsupported Transfer-Encoding")
		}
		chunked = true
	}
	if len(cls) > 0 {
		first := strings.Trim(cls[0], " \t\r\n")
		for _, cl := range cls[1:] {
			if strings.Trim(cl, " \t\r\n") != first {
				return bad("conflicting Content-Length headers")
			}
		}
		n, err := strconv.ParseUint(first, 10, 63)
		if err != nil {
			return bad("invalid Content-Length")
		}
		length = int64(n)
	}
	if len(tes) > 0 && len(cls) > 0 {
		return bad("both Transfer-Encoding and Content-Length")
	}
	if chunked {
		for _, v := range trailers {
			for key := range strings.SplitSeq(v, ",") {
				key = strings.Trim(key, " \t\r\n")
				for _, n := range [...]string{"Transfer-Encoding", "Trailer", "Content-Length"} {
					if strings.EqualFold(key, n) {
						return bad("invalid Trailer header")
					}
				}
			}
		}
	}
	if !(h.major == 1 || h.major == 2 && h.minor == 0 && h.pri && h.starURI) {
		return http.StatusHTTPVersionNotSupported, "", false, 0
	}
	h2Upgrade := h.pri && h.fields == 0 && h.starPath && h.proto20
	if len(hosts) == 0 && (h.major > 1 || h.major == 1 && h.minor >= 1) && !h2Upgrade && !h.connect {
		return bad("missing Host header")
	}
	if len(hosts) == 1 && !validHost(hosts[0]) {
		return bad("invalid Host header")
	}
	if expect != nil && *expect != "" && !hasToken(*expect, "100-continue") {
		return http.StatusExpectationFailed, "", false, 0
	}
	return 0, "", chunked, length
}

// advanceChunkSize checks a chunk-size line as net/http's chunked reader
// does, overhead limit included.
func (c *guardConn) advanceChunkSize() bool {
	avail := c.buf[c.scan:min(c.w, c.scan+maxChunkLine)]
	i := bytes.IndexByte(avail, '\n')
	if i < 0 {
		if len(avail) == maxChunkLine {
			c.stop(errGuardMalformedBody)
		}
		return false
	}
	line := avail[:i+1]
	if len(line) < 2 || bytes.IndexByte(line, '\r') != len(line)-2 {
		c.stop(errGuardMalformedBody) // bare LF, or a CR inside
		return false
	}
	content := line[:len(line)-2]
	c.excess += int64(len(content)) + 2
	size, _, _ := bytes.Cut(bytes.TrimRight(content, " \t"), []byte(";"))
	n, ok := parseChunkSize(size)
	if !ok {
		c.stop(errGuardMalformedBody)
		return false
	}
	c.excess -= 16 + (2 * int64(n)) // wraps for huge n exactly as net/http's does
	c.excess = max(c.excess, 0)
	if c.excess > maxChunkExcess {
		c.stop(errGuardMalformedBody)
		return false
	}
	c.scan += len(line)
	if n == 0 {
		c.phase = phaseTrailer
		c.trailerLen = 0
		c.trailerMore = false
		return true
	}
	c.phase = phaseChunkData
	c.remain = n
	return true
}

// parseChunkSize parses at most 16 hex digits, as net/http does.
func parseChunkSize(b []byte) (uint64, bool) {
	if len(b) == 0 || len(b) > 16 {
		return 0, false
	}
	var n uint64
	for _, d := range b {
		switch {
		case '0' <= d && d <= '9':
			d -= '0'
		case 'a' <= d && d <= 'f':
			d -= 'a' - 10
		case 'A' <= d && d <= 'F':
			d -= 'A' - 10
		default:
			return 0, false
		}
		n = n<<4 | uint64(d)
	}
	return n, true
}

// advanceTrailer checks one trailer line as net/textproto reads trailers.
// net/http looks for the trailers' end within its 4 KiB buffer, so longer
// trailers fail there as here.
func (c *guardConn) advanceTrailer() bool {
	avail := c.buf[c.scan:min(c.w, c.scan+maxTrailer-c.trailerLen)]
	i := bytes.IndexByte(avail, '\n')
	if i < 0 {
		if len(avail) == maxTrailer-c.trailerLen {
			c.stop(errGuardMalformedBody)
		}
		return false
	}
	line := avail[:i+1]
	content := trimEOL(line)
	c.scan += len(line)
	c.trailerLen += len(line)
	if len(content) == 0 {
		c.startHead()
		return true
	}
	if content[0] == ' ' || content[0] == '\t' {
		if !c.trailerMore || !validValue(content) {
			c.stop(errGuardMalformedBody)
			return false
		}
		return true
	}
	name, value, ok := bytes.Cut(content, []byte(":"))
	if !ok || len(name) == 0 || !validValue(value) {
		c.stop(errGuardMalformedBody)
		return false
	}
	for _, b := range name {
		if b != ' ' && !isTokenByte(b) {
			c.stop(errGuardMalformedBody)
			return false
		}
	}
	c.trailerMore = true
	return true
}

// isTokenByte reports whether b may appear in an HTTP token (RFC 9110).
func isTokenByte(b byte) bool {
	return 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z' || '0' <= b && b <= '9' ||
		strings.IndexByte("!#$%&'*+-.^_`|~", b) >= 0
}

func isToken(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	for _, c := range b {
		if !isTokenByte(c) {
			return false
		}
	}
	return true
}

// validValue reports whether b may appear in a header value: no control
// byte but HTAB, obs-text allowed.
func validValue(b []byte) bool {
	for _, c := range b {
		if c < ' ' && c != '\t' || c == 0x7f {
			return false
		}
	}
	return true
}

// validHost is golang.org/x/net/http/httpguts.ValidHostHeader, which
// net/http applies to the Host header.
func validHost(h string) bool {
	for i := 0; i < len(h); i++ {
		b := h[i]
		ok := 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z' || '0' <= b && b <= '9' ||
			strings.IndexByte("!$%&'()*+,-.:;=[]_~", b) >= 0
		if !ok {
			return false
		}
	}
	return true
}

// hasToken is net/http's: whether v contains token, ASCII
// case-insensitively, between spaces, tabs or commas.
func hasToken(v, token string) bool {
	for sp := 0; sp+len(token) <= len(v); sp++ {
		if sp > 0 && !isTokenBoundary(v[sp-1]) {
			continue
		}
		if end := sp + len(token); end != len(v) && !isTokenBoundary(v[end]) {
			continue
		}
		if strings.EqualFold(v[sp:sp+len(token)], token) {
			return true
		}
	}
	return false
}

func isTokenBoundary(b byte) bool { return b == ' ' || b == ',' || b == '\t' }
