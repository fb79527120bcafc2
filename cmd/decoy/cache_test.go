package main_test

import (
	"fmt"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
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
