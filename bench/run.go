//go:build linux

package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// bench holds one run: its settings, tools and what it measured.
type bench struct {
	cfg     *config
	work    string
	tools   *tools
	results []result
	starts  []startup
	memory  *memoryResult
	started time.Time
	// rotation holds the rows of the many-mocks phase (see rotate.go).
	rotation []result
	// generated holds the rows of the generated-data phase (see
	// generated.go).
	generated []result
	// routes holds the rows of the routes phase (see routes.go).
	routes []result
	// writes holds the writes phase (see writes.go).
	writes *writesResult
	// tokens are the private mocks' tokens, by dataset label: nginx's load
	// sends the same header as Decoy's.
	tokens map[string]string
}

// result is one server answering one query over one dataset.
type result struct {
	Size      size        `json:"size"`
	Server    string      `json:"server"`
	Query     string      `json:"query"`
	Target    string      `json:"target"`
	Status    string      `json:"status"` // ok, limited (429s), errors, timeout, failed
	Note      string      `json:"note,omitempty"`
	Records   int         `json:"records"`              // records in the answer
	BodyBytes int64       `json:"body_bytes"`           // size of the answer, uncompressed
	WireBytes int64       `json:"wire_bytes,omitempty"` // size of the answer as the client got it, when compressed
	SameAsRef *bool       `json:"same_records"`         // same ids in the same order as Decoy's answer (and, gzipped, as many bytes)
	ReqPerSec float64     `json:"req_per_sec"`
	P50       float64     `json:"p50_ms"`
	P99       float64     `json:"p99_ms"`
	PeakRSS   int64       `json:"peak_rss_bytes"`   // VmHWM over the query, summed over the process tree
	ServerCPU float64     `json:"server_cpu_cores"` // CPU the server used during the measured window, in cores
	LoadCPU   float64     `json:"load_generator_cpu_cores"`
	OtherCPU  float64     `json:"other_cpu_cores"` // CPU used meanwhile by other processes than the server and this program
	IOWait    float64     `json:"iowait_cores"`    // the machine's CPUs waiting on the disk meanwhile
	MaxRSS    int64       `json:"sampled_rss_bytes"`
	Load      *loadResult `json:"load,omitempty"`
}

// startup is how long a server took to start and load a dataset, and the
// memory it held then.
type startup struct {
	Size    size    `json:"size"`
	Server  string  `json:"server"`
	Status  string  `json:"status"`
	Note    string  `json:"note,omitempty"`
	Seconds float64 `json:"ready_after_s"`
	RSS     int64   `json:"rss_bytes"`
	PeakRSS int64   `json:"peak_rss_bytes"`
}

func newBench(ctx context.Context, cfg *config, work string) (*bench, error) {
	if err := os.MkdirAll(filepath.Join(work, "logs"), 0o755); err != nil {
		return nil, err
	}
	b := &bench{cfg: cfg, work: work, started: time.Now(), tokens: map[string]string{}}
	b.tools = setupTools(ctx, cfg, work)
	for _, s := range cfg.Servers {
		if err := b.tools.missing[s]; err != nil {
			logf("%s cannot run: %v", s, err)
		}
	}
	return b, ctx.Err()
}

