package server

import (
	"context"
	"io"
	"net/http"

	"github.com/decoy-mock/decoy/answer"
	"golang.org/x/sync/semaphore"
)

// Request bodies read whole (a write's, the one a route's rules look at)
// are held in memory until the request is answered: each at most
// --max-data-bytes, and all of them together at most bodyBudget. Past it,
// a request whose body would pass it is answered 503 with Retry-After, its
// body left unread: without the bound, every connection (4,096 by
// default) could hold a body of --max-data-bytes at once, anonymously.
//
// A body's bytes are counted as they are read, against the hold of its
// request (bodyHold), which gives them back once the request is answered
// (closeUnread).

// bodyBudget is the most bytes of request bodies held at once: four of
// the largest, at least 256 MiB.
func bodyBudget(maxData int64) int64 { return max(256<<20, 4*maxData) }

// errBodiesBusy answers a request whose body would pass bodyBudget.
var errBodiesBusy = answer.New(http.StatusServiceUnavailable, "Too many request bodies held at once; try again", "Retry-After", "1")

// bodyHold counts the bytes of bodies one request holds, against sem.
type bodyHold struct {
	sem *semaphore.Weighted
	n   int64
}

type bodyHoldKey struct{}

// take counts n more bytes, and reports whether they fit.
func (h *bodyHold) take(n int64) bool {
	if !h.sem.TryAcquire(n) {
		return false
	}
	h.n += n
	return true
}

// release gives back what the request held.
func (h *bodyHold) release() {
	if h.n > 0 {
		h.sem.Release(h.n)
		h.n = 0
	}
}

// withBodyHold gives r a hold for its bodies against sem (nil: none
// counted), and the function that releases it.
func withBodyHold(r *http.Request, sem *semaphore.Weighted) (*http.Request, func()) {
	if sem == nil {
		return r, func() {}
	}
	h := &bodyHold{sem: sem}
	return r.WithContext(context.WithValue(r.Context(), bodyHoldKey{}, h)), h.release
}

// readBody reads r's body whole, at most limit+1 bytes (the caller tells
// a body past limit by its length), counting what it holds against the
// request's hold: errBodiesBusy, with what was read, when that would
// pass bodyBudget; a failed read's error, with what was read.
func readBody(r *http.Request, limit int64) ([]byte, error) {
	hold, _ := r.Context().Value(bodyHoldKey{}).(*bodyHold)
	want := limit + 1
	if r.ContentLength >= 0 {
		want = min(r.ContentLength+1, want) // +1: to see the end
	}
	// Grown as it comes, doubling, whatever the body says its length is:
	// a client that declares a large body and sends it slowly holds, and
	// is counted for, what it sent.
	var b []byte
	for {
		if len(b) == cap(b) {
			grow := min(max(512, int64(cap(b))), want-int64(cap(b)))
			if grow <= 0 {
				return b, nil // limit+1 read: the caller refuses it
			}
			if hold != nil && !hold.take(grow) {
				return b, errBodiesBusy
			}
			nb := make([]byte, len(b), int64(cap(b))+grow)
			copy(nb, b)
			b = nb
		}
		n, err := r.Body.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return b, err
		}
	}
}
