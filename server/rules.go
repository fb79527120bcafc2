package server

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"time"

	"github.com/decoy-mock/decoy"
	"github.com/decoy-mock/decoy/answer"
	"github.com/decoy-mock/decoy/generate"
	"github.com/decoy-mock/decoy/rule"
)

// This file is the rules' stage of a routed request (§13.1 of the
// contract): after the token, rate limit and quota checks, the first rule
// of the route whose when holds answers instead of the route's normal
// answer, the rate-limit, quota and CORS headers of any answer of the
// route with it. Package rule compiles the rules and asks them of the
// request; here the rules that hold are counted (times), and answered:
//
//   - with a body, sent as it is (application/json), or a template run
//     for the request in a turn of the server's generation, as a mock's
//     that generates on every read; the rule's status (default 200);
//   - with neither, the route's normal answer with the rule's status,
//     headers and delay (an empty rule, {}, is the normal answer itself:
//     the contract's [{"times":2,"status":503},{}] fails twice, then
//     answers normally), never a 304;
//   - with a fault: reset, empty or malformed (fault).
//
// A rule's answer counts as a served response against the monthly quota
// (HEAD aside), a fault's too: it is what the route answered. Its delay is
// its delay_ms, else the mock's. A route that writes (§12, not served yet)
// answers through its rules too: a rule's answer changes no data.

// matchRules asks the rules of rd's route about the request: the first
// that holds (-1: none), and the Eval, which keeps what it built of the
// request for the rules after it (re.ev). re.release gives it back once
// the request is answered. err is errBodiesBusy when the rules needed the
// body and the server holds too many at once.
func (s *Server) matchRules(r *http.Request, rd *readState) (re *ruleEval, first int, err error) {
	re = ruleEvals.Get().(*ruleEval)
	re.s, re.r = s, r
	re.req = rule.Request{Method: r.Method, Params: rd.t.params, RawQuery: r.URL.RawQuery, Host: r.Host, Header: r.Header, Body: re.body}
	re.ev.Reset(rd.t.rules, &re.req)
	first = re.ev.Next(0)
	return re, first, re.err
}

// ruleEval is the asking of a route's rules about one request, kept in a
// pool with its buffers: rules cost a request next to nothing until one
// holds.
type ruleEval struct {
	s    *Server
	r    *http.Request
	req  rule.Request
	ev   rule.Eval
	body func() []byte // re.readBody, bound once
	// err is why the body could not be read for the rules (errBodiesBusy).
	err error
	// held is the bytes of the rules' copy of the body counted against
	// the bodies' bound.
	held int64
}

var ruleEvals = sync.Pool{New: func() any {
	re := new(ruleEval)
	re.body = re.readBody
	return re
}}

func (re *ruleEval) readBody() []byte {
	b, err := re.s.ruleBody(re.r)
	if err == nil && b != nil {
		// The rules copy the body into the request's document: counted
		// as the body is.
		if holdMore(re.r, int64(len(b))) {
			re.held += int64(len(b))
		} else {
			err, b = errBodiesBusy, nil
			if kb, ok := re.r.Body.(*keptBody); ok {
				kb.busy = true
			}
		}
	}
	if err != nil {
		re.err = err
	}
	return b
}

// letGo drops what the rules built of the request (its document, a copy
// of the body), and gives back the bytes it was counted for: a write that
// goes on holds its record instead.
func (re *ruleEval) letGo() {
	if re.held > 0 {
		holdLess(re.r, re.held)
		re.held = 0
	}
	re.ev.Reset(nil, nil)
}

func (re *ruleEval) release() {
	re.letGo()
	re.s, re.r, re.req, re.err = nil, nil, rule.Request{}, nil
	ruleEvals.Put(re)
}

// ruleBody reads the body of a request for its route's rules, up to
// --max-data-bytes (more, or a failed read, is no body for them). What
// was read is put back in front of what was not, so that a later stage
// reads the body whole.
func (s *Server) ruleBody(r *http.Request) ([]byte, error) {
	if r.Body == nil || r.Body == http.NoBody {
		return nil, nil
	}
	if kb, ok := r.Body.(*keptBody); ok {
		if kb.busy {
			return nil, errBodiesBusy
		}
		return kb.whole, nil
	}
	limit := s.bodyLimit()
	if r.ContentLength > limit {
		return nil, nil // refused unread where the body is needed (writeBody)
	}
	b, err := readBody(r, limit)
	kb := &keptBody{Reader: io.MultiReader(bytes.NewReader(b), r.Body), Closer: r.Body}
	if err == nil && int64(len(b)) <= limit {
		kb.whole = b // read to its end: a later stage takes these bytes
	}
	kb.over = err == nil && int64(len(b)) > limit
	r.Body = kb
	if err == errBodiesBusy {
		kb.busy = true
		return nil, err
	}
	return kb.whole, nil
}

