//go:build linux

package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestPatchBodies(t *testing.T) {
	ids, bodies := patchBodies(500, 1000)
	if len(ids) != 500 || len(bodies) != 500 {
		t.Fatalf("%d ids and %d bodies, want 500 each", len(ids), len(bodies))
	}
	seen := map[int]bool{}
	for i, id := range ids {
		if id < 1 || id > 1000 {
			t.Errorf("id %d outside 1 to 1000", id)
		}
		seen[id] = true
		var b map[string]int
		if err := json.Unmarshal([]byte(bodies[i]), &b); err != nil || len(b) != 1 || b["age"] < 18 || b["age"] > 87 {
			t.Errorf("body %q: %v, want {\"age\":N}, N from 18 to 87", bodies[i], err)
		}
	}
	if len(seen) < 300 {
		t.Errorf("only %d distinct ids of 500: not spread", len(seen))
	}
	ids2, bodies2 := patchBodies(500, 1000)
	if !slices.Equal(ids, ids2) || !slices.Equal(bodies, bodies2) {
		t.Error("not the same on every run")
	}
	reqs := patchRequests("/p/default/users", ids[:2], bodies[:2])
	if reqs[1] != (request{method: http.MethodPatch, target: "/p/default/users/" + strconv.Itoa(ids[1]), body: bodies[1]}) {
		t.Errorf("request %+v", reqs[1])
	}
	reads := readTargets("/users", 10, 50)
	for _, r := range reads {
		n, err := strconv.Atoi(strings.TrimPrefix(r, "/users/"))
		if err != nil || n < 1 || n > 50 {
			t.Errorf("read %q: not an item of 1 to 50", r)
		}
	}
}

func TestPostAndDeleteRequests(t *testing.T) {
	posts := postRequests("/users", 100)
	for i, q := range posts {
		var rec map[string]any
		if err := json.Unmarshal([]byte(q.body), &rec); err != nil || q.method != "POST" || q.target != "/users" {
			t.Fatalf("POST %d: %+v: %v", i, q, err)
		}
		if _, has := rec["id"]; has || rec["age"] != float64(18+i%70) || len(rec) != 8 {
			t.Errorf("POST %d: %v, want a record of 8 fields with no id and age %d", i, rec, 18+i%70)
		}
	}
	dels := deleteRequests("/users", 1000)
	seen := map[string]bool{}
	for _, q := range dels {
		if q.method != "DELETE" || q.body != "" || seen[q.target] {
			t.Fatalf("%+v: not a DELETE, or twice", q)
		}
		seen[q.target] = true
	}
	if len(dels) != 999 || seen["/users/"+strconv.Itoa(deleteCheckID)] || !seen["/users/1"] || !seen["/users/1000"] {
		t.Errorf("%d DELETEs, want every id of 1 to 1,000 but %d once", len(dels), deleteCheckID)
	}
	if dels[0].target == "/users/1" && dels[1].target == "/users/2" {
		t.Error("DELETEs in id order, not shuffled")
	}
	if !slices.Equal(dels, deleteRequests("/users", 1000)) {
		t.Error("not the same on every run")
	}
}

func TestRequestBytes(t *testing.T) {
	for _, tc := range []struct {
		name string
		q    request
		want string
	}{
		{"a GET has no body", request{method: "GET", target: "/a"},
			"GET /a HTTP/1.1\r\nHost: h:1\r\nUser-Agent: decoy-bench\r\nAccept: application/json\r\nX: y\r\n\r\n"},
		{"a PATCH sends its JSON body", request{method: "PATCH", target: "/u/7", body: `{"age":30}`},
			"PATCH /u/7 HTTP/1.1\r\nHost: h:1\r\nUser-Agent: decoy-bench\r\nAccept: application/json\r\nX: y\r\nContent-Type: application/json\r\nContent-Length: 10\r\n\r\n{\"age\":30}"},
		{"a POST without a body says so", request{method: "POST", target: "/u"},
			"POST /u HTTP/1.1\r\nHost: h:1\r\nUser-Agent: decoy-bench\r\nAccept: application/json\r\nX: y\r\nContent-Type: application/json\r\nContent-Length: 0\r\n\r\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := string(requestBytes("h:1", "X: y\r\n", tc.q)); got != tc.want {
				t.Errorf("got %q\nwant %q", got, tc.want)
			}
		})
	}
}

// bodyServer answers every request 200 with its body, and keeps each
// request's method, path and body.
type bodyServer struct {
	mu   sync.Mutex
	seen []request
}

func (s *bodyServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	s.seen = append(s.seen, request{method: r.Method, target: r.URL.Path, body: string(body)})
	s.mu.Unlock()
	w.Write(body)
}

