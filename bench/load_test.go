//go:build linux

package main

import (
	"context"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestHistogramQuantiles(t *testing.T) {
	var h histogram
	for i := 1; i <= 100_000; i++ {
		h.record(time.Duration(i) * time.Microsecond)
	}
	for _, tc := range []struct {
		q    float64
		want time.Duration
	}{
		{0.5, 50 * time.Millisecond},
		{0.99, 99 * time.Millisecond},
		{1, 100 * time.Millisecond},
	} {
		got := h.quantile(tc.q)
		if diff := float64(got-tc.want) / float64(tc.want); diff > 0.004 || diff < -0.004 {
			t.Errorf("quantile(%v) = %v, want %v within 0.4%%", tc.q, got, tc.want)
		}
	}
}

func TestBucketsCoverEveryValue(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 100_000 {
		v := r.Uint64() >> r.IntN(64)
		v &= 1<<63 - 1
		i := bucketOf(v)
		if i >= len(histogram{}.counts) {
			t.Fatalf("bucketOf(%d) = %d, out of range", v, i)
		}
		mid := bucketValue(i)
		if diff := float64(mid) - float64(v); diff > float64(v)/200+1 || -diff > float64(v)/200+1 {
			t.Fatalf("value %d in bucket %d shown as %d", v, i, mid)
		}
	}
}

func TestLoadCountsAnswersAndErrors(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.Contains(r.URL.RawQuery, "fail") {
			http.Error(w, "no", http.StatusTeapot)
			return
		}
		w.Write([]byte(strings.Repeat("x", 100_000)))
	}))
	defer srv.Close()
	addr := strings.TrimPrefix(srv.URL, "http://")
	l := load{addr: addr, targets: []string{"/"}, conns: 4, warmup: 50 * time.Millisecond,
		duration: 200 * time.Millisecond, timeout: time.Second}
	res := l.run(context.Background())
	if res.OK == 0 || res.Errors != 0 || res.Bytes != res.OK*100_000 {
		t.Errorf("ok %d, errors %d, bytes %d", res.OK, res.Errors, res.Bytes)
	}
	if res.hist.quantile(0.5) <= 0 {
		t.Error("no latency recorded")
	}
	l.targets = []string{"/?fail"}
	if res := l.run(context.Background()); res.OK != 0 || res.Errors == 0 {
		t.Errorf("errors not counted: ok %d, errors %d", res.OK, res.Errors)
	}
}

func TestLoadStretchesTheWindowForASlowServer(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(300 * time.Millisecond)
	}))
	defer srv.Close()
	l := load{addr: strings.TrimPrefix(srv.URL, "http://"), targets: []string{"/"}, conns: 2,
		warmup: 0, duration: 100 * time.Millisecond, timeout: 2 * time.Second}
	res := l.run(context.Background())
	if res.OK < 2 || res.Elapsed < 300*time.Millisecond {
		t.Errorf("ok %d over %v: want the window stretched to two answers", res.OK, res.Elapsed)
	}
}

// An answer longer than the window counts for the part of it read inside the
// window: with whole answers only, each connection here ends one answer in
// the window and reads most of a second one.
func TestLoadCountsAnswersCutByTheWindow(t *testing.T) {
	const chunks, chunk = 10, 10_000
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", strconv.Itoa(chunks*chunk))
		for range chunks {
			w.Write(make([]byte, chunk))
			w.(http.Flusher).Flush()
			time.Sleep(30 * time.Millisecond)
		}
	}))
	defer srv.Close()
	l := load{addr: strings.TrimPrefix(srv.URL, "http://"), targets: []string{"/"}, conns: 2,
		warmup: 100 * time.Millisecond, duration: 450 * time.Millisecond, timeout: 5 * time.Second}
	res := l.run(context.Background())
	if res.OK == 0 || res.Bytes != res.OK*chunks*chunk {
		t.Fatalf("ok %d, bytes %d", res.OK, res.Bytes)
	}
	if res.InWindow <= res.Bytes {
		t.Errorf("bytes read in the window %d, not more than the %d of whole answers", res.InWindow, res.Bytes)
	}
	whole := float64(res.OK) / res.Elapsed.Seconds()
	if got, want := res.rate(), float64(res.InWindow)/(chunks*chunk)/res.Elapsed.Seconds(); got <= whole || got-want > 1e-9 || want-got > 1e-9 {
		t.Errorf("rate %.3f, want %.3f (whole answers only: %.3f)", got, want, whole)
	}
}

