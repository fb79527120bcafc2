package main_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/decoy-mock/decoy/client"
	"github.com/decoy-mock/decoy/internal/testservice"
)

// The CLI as people and scripts meet it, through the real binary: tables
// on a (pseudo-)terminal, JSON off one, one-line errors, upload progress.

// ttyRun runs the binary with standard output (and, with errTTY, standard
// error) on a pseudo-terminal, and returns what each printed, carriage
// returns dropped, and its exit code.
func ttyRun(t *testing.T, env []string, errTTY bool, args ...string) (string, string, int) {
	t.Helper()
	ptmx, tty, err := pty.Open()
	if err != nil {
		testservice.Skip(t, "terminal", fmt.Sprintf("no pseudo-terminal (%v): mount /dev/pts", err))
	}
	defer ptmx.Close()
	pty.Setsize(ptmx, &pty.Winsize{Rows: 40, Cols: 160})
	cmd := exec.Command(binary, args...)
	cmd.Env = env
	var errOut bytes.Buffer
	cmd.Stdout = tty
	cmd.Stderr = &errOut
	if errTTY {
		cmd.Stderr = tty
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	tty.Close()
	var out bytes.Buffer
	copied := make(chan struct{})
	go func() {
		io.Copy(&out, ptmx) // ends with EIO once the program has exited
		close(copied)
	}()
	err = cmd.Wait()
	select {
	case <-copied:
	case <-time.After(10 * time.Second):
		t.Fatal("the terminal's output did not end")
	}
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return strings.ReplaceAll(out.String(), "\r", ""), errOut.String(), code
}

// On a terminal, lists are tables and objects key/value views, with
// human sizes and relative times; -o json gives the JSON scripts get when
// the output is not a terminal, and -o table a table anywhere.
func TestOutputTableAndJSON(t *testing.T) {
	p := start(t, t.TempDir(), "--admin-token", adminToken)
	env := append(cleanEnv(), "DECOY_SERVER="+p.url, "DECOY_ADMIN_TOKEN="+adminToken, "XDG_CONFIG_HOME="+t.TempDir())
	m := createMock(t, p, `[{"n":1}]`, client.CreateOptions{Name: "people"})
	big := createMock(t, p, `["`+strings.Repeat("x", 3000)+`"]`, client.CreateOptions{Name: "big", Private: true})

	out, errOut, code := ttyRun(t, env, false, "mock", "list")
	if code != 0 {
		t.Fatalf("mock list: exit %d %s", code, errOut)
	}
	header := regexp.MustCompile(`(?m)^NAME\s+ID\s+SIZE\s+ACCESS\s+STATUS\s+UPDATED$`)
	row := regexp.MustCompile(`(?m)^big\s+` + big.ID + `\s+2\.9 KiB\s+private\s+200\s+just now$`)
	if !header.MatchString(out) || !row.MatchString(out) || !strings.Contains(out, m.ID) {
		t.Errorf("mock list on a terminal:\n%s", out)
	}
	// Columns line up: every row's ID starts where the header's does.
	lines := strings.Split(strings.TrimSpace(out), "\n")
	col := strings.Index(lines[0], "ID")
	for _, l := range lines[1:] {
		if strings.Index(l, m.ID[:8]) != col && strings.Index(l, big.ID[:8]) != col {
			t.Errorf("misaligned row %q (ID at %d)", l, col)
		}
	}

	// Completion of a mock id asks the server.
	if out, _, code := runCLI(t, env, "", "__complete", "mock", "get", "peo"); code != 0 || !strings.Contains(out, m.ID+"\tpeople\n") || strings.Contains(out, big.ID) {
		t.Errorf("completion of a mock id: exit %d\n%s", code, out)
	}

	if out, _, code := runCLI(t, env, "", "__complete", "member", "list", "--workspace", ""); code != 0 || !strings.Contains(out, m.WorkspaceID+"\tdefault\n") {
		t.Errorf("completion of a workspace: exit %d\n%s", code, out)
	}
	out, _, code = ttyRun(t, env, false, "mock", "get", big.ID)
	for _, re := range []string{`(?m)^name:\s+big$`, `(?m)^size:\s+2\.9 KiB$`, `(?m)^rate limit:\s+server default$`, `(?m)^created at:\s+\d{4}-\d\d-\d\d \d\d:\d\d UTC \(just now\)$`} {
		if code != 0 || !regexp.MustCompile(re).MatchString(out) {
			t.Errorf("mock get on a terminal: no %s in\n%s", re, out)
		}
	}
	out, _, _ = ttyRun(t, env, false, "mock", "usage", m.ID)
	if !strings.Contains(out, "this month:   0 of 50,000 responses") {
		t.Errorf("mock usage on a terminal:\n%s", out)
	}
	out, _, _ = ttyRun(t, env, false, "mock", "versions", m.ID)
	if !regexp.MustCompile(`(?m)^VERSION\s+SIZE\s+CREATED\s+BY\s+ETAG$`).MatchString(out) || !regexp.MustCompile(`(?m)^1 \(current\)\s+9 B\s+just now\s+server admin\s+`).MatchString(out) {
		t.Errorf("mock versions on a terminal:\n%s", out)
	}
	out, _, _ = ttyRun(t, env, false, "workspace", "list")
	if !regexp.MustCompile(`(?m)^NAME\s+ID\s+CREATED$`).MatchString(out) || !regexp.MustCompile(`(?m)^default\s+`).MatchString(out) {
		t.Errorf("workspace list on a terminal:\n%s", out)
	}
	out, _, _ = ttyRun(t, env, false, "audit", "--workspace", m.WorkspaceID)
	if !regexp.MustCompile(`(?m)^WHEN\s+ACTOR\s+ACTION\s+TARGET\s+IP$`).MatchString(out) || !regexp.MustCompile(`(?m)^just now\s+server admin\s+mock\.create\s+mock big\s`).MatchString(out) {
		t.Errorf("audit on a terminal:\n%s", out)
	}

	// -o json on a terminal, and JSON off one: the same document.
	jsonOut, _, code := ttyRun(t, env, false, "mock", "get", m.ID, "-o", "json")
	piped, _, _ := runCLI(t, env, "", "mock", "get", m.ID)
	var a, b client.Mock
	if code != 0 || json.Unmarshal([]byte(jsonOut), &a) != nil || json.Unmarshal([]byte(piped), &b) != nil || a.ID != m.ID || b.ID != m.ID || jsonOut != piped {
		t.Errorf("-o json on a terminal %q, piped %q", jsonOut, piped)
	}
	out, _, code = runCLI(t, env, "", "mock", "list", "-o", "table")
	if code != 0 || !header.MatchString(out) {
		t.Errorf("mock list -o table, piped:\n%s", out)
	}
	if _, errOut, code := runCLI(t, env, "", "mock", "list", "-o", "yaml"); code != 2 || !strings.Contains(errOut, "--output must be json or table") {
		t.Errorf("-o yaml: exit %d %q", code, errOut)
	}
}

// An error is one line that says what to do: a server that is down, a
// bad flag (with a pointer to --help, exit 2), a wrong token, a mock that
// is not there.
func TestErrorLines(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := "http://" + ln.Addr().String()
	ln.Close()
	p := start(t, t.TempDir(), "--admin-token", adminToken)
	config := "XDG_CONFIG_HOME=" + t.TempDir()
	for _, tc := range []struct {
		name  string
		env   []string
		args  []string
		code  int
		lines []string
	}{
		{"server down", []string{"DECOY_SERVER=" + down, "DECOY_ADMIN_TOKEN=x"}, []string{"mock", "list"}, 1,
			[]string{`decoy: cannot reach ` + down + `: connection refused — is "decoy serve" running there? (--server, DECOY_SERVER)`}},
		{"bad flag value", nil, []string{"mock", "create", "--status", "abc"}, 2,
			[]string{`decoy: invalid value "abc" for "--status" flag: not a number`, `Run 'decoy mock create --help' for usage.`}},
		{"bad limit", nil, []string{"mock", "patch", "ID", "--rate-limit", "-3"}, 2,
			[]string{`decoy: invalid value "-3" for "--rate-limit" flag: want a number of 0 or more (0: unlimited), or default`, `Run 'decoy mock patch --help' for usage.`}},
		{"unknown flag", nil, []string{"mock", "list", "--colour"}, 2,
			[]string{`decoy: unknown flag: --colour`, `Run 'decoy mock list --help' for usage.`}},
		{"missing argument", nil, []string{"mock", "get"}, 2,
			[]string{`decoy: mock get needs a mock (id or name)`, `Run 'decoy mock get --help' for usage.`}},
		{"misspelt command", nil, []string{"mock", "lst"}, 2,
			[]string{`decoy: unknown mock command "lst" (did you mean "list"?)`, `Run 'decoy mock --help' for usage.`}},
		{"server without scheme", []string{"DECOY_SERVER=127.0.0.1:8080", "DECOY_ADMIN_TOKEN=x"}, []string{"mock", "list"}, 2,
			[]string{`decoy: --server must be an http:// or https:// URL, such as http://127.0.0.1:8080; not "127.0.0.1:8080"`, `Run 'decoy mock list --help' for usage.`}},
		{"wrong token", []string{"DECOY_SERVER=" + p.url, "DECOY_ADMIN_TOKEN=wrong"}, []string{"mock", "list"}, 1,
			[]string{`decoy: 401 Invalid admin token — run "decoy login", or pass --admin-token (DECOY_ADMIN_TOKEN)`}},
		{"not found", []string{"DECOY_SERVER=" + p.url, "DECOY_ADMIN_TOKEN=" + adminToken}, []string{"mock", "get", "0b9d7c8e-1d2f-4a3b-9c8d-7e6f5a4b3c2d"}, 1,
			[]string{`decoy: 404 Mock api not found`}},
		{"no token", []string{"DECOY_SERVER=" + p.url}, []string{"workspace", "list"}, 1,
			[]string{`decoy: no admin token: pass --admin-token, set DECOY_ADMIN_TOKEN, or run decoy login`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, code := runCLI(t, append(cleanEnv(), append(tc.env, config)...), "", tc.args...)
			want := strings.Join(tc.lines, "\n") + "\n"
			if code != tc.code || errOut != want || out != "" {
				t.Errorf("exit %d, stdout %q, stderr\n%s\nwant exit %d and\n%s", code, out, errOut, tc.code, want)
			}
		})
	}
}

// An upload of more than 1 MiB shows a progress bar when standard error
// is a terminal, and nothing when it is not.
func TestUploadProgress(t *testing.T) {
	p := start(t, t.TempDir(), "--admin-token", adminToken)
	env := append(cleanEnv(), "DECOY_SERVER="+p.url, "DECOY_ADMIN_TOKEN="+adminToken, "XDG_CONFIG_HOME="+t.TempDir())
	file := filepath.Join(t.TempDir(), "big.json")
	if err := os.WriteFile(file, []byte(`["`+strings.Repeat("x", 3<<20)+`"]`), 0o600); err != nil {
		t.Fatal(err)
	}
	small := filepath.Join(t.TempDir(), "small.json")
	os.WriteFile(small, []byte(`[1]`), 0o600)

	out, _, code := ttyRun(t, env, true, "mock", "create", "--file", file, "--name", "big")
	if code != 0 || !regexp.MustCompile(`uploading big\.json 100% \|█+\| \(3\.0/3\.0 MiB, `).MatchString(out) || !strings.Contains(out, "size:") {
		t.Errorf("create of 3 MiB on a terminal: exit %d\n%q", code, out)
	}
	out, _, code = ttyRun(t, env, true, "mock", "create", "--file", small)
	if code != 0 || strings.Contains(out, "uploading") {
		t.Errorf("create of 3 bytes on a terminal: exit %d\n%q", code, out)
	}
	_, errOut, code := runCLI(t, env, "", "mock", "create", "--file", file)
	if code != 0 || errOut != "" {
		t.Errorf("create of 3 MiB off a terminal: exit %d, stderr %q", code, errOut)
	}
}
