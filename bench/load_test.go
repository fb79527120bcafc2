//go:build linux

package main

import (
	"context"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
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
	l := load{addr: addr, target: "/", conns: 4, warmup: 50 * time.Millisecond,
		duration: 200 * time.Millisecond, timeout: time.Second}
	res := l.run(context.Background())
	if res.OK == 0 || res.Errors != 0 || res.Bytes != res.OK*100_000 {
		t.Errorf("ok %d, errors %d, bytes %d", res.OK, res.Errors, res.Bytes)
	}
	if res.hist.quantile(0.5) <= 0 {
		t.Error("no latency recorded")
	}
	l.target = "/?fail"
	if res := l.run(context.Background()); res.OK != 0 || res.Errors == 0 {
		t.Errorf("errors not counted: ok %d, errors %d", res.OK, res.Errors)
	}
}

func TestLoadStretchesTheWindowForASlowServer(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(300 * time.Millisecond)
	}))
	defer srv.Close()
	l := load{addr: strings.TrimPrefix(srv.URL, "http://"), target: "/", conns: 2,
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
	l := load{addr: strings.TrimPrefix(srv.URL, "http://"), target: "/", conns: 2,
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
