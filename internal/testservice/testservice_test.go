package testservice

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
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
// the next run rather than a cached "ok" without it, even when the run went
// on long after the skip; a run that skips nothing prints none.
func TestSkipLineShown(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go test")
	}
	const line = "skipped in ./internal/testservice/testdata/skips: 1 widget test (set WIDGET=1)\n"
	for _, long := range []string{"", "1"} { // 1: a run long after its skip
		for run := range 2 {
			cmd := exec.Command("go", "test", "./testdata/skips")
			cmd.Env = append(os.Environ(), "WIDGET=", "LONG_RUN="+long)
			out, err := cmd.CombinedOutput()
			if err != nil || !strings.Contains(string(out), line) || strings.Contains(string(out), "(cached)") {
				t.Errorf("LONG_RUN=%s, run %d: %v\n%s", long, run+1, err, out)
			}
		}
	}
	cmd := exec.Command("go", "test", "-count=1", "./testdata/skips")
	cmd.Env = append(os.Environ(), "WIDGET=1")
	if out, err := cmd.CombinedOutput(); err != nil || strings.Contains(string(out), "skipped") {
		t.Errorf("with WIDGET=1: %v\n%s", err, out)
	}
	os.Remove(filepath.Join("testdata", "skips", skippedMarker))
}

// TestRunSummary: the run's line adds up each group over the packages
// that skipped it, names them, and keeps each distinct reason once.
func TestRunSummary(t *testing.T) {
	if got := runSummary(nil); got != "" {
		t.Errorf("nothing skipped: %q", got)
	}
	recs := []packageRecord{
		{"./redis", []group{{"Redis", 3, []string{"no redis-server found on PATH: apt-get install redis-server"}}}},
		{"./cmd/decoy", []group{
			{"Docker", 1, []string{"no docker command: install Docker"}},
			{"Redis", 2, []string{"no redis-server found on PATH: apt-get install redis-server"}},
		}},
		{"./studio", []group{{"browser", 1, []string{"no Chromium"}}}},
	}
	want := "skipped in ./...: 1 Docker test in ./cmd/decoy (no docker command: install Docker), " +
		"5 Redis tests in ./cmd/decoy ./redis (no redis-server found on PATH: apt-get install redis-server), " +
		"1 browser test in ./studio (no Chromium)"
	if got := runSummary(recs); got != want {
		t.Errorf("runSummary:\n got %q\nwant %q", got, want)
	}
}

// TestTestsModule: a run of the whole module is told from a run of some
// of its packages by the go command's arguments.
func TestTestsModule(t *testing.T) {
	const root, path = "/src/decoy", "github.com/decoy-mock/decoy"
	for _, tc := range []struct {
		dir  string
		args []string
		want bool
	}{
		{root, []string{"go", "test", "./..."}, true},
		{root, []string{"go", "test", "-race", "-count=1", "./...", "-run", "X"}, true},
		{root, []string{"go", "test", "./cmd/decoy", "./..."}, true},
		{root + "/cmd", []string{"go", "test", "../..."}, true},
		{"/elsewhere", []string{"go", "test", "github.com/decoy-mock/decoy/..."}, true},
		{"/elsewhere", []string{"go", "test", root + "/..."}, true},
		{root, []string{"go", "test", "./postgres", "./redis"}, false},
		{root, []string{"go", "test", "./internal/..."}, false},
		{root + "/cmd", []string{"go", "test", "./..."}, false},
		{root, []string{"go", "test", "github.com/decoy-mock/decoy/internal/..."}, false},
		{root, []string{"go", "test", "all"}, false},
	} {
		g := goCommand{dir: tc.dir, args: tc.args}
		if got := g.testsModule(root, path); got != tc.want {
			t.Errorf("in %s, %v: %v, want %v", tc.dir, tc.args, got, tc.want)
		}
	}
}

