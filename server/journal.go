package server

import (
	"io"
	"net/http"
	"time"

	"github.com/decoy-mock/decoy"
	"github.com/decoy-mock/decoy/journal"
	"github.com/decoy-mock/decoy/query"
	"github.com/prometheus/client_golang/prometheus"
)

// This file records requests in the request journal (§13.2). The read
// path notes on the request's recorder what the request reached (noteOf):
// the project, the route, the mock. Once the answer is written, observe
// writes the request's record (decoy.JournalRecord) straight from the
// request into a buffer the journal reuses, with neither an entry nor a
// map of its headers, and queues it (recordJournal): the journal holds bytes, not
// the request nor its response writer, and a request costs it no
// allocation. A request that reached no project (an unknown slug or mock
// id) is not recorded.

// journalNote is what a request reached, for the journal.
type journalNote struct {
	project, route, mock string
	// rule names the rule that answered (§13.1), for the rules' stage to
	// set; "" when none did.
	rule string
	// forwarded is set for a request passed to the project's upstream
	// (§14).
	forwarded bool
}

// noteOf returns the note of the request w answers, which the read path
// fills in as it finds what the request reached.
func noteOf(w http.ResponseWriter) *journalNote {
	if rec := recorderOf(w); rec != nil {
		return &rec.journal.note
	}
	return new(journalNote) // not observed: not recorded
}

// journalRequest is what the journal records of a request besides the
// request itself: the recorder's.
type journalRequest struct {
	note journalNote
	// body keeps what the handler read of the request's body (nil: it
	// had none, or its section reads none).
	body *bodyCopy
	// path and client are the request's escaped path and its client's
	// address, made once (text) for the access log and the journal.
	path, client string
	texted       bool
}

// text returns r's escaped path and its client's address, made at the
// first call.
func (q *journalRequest) text(s *Server, r *http.Request) (path, client string) {
	if !q.texted {
		q.path, q.client, q.texted = r.URL.EscapedPath(), s.clientAddr(r), true
	}
	return q.path, q.client
}

// recordJournal queues the record of an answered request, when it
// reached a project.
func (s *Server) recordJournal(rec *recorder, r *http.Request, elapsed time.Duration) {
	q := &rec.journal
	if q.note.project == "" || s.cfg.Journal == nil {
		return
	}
	b := s.cfg.Journal.NewBuffer()
	b.B = s.appendJournalRecord(b.B, q, r, rec.status, s.cfg.Now().Add(-elapsed), elapsed)
	s.cfg.Journal.Queue(q.note.project, b)
}

// appendJournalRecord appends the journal's record of an answered request
// to b, with its secrets REDACTED and its body cut at
// decoy.MaxJournalBody: the entry of each header name once, its values
// joined, the Host among them, and the values of the headers that carry
// secrets REDACTED.
func (s *Server) appendJournalRecord(b []byte, q *journalRequest, r *http.Request, status int, at time.Time, elapsed time.Duration) []byte {
	path, client := q.text(s, r)
	e := decoy.JournalRecord{
		At:         at.UTC(),
		Method:     r.Method,
		Path:       path,
		Query:      query.Redact(r.URL.RawQuery),
		RouteID:    q.note.route,
		MockID:     q.note.mock,
		Rule:       q.note.rule,
		Status:     status,
		DurationMS: float64(elapsed.Microseconds()) / 1000,
		Client:     client,
		Forwarded:  q.note.forwarded,
	}
	var body []byte
	if c := q.body; c != nil {
		body = c.kept
		e.BodyCut = c.n > int64(len(c.kept)) || !c.whole(r)
	} else {
		e.BodyCut = hasBody(r) // not read: not kept
	}
	headers := len(r.Header)
	if r.Host != "" {
		headers++
	}
	b = e.Append(b, body, headers)
	if r.Host != "" {
		b = decoy.AppendJournalHeader(b, "Host", r.Host)
	}
	for name, values := range r.Header {
		switch {
		case s.secretHeader(name):
			b = decoy.AppendJournalHeaderValue(b, name, "REDACTED")
		case len(values) == 1:
			b = decoy.AppendJournalHeaderValue(b, name, values[0])
		default:
			b = decoy.AppendJournalHeader(b, name, values...)
		}
	}
	return b
}

