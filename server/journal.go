package server

import (
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/decoy-mock/decoy"
	"github.com/decoy-mock/decoy/journal"
	"github.com/decoy-mock/decoy/query"
	"github.com/prometheus/client_golang/prometheus"
)

// This file records requests in the request journal (§13.2). The read
// path notes on the request's recorder what the request reached (noteOf):
// the project, the route, the mock. Once the answer is written, observe
// hands the recorder to the journal (logRequest), whose writer makes the
// entry off the answer's path (journalRequest.Entry): a request costs the
// journal a queue slot and no allocation. A request that reached no
// project (an unknown slug or mock id) is not recorded.

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

// journalRequest is an answered request as the journal gets it; it is the
// recorder's, so that recording allocates nothing.
type journalRequest struct {
	note    journalNote
	s       *Server
	r       *http.Request
	at      time.Time
	elapsed time.Duration
	status  int
	// body keeps what the handler read of the request's body (nil: it
	// had none, or its section reads none).
	body *bodyCopy
}

// recordJournal hands an answered request to the journal, when it reached
// a project.
func (s *Server) recordJournal(rec *recorder, r *http.Request, elapsed time.Duration) {
	q := &rec.journal
	if q.note.project == "" || s.cfg.Journal == nil {
		return
	}
	q.s, q.r, q.status, q.elapsed = s, r, rec.status, elapsed
	q.at = s.cfg.Now().Add(-elapsed)
	s.cfg.Journal.RecordRequest(q.note.project, q)
}

// Entry makes the journal's entry of the request, with its secrets
// REDACTED and its body cut at decoy.MaxJournalBody. The journal's writer
// calls it, after the answer: the request is no longer changed.
func (q *journalRequest) Entry() *decoy.JournalEntry {
	r := q.r
	e := &decoy.JournalEntry{
		At:         q.at.UTC(),
		Method:     r.Method,
		Path:       r.URL.EscapedPath(),
		Query:      query.Redact(r.URL.RawQuery),
		Headers:    q.s.journalHeaders(r),
		RouteID:    q.note.route,
		MockID:     q.note.mock,
		Rule:       q.note.rule,
		Status:     q.status,
		DurationMS: float64(q.elapsed.Microseconds()) / 1000,
		Client:     q.s.clientAddr(r),
		Forwarded:  q.note.forwarded,
	}
	if b := q.body; b != nil {
		e.Body = string(b.kept)
		e.BodyCut = b.n > int64(len(b.kept)) || !b.whole(r)
	} else {
		e.BodyCut = hasBody(r) // not read: not kept
	}
	return e
}

// journalHeaders are the request's headers as the journal keeps them:
// each name once, its values joined, the Host among them, and the values
// of the headers that carry secrets REDACTED.
func (s *Server) journalHeaders(r *http.Request) map[string]string {
	h := make(map[string]string, len(r.Header)+1)
	if r.Host != "" {
		h["Host"] = r.Host
	}
	for name, values := range r.Header {
		switch {
		case s.secretHeader(name):
			h[name] = "REDACTED"
		case len(values) == 1:
			h[name] = values[0]
		default:
			h[name] = strings.Join(values, ", ")
		}
	}
	return h
}

// secretHeaders carry credentials, besides the mock token headers.
var secretHeaders = []string{"Authorization", "Proxy-Authorization", "Cookie", "Set-Cookie"}

// secretHeader reports whether a request header carries a secret: a mock
// token header (--token-header's too), credentials or cookies.
func (s *Server) secretHeader(name string) bool {
	for _, n := range s.tokenHeaders {
		if strings.EqualFold(name, n) {
			return true
		}
	}
	for _, n := range secretHeaders {
		if strings.EqualFold(name, n) {
			return true
		}
	}
	return false
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