func TestLoadSendsRequestBodies(t *testing.T) {
	bs := &bodyServer{}
	srv := httptest.NewServer(bs)
	defer srv.Close()
	reqs := []request{{"PATCH", "/u/1", `{"age":20}`}, {"PATCH", "/u/2", `{"age":21}`}}
	l := load{addr: strings.TrimPrefix(srv.URL, "http://"), requests: reqs, conns: 2, warmup: 50 * time.Millisecond,
		duration: 100 * time.Millisecond, timeout: time.Second}
	res := l.run(context.Background())
	if res.OK == 0 || res.Errors != 0 || res.Bytes != res.OK*10 {
		t.Errorf("ok %d, errors %d, bytes %d", res.OK, res.Errors, res.Bytes)
	}
	bs.mu.Lock()
	defer bs.mu.Unlock()
	if res.All2xx < res.OK || res.All2xx > int64(len(bs.seen)) {
		t.Errorf("%d 2xx counted in all, %d in the window, %d requests served", res.All2xx, res.OK, len(bs.seen))
	}
	for _, q := range bs.seen {
		if !slices.Contains(reqs, q) {
			t.Fatalf("the server got %+v, not one of the requests", q)
		}
	}
}

func TestSendRequests(t *testing.T) {
	bs := &bodyServer{}
	srv := httptest.NewServer(bs)
	defer srv.Close()
	reqs := patchRequests("/u", []int{1, 2, 3}, []string{`{"age":1}`, `{"age":2}`, `{"age":3}`})
	n, err := sendRequests(context.Background(), strings.TrimPrefix(srv.URL, "http://"), reqs, 1, 50, 4, time.Second)
	if err != nil || n != 50 {
		t.Fatalf("%d sent, %v; want 50", n, err)
	}
	counts := map[string]int{}
	for _, q := range bs.seen {
		counts[q.target+" "+q.body]++
	}
	// From the second on, around: 17, 17 and 16.
	want := map[string]int{`/u/2 {"age":2}`: 17, `/u/3 {"age":3}`: 17, `/u/1 {"age":1}`: 16}
	if len(bs.seen) != 50 || len(counts) != 3 || counts[`/u/2 {"age":2}`] != want[`/u/2 {"age":2}`] || counts[`/u/1 {"age":1}`] != want[`/u/1 {"age":1}`] {
		t.Errorf("served %d: %v, want %v", len(bs.seen), counts, want)
	}

	refuse := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, `{"error":"Record not found"}`, http.StatusNotFound)
	}))
	defer refuse.Close()
	n, err = sendRequests(context.Background(), strings.TrimPrefix(refuse.URL, "http://"), reqs, 0, 20, 2, time.Second)
	if err == nil || !strings.Contains(err.Error(), "404") || n != 0 {
		t.Errorf("a server refusing: %d sent, %v", n, err)
	}
}

func TestCheckRecord(t *testing.T) {
	for _, tc := range []struct {
		name    string
		body    string
		id, age int
		err     string
	}{
		{"the record", `{"id":7,"name":"a","age":99}`, 7, 99, ""},
		{"any age", `{"id":7,"age":30}`, 7, 0, ""},
		{"another record", `{"id":8,"age":99}`, 7, 99, `the record "8", not 7`},
		{"the old age", `{"id":7,"age":30}`, 7, 99, `has age "30", not 99`},
		{"a list", `[{"id":7}]`, 7, 0, "answered no record"},
		{"an error", `{"error":"Record not found"}`, 7, 0, `the record "", not 7`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := checkRecord([]byte(tc.body), tc.id, tc.age)
			if tc.err == "" && err != nil || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
				t.Errorf("error %v, want %q", err, tc.err)
			}
		})
	}
}

func TestRatioTarget(t *testing.T) {
	row := func(rate float64, status string) *result { return &result{ReqPerSec: rate, Status: status} }
	for _, tc := range []struct {
		name       string
		x, ref     *result
		want       float64
		v          float64
		met, known bool
	}{
		{"above", row(3000, "ok"), row(5, "ok"), 300, 600, true, true},
		{"just at", row(1500, "ok"), row(5, "ok"), 300, 300, true, true},
		{"below", row(1400, "ok"), row(5, "ok"), 300, 280, false, true},
		{"above with errors", row(3000, "errors"), row(5, "ok"), 300, 600, false, true},
		{"the reference with errors", row(3000, "ok"), row(5, "errors"), 300, 600, false, true},
		{"not measured", row(0, "failed"), row(5, "ok"), 300, 0, false, false},
		{"no reference", row(3000, "ok"), nil, 300, 0, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, met, known := ratioTarget(tc.x, tc.ref, tc.want)
			if v != tc.v || met != tc.met || known != tc.known {
				t.Errorf("%v, %v, %v; want %v, %v, %v", v, met, known, tc.v, tc.met, tc.known)
			}
		})
	}
}

