package server

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

func TestBodyPaceDue(t *testing.T) {
	p := bodyPace{rate: 1000, grace: 5 * time.Second}
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		n    int64
		want time.Duration
	}{
		{0, 5 * time.Second},
		{500, 5500 * time.Millisecond},
		{1000, 6 * time.Second},
		{64 << 20, 5*time.Second + 67108864*time.Millisecond},
		{1 << 62, 5*time.Second + (1<<30)*time.Second + 904*time.Millisecond}, // bounded, no overflow
	} {
		if got := p.due(start, tc.n).Sub(start); got != tc.want {
			t.Errorf("due after %d bytes: +%v, want +%v", tc.n, got, tc.want)
		}
	}
}

// schedule is a request body sent as a client would: pieces at given
// offsets from the first read, then, when hang is set, nothing more until
// it ends. A client's transport may wait for the body it sends to end
// before it returns an error: it ends at the latest after a limit.
type schedule struct {
	pieces []piece
	hang   bool
	start  time.Time
	i      int
	done   chan struct{}
	limit  *time.Timer
}

func newSchedule(pieces []piece, hang bool, limit time.Duration) *schedule {
	s := &schedule{pieces: slices.Clone(pieces), hang: hang, done: make(chan struct{})}
	s.limit = time.AfterFunc(limit, func() { close(s.done) })
	return s
}

// end ends the body now.
func (s *schedule) end() {
	if s.limit.Stop() {
		close(s.done)
	}
}

type piece struct {
	at   time.Duration
	data string
}

func (s *schedule) Read(b []byte) (int, error) {
	if s.start.IsZero() {
		s.start = time.Now()
	}
	if s.i == len(s.pieces) {
		if s.hang {
			<-s.done
		}
		return 0, io.EOF
	}
	p := &s.pieces[s.i]
	select {
	case <-time.After(time.Until(s.start.Add(p.at))):
	case <-s.done:
		return 0, io.EOF
	}
	n := copy(b, p.data)
	if p.data = p.data[n:]; p.data == "" {
		s.i++
	}
	return n, nil
}

// trickle is n bytes, one every d.
func trickle(n int, d time.Duration) []piece {
	ps := make([]piece, n)
	for i := range ps {
		ps[i] = piece{time.Duration(i) * d, "x"}
	}
	return ps
}

// steady is n pieces of size bytes, one every d.
func steady(n, size int, d time.Duration) []piece {
	ps := make([]piece, n)
	for i := range ps {
		ps[i] = piece{time.Duration(i) * d, strings.Repeat("x", size)}
	}
	return ps
}

// A body is held to the floor rate from the server's first read of it,
// over HTTP/1.1 and HTTP/2: a trickle, or a body that never comes, is cut
// soon after the grace, and its handler's failed read becomes a 408; a
// body at a steady pace above the floor, or one that stalls on the credit
// it built, is read whole however long it takes.
func TestPaceBodies(t *testing.T) {
	const grace = 300 * time.Millisecond
	const cutWithin = 5 * time.Second // loose: a busy machine is late
	pace := bodyPace{rate: 4 << 10, grace: grace, answerTime: time.Minute}
	var cuts atomic.Int32
	h := closeUnread(paceBodies(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, err := io.Copy(io.Discard, r.Body)
		switch {
		case err != nil && tooSlow(r) != nil: // as writeError answers
			w.WriteHeader(http.StatusRequestTimeout)
		case err != nil:
			w.WriteHeader(http.StatusBadRequest)
		default:
			fmt.Fprint(w, n)
		}
	}), pace, func(*http.Request, *pacedBody) { cuts.Add(1) }))
	h1 := httptest.NewServer(h)
	defer h1.Close()
	h2 := httptest.NewUnstartedServer(h)
	h2.EnableHTTP2 = true
	h2.StartTLS()
	defer h2.Close()
	h1.Client().Timeout, h2.Client().Timeout = cutWithin, cutWithin

	cases := []struct {
		name   string
		length int64 // -1: chunked in HTTP/1.1, no length in HTTP/2
		body   []piece
		hang   bool
		want   string // "cut", or the bytes read
	}{
		{"a byte every 100 ms", 8 << 10, trickle(8<<10, 100*time.Millisecond), false, "cut"},
		{"a byte every 100 ms, chunked", -1, trickle(8<<10, 100*time.Millisecond), false, "cut"},
		{"a head and no body", 1 << 10, nil, true, "cut"},
		{"a fast start, then nothing", 64 << 10, []piece{{0, strings.Repeat("x", 4<<10)}}, true, "cut"},
		{"8 KiB/s for 1 s", 8 << 10, steady(8, 1<<10, 125*time.Millisecond), false, "8192"},
		{"8 KiB/s for 1 s, chunked", -1, steady(8, 1<<10, 125*time.Millisecond), false, "8192"},
		{"a stall on credit", 17 << 10, []piece{{0, strings.Repeat("x", 16<<10)}, {time.Second, strings.Repeat("x", 1<<10)}}, false, "17408"},
	}
	wantCuts := 0
	t.Run("cases", func(t *testing.T) {
		for _, tc := range cases {
			for _, srv := range []*httptest.Server{h1, h2} {
				proto := map[*httptest.Server]string{h1: "HTTP/1.1", h2: "HTTP/2.0"}[srv]
				if tc.want == "cut" {
					wantCuts++
				}
				t.Run(tc.name+" "+proto, func(t *testing.T) {
					t.Parallel()
					body := newSchedule(tc.body, tc.hang, cutWithin)
					defer body.end()
					req, _ := http.NewRequest("POST", srv.URL, body)
					req.ContentLength = tc.length
					begin := time.Now()
					resp, err := srv.Client().Do(req)
					if err != nil {
						t.Fatal(err)
					}
					defer resp.Body.Close()
					b, _ := io.ReadAll(resp.Body)
					took := time.Since(begin)
					if resp.Proto != proto {
						t.Fatalf("answered over %s", resp.Proto)
					}
					if tc.want == "cut" {
						if resp.StatusCode != http.StatusRequestTimeout {
							t.Errorf("got %d %q, want a cut", resp.StatusCode, b)
						}
						if took < grace {
							t.Errorf("cut after %v, within the %v grace", took, grace)
						}
						t.Logf("cut after %v", took.Round(time.Millisecond))
						return
					}
					if resp.StatusCode != http.StatusOK || string(b) != tc.want {
						t.Errorf("got %d %q, want 200 %s", resp.StatusCode, b, tc.want)
					}
				})
			}
		}
	})
	if got := int(cuts.Load()); got != wantCuts {
		t.Errorf("%d bodies cut, want %d", got, wantCuts)
	}
}

