//go:build linux

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestNginxFloor(t *testing.T) {
	for _, tc := range []struct {
		bytes int64
		want  float64
	}{
		{0, 0.6},
		{2_333, 0.6},
		{64<<10 - 1, 0.6},
		{64 << 10, 0.9},
		{238_619, 0.9},
		{247_000_000, 0.9},
	} {
		if got := nginxFloor(tc.bytes); got != tc.want {
			t.Errorf("nginxFloor(%d) = %v, want %v", tc.bytes, got, tc.want)
		}
	}
}

func TestVsNginx(t *testing.T) {
	row := func(server string, rate float64, body int64, status string) *result {
		return &result{Server: server, ReqPerSec: rate, BodyBytes: body, Status: status}
	}
	for _, tc := range []struct {
		name       string
		d, n, g    *result
		ok, met    bool
		measured   string
		wantInWhat string
	}{
		{"large answer at 0.9× nginx", row("decoy", 900, 238_619, "ok"), row("nginx", 1000, 238_619, "ok"), nil, true, true, "0.90×", "≥ 0.9× nginx"},
		{"large answer just under", row("decoy", 899, 238_619, "ok"), row("nginx", 1000, 238_619, "ok"), nil, true, false, "0.90×", "≥ 0.9× nginx"},
		{"small answer at 0.61×", row("decoy", 610, 19_510, "ok"), row("nginx", 1000, 19_510, "ok"), nil, true, true, "0.61×", "≥ 0.6× nginx"},
		{"small answer at 0.59×", row("decoy", 590, 19_510, "ok"), row("nginx", 1000, 19_510, "ok"), nil, true, false, "0.59×", "≥ 0.6× nginx"},
		{"fast, but with 429s", row("decoy", 2000, 4_900, "limited"), row("nginx", 1000, 4_900, "ok"), nil, true, false, "2.00× (Decoy: limited)", "≥ 0.6× nginx"},
		{"nginx not measured", row("decoy", 1000, 4_900, "ok"), row("nginx", 0, 4_900, "failed"), nil, false, false, "", ""},
		{"with net/http's own ratio", row("decoy", 630, 238_619, "ok"), row("nginx", 1000, 238_619, "ok"), row("nethttp", 720, 238_619, "ok"), true, false, "0.63× (net/http alone: 0.72×)", "≥ 0.9× nginx"},
		{"net/http failed", row("decoy", 630, 238_619, "ok"), row("nginx", 1000, 238_619, "ok"), row("nethttp", 0, 238_619, "failed"), true, false, "0.63×", "≥ 0.9× nginx"},
		{"Decoy not run", nil, row("nginx", 1000, 4_900, "ok"), nil, false, false, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := vsNginx("1k records, q", tc.d, tc.n, tc.g)
			if ok != tc.ok {
				t.Fatalf("ok %v, want %v", ok, tc.ok)
			}
			if !ok {
				return
			}
			if got.met != tc.met || got.measured != tc.measured || !strings.Contains(got.what, tc.wantInWhat) {
				t.Errorf("%+v, want met %v, measured %q, target saying %q", got, tc.met, tc.measured, tc.wantInWhat)
			}
		})
	}
}

