package server

import (
	"context"
	"io"
	"net/http"
	"strconv"
	"sync"

	"github.com/decoy-mock/decoy/answer"
)

// Request bodies read whole (a write's, the one a route's rules look at)
// are held in memory until the request is answered: each at most
// --max-data-bytes, and all of them together at most bodyBudget, of which
// one client (its address, or the /64 of an IPv6 one) holds at most a
// quarter (at least three bodies' worth). A body the rules of a route
// read is counted twice while they hold it: they copy it into the
// request's document (rule.Eval), let go before the answer unless a rule's
// template reads the request (which copies it once more); a write counts
// the record it makes anew. Past either, a request whose body would pass
// it is answered 503 with Retry-After, its body left unread: without the
// bound, every connection (4,096 by default) could hold a body of
// --max-data-bytes at once, anonymously; without the share, one client
// with a few connections sending at the least pace allowed (body.go)
// could fill the budget.
//
// A body's bytes are counted as they are read, against the hold of its
// request (bodyHold), which gives them back once the request is answered
// (closeUnread). A body is read into one buffer grown by a quarter past
// 1 MiB, so that it holds, and is counted for, at most about a quarter
// more than it sent (exactly what it declared, when it declared its
// length).

// bodyBudget is the most bytes of request bodies held at once: four of
// the largest, at least 256 MiB.
func bodyBudget(maxData int64) int64 { return max(256<<20, 4*(maxData+1)) }

// errBodiesBusy answers a request whose body would pass bodyBudget or its
// client's share of it.
var errBodiesBusy = answer.New(http.StatusServiceUnavailable, "Too many request bodies held at once; try again", "Retry-After", "1")

// bodies counts the bytes of the bodies held at once, in all and by
// client.
type bodies struct {
	mu       sync.Mutex
	total    int64
	limit    int64            // of total
	share    int64            // of each client's
	byClient map[string]int64 // only clients holding some: as many as requests
}

// newBodies bounds bodies at limit, and each client at a quarter of it,
// at least three times maxBody+1 (one body of --max-data-bytes, read to
// its end, and the two copies of it a route's rules and a template rule
// make, or the record a write makes of it once the rules let theirs go),
// so that one upload of the largest size fits on an idle server. At the
// default --max-data-bytes, the share is three quarters of the bound.
func newBodies(limit, maxBody int64) *bodies {
	return &bodies{limit: limit, share: max(limit/4, 3*(maxBody+1)), byClient: map[string]int64{}}
}

// take counts n more bytes of client's, and reports whether they fit; when
// not, own reports whether the client's share was the reason (its own
// doing), rather than the bound of all.
func (b *bodies) take(client string, n int64) (ok, own bool) {
	if n <= 0 {
		return true, false // no entry made for nothing: release gives none back
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	held := b.byClient[client]
	if held+n > b.share {
		return false, true
	}
	if b.total+n > b.limit {
		return false, false
	}
	b.total += n
	b.byClient[client] = held + n
	return true, false
}

// clientShare is the most one client holds.
func (b *bodies) clientShare() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.share
}

func (b *bodies) give(client string, n int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.total -= n
	if held := b.byClient[client] - n; held > 0 {
		b.byClient[client] = held
	} else {
		delete(b.byClient, client)
	}
}

// bodyHold counts the bytes of bodies one request holds.
type bodyHold struct {
	b      *bodies
	client string
	n      int64
	own    bool // a take was refused for the client's share
	// never is set when a take was refused because the request alone
	// would pass the client's share: it would not fit on an idle server.
	never bool
}

type bodyHoldKey struct{}

// take counts n more bytes, and reports whether they fit.
func (h *bodyHold) take(n int64) bool {
	ok, own := h.b.take(h.client, n)
	if !ok {
		h.own = h.own || own
		h.never = h.never || own && h.n+n > h.b.clientShare()
		return false
	}
	h.n += n
	return true
}

// give gives back n of the bytes the request holds.
func (h *bodyHold) give(n int64) {
	if n = min(n, h.n); n > 0 {
		h.b.give(h.client, n)
		h.n -= n
	}
}

// release gives back what the request held.
func (h *bodyHold) release() {
	if h.n > 0 {
		h.b.give(h.client, h.n)
		h.n = 0
	}
}

// withBodyHold gives r, of client, a hold for its bodies against b (nil:
// none counted), and the function that releases it.
func withBodyHold(r *http.Request, b *bodies, client string) (*http.Request, func()) {
	if b == nil {
		return r, func() {}
	}
	h := &bodyHold{b: b, client: client}
	return r.WithContext(context.WithValue(r.Context(), bodyHoldKey{}, h)), h.release
}

// holdLess gives back n bytes counted for r's body (a copy of it that
// goes).
func holdLess(r *http.Request, n int64) {
	if hold, _ := r.Context().Value(bodyHoldKey{}).(*bodyHold); hold != nil {
		hold.give(n)
	}
}

// holdMore counts n more bytes held for r's body (a copy of it), and
// reports whether they fit.
func holdMore(r *http.Request, n int64) bool {
	hold, _ := r.Context().Value(bodyHoldKey{}).(*bodyHold)
	return hold == nil || hold.take(n)
}

// holdRefusal answers a write whose body, with the copies it needs (the
// rules', the record it makes), would pass what one client may hold at
// once even on an idle server: trying again would not help.
func holdRefusal(r *http.Request) error {
	hold, _ := r.Context().Value(bodyHoldKey{}).(*bodyHold)
	if hold == nil || !hold.never {
		return errBodiesBusy
	}
	return answer.New(http.StatusRequestEntityTooLarge, "The record this write makes, with its body, is more than one client may hold at once ("+strconv.FormatInt(hold.b.clientShare(), 10)+" bytes)")
}

// forLoad reports whether err refused r for the server's load, which gives
// back the request's rate-limit slot: a 503, but for errBodiesBusy when its
// client's own share of the bodies' bound was the reason.
func forLoad(r *http.Request, err error) bool {
	if !refused(err) {
		return false
	}
	hold, _ := r.Context().Value(bodyHoldKey{}).(*bodyHold)
	return err != errBodiesBusy || hold == nil || !hold.own
}

// readBody reads r's body whole, at most limit+1 bytes (the caller tells
// a body past limit by its length), counting what it holds against the
// request's hold: errBodiesBusy, with what was read, when that would
// pass bodyBudget or the client's share; a failed read's error, with what
// was read.
func readBody(r *http.Request, limit int64) ([]byte, error) {
	hold, _ := r.Context().Value(bodyHoldKey{}).(*bodyHold)
	want := limit + 1
	if r.ContentLength >= 0 {
		want = min(r.ContentLength+1, want) // +1: to see the end
	}
	// Grown as it comes, whatever the body says its length is: a client
	// that declares a large body and sends it slowly holds, and is
	// counted for, what it sent.
	var b []byte
	for {
		if len(b) == cap(b) {
			grow := min(bodyGrowth(int64(cap(b))), want-int64(cap(b)))
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

// bodyGrowth is how much a body's buffer of c bytes grows when full:
// doubling up to 1 MiB, a quarter past it (a body of n bytes is copied
// about 5n bytes' worth as it grows, and holds at most n/4 unused).
func bodyGrowth(c int64) int64 {
	if c < 1<<20 {
		return max(512, c)
	}
	return c / 4
}