func TestWritesTargetRows(t *testing.T) {
	row := func(server string, k int, rate float64, status string) result {
		return result{Server: server, Query: writesQueryID(k), Status: status, ReqPerSec: rate, ServerCPU: 0.5}
	}
	ws := &writesResult{Records: writesRecords, DocBytes: 26 << 20, Rounds: 3, WritesBeforeAfter: 12_345,
		LoadedRSS: 60 << 20, PeakRSS: 100 << 20, Rows: []result{
			row("json-server", writePatch, 5, "ok"),
			row("decoy", writeReadBefore, 10_000, "ok"),
			row("decoy", writePatch, 1600, "ok"),
			row("decoy", writeReadAfter, 8_900, "ok"),
			row("decoy", writeReadAlone, 10_000, "ok"),
			row("decoy", writeReadDuring, 8_000, "ok"),
			row("decoy", writeWriter, 500, "ok"),
			row("json-server", writePost, 4, "ok"),
			row("json-server", writeDelete, 3, "ok"),
			row("decoy", writePost, 2000, "ok"),
			row("decoy", writeDelete, 900, "ok"),
		}}
	r := &report{Config: &config{Conns: 32, Duration: 10 * time.Second, Warmup: 2 * time.Second}, Writes: ws}
	want := []targetRow{
		{"writes: PATCHes of single records of 100,000: ≥ 300× json-server's", "320×", true},
		{"writes: a small read while one writer PATCHes: ≥ 0.8× the same read alone", "0.80×", true},
		{"writes: a small read after 10,000 writes: ≥ 0.9× before any write", "0.89×", false},
	}
	if got := targetRows(r); !slices.Equal(got, want) {
		t.Errorf("rows:\n%+v\nwant\n%+v", got, want)
	}

	var md strings.Builder
	writeWrites(&md, r)
	for _, s := range []string{
		"## Writes",
		"| json-server: PATCH one record, random ids, {\"age\":N} | 5.00 |",
		// POSTs and DELETEs: against json-server, no target.
		"| Decoy: POST one record, without an id (assigned) | 2,000 | 0.00 | 0.00 | 250 | 500× json-server | 0.0020× |  |  |",
		"| Decoy: DELETE one record, random ids, each once | 900 | 0.00 | 0.00 | 556 | 300× json-server | 0.0033× |  |  |",
		"| Decoy: PATCH one record, random ids, {\"age\":N} | 1,600 | 0.00 | 0.00 | 312 | 320× json-server | 0.0031× | ≥ 300× | yes |",
		"| Decoy: small read, after 12,345 writes | 8,900 |",
		"0.89× before | 1.12× | ≥ 0.90× | **no** |",
		// The read during writes and the writer share the CPU: 0.5 cores
		// over 8,500 answers a second.
		"| Decoy: small read, while one writer PATCHes | 8,000 (1) | 0.00 | 0.00 | 59 | 0.80× alone | 1.18× | ≥ 0.80× | yes |",
		"| Decoy: the one writer's PATCHes, meanwhile | 500 (2) | 0.00 | 0.00 | 59 |",
		"3 rounds of 3.333s each",
		"peak 100.0 MiB (3.85× the collection)",
	} {
		if !strings.Contains(md.String(), s) {
			t.Errorf("the section does not say %q:\n%s", s, md.String())
		}
	}

	// Fewer writes than the target asks, and a failed json-server.
	ws.WritesBeforeAfter = 900
	ws.Rows[0] = result{Server: "json-server", Query: writesQueryID(writePatch), Status: "failed", Note: "did not start"}
	ws.Rows[3].ReqPerSec = 10_000
	want = []targetRow{
		want[1],
		{"writes: a small read after 10,000 writes: ≥ 0.9× before any write", "1.00× (after only 900 writes)", false},
	}
	if got := targetRows(r); !slices.Equal(got, want) {
		t.Errorf("rows:\n%+v\nwant\n%+v", got, want)
	}
	var none strings.Builder
	writeWrites(&none, &report{Config: r.Config})
	if none.Len() != 0 {
		t.Errorf("a run without the phase: %q", none.String())
	}
}

