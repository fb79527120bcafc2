//go:build linux

package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"
)

// report is everything a run measured, as results.json holds it.
type report struct {
	Started  time.Time         `json:"started"`
	Finished time.Time         `json:"finished"`
	Machine  machine           `json:"machine"`
	Config   *config           `json:"config"`
	Versions map[string]string `json:"versions"`
	Notes    []string          `json:"notes"`
	Startups []startup         `json:"startups"`
	Results  []result          `json:"results"`
	Rotation []result          `json:"rotation,omitempty"`
	// Generated: the generated-data phase (see generated.go).
	Generated []result `json:"generated,omitempty"`
	// Routes: the routes phase (see routes.go).
	Routes []result `json:"routes,omitempty"`
	// Writes: the writes phase (see writes.go).
	Writes *writesResult `json:"writes,omitempty"`
	Memory *memoryResult `json:"memory,omitempty"`
}

type machine struct {
	CPU    string `json:"cpu"`
	Cores  int    `json:"cores"`
	Memory int64  `json:"memory_bytes"`
	Kernel string `json:"kernel"`
	Go     string `json:"go"`
}

// displayNames are the servers as the tables name them.
var displayNames = map[string]string{
	"decoy":       "Decoy",
	"json-server": "json-server",
	"mockoon":     "Mockoon",
	"nginx":       "nginx, Decoy's bytes",
	"nethttp":     "Go net/http, Decoy's bytes",
	// A start-up row: the Decoy that holds the private copy.
	"decoy-private": "Decoy, private mock",
}

// busyCores is how much CPU other processes may use during a measurement
// before the report flags it.
const busyCores = 0.25

// ratioRows are the comparisons every table ends with.
var ratioRows = []struct{ label, other string }{
	{"Decoy/json-server", "json-server"},
	{"Decoy/Mockoon", "mockoon"},
	{"Decoy/nginx-same-bytes", "nginx"},
	{"Decoy/net-http-same-bytes", "nethttp"},
}

func (b *bench) report() *report {
	return &report{
		Started:   b.started,
		Finished:  time.Now(),
		Machine:   currentMachine(),
		Config:    b.cfg,
		Versions:  b.tools.versions,
		Notes:     notes(b.cfg),
		Startups:  b.starts,
		Results:   b.results,
		Rotation:  b.rotation,
		Generated: b.generated,
		Routes:    b.routes,
		Writes:    b.writes,
		Memory:    b.memory,
	}
}