// runSize runs every selected server over one dataset: Decoy and the floors
// together, taking turns on each query (runTurns), then json-server and
// Mockoon, one at a time.
func (b *bench) runSize(ctx context.Context, sz size) error {
	logf("== %s records: generating the dataset", sz.Label)
	d, err := writeDataFiles(filepath.Join(b.work, "data", sz.Label), sz, b.cfg.Servers)
	if err != nil {
		return err
	}
	defer func() {
		if !b.cfg.Keep {
			os.RemoveAll(d.dir)
		}
	}()
	logf("   %s records, %s", sz.Label, formatBytes(d.bytes))
	ref := map[string]*answer{}
	if slices.Contains(b.cfg.Servers, "decoy") || b.floorWanted() {
		if !slices.Contains(b.cfg.Servers, "decoy") {
			logf("   decoy: only to get the answers nginx and nethttp serve")
		}
		turn := []string{"decoy"}
		for _, f := range serverNames {
			if servesFloor(f) && slices.Contains(b.cfg.Servers, f) {
				turn = append(turn, f)
			}
		}
		// The private mock gets a Decoy of its own: one holding both
		// copies of the document would show twice its memory in every row.
		var public, private []query
		for _, q := range b.queriesFor("decoy") {
			if q.client().Token {
				private = append(private, q)
			} else {
				public = append(public, q)
			}
		}
		for i, group := range [][]query{public, private} {
			if len(group) > 0 && ctx.Err() == nil {
				b.runTurns(ctx, turn, d, ref, group, i == 1, i == 0 || len(public) == 0)
			}
		}
	}
	for _, server := range serverNames {
		if server == "decoy" || servesFloor(server) || !slices.Contains(b.cfg.Servers, server) {
			continue
		}
		if sz.N > b.cfg.OthersMax.N {
			logf("   %s: not run above %s records (-others-max)", server, b.cfg.OthersMax.Label)
			continue
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if qs := b.queriesFor(server); len(qs) > 0 {
			b.runTurns(ctx, []string{server}, d, ref, qs, false, true)
		}
	}
	return ctx.Err()
}

// floorWanted reports whether a server that serves Decoy's answers runs.
func (b *bench) floorWanted() bool { return slices.ContainsFunc(b.cfg.Servers, servesFloor) }

// queriesFor lists the queries a server is asked over each dataset:
// json-server and Mockoon only the plain ones (they are compared with Decoy
// on its query work), Decoy and the floors every client's.
func (b *bench) queriesFor(server string) []query {
	qs := allQueries(b.cfg.Clients)
	if server == "decoy" || servesFloor(server) {
		return qs
	}
	return slices.DeleteFunc(qs, func(q query) bool { return q.Client != "" })
}

// running is a server started for runTurns.
type running struct {
	server  string
	p       *proc
	port    int
	token   string
	private bool
	measure bool
}

func (s *running) addr() string { return fmt.Sprintf("127.0.0.1:%d", s.port) }

// runTurns starts servers (Decoy first: the floors serve its answers),
// checks each one's answer to each query of qs against Decoy's, and
// measures them under load, the servers taking turns on each query: in
// each of -rounds rounds, each is measured for -duration ÷ rounds after
// its warm-up, each round starting one server further on, and its row
// counts its windows together. What else runs on the machine (on a
// virtual machine, a server's rate moved by a third from one minute to
// the next) then weighs on each alike, and Decoy's ratios to the floors
// come from the same seconds, not from runs minutes apart. private: Decoy
// holds the document as a private mock, read with its token. startRows:
// the servers' start-ups are reported.
func (b *bench) runTurns(ctx context.Context, servers []string, d *dataFiles, ref map[string]*answer, qs []query, private, startRows bool) {
	var rs []*running
	defer func() {
		for _, s := range rs {
			s.p.stop()
		}
	}()
	for _, server := range servers {
		if s := b.launch(ctx, server, d, qs, private, startRows); s != nil {
			rs = append(rs, s)
		}
	}
	rounds, measured := max(b.cfg.Rounds, 1), 0
	for _, s := range rs {
		if s.measure {
			measured++
		}
	}
	if measured < 2 {
		rounds = 1 // nothing to take turns with
	}
	for i, q := range qs {
		if ctx.Err() != nil {
			return
		}
		rows := make([]result, len(rs))
		for k, s := range rs {
			r := &rows[k]
			*r = result{Size: d.size, Server: s.server, Query: q.ID, Target: target(s.server, q, d), Status: "ok"}
			if i > 0 {
				b.restartIfBusy(ctx, s, d, r)
			}
			if r.Status == "ok" {
				b.runQuery(ctx, s.p, s.addr(), q, d, ref, r, b.tokenOf(s, d))
			}
		}
		// The servers that take turns: those measured whose answer was
		// right.
		var turn []int
		for k, s := range rs {
			if s.measure && rows[k].Status == "ok" {
				turn = append(turn, k)
			}
		}
		windows := make([][]result, len(rs))
		for round := 0; round < rounds && ctx.Err() == nil; round++ {
			if rounds > 1 {
				logf("   %s: round %d of %d", q.ID, round+1, rounds)
			}
			for _, j := range roundOrder(round, len(turn)) {
				if ctx.Err() != nil {
					break
				}
				k := turn[j]
				s, r := rs[k], rows[k]
				// Before each window, as before each measurement: the
				// last server's work left over (answers abandoned at
				// the end of its window) has a second to end, and more
				// while others work.
				b.waitQuiet(ctx)
				b.measureFor(ctx, s.p, s.addr(), []string{r.Target}, headerLines(q.client().headers(b.tokenOf(s, d))), &r, b.cfg.Duration/time.Duration(rounds))
				windows[k] = append(windows[k], r)
			}
		}
		for k, s := range rs {
			if !s.measure {
				continue
			}
			r := rows[k]
			switch n := len(windows[k]); {
			case r.Status == "ok" && n == 0:
				continue // interrupted before its turn: not measured
			case n > 0: // also when interrupted: what was measured is reported
				r = mergeWindows(windows[k])
				if n < rounds {
					r.Note = join(r.Note, fmt.Sprintf("interrupted: %d of %d windows", n, rounds))
				}
			}
			b.results = append(b.results, r)
			logResult(&r)
		}
	}
}

// tokenOf is the token a client sends to s: the private mock's (a floor
// ignores it, but it is sent as the client sends it).
func (b *bench) tokenOf(s *running, d *dataFiles) string {
	if servesFloor(s.server) {
		return b.tokens[d.size.Label]
	}
	return s.token
}

// launch starts server for the queries qs, and reports its start-up
// (startRow); it returns nil, each query failed, when it did not start.
func (b *bench) launch(ctx context.Context, server string, d *dataFiles, qs []query, private, startRow bool) *running {
	measure := slices.Contains(b.cfg.Servers, server)
	failAll := func(status, note string) {
		for _, q := range qs {
			if measure {
				b.results = append(b.results, result{Size: d.size, Server: server, Query: q.ID,
					Target: target(server, q, d), Status: status, Note: note})
			}
		}
		logf("   %s: %s: %s", server, status, note)
	}
	if err := b.tools.missing[server]; err != nil {
		failAll("failed", err.Error())
		return nil
	}
	port, err := freePort()
	if err != nil {
		failAll("failed", err.Error())
		return nil
	}
	logf("   %s: starting", server)
	t0 := time.Now()
	p, token, err := b.start(ctx, server, d, port, private)
	st := startup{Size: d.size, Server: server, Status: "ok", Seconds: time.Since(t0).Seconds()}
	if private && server == "decoy" {
		st.Server = "decoy-private"
	}
	// Decoy's start-ups are all reported (the public mock's and the
	// private one's); a floor's once a dataset.
	startRow = measure && (startRow || server == "decoy")
	if err != nil {
		st.Status, st.Note = "failed", err.Error()
		if errors.Is(err, context.DeadlineExceeded) {
			st.Status = "timeout"
		}
		if startRow {
			b.starts = append(b.starts, st)
		}
		failAll(st.Status, "did not start: "+err.Error())
		return nil
	}
	st.RSS, st.PeakRSS = p.memory("VmRSS"), p.memory("VmHWM")
	if startRow {
		b.starts = append(b.starts, st)
	}
	logf("   %s: ready after %.1f s, RSS %s", server, st.Seconds, formatBytes(st.RSS))
	return &running{server: server, p: p, port: port, token: token, private: private, measure: measure}
}

// restartIfBusy gives s one request timeout to answer its probe: a server
// still working through the last query's abandoned requests (or dead)
// would spoil this one. Else it starts it afresh, or fails r.
func (b *bench) restartIfBusy(ctx context.Context, s *running, d *dataFiles, r *result) {
	sctx, cancel := context.WithTimeout(ctx, b.cfg.Timeout)
	err := waitReady(sctx, s.p, "http://"+s.addr()+probePath(s.server))
	cancel()
	if err == nil || ctx.Err() != nil {
		return
	}
	logf("   %s: restarting: %v", s.server, err)
	s.p.stop()
	p, token, err := b.start(ctx, s.server, d, s.port, s.private)
	if err != nil {
		r.Status, r.Note = "failed", "could not restart: "+err.Error()
		return
	}
	s.p, s.token = p, token
	r.Note = "server restarted first: it was still busy with the previous query"
}

func logResult(r *result) {
	logf("   %-11s %-18s %-7s %9.1f req/s  p50 %8.2f ms  p99 %8.2f ms  peak RSS %9s  CPU %.2f, %.1f µs/req (load %.2f, others %.2f, iowait %.2f)  %s",
		r.Server, r.Query, r.Status, r.ReqPerSec, r.P50, r.P99, formatBytes(r.PeakRSS), r.ServerCPU,
		r.cpuPerRequest(), r.LoadCPU, r.OtherCPU, r.IOWait, r.Note)
}

// runQuery checks a server's answer to q (Decoy's is kept for the floors
// and the others to be checked against), and fills in r what it found.
func (b *bench) runQuery(ctx context.Context, p *proc, addr string, q query, d *dataFiles, ref map[string]*answer, r *result, token string) {
	if done, err := p.exited(); done {
		r.Status, r.Note = "failed", join(r.Note, fmt.Sprintf("server %v earlier: %s", err, p.logTail()))
		return
	}
	if servesFloor(r.Server) && ref[q.ID] == nil {
		r.Status, r.Note = "failed", join(r.Note, "no answer from Decoy to serve")
		return
	}
	c := q.client()
	keep := r.Server == "decoy" && b.floorWanted()
	a, err := checkAnswer(ctx, "http://"+addr+r.Target, b.cfg.Timeout, c, token, keep)
	if err != nil {
		r.Status, r.Note = "failed", join(r.Note, err.Error())
		if errors.Is(err, os.ErrDeadlineExceeded) || errors.Is(err, context.DeadlineExceeded) {
			r.Status = "timeout"
		}
		if done, perr := p.exited(); done {
			r.Note += fmt.Sprintf("; server %v: %s", perr, p.logTail())
		}
		return
	}
	r.Records, r.BodyBytes = len(a.ids), a.size
	if a.encoding != "" {
		r.WireBytes = a.wireSize
	}
	if r.Server == "decoy" {
		ref[q.ID] = a
		if a.body != nil {
			if err := saveFloor(filepath.Join(b.work, "www"), floorPath(q, d), floorFile{a.body, a.wire, a.head, a.wireHead}); err != nil {
				r.Status, r.Note = "failed", join(r.Note, err.Error())
				return
			}
			if q.base() == "whole" && !sameFile(d.users, a.body) {
				r.Note = join(r.Note, "whole answer differs from the stored document")
			}
			a.body, a.wire, a.head, a.wireHead = nil, nil, nil, nil
		}
	} else if want := ref[q.ID]; want != nil {
		same := slices.Equal(a.ids, want.ids)
		if !same {
			r.Note = join(r.Note, fmt.Sprintf("different records from Decoy's (%d vs %d)", len(a.ids), len(want.ids)))
		}
		if c.Gzip && (a.encoding != want.encoding || a.wireSize != want.wireSize) {
			same = false
			r.Note = join(r.Note, fmt.Sprintf("sent %s, Decoy %s", a.describeWire(), want.describeWire()))
		}
		r.SameAsRef = &same
	}
}

// measure waits for the machine to be quiet (-wait-quiet), then puts the
// server under load for -duration and fills in r's numbers.
func (b *bench) measure(ctx context.Context, p *proc, addr string, targets []string, header string, r *result) {
	b.waitQuiet(ctx)
	b.measureFor(ctx, p, addr, targets, header, r, b.cfg.Duration)
}

// measureFor puts the server under load for window, after the warm-up,
// at once, and fills in r's numbers.
func (b *bench) measureFor(ctx context.Context, p *proc, addr string, targets []string, header string, r *result, window time.Duration) {
	b.measureLoad(ctx, p, load{addr: addr, targets: targets, header: header, conns: b.cfg.Conns, warmup: b.cfg.Warmup,
		duration: window, timeout: b.cfg.Timeout}, r)
}

// measureLoad puts the server under the load l at once, and fills in r's
// numbers: the server's memory and CPU (its onOpen and onClose are set
// here), and what l measured.
func (b *bench) measureLoad(ctx context.Context, p *proc, l load, r *result) {
	peakReset := p.resetPeak()
	sampler := sampleRSS(p)
	pids := p.pids()
	var (
		cpu0 cpuSnapshot
		use  cpuUse
	)
	l.onOpen = func() { cpu0 = takeCPU(pids) }
	l.onClose = func() { use = cpu0.since() }
	lr := l.run(ctx)
	r.ServerCPU, r.LoadCPU, r.OtherCPU, r.IOWait = use.server, use.me, use.others, use.iowait
	r.MaxRSS = sampler.stop()
	r.PeakRSS = max(p.memory("VmHWM"), r.MaxRSS)
	if !peakReset {
		r.Note = join(r.Note, "peak RSS since start (could not reset VmHWM)")
	}
	r.Load = lr
	r.ReqPerSec = lr.rate()
	r.P50 = ms(lr.hist.quantile(0.50))
	r.P99 = ms(lr.hist.quantile(0.99))
	switch {
	case lr.OK == 0 && lr.Timeouts > 0:
		r.Status = "timeout"
	case lr.OK == 0 && lr.Limited > 0 && lr.Errors == 0:
		r.Status = "limited"
	case lr.OK == 0:
		r.Status = "failed"
		if lr.Errors+lr.Limited == 0 {
			r.Note = join(r.Note, fmt.Sprintf("no answer ended within %v", lr.Elapsed.Round(time.Millisecond)))
		}
	case lr.Errors+lr.Timeouts > 0:
		r.Status = "errors"
	case lr.Limited > 0:
		r.Status = "limited"
	}
	if lr.Limited > 0 {
		r.Note = join(r.Note, fmt.Sprintf("%s answers were 429 (rate limit or quota) beside %s 2xx; req/s counts the 2xx only, CPU µs/req both", commas(lr.Limited), commas(lr.OK)))
	}
	if lr.Errors+lr.Timeouts > 0 {
		r.Note = join(r.Note, fmt.Sprintf("%d errors, %d timeouts of %d (first: %s)",
			lr.Errors, lr.Timeouts, lr.OK+lr.Limited+lr.Errors+lr.Timeouts, lr.FirstErr))
	}
	if done, err := p.exited(); done {
		r.Status = "failed"
		r.Note = join(r.Note, fmt.Sprintf("server %v: %s", err, p.logTail()))
	}
}

// cpuPerRequest is the server's CPU time per request answered, in µs: its
// cores over the window divided by the requests it answered a second over
// the same window.
func cpuPerRequest(cores, answeredPerSec float64) float64 {
	if cores <= 0 || answeredPerSec <= 0 {
		return 0
	}
	return cores / answeredPerSec * 1e6
}

// answeredPerSec is req/s and the 429s a second: a refusal is an answer
// the server spent CPU on, and a row of mostly 429s divided by its few 2xx
// would show a cost per answer no request had.
func (x *result) answeredPerSec() float64 {
	v := x.ReqPerSec
	if l := x.Load; l != nil && l.Limited > 0 && l.Elapsed > 0 {
		v += float64(l.Limited) / l.Elapsed.Seconds()
	}
	return v
}

func (x *result) cpuPerRequest() float64 { return cpuPerRequest(x.ServerCPU, x.answeredPerSec()) }

// waitQuiet waits, up to -wait-quiet, until the rest of the machine uses
// less than busyCores, so that the measurement does not compete with it.
func (b *bench) waitQuiet(ctx context.Context) {
	if b.cfg.WaitQuiet <= 0 {
		return
	}
	deadline := time.Now().Add(b.cfg.WaitQuiet)
	for said := false; ctx.Err() == nil; said = true {
		s := takeCPU(nil)
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
		use := s.since()
		if use.others+use.iowait < busyCores || time.Now().After(deadline) {
			return
		}
		if !said {
			logf("   waiting for other processes to calm down (%.2f cores busy, %.2f waiting on the disk)", use.others, use.iowait)
		}
	}
}

// answer is one server's answer to one query, reduced to what is compared.
type answer struct {
	size     int64   // uncompressed
	ids      []int64 // ids of the records, in order
	encoding string  // Content-Encoding the client got ("": none)
	wireSize int64   // as the client got it
	body     []byte  // uncompressed; kept only when nginx needs it
	wire     []byte  // as the client got it, when compressed and nginx needs it
	// head and wireHead are the headers sent with body and with wire, kept
	// with them: nethttp sends them too, so that it sends what Decoy sends.
	head, wireHead http.Header
}

func (a *answer) describeWire() string {
	if a.encoding == "" {
		return fmt.Sprintf("%d bytes uncompressed", a.wireSize)
	}
	return fmt.Sprintf("%d bytes of %s", a.wireSize, a.encoding)
}

// checkAnswer gets one answer as a client without Accept-Encoding, reads
// the ids out of it and, for a client that accepts gzip, gets it again as
// that client and checks that a gzipped answer decompresses to the first.
// That check runs here, once, so that the load generator never decompresses.
func checkAnswer(ctx context.Context, url string, timeout time.Duration, c client, token string, keep bool) (*answer, error) {
	body, head, err := fetch(ctx, url, timeout, client{Token: c.Token}.headers(token))
	if err != nil {
		return nil, err
	}
	var recs []struct {
		ID int64 `json:"id"`
	}
	if err := json.Unmarshal(body, &recs); err != nil {
		return nil, fmt.Errorf("answer is not a JSON array of records: %w", err)
	}
	a := &answer{size: int64(len(body)), wireSize: int64(len(body)), ids: make([]int64, len(recs))}
	for i, r := range recs {
		a.ids[i] = r.ID
	}
	if c.Gzip {
		wire, h, err := fetch(ctx, url, timeout, c.headers(token))
		if err != nil {
			return nil, err
		}
		enc := h.Get("Content-Encoding")
		if err := verifyEncoded(enc, wire, body); err != nil {
			return nil, err
		}
		a.encoding, a.wireSize = enc, int64(len(wire))
		if keep && enc != "" {
			a.wire, a.wireHead = wire, h
		}
	}
	if keep {
		a.body, a.head = body, head
	}
	return a, nil
}

// verifyEncoded checks that an answer sent with Content-Encoding enc holds
// the plain answer.
func verifyEncoded(enc string, wire, plain []byte) error {
	switch enc {
	case "":
		if !bytes.Equal(wire, plain) {
			return fmt.Errorf("the uncompressed answer to a client accepting gzip (%d bytes) differs from the plain one (%d bytes)", len(wire), len(plain))
		}
		return nil
	case "gzip":
		return verifyGzip(wire, plain)
	}
	return fmt.Errorf("answered with Content-Encoding %q, which the benchmark does not check", enc)
}

// verifyGzip checks that a gzip body decompresses to the plain answer.
func verifyGzip(gz, plain []byte) error {
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		return fmt.Errorf("gzip answer: %w", err)
	}
	got, err := io.ReadAll(zr)
	if err != nil {
		return fmt.Errorf("gzip answer: %w", err)
	}
	if !bytes.Equal(got, plain) {
		return fmt.Errorf("the gzip answer decompresses to %d bytes that differ from the %d-byte plain answer", len(got), len(plain))
	}
	return nil
}