func TestParseWritesFlags(t *testing.T) {
	for _, tc := range []struct {
		name           string
		args           []string
		writes, routes string
		servers        []string
		sizes          int
		err            string
	}{
		{"defaults: every phase and server", nil, "on", "on", serverNames, 3, ""},
		{"writes alone: Decoy and json-server", []string{"-writes", "only"}, "only", "off", []string{"decoy", "json-server"}, 0, ""},
		{"writes alone, the servers given", []string{"-writes", "only", "-servers", "decoy"}, "only", "off", []string{"decoy"}, 0, ""},
		{"writes off", []string{"-writes", "off"}, "off", "on", serverNames, 3, ""},
		{"routes alone: no writes", []string{"-routes", "only"}, "off", "only", serverNames, 0, ""},
		{"writes and routes alone", []string{"-routes", "only", "-writes", "only"}, "only", "only", []string{"decoy", "json-server"}, 0, ""},
		{"a bad value", []string{"-writes", "yes"}, "", "", nil, 0, "-writes must be on, off or only"},
		{"no rounds", []string{"-writes-rounds", "0"}, "", "", nil, 0, "-writes-rounds must be 1 or more"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := parseFlags(tc.args)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Writes != tc.writes || cfg.Routes != tc.routes || len(cfg.Sizes) != tc.sizes || !slices.Equal(cfg.Servers, tc.servers) {
				t.Errorf("writes %s, routes %s, %d sizes, servers %v; want %s, %s, %d, %v", cfg.Writes, cfg.Routes, len(cfg.Sizes), cfg.Servers,
					tc.writes, tc.routes, tc.sizes, tc.servers)
			}
		})
	}
}

// A server taking writes in turn answers the sentinel after the writes
// in flight before it.
func TestDrainWaitsForTheWritesInFlight(t *testing.T) {
	var (
		mu       sync.Mutex
		done     int
		arrivals atomic.Int64
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrivals.Add(1)
		mu.Lock()
		defer mu.Unlock()
		time.Sleep(30 * time.Millisecond)
		done++
		if r.Method == http.MethodDelete {
			http.Error(w, `{"error":"Record not found"}`, http.StatusNotFound)
		}
	}))
	defer srv.Close()
	addr := strings.TrimPrefix(srv.URL, "http://")
	for range 3 {
		go send(context.Background(), http.MethodPatch, srv.URL+"/u/1", `{"age":1}`, time.Second)
	}
	for arrivals.Load() < 3 {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(5 * time.Millisecond) // the three wait on the lock: in turn from here
	if err := drain(context.Background(), addr, sentinel(writeDelete, "/u"), 5*time.Second); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if done != 4 {
		t.Errorf("drain returned after %d writes, want the 3 in flight and its own", done)
	}
	for k, want := range map[int]request{
		writePatch:  {http.MethodPatch, "/u/7", `{"age":99}`},
		writeDelete: {http.MethodDelete, "/u/8", ""},
		writePost:   postRequests("/u", 1)[0],
	} {
		if got := sentinel(k, "/u"); got != want {
			t.Errorf("sentinel of %s: %+v, want %+v", writeKinds[k].id, got, want)
		}
	}
}

func TestCrashLines(t *testing.T) {
	const fault = `time=… level=WARN msg=x
fatal error: fault
[signal SIGSEGV: segmentation violation code=0x1 addr=0x7f5820800598 pc=0x12b0bc2]

goroutine 42706 gp=0x20dc12e38000 m=9 mp=0x20dc12d3d808 [running]:
runtime.throw({0x1800755?, 0x7f58306e0020?})
	/usr/local/go/src/runtime/panic.go:1229 +0x48 fp=0x20dc12bbfdf8 sp=0x20dc12bbfdc8 pc=0x48c008
github.com/decoy-mock/decoy/jsondoc.(*Document).AppendValues(0x20dc12d6c140, {0x0, 0x0, 0x0}, 0x0?)
	/work/jsondoc/document.go:303 +0x62
github.com/decoy-mock/decoy/query.valueKeys({0x0, 0x0, 0x0}, 0x20dc12d6c140)
`
	for _, tc := range []struct{ name, log, want string }{
		{"a fault", fault, "fatal error: fault in jsondoc.(*Document).AppendValues"},
		{"a panic", "panic: runtime error: index out of range [3] with length 3\n\ngoroutine 1 [running]:\ngithub.com/decoy-mock/decoy/server.(*Server).read(0x1)\n", "panic: runtime error: index out of range [3] with length 3 in server.(*Server).read"},
		{"a panic outside the repository", "panic: boom\n\ngoroutine 1 [running]:\nmain.main()\n", "panic: boom"},
		{"no crash", "time=… level=WARN msg=slow\n", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := crashLines(tc.log); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}