// secretHeaders carry credentials, besides the mock token headers.
var secretHeaders = []string{"Authorization", "Proxy-Authorization", "Cookie", "Set-Cookie"}

// secretHeader reports whether a request header carries a secret: a mock
// token header (--token-header's too), credentials or cookies, in any
// letter case. Most headers are known to be none by their bit of
// secretFilter; the others are compared with each secret name, lengths
// first, then ASCII letters, as a header's name is ASCII (net/http refuses
// others).
func (s *Server) secretHeader(name string) bool {
	w, bit := secretBit(name)
	return s.secretFilter[w]&bit != 0 && s.secretName(name)
}

// secretName reports whether name is one of secretHeaders, in any letter
// case. Not inlined, so that secretHeader is: most names never get here.
//
//go:noinline
func (s *Server) secretName(name string) bool {
	for _, n := range s.secretHeaders {
		if len(n) == len(name) && equalFoldASCII(n, name) {
			return true
		}
	}
	return false
}

// secretBit is the bit of secretFilter that stands for name (its word and
// its bit in the word): the word of its length (modulo 64), and the bit
// of its first and last bytes, xored, their low five bits (those of an
// ASCII letter in either case), so that names equal in any letter case
// have the same bit. Of the headers a browser sends that are no secret,
// few have a secret name's (TestSecretFilter); made in a few
// instructions, so that secretHeader is inlined.
func secretBit(name string) (word int, bit uint32) {
	if name == "" {
		return 0, 1
	}
	return len(name) & 63, 1 << ((name[0] ^ name[len(name)-1]) & 31)
}

// equalFoldASCII reports whether a and b, of one length, are equal but
// for the case of ASCII letters.
func equalFoldASCII(a, b string) bool {
	for i := range len(a) {
		c, d := a[i], b[i]
		if c == d {
			continue
		}
		if c|0x20 != d|0x20 || c|0x20 < 'a' || c|0x20 > 'z' {
			return false
		}
	}
	return true
}

// hasBody reports whether a request comes with a body.
func hasBody(r *http.Request) bool { return r.ContentLength != 0 || len(r.TransferEncoding) > 0 }

// copyBody has what the handler reads of r's body kept, up to
// decoy.MaxJournalBody, for the journal, when the request may be recorded
// with one: a project's (the read endpoint reads no body). It returns
// what puts the body back.
func (s *Server) copyBody(rec *recorder, r *http.Request) (restore func()) {
	if s.cfg.Journal == nil || !hasBody(r) || s.sectionOf(r) != "project" {
		return func() {}
	}
	b := &bodyCopy{ReadCloser: r.Body}
	rec.journal.body = b
	r.Body = b
	return func() { r.Body = b.ReadCloser }
}

// bodyCopy is a request body whose first bytes are kept as it is read.
type bodyCopy struct {
	io.ReadCloser
	kept []byte
	n    int64 // bytes read
	eof  bool
}

func (b *bodyCopy) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if room := decoy.MaxJournalBody - len(b.kept); room > 0 && n > 0 {
		b.kept = append(b.kept, p[:min(n, room)]...)
	}
	b.n += int64(n)
	if err == io.EOF {
		b.eof = true
	}
	return n, err
}

// whole reports whether the body was read to its end.
func (b *bodyCopy) whole(r *http.Request) bool {
	return b.eof || r.ContentLength >= 0 && b.n >= r.ContentLength
}

// registerJournalMetrics exports the entries the journal dropped.
func registerJournalMetrics(reg *prometheus.Registry, j *journal.Journal) {
	if j == nil {
		return
	}
	for _, reason := range []string{"queue", "store"} {
		reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name:        "decoy_journal_dropped_total",
			Help:        "Request journal entries dropped, by reason: queue (the entries waiting to be written were at their bound), store (the journal's store, Redis, failed or hung).",
			ConstLabels: prometheus.Labels{"reason": reason},
		}, func() float64 {
			q, st := j.Dropped()
			if reason == "queue" {
				return float64(q)
			}
			return float64(st)
		}))
	}
}
