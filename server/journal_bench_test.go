package server_test

import (
	"bufio"
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/decoy-mock/decoy"
	"github.com/decoy-mock/decoy/internal/testservice"
	"github.com/decoy-mock/decoy/journal"
	"github.com/decoy-mock/decoy/redis"
	"github.com/decoy-mock/decoy/server"
)

// journalBenchVariant, set in the environment, makes BenchmarkJournal the
// server of one variant (serveJournalBench), in a process of its own.
const journalBenchVariant = "DECOY_BENCH_JOURNAL"

// journalBenchConns is how many connections the client reads on at once,
// so that the server is seldom idle: a server woken for each read spends
// more on waking than on the read, and a variable share.
const journalBenchConns = 4

// benchSetting is an integer setting of the environment, def when unset.
func benchSetting(b *testing.B, name string, def int) int {
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		b.Fatalf("%s=%q: not a count", name, s)
	}
	return n
}

// BenchmarkJournal reads a small query of the 1,000-user document through a
// route over loopback, as BenchmarkRoutes' route-of-1 does, with the
// request journal off, in memory, and in Redis (DECOY_TEST_REDIS_URL; a key
// prefix of its own). Recording should cost a read at most 5% of the
// server's CPU time (§13.2). Two variants tell what the figures can
// resolve: off2, a second server with the journal off (off2/off is the
// noise of this machine, of two processes doing the same work), and
// discard, the journal on over a store that keeps nothing (the requests'
// recording and the writer, without a store's work).
//
// Wall time on shared cores is noise, and one process that serves the
// variants one after the other measures the later ones on a heap and
// caches the earlier left: each variant is served by a process of its own
// (this test binary run again, journalBenchVariant naming the variant),
// all three started at once, and the benchmark, the client, reads from
// each in turn, a slice of reads at a time, in an order that turns too,
// so that the load of other work on the machine falls on every variant
// alike. The servers run on one P (GOMAXPROCS=1): on more, the runtime
// spins between reads looking for work, a share of the CPU time that
// varies with the machine's load and is no read's work. What is reported is the server process's CPU time a read costs
// (getrusage; the journal's writer and Redis client included, once it
// has written the slice's entries), each variant's over all its slices
// (<variant>-cpu-ns/read), and the ratios of the journal's variants to
// off, of the same run: of their sums (<variant>/off), and the median of
// each turn's (<variant>/off-median), which a burst of other work in a
// few turns moves less. DECOY_BENCH_TURNS sets the turns (40),
// DECOY_BENCH_READS the reads of a slice (1,000); DECOY_BENCH_CPUPROFILE,
// a folder, has each server write its CPU profile there, <variant>.prof.
// b.N is not used:
// run it with -benchtime=1x, once.
func BenchmarkJournal(b *testing.B) {
	if v := os.Getenv(journalBenchVariant); v != "" {
		serveJournalBench(b, v)
		return
	}
	variants := journalVariants(b)
	turns := benchSetting(b, "DECOY_BENCH_TURNS", 40)
	reads := benchSetting(b, "DECOY_BENCH_READS", 1000)
	servers := make([]*benchServer, len(variants))
	for i, v := range variants {
		servers[i] = startJournalBench(b, v, nil)
		defer servers[i].stop(b)
	}
	for _, s := range servers {
		s.read(b, reads/4) // warm-up
	}
	cpu := map[string]time.Duration{}
	dropped := map[string]int64{}
	batches := map[string]benchState{}
	ratios := map[string][]float64{} // of each turn
	for turn := range turns {
		this := map[string]time.Duration{}
		for i := range servers {
			s := servers[(turn+i)%len(servers)]
			before := s.command(b, "mark")
			s.read(b, reads)
			after := s.command(b, "settle")
			this[s.variant] = after.cpu - before.cpu
			cpu[s.variant] += after.cpu - before.cpu
			dropped[s.variant] = after.drops
			batches[s.variant] = after
		}
		for _, v := range variants[1:] {
			ratios[v] = append(ratios[v], float64(this[v])/float64(this["off"]))
		}
	}
	all := float64(reads * turns)
	for _, v := range variants {
		b.ReportMetric(float64(cpu[v])/all, v+"-cpu-ns/read")
	}
	for _, v := range variants[1:] {
		b.ReportMetric(float64(cpu[v])/float64(cpu["off"]), v+"/off")
		slices.Sort(ratios[v])
		b.ReportMetric(ratios[v][len(ratios[v])/2], v+"/off-median")
		// An entry dropped (its writer behind, on busy cores) is work
		// not measured: a share of them says the figure is low.
		b.ReportMetric(float64(dropped[v])/all, v+"-dropped/read")
		if st := batches[v]; st.batches > 0 {
			b.ReportMetric(st.perBatch(), v+"-entries/batch")
		}
	}
}