func TestRotationTakesEachTargetInTurn(t *testing.T) {
	for _, tc := range []struct {
		name           string
		targets, takes int
		workers        int
	}{
		{"one target", 1, 100, 4},
		{"three targets, one worker", 3, 300, 1},
		{"1,000 targets, 32 workers", 1000, 32_000, 32},
		{"takes not a multiple of the targets", 7, 100, 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			targets := make([]string, tc.targets)
			index := map[string]int{}
			for i := range targets {
				targets[i] = "/mock/" + strconv.Itoa(i)
				index[string(newRotation("h", "", targets[i:i+1]).take())] = i
			}
			rot := newRotation("h", "", targets)
			counts := make([]int, tc.targets)
			var mu sync.Mutex
			var wg sync.WaitGroup
			per := tc.takes / tc.workers
			for w := range tc.workers {
				n := per
				if w == 0 {
					n += tc.takes - per*tc.workers
				}
				wg.Add(1)
				go func() {
					defer wg.Done()
					local := make([]int, tc.targets)
					for range n {
						local[index[string(rot.take())]]++
					}
					mu.Lock()
					for i, c := range local {
						counts[i] += c
					}
					mu.Unlock()
				}()
			}
			wg.Wait()
			lo, hi := tc.takes/tc.targets, (tc.takes+tc.targets-1)/tc.targets
			for i, c := range counts {
				if c < lo || c > hi {
					t.Fatalf("target %d taken %d times of %d, want %d to %d", i, c, tc.takes, lo, hi)
				}
			}
		})
	}
}

func TestRotationRequestCarriesTheHeaders(t *testing.T) {
	h := headerLines(clients[2].headers("dcy_secret"))
	got := string(newRotation("127.0.0.1:1", h, []string{"/mock/x?limit=1"}).take())
	want := "GET /mock/x?limit=1 HTTP/1.1\r\nHost: 127.0.0.1:1\r\nUser-Agent: decoy-bench\r\nAccept: application/json\r\n" +
		"Accept-Encoding: gzip, deflate, br\r\ndecoyauthtoken: dcy_secret\r\n\r\n"
	if got != want {
		t.Errorf("request\n%q\nwant\n%q", got, want)
	}
}

// A server that refuses some mocks with 429: those are counted apart from
// the answers and the errors, and the rotation reaches every target.
func TestLoadCounts429sApartAndRotates(t *testing.T) {
	var mu sync.Mutex
	seen := map[string]int{}
	var badHeader atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen[r.URL.Path]++
		mu.Unlock()
		if r.Header.Get("Accept-Encoding") != browserAcceptEncoding || r.Header.Get(tokenHeader) != "tok" {
			badHeader.Store(true)
		}
		if r.URL.Path == "/limited" {
			http.Error(w, "slow down", http.StatusTooManyRequests)
			return
		}
		w.Write([]byte(strings.Repeat("x", 1000)))
	}))
	defer srv.Close()
	var opened, closed time.Time
	start := time.Now()
	l := load{addr: strings.TrimPrefix(srv.URL, "http://"), targets: []string{"/a", "/b", "/limited"},
		header: headerLines(clients[2].headers("tok")), conns: 3, warmup: 50 * time.Millisecond,
		duration: 200 * time.Millisecond, timeout: time.Second,
		onOpen: func() { opened = time.Now() }, onClose: func() { closed = time.Now() }}
	res := l.run(context.Background())
	if res.OK == 0 || res.Limited == 0 || res.Errors != 0 {
		t.Errorf("ok %d, limited %d, errors %d: want answers and 429s, no errors", res.OK, res.Limited, res.Errors)
	}
	if res.Bytes != res.OK*1000 {
		t.Errorf("bytes %d for %d answers: 429 bodies counted", res.Bytes, res.OK)
	}
	if r := float64(res.Limited) / float64(res.OK+res.Limited); r < 0.2 || r > 0.45 {
		t.Errorf("429s are %.2f of the answers, want about a third", r)
	}
	mu.Lock() // requests the load gave up on may still be answered
	for _, p := range []string{"/a", "/b", "/limited"} {
		if seen[p] == 0 {
			t.Errorf("%s never asked", p)
		}
	}
	mu.Unlock()
	if badHeader.Load() {
		t.Error("a request came without the client's headers")
	}
	if opened.Sub(start) < l.warmup || !closed.After(opened) {
		t.Errorf("window opened %v after the start and closed %v after it opened", opened.Sub(start), closed.Sub(opened))
	}
}