// bodyLimit is the most bytes of a request body read: --max-data-bytes.
func (s *Server) bodyLimit() int64 {
	if s.cfg.MaxDataBytes <= 0 {
		return 64 << 20
	}
	return s.cfg.MaxDataBytes
}

// keptBody is a body the rules read (ruleBody): read from Reader, what
// they read first, and closed by Closer. whole is the body when they
// read it to its end, which a later stage takes rather than a copy.
type keptBody struct {
	io.Reader
	io.Closer
	whole []byte
	// over is set when they read past --max-data-bytes: a later stage
	// refuses the body without reading it again.
	over bool
	// busy is set when the body, or the rules' copy of it, would have
	// passed the bodies' bound: a later stage that reads it for a rule
	// answers errBodiesBusy, not a request without a body.
	busy bool
}

// answerRules answers a request for which rule first holds: the quota
// (step 5: a rule's answer is a served one), then the first rule that
// holds and may answer (takeRule), or the normal answer when every rule
// that held was used up.
func (s *Server) answerRules(w http.ResponseWriter, r *http.Request, rd *readState, re *ruleEval, first int) error {
	ctx := r.Context()
	ev := &re.ev
	reserved, err := s.reserve(ctx, w.Header(), rd.t.e.Mock, rd.rate, rd.quotaLimit, rd.month, rd.now, r.Method != http.MethodHead)
	if err != nil {
		return err
	}
	c := s.takeRule(ctx, rd, ev, first)
	if c == nil || c.Rule.Template == nil {
		// Only a template reads the request again: the rules' copy goes
		// before the normal answer, or the record a write would make.
		re.letGo()
	}
	if c == nil && rd.t.write != "" {
		// Every rule that held is used up: the write is made, counted
		// by its own step (it was answered 501 as a read of the route).
		s.release(ctx, reserved)
		return s.writeRecords(w, r, rd)
	}
	if c == nil {
		return s.readNormally(w, r, rd, &reserved, nil)
	}
	noteRule(w, c.Label())
	if r.Header.Get(RuleHeader) != "" {
		w.Header()[RuleHeader] = one(url.PathEscape(c.Label()))
	}
	return s.answerRule(w, r, rd, ev, c, reserved)
}

// RuleHeader, sent with a request (any value), asks its answer to say in
// the same header which rule of the route answered: its label (name, else
// place from 1), percent-encoded as a path segment is. An answer without
// it is the route's normal one. Answers are as the rules make them unless
// asked (the Studio's "try a request" panel asks).
const RuleHeader = "Decoy-Rule"

// ruleTimeout bounds each call of the rule counter: a stalled database or
// Redis must not hold an answer.
const ruleTimeout = 2 * time.Second

// takeRule returns the first rule from first on that holds and may
// answer: one without times, or one whose count could be taken (below its
// times). nil: each rule that holds is used up. A count that cannot be
// taken (the counter unreachable) skips the rule: a rule never holds more
// than its times.
func (s *Server) takeRule(ctx context.Context, rd *readState, ev *rule.Eval, first int) *rule.Compiled {
	for i := first; i >= 0; i = ev.Next(i + 1) {
		c := rd.t.rules.Rule(i)
		if c.Rule.Times == nil {
			return c
		}
		if s.cfg.RuleCounter == nil {
			continue
		}
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ruleTimeout)
		ok, err := s.cfg.RuleCounter.TakeRule(cctx, rd.t.routeID, i, *c.Rule.Times)
		cancel()
		if err != nil {
			s.SharedFailed("rules", err)
			continue
		}
		if ok {
			return c
		}
	}
	return nil
}

