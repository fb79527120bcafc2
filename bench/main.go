//go:build linux

// Command bench is Decoy's side-by-side load benchmark: it serves the same
// users documents from Decoy, json-server, Mockoon's CLI, nginx and Go's
// net/http on loopback, drives each with the same load generator and the same queries,
// and reports throughput, latency, memory and Decoy's ratios to the others.
//
// nginx serves, for every query, the exact bytes Decoy answered, as a static
// file: the floor, what it costs just to send the answer. nethttp (see
// bench/nethttp) serves the same files with Go's net/http alone: what
// net/http costs to send them, before any work of a server built on it.
//
//	go run ./bench                               # 1k, 10k, 100k records
//	go run ./bench -sizes 1k,1m -servers decoy,nginx -duration 5s
//
// It writes results.md, results.json, chart.svg and chart.png to -out.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
)

// config is what the flags set.
type config struct {
	Sizes   []size   `json:"sizes"`
	Servers []string `json:"servers"`
	Clients []string `json:"clients,omitempty"`
	// The many-mocks phase: RotateMocks mocks of RotateRecords records
	// each, on a Decoy whose per-mock rate limit is RotateRateLimit.
	RotateMocks     int   `json:"rotate_mocks,omitempty"`
	RotateRecords   int   `json:"rotate_records,omitempty"`
	RotateRateLimit int64 `json:"rotate_rate_limit,omitempty"`
	// Generated runs the generated-data phase: "on", "off", or "only"
	// (that phase alone).
	Generated string `json:"generated,omitempty"`
	// Routes runs the routes phase: "on", "off", or "only" (that phase
	// alone).
	Routes string `json:"routes,omitempty"`
	// Rounds is how many windows Decoy and the floors take turns in on
	// each query of the datasets (see runTurns).
	Rounds int `json:"rounds,omitempty"`
	// RoutesRounds is how many windows each read of the routes phase is
	// measured in, the reads taking turns.
	RoutesRounds int `json:"routes_rounds,omitempty"`
	// Writes runs the writes phase: "on", "off", or "only" (that phase
	// alone); WritesRounds is how many windows its read alone and its
	// read during writes take turns in.
	Writes       string        `json:"writes,omitempty"`
	WritesRounds int           `json:"writes_rounds,omitempty"`
	OthersMax    size          `json:"others_max"`
	Memory       []size        `json:"memory_sizes"`
	MemoryEach   time.Duration `json:"memory_per_query_ns"`
	Duration     time.Duration `json:"duration_ns"`
	Warmup       time.Duration `json:"warmup_ns"`
	Conns        int           `json:"conns"`
	Timeout      time.Duration `json:"request_timeout_ns"`
	StartTimeout time.Duration `json:"start_timeout_ns"`
	WaitQuiet    time.Duration `json:"wait_quiet_ns"`
	Out          string        `json:"-"`
	Tools        string        `json:"-"`
	Keep         bool          `json:"-"`
	From         string        `json:"-"`
}

// serverNames lists the servers in the order they run and are reported.
var serverNames = []string{"decoy", "json-server", "mockoon", "nginx", "nethttp"}

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	cfg, err := parseFlags(args)
	if err != nil {
		return err
	}
	if cfg.From != "" {
		if err := os.MkdirAll(cfg.Out, 0o755); err != nil {
			return err
		}
		return rerender(cfg, cfg.From)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	work, err := os.MkdirTemp("", "decoy-bench-*")
	if err != nil {
		return err
	}
	if cfg.Keep {
		logf("work folder kept: %s", work)
	} else {
		defer os.RemoveAll(work)
	}
	if err := os.MkdirAll(cfg.Out, 0o755); err != nil {
		return err
	}

	b, err := newBench(ctx, cfg, work)
	if err != nil {
		return err
	}
	for _, sz := range cfg.Sizes {
		if err := b.runSize(ctx, sz); err != nil {
			if ctx.Err() == nil {
				return err
			}
			break
		}
	}
	if cfg.RotateMocks > 0 && ctx.Err() == nil {
		b.runRotation(ctx)
	}
	if len(cfg.Memory) > 0 && slices.Contains(cfg.Servers, "decoy") && ctx.Err() == nil {
		b.runMemory(ctx, cfg.Memory, cfg.MemoryEach)
	}
	if cfg.Generated != "off" && slices.Contains(cfg.Servers, "decoy") && ctx.Err() == nil {
		b.runGenerated(ctx)
	}
	if cfg.Routes != "off" && slices.Contains(cfg.Servers, "decoy") && ctx.Err() == nil {
		b.runRoutes(ctx)
	}
	if cfg.Writes != "off" && (slices.Contains(cfg.Servers, "decoy") || slices.Contains(cfg.Servers, "json-server")) && ctx.Err() == nil {
		b.runWrites(ctx)
	}
	if len(b.results) > 0 || len(b.rotation) > 0 || b.memory != nil || len(b.generated) > 0 || len(b.routes) > 0 || b.writes != nil {
		// Also when interrupted: what was measured is reported.
		if err := writeReport(cfg, b.report()); err != nil {
			return err
		}
	}
	return ctx.Err()
}

