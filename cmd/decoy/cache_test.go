package main_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/decoy-mock/decoy/client"
)

// With --max-cache-bytes smaller than the mocks read in turn, each read
// still answers its mock whole, and the mocks that had to leave memory are
// counted in /metrics.
func TestMaxCacheBytes(t *testing.T) {
	p := start(t, t.TempDir(), "--admin-token", adminToken, "--max-cache-bytes", "64KiB", "--rate-limit", "0")
	docs := make([]string, 4)
	ids := make([]string, len(docs))
	for i := range docs {
		var b strings.Builder
		b.WriteString("[")
		for j := range 400 {
			if j > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, `{"id":%d,"mock":%d,"text":"record %d of mock %d"}`, j, i, j, i)
		}
		b.WriteString("]")
		docs[i] = b.String() // about 17 KiB
		ids[i] = createMock(t, p, docs[i], client.CreateOptions{}).ID
	}
	for round := range 3 {
		for i, id := range ids {
			if a := get(t, p.url+"/mock/"+id); a.status != 200 || a.body != docs[i] {
				t.Fatalf("round %d, mock %d: %d, %d bytes (want %d)", round, i, a.status, len(a.body), len(docs[i]))
			}
			if a := get(t, p.url+"/mock/"+id+"?order_by=text&limit=1"); a.status != 200 || !strings.Contains(a.body, fmt.Sprintf(`"mock":%d`, i)) {
				t.Fatalf("round %d, mock %d ordered: %d %s", round, i, a.status, a.body)
			}
		}
	}
	metrics := get(t, p.url+"/metrics").body
	m := regexp.MustCompile(`(?m)^decoy_cache_evictions_total (\S+)$`).FindStringSubmatch(metrics)
	if m == nil {
		t.Fatal("no decoy_cache_evictions_total in /metrics")
	}
	if n, _ := strconv.ParseFloat(m[1], 64); n < 4 {
		t.Errorf("decoy_cache_evictions_total = %s after reading 4 mocks of ~17 KiB 3 times within 64 KiB, want at least 4", m[1])
	}
	b := regexp.MustCompile(`(?m)^decoy_cache_bytes (\S+)$`).FindStringSubmatch(metrics)
	if b == nil {
		t.Fatal("no decoy_cache_bytes in /metrics")
	}
	if n, _ := strconv.ParseFloat(b[1], 64); n <= 0 || n > 2*64<<10 {
		t.Errorf("decoy_cache_bytes = %s, want within twice the 64 KiB bound", b[1])
	}
}

// --max-cache-bytes takes sizes and 0 (no bound), and refuses the rest.
func TestMaxCacheBytesFlag(t *testing.T) {
	for _, bad := range []string{"-1", "lots", "1TB"} {
		out, err := exec.Command(binary, "serve", "--addr", "127.0.0.1:0", "--data-dir", t.TempDir(), "--max-cache-bytes", bad).CombinedOutput()
		if err == nil || !strings.Contains(string(out), "invalid size") {
			t.Errorf("--max-cache-bytes %s: %v %s", bad, err, out)
		}
	}
	p := start(t, t.TempDir(), "--admin-token", adminToken, "--max-cache-bytes", "0MiB")
	m := createMock(t, p, `[1,2]`, client.CreateOptions{})
	if a := get(t, p.url+"/mock/"+m.ID); a.status != 200 || a.body != "[1,2]" {
		t.Errorf("with no bound: %d %s", a.status, a.body)
	}
}

// With --max-open-documents, many mocks read in turn keep at most that
// many documents mapped, and no file open: thousands of small mocks (held
// in memory) and enough large ones (mapped) to pass the bound all answer
// whole, and listing still works.
func TestMaxOpenDocuments(t *testing.T) {
	const bound, small, large = 16, 3000, 3 * 16
	dir := t.TempDir()
	p := start(t, dir, "--admin-token", adminToken, "--max-open-documents", strconv.Itoa(bound), "--rate-limit", "0")
	docs := map[string]string{}
	var ids []string
	var mu sync.Mutex
	var wg sync.WaitGroup
	work := make(chan int)
	for range 4 {
		wg.Go(func() {
			for i := range work {
				doc := fmt.Sprintf(`[{"mock":%d,"text":%q}]`, i, strings.Repeat("s", 100))
				if i >= small { // over docfile.MinMapSize: mapped
					doc = fmt.Sprintf(`[{"mock":%d,"text":%q}]`, i, strings.Repeat("l", 64<<10))
				}
				m := createMock(t, p, doc, client.CreateOptions{})
				mu.Lock()
				docs[m.ID] = doc
				ids = append(ids, m.ID)
				mu.Unlock()
			}
		})
	}
	for i := range small + large {
		work <- i
	}
	close(work)
	wg.Wait()
	docsDir := filepath.Join(dir, "docs")
	for round := range 2 {
		for k, id := range ids {
			if a := get(t, p.url+"/mock/"+id); a.status != 200 || a.body != docs[id] {
				t.Fatalf("round %d, mock %s: %d, %d bytes (want %d)", round, id, a.status, len(a.body), len(docs[id]))
			}
			if k%500 == 0 || k == len(ids)-1 {
				fds, maps := openDocuments(t, p.cmd.Process.Pid, docsDir)
				if fds > 2 || maps > bound+2 {
					t.Fatalf("round %d, after %d reads: %d files and %d mappings of documents open; bound %d", round, k+1, fds, maps, bound)
				}
			}
		}
	}
	listed := 0
	for cursor := ""; ; {
		page, next, err := p.admin().ListMocks(context.Background(), cursor, 1000)
		if err != nil {
			t.Fatal(err)
		}
		listed += len(page)
		if next == "" {
			break
		}
		cursor = next
	}
	if listed != len(ids) {
		t.Errorf("listed %d mocks, want %d", listed, len(ids))
	}
	metrics := get(t, p.url+"/metrics").body
	m := regexp.MustCompile(`(?m)^decoy_cache_mapped_documents (\S+)$`).FindStringSubmatch(metrics)
	if m == nil {
		t.Fatal("no decoy_cache_mapped_documents in /metrics")
	}
	if n, _ := strconv.Atoi(m[1]); n < 1 || n > bound {
		t.Errorf("decoy_cache_mapped_documents = %s, want 1 to %d", m[1], bound)
	}
}

