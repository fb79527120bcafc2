// Package testservice gives Decoy's tests the PostgreSQL and Redis they
// need, so that go test ./... runs them on any machine with the servers
// installed: the ones named by DECOY_TEST_POSTGRES_URL and
// DECOY_TEST_REDIS_URL when set (CI sets both), else private ones started
// from the installed binaries, once per test binary, in a temporary
// directory on a spare loopback port, and stopped when the tests end. The
// machine's own servers are never touched.
//
// A test that cannot have what it needs skips through Skip, and Main ends
// the run with one line naming what was skipped and how to enable it,
// shown by go test ./... without -v too, and never hidden by its cache.
//
// A package whose tests use it runs them through Main:
//
//	func TestMain(m *testing.M) { os.Exit(testservice.Main(m)) }
package testservice

import (
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"testing"
)

// Main runs the tests, stops the servers started for them, reports what was
// skipped, and returns the exit code for os.Exit.
func Main(m *testing.M) int {
	code := m.Run()
	stopAll()
	if line := skipped.summary(packagePath()); line != "" {
		report(line, code == 0)
	}
	return code
}

// Skip records that t cannot run because what (a "PostgreSQL" test, a
// "browser" test) is missing, for the reason given, which says how to
// enable it, and skips t.
func Skip(t testing.TB, what, reason string) {
	t.Helper()
	skipped.add(what, reason)
	markUncached()
	t.Skipf("%s: %s", what, reason)
}

var skipped skips

// skips counts the tests skipped for each missing thing, in the order first
// seen, with the distinct reasons given.
type skips struct {
	mu    sync.Mutex
	order []string
	n     map[string]int
	why   map[string][]string
}

func (s *skips) add(what, reason string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.n == nil {
		s.n, s.why = map[string]int{}, map[string][]string{}
	}
	if s.n[what] == 0 {
		s.order = append(s.order, what)
	}
	s.n[what]++
	if !slices.Contains(s.why[what], reason) {
		s.why[what] = append(s.why[what], reason)
	}
}

// summary is the one line that ends a run with skipped tests, or "".
func (s *skips) summary(pkg string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.order) == 0 {
		return ""
	}
	var parts []string
	for _, what := range s.order {
		noun := "tests"
		if s.n[what] == 1 {
			noun = "test"
		}
		parts = append(parts, fmt.Sprintf("%d %s %s (%s)", s.n[what], what, noun, strings.Join(s.why[what], "; ")))
	}
	return fmt.Sprintf("skipped in %s: %s", pkg, strings.Join(parts, ", "))
}

// packagePath is the import path of the package under test, shortened to
// ./path within its module.
func packagePath() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "this package"
	}
	pkg := strings.TrimSuffix(bi.Path, ".test")
	if rest, ok := strings.CutPrefix(pkg, bi.Main.Path); ok && bi.Main.Path != "" {
		return "." + rest
	}
	return pkg
}

// report prints line where it will be seen. go test ./... shows a test
// binary's output only when its package fails or with -v; otherwise it
// discards it. The line then goes straight to the go command's own
// standard output (a CI log, a terminal), beside its "ok" line; failing
// that, to the controlling terminal.
func report(line string, passed bool) {
	fmt.Println(line)
	if !passed || testing.Verbose() || isTerminal(os.Stdout) {
		return // the output above is shown
	}
	w := goCommandOutput()
	if w == nil {
		tty, err := os.OpenFile("/dev/tty", os.O_WRONLY, 0)
		if err != nil {
			return
		}
		w = tty
	}
	defer w.Close()
	io.WriteString(w, line+"\n")
}

// skippedMarker is a file, in the directory of the package under test,
// that a run which skips tests writes and opens, so that go test does not
// cache its result: a cached result is printed without the run's output,
// and so without the line that says what was skipped. (go test caches no
// run that opened a file of the module changed within the last seconds.)
const skippedMarker = ".decoy-test-skipped"

// uncached makes this run's result uncached, once.
var uncached sync.Once

func markUncached() {
	uncached.Do(func() {
		if os.WriteFile(skippedMarker, []byte("tests were skipped; see go test's output\n"), 0o644) != nil {
			return
		}
		if f, err := os.Open(skippedMarker); err == nil {
			f.Close()
		}
	})
}

func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
