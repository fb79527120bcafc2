package server

// The fast path: the guard answers the plainest reads itself, instead of
// handing them to net/http. That is a GET of /mock/{id} over HTTP/1.1, with
// only headers that cannot change the answer (no gzip, no If-None-Match, no
// token) and a query that compiles and carries no token, of a public mock
// already in memory, with no rate limit, no delay and a status with a body,
// on a server with no per-client limit that counts quotas in memory (the
// embedded store). Its answer is the stored document, or the records the
// query selects, after a head made here; net/http's per-request work
// (request and response objects, a background read, contexts, deadlines,
// header sorting) costs about as much CPU as sending a 233 KiB document
// with sendfile, and more than a query with a small answer.
//
// The answer, the quota count, the usage count, the metrics and the
// access-log line are the ones net/http and serveMock give: fast_test.go
// compares them byte for byte, and FuzzFastPath with arbitrary headers. Any
// other request, or any doubt, goes to net/http as before, and so does every
// request while net/http has one to answer on the connection (the guard
// answers only when net/http waits for the next one, which keeps pipelined
// answers in order) and the request after a POST (net/http remembers the
// last method it read).
//
// To net/http the connection stays idle meanwhile. So the guard keeps its
// deadlines as net/http would (the idle timeout after each answer, the write
// timeout, ReadTimeout of the next request net/http reads counted from its
// head), closes the connection after the answer when net/http closes it
// during one, stops at Shutdown, and DrainFast waits for answers under way.

import (
	"bytes"
	"context"
	"errors"
	"net"
	"net/http"
	"net/textproto"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/decoy-mock/decoy"
	"github.com/decoy-mock/decoy/query"
)

// GuardListener returns ln guarded as the package's GuardListener does,
// with hs's MaxHeaderBytes and ReadHeaderTimeout, and lets the guard answer
// plain whole-document reads itself (see fast.go). It sets hs.ConnState,
// keeping any function already there: the guard answers only while net/http
// waits for a request on the connection, which ConnState tells. It
// registers a function to run at hs.Shutdown, which closes connections
// waiting for a request. hs must serve s, on the returned listener only.
//
// To net/http, a connection on which the guard is answering is idle: its
// Shutdown and Close leave the answer to finish, and Shutdown may return
// before it has. Call DrainFast after Shutdown.
func (s *Server) GuardListener(ln net.Listener, hs *http.Server) net.Listener {
	g := GuardListener(ln, hs.MaxHeaderBytes, hs.ReadHeaderTimeout).(*guardListener)
	g.fast = s
	g.idleTimeout = hs.IdleTimeout
	if g.idleTimeout == 0 {
		g.idleTimeout = hs.ReadTimeout // as net/http does
	}
	g.readTimeout = hs.ReadTimeout
	g.writeTimeout = hs.WriteTimeout
	prev := hs.ConnState
	hs.ConnState = func(c net.Conn, st http.ConnState) {
		if gc, ok := c.(*guardConn); ok {
			// StateNew is set before the connection's goroutine starts,
			// StateIdle on it: both happen before its next Read.
			gc.idle.Store(st == http.StateNew || st == http.StateIdle)
		}
		if prev != nil {
			prev(c, st)
		}
	}
	hs.RegisterOnShutdown(s.fastShutdown)
	return g
}

// fastOpened and fastClosed keep the set of open connections of fast
// listeners.
func (s *Server) fastOpened(c *guardConn) {
	s.fastMu.Lock()
	defer s.fastMu.Unlock()
	if s.fastConns == nil {
		s.fastConns = map[*guardConn]struct{}{}
	}
	s.fastConns[c] = struct{}{}
}

func (s *Server) fastClosed(c *guardConn) {
	s.fastMu.Lock()
	defer s.fastMu.Unlock()
	delete(s.fastConns, c)
}

// fastShutdown stops the fast path, so that net/http answers what comes
// next (with Connection: close), and closes the connections that wait for
// a request, as net/http closes its idle ones: those on which only the
// guard answered are new to net/http, which would wait 5 s to close them.
func (s *Server) fastShutdown() {
	s.fastMu.Lock()
	s.fastStopping = true
	var waiting []*guardConn
	for c := range s.fastConns {
		if !c.fastBusy && c.idle.Load() {
			waiting = append(waiting, c)
		}
	}
	s.fastMu.Unlock()
	for _, c := range waiting {
		_ = c.Close()
	}
}

