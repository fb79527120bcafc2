package main_test

// The docs' shell examples, run: each ```sh block of a page runs, in
// order, in one bash session against a server the test starts as the page
// starts it (decoy serve --seed ./examples), with the built decoy first on
// PATH (and go run ./cmd/decoy standing for it), in a temporary folder
// that holds the repository's examples/. A ```text block right after a
// ```sh block is what that block prints: compared line by line, "…"
// matching any text, trailing spaces ignored.
//
// Lines the test does not run: the start of the server (the test starts
// it, on a port of its own: 127.0.0.1:8080 and localhost:8080 in the page
// are rewritten to it, and :8443, the port of a second server a page may
// start, to a free port), and lines holding "…", which stand for a value
// the reader fills in (DECOY_ADMIN_TOKEN=dcy_admin_…): the test sets those
// itself. A block after a line <!-- not run: why --> is not run at all.
//
// TestDocsCoverage holds every shell block of README.md and docs/ to this:
// run by a test, or marked not run with a reason. TestDocsLinks checks
// the pages' relative links and their anchors.

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode"
)

// TestDocsRoutes runs docs/routes.md, the "Mock your API" guide.
func TestDocsRoutes(t *testing.T) { runDoc(t, "docs/routes.md") }

// TestDocsRules runs docs/rules.md, the guide to rules and faults.
func TestDocsRules(t *testing.T) { runDoc(t, "docs/rules.md") }

// docPages are the pages TestDocs runs, each in a subtest of its own.
var docPages = []string{
	"README.md",
	"docs/querying.md",
	"docs/mocks.md",
	"docs/journal.md",
	"docs/generated-data.md",
	"docs/import-export.md",
	"docs/teams.md",
	"docs/studio.md",
	"docs/cli.md",
	"docs/production.md",
}

// docRunners names the test that runs each page with shell examples:
// TestDocs's pages, and the guides with tests of their own.
func docRunners() map[string]string {
	runners := map[string]string{
		"docs/routes.md":      "TestDocsRoutes",
		"docs/rules.md":       "TestDocsRules",
		"docs/passthrough.md": "TestDocsPassthrough",
	}
	for _, page := range docPages {
		runners[page] = "TestDocs"
	}
	return runners
}

// TestDocs runs the shell examples of every page of docPages, and prints
// how many ran.
func TestDocs(t *testing.T) {
	total := 0
	for _, page := range docPages {
		t.Run(page, func(t *testing.T) { total += runDoc(t, page) })
	}
	if !t.Failed() {
		reportLine(t, fmt.Sprintf("docs: %d shell examples of %d pages run and their outputs compared (TestDocs)", total, len(docPages)))
	}
}

// docShells are the languages of fenced blocks that hold shell commands.
var docShells = map[string]bool{"sh": true, "bash": true, "shell": true, "console": true, "zsh": true, "fish": true}

// TestDocsCoverage fails for a shell example that no test runs: a page
// with shell blocks must be one a test runs, and a block that cannot run
// must say why, on the line before it, as <!-- not run: why -->.
func TestDocsCoverage(t *testing.T) {
	root := repoRoot(t)
	runners := docRunners()
	run, notRun := 0, 0
	var reasons []string
	for _, page := range docFiles(t, root) {
		text, err := os.ReadFile(filepath.Join(root, page))
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range docBlocks(string(text)) {
			if !docShells[b.lang] {
				continue
			}
			where := fmt.Sprintf("%s:%d", page, b.line)
			switch {
			case b.notRun != nil && *b.notRun == "":
				t.Errorf("%s: a block marked not run must say why: <!-- not run: why -->", where)
			case b.notRun != nil:
				notRun++
				reasons = append(reasons, fmt.Sprintf("%s (%s)", where, *b.notRun))
			case b.lang != "sh":
				t.Errorf("%s: a shell example fenced as %q: fence it as sh, which the docs tests run, or mark it <!-- not run: why -->", where, b.lang)
			case runners[page] == "":
				t.Errorf("%s: a shell example that no test runs: add %s to docPages in cmd/decoy/docs_test.go, or mark the block <!-- not run: why -->", where, page)
			default:
				run++
			}
		}
	}
	reportLine(t, fmt.Sprintf("docs: %d shell examples in README.md and docs/: %d run by tests, %d not run: %s",
		run+notRun, run, notRun, strings.Join(reasons, "; ")))
}

