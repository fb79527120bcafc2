//go:build linux

package main

import (
	"bufio"
	"context"
	"errors"
	"io"
	"math/bits"
	"net"
	"net/http"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// load is one measurement: conns connections, each sending requests over
// keep-alive HTTP/1.1, one request at a time, for warmup then duration.
type load struct {
	addr    string   // host:port
	targets []string // paths and queries, asked in turn with GET
	// requests, when set, are asked in turn instead of targets: each with
	// its own method and body (the writes phase).
	requests []request
	header   string // more request header lines, each ending in \r\n
	conns    int
	warmup   time.Duration
	duration time.Duration
	timeout  time.Duration // per request
	// onOpen and onClose, if set, run as the measured window opens and
	// closes (before the connections are closed), on run's goroutine: the
	// server's CPU time is read there, so that it covers the window alone.
	onOpen, onClose func()
}

// loadResult counts the answers that ended inside the measured window, and
// the answer bytes read inside it.
//
// The window is warmup after the start, for duration; if by then fewer
// answers than connections have ended (a server slower than the window), it
// is stretched, under the same load, until that many have or one request
// timeout has passed, so a slow server still gets numbers, over a longer
// window.
type loadResult struct {
	OK       int64         `json:"ok"`
	Limited  int64         `json:"limited"` // 429 answers: a rate limit or quota refused the request
	Errors   int64         `json:"errors"`  // other non-2xx answers and broken connections
	Timeouts int64         `json:"timeouts"`
	FirstErr string        `json:"first_error,omitempty"`
	Bytes    int64         `json:"bytes"`        // bodies of the answers counted in OK
	InWindow int64         `json:"window_bytes"` // bytes of 2xx bodies read inside the window, answers cut at its edges included
	Elapsed  time.Duration `json:"window_ns"`
	// All2xx counts every 2xx answer read whole, in the warm-up and the
	// window alike: the writes phase counts with it the writes a server
	// acknowledged (answers cut off when the window closed are not in it).
	All2xx int64 `json:"all_2xx,omitempty"`
	hist   histogram
}

// rate is successful requests per second: the answer bytes read inside the
// window, in answers (their mean size), per second. Counting whole answers
// instead would make large answers jump: connections that share the
// bandwidth fairly finish their answers together, and a window edge that
// falls just before or after such a round moves the count by a whole
// connection count (a 236 MiB answer at 32 connections: 25%).
func (r *loadResult) rate() float64 {
	if r.Elapsed <= 0 || r.OK == 0 {
		return 0
	}
	if r.Bytes <= 0 || r.InWindow <= 0 { // empty bodies
		return float64(r.OK) / r.Elapsed.Seconds()
	}
	answers := float64(r.InWindow) / (float64(r.Bytes) / float64(r.OK))
	return answers / r.Elapsed.Seconds()
}

// run drives the server until the window closes.
func (l load) run(ctx context.Context) *loadResult {
	start := time.Now()
	measureFrom := start.Add(l.warmup)
	stopAt := measureFrom.Add(l.duration)
	rot := newRotation(l.addr, l.header, l.targets)
	if l.requests != nil {
		rot = newRequestRotation(l.addr, l.header, l.requests)
	}

	window, closeWindow := context.WithCancel(ctx)
	defer closeWindow()
	var ended atomic.Int64 // 2xx and 429 answers in the window so far
	results := make([]*loadResult, l.conns)
	var wg sync.WaitGroup
	for i := range results {
		results[i] = &loadResult{}
		wg.Add(1)
		go func(w *loadResult) {
			defer wg.Done()
			l.connection(window, rot, measureFrom, w, &ended)
		}(results[i])
	}

	select {
	case <-ctx.Done():
	case <-time.After(time.Until(measureFrom)):
	}
	if l.onOpen != nil {
		l.onOpen()
	}

	var end time.Time
	tick := time.NewTicker(10 * time.Millisecond)
	for end.IsZero() {
		select {
		case <-ctx.Done():
			end = time.Now()
		case now := <-tick.C:
			if !now.Before(stopAt) && (ended.Load() >= int64(l.conns) || !now.Before(stopAt.Add(l.timeout))) {
				end = now
			}
		}
	}
	tick.Stop()
	if l.onClose != nil {
		l.onClose()
	}
	closeWindow()
	wg.Wait()

	total := &loadResult{Elapsed: end.Sub(measureFrom)}
	for _, w := range results {
		total.OK += w.OK
		total.Limited += w.Limited
		total.Errors += w.Errors
		total.Timeouts += w.Timeouts
		total.Bytes += w.Bytes
		total.InWindow += w.InWindow
		total.All2xx += w.All2xx
		total.hist.merge(&w.hist)
		if total.FirstErr == "" {
			total.FirstErr = w.FirstErr
		}
	}
	return total
}

// connection is one client: a request, its whole answer, the next request,
// until the window closes (which also breaks off the request in flight, not
// counted). It reconnects when the server closes or an error breaks the
// connection.
func (l load) connection(window context.Context, rot *rotation, measureFrom time.Time, w *loadResult, ended *atomic.Int64) {
	var (
		mu   sync.Mutex
		conn net.Conn
		br   *bufio.Reader
		buf  = make([]byte, 256<<10)
	)
	setConn := func(c net.Conn) {
		mu.Lock()
		defer mu.Unlock()
		if conn != nil {
			conn.Close()
		}
		conn = c
	}
	defer setConn(nil)
	stop := context.AfterFunc(window, func() {
		mu.Lock()
		defer mu.Unlock()
		if conn != nil {
			_ = conn.SetDeadline(time.Unix(1, 0)) // interrupts the read in flight
		}
	})
	defer stop()

	fail := func(err error) {
		setConn(nil)
		if window.Err() != nil || time.Now().Before(measureFrom) {
			return
		}
		if errors.Is(err, os.ErrDeadlineExceeded) {
			w.Timeouts++
		} else {
			w.Errors++
		}
		if w.FirstErr == "" {
			w.FirstErr = err.Error()
		}
	}
	for window.Err() == nil {
		began := time.Now()
		if conn == nil {
			c, err := net.DialTimeout("tcp", l.addr, 5*time.Second)
			if err != nil {
				fail(err)
				time.Sleep(100 * time.Millisecond) // the server is down: do not spin
				continue
			}
			setConn(c)
			br = bufio.NewReaderSize(c, 64<<10)
		}
		mu.Lock()
		if window.Err() != nil { // else the deadline set below would undo the interruption
			mu.Unlock()
			return
		}
		_ = conn.SetDeadline(began.Add(l.timeout))
		mu.Unlock()
		if _, err := conn.Write(rot.take()); err != nil {
			fail(err)
			continue
		}
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			fail(err)
			continue
		}
		// Large reads: io.Copy would use io.Discard's 8 KiB buffer, and
		// the load generator would spend the CPU the server needs.
		n, err := io.CopyBuffer(&inWindow{window: window, from: measureFrom,
			n: &w.InWindow, count: resp.StatusCode/100 == 2}, resp.Body, buf)
		resp.Body.Close()
		if err != nil {
			fail(err)
			continue
		}
		done := time.Now()
		if resp.StatusCode/100 == 2 {
			w.All2xx++
		}
		if window.Err() == nil && !done.Before(measureFrom) {
			if resp.StatusCode/100 == 2 {
				w.OK++
				w.Bytes += n
				w.hist.record(done.Sub(began))
				ended.Add(1)
			} else if resp.StatusCode == http.StatusTooManyRequests {
				// An answer too, and a quick one: a server refusing
				// most requests is not slow, and gets no stretched window.
				w.Limited++
				ended.Add(1)
			} else {
				w.Errors++
				if w.FirstErr == "" {
					w.FirstErr = "HTTP " + resp.Status
				}
			}
		}
		if resp.Close {
			setConn(nil)
		}
	}
}

