package main_test

// Several decoy serve processes on one PostgreSQL and one Redis, as behind a
// load balancer: those of DECOY_TEST_POSTGRES_URL and DECOY_TEST_REDIS_URL
// (.ci/run sets both), or private ones (see internal/testservice).

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/decoy-mock/decoy/client"
	"github.com/decoy-mock/decoy/internal/testservice"
	"github.com/jackc/pgx/v5"
	goredis "github.com/redis/go-redis/v9"
)

// postgresURL returns the URL of a fresh schema of the test database,
// dropped when the test ends.
func postgresURL(t *testing.T) string {
	t.Helper()
	base := testservice.PostgresURL(t)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		t.Fatalf("connect to %s: %v", base, err)
	}
	defer conn.Close(ctx)
	schema := "decoy_e2e_" + randomHex(6)
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		conn, err := pgx.Connect(context.Background(), base)
		if err != nil {
			return
		}
		defer conn.Close(context.Background())
		conn.Exec(context.Background(), "DROP SCHEMA "+schema+" CASCADE")
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

// redisURL returns the test Redis and a key prefix of the test's own, whose
// keys are deleted when the test ends.
func redisURL(t *testing.T) (string, string) {
	t.Helper()
	u := testservice.RedisURL(t)
	prefix := "decoye2e:" + randomHex(6) + ":"
	t.Cleanup(func() { deleteKeys(u, prefix) })
	return u, prefix
}

func deleteKeys(redisURL, prefix string) {
	opt, err := goredis.ParseURL(redisURL)
	if err != nil {
		return
	}
	c := goredis.NewClient(opt)
	defer c.Close()
	ctx := context.Background()
	iter := c.Scan(ctx, 0, prefix+"*", 1000).Iterator()
	for iter.Next(ctx) {
		c.Del(ctx, iter.Val())
	}
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// startReplicas starts n decoy serve processes on one database and Redis and
// waits until each shares limits and trusts its cache.
func startReplicas(t *testing.T, n int, databaseURL, redisURL, prefix string, args ...string) []*proc {
	t.Helper()
	var ps []*proc
	for range n {
		all := append([]string{"--admin-token", adminToken, "--database-url", databaseURL,
			"--redis-url", redisURL, "--redis-key-prefix", prefix}, args...)
		ps = append(ps, start(t, t.TempDir(), all...))
	}
	for _, p := range ps {
		p.waitReady(t, `"limits":"shared"`, `"cache":"trusted"`)
	}
	return ps
}

// waitReady polls /readyz until its answer holds every one of want.
func (p *proc) waitReady(t *testing.T, want ...string) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		body := ""
		if resp, err := http.Get(p.url + "/readyz"); err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			body = string(b)
		}
		ok := true
		for _, w := range want {
			ok = ok && strings.Contains(body, w)
		}
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s/readyz = %q, want %q\n%s", p.url, body, want, p.stderr)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// spread sends n concurrent GETs of path, alternating between the replicas,
// and counts the answers by status.
func spread(t *testing.T, ps []*proc, path string, n int) map[int]int {
	t.Helper()
	return concurrentGets(t, n, func(i int) string { return ps[i%len(ps)].url + path })
}

// The rate limit and the monthly quota are shared: what replicas admit
// together is exactly the limit.
func TestReplicasShareLimits(t *testing.T) {
	db := postgresURL(t)
	rd, prefix := redisURL(t)
	ps := startReplicas(t, 2, db, rd, prefix, "--auth-failure-limit", "5")

	limited := createMock(t, ps[0], `[{"id":1}]`, client.CreateOptions{RateLimit: i64(10), MonthlyQuota: i64(0)})
	if got := spread(t, ps, "/mock/"+limited.ID, 30); got[200] != 10 || got[429] != 20 {
		t.Errorf("rate limit 10, 30 requests over 2 replicas: %v, want 10×200 and 20×429", got)
	}

	quota := createMock(t, ps[1], `[{"id":2}]`, client.CreateOptions{RateLimit: i64(0), MonthlyQuota: i64(4)})
	if got := spread(t, ps, "/mock/"+quota.ID, 12); got[200] != 4 || got[429] != 8 {
		t.Errorf("quota 4, 12 requests over 2 replicas: %v, want 4×200 and 8×429", got)
	}
	u, err := ps[0].admin().Usage(context.Background(), quota.ID)
	if err != nil || u.Month.Used != 4 {
		t.Errorf("usage after the quota run: %+v %v", u, err)
	}

	// Wrong tokens from one client, alternating between the replicas: the
	// failed-authentication limit of 5 holds for both together.
	private := createMock(t, ps[0], `[]`, client.CreateOptions{Private: true})
	var statuses []int
	for i := range 8 {
		statuses = append(statuses, get(t, ps[i%2].url+"/mock/"+private.ID, "serviceauthtoken", "wrong").status)
	}
	if want := []int{401, 401, 401, 401, 401, 429, 429, 429}; fmt.Sprint(statuses) != fmt.Sprint(want) {
		t.Errorf("wrong tokens over 2 replicas with a limit of 5: %v, want %v", statuses, want)
	}
}

