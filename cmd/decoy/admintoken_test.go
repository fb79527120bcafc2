package main_test

import (
	"bytes"
	"context"
	"net"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/decoy-mock/decoy/client"
)

var generatedAdminToken = regexp.MustCompile(`dcy_admin_[A-Za-z0-9_-]{43}`)

// printedAdminToken waits for p to print the admin token it generated, and
// returns it.
func printedAdminToken(t *testing.T, p *proc) string {
	t.Helper()
	if !p.waitOutput("DECOY_ADMIN_TOKEN=") {
		t.Fatalf("no admin token printed:\n%s", p.stdout)
	}
	tok := generatedAdminToken.FindString(p.stdout.String())
	if tok == "" {
		t.Fatalf("no admin token in:\n%s", p.stdout)
	}
	return tok
}

// adminTokenWorks reports whether the admin API of p takes tok, and fails
// the test on any refusal but a wrong token's.
func adminTokenWorks(t *testing.T, p *proc, tok string) bool {
	t.Helper()
	_, _, err := client.New(p.url, tok).ListMocks(context.Background(), "", 1)
	if err != nil && !strings.Contains(err.Error(), "Invalid admin token") {
		t.Fatalf("admin API with a token: %v", err)
	}
	return err == nil
}

// A first start whose port is taken fails, and stores no admin token that
// nobody was shown: the next start generates one and prints it.
func TestFirstStartPortTaken(t *testing.T) {
	dir := t.TempDir()
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, "serve", "--addr", taken.Addr().String(), "--data-dir", dir)
	cmd.Env = cleanEnv()
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	taken.Close()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || !strings.Contains(errOut.String(), "address already in use") {
		t.Fatalf("start on a taken port: %v\nstdout:\n%s\nstderr:\n%s", err, &out, &errOut)
	}
	if strings.Contains(out.String(), "dcy_admin_") {
		t.Errorf("a start that failed printed an admin token:\n%s", &out)
	}

	p := start(t, dir)
	tok := printedAdminToken(t, p)
	if !adminTokenWorks(t, p, tok) {
		t.Errorf("the token printed at the first start that listened is refused")
	}
}

// decoy admin-token reset replaces a lost generated token: the new one is
// printed once, and from the server's next start the old one is refused.
// A start that finds a generated token stored says how to reset it. The
// embedded store is locked by a running server, so a reset needs it
// stopped; replicas on PostgreSQL go on taking the old token until they
// restart.
func TestAdminTokenReset(t *testing.T) {
	reset := func(t *testing.T, store ...string) (string, string, int) {
		t.Helper()
		return runCLI(t, cleanEnv(), "", append([]string{"admin-token", "reset"}, store...)...)
	}
	newToken := func(t *testing.T, out, old string) string {
		t.Helper()
		toks := generatedAdminToken.FindAllString(out, -1)
		if len(toks) == 0 || toks[0] == old || !strings.Contains(out, "old token") {
			t.Fatalf("reset printed:\n%s", out)
		}
		return toks[0]
	}

	t.Run("data dir", func(t *testing.T) {
		dir := t.TempDir()
		p := start(t, dir)
		old := printedAdminToken(t, p)
		if _, errOut, code := reset(t, "--data-dir", dir); code != 1 || !strings.Contains(errOut, "stop") {
			t.Errorf("reset while the server runs: exit %d, %q", code, errOut)
		}
		if !adminTokenWorks(t, p, old) {
			t.Error("a reset that failed changed the token")
		}
		if err := p.stop(); err != nil {
			t.Fatal(err)
		}

		q := start(t, dir)
		hint := "Admin token: generated at first start and shown then; lost it? decoy admin-token reset --data-dir " + dir
		if !q.waitOutput(hint) || strings.Contains(q.stdout.String(), "dcy_admin_") {
			t.Errorf("a start with a stored token printed:\n%s\nwant %q", q.stdout, hint)
		}
		if err := q.stop(); err != nil {
			t.Fatal(err)
		}

		out, errOut, code := reset(t, "--data-dir", dir)
		if code != 0 {
			t.Fatalf("reset: exit %d, %s", code, errOut)
		}
		tok := newToken(t, out, old)
		r := start(t, dir)
		if adminTokenWorks(t, r, old) {
			t.Error("the old token still works after a reset and a restart")
		}
		if !adminTokenWorks(t, r, tok) {
			t.Error("the new token is refused")
		}
		if err := r.stop(); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(r.stdout.String(), tok) || strings.Contains(r.stderr.String(), tok) {
			t.Error("the new token was printed or logged by the server")
		}

		if _, errOut, code := reset(t, "--data-dir", t.TempDir()+"/nothing-here"); code != 1 || !strings.Contains(errOut, "no Decoy store") {
			t.Errorf("reset of a folder with no store: exit %d, %q", code, errOut)
		}
	})

	t.Run("database url", func(t *testing.T) {
		u := postgresURL(t)
		p := start(t, t.TempDir(), "--database-url", u)
		old := printedAdminToken(t, p)
		out, errOut, code := reset(t, "--database-url", u)
		if code != 0 {
			t.Fatalf("reset: exit %d, %s", code, errOut)
		}
		tok := newToken(t, out, old)
		if !adminTokenWorks(t, p, old) {
			t.Error("a running replica refused its token before it restarted")
		}
		if err := p.stop(); err != nil {
			t.Fatal(err)
		}
		q := start(t, t.TempDir(), "--database-url", u)
		if !q.waitOutput("lost it? decoy admin-token reset --database-url ") {
			t.Errorf("a start with a stored token printed:\n%s", q.stdout)
		}
		if adminTokenWorks(t, q, old) {
			t.Error("the old token still works after a reset and a restart")
		}
		if !adminTokenWorks(t, q, tok) {
			t.Error("the new token is refused")
		}
	})
}
