package testservice

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The one line of a whole run's skips. go test ./... runs the test binary
// of each package as a child of the go command, starts them in the order
// of go list ./..., and prints their results in that order, but not the
// output of one that passed. So, when it runs the whole module, each
// binary writes what it skipped into a directory of the run's, named by
// the go command's process, and the last one started (MainLast's) waits
// for the others to end, reads what they wrote, and prints the line after
// their results. A package's run that skips tests is never cached
// (markUncached), so what a run skipped is always written by a binary
// that ran: a cached result is a run that skipped nothing.

// runRecords is the directory of a run's skips, one file per package.
type runRecords struct {
	dir   string
	goPID int
}

// runPrefix begins the name of a run's directory, in the temporary one.
const runPrefix = "decoy-test-run-"

// thisRun returns the records of this run when the go command runs the
// whole module, else nil: a run of one package or a few (each says its
// own skips), a test binary run by hand or through go test -exec, or a
// system without /proc.
func thisRun() *runRecords {
	g, ok := parentGo()
	if !ok || !g.testsModule(moduleRoot(), modulePath()) {
		return nil
	}
	return &runRecords{dir: filepath.Join(os.TempDir(), runPrefix+strconv.Itoa(g.pid)+"-"+g.started), goPID: g.pid}
}

// goCommand is the go command that runs this test binary.
type goCommand struct {
	pid     int
	started string // its start time, in clock ticks since boot: with pid, names it alone
	dir     string // its working directory
	args    []string
}

// testsModule reports whether g tests every package of the module at root
// (whose path is path): one of its arguments is ./... from root, or the
// module's path followed by /.... Its other packages then come before
// those of the pattern, which runs the last of go list ./... last.
func (g goCommand) testsModule(root, path string) bool {
	if root == "" {
		return false
	}
	for _, a := range g.args {
		prefix, ok := strings.CutSuffix(a, "/...")
		switch {
		case !ok:
		case prefix == "." || prefix == ".." || strings.HasPrefix(prefix, "./") || strings.HasPrefix(prefix, "../") || filepath.IsAbs(prefix):
			if !filepath.IsAbs(prefix) {
				prefix = filepath.Join(g.dir, prefix)
			}
			if filepath.Clean(prefix) == root {
				return true
			}
		case path != "" && prefix == path:
			return true
		}
	}
	return false
}

// moduleRoot is the directory of the go.mod above the package under test
// (go test runs a test binary in its package's directory), or "".
func moduleRoot() string {
	dir, err := os.Getwd()
	if err != nil {
		return ""
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		up := filepath.Dir(dir)
		if up == dir {
			return ""
		}
		dir = up
	}
}

// modulePath is the path of the main module, or "".
func modulePath() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		return bi.Main.Path
	}
	return ""
}

// packageRecord is what one package's run skipped.
type packageRecord struct {
	Package string  `json:"package"`
	Skipped []group `json:"skipped"`
}

// record writes what the package pkg skipped, if anything.
func (r *runRecords) record(pkg string, skipped []group) {
	if len(skipped) == 0 {
		return
	}
	b, err := json.Marshal(packageRecord{pkg, skipped})
	if err != nil || os.MkdirAll(r.dir, 0o700) != nil {
		return
	}
	name := filepath.Join(r.dir, strings.NewReplacer("/", "_", ".", "_").Replace(pkg)+".json")
	if os.WriteFile(name+".new", b, 0o600) == nil {
		os.Rename(name+".new", name)
	}
}

// waitUntil is when MainLast stops waiting for the other test binaries:
// at the end of this binary's -timeout (the go command kills it a minute
// later), or never without one.
func waitUntil(began time.Time) time.Time {
	f := flag.Lookup("test.timeout")
	if f == nil {
		return time.Time{}
	}
	d, ok := f.Value.(flag.Getter).Get().(time.Duration)
	if !ok || d <= 0 {
		return time.Time{}
	}
	return began.Add(d)
}

// wait waits until the go command's other children (the run's other test
// binaries: its builds are done before the last one starts) have ended,
// and the go command has printed their results; or until until, when it
// is not zero. It returns how many had not ended.
func (r *runRecords) wait(until time.Time) (running int) {
	for {
		kids := slices.DeleteFunc(children(r.goPID), func(pid int) bool { return pid == os.Getpid() })
		if len(kids) == 0 {
			settle(r.goPID)
			return 0
		}
		if !until.IsZero() && time.Now().After(until) {
			return len(kids)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// summary reads the run's records, removes them (and those of runs that
// ended without a MainLast, their go command gone), and returns the line
// of what the run skipped, or "" when it skipped nothing; running test
// binaries, not counted, are said.
func (r *runRecords) summary(running int) string {
	files, _ := filepath.Glob(filepath.Join(r.dir, "*.json"))
	var recs []packageRecord
	for _, f := range files {
		var rec packageRecord
		if b, err := os.ReadFile(f); err == nil && json.Unmarshal(b, &rec) == nil {
			recs = append(recs, rec)
		}
	}
	os.RemoveAll(r.dir)
	removeStale()
	line := runSummary(recs)
	if running > 0 {
		noun := "binaries"
		if running == 1 {
			noun = "binary"
		}
		if line == "" {
			line = "skipped in ./...: none counted"
		}
		line += fmt.Sprintf(" (%d test %s still running when this was written: their skips are not counted)", running, noun)
	}
	return line
}

// runSummary is the line of the whole run's skips: each group of tests
// skipped, with the packages they are in, and why (which says how to
// enable them); "" when nothing was skipped.
func runSummary(recs []packageRecord) string {
	slices.SortFunc(recs, func(a, b packageRecord) int { return strings.Compare(a.Package, b.Package) })
	var order []string
	type total struct {
		n        int
		packages []string
		why      []string
	}
	totals := map[string]*total{}
	for _, rec := range recs {
		for _, g := range rec.Skipped {
			t := totals[g.What]
			if t == nil {
				t = &total{}
				totals[g.What] = t
				order = append(order, g.What)
			}
			t.n += g.N
			t.packages = append(t.packages, rec.Package)
			for _, why := range g.Why {
				if !slices.Contains(t.why, why) {
					t.why = append(t.why, why)
				}
			}
		}
	}
	if len(order) == 0 {
		return ""
	}
	parts := make([]string, len(order))
	for i, what := range order {
		t := totals[what]
		parts[i] = fmt.Sprintf("%d %s in %s (%s)", t.n, tests(what, t.n), strings.Join(t.packages, " "), strings.Join(t.why, "; "))
	}
	return "skipped in ./...: " + strings.Join(parts, ", ")
}

// removeStale removes the records of runs whose go command has ended: a
// run interrupted, or one whose last package did not run.
func removeStale() {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), runPrefix+"*"))
	for _, d := range dirs {
		pid, started, ok := strings.Cut(strings.TrimPrefix(filepath.Base(d), runPrefix), "-")
		n, err := strconv.Atoi(pid)
		if ok && err == nil && !running(n, started) {
			os.RemoveAll(d)
		}
	}
}