// benchServer is the process that serves a variant of BenchmarkJournal,
// and the client's connections to it. The server says its URL on a line;
// each line the client sends it it answers with its CPU time so far and
// the entries its journal dropped: at once for "mark"; for "settle" and
// "stop", once its journal wrote what it was given.
type benchServer struct {
	variant string
	cmd     *exec.Cmd
	in      io.WriteCloser
	out     *bufio.Scanner
	conns   []*benchConn
}

// browserHeaders are the headers Chromium's fetch sends with a GET from a
// page on another origin (a frontend's dev server), and a bearer token,
// as an app's client adds one: what a journal entry holds, redacted.
const browserHeaders = "Connection: keep-alive\r\n" +
	"sec-ch-ua-platform: \"Linux\"\r\n" +
	"Authorization: Bearer dcy_mock_bench0000000000000000000000\r\n" +
	"User-Agent: Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0.0.0 Safari/537.36\r\n" +
	"Accept: application/json, text/plain, */*\r\n" +
	"sec-ch-ua: \"Chromium\";v=\"156\", \"Not;A=Brand\";v=\"99\"\r\n" +
	"sec-ch-ua-mobile: ?0\r\n" +
	"Origin: http://localhost:5173\r\n" +
	"Sec-Fetch-Site: cross-site\r\n" +
	"Sec-Fetch-Mode: cors\r\n" +
	"Sec-Fetch-Dest: empty\r\n" +
	"Referer: http://localhost:5173/\r\n" +
	"Accept-Encoding: gzip, deflate, br, zstd\r\n" +
	"Accept-Language: en-US,en;q=0.9\r\n"

// journalVariants are the journal benchmarks' variants: redis only with
// DECOY_TEST_REDIS_URL.
func journalVariants(b *testing.B) []string {
	variants := []string{"off", "off2", "discard", "memory", "redis"}
	if os.Getenv("DECOY_TEST_REDIS_URL") == "" {
		b.Log("set DECOY_TEST_REDIS_URL to measure the journal in Redis")
		variants = variants[:4]
	}
	return variants
}

// startJournalBench starts the server of a variant, under the command
// wrap when it is not empty (wrap's arguments first, then the server's).
func startJournalBench(b *testing.B, variant string, wrap []string, env ...string) *benchServer {
	args := append(slices.Clone(wrap), os.Args[0], "-test.run=^$", "-test.bench=^BenchmarkJournal$", "-test.benchtime=1x")
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = append(append(os.Environ(), journalBenchVariant+"="+variant, "GOMAXPROCS=1"), env...)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	s := &benchServer{variant: variant, cmd: cmd, in: in, out: bufio.NewScanner(out)}
	url := s.answer(b, "journal-bench-url ")
	for range journalBenchConns {
		s.conns = append(s.conns, dialRead(b, url, "/p/default/users?order_by=age&limit=10", browserHeaders))
	}
	return s
}

// answer returns the rest of the server's next line that starts with
// prefix.
func (s *benchServer) answer(b *testing.B, prefix string) string {
	for s.out.Scan() {
		if rest, ok := strings.CutPrefix(s.out.Text(), prefix); ok {
			return rest
		}
	}
	b.Fatalf("%s: the server ended without a %q line: %v", s.variant, prefix, s.out.Err())
	return ""
}

// benchState is a served variant's answer to a command: its CPU time so
// far, its journal's drops, and the batches its journal wrote to the
// store and the entries they held.
type benchState struct {
	cpu                     time.Duration
	drops, batches, entries int64
}

// perBatch is the mean entries of a batch.
func (st benchState) perBatch() float64 { return float64(st.entries) / float64(st.batches) }

