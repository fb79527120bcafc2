package main_test

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/decoy-mock/decoy/client"
)

// rssOverhead is what the process may hold besides what --max-cache-bytes
// bounds, at the peak of its resident set (VmHWM):
//   - 64 MiB: the binary's own pages and the runtime (about 30 MiB at
//     start, more once the admin API and the store have run; see Memory in
//     docs/production.md), the collector's floor (it lets the heap grow to 16 MiB
//     however little is live: gc.go), the upload of the document, and the
//     answer and buffers of the request under way;
//   - half the bound: garbage, until the next collection. The collector
//     lets the heap grow to 1.5× of what is live (GOGC=50, gc.go), and
//     what the cache keeps live is at most the bound.
//
// Measured: 57 MiB (the array of numbers) and 85 MiB (the objects) at a
// bound of 32 MiB, 294 MiB and 436 MiB for arrays of 20 MiB at 256 MiB;
// before the cache kept its bound while read, 551 MiB and 174 MiB at
// 32 MiB.
func rssOverhead(bound int64) int64 { return 64<<20 + bound/2 }

// Anonymous reads that each order a large array by a new path keep the
// cache within --max-cache-bytes after every read, the mock being read
// included, and the process's memory within the bound and a fixed
// overhead: each path used to keep a column and a sort order of the whole
// document (up to 64 of them), and the mock being read was never dropped.
// Paths that reach nothing (an array of numbers) and paths that reach a
// value in some records (objects with 64 distinct fields) alike.
func TestCacheBoundOrderByPaths(t *testing.T) {
	const bound = 32 << 20
	for _, tc := range []struct {
		name string
		doc  func() string
		want func(i int) string // the answer of order_by=k<i>&limit=1
	}{
		// 1 Mi records of "0": 2 MiB.
		{"numbers", func() string { return "[" + strings.Repeat("0,", 1<<20-1) + "0]" }, func(int) string { return "[0]" }},
		// 256 Ki records, record r with field k<r%64> holding r: about
		// 3.5 MiB. Ordered by k<i>, record i (the smallest value) comes
		// first, and those without the field last.
		{"fields", func() string {
			var b strings.Builder
			b.WriteByte('[')
			for r := range 256 << 10 {
				if r > 0 {
					b.WriteByte(',')
				}
				fmt.Fprintf(&b, `{"k%d":%d}`, r%64, r)
			}
			b.WriteByte(']')
			return b.String()
		}, func(i int) string { return fmt.Sprintf(`[{"k%d":%d}]`, i, i) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := start(t, t.TempDir(), "--admin-token", adminToken, "--max-cache-bytes", strconv.Itoa(bound))
			m := createMock(t, p, tc.doc(), client.CreateOptions{})
			for i := range 40 {
				// No token, the default rate limit (100 a minute).
				a := get(t, fmt.Sprintf("%s/mock/%s?order_by=k%d&limit=1", p.url, m.ID, i))
				if a.status != 200 || a.body != tc.want(i) {
					t.Fatalf("read %d: %d %.200s, want %s", i, a.status, a.body, tc.want(i))
				}
				if n := cacheBytes(t, p); n > bound {
					t.Fatalf("after read %d: decoy_cache_bytes %d, over --max-cache-bytes %d", i, n, bound)
				}
			}
			if hwm, limit := peakRSS(t, p.cmd.Process.Pid), bound+rssOverhead(bound); hwm > limit {
				t.Errorf("peak RSS %d MiB, over the bound and its overhead (%d MiB)", hwm>>20, limit>>20)
			} else {
				t.Logf("peak RSS %d MiB (limit %d MiB), decoy_cache_bytes %d MiB", hwm>>20, limit>>20, cacheBytes(t, p)>>20)
			}
		})
	}
}

