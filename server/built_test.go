package server

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// etagHeader is the header's name as the server sets it (and as the
// recorder keeps it): not canonical, as is usual for ETag.
var etagHeader = "ETag"

// A large answer asked for again is kept (built.go) and sent from what was
// kept: the same status, headers and bytes as when built from the records,
// gzipped or not, for HEAD and If-None-Match alike; a small one, or one of
// a query string with a token, is never kept; what is kept counts in the
// entry's footprint.
func TestBuiltAnswers(t *testing.T) {
	const id = "00000000-0000-4000-8000-000000000001"
	doc := users("x", 3000)
	s := boundedServer(t, map[string][]byte{id: doc})
	get := func(q string, header ...string) *httptest.ResponseRecorder {
		t.Helper()
		method := http.MethodGet
		if len(header) == 1 {
			method, header = header[0], nil
		}
		r := httptest.NewRequest(method, "/mock/"+id+q, nil)
		for i := 0; i+1 < len(header); i += 2 {
			r.Header.Set(header[i], header[i+1])
		}
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, r)
		return rec
	}
	kept := func(raw string) *builtAnswer {
		e := s.cache.peek(id)
		if e == nil || e.built == nil {
			t.Fatal("no entry, or no kept answers for an array")
		}
		return e.built.lookup(raw)
	}
	heads := []string{"Content-Length", "Content-Type", "ETag", "X-Total-Count", "Content-Encoding", "Vary", "Cache-Control"}
	same := func(what string, got, want *httptest.ResponseRecorder) {
		t.Helper()
		if got.Code != want.Code || !bytes.Equal(got.Body.Bytes(), want.Body.Bytes()) {
			t.Errorf("%s: %d, %d bytes; want %d, %d bytes", what, got.Code, got.Body.Len(), want.Code, want.Body.Len())
		}
		for _, k := range heads {
			if g, w := got.Header()[k], want.Header()[k]; strings.Join(g, "|") != strings.Join(w, "|") {
				t.Errorf("%s: %s %q, want %q", what, k, g, w)
			}
		}
	}
	// Room for every answer here at once (a document of this size keeps
	// one: see newBuiltAnswers).
	if get("").Code != http.StatusOK {
		t.Fatal("not served")
	}
	s.cache.peek(id).built.budget = 1 << 30
	gzipped := map[string][]byte{}
	for _, tc := range []struct {
		raw   string
		total string
		keep  bool
	}{
		{"order_by=age&order_direction=desc", "3000", true},
		{"order_by=age", "3000", true},
		{"filters=tag%5B%24eqi%5D%3DX&offset=5&limit=2990", "3000", true},
		{"filters=age%5B%24ne%5D%3D0&offset=5", "2966", true},
		{"filters=tag%3Dx&order_by=name&limit=10", "3000", false}, // small
		{"auth_token=abc&order_by=age", "3000", false},            // a token: compiled afresh
	} {
		t.Run(tc.raw, func(t *testing.T) {
			first := get("?" + tc.raw)
			if first.Code != http.StatusOK || first.Header().Get("X-Total-Count") != tc.total {
				t.Fatalf("%d, X-Total-Count %q: %.200s", first.Code, first.Header().Get("X-Total-Count"), first.Body)
			}
			before := s.cache.peek(id).footprint()
			for i := range 3 {
				same("again", get("?"+tc.raw), first)
				if i == 0 && !tc.keep && kept(tc.raw) != nil {
					t.Fatal("kept")
				}
			}
			if got := kept(tc.raw); (got != nil) != tc.keep {
				t.Fatalf("kept: %v, want %v", got != nil, tc.keep)
			} else if got != nil {
				if !bytes.Equal(got.body, first.Body.Bytes()) {
					t.Fatal("the body kept is not the answer")
				}
				if grew := s.cache.peek(id).footprint() - before; grew != int64(len(got.body)) {
					t.Errorf("footprint grew by %d, want the %d bytes kept", grew, len(got.body))
				}
			}

			// HEAD, gzip and If-None-Match, before and after it is kept:
			// the same answers.
			head := get("?"+tc.raw, http.MethodHead)
			if head.Body.Len() != 0 || head.Header().Get("Content-Length") != first.Header().Get("Content-Length") {
				t.Errorf("HEAD: %d bytes, Content-Length %q", head.Body.Len(), head.Header().Get("Content-Length"))
			}
			etag := first.Header()[etagHeader]
			if len(etag) != 1 {
				t.Fatalf("ETag %q", etag)
			}
			before = s.cache.peek(id).footprint()
			if gz := get("?"+tc.raw, "Accept-Encoding", "gzip"); gz.Header().Get("Content-Encoding") == "gzip" {
				gzipped[tc.raw] = gz.Body.Bytes()
				if grew := s.cache.peek(id).footprint() - before; tc.keep && grew != int64(gz.Body.Len()) {
					t.Errorf("footprint grew by %d with the gzipped copy, want its %d bytes", grew, gz.Body.Len())
				}
				if cl := gz.Header().Get("Content-Length"); cl != "" {
					t.Errorf("gzip Content-Length %q: not sent when gzipped on the fly", cl)
				}
				if again := get("?"+tc.raw, "Accept-Encoding", "gzip"); !bytes.Equal(again.Body.Bytes(), gz.Body.Bytes()) {
					t.Error("gzip: a different answer the second time")
				}
				zr, err := gzip.NewReader(gz.Body)
				if err != nil {
					t.Fatal(err)
				}
				if plain, _ := io.ReadAll(zr); !bytes.Equal(plain, first.Body.Bytes()) {
					t.Errorf("gzip: %d bytes once gunzipped, want the %d of the plain answer", len(plain), first.Body.Len())
				}
				if want := strings.TrimSuffix(etag[0], `"`) + `-gzip"`; gz.Header()[etagHeader][0] != want {
					t.Errorf("gzip ETag %q, want %q", gz.Header()[etagHeader], want)
				}
			} else if tc.keep {
				t.Error("a large answer not gzipped")
			}
			if nm := get("?"+tc.raw, "If-None-Match", etag[0]); nm.Code != http.StatusNotModified {
				t.Errorf("If-None-Match: %d", nm.Code)
			}
		})
	}
	// The gzipped copy kept is the bytes compressed on the fly from the
	// records: the same records, by a query with a token, never kept.
	keptGz, flyGz := gzipped["order_by=age"], gzipped["auth_token=abc&order_by=age"]
	if len(keptGz) == 0 || !bytes.Equal(keptGz, flyGz) {
		t.Errorf("gzipped: %d bytes kept, %d made on the fly; want the same bytes", len(keptGz), len(flyGz))
	}
}

