package testservice

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestSummary(t *testing.T) {
	var s skips
	if got := s.summary("./x"); got != "" {
		t.Errorf("nothing skipped: %q", got)
	}
	s.add("PostgreSQL", "no initdb found: apt-get install postgresql")
	s.add("Redis", "no redis-server found")
	s.add("PostgreSQL", "no initdb found: apt-get install postgresql")
	s.add("Redis", "another reason")
	want := "skipped in ./x: 2 PostgreSQL tests (no initdb found: apt-get install postgresql), " +
		"2 Redis tests (no redis-server found; another reason)"
	if got := s.summary("./x"); got != want {
		t.Errorf("summary:\n got %q\nwant %q", got, want)
	}
	var one skips
	one.add("browser", "no Chromium")
	if got, want := one.summary("./studio"), "skipped in ./studio: 1 browser test (no Chromium)"; got != want {
		t.Errorf("summary:\n got %q\nwant %q", got, want)
	}
}

// Off PATH, the newest version's binaries are found, 15 before 9.6.
func TestPostgresBinDir(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	root := t.TempDir()
	glob := filepath.Join(root, "*", "bin")
	if dir, ok := postgresBinDir(glob); ok {
		t.Fatalf("found %s in an empty tree", dir)
	}
	for _, v := range []string{"9.6", "15", "13", "16"} {
		bin := filepath.Join(root, v, "bin")
		if err := os.MkdirAll(bin, 0o755); err != nil {
			t.Fatal(err)
		}
		if v != "16" { // no initdb: not a server install
			if err := os.WriteFile(filepath.Join(bin, "initdb"), nil, 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	if dir, ok := postgresBinDir(glob); !ok || dir != filepath.Join(root, "15", "bin") {
		t.Errorf("postgresBinDir = %q, %v; want 15's", dir, ok)
	}
}

// TestSkipLineShown: go test, without -v and with its output in a pipe
// (a CI log), prints the line of what was skipped, and prints it again on
// the next run rather than a cached "ok" without it; a run that skips
// nothing prints none.
func TestSkipLineShown(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go test")
	}
	const line = "skipped in ./internal/testservice/testdata/skips: 1 widget test (set WIDGET=1)\n"
	for run := range 2 {
		cmd := exec.Command("go", "test", "./testdata/skips")
		cmd.Env = append(os.Environ(), "WIDGET=")
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), line) || strings.Contains(string(out), "(cached)") {
			t.Errorf("run %d: %v\n%s", run+1, err, out)
		}
	}
	cmd := exec.Command("go", "test", "-count=1", "./testdata/skips")
	cmd.Env = append(os.Environ(), "WIDGET=1")
	if out, err := cmd.CombinedOutput(); err != nil || strings.Contains(string(out), "skipped") {
		t.Errorf("with WIDGET=1: %v\n%s", err, out)
	}
	os.Remove(filepath.Join("testdata", "skips", skippedMarker))
}
