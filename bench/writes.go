//go:build linux

package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/decoy-mock/decoy"
	adminclient "github.com/decoy-mock/decoy/client"
	"github.com/decoy-mock/decoy/internal/dataset"
)

// The writes phase (§12.2 of the contract): json-server 0.17 and Decoy
// each hold a users collection of writesRecords records, and the same
// clients PATCH single records of it, picked at random, for the same
// time: what a write costs is Decoy's rate against json-server's, from
// the same run. Then, on the same Decoy, a small read (one record
// through its item route) is measured before any write, after at least
// writesAfter writes, and alone against while one writer PATCHes without
// pause, the two taking turns in rounds.

const (
	// writesRecords is the records of the phase's collection.
	writesRecords = 100_000
	// writesAfter is the writes acknowledged before the read after them.
	writesAfter = 10_000
	// writesPatchCount is the distinct PATCHes the load rotates over, and
	// writesReadCount the distinct records the small read rotates over.
	writesPatchCount = 4096
	writesReadCount  = 1000
	// The targets: PATCHes at least patchVsJSONServer json-server's rate;
	// the small read while a writer runs at least duringVsAlone of its
	// rate alone, and after the writes at least afterVsBefore of its rate
	// before them (§12.2).
	patchVsJSONServer = 300
	duringVsAlone     = 0.8
	afterVsBefore     = 0.9
	// writesCheckID is the record the checks before the load PATCH, and
	// deleteCheckID the one they DELETE.
	writesCheckID = 7
	deleteCheckID = 8
	// writesTopUpLimit is the longest the writes that make up writesAfter
	// may take: a server that slow has no read after writesAfter writes,
	// and the read after fewer misses its target.
	writesTopUpLimit = 2 * time.Minute
)

// writeKinds are the measurements of the phase, in the order they are
// reported.
var writeKinds = []struct{ id, title string }{
	{"patch", "PATCH one record, random ids, {\"age\":N}"},
	{"read-before", "small read, before any write"},
	{"read-after", "small read, after the writes"},
	{"read-alone", "small read, alone"},
	{"read-during", "small read, while one writer PATCHes"},
	{"writer", "the one writer's PATCHes, meanwhile"},
	{"post", "POST one record, without an id (assigned)"},
	{"delete", "DELETE one record, random ids, each once"},
}

// Indexes into writeKinds.
const (
	writePatch = iota
	writeReadBefore
	writeReadAfter
	writeReadAlone
	writeReadDuring
	writeWriter
	writePost
	writeDelete
)

// writesQueryID is the query id of measurement k of the phase.
func writesQueryID(k int) string { return "writes-" + writeKinds[k].id }

// writesResult is what the phase measured.
type writesResult struct {
	Records  int      `json:"records"`
	DocBytes int64    `json:"doc_bytes"`
	Rounds   int      `json:"rounds"`
	Rows     []result `json:"rows"`
	// WritesBeforeAfter is the writes Decoy acknowledged before the read
	// after them (at least writesAfter: the PATCH measurement's, the
	// check's and as many more as that took).
	WritesBeforeAfter int64 `json:"writes_before_read_after"`
	// Decoy's memory: its RSS once the collection was loaded, and the
	// peak from then to the phase's end (VmHWM of each measurement and
	// VmRSS sampled every 50 ms throughout).
	LoadedRSS int64  `json:"decoy_loaded_rss_bytes"`
	PeakRSS   int64  `json:"decoy_peak_rss_bytes"`
	Note      string `json:"note,omitempty"`
}

// find returns the phase's row of a server and measurement, if it ran.
func (w *writesResult) find(server string, k int) *result {
	if w == nil {
		return nil
	}
	for i := range w.Rows {
		if w.Rows[i].Server == server && w.Rows[i].Query == writesQueryID(k) {
			return &w.Rows[i]
		}
	}
	return nil
}

// patchBodies are n PATCHes of single records of a collection of records
// ids 1 to records, picked at random with a fixed seed, each setting age
// to a number from 18 to 87: the ids and their bodies ({"age":N}).
func patchBodies(n, records int) (ids []int, bodies []string) {
	r := rand.New(rand.NewPCG(uint64(records), 31))
	for range n {
		ids = append(ids, 1+r.IntN(records))
		bodies = append(bodies, `{"age":`+strconv.Itoa(18+r.IntN(70))+`}`)
	}
	return ids, bodies
}

// patchRequests are the PATCHes of ids and bodies at prefix/{id}.
func patchRequests(prefix string, ids []int, bodies []string) []request {
	reqs := make([]request, len(ids))
	for i, id := range ids {
		reqs[i] = request{method: http.MethodPatch, target: prefix + "/" + strconv.Itoa(id), body: bodies[i]}
	}
	return reqs
}

// postRequests are n POSTs of new records without an id at prefix, each
// shaped as the collection's, their ages from 18 to 87 in turn.
func postRequests(prefix string, n int) []request {
	reqs := make([]request, n)
	for i := range reqs {
		reqs[i] = request{method: http.MethodPost, target: prefix, body: `{"name":"Ada N. User","email":"new` + strconv.Itoa(i) +
			`@example.com","age":` + strconv.Itoa(18+i%70) + `,"status":"active","createdAt":"2026-11-27","address":{"city":"Paris","zip":"75001","geo":{"lat":48.8566,"lng":2.3522}},"tags":["beta"],"score":50}`}
	}
	return reqs
}

