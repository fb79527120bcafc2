//go:build linux

package main

import (
	"bytes"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/decoy-mock/decoy/importer"
)

// routesAnswers are answers to the phase's reads in routeKinds order, as a
// client got them: the collection reads as gz (nil: uncompressed).
func routesAnswers(mock, small, large, itemSmall, itemLarge, rules string, gz func(string) []byte) *rotateAnswers {
	a := &rotateAnswers{}
	for k, body := range []string{mock, small, large, itemSmall, itemLarge, rules} {
		a.plain = append(a.plain, []byte(body))
		wire, enc := []byte(body), ""
		if gz != nil && (k <= routeLarge || k == routeRules) {
			wire, enc = gz(body), "gzip"
		}
		a.wire, a.encoding = append(a.wire, wire), append(a.encoding, enc)
	}
	return a
}

func TestCheckRoutes(t *testing.T) {
	const list, item = `[{"id":3},{"id":1}]`, `{"id":500,"name":"a"}`
	gz := func(s string) []byte { return gzipped(t, []byte(s)) }
	// Compressed by another writer: the same records, other bytes.
	other := func(s string) []byte { return append(gz(s), 0) }
	type want struct {
		records int
		same    string // "", "yes", "no"
		err     string
	}
	ok2, ok1 := want{records: 2}, want{records: 1}
	same2, same1 := want{records: 2, same: "yes"}, want{records: 1, same: "yes"}
	for _, tc := range []struct {
		name string
		a    *rotateAnswers
		want []want
	}{
		{"every read as it should be", routesAnswers(list, list, list, item, item, list, nil),
			[]want{ok2, same2, same2, ok1, same1, same2}},
		{"gzipped, the same bytes", routesAnswers(list, list, list, item, item, list, gz),
			[]want{ok2, same2, same2, ok1, same1, same2}},
		{"a routed read answers other records", routesAnswers(list, list, `[{"id":1},{"id":3}]`, item, item, list, nil),
			[]want{ok2, same2, {records: 2, err: "differ from the 19 bytes /mock/{id} answered"}, ok1, same1, same2}},
		{"a rule answers: other bytes", routesAnswers(list, list, list, item, item, `{"n":2}`, nil),
			[]want{ok2, same2, same2, ok1, same1, {records: 2, err: "differ from the 19 bytes /mock/{id} answered"}}},
		{"the mock answers no array", routesAnswers(item, item, item, item, item, item, nil),
			[]want{{err: "no JSON array"}, {err: "not compared"}, {err: "not compared"}, ok1, same1, {err: "not compared"}}},
		{"an item read answers another record", routesAnswers(list, list, list, `{"id":501}`, item, list, nil),
			[]want{ok2, same2, same2, {err: `the record "501", not 500`}, ok1, same2}},
		{"an item read answers a list", routesAnswers(list, list, list, item, list, list, nil),
			[]want{ok2, same2, same2, ok1, {err: "answered no record"}, same2}},
		{"the two items differ", routesAnswers(list, list, list, item, `{"id":500,"name":"b"}`, list, nil),
			[]want{ok2, same2, same2, ok1, {records: 1, err: "differ from the 21 bytes of the project of 3 routes"}, same2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := checkRoutes(tc.a)
			for k, w := range tc.want {
				g := got[k]
				same := ""
				if g.same != nil {
					same = map[bool]string{true: "yes", false: "no"}[*g.same]
				}
				switch {
				case w.err == "" && g.err != nil, w.err != "" && (g.err == nil || !strings.Contains(g.err.Error(), w.err)):
					t.Errorf("%s: error %v, want %q", routeKinds[k].id, g.err, w.err)
				case g.records != w.records || same != w.same:
					t.Errorf("%s: %d records, same %q, want %d and %q", routeKinds[k].id, g.records, same, w.records, w.same)
				}
			}
		})
	}
	// Compressed otherwise: marked, not refused.
	a := routesAnswers(list, list, list, item, item, list, gz)
	a.wire[routeLarge] = other(list)
	c := checkRoutes(a)[routeLarge]
	if c.err != nil || c.same == nil || *c.same || !strings.Contains(c.note, "where /mock/{id} sent") {
		t.Errorf("other gzip bytes: %+v, want no error, not the same, and a note", c)
	}
}