// notes say how the numbers were taken and where the servers' queries
// differ; they head results.md.
func notes(cfg *config) []string {
	return slices.DeleteFunc([]string{
		fmt.Sprintf("Load: the same generator for every server: %d keep-alive HTTP/1.1 connections, one request at a time on each, %v of warm-up (not counted) then %v measured, per server and query. %s Every answer is read to its end, as it was sent: a gzipped one is counted in compressed bytes and never decompressed under load. The generator runs on the same machine as the server and competes with it for the CPU.", cfg.Conns, cfg.Warmup, cfg.Duration, turnsNote(cfg)),
		"Clients: a plain query sends no Accept-Encoding, so every server answers uncompressed. Its `gzip` variant sends `Accept-Encoding: gzip, deflate, br`, as browsers, Node's fetch and axios do; its `private` variant reads a copy of the document stored as a private mock (created with `private=true` through the admin API, on a Decoy of its own), its token in the `decoyauthtoken` header, with the same Accept-Encoding. Before loading, each gzip answer is fetched once and checked to decompress to the plain answer. json-server and Mockoon are asked the plain queries only.",
		fmt.Sprintf("req/s is the 2xx answer bytes read inside the measured window, divided by the answer's size, per second: an answer cut by the window's start or end counts for the part read inside it (counting only whole answers would jump by up to the number of connections when large answers end together). p50 and p99 are the latencies of the answers that ended inside the window. When fewer answers than connections have ended by the window's end (a server slower than the window), the window is stretched under the same load until that many have, or for at most the request timeout (%v), and the rate is taken over the longer window. 429 answers (a rate limit or quota) are counted apart, not in req/s; other non-2xx answers and broken connections are errors; requests over the timeout are timeouts.", cfg.Timeout),
		"p50 and p99: from a log-linear histogram of every counted request (error under 0.4%).",
		"Peak RSS: VmHWM of the server's process tree (nginx: master and workers; Node servers: the node process), reset through /proc/PID/clear_refs before each query, so it is that query's peak; at least the largest VmRSS sampled every 50 ms. Memory right after start-up is in the start-up table.",
		"On this machine the load generator needs about a core for small answers at tens of thousands of requests a second: there nginx's numbers are the most the machine can measure, not nginx's limit, so Decoy/nginx-same-bytes is if anything too kind to Decoy.",
		fmt.Sprintf("CPU: the cores the server's processes used during the measured window (read as it opens and closes, the warm-up left out), of %d shared with the load generator (whose share is in results.json). CPU µs/req is that CPU time divided by the requests answered in the window (cores ÷ answers a second, the 2xx of req/s and any 429s), with its ratio to nginx's in the same table. ⚠ marks a measurement during which other processes on the machine used %.2f cores or more (user, system and steal time not used by the server or the load generator), or the CPUs sat waiting on the disk for as much (iowait, the server's or anyone's): it competed with them, and its numbers are low.", runtime.NumCPU(), busyCores),
		"Ratios are Decoy's value divided by the other server's, from the same run: for req/s above 1× means Decoy serves more; for p50, p99, peak RSS and CPU µs/req below 1× means Decoy is quicker, smaller or cheaper.",
		"nginx serves, for each query and client, the exact bytes Decoy answered, as a static file (sendfile on with no chunk limit, access_log off, worker_processes auto): the floor, what it costs just to send the answer. Decoy's gzipped answer is written beside the plain one as NAME.gz and served by `gzip_static on` to the clients that accept gzip (an answer Decoy sends uncompressed, under 1 KiB, has no .gz). For the whole document the plain bytes are the stored document. nginx checks no token: for the private variant it is the floor all the same.",
		"Go net/http, Decoy's bytes (`bench/nethttp`, built with the same Go as Decoy): the same files served by Go's net/http and nothing else, with the default http.Server. Each file is read once, at its first request, and sent from memory (it keeps at most 16 MiB of files, or one larger file: its peak RSS is the query's), with `Content-Type`, `Content-Length`, the other headers Decoy sent with the same answer (from NAME.head: CORS, ETag, Vary, Cache-Control, X-Total-Count and the rest, so that it sends the same bytes with the same headers) and, to a client that accepts gzip, NAME.gz with `Content-Encoding: gzip` and NAME.gz.head's headers, as nginx's gzip_static does. It is what a server built on net/http, as Decoy is, pays before any work of its own: Decoy/net-http-same-bytes below 1× is the cost of Decoy's work, above 1× what Decoy saves by sending an answer held in memory in one writev with its head (plain net/http sends a body over its 4 KiB buffer in two writes).",
		"Decoy over each dataset: `decoy serve --rate-limit 0 --monthly-quota 0 --log-level warn` with its SQLite store in a temporary folder, emptied at each start; the dataset uploaded with the admin API; queries `filters=address.city%3DParis`, `filters=status%5B%24eqi%5D%3Dactive&order_by=age&order_direction=desc&limit=10`, `order_by=createdAt&limit=100`.",
		"json-server 0.17.4 (`--quiet`, serving db.json `{\"users\":[...]}`): `/users?address.city=Paris`, `/users?_sort=createdAt&_limit=100`. It has no case-insensitive equality: the closest is `status_like=%5Eactive%24`, a case-insensitive regular expression anchored at both ends, which selects the same records as Decoy's `status[$eqi]=active` (the data holds both `active` and `Active`). It pretty-prints its JSON (2-space indent), so its answers are larger.",
		"Mockoon CLI 9: a CRUD route `/users` over a data bucket holding the array; Mockoon's CRUD GET filters with `path_eq` / `path_like` (a case-insensitive regular expression, used as for json-server), sorts with `sort` and `order` (top-level fields only; strings compared lower-cased) and pages with `limit` and `page` (default 1): `/users?address.city_eq=Paris`, `/users?status_like=%5Eactive%24&sort=age&order=desc&limit=10`, `/users?sort=createdAt&limit=100`. It re-serialises answers with JSON.stringify. Run with `--disable-log-to-file --disable-admin-api --max-transaction-logs 1`: it still logs one line per request to standard output (no flag turns that off) and copies each response body into its transaction log.",
		manyMocksNote(cfg),
		"Answers are checked before loading: `records` is the number of records in one answer; ✓ means the same record ids in the same order as Decoy's answer (for a client accepting gzip, also the same encoding and as many bytes on the wire; in the many-mocks phase, every mock's answer byte for byte), ✗ different.",
	}, func(s string) bool { return s == "" })
}

