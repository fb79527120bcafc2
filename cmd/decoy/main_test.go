package main_test

// End-to-end tests: they build the real decoy binary, run it on a free
// loopback port with a temporary data directory, and check the contract over
// HTTP and through the CLI.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/decoy-mock/decoy"
	"github.com/decoy-mock/decoy/client"
	"github.com/decoy-mock/decoy/internal/testservice"
)

var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "decoy-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "decoy")
	build := exec.Command("go", "build", "-o", binary, ".")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build decoy:", err)
		os.Exit(1)
	}
	code := testservice.Main(m)
	os.RemoveAll(dir)
	os.Exit(code)
}

const adminToken = "e2e-admin-token-0123456789"

// proc is a running decoy serve.
type proc struct {
	t      *testing.T
	cmd    *exec.Cmd
	url    string
	stdout *lockedBuffer
	stderr *lockedBuffer
	done   chan error
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}
func (l *lockedBuffer) String() string { l.mu.Lock(); defer l.mu.Unlock(); return l.b.String() }

var servingLine = regexp.MustCompile(`serving on (https?://\S+)`)

// start runs decoy serve on a free port with dataDir and waits until it
// listens.
func start(t *testing.T, dataDir string, args ...string) *proc {
	t.Helper()
	all := append([]string{"serve", "--addr", "127.0.0.1:0", "--data-dir", dataDir}, args...)
	cmd := exec.Command(binary, all...)
	cmd.Env = cleanEnv()
	p := &proc{t: t, cmd: cmd, stdout: &lockedBuffer{}, stderr: &lockedBuffer{}, done: make(chan error, 1)}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			line := sc.Text()
			p.stdout.Write([]byte(line + "\n"))
			if m := servingLine.FindStringSubmatch(line); m != nil {
				select {
				case found <- m[1]:
				default:
				}
			}
		}
		p.done <- cmd.Wait()
	}()
	select {
	case p.url = <-found:
	case err := <-p.done:
		t.Fatalf("decoy exited before listening: %v\n%s", err, p.stderr)
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("decoy did not start:\n%s", p.stderr)
	}
	t.Cleanup(func() { p.stop() })
	return p
}

// stop sends SIGTERM and waits for the process to exit.
func (p *proc) stop() error {
	if p.cmd.ProcessState != nil {
		return nil
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-p.done:
		p.done <- err
		return err
	case <-time.After(40 * time.Second):
		p.cmd.Process.Kill()
		return fmt.Errorf("decoy did not stop on SIGTERM")
	}
}

// cleanEnv drops DECOY_* variables of the environment the tests run in.
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "DECOY_") {
			env = append(env, kv)
		}
	}
	return env
}