// The export the phase imports reads back, within the limits of a Decoy
// started with --max-routes routesLarge, as one mock and routesLarge GET
// routes, /users and /users/{id} last.
func TestRoutesExport(t *testing.T) {
	doc := []byte(`[{"id":500}]`)
	id := benchID("routes-large")
	exp, err := routesExport(id, doc, routesLarge)
	if err != nil {
		t.Fatal(err)
	}
	res, err := importer.Read(importer.FormatDecoy, exp, importer.Options{Limits: importer.Limits{MaxRoutes: routesLarge}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Mocks) != 1 || res.Mocks[0].ID != id || !bytes.Equal(res.Mocks[0].Data, doc) {
		t.Fatalf("mocks %+v, want one, %s, holding the document", res.Mocks, id)
	}
	if len(res.Routes) != routesLarge {
		t.Fatalf("%d routes, want %d", len(res.Routes), routesLarge)
	}
	var paths []string
	for _, r := range res.Routes {
		if r.Method != "GET" || r.Action != "read" || r.Mock != 0 {
			t.Fatalf("route %+v: want a GET reading the mock", r)
		}
		paths = append(paths, r.Path)
	}
	if want := []string{"/r0/things/{id}", "/r1/things/{id}"}; !slices.Equal(paths[:2], want) {
		t.Errorf("first routes %q, want %q", paths[:2], want)
	}
	if want := []string{"/users", "/users/{id}"}; !slices.Equal(paths[routesLarge-2:], want) {
		t.Errorf("last routes %q, want %q", paths[routesLarge-2:], want)
	}
}

func TestRoutesTargetsPaths(t *testing.T) {
	got := routesTargets("m1", "big")
	want := []string{"/mock/m1?order_by=age&limit=10", "/p/default/users?order_by=age&limit=10",
		"/p/big/users?order_by=age&limit=10", "/p/default/users/500", "/p/big/users/500", "/p/default/ruled?order_by=age&limit=10"}
	if !slices.Equal(got, want) {
		t.Errorf("%q, want %q", got, want)
	}
	for k := range routeKinds {
		for _, c := range clients[:2] {
			if got := routeIndex(routesQueryOf(k, c).ID); got != k {
				t.Errorf("routeIndex(%s) = %d, want %d", routesQueryOf(k, c).ID, got, k)
			}
		}
	}
}

// The phase's targets, each client's: the small project's routed read
// against /mock/{id}, the large project's against the small one's, for the
// collection and for the item; a row with errors misses its target.
func TestRoutesTargetRows(t *testing.T) {
	row := func(k int, c client, rate float64, status string) result {
		return result{Server: "decoy", Query: routesQueryOf(k, c).ID, Status: status, ReqPerSec: rate}
	}
	plain, gz := clients[0], clients[1]
	r := &report{
		Config: &config{Clients: []string{"plain", "gzip", "private"}},
		Routes: []result{
			row(routeMock, plain, 1000, "ok"), row(routeSmall, plain, 950, "ok"), row(routeLarge, plain, 849, "ok"),
			row(routeItemSmall, plain, 2000, "ok"), row(routeItemLarge, plain, 1900, "ok"), row(routeRules, plain, 899, "ok"),
			row(routeMock, gz, 1000, "ok"), row(routeSmall, gz, 949, "ok"), row(routeLarge, gz, 2000, "errors"),
			row(routeItemSmall, gz, 0, "failed"), row(routeItemLarge, gz, 1900, "ok"), row(routeRules, gz, 949, "ok"),
		},
	}
	want := []targetRow{
		{"routes: /p/default/users?order_by=age&limit=10, a project of 3 routes: ≥ 0.95× the same read at /mock/{id}", "0.950×", true},
		{"routes: /users?order_by=age&limit=10 in a project of 10,000 routes: ≥ 0.9× in one of 3", "0.894×", false},
		{"routes: /users/500 in a project of 10,000 routes: ≥ 0.9× in one of 3", "0.950×", true},
		{"routes: /p/default/ruled?order_by=age&limit=10, a route of 20 rules, none holding: ≥ 0.9× the same read through /users, without", "0.946×", true},
		{"routes, gzip: /p/default/users?order_by=age&limit=10, a project of 3 routes: ≥ 0.95× the same read at /mock/{id}", "0.949×", false},
		{"routes, gzip: /users?order_by=age&limit=10 in a project of 10,000 routes: ≥ 0.9× in one of 3", "2.107× (large: errors)", false},
		{"routes, gzip: /p/default/ruled?order_by=age&limit=10, a route of 20 rules, none holding: ≥ 0.9× the same read through /users, without", "1.000×", true},
	}
	got := targetRows(r)
	if !slices.Equal(got, want) {
		t.Errorf("rows:\n%+v\nwant\n%+v", got, want)
	}

	var md strings.Builder
	writeRoutes(&md, r)
	for _, s := range []string{
		"| /p/{slug}/users?order_by=age&limit=10, a project of 10,000 routes | – | 849 | 0.00 | 0.00 | – | 0.894× small; 0.849× mock | – | ≥ 0.90× | **no** |",
		"| /p/default/users/500, a project of 3 routes, gzip | – | – (failed) |",
		"0.950× mock | – | ≥ 0.95× | yes |",
		"0.949× mock | – | ≥ 0.95× | **no** |",
	} {
		if !strings.Contains(md.String(), s) {
			t.Errorf("the section does not say %q:\n%s", s, md.String())
		}
	}
	if s := md.String(); !strings.Contains(s, "## Routes") {
		t.Errorf("no section:\n%s", s)
	}
	var none strings.Builder
	writeRoutes(&none, &report{Config: r.Config})
	if none.Len() != 0 {
		t.Errorf("a run without the phase: %q", none.String())
	}
}

func TestParsePhaseFlags(t *testing.T) {
	for _, tc := range []struct {
		name              string
		args              []string
		generated, routes string
		sizes             int
		err               string
	}{
		{"defaults: every phase", nil, "on", "on", 3, ""},
		{"routes alone", []string{"-routes", "only"}, "off", "only", 0, ""},
		{"generated alone", []string{"-generated", "only"}, "only", "off", 0, ""},
		{"both alone", []string{"-generated", "only", "-routes", "only"}, "only", "only", 0, ""},
		{"routes off", []string{"-routes", "off"}, "on", "off", 3, ""},
		{"routes alone, generated off", []string{"-routes", "only", "-generated", "off"}, "off", "only", 0, ""},
		{"a bad value", []string{"-routes", "yes"}, "", "", 0, "-routes must be on, off or only"},
		{"no rounds", []string{"-routes-rounds", "0"}, "", "", 0, "-routes-rounds must be 1 or more"},
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
			if cfg.Generated != tc.generated || cfg.Routes != tc.routes || len(cfg.Sizes) != tc.sizes {
				t.Errorf("generated %s, routes %s, %d sizes; want %s, %s, %d", cfg.Generated, cfg.Routes, len(cfg.Sizes), tc.generated, tc.routes, tc.sizes)
			}
			if tc.sizes == 0 && (cfg.RotateMocks != 0 || cfg.Memory != nil) {
				t.Errorf("alone, but the many-mocks phase (%d) or the memory one (%v) would run", cfg.RotateMocks, cfg.Memory)
			}
		})
	}
}

