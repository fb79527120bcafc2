package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
)

// commandPaths lists every command of the tree, as the arguments that
// reach it ("mock", "create").
func commandPaths() [][]string {
	var paths [][]string
	var walk func(c *cobra.Command, path []string)
	walk = func(c *cobra.Command, path []string) {
		paths = append(paths, path)
		for _, s := range c.Commands() {
			walk(s, append(append([]string{}, path...), s.Name()))
		}
	}
	walk(newRootCommand(nil, io.Discard, io.Discard), nil)
	return paths
}

// inProcess runs the command line args in this process, and returns what
// it printed and its exit code.
func inProcess(args ...string) (stdout, stderr string, code int) {
	var out, errOut bytes.Buffer
	err := run(context.Background(), args, strings.NewReader(""), &out, &errOut)
	code = report(&errOut, err)
	return out.String(), errOut.String(), code
}

// Every command's --help exits 0 on standard output, shows an example,
// spells its flags --flag, and gives defaults in human units.
func TestHelpEveryCommand(t *testing.T) {
	paths := commandPaths()
	if len(paths) < 40 {
		t.Fatalf("only %d commands in the tree", len(paths))
	}
	longFlag := regexp.MustCompile(`(?m)^\s+(-\w, )?--[a-z]`)
	singleDashLong := regexp.MustCompile(`(?m)^\s+-[a-z]{2,}`)
	for _, path := range paths {
		name := strings.Join(append([]string{"decoy"}, path...), " ")
		t.Run(name, func(t *testing.T) {
			out, errOut, code := inProcess(append(path, "--help")...)
			if code != 0 || errOut != "" {
				t.Fatalf("exit %d, stderr %q", code, errOut)
			}
			if !strings.Contains(out, "Examples:\n  ") {
				t.Errorf("no example:\n%s", out)
			}
			if !longFlag.MatchString(out) || singleDashLong.MatchString(out) {
				t.Errorf("flags not spelled --flag:\n%s", out)
			}
		})
	}
	out, _, _ := inProcess("serve", "--help")
	for _, want := range []string{"(default 64MiB)", "(default 1GiB)", "(default 35s)", "DECOY_<FLAG>"} {
		if !strings.Contains(out, want) {
			t.Errorf("decoy serve --help lacks %q", want)
		}
	}
	if strings.Contains(out, "67108864") {
		t.Error("decoy serve --help shows 67108864, not 64MiB")
	}
	out, _, _ = inProcess("--help")
	for _, want := range []string{"Exit codes:", "  2  the command line could not be understood"} {
		if !strings.Contains(out, want) {
			t.Errorf("decoy --help lacks %q", want)
		}
	}
	// decoy mock create --help used to exit 2.
	if out, errOut, code := inProcess("mock", "create", "--help"); code != 0 || !strings.Contains(out, "decoy mock create --file users.json") || errOut != "" {
		t.Errorf("decoy mock create --help: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

// Each shell's completion script is generated, names the program and asks
// it for completions (cobra's scripts are dynamic: decoy __complete gives
// the command names, checked below); bash's parses with bash -n.
func TestCompletionScripts(t *testing.T) {
	for _, tc := range []struct{ shell, want string }{
		{"bash", "__start_decoy"},
		{"zsh", "#compdef decoy"},
		{"fish", "complete -c decoy"},
		{"powershell", "Register-ArgumentCompleter"},
	} {
		t.Run(tc.shell, func(t *testing.T) {
			out, errOut, code := inProcess("completion", tc.shell)
			if code != 0 || errOut != "" || !strings.Contains(out, tc.want) || !strings.Contains(out, "__complete") {
				t.Fatalf("exit %d, stderr %q, script lacks %q or __complete:\n%.400s", code, errOut, tc.want, out)
			}
			if tc.shell != "bash" {
				return
			}
			if _, err := exec.LookPath("bash"); err != nil {
				t.Skip("no bash")
			}
			script := filepath.Join(t.TempDir(), "decoy.bash")
			os.WriteFile(script, []byte(out), 0o600)
			if msg, err := exec.Command("bash", "-n", script).CombinedOutput(); err != nil {
				t.Errorf("bash -n: %v %s", err, msg)
			}
		})
	}
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{""}, []string{"serve", "mock", "workspace", "project", "member", "key", "audit", "import", "export", "login", "completion"}},
		{[]string{"mock", ""}, []string{"create", "list", "get", "data", "update", "patch", "rotate-token", "usage", "delete", "versions", "version-data", "restore"}},
		{[]string{"mock", "list", "--"}, []string{"--server", "--admin-token", "--output", "--all"}},
		{[]string{"mock", "list", "--output", ""}, []string{"json", "table"}},
		{[]string{"import", "x", "--format", ""}, []string{"openapi", "json-server", "decoy"}},
	} {
		out, _, code := inProcess(append([]string{"__complete"}, tc.args...)...)
		for _, w := range tc.want {
			if code != 0 || !regexp.MustCompile(`(?m)^`+regexp.QuoteMeta(w)+`(\t|$)`).MatchString(out) {
				t.Errorf("decoy __complete %q: exit %d, no %q in\n%s", tc.args, code, w, out)
			}
		}
	}
}

func TestHumanUnits(t *testing.T) {
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		t    time.Time
		want string
	}{
		{now.Add(-20 * time.Second), "just now"},
		{now.Add(-time.Minute), "1 minute ago"},
		{now.Add(-90 * time.Minute), "1 hour ago"},
		{now.Add(-47 * time.Hour), "47 hours ago"},
		{now.Add(-6 * 24 * time.Hour), "6 days ago"},
		{now.Add(6 * 24 * time.Hour), "in 6 days"},
		{now.Add(-100 * 24 * time.Hour), "3 months ago"},
		{now.Add(-800 * 24 * time.Hour), "2 years ago"},
	} {
		if got := relative(tc.t, now); got != tc.want {
			t.Errorf("relative(%v) = %q, want %q", now.Sub(tc.t), got, tc.want)
		}
	}
	for n, want := range map[int64]string{0: "0 B", 1023: "1023 B", 1024: "1 KiB", 1536: "1.5 KiB", 64 << 20: "64 MiB", 3 << 30: "3 GiB"} {
		if got := humanBytes(n); got != want {
			t.Errorf("humanBytes(%d) = %q, want %q", n, got, want)
		}
	}
	for n, want := range map[int64]string{0: "0", 999: "999", 1000: "1,000", 50000: "50,000", 1234567: "1,234,567", -1000: "-1,000"} {
		if got := groupDigits(n); got != want {
			t.Errorf("groupDigits(%d) = %q, want %q", n, got, want)
		}
	}
}

// A command that holds others, given none, prints its help on standard
// error and exits 2, as a command line that says nothing to do.
func TestGroupWithoutCommand(t *testing.T) {
	for _, args := range [][]string{nil, {"mock"}, {"workspace"}, {"key"}} {
		out, errOut, code := inProcess(args...)
		if code != 2 || out != "" || !strings.Contains(errOut, "[command] --help\" for more information") || strings.Contains(errOut, "decoy: ") {
			t.Errorf("decoy %v: exit %d, stdout %q, stderr %q", args, code, out, errOut)
		}
	}
}
