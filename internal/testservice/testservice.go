// Package testservice gives Decoy's tests the PostgreSQL and Redis they
// need, so that go test ./... runs them on any machine with the servers
// installed: the ones named by DECOY_TEST_POSTGRES_URL and
// DECOY_TEST_REDIS_URL when set (CI sets both), else private ones started
// from the installed binaries, once per test binary, in a temporary
// directory on a spare loopback port, and stopped when the tests end. The
// machine's own servers are never touched.
//
// A test that cannot have what it needs skips through Skip. A package's
// run ends with one line naming what it skipped and how to enable it,
// shown by go test without -v too, and never hidden by its cache. When go
// test runs the whole module (go test ./...), those lines are gathered
// instead into one for the whole run, which the package it runs last
// prints at the end (see MainLast).
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
	"sync/atomic"
	"testing"
	"time"
)

// Main runs the tests, stops the servers started for them, reports what was
// skipped, and returns the exit code for os.Exit.
func Main(m *testing.M) int { return run(m, false) }

// MainLast is Main for the package that go test ./... runs last, the last
// of go list ./... (TestReporterIsLast holds it there), whose tests call
// NotCached. When go test runs the whole module, it waits, after its own
// tests, for the run's other test binaries to end, and prints the one
// line of what the whole run skipped, after their results.
func MainLast(m *testing.M) int { return run(m, true) }

func run(m *testing.M, last bool) int {
	began := time.Now()
	code := m.Run()
	stopAll()
	defer freshenMarker()
	pkg := packagePath()
	line := skipped.summary(pkg)
	r := thisRun()
	if r == nil { // one package's run, or a few: each says its own
		if line != "" {
			report(line, code == 0)
		}
		return code
	}
	r.record(pkg, skipped.groups())
	if !last {
		if line != "" {
			fmt.Println(line) // in the package's own output (-v, or a failure); the run's line counts it
		}
		return code
	}
	if line := r.summary(r.wait(waitUntil(began))); line != "" {
		report(line, code == 0)
	}
	return code
}

// NotCached keeps the result of t's package out of go test's cache, so
// that its tests, and its TestMain, run on every go test.
func NotCached(t testing.TB) {
	t.Helper()
	markUncached()
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

// group is the tests skipped for want of one thing: how many, and why.
type group struct {
	What string   `json:"what"`
	N    int      `json:"n"`
	Why  []string `json:"why"`
}

// groups are the tests skipped so far, in the order first seen.
func (s *skips) groups() []group {
	s.mu.Lock()
	defer s.mu.Unlock()
	gs := make([]group, len(s.order))
	for i, what := range s.order {
		gs[i] = group{what, s.n[what], slices.Clone(s.why[what])}
	}
	return gs
}

// summary is the one line that ends a package's run with skipped tests,
// or "".
func (s *skips) summary(pkg string) string {
	gs := s.groups()
	if len(gs) == 0 {
		return ""
	}
	parts := make([]string, len(gs))
	for i, g := range gs {
		parts[i] = fmt.Sprintf("%d %s (%s)", g.N, tests(g.What, g.N), strings.Join(g.Why, "; "))
	}
	return fmt.Sprintf("skipped in %s: %s", pkg, strings.Join(parts, ", "))
}

// tests is "PostgreSQL tests", or "PostgreSQL test" for one.
func tests(what string, n int) string {
	if n == 1 {
		return what + " test"
	}
	return what + " tests"
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
// that a run which skips tests (or calls NotCached) writes and opens, so
// that go test does not cache its result: a cached result is printed
// without the run's output, and so without the line that says what was
// skipped; and a package's run that skipped nothing, cached, stays true.
// (go test caches no run that opened a file of the module changed within
// the last seconds.)
const skippedMarker = ".decoy-test-skipped"

// uncached makes this run's result uncached, once; marked says it did.
var (
	uncached sync.Once
	marked   atomic.Bool
)

func markUncached() {
	uncached.Do(func() {
		if os.WriteFile(skippedMarker, []byte("a run not to be cached: see internal/testservice\n"), 0o644) != nil {
			return
		}
		if f, err := os.Open(skippedMarker); err == nil {
			f.Close()
			marked.Store(true)
		}
	})
}

// freshenMarker, at the very end of a run that opened the marker, makes
// it new again: go test looks at its age when the test binary has ended,
// and caches the run if it is more than 2 seconds old, which it is after
// a long run (or MainLast's wait).
func freshenMarker() {
	if marked.Load() {
		now := time.Now()
		os.Chtimes(skippedMarker, now, now)
	}
}

func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