// rotation hands out the requests, one target after the other, to every
// connection from one shared counter: each target is asked as often as the
// others (to within one) whatever the connections' speeds, so that with
// many mocks none gets more than its share of the rate limit.
type rotation struct {
	reqs [][]byte
	next atomic.Uint64
}

func newRotation(addr, header string, targets []string) *rotation {
	reqs := make([]request, len(targets))
	for i, t := range targets {
		reqs[i] = request{method: http.MethodGet, target: t}
	}
	return newRequestRotation(addr, header, reqs)
}

// request is one request of a rotation: a method, a path and query, and
// a body (sent as JSON when not empty).
type request struct {
	method, target, body string
}

// newRequestRotation is a rotation over reqs, each spelled once as the
// bytes the connections send.
func newRequestRotation(addr, header string, reqs []request) *rotation {
	r := &rotation{reqs: make([][]byte, len(reqs))}
	for i, q := range reqs {
		r.reqs[i] = requestBytes(addr, header, q)
	}
	return r
}

// requestBytes spells q as an HTTP/1.1 request to addr, with header's
// lines added.
func requestBytes(addr, header string, q request) []byte {
	head := q.method + " " + q.target + " HTTP/1.1\r\nHost: " + addr +
		"\r\nUser-Agent: decoy-bench\r\nAccept: application/json\r\n" + header
	if q.body != "" || q.method == http.MethodPost || q.method == http.MethodPut || q.method == http.MethodPatch {
		head += "Content-Type: application/json\r\nContent-Length: " + strconv.Itoa(len(q.body)) + "\r\n"
	}
	return []byte(head + "\r\n" + q.body)
}

