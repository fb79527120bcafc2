package main_test

// Writes through routes (§12) on the real binary: an acknowledged write
// survives kill -9, on SQLite and on PostgreSQL; two replicas writing at
// once lose nothing and assign no id twice.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/decoy-mock/decoy"
	"github.com/decoy-mock/decoy/client"
)

// writeRoutes gives mock id the routes of a writable collection at /things
// in the default project.
func writeRoutes(t *testing.T, p *proc, id string) {
	t.Helper()
	for _, r := range []string{"GET /things", "GET /things/{id}", "POST /things", "PATCH /things/{id}", "DELETE /things/{id}"} {
		method, path, _ := strings.Cut(r, " ")
		a := api(t, p, "POST", "projects/"+decoy.DefaultProjectID+"/routes", adminToken,
			`{"method":"`+method+`","path":"`+path+`","mock_id":"`+id+`"}`)
		if a.status != http.StatusCreated {
			t.Fatalf("route %s: %d %s", r, a.status, a.body)
		}
	}
}

// thing is a record of the tests' collections.
type thing struct {
	ID     int64            `json:"id"`
	Writer int              `json:"writer"`
	N      int              `json:"n"`
	Fields map[string]int64 `json:"fields,omitempty"`
}

// things reads the mock's data through the admin API.
func things(t *testing.T, p *proc, id string) []map[string]any {
	t.Helper()
	a := api(t, p, "GET", "mocks/"+id+"/data", adminToken, "")
	if a.status != http.StatusOK {
		t.Fatalf("data: %d %s", a.status, a.body)
	}
	var v []map[string]any
	if err := json.Unmarshal([]byte(a.body), &v); err != nil {
		t.Fatalf("data is not an array of records: %v\n%s", err, a.body)
	}
	return v
}

// client of the write streams: no keep-alive limits, short time-outs.
var writeClient = &http.Client{Timeout: 10 * time.Second}

// errKilled is what a client of killedClient dials once the process was
// killed.
var errKilled = errors.New("the server was killed")

// killedClient returns a client of a write stream to a process that the
// test kills, which answers only from that process: once killed is set
// (right before the kill), the connections it makes fail. The process
// held its port until the kill, so a connection made before killed was
// set reached it; one made after may have reached another process that
// was given the port once it was free (another test's server answers
// "No route for POST /things", or takes writes that were never this
// server's).
func killedClient(t *testing.T, killed *atomic.Bool) *http.Client {
	d := &net.Dialer{Timeout: 5 * time.Second}
	tr := &http.Transport{MaxIdleConnsPerHost: 64, DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := d.DialContext(ctx, network, addr)
		if err == nil && killed.Load() {
			conn.Close()
			return nil, errKilled
		}
		return conn, err
	}}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Timeout: writeClient.Timeout, Transport: tr}
}

// post sends a write and returns its status and body; status 0 when no
// answer came (the server was killed).
func post(method, url, body string) (int, string) { return postWith(writeClient, method, url, body) }

// postWith is post through client c.
func postWith(c *http.Client, method, url, body string) (int, string) {
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		return 0, err.Error()
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, err.Error()
	}
	return resp.StatusCode, string(b)
}

// CONTRACT §12.2: an acknowledged write is never lost, not by kill -9.
// Writers create records and patch them, in a stream, until the process
// is killed; after a restart on the same store, every acknowledged
// create is there with at least its last acknowledged patch, and no id is
// there twice.
func TestWritesSurviveKill(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) {
		dir := t.TempDir()
		testWritesSurviveKill(t, func() *proc { return start(t, dir, "--admin-token", adminToken) })
	})
	t.Run("postgres", func(t *testing.T) {
		db := postgresURL(t)
		testWritesSurviveKill(t, func() *proc { return start(t, t.TempDir(), "--admin-token", adminToken, "--database-url", db) })
	})
}