// The targets of a whole run: every Decoy row against nginx, by its answer's
// size, the many-mocks rows, json-server and Mockoon on 100k, and nothing
// for a row nginx did not serve.
func TestTargetRows(t *testing.T) {
	k1, k100 := size{N: 1000, Label: "1k"}, size{N: 100_000, Label: "100k"}
	res := func(sz size, server, q string, rate float64, body int64) result {
		return result{Size: sz, Server: server, Query: q, Status: "ok", ReqPerSec: rate, BodyBytes: body}
	}
	r := &report{
		Config: &config{Sizes: []size{k1, k100}, Clients: []string{"plain", "gzip"}, RotateMocks: 1000, RotateRecords: 20},
		Results: []result{
			res(k1, "decoy", "whole", 890, 238_619), res(k1, "nginx", "whole", 1000, 238_619), res(k1, "nethttp", "whole", 980, 238_619),
			res(k1, "decoy", "whole.gzip", 1100, 238_619), res(k1, "nginx", "whole.gzip", 1000, 238_619),
			res(k1, "decoy", "city", 700, 19_510), res(k1, "nginx", "city", 1000, 19_510), res(k1, "nethttp", "city", 800, 19_510),
			res(k1, "decoy", "city.gzip", 500, 19_510), res(k1, "nginx", "city.gzip", 1000, 19_510),
			res(k1, "decoy", "created", 700, 23_000), // nginx not run
			res(k100, "decoy", "city", 5000, 2_000_000), res(k100, "nginx", "city", 4000, 2_000_000),
			res(k100, "json-server", "city", 20, 2_500_000), res(k100, "mockoon", "city", 40, 2_000_000),
		},
		Rotation: []result{
			res(size{N: 20, Label: "20"}, "decoy", "rotate", 400, 4_900), res(size{N: 20, Label: "20"}, "nginx", "rotate", 1000, 4_900),
			res(size{N: 20, Label: "20"}, "nethttp", "rotate", 450, 4_900),
		},
		Memory: &memoryResult{Sizes: []size{k1}, DocBytes: 100, PeakRSS: 250, Status: "ok"},
	}
	type want struct {
		inWhat string
		met    bool
	}
	wants := []want{
		{"1k records, whole document, 233.0 KiB answer: ≥ 0.9× nginx", false},
		{"1k records, address.city = Paris, 19.1 KiB answer: ≥ 0.6× nginx", true},
		{"1k records, whole document, gzip, 233.0 KiB answer: ≥ 0.9× nginx", true},
		{"1k records, address.city = Paris, gzip, 19.1 KiB answer: ≥ 0.6× nginx", false},
		{"100k records, address.city = Paris, 1.9 MiB answer: ≥ 0.9× nginx", true},
		{"1,000 mocks of 20 records, round-robin, 4.8 KiB answer: ≥ 0.6× nginx", false},
		{"1k records, whole document, 233.0 KiB answer: ≥ 0.9× Go net/http", true},
		{"1k records, address.city = Paris, 19.1 KiB answer: ≥ 0.9× Go net/http", false},
		{"1,000 mocks of 20 records, round-robin, 4.8 KiB answer: ≥ 0.9× Go net/http", false},
		{"100k records, address.city = Paris: ≥ 50× the faster of json-server and Mockoon", true},
		{"peak RSS loading 1k records and serving every query: ≤ 3× the documents", true},
	}
	rows := targetRows(r)
	if len(rows) != len(wants) {
		for _, row := range rows {
			t.Logf("%+v", row)
		}
		t.Fatalf("%d rows, want %d", len(rows), len(wants))
	}
	for i, w := range wants {
		if rows[i].what != w.inWhat || rows[i].met != w.met {
			t.Errorf("row %d: %q met %v, want %q met %v", i, rows[i].what, rows[i].met, w.inWhat, w.met)
		}
	}
}

func TestManyMocksNote(t *testing.T) {
	for _, tc := range []struct {
		name             string
		servers, clients []string
		mocks            int
		want             []string
	}{
		{"no phase", []string{"decoy", "nginx"}, []string{"plain"}, 0, nil},
		{"one client, nginx", []string{"decoy", "nginx"}, []string{"plain"}, 1000, []string{"by the plain client,", "; nginx serves each mock's answer"}},
		{"two clients, both floors", []string{"decoy", "nginx", "nethttp"}, []string{"plain", "gzip", "private"}, 1000, []string{"by the plain and gzip clients,", "; nginx and Go net/http serve each mock's answer"}},
		{"Decoy alone", []string{"decoy"}, []string{"gzip"}, 10, []string{"by the gzip client,", "for each measurement."}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := manyMocksNote(&config{Servers: tc.servers, Clients: tc.clients, RotateMocks: tc.mocks, RotateRecords: 20})
			if tc.want == nil {
				if got != "" {
					t.Fatalf("got %q, want none", got)
				}
				return
			}
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("%q does not say %q", got, w)
				}
			}
		})
	}
}

// rssPartsOf finds the test binary's own pages, a file mapped under the
// data folder, and anonymous memory, in this process.
func TestRSSParts(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "docs", "a")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, bytes.Repeat([]byte("x"), 1<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m, err := syscall.Mmap(int(f.Fd()), 0, 1<<20, syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Munmap(m)
	sum := 0
	for i := 0; i < len(m); i += 4096 {
		sum += int(m[i])
	}
	p := rssPartsOf(os.Getpid(), dir)
	if p == nil {
		t.Fatal("no smaps")
	}
	if p.Documents != 1<<20 || p.Binary <= 0 || p.Anonymous <= 0 || sum == 0 {
		t.Errorf("parts %+v, want the 1 MiB mapped and touched under %s, and some of the binary and of anonymous memory", p, dir)
	}
}