// docFiles returns README.md and every Markdown page under docs/, as
// paths from the repository's root.
func docFiles(t *testing.T, root string) []string {
	t.Helper()
	pages := []string{"README.md"}
	err := filepath.WalkDir(filepath.Join(root, "docs"), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".md") {
			return err
		}
		rel, err := filepath.Rel(root, path)
		pages = append(pages, filepath.ToSlash(rel))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(pages[1:])
	return pages
}

// repoRoot is the repository's root, from cmd/decoy.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// docBlock is a fenced block of a page.
type docBlock struct {
	lang   string
	text   string
	line   int     // of the opening fence
	end    int     // of the closing fence
	notRun *string // the reason of a <!-- not run: … --> line before it
}

var notRunMark = regexp.MustCompile(`^<!--\s*not run:?(.*?)-->$`)

// docBlocks returns the fenced blocks of a Markdown page. A fence may be
// indented (in a list item); an opening fence's info string holds no
// backtick, so a line that starts with inline code is no fence.
func docBlocks(page string) []docBlock {
	var blocks []docBlock
	var cur *docBlock
	var body []string
	lastText := "" // the last non-blank line outside blocks
	for i, line := range strings.Split(page, "\n") {
		trimmed := strings.TrimSpace(line)
		if cur != nil {
			if strings.HasPrefix(trimmed, "```") && strings.Trim(trimmed, "`") == "" {
				cur.text = strings.Join(body, "\n")
				cur.end = i + 1
				blocks = append(blocks, *cur)
				cur = nil
				lastText = ""
				continue
			}
			body = append(body, line)
			continue
		}
		info, isFence := strings.CutPrefix(trimmed, "```")
		if isFence && !strings.Contains(info, "`") {
			cur = &docBlock{lang: strings.TrimSpace(info), line: i + 1}
			if m := notRunMark.FindStringSubmatch(lastText); m != nil {
				reason := strings.TrimSpace(m[1])
				cur.notRun = &reason
			}
			body = nil
			continue
		}
		if trimmed != "" {
			lastText = trimmed
		}
	}
	return blocks
}

// runDoc runs the shell blocks of the page at path (from the repository's
// root), compares what they print with the page, and returns how many
// blocks ran.
func runDoc(t *testing.T, path string) int { return runDocWith(t, path, docSetup{}) }

// docSetup is what a page needs of the test beyond the server it starts:
// more flags for decoy serve, and addresses of the page to rewrite (pairs
// of the page's and the test's, as 127.0.0.1:8080 is the server's).
type docSetup struct {
	args    []string
	replace []string
}