func testWritesSurviveKill(t *testing.T, run func() *proc) {
	p := run()
	m := createMock(t, p, `[]`, client.CreateOptions{Name: "things", RateLimit: i64(0)})
	writeRoutes(t, p, m.ID)
	base := p.url + "/p/default/things"

	const writers = 4
	type acked struct {
		n     int // the last patch acknowledged
		found bool
	}
	var mu sync.Mutex
	ack := map[int64]*acked{} // by id
	var wg sync.WaitGroup
	stop := make(chan struct{})
	var killed atomic.Bool
	c := killedClient(t, &killed)
	for g := range writers {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				st, body := postWith(c, "POST", base, fmt.Sprintf(`{"writer":%d,"n":0}`, g))
				if st == 0 {
					return
				}
				if st != http.StatusCreated {
					t.Errorf("create: %d %s", st, body)
					return
				}
				var rec thing
				if err := json.Unmarshal([]byte(body), &rec); err != nil {
					t.Errorf("create answered %s", body)
					return
				}
				mu.Lock()
				if ack[rec.ID] != nil {
					t.Errorf("id %d assigned twice", rec.ID)
				}
				a := &acked{}
				ack[rec.ID] = a
				mu.Unlock()
				for n := 1; n <= 3; n++ {
					st, body := postWith(c, "PATCH", fmt.Sprintf("%s/%d", base, rec.ID), fmt.Sprintf(`{"n":%d}`, n))
					if st == 0 {
						return
					}
					if st != http.StatusOK {
						t.Errorf("patch: %d %s", st, body)
						return
					}
					mu.Lock()
					a.n = n
					mu.Unlock()
				}
			}
		})
	}
	// Kill once enough writes were acknowledged, in the middle of the
	// stream.
	deadline := time.Now().Add(20 * time.Second)
	for {
		mu.Lock()
		n := len(ack)
		mu.Unlock()
		if n >= 150 || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	killed.Store(true)
	p.kill()
	close(stop)
	wg.Wait()

	p = run()
	recs := things(t, p, m.ID)
	seen := map[int64]bool{}
	for _, r := range recs {
		id := int64(r["id"].(float64))
		if seen[id] {
			t.Errorf("id %d twice after the restart", id)
		}
		seen[id] = true
		a := ack[id]
		if a == nil {
			continue // created, not acknowledged: may be there
		}
		a.found = true
		if n := int(r["n"].(float64)); n < a.n {
			t.Errorf("record %d: n %d after the restart, acknowledged %d", id, n, a.n)
		}
	}
	lost := 0
	for _, a := range ack {
		if !a.found {
			lost++
		}
	}
	if lost > 0 || t.Failed() {
		t.Logf("log:\n%s", p.stderr)
	}
	if lost > 0 {
		t.Errorf("%d of %d acknowledged creates lost by kill -9", lost, len(ack))
	}
	t.Logf("%d creates acknowledged before kill -9, %d records after the restart", len(ack), len(recs))
	// Writes go on after the restart, numbered after the ones kept.
	if st, body := post("POST", p.url+"/p/default/things", `{"writer":9}`); st != http.StatusCreated {
		t.Errorf("a create after the restart: %d %s", st, body)
	} else {
		var rec thing
		json.Unmarshal([]byte(body), &rec)
		if seen[rec.ID] {
			t.Errorf("the id %d assigned after the restart was taken", rec.ID)
		}
	}
}