// openDocuments counts the descriptors and the mappings process pid has
// open on files under dir (skipping the test where /proc is missing).
func openDocuments(t *testing.T, pid int, dir string) (fds, maps int) {
	t.Helper()
	proc := filepath.Join("/proc", strconv.Itoa(pid))
	entries, err := os.ReadDir(filepath.Join(proc, "fd"))
	if err != nil {
		t.Skip("no /proc")
	}
	for _, e := range entries {
		if target, err := os.Readlink(filepath.Join(proc, "fd", e.Name())); err == nil && strings.HasPrefix(target, dir) {
			fds++
		}
	}
	b, err := os.ReadFile(filepath.Join(proc, "maps"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.Contains(line, " "+dir+"/") {
			maps++
		}
	}
	return fds, maps
}

// A large document's gzipped copy, and a large kept answer's, are kept in
// files of the data directory (the answer itself, under 4 MiB, in memory) and sent from there (with sendfile): whole,
// with their length, and the same bytes read after read; the files are
// counted in decoy_cache_bytes.
func TestLargeBodiesFromFiles(t *testing.T) {
	dir := t.TempDir()
	p := start(t, dir, "--admin-token", adminToken, "--rate-limit", "0")
	var b strings.Builder
	b.WriteString("[")
	for j := range 20_000 {
		if j > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `{"id":%d,"name":"user %d","score":%d,"text":"%x"}`, j, j, (j*7919)%20_000, j*104729)
	}
	b.WriteString("]")
	doc := b.String() // about 1.3 MB
	id := createMock(t, p, doc, client.CreateOptions{}).ID
	for _, path := range []string{"/mock/" + id, "/mock/" + id + "?order_by=score"} {
		var first []byte
		for i := range 3 { // built, kept, sent as kept
			req, _ := http.NewRequest(http.MethodGet, p.url+path, nil)
			req.Header.Set("Accept-Encoding", "gzip")
			resp, err := http.DefaultTransport.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			body, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil || resp.StatusCode != 200 || resp.Header.Get("Content-Encoding") != "gzip" {
				t.Fatalf("%s, read %d: %v %d %q", path, i, err, resp.StatusCode, resp.Header.Get("Content-Encoding"))
			}
			if i > 0 && (resp.ContentLength != int64(len(body)) || !bytes.Equal(body, first)) {
				t.Fatalf("%s, read %d: %d bytes, Content-Length %d; want the %d bytes of the first read", path, i, len(body), resp.ContentLength, len(first))
			}
			zr, err := gzip.NewReader(bytes.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			plain, err := io.ReadAll(zr)
			if err != nil || len(plain) != len(doc) {
				t.Fatalf("%s, read %d: %v, %d bytes unpacked, want %d", path, i, err, len(plain), len(doc))
			}
			first = body
		}
	}
	entries, err := os.ReadDir(filepath.Join(dir, "tmp"))
	if err != nil {
		t.Fatal(err)
	}
	kept := 0
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "kept-") {
			kept++
		}
	}
	if kept < 2 {
		t.Errorf("%d kept bodies in files, want the document's gzipped copy and the answer's", kept)
	}
	m := regexp.MustCompile(`(?m)^decoy_cache_bytes (\S+)$`).FindStringSubmatch(get(t, p.url+"/metrics").body)
	if n, _ := strconv.ParseFloat(m[1], 64); n < float64(2*len(doc)) {
		t.Errorf("decoy_cache_bytes = %s, want at least the document and the kept answer (%d bytes each)", m[1], len(doc))
	}
}
