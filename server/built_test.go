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
)

// etagHeader is the header's name as the server sets it (and as the
// recorder keeps it): not canonical, as is usual for ETag.
var etagHeader = "ETag"

// An answer asked for again is kept (built.go) and sent from what was
// kept: the same status, headers and bytes as when built from the records,
// gzipped or not, for HEAD and If-None-Match alike; one of a query string
// with a token is never kept; what is kept counts in the entry's footprint.
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
	kept := func(raw string) []byte {
		e := s.cache.Peek(id)
		if e == nil || !e.IsArray() {
			t.Fatal("no entry, or not an array")
		}
		return e.Kept(raw)
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
	s.cache.Peek(id).SetKeepBudget(1 << 30)
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
		{"filters=tag%3Dx&order_by=name&limit=10", "3000", true},
		{"auth_token=abc&order_by=age", "3000", false}, // a token: compiled afresh
	} {
		t.Run(tc.raw, func(t *testing.T) {
			first := get("?" + tc.raw)
			if first.Code != http.StatusOK || first.Header().Get("X-Total-Count") != tc.total {
				t.Fatalf("%d, X-Total-Count %q: %.200s", first.Code, first.Header().Get("X-Total-Count"), first.Body)
			}
			before := s.cache.Peek(id).Footprint()
			for i := range 3 {
				same("again", get("?"+tc.raw), first)
				if i == 0 && !tc.keep && kept(tc.raw) != nil {
					t.Fatal("kept")
				}
			}
			if got := kept(tc.raw); (got != nil) != tc.keep {
				t.Fatalf("kept: %v, want %v", got != nil, tc.keep)
			} else if got != nil {
				if !bytes.Equal(got, first.Body.Bytes()) {
					t.Fatal("the body kept is not the answer")
				}
				// The body, and the entry it is kept under (its key
				// and about 160 bytes).
				if grew := s.cache.Peek(id).Footprint() - before; grew < int64(len(got)) || grew > int64(len(got)+len(tc.raw)+256) {
					t.Errorf("footprint grew by %d, want the %d bytes kept and their entry", grew, len(got))
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
			before = s.cache.Peek(id).Footprint()
			if gz := get("?"+tc.raw, "Accept-Encoding", "gzip"); gz.Header().Get("Content-Encoding") == "gzip" {
				gzipped[tc.raw] = gz.Body.Bytes()
				// Its array may be up to an eighth larger than the copy.
				if grew, n := s.cache.Peek(id).Footprint()-before, int64(gz.Body.Len()); tc.keep && (grew < n || grew > n+n/8) {
					t.Errorf("footprint grew by %d with the gzipped copy, want its %d bytes", grew, n)
				}
				// A kept answer's gzipped copy is sent with its length;
				// one gzipped on the fly, without.
				if cl, want := gz.Header().Get("Content-Length"), map[bool]string{true: strconv.Itoa(gz.Body.Len())}[tc.keep]; cl != want {
					t.Errorf("gzip Content-Length %q, want %q", cl, want)
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
			} else if first.Body.Len() >= 1024 {
				t.Error("an answer of 1 KiB or more not gzipped")
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