// answerRule answers with rule c.
func (s *Server) answerRule(w http.ResponseWriter, r *http.Request, rd *readState, ev *rule.Eval, c *rule.Compiled, reserved reservation) error {
	ru, e, ctx := c.Rule, rd.t.e, r.Context()
	delay := time.Duration(ruleDelay(ru, e.Mock)) * time.Millisecond
	switch {
	case ru.Fault == decoy.FaultReset || ru.Fault == decoy.FaultEmpty:
		if delay > 0 {
			s.wait(ctx, delay, reserved)
		}
		s.cfg.Usage.Served(e.Mock.ID, rd.now)
		s.fault(w, r, ru.Fault, 0, nil)
		return nil
	case ru.Body == nil && ru.Template == nil && ru.Fault == "" && rd.t.write == "":
		return s.readNormally(w, r, rd, &reserved, c)
	}
	var body []byte
	var err error
	switch {
	case ru.Body != nil:
		body = ru.Body
	case ru.Template != nil:
		body, err = s.runRuleTemplate(w, r, ev, c)
	default: // the normal body (a write's as it would answer), cut when malformed
		body, err = s.normalBody(w, r, rd)
	}
	if err != nil {
		s.release(ctx, reserved)
		if forLoad(r, err) {
			s.undoRate(ctx, e.Mock.ID, rd.rate)
		}
		return err
	}
	status := http.StatusOK
	if ru.Status != nil {
		status = *ru.Status
	}
	h := w.Header()
	h["Date"] = s.dates.now()
	if e.Mock.Private {
		h["Cache-Control"] = valPrivateNoCache
	} else {
		h["Cache-Control"] = valNoCache
	}
	h["Content-Type"] = valJSON
	setRuleHeaders(h, ru.Headers)
	if delay > 0 {
		s.wait(ctx, delay, reserved)
	}
	s.cfg.Usage.Served(e.Mock.ID, rd.now)
	if ru.Fault == decoy.FaultMalformed {
		s.fault(w, r, ru.Fault, status, body)
		return nil
	}
	h["Content-Length"] = one(strconv.Itoa(len(body)))
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		_, _ = w.Write(body)
	}
	return nil
}

var valJSON = []string{"application/json"}

// ruleDelay is the delay of a rule's answer, in milliseconds: its own,
// else its mock's.
func ruleDelay(ru *decoy.Rule, m *decoy.Mock) int {
	if ru.DelayMS > 0 {
		return ru.DelayMS
	}
	return m.DelayMS
}

// setRuleHeaders sets a rule's headers on an answer (checked when the
// rule was: no hop-by-hop header, no Content-Length).
func setRuleHeaders(h http.Header, headers map[string]string) {
	for name, v := range headers {
		h.Set(name, v)
	}
}

// runRuleTemplate runs rule c's template for the request, from the seed
// the request asks for (Decoy-Seed, as a mock's template that runs on
// every read), in a turn of the server's generation; the template is
// compiled in its first turn and kept with the route's rules. The
// request's document is made before the turn, so that the turn is not
// held while the body is read.
func (s *Server) runRuleTemplate(w http.ResponseWriter, r *http.Request, ev *rule.Eval, c *rule.Compiled) ([]byte, error) {
	seed, err := generate.ParseSeed(r.Header.Get(generate.SeedHeader))
	if err != nil {
		return nil, err
	}
	w.Header()[generate.SeedHeader] = one(strconv.FormatUint(seed, 10))
	body := ev.Body()
	if kb, ok := r.Body.(*keptBody); ok && kb.busy {
		return nil, errBodiesBusy // the rules could not read it
	}
	if ev.Built() && !holdMore(r, int64(len(body))) {
		// The whole request's document copies the body once more:
		// counted as the body is.
		return nil, errBodiesBusy
	}
	ev.Prepare()
	var out []byte
	err = s.generating(r.Context(), 0, func(lim generate.Limits) error {
		t, err := c.Template(lim)
		if err != nil {
			return err
		}
		out, err = t.RunRequest(seed, lim, ev)
		return err
	})
	return out, err
}

// normalBody is the body of the route's normal answer, as it would be sent
// without gzip (a fault of malformed sends part of it): the data the
// route answers, or the JSON of the error it answers instead.
func (s *Server) normalBody(w http.ResponseWriter, r *http.Request, rd *readState) ([]byte, error) {
	if rd.t.write != "" {
		return s.plannedBody(r, rd)
	}
	plain := r.Clone(r.Context())
	plain.Header.Del("Accept-Encoding")
	na, err := s.normalAnswer(w, plain, rd, true)
	if err != nil {
		return nil, err
	}
	defer na.done()
	if na.err != nil {
		_, msg, _ := answer.Of(na.err)
		return decoy.ErrorJSON(msg), nil
	}
	var b bytes.Buffer
	na.a.WriteBody(&b)
	return b.Bytes(), nil
}

