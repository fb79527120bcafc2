package server

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/decoy-mock/decoy/query"
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
		return e.built.lookup(s.queries.get(raw).q)
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
				if cl := gz.Header().Get("Content-Length"); tc.keep && cl != strconv.Itoa(gz.Body.Len()) {
					t.Errorf("gzip Content-Length %q for %d bytes", cl, gz.Body.Len())
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
	offerTwice := func(q *query.Query, size int) *builtAnswer {
		if ba := b.offer(q, size, 1, `"e"`, fill(size), grew); ba != nil {
			t.Fatal("kept the first time it was offered")
		}
		return b.offer(q, size, 1, `"e"`, fill(size), grew)
	}
	qs := make([]*query.Query, builtMaxAnswers+2)
	for i := range qs {
		qs[i] = new(query.Query)
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
	// 3 gets a gzipped copy, which counts; then 1 is sent: 2 is the least
	// recently sent, then 3.
	if gz := b.lookup(qs[3]).gzipped(grew); len(gz) == 0 || b.footprint() != 3*builtMinSize+int64(len(gz)) {
		t.Fatalf("footprint %d with a gzipped copy of %d bytes", b.footprint(), len(gz))
	}
	b.lookup(qs[1])
	// 4 needs room for its body: 2 leaves, and 3, with its gzipped copy.
	if offerTwice(qs[4], builtMinSize) == nil {
		t.Fatal("answer 4 not kept")
	}
	for i, want := range []bool{false, true, false, false, true} {
		if got := b.lookup(qs[i]) != nil; got != want {
			t.Errorf("answer %d kept: %v, want %v", i, got, want)
		}
	}
	if grown != 2*builtMinSize || b.footprint() != grown {
		t.Errorf("grew by %d, footprint %d, want %d", grown, b.footprint(), 2*builtMinSize)
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
	if n != builtMaxAnswers || grown != int64(n)*builtMinSize || b.footprint() != grown {
		t.Errorf("%d kept, grew by %d, footprint %d; want %d kept", n, grown, b.footprint(), builtMaxAnswers)
	}

	// Many queries seen once are forgotten, the kept answers stay.
	for range 4 * builtMaxSeen {
		b.offer(new(query.Query), builtMinSize, 1, `"e"`, fill(builtMinSize), grew)
	}
	if len(b.m) > builtMaxSeen+builtMaxAnswers || b.footprint() != int64(n)*builtMinSize {
		t.Errorf("%d queries remembered, %d bytes kept", len(b.m), b.footprint())
	}
}
