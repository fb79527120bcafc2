//go:build linux

package main

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"
)

// The targets of the benchmark, each checked against this run's numbers.
const (
	// largeAnswer is where large answers start, counted uncompressed: the
	// same answer is large for the plain client and the gzip one.
	largeAnswer  = 64 << 10
	largeVsNginx = 0.9 // Decoy's req/s ÷ nginx's on the same bytes, for a large answer
	smallVsNginx = 0.6 // the same, for a smaller one
	// vsNetHTTP is Decoy's req/s ÷ Go net/http's alone sending the same
	// bytes with the same headers, for every answer: what Decoy's own work
	// may cost over the server it is built on.
	vsNetHTTP      = 0.9
	queryVsOthers  = 50 // queries on 100k records, ÷ the faster of json-server and Mockoon
	queriesAtSize  = 100_000
	millionRecords = 1_000_000
)

// nginxFloor is the share of nginx's req/s that Decoy must reach on an
// answer of answerBytes bytes, uncompressed.
func nginxFloor(answerBytes int64) float64 {
	if answerBytes >= largeAnswer {
		return largeVsNginx
	}
	return smallVsNginx
}

// targetRow is one line of the Targets table.
type targetRow struct {
	what, measured string
	met            bool
}

// vsNginx is the target of a Decoy row against nginx's, which served the
// same bytes to the same client; false when either was not measured. A
// Decoy row with errors or 429s does not meet it, whatever its rate. When
// Go's net/http served the same bytes too (g), its own ratio to nginx is
// given beside Decoy's: what net/http reached doing nothing but send them.
func vsNginx(what string, d, n, g *result) (targetRow, bool) {
	if !d.measured() || !n.measured() {
		return targetRow{}, false
	}
	want := nginxFloor(d.BodyBytes)
	v := d.ReqPerSec / n.ReqPerSec
	row := targetRow{
		what:     fmt.Sprintf("%s, %s answer: ≥ %.1f× nginx", what, formatBytes(d.BodyBytes), want),
		measured: formatFactor2(v) + "×",
		met:      v >= want && d.Status == "ok",
	}
	if d.Status != "ok" {
		row.measured += " (Decoy: " + d.Status + ")"
	}
	if g.measured() && g.Status == "ok" {
		row.measured += " (net/http alone: " + formatFactor2(g.ReqPerSec/n.ReqPerSec) + "×)"
	}
	return row, true
}

// vsGo is the target of a Decoy row against Go's net/http alone, which
// sent the same bytes with the same headers to the same client; false when
// either was not measured.
func vsGo(what string, d, g *result) (targetRow, bool) {
	if !d.measured() || !g.measured() || g.Status != "ok" {
		return targetRow{}, false
	}
	v := d.ReqPerSec / g.ReqPerSec
	row := targetRow{
		what:     fmt.Sprintf("%s, %s answer: ≥ %.1f× Go net/http", what, formatBytes(d.BodyBytes), vsNetHTTP),
		measured: formatFactor2(v) + "×",
		met:      v >= vsNetHTTP && d.Status == "ok",
	}
	if d.Status != "ok" {
		row.measured += " (Decoy: " + d.Status + ")"
	}
	return row, true
}

// targetRows are the targets with what this run measured for each.
func targetRows(r *report) []targetRow {
	var rows []targetRow
	for _, sz := range r.Config.Sizes {
		for _, q := range r.queries() {
			if row, ok := vsNginx(sz.Label+" records, "+q.Title, r.find(sz, "decoy", q.ID), r.find(sz, "nginx", q.ID), r.find(sz, "nethttp", q.ID)); ok {
				rows = append(rows, row)
			}
		}
	}
	for _, q := range r.rotateQueries() {
		if row, ok := vsNginx(q.Title, r.findRotation("decoy", q.ID), r.findRotation("nginx", q.ID), r.findRotation("nethttp", q.ID)); ok {
			rows = append(rows, row)
		}
	}
	for _, sz := range r.Config.Sizes {
		for _, q := range r.queries() {
			if row, ok := vsGo(sz.Label+" records, "+q.Title, r.find(sz, "decoy", q.ID), r.find(sz, "nethttp", q.ID)); ok {
				rows = append(rows, row)
			}
		}
	}
	for _, q := range r.rotateQueries() {
		if row, ok := vsGo(q.Title, r.findRotation("decoy", q.ID), r.findRotation("nethttp", q.ID)); ok {
			rows = append(rows, row)
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
			best, name := 0.0, ""
			for _, o := range []string{"json-server", "mockoon"} {
				if x := r.find(sz, o, q.ID); x.measured() && x.ReqPerSec > best {
					best, name = x.ReqPerSec, displayNames[o]
				}
			}
			if best > 0 {
				v := d.ReqPerSec / best
				rows = append(rows, targetRow{fmt.Sprintf("%s records, %s: ≥ %d× the faster of json-server and Mockoon", sz.Label, q.Title, queryVsOthers),
					fmt.Sprintf("%s× (%s)", formatFactor(v), name), v >= queryVsOthers})
			}
		}
	}
	if m := r.Memory; m != nil && m.PeakRSS > 0 {
		rows = append(rows, targetRow{fmt.Sprintf("peak RSS loading %s and serving every query: ≤ %d× the documents", sizeList(m.Sizes), memoryBudget),
			fmt.Sprintf("%s× (%s for %s)", formatFactor2(m.ratio()), formatBytes(m.PeakRSS), formatBytes(m.DocBytes)), m.ratio() <= memoryBudget && m.Status == "ok"})
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
		rows = append(rows, targetRow{sz.Label + " records: every query answers", v, len(failed) == 0})
	}
	rows = append(rows, routesTargetRows(r)...)
	return append(rows, writesTargetRows(r)...)
}