// Each document keeps at most builtMaxAnswers answers holding at most its
// budget; the least recently sent leave first, and the growth reported
// always adds up to what is kept.
func TestBuiltAnswersBounds(t *testing.T) {
	b := &builtAnswers{budget: 3 * builtMinSize}
	var grown int64
	grew := func(n int64) { grown += n }
	fill := func(n int) func(*bytes.Buffer) {
		return func(buf *bytes.Buffer) { buf.Write(bytes.Repeat([]byte{'x'}, n)) }
	}
	offerTwice := func(q string, size int) *builtAnswer {
		if ba := b.offer(q, size, 1, `"e"`, fill(size), grew); ba != nil {
			t.Fatal("kept the first time it was offered")
		}
		return b.offer(q, size, 1, `"e"`, fill(size), grew)
	}
	qs := make([]string, builtMaxAnswers+2)
	for i := range qs {
		qs[i] = fmt.Sprintf("limit=%d", i)
	}
	if offerTwice(qs[0], builtMinSize-1) != nil {
		t.Error("kept an answer smaller than builtMinSize")
	}
	if offerTwice(qs[0], 4*builtMinSize) != nil {
		t.Error("kept an answer larger than the budget")
	}
	if b.offer(qs[0], builtMinSize, 1, `"e"`, fill(builtMinSize-1), grew) != nil {
		t.Error("kept a body of the wrong size")
	}
	for i := 1; i <= 3; i++ {
		if offerTwice(qs[i], builtMinSize) == nil {
			t.Fatalf("answer %d not kept", i)
		}
	}
	// 1 is sent, then 3 gets a gzipped copy, which needs room: 2, the
	// least recently sent, leaves.
	b.lookup(qs[1])
	gz := b.lookup(qs[3]).gzipped(grew)
	if len(gz) == 0 || b.footprint() != 2*builtMinSize+int64(len(gz)) || b.lookup(qs[2]) != nil {
		t.Fatalf("footprint %d with a gzipped copy of %d bytes; 2 kept: %v", b.footprint(), len(gz), b.lookup(qs[2]) != nil)
	}
	// 4 needs room for its body: 1 leaves, 3 (with its copy) stays.
	if offerTwice(qs[4], builtMinSize) == nil {
		t.Fatal("answer 4 not kept")
	}
	for i, want := range []bool{false, false, false, true, true} {
		if got := b.lookup(qs[i]) != nil; got != want {
			t.Errorf("answer %d kept: %v, want %v", i, got, want)
		}
	}
	// Growth is told, not shrinking: the count stays at or above what is
	// kept.
	if want := 2*builtMinSize + int64(len(gz)); b.footprint() != want || grown < want {
		t.Errorf("told of %d bytes, footprint %d, want %d", grown, b.footprint(), want)
	}

	// By count: a large budget, more queries than builtMaxAnswers.
	b, grown = &builtAnswers{budget: 1 << 40}, 0
	for _, q := range qs {
		offerTwice(q, builtMinSize)
	}
	n := 0
	for _, q := range qs {
		if b.lookup(q) != nil {
			n++
		}
	}
	if n != builtMaxAnswers || b.footprint() != int64(n)*builtMinSize || grown < b.footprint() {
		t.Errorf("%d kept, grew by %d, footprint %d; want %d kept", n, grown, b.footprint(), builtMaxAnswers)
	}

	// Many queries seen once are forgotten, the kept answers stay.
	for i := range 4 * builtMaxSeen {
		b.offer(fmt.Sprintf("offset=%d", i), builtMinSize, 1, `"e"`, fill(builtMinSize), grew)
	}
	if len(b.m) > builtMaxSeen+builtMaxAnswers || b.footprint() != int64(n)*builtMinSize {
		t.Errorf("%d queries remembered, %d bytes kept", len(b.m), b.footprint())
	}
}

