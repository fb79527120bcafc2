package main

import (
	"compress/gzip"
	"io"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
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
		"a.json":     {Data: []byte(plain)},
		"a.json.gz":  {Data: []byte(packed)},
		"b.json":     {Data: []byte(`[]`)},
		"dir/c.json": {Data: []byte(`[]`)},
	}, 1<<20)
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
		{"a folder", "GET", "/dir", "", 404, "", "", "404 page not found\n"},
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

func TestFolderOnDisk(t *testing.T) {
	root := t.TempDir()
	if err := os.Mkdir(filepath.Join(root, "floor"), 0o755); err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	newFiles(os.DirFS(root), 1<<20).ServeHTTP(rec, httptest.NewRequest("GET", "/floor", nil))
	if rec.Code != 404 {
		t.Fatalf("a folder answered %d, want 404", rec.Code)
	}
}

func TestKeptBounded(t *testing.T) {
	big := strings.Repeat("x", 3000)
	f := newFiles(fstest.MapFS{
		"a.json": {Data: []byte(big)},
		"b.json": {Data: []byte(big)},
		"c.json": {Data: []byte(big)},
	}, 7200)
	for _, tc := range []struct {
		name string
		kept []string
	}{
		{"a.json", []string{"a.json"}},
		{"b.json", []string{"a.json", "b.json"}},
		{"nothing.json", []string{"a.json", "b.json", "nothing.json"}}, // 6,000 and 1 KiB: fits
		{"c.json", []string{"c.json"}},                                 // past 7,200: the others are dropped
		{"a.json", []string{"a.json", "c.json"}},
	} {
		if _, err := f.get(tc.name); err != nil {
			t.Fatal(err)
		}
		var kept []string
		for name := range f.kept {
			kept = append(kept, name)
		}
		slices.Sort(kept)
		if !slices.Equal(kept, tc.kept) {
			t.Errorf("after %s, kept %v, want %v", tc.name, kept, tc.kept)
		}
	}
	if f.bytes > f.budget {
		t.Errorf("%d bytes kept, over the bound of %d", f.bytes, f.budget)
	}
}

// TestHead: the headers in NAME.head, and NAME.gz.head for the gzipped file,
// are sent with the file, as Decoy sent them with the same answer; the
// length is the file's own.
func TestHead(t *testing.T) {
	packed := gzipped(t, `[{"id":1}]`)
	srv := newFiles(fstest.MapFS{
		"a.json":         {Data: []byte(`[{"id":1}]`)},
		"a.json.head":    {Data: []byte("Etag: \"p\"\r\nVary: Accept-Encoding\r\nX-Total-Count: 1\r\nContent-Length: 999\r\n")},
		"a.json.gz":      {Data: []byte(packed)},
		"a.json.gz.head": {Data: []byte("Content-Encoding: gzip\r\nEtag: \"p-gzip\"\r\nVary: Accept-Encoding\r\n")},
		"bad.json":       {Data: []byte(`[]`)},
		"bad.json.head":  {Data: []byte("no colon here\r\n")},
	}, 1<<20)
	for _, tc := range []struct {
		accept, etag, total, length string
	}{
		{"", `"p"`, "1", "10"},
		{"gzip", `"p-gzip"`, "", strconv.Itoa(len(packed))},
	} {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest("GET", "/a.json", nil)
		req.Header.Set("Accept-Encoding", tc.accept)
		srv.ServeHTTP(rec, req)
		h := rec.Header()
		if h.Get("Etag") != tc.etag || h.Get("X-Total-Count") != tc.total || h.Get("Vary") != "Accept-Encoding" {
			t.Errorf("accept %q: headers %v, want the .head file's", tc.accept, h)
		}
		if got := h.Get("Content-Length"); got != tc.length {
			t.Errorf("accept %q: Content-Length %s, want the file's %s", tc.accept, got, tc.length)
		}
	}
	rec := httptest.NewRecorder()
	srv.ServeHTTP(rec, httptest.NewRequest("GET", "/bad.json", nil))
	if rec.Code != 500 {
		t.Errorf("a malformed .head answered %d, want 500", rec.Code)
	}
}