// writeTargets writes a table of the targets, what this run measured for
// each, and whether it was met.
func writeTargets(w io.Writer, r *report) {
	rows := targetRows(r)
	if len(rows) == 0 {
		return
	}
	met := 0
	for _, row := range rows {
		if row.met {
			met++
		}
	}
	fmt.Fprintf(w, "## Targets\n\nEach from this run's numbers: %d of %d met.", met, len(rows))
	if ownRows := len(routesTargetRows(r)) + len(writesTargetRows(r)); len(rows) > ownRows {
		fmt.Fprintf(w, " Decoy against nginx serving the same bytes to the same client: at least %.1f× nginx's req/s for answers of %s or more (uncompressed, whether sent plain or gzipped), at least %.1f× for smaller ones. In brackets, where it ran: Go's net/http alone sending the same bytes, against nginx (see bench/nethttp): how much of the distance to nginx is net/http's own. Decoy against Go's net/http alone sending the same bytes with the same headers: at least %.1f× its req/s for every answer.",
			largeVsNginx, formatBytes(largeAnswer), smallVsNginx, vsNetHTTP)
	}
	if len(r.Routes) > 0 {
		fmt.Fprintf(w, " Routes: Decoy against itself, the req/s of a routed read over the same read at /mock/{id}, and in a project of %s routes over one of %d, and through a route of %d rules over one without (see the Routes section).", commas(routesLarge), routesSmall, routesRules)
	}
	if r.Writes != nil {
		fmt.Fprintf(w, " Writes: Decoy's PATCHes against json-server's, and a small read while a writer runs and after %s writes against the same read alone and before any (see the Writes section).", commas(writesAfter))
	}
	fmt.Fprintf(w, "\n\n| target | measured | met |\n|---|--:|:-:|\n")
	for _, row := range rows {
		mark := "yes"
		if !row.met {
			mark = "**no**"
		}
		fmt.Fprintf(w, "| %s | %s | %s |\n", strings.ReplaceAll(row.what, "|", "\\|"), row.measured, mark)
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
	fmt.Fprintf(w, "One process: started empty, each document uploaded through the admin API, then every query on every document, asked by %s clients, at %d connections for %s each. Peak RSS is VmHWM (never reset) and the largest RSS sampled every 50 ms.\n\n", memoryClientList(m), r.Config.Conns, r.Config.MemoryEach)
	fmt.Fprintf(w, "| documents | peak RSS | ÷ documents | after loading | at the end | loading took | status |\n|--:|--:|--:|--:|--:|--:|---|\n")
	status := m.Status
	if m.Note != "" {
		status += ": " + m.Note
	}
	fmt.Fprintf(w, "| %s | %s | %s× | %s | %s | %.2f s | %s |\n\n", formatBytes(m.DocBytes), formatBytes(m.PeakRSS),
		formatFactor2(m.ratio()), formatBytes(m.AfterLoad), formatBytes(m.AtEnd), m.LoadSeconds, status)
	if p := m.AtEndParts; p != nil {
		fmt.Fprintf(w, "At the end, the RSS was %s of the binary's own pages (its code and tables, mapped from its file), %s of the documents' files (mapped), %s of other files (shared libraries) and %s anonymous (the Go heap, goroutine stacks, the runtime's own).\n\n",
			formatBytes(p.Binary), formatBytes(p.Documents), formatBytes(p.OtherFiles), formatBytes(p.Anonymous))
	}
}

// memoryClientList names the clients of the memory phase; runs from before
// it recorded them asked plain clients only.
func memoryClientList(m *memoryResult) string {
	names := map[string]string{"plain": "plain (no Accept-Encoding)", "gzip": "gzip (Accept-Encoding: " + browserAcceptEncoding + ")"}
	if len(m.Clients) == 0 {
		return names["plain"]
	}
	var s []string
	for _, c := range m.Clients {
		s = append(s, cmp.Or(names[c], c))
	}
	return strings.Join(s, " and ")
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