func manyMocksNote(cfg *config) string {
	if cfg.RotateMocks == 0 {
		return ""
	}
	var ids []string
	for _, c := range rotateClients(cfg) {
		ids = append(ids, c.ID)
	}
	floors := floorNames(func(s string) bool { return slices.Contains(cfg.Servers, s) })
	floorClause := ""
	switch len(floors) {
	case 1:
		floorClause = "; " + floors[0] + " serves each mock's answer as a file, rotated the same way"
	case 2:
		floorClause = "; " + strings.Join(floors, " and ") + " serve each mock's answer as a file, rotated the same way"
	}
	clientsRun := strings.Join(ids, " and ") + " client"
	if len(ids) > 1 {
		clientsRun += "s"
	}
	return fmt.Sprintf("Many mocks: %d mocks of %d records (cut from one users document), read round-robin by the %s, on a Decoy with `--rate-limit %d` and the default monthly quota (%d), a fresh one for each measurement%s.", cfg.RotateMocks, cfg.RotateRecords, clientsRun, cfg.RotateRateLimit, defaultMonthlyQuota, floorClause)
}

func currentMachine() machine {
	m := machine{Cores: runtime.NumCPU(), Go: runtime.Version()}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = strings.TrimSpace(string(b))
	}
	m.CPU = procField("/proc/cpuinfo", "model name")
	if kb := procField("/proc/meminfo", "MemTotal"); kb != "" {
		var n int64
		fmt.Sscanf(kb, "%d", &n)
		m.Memory = n * 1024
	}
	return m
}

