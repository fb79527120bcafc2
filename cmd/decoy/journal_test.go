package main_test

// The request journal (§13.2) on the real binary: one across replicas on
// PostgreSQL and Redis, its secrets redacted, its bound, a frozen Redis
// that drops entries and never slows a read, and decoy requests.

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/decoy-mock/decoy"
	"github.com/decoy-mock/decoy/client"
	"github.com/decoy-mock/decoy/internal/testservice"
)

// usersRoute makes a mock of users in the default project and a route GET
// /users on it, and returns the mock.
func usersRoute(t *testing.T, p *proc, o client.CreateOptions) *client.Mock {
	t.Helper()
	m := createMock(t, p, `[{"id":1,"name":"Ada"},{"id":2,"name":"Linus"}]`, o)
	if a := api(t, p, "POST", "projects/"+decoy.DefaultProjectID+"/routes", adminToken,
		`{"method":"GET","path":"/users","mock_id":"`+m.ID+`"}`); a.status != 201 {
		t.Fatalf("route: %d %s", a.status, a.body)
	}
	return m
}

// journal lists the default project's journal through p, with query.
func journal(t *testing.T, p *proc, query string) []decoy.JournalEntry {
	t.Helper()
	a := api(t, p, "GET", "projects/"+decoy.DefaultProjectID+"/requests"+query, adminToken, "")
	var page struct {
		Requests []decoy.JournalEntry `json:"requests"`
	}
	if a.status != 200 || json.Unmarshal([]byte(a.body), &page) != nil {
		t.Fatalf("the journal: %d %s", a.status, a.body)
	}
	return page.Requests
}

