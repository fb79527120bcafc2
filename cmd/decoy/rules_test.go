package main_test

// Rules and faults (§13.1) on the real binary: rules set from a file with
// the CLI; each fault read on a raw socket; a rule with times counted
// across two replicas (PostgreSQL and Redis, and PostgreSQL alone) and
// started again by decoy route rules-reset; a template that reads the
// request; a private mock's rules behind its token.

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/decoy-mock/decoy/client"
)

// rulesFile writes rules to a file of the test's and returns its path.
func rulesFile(t *testing.T, rules string) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "rules.json")
	if err := os.WriteFile(f, []byte(rules), 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}

// rawGet sends GET target on a new connection to p and reads until the
// server closes it: what came, and how the read ended.
func rawGet(t *testing.T, p *proc, target string) ([]byte, error) {
	t.Helper()
	c, err := net.Dial("tcp", strings.TrimPrefix(p.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := io.WriteString(c, "GET "+target+" HTTP/1.1\r\nHost: test\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	return io.ReadAll(c)
}

// CONTRACT §13.1: reset (ECONNRESET on read, nothing answered), empty
// (EOF, nothing answered), malformed (a head with Content-Length N, fewer
// bytes, then EOF); rules set with decoy route create --rules and
// decoy route update --rules.
func TestRuleFaultsOnTheSocket(t *testing.T) {
	p := start(t, t.TempDir(), "--admin-token", adminToken)
	m := createMock(t, p, `[{"id":1,"name":"Ada"},{"id":2,"name":"Linus"}]`, client.CreateOptions{})
	id := routeCLI(t, p, "--method", "GET", "--path", "/people", "--mock", m.ID, "--rules", rulesFile(t, `[{"name":"drop","when":"query.fault=reset","fault":"reset"}]`))
	if _, errOut, code := decoyCLI(t, p, `[
		{"name":"drop","when":"query.fault=reset","fault":"reset"},
		{"name":"hang up","when":"query.fault=empty","fault":"empty"},
		{"name":"cut","when":"query.fault=malformed","fault":"malformed"}]`, "route", "update", id, "--rules", "-"); code != 0 {
		t.Fatalf("route update --rules -: %s", errOut)
	}

	got, err := rawGet(t, p, "/p/default/people?fault=reset")
	if len(got) != 0 || !errors.Is(err, syscall.ECONNRESET) {
		t.Errorf("reset: read %q, %v; want nothing, then ECONNRESET", got, err)
	}
	got, err = rawGet(t, p, "/p/default/people?fault=empty")
	if len(got) != 0 || err != nil {
		t.Errorf("empty: read %q, %v; want nothing, then EOF", got, err)
	}
	got, err = rawGet(t, p, "/p/default/people?fault=malformed")
	if err != nil {
		t.Fatalf("malformed: %v", err)
	}
	head, body, ok := strings.Cut(string(got), "\r\n\r\n")
	resp, rerr := http.ReadResponse(bufio.NewReader(strings.NewReader(head+"\r\n\r\n")), nil)
	const data = `[{"id":1,"name":"Ada"},{"id":2,"name":"Linus"}]`
	if !ok || rerr != nil || resp.StatusCode != 200 || resp.ContentLength != int64(len(data)) || len(body) >= len(data) ||
		!strings.HasPrefix(data, body) || resp.Header.Get("Content-Type") != "application/json" {
		t.Errorf("malformed: %q (%v)", got, rerr)
	}
	// The server goes on answering, normally when no rule holds.
	if a := get(t, p.url+"/p/default/people/?fault=none"); a.status != 200 || a.body != data {
		t.Errorf("after the faults: %d %s", a.status, a.body)
	}
	waitFor(t, "the faults logged with status 444", func() bool {
		return strings.Count(p.stderr.String(), `"status":444`)+strings.Count(p.stderr.String(), "status=444") == 3
	})
	// A file that is not an array of rules is refused before it is sent.
	// A file that is not JSON says where, and is a failure (1), not a
	// command line misread (2).
	if _, errOut, code := decoyCLI(t, p, "[\n{\"fault\": reset}]", "route", "update", id, "--rules", "-"); code != 1 ||
		!strings.Contains(errOut, "--rules -: not valid JSON, at line 2, column 11: unexpected 'r'") {
		t.Errorf("rules not JSON: exit %d %s", code, errOut)
	}
	if _, errOut, code := decoyCLI(t, p, `{"fault":"reset"}`, "route", "update", id, "--rules", "-"); code != 1 || !strings.Contains(errOut, "JSON array of rules") {
		t.Errorf("rules not in an array: exit %d, %s", code, errOut)
	}
	// A bad rule is refused by the server, naming it.
	if _, errOut, code := decoyCLI(t, p, `[{},{"name":"slow","when":"header.x-mode[$gt]=1"}]`, "route", "update", id, "--rules", "-"); code == 0 ||
		!strings.Contains(errOut, "Invalid rule 2 (slow): when: Unsupported operator: $gt") {
		t.Errorf("a bad rule: exit %d, %s", code, errOut)
	}
}

// CONTRACT §13.1: a rule with times holds for that many requests in all,
// counted across replicas: [{"times":3,"status":503},{}] answers exactly
// three 503s over ten requests spread over two replicas, and three again
// after decoy route rules-reset. With Redis (the counts there), and on
// PostgreSQL alone (the counts in the database).
func TestRuleTimesAcrossReplicas(t *testing.T) {
	db := postgresURL(t)
	rd, prefix := redisURL(t)
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"redis", []string{"--redis-url", rd, "--redis-key-prefix", prefix}},
		{"postgres", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var ps []*proc
			if tc.args != nil {
				ps = startReplicas(t, 2, db, rd, prefix)
			} else {
				dbURL := postgresURL(t)
				for range 2 {
					ps = append(ps, start(t, t.TempDir(), "--admin-token", adminToken, "--database-url", dbURL))
				}
			}
			a := ps[0]
			m := createMock(t, a, `[{"id":1}]`, client.CreateOptions{RateLimit: i64(1000)})
			// The probe rule tells when a replica has the rules, without
			// taking the count of the rule with times.
			id := routeCLI(t, a, "--method", "GET", "--path", "/things", "--mock", m.ID,
				"--rules", rulesFile(t, `[{"when":"query.probe=1","body":"probe"},{"times":3,"status":503},{}]`))
			for _, p := range ps {
				waitFor(t, "the rules on "+p.url, func() bool { return get(t, p.url+"/p/default/things?probe=1").body == `"probe"` })
			}
			for round := range 2 {
				counts := spread(t, ps, "/p/default/things", 10)
				if counts[503] != 3 || counts[200] != 7 {
					t.Errorf("round %d: %v, want 3 × 503 and 7 × 200", round+1, counts)
				}
				if _, errOut, code := decoyCLI(t, a, "", "route", "rules-reset", id); code != 0 {
					t.Fatalf("route rules-reset: %s", errOut)
				}
			}
		})
	}
}