// runDocWith is runDoc with a page's setup.
func runDocWith(t *testing.T, path string, setup docSetup) int {
	root := repoRoot(t)
	page, err := os.ReadFile(filepath.Join(root, path))
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range []string{"curl", "jq", "openssl"} {
		if _, err := exec.LookPath(tool); err != nil && strings.Contains(string(page), tool+" ") {
			t.Fatalf("%s runs %s, which is not installed: apt-get install %s", path, tool, tool)
		}
	}
	p := start(t, t.TempDir(), append([]string{"--admin-token", adminToken, "--seed", filepath.Join(root, "examples")}, setup.args...)...)
	hostPort := strings.TrimPrefix(p.url, "http://")
	_, port, _ := strings.Cut(hostPort, ":")
	second := freePort(t)
	local := strings.NewReplacer(append([]string{"127.0.0.1:8080", hostPort, "localhost:8080", "localhost:" + port,
		"127.0.0.1:8443", "127.0.0.1:" + second, "localhost:8443", "localhost:" + second}, setup.replace...)...)

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
		if b.lang != "sh" || b.notRun != nil {
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
	stdout, stderr, runErr := runScript(t, root, script.String(),
		"DECOY_SERVER="+p.url, "DECOY_ADMIN_TOKEN="+adminToken)

	outs := strings.Split(stdout, mark)[1:]
	if runErr != nil {
		last := len(outs) - 1
		where := "before the first block"
		if last >= 0 {
			where = fmt.Sprintf("in the block at %s:%d", path, runs[last].block.line)
		}
		t.Fatalf("the page's commands failed %s: %v\n%s\nstderr:\n%s", where, runErr, stdout, stderr)
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
	return len(runs)
}

// docScriptTimeout bounds a page's commands, so that one that never ends
// (a server left running, a --follow) fails the test instead of hanging it.
const docScriptTimeout = 3 * time.Minute

// runScript runs a page's script in bash, in a temporary folder holding a
// link to the repository's examples/, with the built decoy first on PATH
// and env added. Everything it started is killed when it ends.
func runScript(t *testing.T, root, script string, env ...string) (stdout, stderr string, err error) {
	t.Helper()
	dir := t.TempDir()
	if err := os.Symlink(filepath.Join(root, "examples"), filepath.Join(dir, "examples")); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), docScriptTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", script)
	cmd.Dir = dir
	cmd.Env = append(cleanEnv(), "PATH="+filepath.Dir(binary)+string(os.PathListSeparator)+os.Getenv("PATH"),
		"HOME="+t.TempDir())
	cmd.Env = append(cmd.Env, env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 10 * time.Second
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	if cmd.Process != nil {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // what the page left running
	}
	return out.String(), errOut.String(), err
}

// freePort returns a loopback port that was free a moment ago.
func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	_, port, _ := net.SplitHostPort(l.Addr().String())
	return port
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

// reportLine prints line where it will be seen: go test ./... shows a
// passing package's output only with -v, so without it the line also
// goes to the controlling terminal, when there is one (as
// internal/testservice does for its skip lines).
func reportLine(t *testing.T, line string) {
	t.Log(line)
	if testing.Verbose() {
		return
	}
	tty, err := os.OpenFile("/dev/tty", os.O_WRONLY, 0)
	if err != nil {
		return
	}
	defer tty.Close()
	io.WriteString(tty, line+"\n")
}

// pendingLinks are links of pages this test does not own that are known
// to be broken, each to be fixed by its page's owner: none now.
var pendingLinks = map[string]bool{}

// TestDocsLinks checks every relative link and image of README.md and
// docs/: the file it names exists, and an anchor in a Markdown page is
// one of that page's headings, as GitHub makes them.
func TestDocsLinks(t *testing.T) {
	root := repoRoot(t)
	anchors := map[string]map[string]bool{} // by page, from the root
	anchorsOf := func(page string) map[string]bool {
		if a, ok := anchors[page]; ok {
			return a
		}
		text, err := os.ReadFile(filepath.Join(root, page))
		if err != nil {
			t.Fatal(err)
		}
		anchors[page] = headingAnchors(string(text))
		return anchors[page]
	}
	checked := 0
	for _, page := range docFiles(t, root) {
		text, err := os.ReadFile(filepath.Join(root, page))
		if err != nil {
			t.Fatal(err)
		}
		for _, link := range pageLinks(string(text)) {
			if regexp.MustCompile(`^[a-z][a-z0-9+.-]*:`).MatchString(link) {
				continue // http:, https:, mailto:
			}
			checked++
			if pendingLinks[page+" -> "+link] {
				continue
			}
			target, anchor, _ := strings.Cut(link, "#")
			targetPage := page
			if target != "" {
				targetPage = filepath.ToSlash(filepath.Join(filepath.Dir(page), target))
				if strings.HasPrefix(targetPage, "../") {
					t.Errorf("%s: %s leaves the repository", page, link)
					continue
				}
				if _, err := os.Stat(filepath.Join(root, targetPage)); err != nil {
					t.Errorf("%s: %s: no such file", page, link)
					continue
				}
			}
			if anchor != "" && strings.HasSuffix(targetPage, ".md") && !anchorsOf(targetPage)[anchor] {
				t.Errorf("%s: %s: %s has no heading with the anchor #%s", page, link, targetPage, anchor)
			}
		}
	}
	t.Logf("%d relative links checked", checked)
}

var (
	mdLink    = regexp.MustCompile(`\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)`)
	htmlLink  = regexp.MustCompile(`(?:src|href)="([^"]+)"`)
	codeSpan  = regexp.MustCompile("`+[^`]*`+")
	heading   = regexp.MustCompile(`^(#{1,6})\s+(.*?)\s*#*\s*$`)
	htmlID    = regexp.MustCompile(`<a\s+(?:id|name)="([^"]+)"`)
	linkInTxt = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)
)

// pageLinks returns the targets of a page's links and images, outside
// code blocks and code spans.
func pageLinks(page string) []string {
	var links []string
	for _, line := range proseLines(page) {
		line = codeSpan.ReplaceAllString(line, "")
		for _, m := range mdLink.FindAllStringSubmatch(line, -1) {
			links = append(links, m[1])
		}
		for _, m := range htmlLink.FindAllStringSubmatch(line, -1) {
			links = append(links, m[1])
		}
	}
	return links
}

// proseLines returns the lines of a page outside fenced blocks, those of
// a paragraph joined so that a link broken over two lines is one; a
// heading is a line of its own.
func proseLines(page string) []string {
	fenced := map[int]bool{}
	lines := strings.Split(page, "\n")
	for _, b := range docBlocks(page) {
		for i := b.line - 1; i < b.end; i++ {
			fenced[i] = true
		}
	}
	var out []string
	var para []string
	flush := func() {
		if len(para) > 0 {
			out = append(out, strings.Join(para, " "))
			para = nil
		}
	}
	for i, line := range lines {
		if fenced[i] || strings.TrimSpace(line) == "" {
			flush()
			continue
		}
		if heading.MatchString(line) {
			flush()
			out = append(out, line)
			continue
		}
		para = append(para, strings.TrimSpace(line))
	}
	flush()
	return out
}

// headingAnchors returns the anchors GitHub gives a page's headings (and
// its <a id> tags): the heading's text in lower case, without
// punctuation, spaces as hyphens, a repeated one numbered -1, -2, ….
func headingAnchors(page string) map[string]bool {
	anchors := map[string]bool{}
	for _, line := range proseLines(page) {
		for _, m := range htmlID.FindAllStringSubmatch(line, -1) {
			anchors[m[1]] = true
		}
		m := heading.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		slug := githubSlug(linkInTxt.ReplaceAllString(m[2], "$1"))
		for n, s := 0, slug; ; n++ {
			if !anchors[s] {
				anchors[s] = true
				break
			}
			s = fmt.Sprintf("%s-%d", slug, n+1)
		}
	}
	return anchors
}

// githubSlug makes a heading's text an anchor as GitHub does.
func githubSlug(text string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(text) {
		switch {
		case unicode.IsLetter(r), unicode.IsNumber(r), unicode.IsMark(r), r == '_', r == '-':
			b.WriteRune(r)
		case r == ' ':
			b.WriteRune('-')
		}
	}
	return b.String()
}

// TestDocsParsing holds the pieces of the docs tests to what GitHub and
// the harness must agree on: anchors, links, and blocks marked not run.
func TestDocsParsing(t *testing.T) {
	t.Run("anchors", func(t *testing.T) {
		page := "# Decoy\n\n## An OpenAPI file, from start to finish\n\n## The admin API's calls\n\n" +
			"## 6. See what your app sent\n\n## `decoy.json` and [links](x.md)\n\n## Bounds\n\ntext\n\n## Bounds\n\n" +
			"```sh\n# not a heading\n```\n\n<a id=\"kept\"></a>\n"
		got := headingAnchors(page)
		for _, want := range []string{"decoy", "an-openapi-file-from-start-to-finish", "the-admin-apis-calls",
			"6-see-what-your-app-sent", "decoyjson-and-links", "bounds", "bounds-1", "kept"} {
			if !got[want] {
				t.Errorf("no anchor %q in %v", want, got)
			}
		}
		if got["not-a-heading"] {
			t.Error("a comment in a code block made an anchor")
		}
	})
	t.Run("links", func(t *testing.T) {
		page := "See [a](a.md#x) and [b\nc](docs/b.md), `[not](code.md)`, ![img](i.png),\n<img src=\"s.svg\">.\n\n" +
			"```sh\ncurl \"[x](fenced.md)\"\n```\n"
		got := strings.Join(pageLinks(page), " ")
		if want := "a.md#x docs/b.md i.png s.svg"; got != want {
			t.Errorf("links %q, want %q", got, want)
		}
	})
	t.Run("blocks", func(t *testing.T) {
		page := "<!-- not run: needs Docker -->\n```sh\ndocker ps\n```\n\n```text\nout\n```\n\n" +
			"- a list item:\n\n  ```sh\n  echo indented\n  ```\n\n<!-- not run -->\n```bash\nx\n```\n" +
			"```` ```sh ```` is inline code\n"
		blocks := docBlocks(page)
		if len(blocks) != 4 {
			t.Fatalf("%d blocks, want 4: %+v", len(blocks), blocks)
		}
		if b := blocks[0]; b.notRun == nil || *b.notRun != "needs Docker" {
			t.Errorf("first block not marked not run with its reason: %+v", b)
		}
		if b := blocks[1]; b.lang != "text" || b.notRun != nil {
			t.Errorf("second block %+v", b)
		}
		if b := blocks[2]; b.lang != "sh" || strings.TrimSpace(b.text) != "echo indented" || b.notRun != nil {
			t.Errorf("indented block %+v", b)
		}
		if b := blocks[3]; b.lang != "bash" || b.notRun == nil || *b.notRun != "" {
			t.Errorf("a mark without a reason: %+v", b)
		}
	})
}

// TestDocsFirstStart compares what a first start prints with what
// README.md shows under its set-up commands (the text block after them),
// the server started as the first of them starts it.
func TestDocsFirstStart(t *testing.T) {
	root := repoRoot(t)
	page, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	var shown *docBlock
	blocks := docBlocks(string(page))
	for i, b := range blocks {
		if b.lang == "sh" && strings.Contains(b.text, "go run ./cmd/decoy serve --seed ./examples") {
			if i+1 < len(blocks) && blocks[i+1].lang == "text" {
				shown = &blocks[i+1]
			}
			break
		}
	}
	if shown == nil {
		t.Fatal("README.md shows no output (a text block) after the block that runs go run ./cmd/decoy serve --seed ./examples")
	}
	p := start(t, t.TempDir(), "--seed", "../../examples")
	p.waitOutput("Mocks from")
	if err := p.stop(); err != nil { // every line written out
		t.Fatal(err)
	}
	// The page shows a build from a checkout's sources, "(devel)"; a
	// binary built from a clone names its commit instead.
	version := "(devel)"
	if m := regexp.MustCompile(`^Decoy (.+) serving on `).FindStringSubmatch(p.stdout.String()); m != nil {
		version = m[1]
	}
	want := strings.NewReplacer("http://127.0.0.1:8080", p.url, "./examples", "../../examples", "Decoy (devel) serving", "Decoy "+version+" serving").Replace(shown.text)
	if err := matchOutput(want, p.stdout.String()); err != nil {
		t.Errorf("README.md:%d: %v\ngot:\n%s", shown.line, err, p.stdout)
	}
}