// Many distinct queries over several documents (filters, orders, offsets,
// gzipped answers, repeated so that answers are kept) leave the cache
// within --max-cache-bytes at the end of the load and once idle: the bound
// used to be enforced after the fact, to 7/8 of it, from an approximate
// count.
func TestCacheBoundManyQueries(t *testing.T) {
	const bound = 16 << 20
	p := start(t, t.TempDir(), "--admin-token", adminToken, "--max-cache-bytes", strconv.Itoa(bound), "--rate-limit", "0")
	var ids []string
	for d := range 3 {
		var b strings.Builder
		b.WriteByte('[')
		for r := range 30000 { // about 3.3 MiB
			if r > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `{"id":%d,"doc":%d,"city":"c%d","age":%d,"name":"name %d of %d","tags":["t%d","u%d"],"score":%d.5}`,
				r, d, r%97, r%83, r, d, r%7, r%11, (r*7919)%100003)
		}
		b.WriteByte(']')
		ids = append(ids, createMock(t, p, b.String(), client.CreateOptions{}).ID)
	}
	fields := []string{"id", "city", "age", "name", "tags", "score", "doc"}
	query := func(k int) string {
		switch k % 5 {
		case 0:
			return fmt.Sprintf("order_by=%s&limit=%d", fields[k%7], 1+k%50)
		case 1:
			return fmt.Sprintf("filters=city%%3Dc%d&order_by=%s&order_direction=desc", k%97, fields[(k/5)%7])
		case 2:
			return fmt.Sprintf("filters=tags%%3Dt%d%%26age%%5B%%24ne%%5D%%3D%d&offset=%d", k%7, k%83, k%20)
		case 3:
			return fmt.Sprintf("order_by=%s&offset=%d&limit=2000", fields[k%7], k)
		default:
			return fmt.Sprintf("filters=name%%5B%%24eqi%%5D%%3DNAME%%20%d%%20OF%%20%d&limit=5", k, k%3)
		}
	}
	// Four clients at once, as the load that showed the bound passed.
	work := make(chan int)
	var wg sync.WaitGroup
	var failed atomic.Bool
	for range 4 {
		wg.Go(func() {
			for i := range work {
				k := i % 200
				url := fmt.Sprintf("%s/mock/%s?%s", p.url, ids[k%3], query(k))
				status, err := read(url, i%2 == 0)
				if (err != nil || status != 200) && !failed.Swap(true) {
					t.Errorf("read %d (%s): %d %v", i, url, status, err)
				}
			}
		})
	}
	// Meanwhile /metrics is read over and over: the bound holds at all
	// times, not only once the load is done.
	stop := make(chan struct{})
	peak := make(chan int64)
	go func() {
		var top int64
		for {
			select {
			case <-stop:
				peak <- top
				return
			default:
			}
			if n, err := metric(p.url, cacheBytesLine); err == nil {
				top = max(top, n)
			}
		}
	}()
	for i := range 400 {
		work <- i
	}
	close(work)
	wg.Wait()
	close(stop)
	if top := <-peak; top > bound {
		t.Errorf("during the load: decoy_cache_bytes reached %d, over --max-cache-bytes %d", top, bound)
	}
	if n := cacheBytes(t, p); n > bound {
		t.Errorf("at the end of the load: decoy_cache_bytes %d, over --max-cache-bytes %d", n, bound)
	} else {
		t.Logf("at the end of the load: decoy_cache_bytes %d MiB of %d", n>>20, bound>>20)
	}
}

var cacheBytesLine = regexp.MustCompile(`(?m)^decoy_cache_bytes (\S+)$`)

// cacheBytes returns decoy_cache_bytes from /metrics.
func cacheBytes(t *testing.T, p *proc) int64 {
	t.Helper()
	n, err := metric(p.url, cacheBytesLine)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// metric returns the value of the metric that line finds in the /metrics
// of the server at url.
func metric(url string, line *regexp.Regexp) (int64, error) {
	resp, err := http.Get(url + "/metrics")
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, err
	}
	m := line.FindSubmatch(b)
	if m == nil {
		return 0, fmt.Errorf("not in /metrics: %s", line)
	}
	n, err := strconv.ParseFloat(string(m[1]), 64)
	return int64(n), err
}

// read GETs url, gzipped or not, reads the answer whole and returns its
// status.
func read(url string, gzipped bool) (int, error) {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return 0, err
	}
	if gzipped {
		req.Header.Set("Accept-Encoding", "gzip")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	_, err = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, err
}

// peakRSS returns the peak resident set of process pid (VmHWM), skipping
// the test where /proc is missing.
func peakRSS(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Skip("no /proc")
	}
	m := regexp.MustCompile(`(?m)^VmHWM:\s+(\d+) kB$`).FindSubmatch(b)
	if m == nil {
		t.Fatalf("no VmHWM in /proc/%d/status", pid)
	}
	n, _ := strconv.ParseInt(string(m[1]), 10, 64)
	return n << 10
}