// An answer gets the server's WriteTimeout from its body's last byte: a
// body that took longer than that to come, at a pace above the floor,
// still gets its answer.
func TestPaceAnswerTime(t *testing.T) {
	const writeTimeout = 500 * time.Millisecond
	pace := bodyPace{rate: 4 << 10, grace: 300 * time.Millisecond, answerTime: writeTimeout}
	srv := httptest.NewUnstartedServer(closeUnread(paceBodies(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, err := io.Copy(io.Discard, r.Body)
		if err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		fmt.Fprint(w, n)
	}), pace, func(*http.Request, *pacedBody) { t.Error("cut") })))
	srv.Config.WriteTimeout = writeTimeout
	srv.Start()
	defer srv.Close()
	body := newSchedule(steady(8, 1<<10, 125*time.Millisecond), false, 5*time.Second) // 1 s
	defer body.end()
	req, _ := http.NewRequest("POST", srv.URL, body)
	req.ContentLength = 8 << 10
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if b, _ := io.ReadAll(resp.Body); resp.StatusCode != http.StatusOK || string(b) != "8192" {
		t.Errorf("got %d %q, want 200 8192", resp.StatusCode, b)
	}
}

// Past a body's end no read deadline is set, even by a read after it:
// net/http reads on, with none, to see the client go away, and a deadline
// there would end the request's context.
func TestPaceEndsAtEOF(t *testing.T) {
	pace := bodyPace{rate: 4 << 10, grace: 100 * time.Millisecond, answerTime: time.Minute}
	srv := httptest.NewServer(closeUnread(paceBodies(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body) // its last read returns the last bytes with io.EOF
		if err != nil || len(b) != 1<<10 {
			t.Errorf("read %d bytes, %v", len(b), err)
		}
		r.Body.Read(make([]byte, 1))
		select {
		case <-r.Context().Done():
			t.Error("the request's context ended after its body was read")
		case <-time.After(600 * time.Millisecond): // past when the bytes after the body would be due
		}
	}), pace, func(*http.Request, *pacedBody) { t.Error("cut") })))
	defer srv.Close()
	resp, err := http.Post(srv.URL, "text/plain", strings.NewReader(strings.Repeat("x", 1<<10)))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
}

// A body the handler leaves unread is held to the pace too while net/http
// reads what is left of it after the answer: a trickle's connection is
// closed soon after, not held at the client's pace.
func TestPaceUnreadBody(t *testing.T) {
	const grace = 300 * time.Millisecond
	const cutWithin = 5 * time.Second
	pace := bodyPace{rate: 4 << 10, grace: grace, answerTime: time.Minute}
	srv := httptest.NewServer(closeUnread(paceBodies(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "not read")
	}), pace, func(*http.Request, *pacedBody) {})))
	defer srv.Close()
	c, err := net.Dial("tcp", strings.TrimPrefix(srv.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	begin := time.Now()
	c.SetReadDeadline(begin.Add(cutWithin))
	io.WriteString(c, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\nx")
	closed := make(chan error, 1)
	go func() {
		br := bufio.NewReader(c)
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			closed <- err
			return
		}
		b, _ := io.ReadAll(resp.Body)
		if string(b) != "not read" {
			closed <- fmt.Errorf("answer %q", b)
			return
		}
		_, err = io.Copy(io.Discard, br)
		closed <- err
	}()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case err := <-closed:
			if err != nil && !errors.Is(err, syscall.ECONNRESET) {
				t.Fatalf("not closed within %v: %v", cutWithin, err)
			}
			t.Logf("closed after %v", time.Since(begin).Round(time.Millisecond))
			return
		case <-tick.C:
			c.Write([]byte("x"))
		}
	}
}

// Without deadlines (a ResponseWriter of a test), a body is read at any
// pace.
func TestPaceWithoutDeadlines(t *testing.T) {
	pace := bodyPace{rate: 1, grace: time.Nanosecond, answerTime: time.Minute}
	h := paceBodies(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		if err != nil || string(b) != "body" {
			t.Errorf("read %q, %v", b, err)
		}
	}), pace, func(*http.Request, *pacedBody) { t.Error("cut") })
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("POST", "/", bytes.NewReader([]byte("body"))))
}