// DrainFast waits until the answers the guard is giving are written, or ctx
// ends; then it closes the connections of those still going and returns
// ctx's error. Call it after http.Server.Shutdown, which does not wait for
// them (see GuardListener).
func (s *Server) DrainFast(ctx context.Context) error {
	t := time.NewTicker(5 * time.Millisecond)
	defer t.Stop()
	for {
		s.fastMu.Lock()
		busy := s.fastBusy
		var cut []*guardConn
		if busy > 0 && ctx.Err() != nil {
			for c := range s.fastConns {
				if c.fastBusy {
					cut = append(cut, c)
				}
			}
		}
		s.fastMu.Unlock()
		if busy == 0 {
			return nil
		}
		if cut != nil {
			for _, c := range cut {
				_ = c.closeNow()
			}
			return ctx.Err()
		}
		select {
		case <-ctx.Done():
		case <-t.C:
		}
	}
}

// fastBegin marks c as answering, unless the server is stopping.
func (s *Server) fastBegin(c *guardConn) bool {
	s.fastMu.Lock()
	defer s.fastMu.Unlock()
	if s.fastStopping || c.closeAfter {
		return false
	}
	c.fastBusy = true
	s.fastBusy++
	return true
}

// fastEnd ends an answer, and closes c if Close came meanwhile; it reports
// whether it did.
func (s *Server) fastEnd(c *guardConn) bool {
	s.fastMu.Lock()
	c.fastBusy = false
	s.fastBusy--
	closeNow := c.closeAfter
	s.fastMu.Unlock()
	if closeNow {
		_ = c.closeNow()
	}
	return closeNow
}

// fastResult is what the fast path did with a head.
type fastResult uint8

const (
	fastNo     fastResult = iota // not answered: net/http answers it
	fastServed                   // answered; the connection goes on
	fastBroken                   // answered in part: the connection is done
)

// errFastWrite is what net/http reads after an answer the guard could not
// write: a read error, on which it closes the connection quietly.
var errFastWrite = &net.OpError{Op: "read", Net: "tcp", Err: errors.New("the answer could not be written")}

// tryFast answers the head just checked, buf[h.hs:h.hs+h.line], if it can:
// only when net/http waits for a request and nothing before the head is
// still to be delivered, so that answers keep the order of requests.
func (c *guardConn) tryFast(hdr []byte, chunked bool, length int64) bool {
	h := &c.head
	// After a POST, net/http skips blank lines before the next head, and
	// knows the last method only from the heads it reads: the guard
	// answers nothing until it has read another.
	if c.fast == nil || !c.idle.Load() || c.background || c.lastPOST || c.r != h.hs || chunked || length != 0 ||
		h.repairs > 0 || c.escAt < c.escN || len(c.tail) > 0 || h.major != 1 || h.minor != 1 {
		return false
	}
	line := c.buf[h.hs : h.hs+h.reqEnd]
	if !bytes.HasPrefix(line, []byte("GET ")) {
		return false
	}
	target := c.buf[h.hs+h.tStart : h.hs+h.tEnd]
	switch c.fast.serveFast(c, target, hdr) {
	case fastNo:
		return false
	case fastBroken:
		c.stop(errFastWrite)
		return true
	}
	c.r = h.hs + h.line
	c.scan = c.r
	c.startHead()
	// Waiting for the next request is idle time, as net/http would have
	// it after an answer.
	var idle time.Time
	if c.idleTimeout > 0 {
		idle = time.Now().Add(c.idleTimeout)
	}
	_ = c.setReadDeadline(idle, true)
	return true
}

// fastHeaders are the request headers that cannot change a plain read's
// answer, by lower-case name. Any other header sends the request to
// net/http; so do Accept-Encoding accepting gzip, Connection other than
// keep-alive, and Origin when CORS is not open to every origin.
var fastHeaders = map[string]bool{
	"host": true, "user-agent": true, "accept": true, "accept-language": true,
	"accept-encoding": true, "connection": true, "origin": true, "referer": true,
	"cache-control": true, "pragma": true, "dnt": true, "priority": true,
	"sec-fetch-site": true, "sec-fetch-mode": true, "sec-fetch-dest": true,
	"sec-fetch-user": true, "sec-ch-ua": true, "sec-ch-ua-mobile": true,
	"sec-ch-ua-platform": true, "upgrade-insecure-requests": true,
}