func procField(path, name string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == name {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// rerender reads a results.json and writes the report again, with this
// version's notes, tables and chart.
func rerender(cfg *config, path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var r report
	if err := json.Unmarshal(b, &r); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if r.Config == nil {
		return fmt.Errorf("%s: not a results.json of this benchmark", path)
	}
	r.Notes = notes(r.Config)
	return writeReport(cfg, &r)
}

// writeReport writes results.md, results.json and the chart to cfg.Out,
// and prints results.md.
func writeReport(cfg *config, r *report) error {
	js, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(cfg.Out, "results.json"), js, 0o644); err != nil {
		return err
	}
	var md strings.Builder
	writeMarkdown(&md, r)
	if err := os.WriteFile(filepath.Join(cfg.Out, "results.md"), []byte(md.String()), 0o644); err != nil {
		return err
	}
	if err := drawChart(r, filepath.Join(cfg.Out, "chart")); err != nil {
		return fmt.Errorf("chart: %w", err)
	}
	fmt.Print(md.String())
	logf("wrote %s/results.md, results.json, chart.svg and chart.png", cfg.Out)
	return nil
}

func writeMarkdown(w io.Writer, r *report) {
	p := func(format string, args ...any) { fmt.Fprintf(w, format, args...) }
	p("# Decoy side by side: Decoy, json-server, Mockoon, nginx, Go net/http\n\n")
	p("Run %s, %s. %s, %d cores, %s memory, Linux %s, %s.\n\n", r.Started.UTC().Format("2006-01-02 15:04 UTC"),
		r.Finished.Sub(r.Started).Round(time.Second), r.Machine.CPU, r.Machine.Cores,
		formatBytes(r.Machine.Memory), r.Machine.Kernel, r.Machine.Go)
	var vs []string
	for _, s := range []struct{ key, name string }{{"decoy", "Decoy"}, {"json-server", "json-server"},
		{"mockoon", "Mockoon"}, {"nginx", "nginx"}, {"nethttp", "Go net/http"}, {"node", "Node"}} {
		if v := r.Versions[s.key]; v != "" {
			vs = append(vs, s.name+" "+v)
		}
	}
	p("Versions: %s.\n\n", strings.Join(vs, "; "))
	p("![Throughput and p99 latency against dataset size](chart.svg)\n\n")

	writeTargets(w, r)
	writeSummary(w, r)
	writeMemory(w, r)

	for _, sz := range r.Config.Sizes {
		p("## %s records\n\n", sz.Label)
		for _, q := range r.queries() {
			var rows []*result
			for _, s := range serverNames {
				rows = append(rows, r.find(sz, s, q.ID))
			}
			writeQueryTable(w, sz.Label+" records: "+q.Title, rows)
		}
		writeStartups(w, r, sz)
	}
	writeRotation(w, r)
	writeGenerated(w, r)
	writeRoutes(w, r)
	writeWrites(w, r)
	writeGrowth(w, r)

	p("## How the numbers were taken\n\n")
	for _, n := range r.Notes {
		p("- %s\n", n)
	}
}

// find returns the result of a server for a size and query, if it ran.
func (r *report) find(sz size, server, q string) *result {
	for i := range r.Results {
		x := &r.Results[i]
		if x.Size.N == sz.N && x.Server == server && x.Query == q {
			return x
		}
	}
	return nil
}

// findRotation returns a server's result in the many-mocks phase, if it ran.
func (r *report) findRotation(server, q string) *result {
	for i := range r.Rotation {
		x := &r.Rotation[i]
		if x.Server == server && x.Query == q {
			return x
		}
	}
	return nil
}

// queries are the run's queries over each dataset, every client's.
func (r *report) queries() []query { return allQueries(r.Config.Clients) }

// rotateQueries are the queries of the many-mocks phase, if it ran.
func (r *report) rotateQueries() []query {
	if len(r.Rotation) == 0 {
		return nil
	}
	var qs []query
	for _, c := range rotateClients(r.Config) {
		qs = append(qs, rotateQuery(r.Config, c))
	}
	return qs
}

func (x *result) measured() bool { return x != nil && x.ReqPerSec > 0 }

func writeSummary(w io.Writer, r *report) {
	others := []string{}
	for _, rr := range ratioRows {
		if hasServer(r, rr.other) {
			others = append(others, rr.other)
		}
	}
	if !hasServer(r, "decoy") || len(others) == 0 {
		return
	}
	withNginx := slices.Contains(others, "nginx")
	fmt.Fprintf(w, "## Summary: Decoy's throughput relative to the others\n\nDecoy's req/s divided by the other server's (above 1×: Decoy serves more)")
	if withNginx {
		fmt.Fprintf(w, "; last, Decoy's CPU time per request divided by nginx's (above 1×: Decoy spends more)")
	}
	fmt.Fprintf(w, ".\n\n| records | query |")
	for _, o := range others {
		fmt.Fprintf(w, " ÷ %s |", displayNames[o])
	}
	if withNginx {
		fmt.Fprintf(w, " CPU µs/req ÷ nginx |")
	}
	fmt.Fprintf(w, "\n|---|---|%s\n", strings.Repeat("--:|", len(others)+btoi(withNginx)))
	line := func(label, title string, find func(server string) *result) {
		d := find("decoy")
		fmt.Fprintf(w, "| %s | %s |", label, title)
		for _, o := range others {
			fmt.Fprintf(w, " %s |", ratioOf(d, find(o), func(x *result) float64 { return x.ReqPerSec }))
		}
		if withNginx {
			fmt.Fprintf(w, " %s |", ratioOf(d, find("nginx"), (*result).cpuPerRequest))
		}
		fmt.Fprintln(w)
	}
	for _, sz := range r.Config.Sizes {
		for _, q := range r.queries() {
			line(sz.Label, q.Title, func(s string) *result { return r.find(sz, s, q.ID) })
		}
	}
	for _, q := range r.rotateQueries() {
		line(sizeLabel(r.Config.RotateRecords)+" each", q.Title, func(s string) *result { return r.findRotation(s, q.ID) })
	}
	fmt.Fprintln(w)
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

func hasServer(r *report, s string) bool {
	for _, x := range r.Results {
		if x.Server == s {
			return true
		}
	}
	return false
}

// writeQueryTable writes one query's table: rows are the servers' results
// in serverNames order (nil: not run), then Decoy's ratios to the others.
func writeQueryTable(w io.Writer, title string, rows []*result) {
	var d, nginx *result
	for _, x := range rows {
		if x != nil && x.Server == "decoy" {
			d = x
		}
		if x != nil && x.Server == "nginx" {
			nginx = x
		}
	}
	fmt.Fprintf(w, "### %s\n\n", title)
	fmt.Fprintf(w, "| server | req/s | p50 | p99 | peak RSS | CPU | CPU µs/req (÷ nginx) | answer | status |\n|---|--:|--:|--:|--:|--:|--:|--:|---|\n")
	var notes []string
	for _, x := range rows {
		if x == nil {
			continue
		}
		status, note := x.Status, x.Note
		if x.OtherCPU >= busyCores || x.IOWait >= busyCores {
			status += " ⚠"
			note = join(note, fmt.Sprintf("meanwhile other processes on the machine used %.2f cores, and %.2f cores sat waiting on the disk", x.OtherCPU, x.IOWait))
		}
		if note != "" {
			notes = append(notes, fmt.Sprintf("%s: %s", displayNames[x.Server], note))
			status += fmt.Sprintf(" (%d)", len(notes))
		}
		if !x.measured() {
			fmt.Fprintf(w, "| %s | – | – | – | – | – | – | %s | %s |\n", displayNames[x.Server], answerCell(x), status)
			continue
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %.2f | %s | %s | %s |\n", displayNames[x.Server], formatRate(x.ReqPerSec),
			formatMs(x.P50), formatMs(x.P99), formatBytes(x.PeakRSS), x.ServerCPU, cpuCell(x, nginx), answerCell(x), status)
	}
	if d != nil {
		for _, rr := range ratioRows {
			var o *result
			for _, x := range rows {
				if x != nil && x.Server == rr.other {
					o = x
				}
			}
			if o == nil {
				continue
			}
			fmt.Fprintf(w, "| *%s* | %s | %s | %s | %s | | %s | | |\n", rr.label,
				ratioOf(d, o, func(x *result) float64 { return x.ReqPerSec }),
				ratioOf(d, o, func(x *result) float64 { return x.P50 }),
				ratioOf(d, o, func(x *result) float64 { return x.P99 }),
				ratioOf(d, o, func(x *result) float64 { return float64(x.PeakRSS) }),
				ratioOf(d, o, (*result).cpuPerRequest))
		}
	}
	fmt.Fprintln(w)
	for i, n := range notes {
		fmt.Fprintf(w, "(%d) %s\n", i+1, strings.ReplaceAll(n, "|", "\\|"))
		if i == len(notes)-1 {
			fmt.Fprintln(w)
		}
	}
}

// cpuCell is a row's CPU time per request, and its ratio to nginx's from
// the same table.
func cpuCell(x, nginx *result) string {
	v := x.cpuPerRequest()
	if v <= 0 {
		return "–"
	}
	s := formatMicros(v)
	if x != nginx && nginx != nil && nginx.cpuPerRequest() > 0 {
		s += " (" + ratioOf(x, nginx, (*result).cpuPerRequest) + ")"
	}
	return s
}

func formatMicros(v float64) string {
	switch {
	case v >= 1000:
		return commas(int64(math.Round(v)))
	case v >= 10:
		return fmt.Sprintf("%.0f", v)
	default:
		return fmt.Sprintf("%.1f", v)
	}
}

// rateLimitReached says whether the many-mocks phase's rate limit refused
// any request, and how it compares with the default.
func rateLimitReached(r *report) string {
	var limited int64
	for _, x := range r.Rotation {
		if x.Load != nil {
			limited += x.Load.Limited
		}
	}
	s := "reached by no mock in this run"
	if limited > 0 {
		s = fmt.Sprintf("reached: %s requests were refused with 429", commas(limited))
	}
	if r.Config.RotateRateLimit == defaultRateLimit {
		return "the default; " + s
	}
	return fmt.Sprintf("the default is %d; %s", defaultRateLimit, s)
}

// writeRotation writes the many-mocks phase.
func writeRotation(w io.Writer, r *report) {
	qs := r.rotateQueries()
	if len(qs) == 0 {
		return
	}
	c := r.Config
	fmt.Fprintf(w, "## %s mocks of %d records each, read round-robin\n\n", commas(int64(c.RotateMocks)), c.RotateRecords)
	fmt.Fprintf(w, "Decoy with its rate limiter and monthly quota on: `--rate-limit %d` per mock and minute (%s) and the default monthly quota of %s a mock (each mock's answer checked once, before the load, to carry both in its X-RateLimit-Limit and X-Quota-Limit headers), on an empty data folder for each measurement. Each request takes the next of the %s mocks%s from a counter the connections share. 429 answers are counted apart and not in req/s. The answer is the mean size over the mocks.\n\n",
		c.RotateRateLimit, rateLimitReached(r), commas(defaultMonthlyQuota), commas(int64(c.RotateMocks)), rotationFloors(r, qs))
	for _, q := range qs {
		var rows []*result
		for _, s := range serverNames {
			rows = append(rows, r.findRotation(s, q.ID))
		}
		writeQueryTable(w, q.Title, rows)
	}
}

// floorNames names the servers of the floor files that ran, in report
// order: nginx, Go net/http.
func floorNames(ran func(server string) bool) []string {
	var names []string
	for _, s := range serverNames {
		if servesFloor(s) && ran(s) {
			names = append(names, strings.TrimSuffix(displayNames[s], ", Decoy's bytes"))
		}
	}
	return names
}

// rotationFloors names, in brackets, the floors that ran in the many-mocks
// phase, as the files they served.
func rotationFloors(r *report, qs []query) string {
	names := floorNames(func(s string) bool {
		return slices.ContainsFunc(qs, func(q query) bool { return r.findRotation(s, q.ID) != nil })
	})
	if len(names) == 0 {
		return ""
	}
	return " (for " + strings.Join(names, " and ") + ", files holding Decoy's answers)"
}

func answerCell(x *result) string {
	if x.BodyBytes == 0 && x.Records == 0 {
		return "–"
	}
	mark := ""
	if x.SameAsRef != nil {
		mark = " ✓"
		if !*x.SameAsRef {
			mark = " ✗"
		}
	}
	wire := ""
	if x.WireBytes > 0 {
		wire = ", " + formatBytes(x.WireBytes) + " gzipped"
	}
	return fmt.Sprintf("%d records, %s%s%s", x.Records, formatBytes(x.BodyBytes), wire, mark)
}

func ratioOf(a, b *result, f func(*result) float64) string {
	if !a.measured() || !b.measured() || f(b) == 0 {
		return "–"
	}
	v := f(a) / f(b)
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f×", v)
	case v >= 10:
		return fmt.Sprintf("%.1f×", v)
	case v >= 0.01:
		return fmt.Sprintf("%.2f×", v)
	default: // two significant digits: 0.0012×
		return strconv.FormatFloat(v, 'f', 1-int(math.Floor(math.Log10(v))), 64) + "×"
	}
}

func writeStartups(w io.Writer, r *report, sz size) {
	var rows []startup
	for _, s := range r.Startups {
		if s.Size.N == sz.N {
			rows = append(rows, s)
		}
	}
	if len(rows) == 0 {
		return
	}
	fmt.Fprintf(w, "### %s records: start-up\n\nFrom start to answering, with the dataset loaded (Decoy: including the upload through the admin API).\n\n| server | ready after | RSS then | peak RSS so far | status |\n|---|--:|--:|--:|---|\n", sz.Label)
	for _, s := range rows {
		status := s.Status
		if s.Note != "" {
			status += ": " + strings.ReplaceAll(s.Note, "|", "\\|")
		}
		fmt.Fprintf(w, "| %s | %.1f s | %s | %s | %s |\n", displayNames[s.Server], s.Seconds,
			formatBytes(s.RSS), formatBytes(s.PeakRSS), status)
	}
	fmt.Fprintln(w)
}

func formatFactor(v float64) string {
	if v >= 10 {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.1f", v)
}

func formatRate(v float64) string {
	switch {
	case v >= 1000:
		return commas(int64(math.Round(v)))
	case v >= 10:
		return fmt.Sprintf("%.0f", v)
	default:
		return fmt.Sprintf("%.2f", v)
	}
}

func commas(n int64) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

func formatMs(v float64) string {
	switch {
	case v >= 1000:
		return fmt.Sprintf("%.2f s", v/1000)
	case v >= 100:
		return fmt.Sprintf("%.0f ms", v)
	case v >= 10:
		return fmt.Sprintf("%.1f ms", v)
	default:
		return fmt.Sprintf("%.2f ms", v)
	}
}

func formatBytes(n int64) string {
	const unit = 1024
	switch {
	case n >= unit*unit*unit:
		return fmt.Sprintf("%.2f GiB", float64(n)/(unit*unit*unit))
	case n >= unit*unit:
		return fmt.Sprintf("%.1f MiB", float64(n)/(unit*unit))
	case n >= unit:
		return fmt.Sprintf("%.1f KiB", float64(n)/unit)
	default:
		return fmt.Sprintf("%d B", n)
	}
}

// turnsNote says how Decoy and the floors took turns (runTurns).
func turnsNote(cfg *config) string {
	switch cfg.Rounds {
	case 0: // a run from before the servers took turns
		return "One server at a time."
	case 1:
		return "Decoy, nginx and net/http, running side by side, take turns on each query, one window each."
	}
	return fmt.Sprintf("Decoy, nginx and net/http, running side by side, take turns on each query: in each of %d rounds, each is measured for %v after a warm-up of %v, each round starting one server further on, and its row counts its %d windows together (%v), so that what else runs on the machine weighs on each alike and Decoy's ratios to them come from the same seconds. json-server and Mockoon run one at a time, one window each.",
		cfg.Rounds, cfg.Duration/time.Duration(cfg.Rounds), cfg.Warmup, cfg.Rounds, cfg.Duration)
}