// fetch gets one answer with the given request headers: its body as it was
// sent (never decompressed), and its headers.
func fetch(ctx context.Context, url string, timeout time.Duration, headers [][2]string) ([]byte, http.Header, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, nil, err
	}
	for _, kv := range headers {
		req.Header.Set(kv[0], kv[1])
	}
	client := &http.Client{Transport: &http.Transport{DisableCompression: true}}
	defer client.CloseIdleConnections()
	resp, err := client.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, nil, err
	}
	if resp.StatusCode/100 != 2 {
		return nil, nil, fmt.Errorf("HTTP %s: %.200s", resp.Status, body)
	}
	return body, resp.Header, nil
}

// floorPath is where, under the floor folder, nginx serves the answer to q:
// the plain query's file for the plain and gzip clients (nginx's gzip_static
// picks the .gz beside it for the one that accepts gzip), another for the
// private mock's answers.
func floorPath(q query, d *dataFiles) string {
	name := q.base() + ".json"
	if q.client().Token {
		name = "private/" + name
	}
	return "floor/" + d.size.Label + "/" + name
}

// floorFile is one answer of Decoy's as the floors serve it: the plain
// bytes, the gzipped ones (nil when Decoy sent none), and the headers Decoy
// sent with each.
type floorFile struct {
	plain, gz         []byte
	plainHead, gzHead http.Header
}