func parseFlags(args []string) (*config, error) {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	sizes := fs.String("sizes", "1k,10k,100k", "dataset sizes in records, comma-separated (1k, 10k, 100k, 1m, or a number)")
	servers := fs.String("servers", strings.Join(serverNames, ","), "servers to run, comma-separated")
	othersMax := fs.String("others-max", "100k", "largest dataset json-server and Mockoon are run on (they take minutes a request beyond)")
	memory := fs.String("memory", "10k,100k", "datasets one Decoy loads together for the memory measurement, comma-separated, each query asked as a plain and as a gzip client; empty: none")
	clientList := fs.String("clients", "plain,gzip,private", "how Decoy, nginx and nethttp are asked, comma-separated: plain (no Accept-Encoding), gzip (Accept-Encoding: gzip, deflate, br), private (a private mock, its token header and gzip)")
	cfg := &config{}
	fs.IntVar(&cfg.RotateMocks, "rotate-mocks", 1000, "mocks read round-robin in the many-mocks phase; 0: no such phase")
	fs.IntVar(&cfg.RotateRecords, "rotate-records", 20, "records in each mock of the many-mocks phase")
	fs.Int64Var(&cfg.RotateRateLimit, "rotate-rate-limit", 100_000, "Decoy's --rate-limit (per mock and minute) in the many-mocks phase; its monthly quota is the default")
	fs.StringVar(&cfg.Generated, "generated", "on", "the generated-data phase (100 records stored, and generated on every read): on, off, or only (that phase alone)")
	fs.StringVar(&cfg.Routes, "routes", "on", "the routes phase (the same reads at /mock/{id}, in a project of 2 routes and in one of 10,000): on, off, or only (that phase alone)")
	fs.StringVar(&cfg.Writes, "writes", "on", "the writes phase (PATCHes of single records of 100,000 on json-server and Decoy; a small read before, after and during writes): on, off, or only (that phase alone; then -servers defaults to decoy,json-server)")
	fs.IntVar(&cfg.WritesRounds, "writes-rounds", 3, "in the writes phase, rounds in which the read alone and the read during writes take turns, each measured for -duration ÷ rounds after its warm-up")
	fs.IntVar(&cfg.Rounds, "rounds", 3, "over each dataset, rounds in which Decoy, nginx and nethttp take turns on each query, each measured for -duration ÷ rounds after its warm-up")
	fs.IntVar(&cfg.RoutesRounds, "routes-rounds", 5, "in the routes phase, rounds in which the reads take turns, each measured for -duration ÷ rounds after its warm-up")
	fs.DurationVar(&cfg.Duration, "duration", 10*time.Second, "measured load per server and query")
	fs.DurationVar(&cfg.Warmup, "warmup", 2*time.Second, "load before measuring, not counted")
	fs.DurationVar(&cfg.MemoryEach, "memory-duration", 3*time.Second, "load per query, client and dataset in the memory measurement")
	fs.IntVar(&cfg.Conns, "conns", 32, "keep-alive connections")
	fs.DurationVar(&cfg.Timeout, "timeout", time.Minute, "longest one request may take before it counts as a timeout")
	fs.DurationVar(&cfg.StartTimeout, "start-timeout", 5*time.Minute, "longest a server may take to start and load a dataset")
	fs.DurationVar(&cfg.WaitQuiet, "wait-quiet", 0, "before each measurement, wait up to this long for other processes to leave the CPU idle")
	fs.StringVar(&cfg.Out, "out", filepath.Join("bench", "results"), "folder for results.md, results.json and the chart")
	fs.StringVar(&cfg.Tools, "tools", filepath.Join(os.TempDir(), "decoy-bench-tools"), "folder for the npm installs, reused across runs")
	fs.BoolVar(&cfg.Keep, "keep", false, "keep the work folder (datasets, logs, configs)")
	fs.StringVar(&cfg.From, "from", "", "run nothing: write the report again from this results.json")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	var err error
	serversSet := false
	fs.Visit(func(f *flag.Flag) { serversSet = serversSet || f.Name == "servers" })
	if cfg.Writes == "only" && !serversSet {
		// The writes phase alone compares Decoy with json-server only.
		*servers = "decoy,json-server"
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments: %q", fs.Args())
	}
	for _, s := range strings.Split(*sizes, ",") {
		sz, err := parseSize(strings.TrimSpace(s))
		if err != nil {
			return nil, err
		}
		cfg.Sizes = append(cfg.Sizes, sz)
	}
	if cfg.OthersMax, err = parseSize(*othersMax); err != nil {
		return nil, fmt.Errorf("-others-max: %w", err)
	}
	for _, s := range strings.Split(*memory, ",") {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		sz, err := parseSize(s)
		if err != nil {
			return nil, fmt.Errorf("-memory: %w", err)
		}
		cfg.Memory = append(cfg.Memory, sz)
	}
	for _, s := range strings.Split(*servers, ",") {
		s = strings.TrimSpace(s)
		if !slices.Contains(serverNames, s) {
			return nil, fmt.Errorf("-servers: unknown server %q (known: %s)", s, strings.Join(serverNames, ", "))
		}
		if !slices.Contains(cfg.Servers, s) {
			cfg.Servers = append(cfg.Servers, s)
		}
	}
	for _, s := range strings.Split(*clientList, ",") {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		if _, ok := clientByID(s); !ok {
			return nil, fmt.Errorf("-clients: unknown client %q (known: plain, gzip, private)", s)
		}
		if !slices.Contains(cfg.Clients, s) {
			cfg.Clients = append(cfg.Clients, s)
		}
	}
	for _, f := range []struct{ name, v string }{{"generated", cfg.Generated}, {"routes", cfg.Routes}, {"writes", cfg.Writes}} {
		if f.v != "on" && f.v != "off" && f.v != "only" {
			return nil, fmt.Errorf("-%s must be on, off or only", f.name)
		}
	}
	if cfg.Generated == "only" || cfg.Routes == "only" || cfg.Writes == "only" {
		// The phases asked for alone, and nothing else.
		cfg.Sizes, cfg.RotateMocks, cfg.Memory = nil, 0, nil
		for _, v := range []*string{&cfg.Generated, &cfg.Routes, &cfg.Writes} {
			if *v == "on" {
				*v = "off"
			}
		}
	}
	if cfg.Rounds < 1 {
		return nil, errors.New("-rounds must be 1 or more")
	}
	if cfg.RoutesRounds < 1 {
		return nil, errors.New("-routes-rounds must be 1 or more")
	}
	if cfg.WritesRounds < 1 {
		return nil, errors.New("-writes-rounds must be 1 or more")
	}
	if cfg.RotateMocks < 0 || cfg.RotateRecords < 1 || cfg.RotateRateLimit < 1 {
		return nil, errors.New("-rotate-mocks must not be negative, -rotate-records and -rotate-rate-limit must be positive (a rate limit of 0 is none)")
	}
	if cfg.Conns < 1 || cfg.Duration <= 0 || cfg.Warmup < 0 || cfg.Timeout <= 0 {
		return nil, errors.New("-conns, -duration and -timeout must be positive, -warmup not negative")
	}
	return cfg, nil
}

// logf prints progress to standard error, so standard output holds only the
// results.
func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "%s  %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, args...))
}
