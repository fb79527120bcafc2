package studio_test

// TestBrowser runs the browser journeys (e2e/*.spec.mjs, playwright-core
// driving Debian's chromium, helpers in e2e/harness.mjs), each against its
// own run of the real decoy binary, so that go test ./... covers the Studio
// as a user sees it.

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/decoy-mock/decoy/internal/testservice"
)

// browserRequired reports whether missing browser-test tools are a failure
// (CI sets DECOY_TEST_BROWSER=1) rather than a reason to skip.
func browserRequired() bool { return os.Getenv("DECOY_TEST_BROWSER") == "1" }

func TestMain(m *testing.M) { os.Exit(testservice.Main(m)) }

// The tests that need Node and the npm packages, as the run's skip line
// names them.
const (
	browserTests = "browser"
	bundleTests  = "Studio bundle"
)

// need skips the test, counted in the run's skip line under what, or fails
// it when the browser test is required.
func need(t *testing.T, what, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if browserRequired() {
		t.Fatalf("%s (DECOY_TEST_BROWSER=1 requires it)", msg)
	}
	testservice.Skip(t, what, msg)
}

// chromiumPath is the browser the test drives: $CHROMIUM, else Debian's.
func chromiumPath() string {
	if p := os.Getenv("CHROMIUM"); p != "" {
		return p
	}
	return "/usr/bin/chromium"
}

// npmInstalled makes sure dir has its node_modules, each of markers among
// them: present, or installed with npm ci when the browser test is
// required (so a node_modules older than a new package is brought up to
// date).
func npmInstalled(t *testing.T, what, dir string, markers ...string) {
	t.Helper()
	present := true
	for _, marker := range markers {
		if _, err := os.Stat(filepath.Join(dir, "node_modules", marker)); err != nil {
			present = false
		}
	}
	if present {
		return
	}
	if !browserRequired() {
		need(t, what, "studio/%s/node_modules is missing or lacks one of %v: npm ci there, or set DECOY_TEST_BROWSER=1 and the test runs it", dir, markers)
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		need(t, what, "npm is not installed: apt-get install npm")
	}
	cmd := exec.Command(npm, "ci", "--no-audit", "--no-fund")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("npm ci in %s: %v\n%s", dir, err, out)
	}
}

var servingLine = regexp.MustCompile(`serving on (http://\S+)`)

func TestBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("the browser test is not short")
	}
	if _, err := os.Stat(chromiumPath()); err != nil {
		need(t, browserTests, "no Chromium at %s: apt-get install chromium, or set CHROMIUM", chromiumPath())
	}
	node, err := exec.LookPath("node")
	if err != nil {
		need(t, browserTests, "node is not installed: apt-get install nodejs")
	}
	npmInstalled(t, browserTests, "e2e", "playwright-core", "axe-core")

	dir := t.TempDir()
	bin := filepath.Join(dir, "decoy")
	build := exec.Command("go", "build", "-o", bin, "../cmd/decoy")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build decoy: %v\n%s", err, out)
	}
	specs, err := filepath.Glob(filepath.Join("e2e", "*.spec.mjs"))
	if err != nil || len(specs) == 0 {
		t.Fatalf("no journeys in e2e/*.spec.mjs (%v)", err)
	}
	artifacts := os.Getenv("DECOY_TEST_ARTIFACTS")
	if artifacts == "" {
		artifacts, _ = filepath.Abs(filepath.Join("e2e", "artifacts"))
	}
	for _, spec := range specs {
		name := strings.TrimSuffix(filepath.Base(spec), ".spec.mjs")
		t.Run(name, func(t *testing.T) {
			runJourney(t, node, bin, filepath.Base(spec), filepath.Join(artifacts, name))
			if name == "pages" {
				updateDocScreenshots(t, filepath.Join(artifacts, name))
			}
		})
	}
}

// runJourney runs one journey, e2e/<spec>, against its own server with a
// fresh data dir, its screenshots in artifacts.
func runJourney(t *testing.T, node, bin, spec, artifacts string) {
	const adminToken = "e2e-studio-admin-token-0123456789"
	url := startServer(t, bin, t.TempDir(), adminToken)

	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, spec)
	cmd.Dir = "e2e"
	cmd.Env = append(cleanEnv(),
		"DECOY_URL="+url, "DECOY_ADMIN_TOKEN="+adminToken, "DECOY_ARTIFACTS="+artifacts, "CHROMIUM="+chromiumPath())
	out, err := cmd.CombinedOutput()
	t.Logf("browser journey %s:\n%s", spec, out)
	if err != nil {
		t.Fatalf("browser journey %s failed: %v (screenshots in %s)", spec, err, artifacts)
	}
	if !strings.Contains(string(out), "1 passed, 0 failed") {
		t.Fatalf("the browser journey %s did not report success", spec)
	}
}

// startServer runs decoy serve on a free port with a data dir in dir and
// the examples seeded, and returns its URL. It is stopped with SIGTERM when
// the test ends.
func startServer(t *testing.T, bin, dir, adminToken string) string {
	t.Helper()
	cmd := exec.Command(bin, "serve", "--addr", "127.0.0.1:0", "--data-dir", filepath.Join(dir, "data"),
		"--admin-token", adminToken, "--seed", "../examples")
	cmd.Env = cleanEnv()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	logFile, err := os.Create(filepath.Join(dir, "decoy.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = logFile
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if m := servingLine.FindStringSubmatch(sc.Text()); m != nil {
				found <- m[1]
			}
		}
		done <- cmd.Wait()
	}()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(40 * time.Second):
			cmd.Process.Kill()
		}
		if t.Failed() {
			if b, err := os.ReadFile(logFile.Name()); err == nil {
				t.Logf("decoy log:\n%s", b)
			}
		}
		logFile.Close()
	})
	select {
	case url := <-found:
		return url
	case err := <-done:
		t.Fatalf("decoy exited before listening: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("decoy did not start")
	}
	return ""
}

// cleanEnv drops the DECOY_* variables of the environment the tests run in,
// so that they do not configure the server under test.
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "DECOY_") {
			env = append(env, kv)
		}
	}
	return env
}