// waitOutput waits until the process has printed s on standard output.
func (p *proc) waitOutput(s string) bool {
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(p.stdout.String(), s) {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
	return true
}

// waitLog waits until the process has logged s: log lines below Warn are
// written out in batches (see logwriter.go).
func (p *proc) waitLog(s string) bool {
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(p.stderr.String(), s) {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
	return true
}

func (p *proc) admin() *client.Client { return client.New(p.url, adminToken) }

type answer struct {
	status int
	header http.Header
	body   string
}

func get(t *testing.T, url string, header ...string) answer {
	t.Helper()
	return send(t, http.MethodGet, url, "", header...)
}

// send sends a request with a body and reads the answer whole.
func send(t *testing.T, method, url, body string, header ...string) answer {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return answer{resp.StatusCode, resp.Header, string(b)}
}

func createMock(t *testing.T, p *proc, data string, o client.CreateOptions) *client.Mock {
	t.Helper()
	m, err := p.admin().CreateMock(context.Background(), strings.NewReader(data), o)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func i64(n int64) *int64 { return &n }

// The read endpoint over HTTP against the real binary.
func TestReadContract(t *testing.T) {
	p := start(t, t.TempDir(), "--admin-token", adminToken)
	const doc = `[
  {"id": 1, "name": "Ren\u00e9", "price": 30.0, "address": {"city": "Paris"}, "tags": ["a","b"], "z": 1, "a": 2},
  {"id": 2, "name": "bob", "price": 1e1, "address": {"city": "paris"}, "tags": []},
  {"id": 3, "name": "Cleo", "price": 25, "address": {"city": "Lyon"}, "tags": ["b"]}
]`
	m := createMock(t, p, doc, client.CreateOptions{Name: "people"})
	base := p.url + "/mock/" + m.ID
	first := `{"id": 1, "name": "Ren\u00e9", "price": 30.0, "address": {"city": "Paris"}, "tags": ["a","b"], "z": 1, "a": 2}`
	for _, tc := range []struct {
		query  string
		status int
		body   string
		total  string
	}{
		{"", 200, doc, "3"},
		{"?filters=address.city%3DParis", 200, "[" + first + "]", "1"},
		{"?filters=address.city%5B%24eqi%5D%3Dparis&order_by=price&order_direction=desc&limit=1", 200, "[" + first + "]", "2"},
		{"?filters=price%3D30", 200, "[" + first + "]", "1"},
		{"?filters=tags%3Db&offset=1", 200, `[{"id": 3, "name": "Cleo", "price": 25, "address": {"city": "Lyon"}, "tags": ["b"]}]`, "2"},
		{"?filters=name%3DRen%C3%A9", 200, "[" + first + "]", "1"},
		{"?limit=0", 200, "[]", "3"},
		{"?filters=price%5B%24gt%5D%3D10", 400, `{"error":"Unsupported operator: $gt"}` + "\n", ""},
		{"?limit=-1", 400, `{"error":"Limit must be 0 or greater"}` + "\n", ""},
		{"?order_by=id&order_direction=up", 400, `{"error":"order_direction must be asc or desc"}` + "\n", ""},
	} {
		a := get(t, base+tc.query)
		if a.status != tc.status || a.body != tc.body || a.header.Get("X-Total-Count") != tc.total {
			t.Errorf("%s: %d total=%q\n got %s\nwant %s", tc.query, a.status, a.header.Get("X-Total-Count"), a.body, tc.body)
		}
	}
	a := get(t, p.url+"/api/"+strings.ToUpper(m.ID)+"?limit=1")
	if a.status != 200 || a.body != "["+first+"]" {
		t.Errorf("/api/ alias: %d %s", a.status, a.body)
	}
	resp, err := http.Post(base, "application/json", nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 405 || string(body) != `{"error":"Invalid Method"}`+"\n" || resp.Header.Get("Allow") != "GET, HEAD" {
		t.Errorf("POST: %d %s", resp.StatusCode, body)
	}
	if a := get(t, p.url+"/mock/3f1c5a8e-0000-4000-8000-000000000000"); a.status != 404 || a.body != `{"error":"Mock api not found"}`+"\n" {
		t.Errorf("unknown: %d %s", a.status, a.body)
	}
}

// A private mock, its token, and a rotation that takes effect at once.
func TestTokensEndToEnd(t *testing.T) {
	p := start(t, t.TempDir(), "--admin-token", adminToken)
	m := createMock(t, p, `[{"a":1}]`, client.CreateOptions{Private: true})
	u := p.url + "/mock/" + m.ID
	if a := get(t, u); a.status != 401 || a.body != `{"error":"Auth token not found"}`+"\n" {
		t.Errorf("no token: %d %s", a.status, a.body)
	}
	if a := get(t, u, "serviceauthtoken", "dcy_wrong"); a.status != 401 || a.body != `{"error":"Invalid auth token"}`+"\n" {
		t.Errorf("wrong token: %d %s", a.status, a.body)
	}
	if a := get(t, u+"?auth_token="+m.Token); a.status != 200 {
		t.Errorf("query token: %d", a.status)
	}
	if a := get(t, u, "decoyauthtoken", m.Token); a.status != 200 {
		t.Errorf("header token: %d", a.status)
	}
	if a := get(t, u, "Authorization", "Bearer "+m.Token); a.status != 200 {
		t.Errorf("bearer token: %d %s", a.status, a.body)
	}
	rotated, err := p.admin().RotateToken(context.Background(), m.ID)
	if err != nil {
		t.Fatal(err)
	}
	if a := get(t, u, "serviceauthtoken", m.Token); a.status != 401 || a.body != `{"error":"Invalid auth token"}`+"\n" {
		t.Errorf("old token after rotation: %d %s", a.status, a.body)
	}
	if a := get(t, u, "serviceauthtoken", rotated.Token); a.status != 200 {
		t.Errorf("new token: %d", a.status)
	}
	if err := p.stop(); err != nil { // every line written out
		t.Fatal(err)
	}
	if strings.Contains(p.stderr.String(), m.Token) || strings.Contains(p.stderr.String(), rotated.Token) {
		t.Error("a token reached the logs")
	}
	if !strings.Contains(p.stderr.String(), "auth_token=REDACTED") {
		t.Error("the access log does not show auth_token as REDACTED")
	}
}

// A stored element comes back byte-identical: number spelling, key order and
// escapes are kept.
func TestByteIdentical(t *testing.T) {
	p := start(t, t.TempDir(), "--admin-token", adminToken)
	elem := `{"z": 30.0, "a": "caf\u00e9", "m": [1.50, -0e0], "\u0041": true}`
	m := createMock(t, p, `[`+elem+`, {"z": 1}]`, client.CreateOptions{})
	if a := get(t, p.url+"/mock/"+m.ID+"?filters=z%3D30&limit=1"); a.body != "["+elem+"]" {
		t.Errorf("got  %s\nwant [%s]", a.body, elem)
	}
}

// 20 concurrent requests against a limit of 5: exactly 5 served.
func TestRateLimitUnderConcurrency(t *testing.T) {
	p := start(t, t.TempDir(), "--admin-token", adminToken)
	m := createMock(t, p, `[{"a":1}]`, client.CreateOptions{RateLimit: i64(5)})
	counts := concurrentGets(t, 20, func(int) string { return p.url + "/mock/" + m.ID })
	if counts[200] != 5 || counts[429] != 15 {
		t.Errorf("answers %v, want 5 × 200 and 15 × 429", counts)
	}
}

// concurrentGets sends n GETs at once, the i-th to url(i), and counts the
// answers by status.
func concurrentGets(t *testing.T, n int, url func(i int) string) map[int]int {
	t.Helper()
	var mu sync.Mutex
	counts := map[int]int{}
	var wg sync.WaitGroup
	startGate := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-startGate
			resp, err := http.Get(url(i))
			if err != nil {
				t.Error(err)
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			mu.Lock()
			counts[resp.StatusCode]++
			mu.Unlock()
		})
	}
	close(startGate)
	wg.Wait()
	return counts
}

// A quota of 3 under 8 concurrent requests serves exactly 3, and the count
// survives a restart on the same data directory.
func TestQuotaSurvivesRestart(t *testing.T) {
	dir := t.TempDir()
	p := start(t, dir, "--admin-token", adminToken)
	m := createMock(t, p, `[{"a":1}]`, client.CreateOptions{MonthlyQuota: i64(3)})
	counts := concurrentGets(t, 8, func(int) string { return p.url + "/mock/" + m.ID })
	if counts[200] != 3 || counts[429] != 5 {
		t.Errorf("answers %v, want 3 × 200 and 5 × 429", counts)
	}
	if err := p.stop(); err != nil {
		t.Fatalf("stop: %v\n%s", err, p.stderr)
	}
	q := start(t, dir, "--admin-token", adminToken)
	a := get(t, q.url+"/mock/"+m.ID)
	if a.status != 429 || a.body != `{"error":"Monthly request quota exceeded"}`+"\n" {
		t.Errorf("after restart: %d %s", a.status, a.body)
	}
	if a.header.Get("Retry-After") == "" || a.header.Get("X-Quota-Remaining") != "0" {
		t.Errorf("after restart headers: %v", a.header)
	}
}

// --seed serves examples/ under ids that stay the same across restarts.
func TestSeed(t *testing.T) {
	dir := t.TempDir()
	p := start(t, dir, "--admin-token", adminToken, "--seed", "../../examples")
	for _, name := range []string{"users", "products", "orders"} {
		id := decoy.SeedID(name)
		url := p.url + "/mock/" + id
		if !p.waitOutput(url) {
			t.Errorf("startup output lacks %s:\n%s", url, p.stdout)
		}
		want, _ := os.ReadFile("../../examples/" + name + ".json")
		if a := get(t, url); a.status != 200 || a.body != string(want) {
			t.Errorf("%s: %d, %d bytes", name, a.status, len(a.body))
		}
	}
	a := get(t, p.url+"/mock/"+decoy.SeedID("users")+"?filters=address.city%3DParis&order_by=age&order_direction=desc&limit=3")
	var users []struct {
		Age     int
		Address struct{ City string }
	}
	if err := json.Unmarshal([]byte(a.body), &users); err != nil || len(users) != 3 {
		t.Fatalf("query on seeded users: %v %s", err, a.body)
	}
	for i, u := range users {
		if u.Address.City != "Paris" || (i > 0 && u.Age > users[i-1].Age) {
			t.Errorf("user %d: %+v", i, u)
		}
	}
	p.stop()
	q := start(t, dir, "--admin-token", adminToken, "--seed", "../../examples")
	if !q.waitOutput("/mock/" + decoy.SeedID("users")) {
		t.Error("ids changed across restarts")
	}
}

// Without --admin-token, a token is generated, printed once, and kept.
func TestGeneratedAdminToken(t *testing.T) {
	dir := t.TempDir()
	p := start(t, dir)
	p.waitOutput("DECOY_ADMIN_TOKEN=")
	tok := regexp.MustCompile(`dcy_admin_[A-Za-z0-9_-]{43}`).FindString(p.stdout.String())
	if tok == "" {
		t.Fatalf("no admin token printed:\n%s", p.stdout)
	}
	if _, _, err := client.New(p.url, tok).ListMocks(context.Background(), "", 1); err != nil {
		t.Fatalf("generated token refused: %v", err)
	}
	if err := p.stop(); err != nil { // every line written out
		t.Fatal(err)
	}
	if strings.Contains(p.stderr.String(), tok) {
		t.Error("the admin token reached the logs")
	}
	q := start(t, dir)
	if strings.Contains(q.stdout.String(), "dcy_admin_") {
		t.Error("the admin token was printed again")
	}
	if _, _, err := client.New(q.url, tok).ListMocks(context.Background(), "", 1); err != nil {
		t.Errorf("token lost after restart: %v", err)
	}
}

// SIGTERM lets a delayed in-flight request finish, then the process exits.
func TestGracefulShutdown(t *testing.T) {
	p := start(t, t.TempDir(), "--admin-token", adminToken)
	m := createMock(t, p, `[{"a":1}]`, client.CreateOptions{DelayMS: 1500})
	result, sent := getAsync(p.url + "/mock/" + m.ID)
	<-sent
	time.Sleep(200 * time.Millisecond) // let the server read it and enter the delay
	if err := p.stop(); err != nil {
		t.Fatalf("exit: %v\n%s", err, p.stderr)
	}
	a := <-result
	if a.status != 200 || a.body != `[{"a":1}]` {
		t.Errorf("in-flight request: %d %s", a.status, a.body)
	}
	if _, err := http.Get(p.url + "/healthz"); err == nil {
		t.Error("still accepting connections after exit")
	}
}

// decoyCLI runs the binary as a CLI command.
func decoyCLI(t *testing.T, p *proc, stdin string, args ...string) (string, string, int) {
	t.Helper()
	return runCLI(t, append(cleanEnv(), "DECOY_SERVER="+p.url, "DECOY_ADMIN_TOKEN="+adminToken), stdin, args...)
}

// runCLI runs the decoy binary with env and stdin, and returns what it
// printed and its exit code.
func runCLI(t *testing.T, env []string, stdin string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Env = env
	cmd.Stdin = strings.NewReader(stdin)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), errOut.String(), code
}

func TestCLI(t *testing.T) {
	p := start(t, t.TempDir(), "--admin-token", adminToken)
	dataDir := t.TempDir() // for the serve commands that must fail
	out, errOut, code := decoyCLI(t, p, `[{"n":1},{"n":2}]`, "mock", "create", "--file", "-", "--name", "cli", "--private", "--status", "201")
	if code != 0 {
		t.Fatalf("create: %d %s", code, errOut)
	}
	var m client.Mock
	if err := json.Unmarshal([]byte(out), &m); err != nil || m.Name != "cli" || !m.Private || m.Token == "" || m.Status != 201 {
		t.Fatalf("create printed %s (%v)", out, err)
	}
	if a := get(t, m.URL+"?limit=1", "serviceauthtoken", m.Token); a.status != 201 || a.body != `[{"n":1}]` {
		t.Errorf("read: %d %s", a.status, a.body)
	}
	file := filepath.Join(t.TempDir(), "page.html")
	os.WriteFile(file, []byte("<p>hi</p>"), 0o600)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"mock", "get", m.ID}, `"name": "cli"`},
		{[]string{"mock", "list"}, m.ID},
		{[]string{"mock", "list", "--all", "--limit", "1"}, m.ID},
		{[]string{"mock", "data", m.ID}, `[{"n":1},{"n":2}]`},
		{[]string{"mock", "usage", m.ID}, `"used": 1`},
		{[]string{"mock", "patch", m.ID, "--rate-limit", "7", "--name", "renamed"}, `"rate_limit": 7`},
		{[]string{"mock", "patch", "--rate-limit", "default", m.ID}, `"rate_limit": null`},
		{[]string{"mock", "update", m.ID, "--file", file}, `"content_type": "text/html; charset=utf-8"`},
		{[]string{"mock", "rotate-token", m.ID}, `"token": "dcy_`},
		{[]string{"version"}, "decoy "},
	} {
		out, errOut, code := decoyCLI(t, p, "", tc.args...)
		if code != 0 || !strings.Contains(out, tc.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want %q", tc.args, code, out, errOut, tc.want)
		}
	}
	if _, _, code := decoyCLI(t, p, "", "mock", "delete", m.ID); code != 0 {
		t.Errorf("delete: exit %d", code)
	}
	for _, tc := range []struct {
		args    []string
		code    int
		message string
	}{
		{[]string{"mock", "get", m.ID}, 1, "404 Mock api not found"},
		{[]string{"mock", "get"}, 2, "needs a mock (id or name)"},
		{[]string{"mock", "frobnicate"}, 2, "unknown mock command"},
		{[]string{"mock", "create"}, 2, "--file is required"},
		{[]string{"mock", "patch", m.ID}, 2, "at least one setting"},
		{[]string{"serve", "--rate-limit", "-1"}, 1, "--rate-limit must be an integer from 0 to 1000000 (0: unlimited)"},
		{[]string{"serve", "--client-rate-limit", "1000001"}, 1, "--client-rate-limit must be an integer from 0 to 1000000"},
		{[]string{"serve", "--auth-failure-limit", "1000001"}, 1, "--auth-failure-limit must be an integer from 0 to 1000000"},
		{[]string{"serve", "--data-dir", dataDir, "--database-url", "mysql://x"}, 1, "--database-url must be a postgres:// or postgresql:// URL"},
		{[]string{"serve", "--database-url", "postgres://127.0.0.1:1/x?connect_timeout=2"}, 1, "open PostgreSQL store postgres://127.0.0.1:1/x?connect_timeout=2: The database is unavailable"},
		{[]string{"serve", "--data-dir", dataDir, "--redis-url", "http://x"}, 1, "--redis-url: redis: http://x: scheme must be"},
		{[]string{"serve", "--data-dir", dataDir, "--redis-key-prefix", "a{b}"}, 1, "--redis-key-prefix must not contain"},
		{[]string{"nope"}, 2, "unknown command"},
	} {
		_, errOut, code := decoyCLI(t, p, "", tc.args...)
		if code != tc.code || !strings.Contains(errOut, tc.message) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", tc.args, code, errOut, tc.code, tc.message)
		}
	}
	cmd := exec.Command(binary, "mock", "list")
	cmd.Env = append(cleanEnv(), "DECOY_SERVER="+p.url, "DECOY_ADMIN_TOKEN=wrong")
	if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "401 Invalid admin token") {
		t.Errorf("wrong admin token: %v %s", err, out)
	}
}