// A change made through one replica is seen by the other within a second,
// and at once by the one that made it.
func TestReplicasSeeChanges(t *testing.T) {
	db := postgresURL(t)
	rd, prefix := redisURL(t)
	ps := startReplicas(t, 2, db, rd, prefix)
	a, b := ps[0], ps[1]
	ctx := context.Background()

	m := createMock(t, a, `[{"v":1}]`, client.CreateOptions{Private: true})
	path := "/mock/" + m.ID
	for _, p := range ps { // both have it cached
		if r := get(t, p.url+path, "serviceauthtoken", m.Token); r.status != 200 {
			t.Fatalf("first read on %s: %d %s", p.url, r.status, r.body)
		}
	}

	if _, err := a.admin().ReplaceData(ctx, m.ID, strings.NewReader(`[{"v":2}]`), "application/json"); err != nil {
		t.Fatal(err)
	}
	seenWithin(t, "data update", a, b, func(p *proc) bool {
		return get(t, p.url+path, "serviceauthtoken", m.Token).body == `[{"v":2}]`
	})

	rotated, err := a.admin().RotateToken(ctx, m.ID)
	if err != nil {
		t.Fatal(err)
	}
	seenWithin(t, "token rotation", a, b, func(p *proc) bool {
		return get(t, p.url+path, "serviceauthtoken", m.Token).status == 401 &&
			get(t, p.url+path, "serviceauthtoken", rotated.Token).status == 200
	})

	if _, err := a.admin().UpdateMock(ctx, m.ID, map[string]any{"private": false, "status": 202}); err != nil {
		t.Fatal(err)
	}
	seenWithin(t, "settings update", a, b, func(p *proc) bool { return get(t, p.url+path).status == 202 })

	if err := a.admin().DeleteMock(ctx, m.ID); err != nil {
		t.Fatal(err)
	}
	seenWithin(t, "deletion", a, b, func(p *proc) bool { return get(t, p.url+path).status == 404 })
}