// waitFor polls cond for up to 10 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 10 s", what)
		}
	}
}

// CONTRACT §13.1: a rule's template reads the request it answers; a
// private mock's rules answer only past its token.
func TestRuleTemplateAndToken(t *testing.T) {
	p := start(t, t.TempDir(), "--admin-token", adminToken)
	m := createMock(t, p, `[{"id":1}]`, client.CreateOptions{Private: true})
	routeCLI(t, p, "--method", "GET", "--path", "/users/{id}", "--mock", m.ID, "--rules", rulesFile(t,
		`[{"when":"header.x-user[$eqi]=BOB","status":200,"template":{"id":"{{ request.path.id }}","user":"{{ request.header.x-user }}","seen":"user {{ request.header.x-user }} asked for {{ request.path.id }}"}}]`))
	if a := get(t, p.url+"/p/default/users/7", "X-User", "bob"); a.status != 401 || a.body != `{"error":"Auth token not found"}`+"\n" {
		t.Errorf("without the token: %d %s", a.status, a.body)
	}
	a := get(t, p.url+"/p/default/users/7", "X-User", "bob", "decoyauthtoken", m.Token)
	var got map[string]string
	if a.status != 200 || json.Unmarshal([]byte(a.body), &got) != nil || got["id"] != "7" || got["user"] != "bob" || got["seen"] != "user bob asked for 7" {
		t.Errorf("the template: %d %s", a.status, a.body)
	}
	if a := get(t, p.url+"/p/default/users/1", "decoyauthtoken", m.Token); a.status != 200 || a.body != `{"id":1}` {
		t.Errorf("no rule holds: %d %s", a.status, a.body)
	}
}