// TestRunLine: go test ./... of a module, its output in a pipe (a CI
// log) and without -v, ends with one line of what its packages skipped,
// after every package's result, even one that ends after the last package
// has run its tests; and says it again on the next run. Each package's own
// line is not printed then; a run of some packages prints those instead.
func TestRunLine(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go test")
	}
	if _, ok := parentGo(); !ok {
		t.Skip("the run's line is gathered through /proc, on Linux, under go test")
	}
	mod := t.TempDir()
	copyFile(t, "../../go.mod", filepath.Join(mod, "go.mod"))
	copyFile(t, "../../go.sum", filepath.Join(mod, "go.sum"))
	sources, _ := filepath.Glob("*.go")
	for _, f := range sources {
		if !strings.HasSuffix(f, "_test.go") {
			copyFile(t, f, filepath.Join(mod, "internal", "testservice", f))
		}
	}
	const use = "import (\n\t\"os\"\n\t\"testing\"\n\t\"time\"\n\n\t\"github.com/decoy-mock/decoy/internal/testservice\"\n)\n\n" +
		"var _ = time.Second\n\nfunc TestMain(m *testing.M) { os.Exit(testservice.Main(m)) }\n"
	write(t, filepath.Join(mod, "a", "a_test.go"), "package a\n\n"+use+`
func TestWidget(t *testing.T) {
	if os.Getenv("WIDGET") != "1" {
		testservice.Skip(t, "widget", "set WIDGET=1")
	}
}
`)
	// b ends after z has run its tests, when asked to: z then waits for it.
	write(t, filepath.Join(mod, "b", "b_test.go"), "package b\n\n"+use+`
func TestGadget(t *testing.T) { testservice.Skip(t, "gadget", "set GADGET=1") }

func TestGadgetToo(t *testing.T) { testservice.Skip(t, "gadget", "set GADGET=1") }

func TestAfterZ(t *testing.T) {
	file := os.Getenv("Z_RAN")
	if file == "" {
		return
	}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(file); err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("z did not run")
		}
	}
}
`)
	write(t, filepath.Join(mod, "c", "c_test.go"), "package c\n\nimport \"testing\"\n\nfunc TestPlain(t *testing.T) {}\n")
	write(t, filepath.Join(mod, "z", "z_test.go"), `package z

import (
	"os"
	"testing"

	"github.com/decoy-mock/decoy/internal/testservice"
)

func TestMain(m *testing.M) { os.Exit(testservice.MainLast(m)) }

func TestNotCached(t *testing.T) { testservice.NotCached(t) }

func TestRan(t *testing.T) {
	if file := os.Getenv("Z_RAN"); file != "" {
		os.WriteFile(file, nil, 0o600)
	}
}
`)
	goTest := func(zRan string, args ...string) string {
		t.Helper()
		cmd := exec.Command("go", append([]string{"test", "-p", "4"}, args...)...)
		cmd.Dir = mod
		cmd.Env = append(os.Environ(), "WIDGET=", "Z_RAN="+zRan)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("go test %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	const line = "skipped in ./...: 1 widget test in ./a (set WIDGET=1), 2 gadget tests in ./b (set GADGET=1)"
	for run := range 2 {
		zRan := filepath.Join(t.TempDir(), "z-ran")
		out := goTest(zRan, "./...")
		lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
		n := len(lines)
		if n < 3 || lines[n-2] != line || !strings.HasPrefix(lines[n-1], "ok  \tgithub.com/decoy-mock/decoy/z\t") ||
			!strings.Contains(out, "ok  \tgithub.com/decoy-mock/decoy/b\t") || strings.Contains(out, "skipped in ./a") || strings.Contains(out, "skipped in ./b") {
			t.Errorf("run %d of go test ./...: want its last lines to be\n%s\nok  \tgithub.com/decoy-mock/decoy/z\t…\ngot:\n%s", run+1, line, out)
		}
	}
	out := goTest("", "./a", "./b")
	if !strings.Contains(out, "skipped in ./a: 1 widget test (set WIDGET=1)\n") || !strings.Contains(out, "skipped in ./b: 2 gadget tests (set GADGET=1)\n") ||
		strings.Contains(out, "skipped in ./...") {
		t.Errorf("go test ./a ./b: want each package's line, not the run's:\n%s", out)
	}
	if dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), runPrefix+"*")); len(dirs) > 0 {
		for _, d := range dirs {
			pid, started, _ := strings.Cut(strings.TrimPrefix(filepath.Base(d), runPrefix), "-")
			if n, _ := strconv.Atoi(pid); !running(n, started) {
				t.Errorf("the records of an ended run are left: %s", d)
			}
		}
	}
}

// TestReporterIsLast: the package that prints the run's line is the last
// that go test ./... runs, and the only one.
func TestReporterIsLast(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	cmd := exec.Command("go", "list", "-f", `{{.ImportPath}}{{range .TestGoFiles}} {{$.Dir}}/{{.}}{{end}}{{range .XTestGoFiles}} {{$.Dir}}/{{.}}{{end}}`, "./...")
	cmd.Dir = "../.."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	pkgs := strings.Split(strings.TrimSpace(string(out)), "\n")
	var reporters []string
	calls := func(files []string, fn string) bool {
		for _, f := range files {
			if b, err := os.ReadFile(f); err == nil && strings.Contains(string(b), "testservice."+fn+"(") {
				return true
			}
		}
		return false
	}
	for _, p := range pkgs {
		fields := strings.Fields(p)
		if !strings.HasSuffix(fields[0], "/internal/testservice") && calls(fields[1:], "MainLast") { // its tests write it in a module of theirs
			reporters = append(reporters, fields[0])
		}
	}
	last := strings.Fields(pkgs[len(pkgs)-1])
	if len(reporters) != 1 || reporters[0] != last[0] || !calls(last[1:], "NotCached") {
		t.Errorf("the packages calling testservice.MainLast are %v; want only %s, the last of go list ./..., which calls testservice.NotCached too", reporters, last[0])
	}
}

func write(t *testing.T, name, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	write(t, to, string(b))
}