// plannedBody is the normal body of a route that writes, for a rule that
// answers with it (§13.1): the record the write would answer, planned
// over the live data and stored nowhere (a write rule's answer changes no
// data); nothing for a delete; the error the write would answer, as JSON,
// when it would fail.
func (s *Server) plannedBody(r *http.Request, rd *readState) ([]byte, error) {
	t := &rd.t
	fail := func(err error) []byte {
		_, msg, _ := answer.Of(err)
		return decoy.ErrorJSON(msg)
	}
	if s.live == nil {
		return fail(errWriteNotServed(t.write)), nil
	}
	ws, err := s.newWriteState(r, t)
	switch {
	case err == errBodiesBusy || err != nil && tooSlow(r) != nil:
		return nil, err // the server's load or the client's pace: not the write's answer
	case err != nil:
		return fail(err), nil
	}
	p, err := planWrite(t.e, t, &ws)
	if err != nil {
		return fail(err), nil
	}
	if n := recordCopy(p, &ws); n > 0 && !holdMore(r, n) {
		// The record made anew is counted as the write's own is
		// (commitWrite).
		if err := holdRefusal(r); err != errBodiesBusy {
			return fail(err), nil
		}
		return nil, errBodiesBusy
	}
	return p.record, nil
}

// faultStatus is the status a fault is logged and counted with (nginx's
// for a connection closed without an answer): no answer was written, or
// none whole.
const faultStatus = 444

// fault answers with a fault (§13.1):
//   - reset: the connection is reset, nothing answered (a TCP RST: the
//     connection taken from net/http, its linger set to 0, closed);
//   - empty: the connection is closed with no answer;
//   - malformed: a head announcing body (its Content-Length) is written,
//     then half of body, and the connection is closed.
//
// net/http has parsed the request; the connection is taken from it
// (http.ResponseController's Hijack, through the server's wrappers,
// which unwrap), so the bytes written are the only ones sent. Over
// HTTP/2 a connection is shared by requests and cannot be taken: each
// fault resets the request's stream instead (RST_STREAM, by
// http.ErrAbortHandler), the nearest there is. The request is logged and
// counted with status 444.
func (s *Server) fault(w http.ResponseWriter, r *http.Request, kind string, status int, body []byte) {
	setStatus(w, faultStatus)
	if r.ProtoMajor != 1 {
		panic(http.ErrAbortHandler)
	}
	conn, brw, err := http.NewResponseController(w).Hijack()
	if err != nil {
		panic(http.ErrAbortHandler) // closes the connection, whatever it is
	}
	switch kind {
	case decoy.FaultReset:
		if tc := tcpConn(conn); tc != nil {
			_ = tc.SetLinger(0)
			_ = tc.Close() // under any TLS: no close_notify, a reset
		}
		_ = conn.Close()
	case decoy.FaultEmpty:
		_ = conn.Close()
	case decoy.FaultMalformed:
		h := w.Header().Clone()
		h["Content-Length"] = one(strconv.Itoa(len(body)))
		_ = conn.SetWriteDeadline(time.Now().Add(10 * time.Second))
		bw := brw.Writer
		bw.Reset(conn)
		writeHead(bw, status, h)
		if r.Method != http.MethodHead {
			_, _ = bw.Write(body[:len(body)/2])
		}
		_ = bw.Flush()
		_ = conn.Close()
	}
}

// writeHead writes an HTTP/1.1 answer's head.
func writeHead(bw *bufio.Writer, status int, h http.Header) {
	bw.WriteString("HTTP/1.1 " + strconv.Itoa(status) + " " + http.StatusText(status) + "\r\n")
	_ = h.Write(bw)
	bw.WriteString("\r\n")
}

// tcpConn returns the TCP connection under c (under TLS and the server's
// own wrappers, which give it by NetConn), or nil.
func tcpConn(c net.Conn) *net.TCPConn {
	for c != nil {
		if tc, ok := c.(*net.TCPConn); ok {
			return tc
		}
		u, ok := c.(interface{ NetConn() net.Conn })
		if !ok {
			return nil
		}
		c = u.NetConn()
	}
	return nil
}

// recorderOf returns the recorder of the request w answers (observe's),
// under the wrappers between it and the handler; nil when not observed.
func recorderOf(w http.ResponseWriter) *recorder {
	for {
		switch x := w.(type) {
		case *recorder:
			return x
		case interface{ Unwrap() http.ResponseWriter }:
			w = x.Unwrap()
		default:
			return nil
		}
	}
}

// noteRule notes on the request's recorder the rule that answered (its
// label: name, else place from 1), for the access log (and the request
// journal, §13.2, which records it as its entry's rule).
func noteRule(w http.ResponseWriter, label string) {
	noteOf(w).rule = label
}

// setStatus sets the status the request is logged and counted with, when
// no answer will be written to say it (a fault).
func setStatus(w http.ResponseWriter, status int) {
	if rec := recorderOf(w); rec != nil {
		rec.status = status
	}
}