// listedWithin waits, at most within, until the journal through p lists
// an entry whose X-Seq header is seq, and returns how long it took.
func listedWithin(t *testing.T, p *proc, seq string, within time.Duration) (time.Duration, decoy.JournalEntry) {
	t.Helper()
	start := time.Now()
	for {
		for _, e := range journal(t, p, "?limit=1000") {
			if e.Headers["X-Seq"] == seq {
				return time.Since(start), e
			}
		}
		if time.Since(start) > within {
			t.Fatalf("request %s not listed on %s within %v", seq, p.url, within)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// One journal across replicas: a request answered by one is listed on the
// other within a second, its live feed on the other shows it, and a clear
// through either clears it for both.
func TestJournalAcrossReplicas(t *testing.T) {
	db := postgresURL(t)
	rd, prefix := redisURL(t)
	ps := startReplicas(t, 2, db, rd, prefix)
	a, b := ps[0], ps[1]
	m := usersRoute(t, a, client.CreateOptions{Name: "users"})

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	followed := make(chan *decoy.JournalEntry, 100)
	go b.admin().FollowRequests(ctx, decoy.DefaultProjectID, decoy.JournalFilter{}, func(e *decoy.JournalEntry) error {
		followed <- e
		return nil
	})
	// The feed sends what is answered once it is open: until then, send.
	warm := time.After(10 * time.Second)
	for i, open := 0, false; !open; i++ {
		get(t, a.url+"/p/default/users", "X-Seq", "warm-"+strconv.Itoa(i))
		select {
		case <-followed:
			open = true
		case <-time.After(200 * time.Millisecond):
		case <-warm:
			t.Fatal("b's feed sent nothing within 10 s")
		}
	}
	inFeed := func(seq string) {
		t.Helper()
		timeout := time.After(2 * time.Second)
		for {
			select {
			case f := <-followed:
				if f.Headers["X-Seq"] == seq {
					return
				}
				if !strings.HasPrefix(f.Headers["X-Seq"], "warm-") {
					t.Errorf("the feed on b sent request %v, want %s", f.Headers["X-Seq"], seq)
				}
			case <-timeout:
				t.Errorf("request %s not in b's feed within 2 s", seq)
				return
			}
		}
	}

	for i, c := range []struct {
		through, other *proc
		path, query    string
	}{
		{a, b, "/p/default/users", "limit=1"},
		{b, a, "/mock/" + m.ID, ""},
		{a, b, "/p/default/nowhere", ""},
	} {
		seq := strconv.Itoa(i)
		get(t, c.through.url+c.path+"?"+c.query, "X-Seq", seq)
		took, e := listedWithin(t, c.other, seq, time.Second)
		t.Logf("%s through one replica: listed on the other after %v", c.path, took.Round(time.Millisecond))
		if e.Path != c.path || e.Query != c.query {
			t.Errorf("entry of %s?%s: %s?%s", c.path, c.query, e.Path, e.Query)
		}
		listedWithin(t, c.through, seq, time.Second)
		inFeed(seq)
	}
	es := journal(t, b, "?limit=3")
	if len(es) != 3 || es[0].Status != 404 || es[1].MockID != m.ID || es[2].RouteID == "" {
		t.Errorf("the journal on b: %+v", es)
	}
	if a := api(t, b, "DELETE", "projects/"+decoy.DefaultProjectID+"/requests", adminToken, ""); a.status != 204 {
		t.Fatalf("clear: %d %s", a.status, a.body)
	}
	for _, p := range ps {
		if es := journal(t, p, ""); len(es) != 0 {
			t.Errorf("after the clear through b, %s lists %d entries", p.url, len(es))
		}
	}
}

// Secrets never reach the journal, over HTTP and through the CLI: the
// token headers (--token-header's too) in any letter case, auth_token in
// any spelling, Authorization and cookies.
func TestJournalRedactsEndToEnd(t *testing.T) {
	p := start(t, t.TempDir(), "--admin-token", adminToken, "--token-header", "X-Brand-Token")
	m := usersRoute(t, p, client.CreateOptions{Private: true})
	sent := []struct {
		path   string
		header []string
	}{
		{"/p/default/users", []string{"serviceauthtoken", m.Token}},
		{"/p/default/users", []string{"DECOYAUTHTOKEN", m.Token}},
		{"/p/default/users", []string{"x-brand-token", m.Token}},
		{"/p/default/users", []string{"Authorization", "Bearer " + m.Token}},
		{"/p/default/users", []string{"Cookie", "token=" + m.Token}},
		{"/p/default/users?auth_token=" + m.Token, nil},
		{"/mock/" + m.ID + "?Auth%5FToken=" + m.Token + "&limit=1", nil},
	}
	for i, s := range sent {
		// Recorded whatever the answer (the read path takes no token
		// from Authorization, whatever §1.5 says: a 401).
		get(t, p.url+s.path, append(s.header, "X-Seq", strconv.Itoa(i))...)
	}
	listedWithin(t, p, strconv.Itoa(len(sent)-1), 5*time.Second)
	out, errOut, code := decoyCLI(t, p, "", "requests", "--project", "default", "-o", "json")
	if code != 0 {
		t.Fatalf("decoy requests: %d %s", code, errOut)
	}
	raw := api(t, p, "GET", "projects/"+decoy.DefaultProjectID+"/requests", adminToken, "").body
	for _, shown := range []string{out, raw} {
		if strings.Contains(shown, m.Token) || strings.Count(shown, "REDACTED") < len(sent) {
			t.Errorf("the journal shows the token, or fewer than %d REDACTED:\n%s", len(sent), shown)
		}
	}
	es := journal(t, p, "")
	for i, want := range []string{"Serviceauthtoken", "Decoyauthtoken", "X-Brand-Token", "Authorization", "Cookie"} {
		if e := es[len(es)-1-i]; e.Headers[want] != "REDACTED" {
			t.Errorf("request %d: headers %v, want %s REDACTED", i, e.Headers, want)
		}
	}
	if q := es[1].Query; q != "auth_token=REDACTED" {
		t.Errorf("query %q", q)
	}
	if q := es[0].Query; q != "Auth%5FToken=REDACTED&limit=1" {
		t.Errorf("query %q", q)
	}
}

// --journal-size bounds each project's journal, the oldest leaving first:
// in memory, and in Redis.
func TestJournalBoundEndToEnd(t *testing.T) {
	for _, store := range []string{"memory", "redis"} {
		t.Run(store, func(t *testing.T) {
			args := []string{"--admin-token", adminToken, "--journal-size", "5"}
			if store == "redis" {
				rd, prefix := redisURL(t)
				args = append(args, "--redis-url", rd, "--redis-key-prefix", prefix)
			}
			p := start(t, t.TempDir(), args...)
			if !p.waitLog("journal_size=5") {
				t.Errorf("the config line lacks journal_size=5:\n%s", p.stderr)
			}
			usersRoute(t, p, client.CreateOptions{})
			for i := range 8 {
				get(t, p.url+"/p/default/users", "X-Seq", strconv.Itoa(i))
			}
			listedWithin(t, p, "7", 5*time.Second)
			var seqs []string
			for _, e := range journal(t, p, "") {
				seqs = append(seqs, e.Headers["X-Seq"])
			}
			if fmt.Sprint(seqs) != "[7 6 5 4 3]" {
				t.Errorf("listed %v, want [7 6 5 4 3]", seqs)
			}
			if a := api(t, p, "GET", "projects/"+decoy.DefaultProjectID+"/requests/count", adminToken, ""); a.body != `{"count":5}`+"\n" {
				t.Errorf("count: %s", a.body)
			}
		})
	}
	// 0 turns the journal off.
	p := start(t, t.TempDir(), "--admin-token", adminToken, "--journal-size", "0")
	if a := api(t, p, "GET", "projects/"+decoy.DefaultProjectID+"/requests", adminToken, ""); a.status != 501 {
		t.Errorf("--journal-size 0: %d %s", a.status, a.body)
	}
	if _, errOut, code := decoyCLI(t, p, "", "serve", "--journal-size", "-1"); code != 1 || !strings.Contains(errOut, "--journal-size must be from 0") {
		t.Errorf("--journal-size -1: %d %s", code, errOut)
	}
}

// metric reads a sample of p's /metrics, 0 when absent.
func journalMetric(t *testing.T, p *proc, sample string) float64 {
	t.Helper()
	for line := range strings.SplitSeq(get(t, p.url+"/metrics").body, "\n") {
		if v, ok := strings.CutPrefix(line, sample+" "); ok {
			f, _ := strconv.ParseFloat(v, 64)
			return f
		}
	}
	return 0
}

// A Redis that hangs (SIGSTOP) never slows a read for the journal: reads
// go on, the entries they make are dropped and counted, and once Redis
// answers again, entries flow again.
func TestJournalRedisFrozen(t *testing.T) {
	rs := testservice.StartRedis(t) // the test freezes it: never the shared one
	p := start(t, t.TempDir(), "--admin-token", adminToken, "--redis-url", rs.URL())
	p.waitReady(t, `"limits":"shared"`)
	// No rate limit: of Redis, the read asks only the quota count, which
	// waits for it at most its budget (300 ms).
	usersRoute(t, p, client.CreateOptions{RateLimit: i64(0), MonthlyQuota: i64(0)})
	get(t, p.url+"/p/default/users", "X-Seq", "before")
	listedWithin(t, p, "before", 5*time.Second)

	if err := rs.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	defer rs.Signal(syscall.SIGCONT)
	var mu sync.Mutex
	statuses := map[int]int{}
	var slowest time.Duration
	var wg sync.WaitGroup
	stop := time.Now().Add(3 * time.Second)
	for range 8 {
		wg.Go(func() {
			for time.Now().Before(stop) {
				start := time.Now()
				a := get(t, p.url+"/p/default/users?limit=1")
				mu.Lock()
				statuses[a.status]++
				slowest = max(slowest, time.Since(start))
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	// The writer gives up on a batch after 2 s: the drops of the frozen
	// time are counted by then.
	deadline := time.Now().Add(10 * time.Second)
	dropped := func() float64 {
		return journalMetric(t, p, `decoy_journal_dropped_total{reason="store"}`) + journalMetric(t, p, `decoy_journal_dropped_total{reason="queue"}`)
	}
	for dropped() == 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("reads while Redis was frozen: %v, slowest %v; entries dropped: %v", statuses, slowest, dropped())
	if len(statuses) != 1 || statuses[200] == 0 {
		t.Errorf("reads while Redis was frozen: %v", statuses)
	}
	if slowest > 2*time.Second {
		t.Errorf("a read waited %v while Redis was frozen", slowest)
	}
	if dropped() == 0 {
		t.Error("no entry was counted as dropped")
	}

	if err := rs.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	// Entries flow again: a request made now is listed.
	deadline = time.Now().Add(15 * time.Second)
	for i := 0; ; i++ {
		seq := "after-" + strconv.Itoa(i)
		get(t, p.url+"/p/default/users", "X-Seq", seq)
		found := false
		for range 20 {
			a := api(t, p, "GET", "projects/"+decoy.DefaultProjectID+"/requests?limit=1", adminToken, "")
			if a.status == 200 && strings.Contains(a.body, seq) {
				found = true
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		if found {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("after the thaw, entries are not listed")
		}
	}
}

// decoy requests prints the journal: a table on a terminal (-o table),
// JSON otherwise, with the filters given; --follow prints each request as
// it is answered, until interrupted.
func TestRequestsCLI(t *testing.T) {
	p := start(t, t.TempDir(), "--admin-token", adminToken)
	m := usersRoute(t, p, client.CreateOptions{})
	get(t, p.url+"/p/default/users?limit=1", "X-Seq", "0")
	get(t, p.url+"/p/default/nothing", "X-Seq", "1")
	listedWithin(t, p, "1", 5*time.Second)

	out, errOut, code := decoyCLI(t, p, "", "requests", "--project", "default")
	var page client.RequestPage
	if code != 0 || json.Unmarshal([]byte(out), &page) != nil || len(page.Requests) != 2 || page.Requests[0].Status != 404 {
		t.Errorf("decoy requests: %d %s %s", code, out, errOut)
	}
	out, _, _ = decoyCLI(t, p, "", "requests", "--project", "default", "--status", "200", "-o", "table")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "TIME (UTC)") || !strings.Contains(lines[1], "/p/default/users?limit=1") ||
		!strings.Contains(lines[1], " 200 ") {
		t.Errorf("table:\n%s", out)
	}
	out, _, _ = decoyCLI(t, p, "", "requests", "--project", "default", "--path", "/p/default/n*", "--since", "1h", "-o", "table")
	if !strings.Contains(out, "/p/default/nothing") || strings.Contains(out, "/users") {
		t.Errorf("filtered by path:\n%s", out)
	}
	for _, bad := range [][]string{
		{"requests"},
		{"requests", "--project", "default", "--since", "yesterday"},
		{"requests", "--project", "default", "--follow", "--limit", "3"},
	} {
		if _, errOut, code := decoyCLI(t, p, "", bad...); code != 2 {
			t.Errorf("%v: exit %d %s", bad, code, errOut)
		}
	}

	// --follow, as JSON lines, until interrupted.
	cmd := exec.Command(binary, "requests", "--project", "default", "--follow", "--method", "GET")
	cmd.Env = append(cleanEnv(), "DECOY_SERVER="+p.url, "DECOY_ADMIN_TOKEN="+adminToken)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines2 := make(chan string, 10)
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			lines2 <- sc.Text()
		}
		close(lines2)
	}()
	followed := map[string]bool{}
	deadline := time.After(10 * time.Second)
	for i := 0; len(followed) == 0; i++ {
		// Until the feed is open, requests go unseen: send until one is.
		get(t, p.url+"/mock/"+m.ID, "X-Seq", "f"+strconv.Itoa(i))
		get(t, p.url+"/p/default/users", "X-Seq", "f"+strconv.Itoa(i)) // answered by the route
		select {
		case line := <-lines2:
			var e decoy.JournalEntry
			if err := json.Unmarshal([]byte(line), &e); err != nil {
				t.Fatalf("a line of --follow: %q: %v", line, err)
			}
			followed[e.Path] = true
		case <-time.After(200 * time.Millisecond):
		case <-deadline:
			t.Fatal("--follow printed nothing within 10 s")
		}
	}
	cmd.Process.Signal(syscall.SIGINT)
	done := make(chan error, 1)
	go func() {
		for range lines2 {
		}
		done <- cmd.Wait()
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("--follow interrupted: %v", err)
		}
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		t.Fatal("--follow did not stop on SIGINT")
	}
}

// streamStatus opens a live feed of the journal with token and returns
// its status, closing it at once. A feed refused because this client's
// last ones are still closing (429) is asked again.
func streamStatus(t *testing.T, p *proc, path, token string) int {
	t.Helper()
	for range 50 {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		req, _ := http.NewRequestWithContext(ctx, "GET", p.url+"/admin/v1/"+path, nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			cancel()
			t.Fatal(err)
		}
		if resp.StatusCode != 200 {
			io.Copy(io.Discard, resp.Body)
		}
		resp.Body.Close()
		cancel()
		if resp.StatusCode != http.StatusTooManyRequests {
			return resp.StatusCode
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("GET %s: 429 for 2.5 s", path)
	return 0
}