// fastHeadersOK reports whether the header section hdr (lines already
// checked by the guard) leaves a plain read's answer as the mock alone
// makes it.
func (s *Server) fastHeadersOK(hdr []byte) bool {
	var name [32]byte
	encodings := 0
	for len(hdr) > 0 {
		var l []byte
		l, hdr = nextLine(hdr) // the guard refuses folded lines
		k, v, _ := bytes.Cut(l, []byte(":"))
		if len(k) > len(name) {
			return false
		}
		n := name[:len(k)]
		for i, b := range k {
			if 'A' <= b && b <= 'Z' {
				b += 'a' - 'A'
			}
			n[i] = b
		}
		if !fastHeaders[string(n)] {
			return false
		}
		v = trimOWS(v)
		switch string(n) {
		case "connection":
			if !strings.EqualFold(string(v), "keep-alive") {
				return false
			}
		case "accept-encoding":
			encodings++
			if encodings > 1 || acceptsGzip(string(v)) {
				return false
			}
		case "origin":
			if !s.corsAny {
				return false
			}
		}
	}
	return true
}

// serveFast answers a GET of target (path and query, as in the request
// line) when it is a plain read: see fast.go.
func (s *Server) serveFast(c *guardConn, target, hdr []byte) (res fastResult) {
	start := time.Now()
	rawPath, rawQuery, hasQuery := bytes.Cut(target, []byte("?"))
	if len(rawPath) != len("/mock/")+36 || !bytes.HasPrefix(rawPath, []byte("/mock/")) ||
		hasQuery && len(rawQuery) == 0 || bytes.IndexByte(rawQuery, '#') >= 0 ||
		(s.cfg.ClientRateLimit != 0 && s.cfg.ClientLimiter != nil) || !s.fastHeadersOK(hdr) {
		return fastNo
	}
	path := string(rawPath)
	id, ok := mockID(path)
	if !ok || id != path[len("/mock/"):] {
		return fastNo
	}
	// Quota counts that wait on a network (PostgreSQL, Redis) can fail or
	// stall, and a request handed on after that would be counted again.
	if mq, ok := s.cfg.Quota.(memoryQuota); !ok || !mq.CountsInMemory() {
		return fastNo
	}
	// A mock not in memory, or one the guard does not answer, goes to
	// net/http without a store call here.
	if e := s.cache.peek(id); e == nil || !s.fastMock(e) {
		return fastNo
	}
	if !s.fastBegin(c) {
		return fastNo
	}
	defer func() {
		if s.fastEnd(c) && res == fastNo {
			res = fastBroken // closed meanwhile: nothing more is read
		}
	}()
	counted := false
	defer func() {
		if v := recover(); v != nil {
			s.metrics.panics.Inc()
			s.log.Error("panic serving request", "method", http.MethodGet, "path", path, "panic", v, "stack", string(debug.Stack()))
			res = fastNo // net/http answers it
			if counted {
				res = fastBroken // not twice
			}
		}
	}()
	ctx := context.Background()
	e, err := s.cache.get(ctx, id)
	if err != nil || !s.fastMock(e) {
		return fastNo
	}
	// The query, as serveMock runs it: one that fails, or carries a token,
	// goes to net/http.
	var q *query.Query
	var key string
	if e.isArray() && hasQuery {
		key = string(rawQuery)
		cq := s.queries.get(key)
		if cq.err != nil || cq.params.AuthToken != "" {
			return fastNo
		}
		q = cq.q
	}
	a := prepare(e, q, key, "", "") // gzip and If-None-Match go to net/http
	quotaLimit := e.mock.EffectiveMonthlyQuota(s.cfg.DefaultMonthlyQuota)
	now := s.cfg.Now()
	used, served, err := s.cfg.Quota.ReserveQuota(ctx, id, decoy.Month(now), quotaLimit)
	if err != nil || !served {
		// Nothing was counted: net/http answers, with the refusal or
		// error serveMock makes of it.
		return fastNo
	}
	counted = true
	s.cfg.Usage.Served(id, now)

	status := a.status
	head := c.fastHead[:0]
	head = append(head, "HTTP/1.1 "...)
	head = strconv.AppendInt(head, int64(status), 10)
	head = append(head, ' ')
	if text := http.StatusText(status); text != "" {
		head = append(head, text...)
	} else {
		head = append(head, "status code "...)
		head = strconv.AppendInt(head, int64(status), 10)
	}
	head = append(head, "\r\n"...)
	// Sorted by name, as net/http writes them; Date last.
	if s.corsAny {
		head = append(head, "Access-Control-Allow-Origin: *\r\nAccess-Control-Expose-Headers: "+exposedHeaders+"\r\n"...)
	}
	if e.mock.Private {
		head = append(head, "Cache-Control: private, no-cache\r\n"...)
	} else {
		head = append(head, "Cache-Control: no-cache\r\n"...)
	}
	head = append(head, "Content-Length: "...)
	head = strconv.AppendInt(head, int64(a.size), 10)
	head = append(head, "\r\n"...)
	if e.doc == nil {
		head = append(head, "Content-Security-Policy: sandbox\r\n"...)
	}
	head = appendHeader(head, "Content-Type", e.contentType[0])
	if a.etag != "" {
		head = appendHeader(head, "ETag", a.etag)
	}
	if !s.corsAny {
		head = append(head, "Vary: Origin\r\n"...)
	}
	head = append(head, "Vary: Accept-Encoding\r\nX-Content-Type-Options: nosniff\r\n"...)
	if quotaLimit > 0 {
		head = append(head, "X-Quota-Limit: "...)
		head = strconv.AppendInt(head, quotaLimit, 10)
		head = append(head, "\r\nX-Quota-Remaining: "...)
		head = strconv.AppendInt(head, max(quotaLimit-used, 0), 10)
		head = append(head, "\r\n"...)
	}
	if a.total >= 0 {
		head = append(head, "X-Total-Count: "...)
		head = strconv.AppendInt(head, int64(a.total), 10)
		head = append(head, "\r\n"...)
	}
	head = append(head, "Date: "...)
	head = append(head, httpDate()...)
	head = append(head, "\r\n\r\n"...)
	c.fastHead = head

	s.fastAnswers.Add(1)
	n, err := c.writeAnswer(head, e, a)
	runtime.KeepAlive(e) // its mapped data, until written
	if c.peer == nil {
		c.peer = &http.Request{RemoteAddr: c.RemoteAddr().String(), Header: http.Header{}}
	}
	s.record(ctx, "mock", http.MethodGet, path, string(rawQuery), status, n, time.Since(start), c.peer)
	if err != nil {
		return fastBroken
	}
	return fastServed
}