// deleteRequests are DELETEs at prefix/{id} of every record of ids 1 to
// records but deleteCheckID, once each, in an order picked with a fixed
// seed.
func deleteRequests(prefix string, records int) []request {
	r := rand.New(rand.NewPCG(uint64(records), 53))
	reqs := make([]request, 0, records-1)
	for _, i := range r.Perm(records) {
		if id := i + 1; id != deleteCheckID {
			reqs = append(reqs, request{method: http.MethodDelete, target: prefix + "/" + strconv.Itoa(id)})
		}
	}
	return reqs
}

// readTargets are n item reads at prefix/{id} of records spread over a
// collection of records, picked with a fixed seed.
func readTargets(prefix string, n, records int) []string {
	r := rand.New(rand.NewPCG(uint64(records), 47))
	ts := make([]string, n)
	for i := range ts {
		ts[i] = prefix + "/" + strconv.Itoa(1+r.IntN(records))
	}
	return ts
}

// checkRecord checks that an answer is one JSON record with the id want
// and, when age is not 0, that age.
func checkRecord(body []byte, want, age int) error {
	var rec struct {
		ID  json.Number `json:"id"`
		Age json.Number `json:"age"`
	}
	if err := json.Unmarshal(body, &rec); err != nil {
		return fmt.Errorf("answered no record: %w: %.200s", err, body)
	}
	if rec.ID.String() != strconv.Itoa(want) {
		return fmt.Errorf("answered the record %q, not %d", rec.ID, want)
	}
	if age != 0 && rec.Age.String() != strconv.Itoa(age) {
		return fmt.Errorf("the record %d has age %q, not %d", want, rec.Age, age)
	}
	return nil
}

// ratioTarget is x's req/s over ref's, and whether it reaches want: a
// row with errors does not, whatever its rate. ok is false when either
// was not measured.
func ratioTarget(x, ref *result, want float64) (v float64, met, ok bool) {
	if !x.measured() || !ref.measured() {
		return 0, false, false
	}
	v = x.ReqPerSec / ref.ReqPerSec
	return v, v >= want && x.Status == "ok" && ref.Status == "ok", true
}

func (b *bench) runWrites(ctx context.Context) {
	sz := size{N: writesRecords, Label: sizeLabel(writesRecords)}
	rounds := max(b.cfg.WritesRounds, 1)
	w := &writesResult{Records: writesRecords, Rounds: rounds}
	b.writes = w
	logf("== writes: PATCHes of single records of %s, json-server and Decoy; a small read before, after and during writes", commas(writesRecords))
	doc := dataset.Users(writesRecords)
	w.DocBytes = int64(len(doc))
	ids, bodies := patchBodies(writesPatchCount, writesRecords)
	for _, server := range []string{"json-server", "decoy"} {
		if !hasWriter(b.cfg, server) || ctx.Err() != nil {
			continue
		}
		fail := func(ks []int, note string) {
			logf("   %s writes: failed: %s", server, note)
			for _, k := range ks {
				w.Rows = append(w.Rows, result{Size: sz, Server: server, Query: writesQueryID(k), Status: "failed", Note: note})
			}
		}
		if err := b.tools.missing[server]; err != nil {
			fail(writesKindsOf(server), err.Error())
			continue
		}
		var err error
		if server == "json-server" {
			err = b.runWritesJSONServer(ctx, sz, doc, ids, bodies)
		} else {
			err = b.runWritesDecoy(ctx, sz, doc, ids, bodies)
		}
		if err != nil {
			if crash := crashOf(filepath.Join(b.work, "logs", server+"-writes.log")); crash != "" {
				err = fmt.Errorf("%w; the server crashed: %s", err, crash)
			}
		}
		if err != nil {
			fail(missingKinds(w, server), err.Error())
		}
	}
	logWritesSummary(w)
}

// crashOf is what a Go program's log at path says of its crash: the
// panic or fatal error line, and the first function of the repository
// on the crashing goroutine's stack; "" when it holds none.
func crashOf(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	return crashLines(string(b))
}

// crashLines is crashOf's reading of a log's text.
func crashLines(log string) string {
	lines := strings.Split(log, "\n")
	for i, l := range lines {
		if !strings.HasPrefix(l, "panic: ") && !strings.HasPrefix(l, "fatal error: ") {
			continue
		}
		crash := strings.TrimSpace(l)
		for _, f := range lines[i+1:] {
			if strings.HasPrefix(f, "github.com/decoy-mock/decoy/") {
				if j := strings.LastIndex(f, "("); j > 0 {
					f = f[:j]
				}
				return crash + " in " + strings.TrimPrefix(f, "github.com/decoy-mock/decoy/")
			}
		}
		return crash
	}
	return ""
}

// hasWriter says whether the phase runs server.
func hasWriter(cfg *config, server string) bool { return slices.Contains(cfg.Servers, server) }

// writesKindsOf are the measurements of the phase a server has.
func writesKindsOf(server string) []int {
	if server == "decoy" {
		return []int{writePatch, writeReadBefore, writeReadAfter, writeReadAlone, writeReadDuring, writeWriter, writePost, writeDelete}
	}
	return []int{writePatch, writePost, writeDelete}
}