// saveFloor writes an answer where nginx serves it, under www: the plain
// bytes, and the gzipped ones beside them as NAME.gz when the server sent
// them gzipped (gzip_static serves that file to a client accepting gzip).
// Decoy's headers go beside each as NAME.head and NAME.gz.head, which
// nethttp sends with it (nginx sends its own).
func saveFloor(www, rel string, f floorFile) error {
	path := filepath.Join(www, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(path, f.plain, 0o644); err != nil {
		return err
	}
	if err := writeHead(path+".head", f.plainHead); err != nil {
		return err
	}
	if f.gz == nil {
		return nil
	}
	if err := os.WriteFile(path+".gz", f.gz, 0o644); err != nil {
		return err
	}
	return writeHead(path+".gz.head", f.gzHead)
}

// writeHead writes the headers of an answer that nethttp sends with it, in
// the wire's form: what net/http writes itself (Date, Content-Length) and
// what belongs to one connection are left out.
func writeHead(path string, h http.Header) error {
	if h == nil {
		return nil
	}
	h = h.Clone()
	for _, k := range []string{"Date", "Content-Length", "Connection", "Keep-Alive", "Transfer-Encoding"} {
		h.Del(k)
	}
	var b bytes.Buffer
	if err := h.Write(&b); err != nil {
		return err
	}
	return os.WriteFile(path, b.Bytes(), 0o644)
}

func sameFile(path string, b []byte) bool {
	f, err := os.ReadFile(path)
	return err == nil && bytes.Equal(f, b)
}

func join(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
