//go:build linux

package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
)

// The targets of the benchmark, each checked against this run's numbers.
const (
	wholeVsNginx   = 0.9 // whole documents: Decoy's req/s ÷ nginx's on the same file
	queryVsNginx   = 0.5 // filtered, ordered, limited queries on 100k records
	queryVsOthers  = 50  // the same, ÷ the faster of json-server and Mockoon
	queriesAtSize  = 100_000
	millionRecords = 1_000_000
)

// writeTargets writes a table of the targets, what this run measured for
// each, and whether it was met.
func writeTargets(w io.Writer, r *report) {
	if !hasServer(r, "decoy") && r.Memory == nil {
		return
	}
	var rows [][3]string
	met := func(ok bool) string {
		if ok {
			return "yes"
		}
		return "**no**"
	}
	for _, sz := range r.Config.Sizes {
		d, n := r.find(sz, "decoy", "whole"), r.find(sz, "nginx", "whole")
		if d.measured() && n.measured() {
			v := d.ReqPerSec / n.ReqPerSec
			rows = append(rows, [3]string{fmt.Sprintf("%s records, whole document: ≥ %.1f× nginx", sz.Label, wholeVsNginx),
				formatFactor2(v) + "×", met(v >= wholeVsNginx)})
		}
	}
	for _, sz := range r.Config.Sizes {
		if sz.N != queriesAtSize {
			continue
		}
		for _, q := range queries {
			if q.ID == "whole" {
				continue
			}
			d := r.find(sz, "decoy", q.ID)
			if !d.measured() {
				continue
			}
			if n := r.find(sz, "nginx", q.ID); n.measured() {
				v := d.ReqPerSec / n.ReqPerSec
				rows = append(rows, [3]string{fmt.Sprintf("%s records, %s: ≥ %.1f× nginx", sz.Label, q.Title, queryVsNginx),
					formatFactor2(v) + "×", met(v >= queryVsNginx)})
			}
			best, name := 0.0, ""
			for _, o := range []string{"json-server", "mockoon"} {
				if x := r.find(sz, o, q.ID); x.measured() && x.ReqPerSec > best {
					best, name = x.ReqPerSec, displayNames[o]
				}
			}
			if best > 0 {
				v := d.ReqPerSec / best
				rows = append(rows, [3]string{fmt.Sprintf("%s records, %s: ≥ %d× the faster of json-server and Mockoon", sz.Label, q.Title, queryVsOthers),
					fmt.Sprintf("%s× (%s)", formatFactor(v), name), met(v >= queryVsOthers)})
			}
		}
	}
	if m := r.Memory; m != nil && m.PeakRSS > 0 {
		rows = append(rows, [3]string{fmt.Sprintf("peak RSS loading %s and serving every query: ≤ %d× the documents", sizeList(m.Sizes), memoryBudget),
			fmt.Sprintf("%s× (%s for %s)", formatFactor2(m.ratio()), formatBytes(m.PeakRSS), formatBytes(m.DocBytes)), met(m.ratio() <= memoryBudget && m.Status == "ok")})
	}
	for _, sz := range r.Config.Sizes {
		if sz.N < millionRecords {
			continue
		}
		var answered, failed []string
		for _, q := range queries {
			if d := r.find(sz, "decoy", q.ID); d.measured() && d.Status == "ok" {
				answered = append(answered, q.ID)
			} else {
				failed = append(failed, q.ID)
			}
		}
		v := fmt.Sprintf("%d of %d", len(answered), len(queries))
		if len(failed) > 0 {
			v += " (not: " + strings.Join(failed, ", ") + ")"
		}
		rows = append(rows, [3]string{sz.Label + " records: every query answers", v, met(len(failed) == 0)})
	}
	if len(rows) == 0 {
		return
	}
	fmt.Fprintf(w, "## Targets\n\nEach from this run's numbers.\n\n| target | measured | met |\n|---|--:|:-:|\n")
	for _, row := range rows {
		fmt.Fprintf(w, "| %s | %s | %s |\n", row[0], row[1], row[2])
	}
	fmt.Fprintln(w)
}

// formatFactor2 prints a ratio with two decimals, where the targets sit.
func formatFactor2(v float64) string { return fmt.Sprintf("%.2f", v) }

// writeMemory writes the memory phase.
func writeMemory(w io.Writer, r *report) {
	m := r.Memory
	if m == nil {
		return
	}
	fmt.Fprintf(w, "## Memory: one Decoy holding %s\n\n", sizeList(m.Sizes))
	fmt.Fprintf(w, "One process: started empty, each document uploaded through the admin API, then every query on every document at %d connections for %s each. Peak RSS is VmHWM (never reset) and the largest RSS sampled every 50 ms.\n\n", r.Config.Conns, r.Config.MemoryEach)
	fmt.Fprintf(w, "| documents | peak RSS | ÷ documents | after loading | at the end | loading took | status |\n|--:|--:|--:|--:|--:|--:|---|\n")
	status := m.Status
	if m.Note != "" {
		status += ": " + m.Note
	}
	fmt.Fprintf(w, "| %s | %s | %s× | %s | %s | %.2f s | %s |\n\n", formatBytes(m.DocBytes), formatBytes(m.PeakRSS),
		formatFactor2(m.ratio()), formatBytes(m.AfterLoad), formatBytes(m.AtEnd), m.LoadSeconds, status)
}

// writeGrowth says how Decoy's latency and throughput grow with the size of
// the dataset, over every size run.
func writeGrowth(w io.Writer, r *report) {
	sizes := slices.Clone(r.Config.Sizes)
	if len(sizes) < 2 || !hasServer(r, "decoy") {
		return
	}
	slices.SortFunc(sizes, func(a, b size) int { return a.N - b.N })
	lo, hi := sizes[0], sizes[len(sizes)-1]
	fmt.Fprintf(w, "## How Decoy's latency grows from %s to %s records\n\n%s× the records. p50 / p99 under the same load at each size, req/s, and the factor p50 grew by from %s.\n\n",
		lo.Label, hi.Label, formatFactor(float64(hi.N)/float64(lo.N)), lo.Label)
	fmt.Fprintf(w, "| query |")
	for _, sz := range sizes {
		fmt.Fprintf(w, " %s |", sz.Label)
	}
	fmt.Fprintf(w, " p50 × |\n|---|%s--:|\n", strings.Repeat("--:|", len(sizes)))
	for _, q := range queries {
		fmt.Fprintf(w, "| %s |", q.Title)
		for _, sz := range sizes {
			if x := r.find(sz, "decoy", q.ID); x.measured() {
				fmt.Fprintf(w, " %s / %s, %s req/s |", formatMs(x.P50), formatMs(x.P99), formatRate(x.ReqPerSec))
			} else {
				fmt.Fprintf(w, " – |")
			}
		}
		a, b := r.find(lo, "decoy", q.ID), r.find(hi, "decoy", q.ID)
		if a.measured() && b.measured() {
			fmt.Fprintf(w, " %s |\n", formatFactor(b.P50/a.P50))
		} else {
			fmt.Fprintf(w, " – |\n")
		}
	}
	fmt.Fprintln(w)
}