// CONTRACT §12.2: concurrent writers on two replicas never lose each
// other's changes, and assigned ids never collide. Each writer creates
// records through both replicas in turn, and patches a field of its own
// on one shared record; at the end both replicas read every record, each
// field at its last value.
func TestWritesTwoReplicas(t *testing.T) {
	db := postgresURL(t)
	rurl, prefix := redisURL(t)
	ps := startReplicas(t, 2, db, rurl, prefix)
	m := createMock(t, ps[0], `[{"id":1,"shared":true}]`, client.CreateOptions{Name: "things", RateLimit: i64(0)})
	writeRoutes(t, ps[0], m.ID)
	for _, p := range ps {
		seenWithin(t, "routes", ps[0], p, func(p *proc) bool {
			st, _ := post("GET", p.url+"/p/default/things/1", "")
			return st == http.StatusOK
		})
	}

	const writers, each = 6, 15
	var mu sync.Mutex
	ids := map[int64]int{}
	var wg sync.WaitGroup
	for g := range writers {
		wg.Go(func() {
			for i := range each {
				p := ps[(g+i)%2]
				st, body := post("POST", p.url+"/p/default/things", fmt.Sprintf(`{"writer":%d,"n":%d}`, g, i))
				if st != http.StatusCreated {
					t.Errorf("create on %s: %d %s", p.url, st, body)
					return
				}
				var rec thing
				json.Unmarshal([]byte(body), &rec)
				mu.Lock()
				if w, ok := ids[rec.ID]; ok {
					t.Errorf("id %d assigned to writers %d and %d", rec.ID, w, g)
				}
				ids[rec.ID] = g
				mu.Unlock()
				st, body = post("PATCH", ps[(g+i+1)%2].url+"/p/default/things/1", fmt.Sprintf(`{"f%d":%d}`, g, i))
				if st != http.StatusOK {
					t.Errorf("patch: %d %s", st, body)
					return
				}
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		for _, p := range ps {
			t.Logf("%s:\n%s", p.url, p.stderr)
		}
		return
	}
	for _, p := range ps {
		var recs []map[string]any
		seenWithin(t, "every write", ps[0], p, func(p *proc) bool {
			recs = things(t, p, m.ID)
			return len(recs) == 1+writers*each
		})
		shared := recs[0]
		for g := range writers {
			if v, _ := shared[fmt.Sprintf("f%d", g)].(float64); int(v) != each-1 {
				t.Errorf("%s: the shared record's f%d is %v, want %d (a lost update): %v", p.url, g, shared[fmt.Sprintf("f%d", g)], each-1, shared)
			}
		}
		seen := map[float64]bool{}
		for _, r := range recs {
			if seen[r["id"].(float64)] {
				t.Errorf("%s: id %v twice", p.url, r["id"])
			}
			seen[r["id"].(float64)] = true
		}
		// A read through the route sees the same.
		st, body := post("GET", p.url+"/p/default/things?limit=1000", "")
		var routed []map[string]any
		if st != http.StatusOK || json.Unmarshal([]byte(body), &routed) != nil || len(routed) != len(recs) {
			t.Errorf("%s: routed read: %d, %d records, want %d", p.url, st, len(routed), len(recs))
		}
	}
}

// A write stream's client answers only from the process it was made for:
// once that is killed, another process given its port (here a listener
// answering as another test's server would) is not reached, where a plain
// client reaches it.
func TestKilledClientReachesNoOtherProcess(t *testing.T) {
	serve := func(l net.Listener, status int, body string) *http.Server {
		srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(status)
			io.WriteString(w, body)
		})}
		go srv.Serve(l)
		return srv
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	ours := serve(l, http.StatusCreated, `{"id":1}`)
	var killed atomic.Bool
	c := killedClient(t, &killed)
	url := "http://" + addr + "/p/default/things"
	if st, body := postWith(c, "POST", url, `{}`); st != http.StatusCreated {
		t.Fatalf("before the kill: %d %s", st, body)
	}
	killed.Store(true)
	ours.Close()
	l, err = net.Listen("tcp", addr)
	if err != nil {
		t.Skipf("the port was taken meanwhile: %v", err)
	}
	other := serve(l, http.StatusNotFound, `{"error":"No route for POST /things"}`)
	defer other.Close()
	if st, body := postWith(c, "POST", url, `{}`); st != 0 {
		t.Errorf("after the kill, an answer from another process: %d %s", st, body)
	}
	if st, _ := post("POST", url, `{}`); st != http.StatusNotFound {
		t.Errorf("a plain client got %d: the other process did not take the port", st)
	}
}

// A PATCH of a collection large enough to be mapped from its file, then a
// read that sorts it: the server answers, and stays up. The sort order
// built after the write reads the collection as stored, which the server
// had unmapped once the write's state replaced it: this read stopped the
// server with a SIGSEGV, on SQLite and on PostgreSQL alike.
func TestWriteThenSortedRead(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) { testWriteThenSortedRead(t, start(t, t.TempDir(), "--admin-token", adminToken)) })
	t.Run("postgres", func(t *testing.T) {
		testWriteThenSortedRead(t, start(t, t.TempDir(), "--admin-token", adminToken, "--database-url", postgresURL(t)))
	})
}

func testWriteThenSortedRead(t *testing.T, p *proc) {
	var b strings.Builder
	b.WriteByte('[')
	for i := range 2000 { // about 90 KB: over the 64 KiB a document is mapped from
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"id":%d,"n":%d,"writer":%d,"name":"thing number %d of the collection"}`, i, (i*37)%90, i%7, i)
	}
	b.WriteByte(']')
	m := createMock(t, p, b.String(), client.CreateOptions{Name: "things", RateLimit: i64(0)})
	writeRoutes(t, p, m.ID)
	base := p.url + "/p/default/things"
	if st, body := post("PATCH", base+"/17", `{"name":"renamed"}`); st != http.StatusOK { // n unchanged: the order carries over
		t.Fatalf("PATCH: %d %s", st, body)
	}
	for _, q := range []string{"?order_by=n", "?order_by=n&order_direction=desc", "?order_by=writer&limit=5"} {
		st, body := post("GET", base+q, "")
		var recs []thing
		if st != http.StatusOK || json.Unmarshal([]byte(body), &recs) != nil || len(recs) == 0 {
			t.Fatalf("GET %s after the PATCH: %d %.200s", q, st, body)
		}
		for i := 1; i < len(recs); i++ {
			if q == "?order_by=n" && recs[i].N < recs[i-1].N {
				t.Fatalf("GET %s: not ordered at %d", q, i)
			}
		}
	}
	if st, body := post("GET", base+"/17", ""); st != http.StatusOK || !strings.Contains(body, `"renamed"`) {
		t.Fatalf("GET the record patched: %d %s", st, body)
	}
}
