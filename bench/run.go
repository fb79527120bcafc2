//go:build linux

package main

import (
	"bytes"
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
}

// result is one server answering one query over one dataset.
type result struct {
	Size      size        `json:"size"`
	Server    string      `json:"server"`
	Query     string      `json:"query"`
	Target    string      `json:"target"`
	Status    string      `json:"status"` // ok, errors, timeout, failed
	Note      string      `json:"note,omitempty"`
	Records   int         `json:"records"`      // records in the answer
	BodyBytes int64       `json:"body_bytes"`   // size of the answer
	SameAsRef *bool       `json:"same_records"` // same ids in the same order as Decoy's answer
	ReqPerSec float64     `json:"req_per_sec"`
	P50       float64     `json:"p50_ms"`
	P99       float64     `json:"p99_ms"`
	PeakRSS   int64       `json:"peak_rss_bytes"`   // VmHWM over the query, summed over the process tree
	ServerCPU float64     `json:"server_cpu_cores"` // CPU the server used during the load, in cores
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
	b := &bench{cfg: cfg, work: work, started: time.Now()}
	b.tools = setupTools(ctx, cfg, work)
	for _, s := range cfg.Servers {
		if err := b.tools.missing[s]; err != nil {
			logf("%s cannot run: %v", s, err)
		}
	}
	return b, ctx.Err()
}

// runSize runs every selected server, one at a time, over one dataset.
// Decoy runs first: its answers are what nginx serves and what the others'
// answers are checked against.
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
	for _, server := range serverNames {
		measure := slices.Contains(b.cfg.Servers, server)
		if server == "decoy" && !measure && slices.Contains(b.cfg.Servers, "nginx") {
			logf("   decoy: only to get the answers nginx serves")
		} else if !measure {
			continue
		}
		if (server == "json-server" || server == "mockoon") && sz.N > b.cfg.OthersMax.N {
			logf("   %s: not run above %s records (-others-max)", server, b.cfg.OthersMax.Label)
			continue
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		b.runServer(ctx, server, d, ref, measure)
	}
	return nil
}

// runServer starts one server, checks its answer to each query against
// Decoy's, and measures it under load.
func (b *bench) runServer(ctx context.Context, server string, d *dataFiles, ref map[string]*answer, measure bool) {
	failAll := func(status, note string) {
		for _, q := range queries {
			if measure {
				b.results = append(b.results, result{Size: d.size, Server: server, Query: q.ID,
					Target: target(server, q, d), Status: status, Note: note})
			}
		}
		logf("   %s: %s: %s", server, status, note)
	}
	if err := b.tools.missing[server]; err != nil {
		failAll("failed", err.Error())
		return
	}
	port, err := freePort()
	if err != nil {
		failAll("failed", err.Error())
		return
	}
	logf("   %s: starting", server)
	t0 := time.Now()
	p, err := b.start(ctx, server, d, port)
	st := startup{Size: d.size, Server: server, Status: "ok", Seconds: time.Since(t0).Seconds()}
	if err != nil {
		st.Status, st.Note = "failed", err.Error()
		if errors.Is(err, context.DeadlineExceeded) {
			st.Status = "timeout"
		}
		if measure {
			b.starts = append(b.starts, st)
		}
		failAll(st.Status, "did not start: "+err.Error())
		return
	}
	defer func() { p.stop() }()
	st.RSS, st.PeakRSS = p.memory("VmRSS"), p.memory("VmHWM")
	if measure {
		b.starts = append(b.starts, st)
	}
	logf("   %s: ready after %.1f s, RSS %s", server, st.Seconds, formatBytes(st.RSS))

	addr := fmt.Sprintf("127.0.0.1:%d", port)
	for i, q := range queries {
		if ctx.Err() != nil {
			return
		}
		r := result{Size: d.size, Server: server, Query: q.ID, Target: target(server, q, d), Status: "ok"}
		if i > 0 {
			// A server still working through the last query's abandoned
			// requests (or dead) would spoil this one: give it one request
			// timeout to answer its probe, else start it afresh.
			sctx, cancel := context.WithTimeout(ctx, b.cfg.Timeout)
			err := waitReady(sctx, p, "http://"+addr+probePath(server, d))
			cancel()
			if err != nil && ctx.Err() == nil {
				logf("   %s: restarting: %v", server, err)
				p.stop()
				if p, err = b.start(ctx, server, d, port); err != nil {
					failAll("failed", "could not restart: "+err.Error())
					return
				}
				r.Note = "server restarted first: it was still busy with the previous query"
			}
		}
		b.runQuery(ctx, p, addr, q, d, ref, measure, &r)
		if measure {
			b.results = append(b.results, r)
			logf("   %-11s %-10s %-7s %9.1f req/s  p50 %8.2f ms  p99 %8.2f ms  peak RSS %9s  CPU %.2f (load %.2f, others %.2f, iowait %.2f)  %s",
				server, q.ID, r.Status, r.ReqPerSec, r.P50, r.P99, formatBytes(r.PeakRSS), r.ServerCPU, r.LoadCPU, r.OtherCPU, r.IOWait, r.Note)
		}
	}
}

