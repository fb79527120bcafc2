//go:build linux

package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// memoryResult is the memory phase: one Decoy process that loads several
// datasets and serves every query on each, to each of memoryClients, and
// its peak RSS over all of it (VmHWM never reset), against the datasets'
// total size.
type memoryResult struct {
	Sizes       []size   `json:"sizes"`
	Clients     []string `json:"clients,omitempty"`
	DocBytes    int64    `json:"document_bytes"`
	PeakRSS     int64    `json:"peak_rss_bytes"`
	AfterLoad   int64    `json:"rss_after_loading_bytes"`
	AtEnd       int64    `json:"rss_at_end_bytes"`
	LoadSeconds float64  `json:"load_seconds"`
	// AtEndParts is where the RSS at the end lies (smaps): the binary's
	// own pages, the documents' mapped files, other files (shared
	// libraries), and anonymous memory (the Go heap, stacks, the runtime's).
	AtEndParts *rssParts `json:"rss_at_end_parts,omitempty"`
	Status     string    `json:"status"`
	Note       string    `json:"note,omitempty"`
}

// memoryBudget is the target: peak RSS at most this many times the size of
// the documents held.
const memoryBudget = 3

// memoryClients are the clients the memory phase asks every query as,
// whatever -clients says: browsers and Node ask with gzip, scripts without,
// and a server that serves both holds both answers.
var memoryClients = []string{"plain", "gzip"}

// ratio is the peak RSS as a multiple of the documents' size.
func (m *memoryResult) ratio() float64 { return float64(m.PeakRSS) / float64(m.DocBytes) }

// runMemory runs the memory phase over sizes: a fresh Decoy, each dataset
// uploaded through the admin API, then every query on every dataset under
// the usual load for perQuery each, as each of memoryClients.
func (b *bench) runMemory(ctx context.Context, sizes []size, perQuery time.Duration) {
	m := &memoryResult{Sizes: sizes, Clients: memoryClients, Status: "ok"}
	b.memory = m
	fail := func(err error) {
		m.Status, m.Note = "failed", err.Error()
		logf("   memory: failed: %v", err)
	}
	if err := b.tools.missing["decoy"]; err != nil {
		fail(err)
		return
	}
	logf("== memory: one Decoy holding %s", sizeList(sizes))
	var data []*dataFiles
	for _, sz := range sizes {
		d, err := writeDataFiles(filepath.Join(b.work, "data", "memory-"+sz.Label), sz, []string{"decoy"})
		if err != nil {
			fail(err)
			return
		}
		defer os.RemoveAll(d.dir)
		data = append(data, d)
		m.DocBytes += d.bytes
	}
	port, err := freePort()
	if err != nil {
		fail(err)
		return
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	p, err := startProc("decoy", filepath.Join(b.work, "logs", "decoy-memory.log"), b.work, b.tools.decoy,
		"serve", "--addr", addr, "--data-dir", filepath.Join(b.work, "decoy-data-memory"),
		"--admin-token", adminToken, "--rate-limit", "0", "--monthly-quota", "0",
		"--max-data-bytes", "1GiB", "--log-level", "warn")
	if err != nil {
		fail(err)
		return
	}
	defer p.stop()
	sctx, cancel := context.WithTimeout(ctx, b.cfg.StartTimeout)
	defer cancel()
	if err := waitReady(sctx, p, "http://"+addr+"/readyz"); err != nil {
		fail(err)
		return
	}
	sampler := sampleRSS(p)
	t0 := time.Now()
	for _, d := range data {
		if _, err := uploadMock(sctx, addr, d, false); err != nil {
			sampler.stop()
			fail(err)
			return
		}
	}
	m.LoadSeconds = time.Since(t0).Seconds()
	m.AfterLoad = p.memory("VmRSS")
	for _, d := range data {
		for _, q := range allQueries(memoryClients) {
			if ctx.Err() != nil {
				sampler.stop()
				return
			}
			lr := load{addr: addr, targets: []string{target("decoy", q, d)}, header: headerLines(q.client().headers("")),
				conns: b.cfg.Conns, warmup: 0, duration: perQuery, timeout: b.cfg.Timeout}.run(ctx)
			if lr.OK == 0 || lr.Errors+lr.Timeouts > 0 {
				m.Status = "errors"
				m.Note = join(m.Note, fmt.Sprintf("%s %s: %d answered, %d errors, %d timeouts", d.size.Label, q.ID, lr.OK, lr.Errors, lr.Timeouts))
			}
		}
	}
	m.PeakRSS = max(p.memory("VmHWM"), sampler.stop())
	m.AtEnd = p.memory("VmRSS")
	m.AtEndParts = rssPartsOf(p.cmd.Process.Pid, filepath.Join(b.work, "decoy-data-memory"))
	if done, err := p.exited(); done {
		fail(fmt.Errorf("decoy %v: %s", err, p.logTail()))
		return
	}
	logf("   memory: peak RSS %s for %s of documents (%.2f×; target at most %d×), %s after loading, %s at the end",
		formatBytes(m.PeakRSS), formatBytes(m.DocBytes), m.ratio(), memoryBudget, formatBytes(m.AfterLoad), formatBytes(m.AtEnd))
}

func sizeList(sizes []size) string {
	s := ""
	for i, sz := range sizes {
		if i > 0 {
			s += " and "
		}
		s += sz.Label
	}
	return s + " records"
}

// rssParts is where a process's resident memory lies.
type rssParts struct {
	Binary     int64 `json:"binary_bytes"`
	Documents  int64 `json:"documents_bytes"`
	OtherFiles int64 `json:"other_files_bytes"`
	Anonymous  int64 `json:"anonymous_bytes"`
}

// rssPartsOf reads /proc/PID/smaps: the Rss of the process's executable,
// of the files under dataDir, of other files, and of the rest. nil when
// smaps cannot be read.
func rssPartsOf(pid int, dataDir string) *rssParts {
	exe, _ := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
	f, err := os.Open(fmt.Sprintf("/proc/%d/smaps", pid))
	if err != nil {
		return nil
	}
	defer f.Close()
	parts := &rssParts{}
	var into *int64
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if rest, ok := strings.CutPrefix(line, "Rss:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if into != nil {
				*into += kb << 10
			}
			continue
		}
		fields := strings.Fields(line)
		if len(fields) < 5 || !strings.Contains(fields[0], "-") {
			continue // a field of the mapping above
		}
		name := ""
		if len(fields) >= 6 {
			name = strings.Join(fields[5:], " ")
		}
		switch {
		case name != "" && name == exe:
			into = &parts.Binary
		case strings.HasPrefix(name, dataDir+"/"):
			into = &parts.Documents
		case strings.HasPrefix(name, "/"):
			into = &parts.OtherFiles
		default:
			into = &parts.Anonymous
		}
	}
	if sc.Err() != nil {
		return nil
	}
	return parts
}