// command sends the server a command, and returns its answer.
func (s *benchServer) command(b *testing.B, command string) benchState {
	fmt.Fprintln(s.in, command)
	var st benchState
	var used int64
	if _, err := fmt.Sscan(s.answer(b, "journal-bench-cpu "), &used, &st.drops, &st.batches, &st.entries); err != nil {
		b.Fatal(err)
	}
	st.cpu = time.Duration(used)
	return st
}

// read reads n times, on all the connections at once.
func (s *benchServer) read(b *testing.B, n int) {
	var wg sync.WaitGroup
	for _, c := range s.conns {
		wg.Go(func() { c.read(b, n/len(s.conns)) })
	}
	wg.Wait()
}

// stop ends the server, and returns its last state.
func (s *benchServer) stop(b *testing.B) benchState {
	for _, c := range s.conns {
		c.Close()
	}
	st := s.command(b, "stop")
	s.in.Close()
	s.cmd.Wait()
	return st
}

// serveJournalBench serves a variant of BenchmarkJournal to the client
// that started this process: see measureJournalBench.
func serveJournalBench(b *testing.B, variant string) {
	if dir := os.Getenv("DECOY_BENCH_CPUPROFILE"); dir != "" { // a folder: <variant>.prof in it
		f, err := os.Create(filepath.Join(dir, variant+".prof"))
		if err != nil {
			b.Fatal(err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			b.Fatal(err)
		}
		defer func() { pprof.StopCPUProfile(); f.Close() }()
	}
	var js decoy.JournalStore
	switch variant {
	case "off", "off2":
	case "discard":
		js = discardStore{}
	case "memory":
		js = journal.NewRing(journal.RingConfig{Size: decoy.DefaultJournalSize})
	case "redis":
		c, err := redis.Open(context.Background(), os.Getenv("DECOY_TEST_REDIS_URL"))
		if err != nil {
			b.Fatal(err)
		}
		prefix := "decoybench:" + rand.Text()[:8] + ":"
		b.Cleanup(func() {
			c.Del(context.Background(), prefix+"{project:"+decoy.DefaultProjectID+"}:journal")
			c.Close()
		})
		js = redis.NewJournal(c, prefix, decoy.DefaultJournalSize)
	default:
		b.Fatalf("no variant %q", variant)
	}
	var j *journal.Journal
	counted := &batchCounter{JournalStore: js}
	if js != nil {
		js = counted
	}
	h, m := usersServer(b, 1000, withTeams, func(c *server.Config) {
		if js != nil {
			j = journal.New(journal.Config{Store: js})
			c.Journal = j
		}
	})
	stop := func() {}
	if j != nil {
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { j.Run(ctx); close(done) }()
		stop = func() { cancel(); <-done } // Run writes what is queued, then ends
		b.Cleanup(stop)
	}
	if _, err := h.Store.CreateRoute(context.Background(), &decoy.Route{ProjectID: decoy.DefaultProjectID, Method: "GET", Path: "/users",
		MockID: m.ID, Action: decoy.ActionRead}, decoy.DefaultMaxRoutes); err != nil {
		b.Fatal(err)
	}
	fmt.Println("journal-bench-url", h.URL)
	commands := bufio.NewScanner(os.Stdin)
	for commands.Scan() {
		switch commands.Text() {
		case "stop":
			stop()
		case "settle":
			// The journal's writer writes what is queued within an
			// interval: its work for the reads before is counted.
			if j != nil {
				time.Sleep(2 * journal.DefaultInterval)
			}
		}
		var drops int64
		if j != nil {
			q, st := j.Dropped()
			drops = q + st
		}
		fmt.Println("journal-bench-cpu", int64(cpuTime()), drops, counted.batches.Load(), counted.entries.Load())
		if commands.Text() == "stop" {
			return
		}
	}
}

// benchConn is a keep-alive connection that GETs one target.
type benchConn struct {
	net.Conn
	br  *bufio.Reader
	buf []byte
	req []byte
}

func dialRead(b *testing.B, url, target, header string) *benchConn {
	conn, err := net.Dial("tcp", strings.TrimPrefix(url, "http://"))
	if err != nil {
		b.Fatal(err)
	}
	return &benchConn{Conn: conn, br: bufio.NewReaderSize(conn, 64<<10), buf: make([]byte, 256<<10),
		req: []byte("GET " + target + " HTTP/1.1\r\nHost: bench\r\n" + header + "\r\n")}
}

// read GETs the target n times, reading each answer whole.
func (c *benchConn) read(b *testing.B, n int) {
	for range n {
		if _, err := c.Write(c.req); err != nil {
			b.Fatal(err)
		}
		resp, err := http.ReadResponse(c.br, nil)
		if err != nil {
			b.Fatal(err)
		}
		_, err = io.CopyBuffer(writerOnly{io.Discard}, resp.Body, c.buf)
		if err != nil || resp.StatusCode != 200 {
			b.Fatalf("status %d, %v", resp.StatusCode, err)
		}
		resp.Body.Close()
	}
}

// cpuTime is the CPU time the process used so far, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// batchCounter counts the batches written to its store, and the entries
// they held.
type batchCounter struct {
	decoy.JournalStore
	batches, entries atomic.Int64
}

func (s *batchCounter) Append(ctx context.Context, records map[string][][]byte) error {
	s.batches.Add(1)
	for _, list := range records {
		s.entries.Add(int64(len(list)))
	}
	return s.JournalStore.Append(ctx, records)
}

// discardStore is a journal store that keeps nothing.
type discardStore struct{ decoy.JournalStore }

func (discardStore) Append(context.Context, map[string][][]byte) error { return nil }

// BenchmarkJournalInstructions measures what BenchmarkJournal does, the
// same reads of the same servers, in instructions rather than CPU time:
// each server runs under valgrind's cachegrind, which counts the
// instructions the process ran (user space: the kernel's share of a read,
// its socket calls, is the same with the journal or without it). Counts
// do not move with the machine's load or the scheduler, as CPU time on
// shared cores does (BenchmarkJournal's off2/off, two identical
// processes, is 0.93-1.08 there), so they resolve the 5% of §13.2.
//
// cachegrind counts a whole process, its start included: each variant is
// run twice, for a warm-up and DECOY_BENCH_READS reads (2,000), then for
// the warm-up and three times as many, and a read's instructions are the
// difference over the reads between (<variant>-instr/read). That is done
// DECOY_BENCH_TURNS times (3), and the median of each variant's turns is
// reported with its ratio to off (<variant>/off). DECOY_BENCH_CACHEGRIND,
// a folder, keeps cachegrind's out files there, <variant>-<turn>-<reads>.out,
// for cg_annotate and cg_diff. Each process stops its
// journal before it ends, so what its writer did for the reads (batches
// to Redis included) is counted; its wake-ups are counted over the
// valgrind run's wall time, about fifty times a read's, so the figure is
// high if anything. The redis variant's Redis is one of its own, run under
// cachegrind too (testservice.StartRedisUnder), and its count is added to the
// server's: what a read costs with the journal in Redis is both
// processes' work. Each variant's mean entries a batch are logged: under
// cachegrind about 140-190, where BenchmarkJournal's servers, at full
// speed, write about 210-220.
//
// The servers' collections stop the world (see the run's GODEBUG below;
// DECOY_BENCH_GC=concurrent for the concurrent collector), and Redis's
// memcpy uses its vector loop, not REP MOVSB (see its GLIBC_TUNABLES).
// Run it with -benchtime=1x; it takes about a minute a turn and variant.
func BenchmarkJournalInstructions(b *testing.B) {
	if _, err := exec.LookPath("valgrind"); err != nil {
		b.Skip("valgrind is not installed")
	}
	variants := journalVariants(b)
	reads := benchSetting(b, "DECOY_BENCH_READS", 2000)
	turns := benchSetting(b, "DECOY_BENCH_TURNS", 3)
	dir := os.Getenv("DECOY_BENCH_CACHEGRIND") // a folder to keep the out files in
	if dir == "" {
		dir = b.TempDir()
	}
	type run struct {
		variant     string
		turn, reads int
	}
	var runs []run
	for turn := range turns {
		for _, v := range variants {
			runs = append(runs, run{v, turn, reads}, run{v, turn, 3 * reads})
		}
	}
	counts := make([]int64, len(runs))
	states := make([]benchState, len(runs))
	// cachegrind runs a process on one thread: one at a time a core.
	sem := make(chan struct{}, runtime.NumCPU())
	var wg sync.WaitGroup
	for i, r := range runs {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			out := filepath.Join(dir, fmt.Sprintf("%s-%d-%d.out", r.variant, r.turn, r.reads))
			cachegrind := []string{"valgrind", "-q", "--tool=cachegrind", "--cache-sim=no"}
			// Go's clock reads use RDTSCP, which valgrind 3.19 does
			// not know: the runtime falls back to RDTSC without it.
			// Each collection stops the world (gcstoptheworld): the
			// concurrent collector's work under valgrind, which runs a
			// process's threads in turns, depends on when they take
			// them, and moved a variant's count by up to 2% from one
			// run to the next (off2/off 0.991-1.005, memory/off
			// 1.025-1.058). Stopped, the same marking is done at the
			// same points, and the turns are within 0.5%.
			// DECOY_BENCH_GC=concurrent measures with the concurrent
			// collector.
			godebug := "GODEBUG=cpu.rdtscp=off,gcstoptheworld=1"
			if os.Getenv("DECOY_BENCH_GC") == "concurrent" {
				godebug = "GODEBUG=cpu.rdtscp=off"
			}
			env := []string{godebug}
			var rd *testservice.Redis
			if r.variant == "redis" {
				// A Redis of its own, counted too. Its cron runs once
				// a second (hz 1, the least): the share of its count
				// that grows with the run's wall time, not the reads.
				//
				// Its copies are made by its vector loop, not by REP
				// MOVSB: glibc's memcpy copies runs of 4 KiB and more
				// (a batch's message, into the stream) with REP MOVSB,
				// which valgrind counts as an instruction a byte, about
				// thirty times what the loop it stands for costs. A
				// count of that would be Redis's copying, not its work.
				wrap := append([]string{"env", "GLIBC_TUNABLES=glibc.cpu.x86_rep_movsb_threshold=1099511627776"}, cachegrind...)
				rd = testservice.StartRedisUnder(b, append(wrap, "--cachegrind-out-file="+out+".redis"), "--hz", "1")
				env = append(env, "DECOY_TEST_REDIS_URL="+rd.URL())
			}
			s := startJournalBench(b, r.variant, append(cachegrind, "--cachegrind-out-file="+out), env...)
			s.read(b, reads/4) // warm-up
			s.read(b, r.reads)
			states[i] = s.stop(b)
			counts[i] = cachegrindTotal(b, out)
			if rd != nil {
				rd.Stop() // cachegrind writes its count as Redis ends
				counts[i] += cachegrindTotal(b, out+".redis")
			}
		})
	}
	wg.Wait()
	perRead := map[string][]float64{}
	perBatch := map[string][]float64{}
	for turn := range turns {
		for i, r := range runs {
			if r.turn != turn || r.reads != reads {
				continue
			}
			// runs[i+1] is the same variant and turn with three times the reads.
			perRead[r.variant] = append(perRead[r.variant], float64(counts[i+1]-counts[i])/float64(2*reads))
			if st := states[i+1]; st.batches > 0 {
				perBatch[r.variant] = append(perBatch[r.variant], st.perBatch())
			}
		}
	}
	median := func(v string) float64 {
		x := slices.Sorted(slices.Values(perRead[v]))
		return x[len(x)/2]
	}
	for _, v := range variants {
		b.ReportMetric(median(v), v+"-instr/read")
		b.Logf("%s: instructions a read in each turn: %.0f", v, perRead[v])
		if len(perBatch[v]) > 0 {
			b.Logf("%s: entries a batch in each turn: %.0f", v, perBatch[v])
		}
	}
	for _, v := range variants[1:] {
		b.ReportMetric(median(v)/median("off"), v+"/off")
	}
}

// cachegrindTotal is the instructions a cachegrind out file counts (its
// summary line).
func cachegrindTotal(b *testing.B, file string) int64 {
	data, err := os.ReadFile(file)
	if err != nil {
		b.Fatal(err)
	}
	for line := range strings.Lines(string(data)) {
		if rest, ok := strings.CutPrefix(line, "summary: "); ok {
			n, err := strconv.ParseInt(strings.Fields(rest)[0], 10, 64)
			if err != nil {
				b.Fatalf("%s: %q: %v", file, line, err)
			}
			return n
		}
	}
	b.Fatalf("%s: no summary line", file)
	return 0
}
