package main

import (
	"compress/gzip"
	"io"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"
)

func gzipped(t *testing.T, s string) string {
	t.Helper()
	var b strings.Builder
	zw := gzip.NewWriter(&b)
	if _, err := io.WriteString(zw, s); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestFiles(t *testing.T) {
	plain, packed := `[{"id":1}]`, gzipped(t, `[{"id":1}]`)
	srv := newFiles(fstest.MapFS{
		"a.json":    {Data: []byte(plain)},
		"a.json.gz": {Data: []byte(packed)},
		"b.json":    {Data: []byte(`[]`)},
	})
	for _, tc := range []struct {
		name, method, path, accept string
		status                     int
		encoding, length, body     string
	}{
		{"plain", "GET", "/a.json", "", 200, "", "10", plain},
		{"gzip accepted", "GET", "/a.json", "gzip, deflate, br", 200, "gzip", strconv.Itoa(len(packed)), packed},
		{"gzip accepted, no .gz", "GET", "/b.json", "gzip", 200, "", "2", `[]`},
		{"head", "HEAD", "/a.json", "", 200, "", "10", ""},
		{"missing", "GET", "/c.json", "", 404, "", "", "404 page not found\n"},
		{"outside the root", "GET", "/../a.json", "", 200, "", "10", plain},
		{"post", "POST", "/a.json", "", 405, "", "", "method not allowed\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := httptest.NewRequest(tc.method, tc.path, nil)
			if tc.accept != "" {
				req.Header.Set("Accept-Encoding", tc.accept)
			}
			for range 2 { // the second answer comes from the kept copy
				rec := httptest.NewRecorder()
				srv.ServeHTTP(rec, req)
				if rec.Code != tc.status {
					t.Fatalf("status %d, want %d", rec.Code, tc.status)
				}
				if got := rec.Header().Get("Content-Encoding"); got != tc.encoding {
					t.Errorf("Content-Encoding %q, want %q", got, tc.encoding)
				}
				if got := rec.Body.String(); got != tc.body {
					t.Errorf("body %q, want %q", got, tc.body)
				}
				if got := rec.Header().Get("Content-Length"); tc.length != "" && got != tc.length {
					t.Errorf("Content-Length %s, want %s", got, tc.length)
				}
			}
		})
	}
}