// Flags can come from DECOY_* variables.
func TestEnvironmentFlags(t *testing.T) {
	cmd := exec.Command(binary, "serve", "--addr", "127.0.0.1:0", "--data-dir", t.TempDir())
	cmd.Env = append(cleanEnv(), "DECOY_RATE_LIMIT=-5")
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "--rate-limit must be an integer from 0 to") {
		t.Errorf("DECOY_RATE_LIMIT=-5 was not read: %v %s", err, out)
	}
}

// Every DECOY_* variable that the compose files set is a flag of serve.
func TestComposeVariablesAreFlags(t *testing.T) {
	help, _ := exec.Command(binary, "serve", "--help").CombinedOutput()
	for _, file := range []string{"docker-compose.yml", "docker-compose.replicas.yml"} {
		compose, err := os.ReadFile("../../" + file)
		if err != nil {
			t.Fatal(err)
		}
		vars := regexp.MustCompile(`(?m)^\s+(DECOY_[A-Z_]+):`).FindAllStringSubmatch(string(compose), -1)
		if len(vars) < 3 {
			t.Fatalf("found only %d DECOY_ variables in %s", len(vars), file)
		}
		for _, v := range vars {
			flag := strings.ToLower(strings.ReplaceAll(strings.TrimPrefix(v[1], "DECOY_"), "_", "-"))
			if !regexp.MustCompile(`(?m)^\s+--` + regexp.QuoteMeta(flag) + `\b`).Match(help) {
				t.Errorf("%s sets %s, but serve has no --%s", file, v[1], flag)
			}
		}
	}
}

// getAsync GETs url in the background: sent is closed once the request is
// written, and result receives the answer (status -1 and the error as body
// when there is none).
func getAsync(url string) (result <-chan answer, sent <-chan struct{}) {
	res, wrote := make(chan answer, 1), make(chan struct{})
	go func() {
		trace := &httptrace.ClientTrace{WroteRequest: func(httptrace.WroteRequestInfo) { close(wrote) }}
		req, _ := http.NewRequestWithContext(httptrace.WithClientTrace(context.Background(), trace), http.MethodGet, url, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			res <- answer{status: -1, body: err.Error()}
			return
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		res <- answer{status: resp.StatusCode, body: string(b)}
	}()
	return res, wrote
}