// take is the next request to send.
func (r *rotation) take() []byte {
	if len(r.reqs) == 1 {
		return r.reqs[0] // no shared counter for the connections to fight over
	}
	return r.reqs[(r.next.Add(1)-1)%uint64(len(r.reqs))]
}

// inWindow discards what it is given, and counts it in n when count is set
// and the window is open; it has no ReadFrom, so that io.CopyBuffer uses the
// buffer it is given.
type inWindow struct {
	window context.Context
	from   time.Time
	n      *int64
	count  bool
}

func (w *inWindow) Write(p []byte) (int, error) {
	if w.count && w.window.Err() == nil && !time.Now().Before(w.from) {
		*w.n += int64(len(p))
	}
	return len(p), nil
}

// histogram records latencies in log-linear buckets, HDR-style: exact below
// 256 ns, then 128 buckets per power of two, so any quantile is within 0.4%
// of the true value, at a fixed 58 KiB whatever the range.
type histogram struct {
	counts [57 << subBits]uint64
	n      uint64
}

const subBits = 7

func bucketOf(v uint64) int {
	if v < 2<<subBits {
		return int(v)
	}
	shift := bits.Len64(v) - (subBits + 1)
	return shift<<subBits + int(v>>shift)
}

// bucketValue is the middle of bucket i's range.
func bucketValue(i int) uint64 {
	if i < 2<<subBits {
		return uint64(i)
	}
	shift := i>>subBits - 1
	low := uint64(i-shift<<subBits) << shift
	return low + (uint64(1)<<shift)/2
}

func (h *histogram) record(d time.Duration) {
	h.counts[bucketOf(uint64(max(d, 0)))]++
	h.n++
}

func (h *histogram) merge(o *histogram) {
	for i, c := range o.counts {
		h.counts[i] += c
	}
	h.n += o.n
}

// quantile is the latency under which a fraction q of requests ended.
func (h *histogram) quantile(q float64) time.Duration {
	if h.n == 0 {
		return 0
	}
	rank := uint64(q*float64(h.n) + 0.5)
	rank = min(max(rank, 1), h.n)
	var seen uint64
	for i, c := range h.counts {
		seen += c
		if seen >= rank {
			return time.Duration(bucketValue(i))
		}
	}
	return 0
}