// appendHeader appends a header line, its value cleaned as net/http cleans
// values it writes.
func appendHeader(b []byte, name, value string) []byte {
	if strings.ContainsAny(value, "\r\n") {
		value = strings.NewReplacer("\n", " ", "\r", " ").Replace(value)
	}
	b = append(b, name...)
	b = append(b, ": "...)
	b = append(b, textproto.TrimString(value)...)
	return append(b, "\r\n"...)
}

// fastMock reports whether the guard may answer plain reads of e: a public
// mock with no rate limit and no delay, whose status has a body.
func (s *Server) fastMock(e *entry) bool {
	m := e.mock
	return !m.Private && m.DelayMS == 0 && m.EffectiveRateLimit(s.cfg.DefaultRateLimit) == 0 &&
		m.Status != http.StatusNoContent && m.Status != http.StatusNotModified // net/http sends no body
}

// writeAnswer writes head and the body of a, as write and writeBody do
// behind net/http: a small body in one write with the head, a larger one
// with sendfile or writev. It returns the bytes of the body written.
func (c *guardConn) writeAnswer(head []byte, e *entry, a answer) (int64, error) {
	if c.writeTimeout > 0 {
		_ = c.Conn.SetWriteDeadline(time.Now().Add(c.writeTimeout))
	}
	raw := rawConn(c.Conn)
	if a.size < spansMinSize {
		h := len(head)
		if a.processed {
			buf := bytes.NewBuffer(head)
			writeArray(buf, e, a.records)
			head = buf.Bytes()
		} else {
			head = append(head, e.data...)
		}
		c.fastHead = head
		n, err := raw.Write(head)
		return int64(max(n-h, 0)), err
	}
	var body *spansBody
	switch {
	case a.built != nil:
		body = bytesBody(a.built.body, nil)
	case a.processed:
		body = recordsBody(e.doc, a.records)
	default:
		body = bytesBody(e.data, e.body.File())
	}
	defer body.release()
	return body.sendAfter(raw, head)
}

// httpDate is the current time as the Date header has it, formatted once a
// second.
func httpDate() string {
	now := time.Now()
	if d := cachedDate.Load(); d != nil && d.sec == now.Unix() {
		return d.text
	}
	d := &dateText{sec: now.Unix(), text: now.UTC().Format(http.TimeFormat)}
	cachedDate.Store(d)
	return d.text
}

type dateText struct {
	sec  int64
	text string
}

var cachedDate atomic.Pointer[dateText]
