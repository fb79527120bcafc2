package admin

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/decoy-mock/decoy"
	"github.com/decoy-mock/decoy/answer"
	"github.com/decoy-mock/decoy/journal"
)

// The request journal (§13.2 of the contract): GET
// /projects/{project}/requests, its count and its live feed (Server-Sent
// Events); DELETE /projects/{project}/requests clears it. Viewers see,
// editors clear (access.go).

// Bounds of the live feeds: each holds a connection and a follower of the
// journal for as long as it is open.
const (
	maxStreams          = 256
	maxStreamsPerClient = 4
	// streamWriteTimeout bounds each write of a feed: a client that stops
	// reading is cut.
	streamWriteTimeout = 30 * time.Second
)

type requestList struct {
	Requests   []*decoy.JournalEntry `json:"requests"`
	NextCursor *string               `json:"next_cursor"`
}

type requestCount struct {
	Count int64 `json:"count"`
}

// journal returns the request journal, or a 501 without one.
func (s *API) journal() (*journal.Journal, error) {
	if s.cfg.Journal == nil {
		return nil, answer.New(http.StatusNotImplemented, "This server keeps no request journal (--journal-size 0)")
	}
	return s.cfg.Journal, nil
}

// filtered returns the request journal and the filters a request to it
// asks for (journalFilter).
func (s *API) filtered(r *http.Request) (*journal.Journal, decoy.JournalFilter, error) {
	j, err := s.journal()
	if err != nil {
		return nil, decoy.JournalFilter{}, err
	}
	f, err := journalFilter(r)
	return j, f, err
}

// journalFilter reads the filters of a request to the journal: method,
// path (exact, or a prefix ending in '*'), status and since.
func journalFilter(r *http.Request) (decoy.JournalFilter, error) {
	q := r.URL.Query()
	f := decoy.JournalFilter{Method: strings.ToUpper(q.Get("method")), Path: q.Get("path")}
	if v := q.Get("status"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 100 || n > 599 {
			return f, decoy.Errorf(decoy.EINVALID, "status must be an HTTP status code, from 100 to 599")
		}
		f.Status = n
	}
	if v := q.Get("since"); v != "" {
		t, err := time.Parse(time.RFC3339Nano, v)
		if err != nil {
			return f, decoy.Errorf(decoy.EINVALID, "since must be a time such as 2026-01-02T15:04:05Z (RFC 3339)")
		}
		f.Since = t
	}
	return f, nil
}

// listRequests is GET /projects/{project}/requests.
func (s *API) listRequests(w http.ResponseWriter, r *http.Request, projectID string) error {
	j, f, err := s.filtered(r)
	if err != nil {
		return err
	}
	limit, err := pageLimit(r)
	if err != nil {
		return err
	}
	entries, next, err := j.List(r.Context(), projectID, f, r.URL.Query().Get("cursor"), limit)
	if err != nil {
		return err
	}
	if entries == nil {
		entries = []*decoy.JournalEntry{}
	}
	answer.JSON(w, http.StatusOK, requestList{Requests: entries, NextCursor: cursorOf(next)})
	return nil
}

// countRequests is GET /projects/{project}/requests/count.
func (s *API) countRequests(w http.ResponseWriter, r *http.Request, projectID string) error {
	j, f, err := s.filtered(r)
	if err != nil {
		return err
	}
	n, err := j.Count(r.Context(), projectID, f)
	if err != nil {
		return err
	}
	answer.JSON(w, http.StatusOK, requestCount{Count: n})
	return nil
}

// clearRequests is DELETE /projects/{project}/requests.
func (s *API) clearRequests(w http.ResponseWriter, r *http.Request, projectID string) error {
	j, err := s.journal()
	if err != nil {
		return err
	}
	ctx, cancel := writeContext(r)
	defer cancel()
	if err := j.Clear(ctx, projectID); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// streamRequests is GET /projects/{project}/requests/stream: the
// project's new entries as they are recorded, as Server-Sent Events (an
// event "request" each, its id the entry's, its data the entry), those
// after Last-Event-ID when the client sends it. A comment keeps a silent
// feed alive. The feed ends when the client goes away or the server
// stops.
func (s *API) streamRequests(w http.ResponseWriter, r *http.Request, projectID string) error {
	j, f, err := s.filtered(r)
	if err != nil {
		return err
	}
	after := r.Header.Get("Last-Event-ID")
	if _, _, ok := decoy.ParseJournalID(after); after != "" && !ok {
		return decoy.Errorf(decoy.EINVALID, "Invalid Last-Event-ID: want the id of an entry")
	}
	ctx, end, err := s.streams.open(r.Context(), s.cfg.Clients.Addr(r))
	if err != nil {
		return err
	}
	defer end()
	if after == "" {
		// Where the feed starts is settled before its head is sent: a
		// client that has the head sees every request recorded after.
		if after, err = j.Newest(ctx, projectID); err != nil {
			return err
		}
	}

	rc := http.NewResponseController(w)
	// The request is in: the feed is not bound by the time a request
	// gets to be read, nor by the time an answer gets to be written, but
	// each write is (write).
	_ = rc.SetReadDeadline(time.Time{})
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("X-Accel-Buffering", "no") // for proxies that buffer answers
	w.WriteHeader(http.StatusOK)
	write := func(b []byte) error {
		_ = rc.SetWriteDeadline(time.Now().Add(streamWriteTimeout))
		if _, err := w.Write(b); err != nil {
			return err
		}
		return rc.Flush()
	}
	if write([]byte(": the request journal of project "+projectID+"\n\n")) != nil {
		return nil
	}
	var b []byte
	// Whatever ends the feed, the answer is under way: nothing more to say.
	_ = j.Follow(ctx, projectID, after, f, func(entries []*decoy.JournalEntry) error {
		b = b[:0]
		if entries == nil {
			b = append(b, ": keep-alive\n\n"...)
		}
		for _, e := range entries {
			b = append(b, "id: "+e.ID+"\nevent: request\ndata: "...)
			b = e.AppendJSON(b) // one line
			b = append(b, "\n\n"...)
		}
		return write(b)
	})
	return nil
}

// streams counts the live feeds open, in all and per client address, and
// ends them when the server stops.
type streams struct {
	mu       sync.Mutex
	n        int
	byClient map[string]int
	stopped  context.Context
	stop     context.CancelFunc
}

func newStreams() *streams {
	ctx, cancel := context.WithCancel(context.Background())
	return &streams{byClient: map[string]int{}, stopped: ctx, stop: cancel}
}

var errTooManyStreams = answer.New(http.StatusTooManyRequests, "Too many live feeds of the request journal open; close one", "Retry-After", "5")

// open counts a feed of client, within the bounds, and returns its
// context (which ends with ctx or when the server stops) and what ends it.
func (s *streams) open(ctx context.Context, client string) (context.Context, func(), error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.stopped.Err() != nil:
		return nil, nil, answer.New(http.StatusServiceUnavailable, "The server is stopping", "Retry-After", "1")
	case s.n >= maxStreams, s.byClient[client] >= maxStreamsPerClient:
		return nil, nil, errTooManyStreams
	}
	s.n++
	s.byClient[client]++
	ctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(s.stopped, cancel)
	return ctx, func() {
		stop()
		cancel()
		s.mu.Lock()
		defer s.mu.Unlock()
		s.n--
		if s.byClient[client]--; s.byClient[client] == 0 {
			delete(s.byClient, client)
		}
	}, nil
}

// EndStreams ends the live feeds of the request journal, and refuses new
// ones: the server calls it as it starts to stop, so that they do not
// hold its shutdown.
func (s *API) EndStreams() { s.streams.stop() }