func (b *bench) runQuery(ctx context.Context, p *proc, addr string, q query, d *dataFiles, ref map[string]*answer, measure bool, r *result) {
	if done, err := p.exited(); done {
		r.Status, r.Note = "failed", join(r.Note, fmt.Sprintf("server %v earlier: %s", err, p.logTail()))
		return
	}
	if r.Server == "nginx" && ref[q.ID] == nil {
		r.Status, r.Note = "failed", join(r.Note, "no answer from Decoy to serve")
		return
	}
	// One request first: is the answer right, and how big is it?
	a, err := fetch(ctx, "http://"+addr+r.Target, b.cfg.Timeout, r.Server == "decoy" && slices.Contains(b.cfg.Servers, "nginx"))
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
	if r.Server == "decoy" {
		ref[q.ID] = a
		if a.body != nil {
			if err := saveFloor(b.work, d, q, a.body); err != nil {
				r.Status, r.Note = "failed", join(r.Note, err.Error())
				return
			}
			if q.ID == "whole" && !sameFile(d.users, a.body) {
				r.Note = join(r.Note, "whole answer differs from the stored document")
			}
			a.body = nil
		}
	} else if want := ref[q.ID]; want != nil {
		same := slices.Equal(a.ids, want.ids)
		r.SameAsRef = &same
		if !same {
			r.Note = join(r.Note, fmt.Sprintf("different records from Decoy's (%d vs %d)", len(a.ids), len(want.ids)))
		}
	}
	if !measure {
		return
	}

	b.waitQuiet(ctx)
	peakReset := p.resetPeak()
	sampler := sampleRSS(p)
	cpu0 := takeCPU(p.pids())
	lr := load{addr: addr, targets: []string{r.Target}, conns: b.cfg.Conns, warmup: b.cfg.Warmup,
		duration: b.cfg.Duration, timeout: b.cfg.Timeout}.run(ctx)
	use := cpu0.since()
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
	case lr.OK == 0:
		r.Status = "failed"
		if lr.Errors == 0 {
			r.Note = join(r.Note, fmt.Sprintf("no answer ended within %v", lr.Elapsed.Round(time.Millisecond)))
		}
	case lr.Errors+lr.Timeouts > 0:
		r.Status = "errors"
	}
	if lr.Errors+lr.Timeouts > 0 {
		r.Note = join(r.Note, fmt.Sprintf("%d errors, %d timeouts of %d (first: %s)",
			lr.Errors, lr.Timeouts, lr.OK+lr.Errors+lr.Timeouts, lr.FirstErr))
	}
	if done, err := p.exited(); done {
		r.Status = "failed"
		r.Note = join(r.Note, fmt.Sprintf("server %v: %s", err, p.logTail()))
	}
}

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
	size int64
	ids  []int64 // ids of the records, in order
	body []byte  // kept only when nginx needs it
}

// fetch gets one answer, uncompressed, and reads the ids out of it.
func fetch(ctx context.Context, url string, timeout time.Duration, keep bool) (*answer, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	client := &http.Client{Transport: &http.Transport{DisableCompression: true}}
	defer client.CloseIdleConnections()
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode/100 != 2 {
		return nil, fmt.Errorf("HTTP %s: %.200s", resp.Status, body)
	}
	var recs []struct {
		ID int64 `json:"id"`
	}
	if err := json.Unmarshal(body, &recs); err != nil {
		return nil, fmt.Errorf("answer is not a JSON array of records: %w", err)
	}
	a := &answer{size: int64(len(body)), ids: make([]int64, len(recs))}
	for i, r := range recs {
		a.ids[i] = r.ID
	}
	if keep {
		a.body = body
	}
	return a, nil
}

// saveFloor writes Decoy's answer where nginx serves it.
func saveFloor(work string, d *dataFiles, q query, body []byte) error {
	dir := filepath.Join(work, "www", "floor", d.size.Label)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, q.ID+".json"), body, 0o644)
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
