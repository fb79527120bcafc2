package main_test

// The guides' shell examples, run: each ```sh block of a page runs, in
// order, in one bash session against a server the test starts as the page
// starts it (decoy serve --seed ./examples), from the repository's root,
// with the built decoy first on PATH (and go run ./cmd/decoy standing for
// it). A ```text block right after a ```sh block is what that block prints:
// compared line by line, "…" matching any text, trailing spaces ignored.
//
// Lines the test does not run: the start of the server (the test starts
// it, on a port of its own: 127.0.0.1:8080 and localhost:8080 in the page
// are rewritten to it), and lines holding "…", which stand for a value the
// reader fills in (DECOY_ADMIN_TOKEN=dcy_admin_…): the test sets those
// itself.

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestDocsRoutes runs docs/routes.md, the "Mock your API" guide.
func TestDocsRoutes(t *testing.T) { runDoc(t, "docs/routes.md") }

// TestDocsRules runs docs/rules.md, the guide to rules and faults.
func TestDocsRules(t *testing.T) { runDoc(t, "docs/rules.md") }

// docBlock is a fenced block of a page.
type docBlock struct {
	lang string
	text string
	line int // of the opening fence
}

// docBlocks returns the fenced blocks of a Markdown page.
func docBlocks(page string) []docBlock {
	var blocks []docBlock
	var cur *docBlock
	var body []string
	for i, line := range strings.Split(page, "\n") {
		if strings.HasPrefix(line, "```") {
			if cur == nil {
				cur = &docBlock{lang: strings.TrimSpace(strings.TrimPrefix(line, "```")), line: i + 1}
				body = nil
				continue
			}
			cur.text = strings.Join(body, "\n")
			blocks = append(blocks, *cur)
			cur = nil
			continue
		}
		if cur != nil {
			body = append(body, line)
		}
	}
	return blocks
}

// runDoc runs the shell blocks of the page at path (from the repository's
// root) and compares what they print with the page.
func runDoc(t *testing.T, path string) { runDocWith(t, path, docSetup{}) }

// docSetup is what a page needs of the test beyond the server it starts:
// more flags for decoy serve, and addresses of the page to rewrite (pairs
// of the page's and the test's, as 127.0.0.1:8080 is the server's).
type docSetup struct {
	args    []string
	replace []string
}

// runDocWith is runDoc with a page's setup.
func runDocWith(t *testing.T, path string, setup docSetup) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	page, err := os.ReadFile(filepath.Join(root, path))
	if err != nil {
		t.Fatal(err)
	}
	p := start(t, t.TempDir(), append([]string{"--admin-token", adminToken, "--seed", filepath.Join(root, "examples")}, setup.args...)...)
	hostPort := strings.TrimPrefix(p.url, "http://")
	_, port, _ := strings.Cut(hostPort, ":")
	local := strings.NewReplacer(append([]string{"127.0.0.1:8080", hostPort, "localhost:8080", "localhost:" + port}, setup.replace...)...)

	blocks := docBlocks(string(page))
	const mark = "\x1edecoy-doc-block "
	var script strings.Builder
	script.WriteString("set -e -o pipefail\n")
	script.WriteString(`go() { if [ "$1" = run ] && [ "$2" = ./cmd/decoy ]; then shift 2; decoy "$@"; else command go "$@"; fi }` + "\n")
	type run struct {
		block  docBlock
		expect *docBlock
	}
	var runs []run
	for i, b := range blocks {
		if b.lang != "sh" {
			continue
		}
		r := run{block: b}
		if i+1 < len(blocks) && blocks[i+1].lang == "text" {
			r.expect = &blocks[i+1]
		}
		fmt.Fprintf(&script, "printf '%s%d\\n'\n", mark, len(runs))
		for _, line := range strings.Split(b.text, "\n") {
			if strings.Contains(line, "…") || strings.Contains(line, "cmd/decoy serve") {
				continue
			}
			script.WriteString(local.Replace(line) + "\n")
		}
		runs = append(runs, r)
	}
	cmd := exec.Command("bash", "-c", script.String())
	cmd.Dir = root
	cmd.Env = append(cleanEnv(), "PATH="+filepath.Dir(binary)+string(os.PathListSeparator)+os.Getenv("PATH"),
		"DECOY_SERVER="+p.url, "DECOY_ADMIN_TOKEN="+adminToken, "HOME="+t.TempDir())
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()

	outs := strings.Split(stdout.String(), mark)[1:]
	if runErr != nil {
		last := len(outs) - 1
		where := "before the first block"
		if last >= 0 {
			where = fmt.Sprintf("in the block at %s:%d", path, runs[last].block.line)
		}
		t.Fatalf("the page's commands failed %s: %v\n%s\nstderr:\n%s", where, runErr, stdout.String(), stderr.String())
	}
	compared := 0
	for i, r := range runs {
		if r.expect == nil {
			continue
		}
		_, out, _ := strings.Cut(outs[i], "\n")
		compared++
		if err := matchOutput(local.Replace(r.expect.text), out); err != nil {
			t.Errorf("%s:%d: %v\ngot:\n%s", path, r.block.line, err, out)
		}
	}
	t.Logf("%s: %d shell blocks run, %d outputs compared", path, len(runs), compared)
	if len(runs) == 0 {
		t.Errorf("%s has no shell block", path)
	}
}

// matchOutput compares output with the expected text of a page: line by
// line, "…" matching any text, trailing spaces ignored.
func matchOutput(want, got string) error {
	wl := strings.Split(strings.TrimRight(want, "\n"), "\n")
	gl := strings.Split(strings.TrimRight(got, "\n"), "\n")
	if len(wl) != len(gl) {
		return fmt.Errorf("%d lines, the page shows %d", len(gl), len(wl))
	}
	for i := range wl {
		w, g := strings.TrimRight(wl[i], " "), strings.TrimRight(gl[i], " ")
		parts := strings.Split(w, "…")
		for k := range parts {
			parts[k] = regexp.QuoteMeta(parts[k])
		}
		if !regexp.MustCompile("^" + strings.Join(parts, ".*") + "$").MatchString(g) {
			return fmt.Errorf("line %d is %q, the page shows %q", i+1, g, w)
		}
	}
	return nil
}