// A read measured in windows is one row: answers and time added up, CPU
// weighed by each window's length, the highest peak, the worst status.
func TestMergeWindows(t *testing.T) {
	window := func(ok, errs int64, secs, cpu, others float64, rss int64, status, note string, latency time.Duration) result {
		l := &loadResult{OK: ok, Errors: errs, Bytes: ok * 100, InWindow: ok * 100, Elapsed: time.Duration(secs * float64(time.Second))}
		for range ok {
			l.hist.record(latency)
		}
		if errs > 0 {
			l.FirstErr = "HTTP 500"
		}
		return result{Query: "routes-small", Target: "/p/default/users", Records: 10, BodyBytes: 100, Status: status, Note: note,
			ServerCPU: cpu, OtherCPU: others, PeakRSS: rss, Load: l}
	}
	m := mergeWindows([]result{
		window(2000, 0, 1, 0.5, 0.1, 60<<20, "ok", "sent 786 bytes", time.Millisecond),
		window(1000, 2, 1, 0.9, 0.5, 70<<20, "errors", "sent 786 bytes; 2 errors", 3*time.Millisecond),
		window(2000, 0, 2, 0.6, 0.0, 50<<20, "ok", "", 2*time.Millisecond),
	})
	if m.Load.OK != 5000 || m.Load.Errors != 2 || m.Load.Elapsed != 4*time.Second || m.Load.FirstErr != "HTTP 500" {
		t.Errorf("load %+v, want 5,000 answers, 2 errors over 4 s", m.Load)
	}
	if math.Abs(m.ReqPerSec-1250) > 1e-9 {
		t.Errorf("%v req/s, want 1,250", m.ReqPerSec)
	}
	if math.Abs(m.ServerCPU-0.65) > 1e-9 || math.Abs(m.OtherCPU-0.15) > 1e-9 {
		t.Errorf("CPU %v, others %v; want 0.65 and 0.15 (weighed by time)", m.ServerCPU, m.OtherCPU)
	}
	if m.PeakRSS != 70<<20 || m.Status != "errors" || m.Note != "sent 786 bytes; 2 errors" {
		t.Errorf("peak %d, status %s, note %q", m.PeakRSS, m.Status, m.Note)
	}
	if m.P50 < 1.99 || m.P50 > 2.01 || m.P99 < 2.99 || m.P99 > 3.02 {
		t.Errorf("p50 %v, p99 %v ms; want 2 and 3", m.P50, m.P99)
	}
	if m.Target != "/p/default/users" || m.Records != 10 || m.BodyBytes != 100 {
		t.Errorf("the read's own fields lost: %+v", m)
	}
}

// Over as many rounds as reads, each read comes at each place once.
func TestRoundOrder(t *testing.T) {
	n := len(routeKinds)
	first := map[int]int{}
	for round := range n {
		o := roundOrder(round, n)
		sorted := slices.Sorted(slices.Values(o))
		if !slices.Equal(sorted, []int{0, 1, 2, 3, 4, 5}) {
			t.Fatalf("round %d: %v, not every read once", round, o)
		}
		first[o[0]]++
	}
	if len(first) != n {
		t.Errorf("first reads %v, want each once", first)
	}
	if o := roundOrder(6, 5); !slices.Equal(o, []int{1, 2, 3, 4, 0}) {
		t.Errorf("round 6: %v", o)
	}
}