// Offers, lookups and gzipped copies from many requests at once keep the
// count of bytes kept exact and within the bounds (run with -race).
func TestBuiltAnswersConcurrent(t *testing.T) {
	b := &builtAnswers{budget: 4 * builtMinSize}
	body := func(k int) func(*bytes.Buffer) {
		return func(buf *bytes.Buffer) { buf.Write(bytes.Repeat([]byte{byte('a' + k)}, builtMinSize+k)) }
	}
	var told atomic.Int64
	grew := func(n int64) {
		if n < 0 {
			t.Errorf("told of %d bytes: shrinking is not told", n)
		}
		told.Add(n)
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 300 {
				k := (g*7 + i) % 12
				key := fmt.Sprintf("k=%d", k)
				ba := b.lookup(key)
				if ba == nil {
					ba = b.offer(key, builtMinSize+k, k, `"e"`, body(k), grew)
				}
				if ba == nil {
					continue
				}
				if len(ba.body) != builtMinSize+k || ba.body[0] != byte('a'+k) || ba.total != k {
					t.Errorf("%s: a body of %d bytes of %q, total %d", key, len(ba.body), ba.body[0], ba.total)
					return
				}
				if i%3 == 0 && len(ba.gzipped(grew)) == 0 {
					t.Error("empty gzipped copy")
				}
			}
		}()
	}
	wg.Wait()
	b.mu.RLock()
	defer b.mu.RUnlock()
	var sum, n int64
	for _, ba := range b.m {
		if ba.body != nil {
			sum += int64(len(ba.body)) + ba.gzBytes
			n++
		}
	}
	if sum != b.bytes || n > builtMaxAnswers || told.Load() < sum {
		t.Errorf("kept %d answers of %d bytes, counted %d, told %d", n, sum, b.bytes, told.Load())
	}
	if bodies := sum; bodies > b.budget+builtMinSize { // a copy of an answer alone may pass it
		t.Errorf("kept %d bytes for a budget of %d", bodies, b.budget)
	}
}