// missingKinds are the measurements of server that have no row yet.
func missingKinds(w *writesResult, server string) []int {
	var ks []int
	for _, k := range writesKindsOf(server) {
		if w.find(server, k) == nil {
			ks = append(ks, k)
		}
	}
	return ks
}

// runWritesJSONServer serves the collection from json-server and measures
// its PATCHes.
func (b *bench) runWritesJSONServer(ctx context.Context, sz size, doc []byte, ids []int, bodies []string) error {
	dir := filepath.Join(b.work, "writes-json-server")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	db := filepath.Join(dir, "db.json")
	f, err := os.Create(db)
	if err == nil {
		_, err = io.WriteString(f, `{"users":`)
		if err == nil {
			_, err = f.Write(doc)
		}
		if err == nil {
			_, err = io.WriteString(f, "}\n")
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		return err
	}
	port, err := freePort()
	if err != nil {
		return err
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	t0 := time.Now()
	p, err := startProc("json-server", filepath.Join(b.work, "logs", "json-server-writes.log"), dir, b.tools.node, b.tools.jsonServer,
		"--quiet", "--host", "127.0.0.1", "--port", strconv.Itoa(port), db)
	if err != nil {
		return err
	}
	defer p.stop()
	sctx, cancel := context.WithTimeout(ctx, b.cfg.StartTimeout)
	err = waitReady(sctx, p, "http://"+addr+"/users/1")
	cancel()
	if err != nil {
		return err
	}
	logf("   json-server: ready after %.1f s, RSS %s", time.Since(t0).Seconds(), formatBytes(p.memory("VmRSS")))
	if err := checkPatch(ctx, addr, "/users", b.cfg.Timeout); err != nil {
		return fmt.Errorf("json-server: %w", err)
	}
	r := result{Size: sz, Server: "json-server", Query: writesQueryID(writePatch), Status: "ok", Target: "PATCH /users/{id}", Records: 1}
	b.waitQuiet(ctx)
	b.measureLoad(ctx, p, b.writesLoad(addr, patchRequests("/users", ids, bodies), b.cfg.Conns, b.cfg.Duration), &r)
	logResult(&r)
	b.writes.Rows = append(b.writes.Rows, r)
	if ctx.Err() != nil {
		return nil
	}
	if err := drain(ctx, addr, sentinel(writePatch, "/users"), 2*b.cfg.Timeout); err != nil {
		return err
	}
	if err := b.measureWrite(ctx, p, "json-server", addr, "/users", writePost, postRequests("/users", writesPatchCount)); err != nil || ctx.Err() != nil {
		return err
	}
	return b.measureWrite(ctx, p, "json-server", addr, "/users", writeDelete, deleteRequests("/users", writesRecords))
}

// writesLoad is the load of conns connections asking reqs in turn, for
// the warm-up and then window.
func (b *bench) writesLoad(addr string, reqs []request, conns int, window time.Duration) load {
	return load{addr: addr, requests: reqs, conns: conns, warmup: b.cfg.Warmup, duration: window, timeout: b.cfg.Timeout}
}

// checkPatch PATCHes the record writesCheckID at prefix/{id}, and checks
// that the answer and a read after it hold the new value.
func checkPatch(ctx context.Context, addr, prefix string, timeout time.Duration) error {
	url := "http://" + addr + prefix + "/" + strconv.Itoa(writesCheckID)
	const age = 99 // beyond the data's 18 to 87
	body, err := send(ctx, http.MethodPatch, url, `{"age":`+strconv.Itoa(age)+`}`, timeout)
	if err != nil {
		return err
	}
	if err := checkRecord(body, writesCheckID, age); err != nil {
		return fmt.Errorf("PATCH %s: %w", prefix+"/"+strconv.Itoa(writesCheckID), err)
	}
	got, _, err := fetch(ctx, url, timeout, nil)
	if err != nil {
		return err
	}
	if err := checkRecord(got, writesCheckID, age); err != nil {
		return fmt.Errorf("GET after PATCH: %w", err)
	}
	return nil
}

// checkPost POSTs a record without an id at prefix, and checks that the
// answer holds it with an id, and that a read of prefix/{id} finds it.
func checkPost(ctx context.Context, addr, prefix string, timeout time.Duration) error {
	q := postRequests(prefix, 1)[0]
	body, err := send(ctx, q.method, "http://"+addr+prefix, q.body, timeout)
	if err != nil {
		return err
	}
	var rec struct {
		ID json.Number `json:"id"`
	}
	if err := json.Unmarshal(body, &rec); err != nil || rec.ID == "" {
		return fmt.Errorf("POST %s answered no record with an id: %v: %.200s", prefix, err, body)
	}
	id, err := strconv.Atoi(rec.ID.String())
	if err != nil {
		return fmt.Errorf("POST %s: the id %q is not a number", prefix, rec.ID)
	}
	got, _, err := fetch(ctx, "http://"+addr+prefix+"/"+rec.ID.String(), timeout, nil)
	if err == nil {
		err = checkRecord(got, id, 18)
	}
	if err != nil {
		return fmt.Errorf("GET after POST: %w", err)
	}
	return nil
}

// checkDelete DELETEs the record deleteCheckID at prefix/{id}, and checks
// that a read of it is then a 404.
func checkDelete(ctx context.Context, addr, prefix string, timeout time.Duration) error {
	url := "http://" + addr + prefix + "/" + strconv.Itoa(deleteCheckID)
	if _, err := send(ctx, http.MethodDelete, url, "", timeout); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		return fmt.Errorf("GET after DELETE %s: %s, not 404", prefix+"/"+strconv.Itoa(deleteCheckID), resp.Status)
	}
	return nil
}

// measureWrite checks one write of kind k (writePost or writeDelete) at
// prefix, then measures reqs and adds the row.
func (b *bench) measureWrite(ctx context.Context, p *proc, server, addr, prefix string, k int, reqs []request) error {
	check, target := checkPost, "POST "+prefix
	if k == writeDelete {
		check, target = checkDelete, "DELETE "+prefix+"/{id}"
	}
	if err := check(ctx, addr, prefix, b.cfg.Timeout); err != nil {
		return fmt.Errorf("%s: %w", server, err)
	}
	r := result{Size: size{N: writesRecords, Label: sizeLabel(writesRecords)}, Server: server, Query: writesQueryID(k), Status: "ok", Target: target, Records: 1}
	b.waitQuiet(ctx)
	b.measureLoad(ctx, p, b.writesLoad(addr, reqs, b.cfg.Conns, b.cfg.Duration), &r)
	logResult(&r)
	b.writes.Rows = append(b.writes.Rows, r)
	if ctx.Err() != nil {
		return nil
	}
	return drain(ctx, addr, sentinel(k, prefix), 2*b.cfg.Timeout)
}

// drain waits until the server has worked through the writes a load left
// in flight when its window closed (up to a request per connection, which
// a server doing a few writes a second takes many seconds over): it sends
// one more write, sentinel, and waits for its answer, whatever its status.
// Both servers take a mock's writes in turn (Decoy under one lock per
// mock, json-server on its one thread), so it is answered after them.
func drain(ctx context.Context, addr string, sentinel request, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, sentinel.method, "http://"+addr+sentinel.target, strings.NewReader(sentinel.body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("waiting for the writes in flight to end: %w", err)
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return err
}

// sentinel is the write drain sends after a load of each kind: the
// PATCH of the checked record again, a POST, the DELETE of the record
// already deleted (a 404, answered in turn all the same).
func sentinel(k int, prefix string) request {
	switch k {
	case writePost:
		return postRequests(prefix, 1)[0]
	case writeDelete:
		return request{method: http.MethodDelete, target: prefix + "/" + strconv.Itoa(deleteCheckID)}
	}
	return request{method: http.MethodPatch, target: prefix + "/" + strconv.Itoa(writesCheckID), body: `{"age":99}`}
}

// send sends one request with a JSON body and returns the answer's body,
// or an error for an answer that is not 2xx.
func send(ctx context.Context, method, url, body string, timeout time.Duration) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, url, strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode/100 != 2 {
		return nil, fmt.Errorf("%s %s: %s: %.300s", method, url, resp.Status, answer)
	}
	return answer, nil
}

// runWritesDecoy serves the collection from a Decoy on an empty data
// folder, through the default project's routes, and measures its
// PATCHes and the small read before, after and during writes.
func (b *bench) runWritesDecoy(ctx context.Context, sz size, doc []byte, ids []int, bodies []string) error {
	w := b.writes
	port, err := freePort()
	if err != nil {
		return err
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	dataDir := filepath.Join(b.work, "decoy-data-writes")
	if err := os.RemoveAll(dataDir); err != nil {
		return err
	}
	t0 := time.Now()
	p, err := startProc("decoy", filepath.Join(b.work, "logs", "decoy-writes.log"), b.work, b.tools.decoy, "serve",
		"--addr", addr, "--data-dir", dataDir, "--admin-token", adminToken, "--rate-limit", "0",
		"--monthly-quota", "0", "--max-data-bytes", "1GiB", "--log-level", "warn")
	if err != nil {
		return err
	}
	defer p.stop()
	sctx, cancel := context.WithTimeout(ctx, b.cfg.StartTimeout)
	err = waitReady(sctx, p, "http://"+addr+"/readyz")
	if err == nil {
		err = makeWritesRoutes(sctx, adminclient.New("http://"+addr, adminToken), doc)
	}
	cancel()
	if err != nil {
		return err
	}
	w.LoadedRSS = p.memory("VmRSS")
	logf("   decoy: collection and routes made %.1f s after start, RSS %s", time.Since(t0).Seconds(), formatBytes(w.LoadedRSS))
	sampler := sampleRSS(p)
	defer func() {
		w.PeakRSS = max(w.PeakRSS, sampler.stop())
		for _, r := range w.Rows {
			if r.Server == "decoy" {
				w.PeakRSS = max(w.PeakRSS, r.PeakRSS)
			}
		}
	}()

	const prefix = "/p/default/users"
	reads := readTargets(prefix, writesReadCount, writesRecords)
	first, _ := strconv.Atoi(strings.TrimPrefix(reads[0], prefix+"/"))
	got, _, err := fetch(ctx, "http://"+addr+reads[0], b.cfg.Timeout, nil)
	if err == nil {
		err = checkRecord(got, first, 0)
	}
	if err != nil {
		return fmt.Errorf("the small read %s: %w", reads[0], err)
	}
	readRow := func(k int) result {
		return result{Size: sz, Server: "decoy", Query: writesQueryID(k), Status: "ok", Records: 1, BodyBytes: int64(len(got)),
			Target: fmt.Sprintf("GET %s/{id}, %s records in turn", prefix, commas(writesReadCount))}
	}
	add := func(r result) {
		logResult(&r)
		w.Rows = append(w.Rows, r)
	}

	// The read before any write.
	before := readRow(writeReadBefore)
	b.measure(ctx, p, addr, reads, "", &before)
	add(before)

	// The PATCHes, after one checked.
	if err := checkPatch(ctx, addr, prefix, b.cfg.Timeout); err != nil {
		return fmt.Errorf("decoy: %w", err)
	}
	written := int64(1)
	patches := patchRequests(prefix, ids, bodies)
	pr := result{Size: sz, Server: "decoy", Query: writesQueryID(writePatch), Status: "ok", Target: "PATCH " + prefix + "/{id}", Records: 1}
	b.waitQuiet(ctx)
	b.measureLoad(ctx, p, b.writesLoad(addr, patches, b.cfg.Conns, b.cfg.Duration), &pr)
	add(pr)
	if pr.Load != nil {
		written += pr.Load.All2xx
	}
	if ctx.Err() != nil {
		return nil
	}
	if err := drain(ctx, addr, sentinel(writePatch, prefix), 2*b.cfg.Timeout); err != nil {
		return err
	}
	written++

	// As many more as make writesAfter, for at most writesTopUpLimit,
	// then the read after them.
	if written < writesAfter {
		logf("   decoy: %s more writes, for at most %v", commas(writesAfter-written), writesTopUpLimit)
		tctx, cancel := context.WithTimeout(ctx, writesTopUpLimit)
		n, err := sendRequests(tctx, addr, patches, int(written), writesAfter-int(written), b.cfg.Conns, b.cfg.Timeout)
		cancel()
		written += int64(n)
		switch {
		case ctx.Err() != nil:
			return nil
		case errors.Is(err, context.DeadlineExceeded):
			// Cut short: let what it left in flight end.
			if err := drain(ctx, addr, sentinel(writePatch, prefix), 2*b.cfg.Timeout); err != nil {
				return err
			}
			written++
			w.Note = join(w.Note, fmt.Sprintf("the writes before the read after them stopped at %s, after %v: fewer than %s", commas(written), writesTopUpLimit, commas(writesAfter)))
		case err != nil:
			return fmt.Errorf("writing up to %s: %w", commas(writesAfter), err)
		}
	}
	w.WritesBeforeAfter = written
	logf("   decoy: %s writes acknowledged before the read after them", commas(written))
	after := readRow(writeReadAfter)
	after.Note = fmt.Sprintf("after %s writes", commas(written))
	b.measure(ctx, p, addr, reads, "", &after)
	add(after)

	// Alone and while one writer PATCHes, taking turns.
	window := b.cfg.Duration / time.Duration(w.Rounds)
	windows := map[int][]result{}
	for round := 0; round < w.Rounds && ctx.Err() == nil; round++ {
		if w.Rounds > 1 {
			logf("   round %d of %d", round+1, w.Rounds)
		}
		b.waitQuiet(ctx)
		for _, i := range roundOrder(round, 2) {
			if ctx.Err() != nil {
				break
			}
			if i == 0 {
				r := readRow(writeReadAlone)
				b.measureLoad(ctx, p, load{addr: addr, targets: reads, conns: b.cfg.Conns, warmup: b.cfg.Warmup, duration: window, timeout: b.cfg.Timeout}, &r)
				windows[writeReadAlone] = append(windows[writeReadAlone], r)
				continue
			}
			r, wr := b.readDuringWriter(ctx, p, addr, reads, patches, window)
			r.Size, r.Records, r.BodyBytes, r.Target = sz, 1, int64(len(got)), readRow(writeReadDuring).Target
			windows[writeReadDuring] = append(windows[writeReadDuring], r)
			wr.Size, wr.Records, wr.Target = sz, 1, "PATCH "+prefix+"/{id}, one connection"
			windows[writeWriter] = append(windows[writeWriter], wr)
		}
	}
	for _, k := range []int{writeReadAlone, writeReadDuring, writeWriter} {
		if len(windows[k]) > 0 {
			add(mergeWindows(windows[k]))
		}
	}

	// Last, as they change the collection's length: POSTs, then DELETEs.
	if ctx.Err() != nil {
		return nil
	}
	if err := b.measureWrite(ctx, p, "decoy", addr, prefix, writePost, postRequests(prefix, writesPatchCount)); err != nil || ctx.Err() != nil {
		return err
	}
	return b.measureWrite(ctx, p, "decoy", addr, prefix, writeDelete, deleteRequests(prefix, writesRecords))
}

// readDuringWriter measures the small read while one connection PATCHes
// without pause, over the same warm-up and window: the read's row (the
// server's CPU in it is the reads' and the writes' together) and the
// writer's.
func (b *bench) readDuringWriter(ctx context.Context, p *proc, addr string, reads []string, patches []request, window time.Duration) (read, writer result) {
	read = result{Server: "decoy", Query: writesQueryID(writeReadDuring), Status: "ok"}
	writer = result{Server: "decoy", Query: writesQueryID(writeWriter), Status: "ok"}
	var (
		wg sync.WaitGroup
		wl *loadResult
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		wl = b.writesLoad(addr, patches, 1, window).run(ctx)
	}()
	b.measureLoad(ctx, p, load{addr: addr, targets: reads, conns: b.cfg.Conns, warmup: b.cfg.Warmup, duration: window, timeout: b.cfg.Timeout}, &read)
	wg.Wait()
	writer.Load = wl
	writer.ReqPerSec = wl.rate()
	writer.P50, writer.P99 = ms(wl.hist.quantile(0.50)), ms(wl.hist.quantile(0.99))
	writer.ServerCPU, writer.OtherCPU, writer.IOWait = read.ServerCPU, read.OtherCPU, read.IOWait
	if wl.Errors+wl.Timeouts > 0 || wl.OK == 0 {
		writer.Status = "errors"
		writer.Note = fmt.Sprintf("%d errors, %d timeouts of %d (first: %s)", wl.Errors, wl.Timeouts, wl.OK+wl.Errors+wl.Timeouts, wl.FirstErr)
	}
	return read, writer
}

// sendRequests sends n of reqs, from from on around, over conns
// connections, and returns how many were answered 2xx; it stops at the
// first other answer or error.
func sendRequests(ctx context.Context, addr string, reqs []request, from, n, conns int, timeout time.Duration) (int, error) {
	client := &http.Client{Timeout: timeout, Transport: &http.Transport{MaxIdleConnsPerHost: conns}}
	defer client.CloseIdleConnections()
	var (
		next, ok atomic.Int64
		mu       sync.Mutex
		first    error
		wg       sync.WaitGroup
	)
	fail := func(err error) {
		mu.Lock()
		defer mu.Unlock()
		first = cmp.Or(first, err)
	}
	failed := func() bool {
		mu.Lock()
		defer mu.Unlock()
		return first != nil
	}
	for range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil && !failed() {
				i := next.Add(1) - 1
				if i >= int64(n) {
					return
				}
				q := reqs[(from+int(i))%len(reqs)]
				req, err := http.NewRequestWithContext(ctx, q.method, "http://"+addr+q.target, strings.NewReader(q.body))
				if err != nil {
					fail(err)
					return
				}
				req.Header.Set("Content-Type", "application/json")
				resp, err := client.Do(req)
				if err != nil {
					fail(err)
					return
				}
				body, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				switch {
				case err != nil:
					fail(err)
				case resp.StatusCode/100 != 2:
					fail(fmt.Errorf("%s %s: %s: %.200s", q.method, q.target, resp.Status, body))
				default:
					ok.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	return int(ok.Load()), cmp.Or(first, ctx.Err())
}

// makeWritesRoutes stores the collection as a mock of the default project
// with the routes GET /users, GET /users/{id}, PATCH /users/{id}, POST
// /users and DELETE /users/{id} (their default actions: update, create,
// delete).
func makeWritesRoutes(ctx context.Context, ac *adminclient.Client, doc []byte) error {
	m, err := ac.CreateMock(ctx, bytes.NewReader(doc), adminclient.CreateOptions{
		ID: benchID("writes-users"), Name: "writes-users", ProjectID: decoy.DefaultProjectID})
	if err != nil {
		return fmt.Errorf("creating the mock: %w", err)
	}
	for _, rt := range [][2]string{{http.MethodGet, "/users"}, {http.MethodGet, "/users/{id}"}, {http.MethodPatch, "/users/{id}"},
		{http.MethodPost, "/users"}, {http.MethodDelete, "/users/{id}"}} {
		in := map[string]string{"method": rt[0], "path": rt[1], "mock_id": m.ID}
		if err := ac.Do(ctx, http.MethodPost, "/admin/v1/projects/"+decoy.DefaultProjectID+"/routes", in, nil); err != nil {
			return fmt.Errorf("creating the route %s %s: %w", rt[0], rt[1], err)
		}
	}
	return nil
}

// writesRatio is one comparison of the phase: measurement k's req/s over
// ref's (of server refServer), and what it must reach.
type writesRatio struct {
	k, ref    int
	refServer string
	want      float64
	what      string
	refLabel  string // how the table names ref beside the ratio
}

// writesRatios are the phase's targets.
var writesRatios = []writesRatio{
	{writePatch, writePatch, "json-server", patchVsJSONServer,
		fmt.Sprintf("writes: PATCHes of single records of %s: ≥ %d× json-server's", commas(writesRecords), patchVsJSONServer), "json-server"},
	{writeReadDuring, writeReadAlone, "decoy", duringVsAlone,
		fmt.Sprintf("writes: a small read while one writer PATCHes: ≥ %.1f× the same read alone", duringVsAlone), "alone"},
	{writeReadAfter, writeReadBefore, "decoy", afterVsBefore,
		fmt.Sprintf("writes: a small read after %s writes: ≥ %.1f× before any write", commas(writesAfter), afterVsBefore), "before"},
}

// of is the ratio r compares in w, and whether it meets its target.
func (r writesRatio) of(w *writesResult) (x, ref *result, v float64, met, ok bool) {
	x, ref = w.find("decoy", r.k), w.find(r.refServer, r.ref)
	v, met, ok = ratioTarget(x, ref, r.want)
	if r.k == writeReadAfter && w.WritesBeforeAfter < writesAfter {
		met = false // not after as many writes as the target says
	}
	return x, ref, v, met, ok
}

// formatWritesRatio prints a ratio of the phase: whole above 100, else
// with two decimals.
func formatWritesRatio(v float64) string {
	if v >= 100 {
		return commas(int64(v + 0.5))
	}
	return fmt.Sprintf("%.2f", v)
}

// writesTargetRows are the phase's targets with what this run measured.
func writesTargetRows(r *report) []targetRow {
	if r.Writes == nil {
		return nil
	}
	var rows []targetRow
	for _, wr := range writesRatios {
		x, ref, v, met, ok := wr.of(r.Writes)
		if !ok {
			continue
		}
		row := targetRow{what: wr.what, measured: formatWritesRatio(v) + "×", met: met}
		if wr.k == writeReadAfter && r.Writes.WritesBeforeAfter < writesAfter {
			row.measured += fmt.Sprintf(" (after only %s writes)", commas(r.Writes.WritesBeforeAfter))
		}
		for _, y := range []*result{x, ref} {
			if y.Status != "ok" {
				row.measured += fmt.Sprintf(" (%s %s: %s)", displayNames[y.Server], writeKinds[writeIndex(y.Query)].id, y.Status)
			}
		}
		rows = append(rows, row)
	}
	return rows
}

// writeIndex is the index in writeKinds of a query of the phase.
func writeIndex(queryID string) int {
	id := strings.TrimPrefix(queryID, "writes-")
	for k, wk := range writeKinds {
		if wk.id == id {
			return k
		}
	}
	return -1
}

// writesRowTitle is how the phase's table names a row.
func writesRowTitle(x *result, w *writesResult) string {
	k := writeIndex(x.Query)
	if k < 0 {
		return x.Query
	}
	title := writeKinds[k].title
	if k == writeReadAfter && w.WritesBeforeAfter > 0 {
		title = fmt.Sprintf("small read, after %s writes", commas(w.WritesBeforeAfter))
	}
	return displayNames[x.Server] + ": " + title
}

// writeWrites writes the rows of the writes phase, with the ratios its
// targets are on and Decoy's memory.
func writeWrites(w io.Writer, r *report) {
	ws := r.Writes
	if ws == nil || len(ws.Rows) == 0 {
		return
	}
	fmt.Fprintf(w, "## Writes: PATCHes of single records of %s, and a small read around them\n\n", commas(int64(ws.Records)))
	fmt.Fprintf(w, "One users collection of %s records (%s), served by json-server 0.17.4 (`{\"users\":[...]}` in its db.json, which it rewrites after every write) and by Decoy (`--rate-limit 0 --monthly-quota 0`, SQLite on an empty data folder; the collection is a mock of the default project with the routes `GET /users`, `GET /users/{id}`, `PATCH /users/{id}`, `POST /users` and `DELETE /users/{id}`). Each is sent PATCHes of single records, `{\"age\":N}` at ids picked at random (%s PATCHes in turn), at %d connections for %v after a warm-up of %v; before the load, one PATCH is checked to answer the record changed, and a read after it to see the change. Then, on the same Decoy, a small read (`GET /p/default/users/{id}`, %s records in turn): before any write; after at least %s writes (the PATCH measurement's, then as many more as that left, for at most %v); and alone against while one more connection PATCHes without pause, taking turns in %d %s of %v each, counted together. Last, on each server, POSTs of new records without an id (%s in turn, about as large as the collection's), then DELETEs of records picked at random, each once (after one of each is checked), measured as the PATCHes, with no target. Targets: Decoy's PATCHes at least %d× json-server's; the read while the writer runs at least %.1f× the read alone; after the writes at least %.1f× before them.\n\n",
		commas(int64(ws.Records)), formatBytes(ws.DocBytes), commas(writesPatchCount), r.Config.Conns, r.Config.Duration, r.Config.Warmup,
		commas(writesReadCount), commas(writesAfter), writesTopUpLimit, ws.Rounds, plural(ws.Rounds, "round", "rounds"), (r.Config.Duration / time.Duration(max(ws.Rounds, 1))).Round(time.Millisecond), commas(writesPatchCount), patchVsJSONServer, duringVsAlone, afterVsBefore)
	fmt.Fprintf(w, "| measurement | req/s | p50 ms | p99 ms | CPU µs/req | req/s ÷ | CPU µs/req ÷ | target | met |\n|---|--:|--:|--:|--:|---|--:|--:|:-:|\n")
	var notes []string
	for _, x := range ws.Rows {
		k := writeIndex(x.Query)
		status := ""
		if x.Status != "ok" {
			status = " (" + x.Status + ")"
		}
		note := x.Note
		if k == writeReadAfter {
			note = "" // in the title
		}
		if x.OtherCPU >= busyCores || x.IOWait >= busyCores {
			status += " ⚠"
			note = join(note, fmt.Sprintf("meanwhile other processes on the machine used %.2f cores, and %.2f cores sat waiting on the disk", x.OtherCPU, x.IOWait))
		}
		switch k {
		case writeReadDuring:
			note = join(note, "CPU µs/req: the server's CPU in the window over the reads and the writes it answered together")
		case writeWriter:
			note = join(note, "measured in the same windows as the read above, whose CPU µs/req it shares")
		}
		title := writesRowTitle(&x, ws)
		if note != "" {
			notes = append(notes, title+": "+note)
			status += fmt.Sprintf(" (%d)", len(notes))
		}
		if !x.measured() {
			fmt.Fprintf(w, "| %s | –%s | | | | | | | |\n", title, status)
			continue
		}
		vs, cpu, target, met := "", "", "", ""
		for _, wr := range writesRatios {
			if wr.k != k || x.Server != "decoy" {
				continue
			}
			xx, ref, v, reached, measured := wr.of(ws)
			if !measured {
				break
			}
			vs = fmt.Sprintf("%s× %s", formatWritesRatio(v), wr.refLabel)
			cpu = ratioOf(writesCPUView(xx, ws), writesCPUView(ref, ws), (*result).cpuPerRequest)
			target, met = "≥ "+formatWritesRatio(wr.want)+"×", "yes"
			if !reached {
				met = "**no**"
			}
		}
		if (k == writePost || k == writeDelete) && x.Server == "decoy" {
			// Measured too, against json-server, with no target.
			if js := ws.find("json-server", k); js.measured() {
				vs = formatWritesRatio(x.ReqPerSec/js.ReqPerSec) + "× json-server"
				cpu = ratioOf(&x, js, (*result).cpuPerRequest)
			}
		}
		micros := "–"
		if v := writesCPUView(&x, ws).cpuPerRequest(); v > 0 {
			micros = formatMicros(v)
		}
		fmt.Fprintf(w, "| %s | %s%s | %.2f | %.2f | %s | %s | %s | %s | %s |\n", title, formatWritesRate(x.ReqPerSec), status,
			x.P50, x.P99, micros, vs, cpu, target, met)
	}
	fmt.Fprintln(w)
	if ws.Note != "" {
		fmt.Fprintf(w, "Note: %s.\n\n", ws.Note)
	}
	if ws.PeakRSS > 0 {
		fmt.Fprintf(w, "Decoy's memory: %s RSS once the collection (%s) and its routes were made; peak %s (%s× the collection) from then to the phase's end, every write and read above included.\n\n",
			formatBytes(ws.LoadedRSS), formatBytes(ws.DocBytes), formatBytes(ws.PeakRSS), formatFactor2(float64(ws.PeakRSS)/float64(ws.DocBytes)))
	}
	for i, n := range notes {
		fmt.Fprintf(w, "(%d) %s\n", i+1, strings.ReplaceAll(n, "|", "\\|"))
		if i == len(notes)-1 {
			fmt.Fprintln(w)
		}
	}
}

// plural is one when n is 1, else many.
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// formatWritesRate prints a rate of the phase: whole from 100 on, else
// with two decimals (json-server makes a few writes a second).
func formatWritesRate(v float64) string {
	if v >= 100 {
		return commas(int64(v))
	}
	return fmt.Sprintf("%.2f", v)
}

// writesCPUView is x as its CPU per request is counted: the read while
// the writer runs and the writer share one server's CPU, so each is
// counted over the answers of both.
func writesCPUView(x *result, ws *writesResult) *result {
	k := writeIndex(x.Query)
	if k != writeReadDuring && k != writeWriter {
		return x
	}
	read, writer := ws.find("decoy", writeReadDuring), ws.find("decoy", writeWriter)
	if !read.measured() || !writer.measured() {
		return x
	}
	v := *read
	v.ReqPerSec = read.ReqPerSec + writer.ReqPerSec
	return &v
}

// logWritesSummary prints the phase's figures and targets on standard
// error, for a run of the phase alone.
func logWritesSummary(w *writesResult) {
	if w == nil {
		return
	}
	logf("== writes: summary")
	for _, k := range []int{writePatch, writePost, writeDelete} {
		method := strings.ToUpper(writeKinds[k].id)
		for _, server := range []string{"json-server", "decoy"} {
			if x := w.find(server, k); x != nil {
				logf("   %-11s %s/s %s (%s), %s CPU µs/%s", server, method, formatWritesRate(x.ReqPerSec), x.Status, formatMicros(x.cpuPerRequest()), method)
			}
		}
		if x, js := w.find("decoy", k), w.find("json-server", k); k != writePatch && x.measured() && js.measured() {
			logf("   %s: Decoy %s× json-server's (no target)", method, formatWritesRatio(x.ReqPerSec/js.ReqPerSec))
		}
	}
	for _, wr := range writesRatios {
		x, ref, v, met, ok := wr.of(w)
		if !ok {
			logf("   %s: not measured", wr.what)
			continue
		}
		cpu := x.cpuPerRequest() / ref.cpuPerRequest()
		if wr.k == writeReadDuring {
			cpu = writesCPUView(x, w).cpuPerRequest() / ref.cpuPerRequest()
		}
		logf("   %s: %s× (CPU µs/req %.3g×): %s", wr.what, formatWritesRatio(v), cpu, map[bool]string{true: "met", false: "NOT met"}[met])
	}
	if wr := w.find("decoy", writeWriter); wr.measured() {
		logf("   the one writer meanwhile: %s PATCH/s", formatWritesRatio(wr.ReqPerSec))
	}
	if w.PeakRSS > 0 {
		logf("   decoy peak RSS %s (%.2f× the %s collection), %s once loaded", formatBytes(w.PeakRSS), float64(w.PeakRSS)/float64(w.DocBytes), formatBytes(w.DocBytes), formatBytes(w.LoadedRSS))
	}
}