// seenWithin checks that the replica that made a change sees it at once and
// the other within a second.
func seenWithin(t *testing.T, what string, made, other *proc, seen func(*proc) bool) {
	t.Helper()
	if !seen(made) {
		t.Errorf("%s: not seen at once by the replica that made it", what)
	}
	start := time.Now()
	for !seen(other) {
		if time.Since(start) > time.Second {
			t.Errorf("%s: not seen by the other replica within 1s", what)
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Logf("%s: seen by the other replica after %v", what, time.Since(start).Round(time.Millisecond))
}

// With Redis stopped during a stream of reads, no read fails; changes are
// still seen by the other replica (it checks the store); and once Redis is
// back, limits are shared again.
func TestReplicasRedisFault(t *testing.T) {
	db := postgresURL(t)
	rs := testservice.StartRedis(t) // the test stops it: never the shared one
	// No failed-authentication limit: reads sent with the old token between
	// the rotation and the readers' swap are 401s, and with Redis down each
	// replica counts them alone; how many there are depends on the
	// machine's load, and a limit would turn the rest into 429s.
	ps := startReplicas(t, 2, db, rs.URL(), "decoy:", "--auth-failure-limit", "0")
	a, b := ps[0], ps[1]
	m := createMock(t, a, `[{"n":1}]`, client.CreateOptions{RateLimit: i64(1_000_000), Private: true})

	// A stream of reads over both replicas, from before the stop until
	// after the restart.
	stopReads := make(chan struct{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	statuses := map[int]int{}
	token := m.Token
	var tokenMu sync.Mutex
	for i := range 4 {
		wg.Go(func() {
			p := ps[i%2]
			for {
				select {
				case <-stopReads:
					return
				default:
				}
				tokenMu.Lock()
				tok := token
				tokenMu.Unlock()
				r := get(t, p.url+"/mock/"+m.ID, "serviceauthtoken", tok)
				mu.Lock()
				statuses[r.status]++
				mu.Unlock()
				time.Sleep(2 * time.Millisecond)
			}
		})
	}
	time.Sleep(200 * time.Millisecond)
	rs.Kill()
	for _, p := range ps {
		p.waitReady(t, `"limits":"local"`, `"cache":"revalidating"`)
	}

	// While Redis is down, a rotation through a is refused by b at once.
	rotated, err := a.admin().RotateToken(context.Background(), m.ID)
	if err != nil {
		t.Fatalf("rotation while Redis is down: %v", err)
	}
	tokenMu.Lock()
	token = rotated.Token
	tokenMu.Unlock()
	if r := get(t, b.url+"/mock/"+m.ID, "serviceauthtoken", m.Token); r.status != 401 {
		t.Errorf("old token on the other replica while Redis is down: %d %s", r.status, r.body)
	}
	time.Sleep(300 * time.Millisecond)

	rs.Restart(t)
	for _, p := range ps {
		p.waitReady(t, `"limits":"shared"`, `"cache":"trusted"`)
	}
	close(stopReads)
	wg.Wait()
	for status, n := range statuses {
		if status != 200 && status != 401 { // 401: a read sent just before the rotation's token swap
			t.Errorf("%d reads answered %d during the Redis outage", n, status)
		}
	}
	if statuses[200] == 0 {
		t.Error("no read succeeded")
	}
	t.Logf("reads during the fault: %v", statuses)

	limited := createMock(t, b, `[{"id":1}]`, client.CreateOptions{RateLimit: i64(10), MonthlyQuota: i64(0)})
	if got := spread(t, ps, "/mock/"+limited.ID, 30); got[200] != 10 || got[429] != 20 {
		t.Errorf("after Redis returned, rate limit 10, 30 requests over 2 replicas: %v", got)
	}
	if !strings.Contains(a.stderr.String(), "limiting per replica") {
		t.Error("the fallback was not logged")
	}
}

// A Redis that hangs (SIGSTOP: its connections stay open, nothing answers)
// costs reads nothing but a short wait: with PostgreSQL up, no read of a
// mock with the default quota gets a 5xx, on either replica, and they
// share their limits again once it answers.
func TestReplicasRedisHangs(t *testing.T) {
	db := postgresURL(t)
	rs := testservice.StartRedis(t) // the test freezes it: never the shared one
	ps := startReplicas(t, 2, db, rs.URL(), "decoy:")
	m := createMock(t, ps[0], `[{"n":1}]`, client.CreateOptions{RateLimit: i64(1_000_000)})

	stopReads := make(chan struct{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	statuses := map[int]int{}
	// 128 readers per replica: more reads waiting on the frozen Redis at
	// once than a client has connections, which is what made reads wait
	// out their whole quota budget (503) before the fix.
	for i := range 256 {
		wg.Go(func() {
			p := ps[i%2]
			for {
				select {
				case <-stopReads:
					return
				default:
				}
				r := get(t, p.url+"/mock/"+m.ID)
				mu.Lock()
				statuses[r.status]++
				mu.Unlock()
			}
		})
	}
	time.Sleep(200 * time.Millisecond)
	if err := rs.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	for _, p := range ps {
		p.waitReady(t, `"limits":"local"`)
	}
	time.Sleep(3 * time.Second) // reads go on against the frozen Redis
	if err := rs.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	for _, p := range ps {
		p.waitReady(t, `"limits":"shared"`)
	}
	close(stopReads)
	wg.Wait()
	t.Logf("reads while Redis hung: %v", statuses)
	for status, n := range statuses {
		if status != 200 {
			t.Errorf("%d reads answered %d while Redis hung", n, status)
		}
	}
	if statuses[200] == 0 {
		t.Error("no read succeeded")
	}
}

// proxy forwards TCP connections to a server until cut, so a test can make
// PostgreSQL unreachable without stopping it.
type proxy struct {
	t        *testing.T
	addr     string
	upstream string
	mu       sync.Mutex
	ln       net.Listener
	conns    []net.Conn
}

func startProxy(t *testing.T, upstream string) *proxy {
	t.Helper()
	p := &proxy{t: t, upstream: upstream, addr: "127.0.0.1:0"}
	p.listen()
	t.Cleanup(p.cut)
	return p
}

func (p *proxy) listen() {
	p.t.Helper()
	var ln net.Listener
	var err error
	for range 50 { // the port of a closed listener may take a moment to free
		if ln, err = net.Listen("tcp", p.addr); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		p.t.Fatal(err)
	}
	p.mu.Lock()
	p.ln, p.addr = ln, ln.Addr().String()
	p.mu.Unlock()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			u, err := net.Dial("tcp", p.upstream)
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			if p.ln != ln {
				// Cut while this connection was being made: it must not
				// outlive the cut (an admin write went through it once).
				p.mu.Unlock()
				c.Close()
				u.Close()
				return
			}
			p.conns = append(p.conns, c, u)
			p.mu.Unlock()
			go func() { io.Copy(u, c); u.Close() }()
			go func() { io.Copy(c, u); c.Close() }()
		}
	}()
}

// cut closes the listener and every forwarded connection.
func (p *proxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != nil {
		p.ln.Close()
		p.ln = nil
	}
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

// With PostgreSQL unreachable, cached mocks keep being served, admin writes
// answer 503 with a JSON error, and /readyz says not ready; all comes back
// when it is reachable again.
func TestReplicasPostgresFault(t *testing.T) {
	db := postgresURL(t)
	rd, prefix := redisURL(t)
	u, err := url.Parse(db)
	if err != nil {
		t.Fatal(err)
	}
	px := startProxy(t, u.Host)
	u.Host = px.addr
	ps := startReplicas(t, 2, u.String(), rd, prefix)
	a, b := ps[0], ps[1]
	m := createMock(t, a, `[{"a":1},{"a":2}]`, client.CreateOptions{MonthlyQuota: i64(100)})
	for _, p := range ps {
		if r := get(t, p.url+"/mock/"+m.ID); r.status != 200 {
			t.Fatalf("read: %d %s", r.status, r.body)
		}
	}

	px.cut()
	for _, p := range ps {
		if r := get(t, p.url+"/mock/"+m.ID+"?filters=a%3D2"); r.status != 200 || r.body != `[{"a":2}]` {
			t.Errorf("cached mock while the database is down: %d %s", r.status, r.body)
		}
		if r := get(t, p.url+"/readyz"); r.status != 503 || r.body != `{"error":"Store unavailable"}`+"\n" {
			t.Errorf("readyz while the database is down: %d %s", r.status, r.body)
		}
	}
	_, err = b.admin().ReplaceData(context.Background(), m.ID, strings.NewReader(`[]`), "application/json")
	var ce *client.Error
	if !errors.As(err, &ce) || ce.Status != 503 || !strings.Contains(ce.Message, "unavailable") {
		t.Errorf("admin write while the database is down: %v", err)
	}

	px.listen()
	for _, p := range ps {
		p.waitReady(t, `"status":"ready"`)
	}
	// The 4 reads served so far, 2 of them while the database was down,
	// reach the store once it is back.
	storeCount := func() int64 {
		conn, err := pgx.Connect(context.Background(), db)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(context.Background())
		var n int64
		conn.QueryRow(context.Background(), "SELECT coalesce(sum(used), 0) FROM quota_usage WHERE mock_id = $1", m.ID).Scan(&n)
		return n
	}
	deadline := time.Now().Add(5 * time.Second)
	for n := storeCount(); n != 4; n = storeCount() {
		if time.Now().After(deadline) {
			t.Errorf("served responses counted in the store: %d, want 4", n)
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if _, err := b.admin().ReplaceData(context.Background(), m.ID, strings.NewReader(`[{"a":3}]`), "application/json"); err != nil {
		t.Fatalf("admin write after the database returned: %v", err)
	}
	seenWithin(t, "data update after the fault", b, a, func(p *proc) bool {
		return get(t, p.url+"/mock/"+m.ID).body == `[{"a":3}]`
	})
}
