//go:build linux

package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/decoy-mock/decoy"
	adminclient "github.com/decoy-mock/decoy/client"
	"github.com/decoy-mock/decoy/importer"
	"github.com/decoy-mock/decoy/internal/dataset"
)

// The routes phase (§11 of the contract): one Decoy holding the users
// document twice, as a mock of the default project served by the routes
// GET /users and GET /users/{id}, and GET /ruled, a route of routesRules
// rules none of which holds (§13.1), and as a mock of a second project
// whose routesLarge routes (as many others, and GET /users and GET
// /users/{id}) come in one import. The same small query is read at
// /mock/{id} and through each project's /users and /ruled, and one record
// through each /users/{id}, by the same load generator, the reads taking
// turns in rounds: what a route costs, what 10,000 of them cost, and what
// 20 rules cost are ratios within one run.

const (
	// routesRecords is the records of the phase's document.
	routesRecords = 1000
	// routesSmall and routesLarge are the routes of the two projects.
	routesSmall = 3
	routesLarge = 10_000
	// routesRules is the rules of the default project's GET /ruled.
	routesRules = 20
	// routesQuery is the query read through the collection routes.
	routesQuery = "?order_by=age&limit=10"
	// routesItem is the id of the record read through the item routes.
	routesItem = 500
	// The targets: a routed read at least routedVsMock of the same read
	// at /mock/{id} (§11.4), and in the large project at least
	// largeVsSmall of the same read in the small one (§11.3); through a
	// route of routesRules rules at least rulesVsNone of the same read
	// through one without (the rules issue).
	routedVsMock = 0.95
	largeVsSmall = 0.9
	rulesVsNone  = 0.9
)

// routeKinds are the reads of the phase, in the order they are reported
// (and measured in a round, from a read that changes each round). Each
// is read by every client of the phase.
var routeKinds = []struct{ id, title string }{
	{"mock", "/mock/{id}" + routesQuery},
	{"small", fmt.Sprintf("/p/default/users%s, a project of %d routes", routesQuery, routesSmall)},
	{"large", fmt.Sprintf("/p/{slug}/users%s, a project of %s routes", routesQuery, commas(routesLarge))},
	{"item-small", fmt.Sprintf("/p/default/users/%d, a project of %d routes", routesItem, routesSmall)},
	{"item-large", fmt.Sprintf("/p/{slug}/users/%d, a project of %s routes", routesItem, commas(routesLarge))},
	{"rules", fmt.Sprintf("/p/default/ruled%s, a route of %d rules, none holding", routesQuery, routesRules)},
}

// Indexes into routeKinds.
const (
	routeMock = iota
	routeSmall
	routeLarge
	routeItemSmall
	routeItemLarge
	routeRules
)

// routesQueryOf is read k of the phase as client c asks it.
func routesQueryOf(k int, c client) query {
	return variant(query{ID: "routes-" + routeKinds[k].id, Title: routeKinds[k].title}, c)
}

// routesTargets are the paths of the phase's reads, in routeKinds order:
// mockID is the default project's mock, slug the large project's.
func routesTargets(mockID, slug string) []string {
	item := "/users/" + strconv.Itoa(routesItem)
	return []string{
		"/mock/" + mockID + routesQuery,
		"/p/default/users" + routesQuery,
		"/p/" + slug + "/users" + routesQuery,
		"/p/default" + item,
		"/p/" + slug + item,
		"/p/default/ruled" + routesQuery,
	}
}

func (b *bench) runRoutes(ctx context.Context) {
	cs := rotateClients(b.cfg) // open mocks: no private client
	sz := size{N: routesRecords, Label: sizeLabel(routesRecords)}
	logf("== routes: the same reads at /mock/{id}, in a project of %d routes and in one of %s", routesSmall, commas(routesLarge))
	failAll := func(note string) {
		for _, c := range cs {
			for k := range routeKinds {
				q := routesQueryOf(k, c)
				b.routes = append(b.routes, result{Size: sz, Server: "decoy", Query: q.ID, Status: "failed", Note: note})
			}
		}
		logf("   decoy routes: failed: %s", note)
	}
	if err := b.tools.missing["decoy"]; err != nil {
		failAll(err.Error())
		return
	}
	p, addr, targets, err := b.startRoutesDecoy(ctx)
	if err != nil {
		failAll(err.Error())
		return
	}
	defer p.stop()
	rounds := max(b.cfg.RoutesRounds, 1)
	for _, c := range cs {
		if ctx.Err() != nil {
			return
		}
		// Every answer is checked before any load.
		ans, err := rotationAnswers(ctx, addr, targets, c, b.cfg.Timeout, 0)
		checks := make([]routeCheck, len(routeKinds))
		if err == nil {
			checks = checkRoutes(ans)
		}
		rows := make([]*result, len(routeKinds)) // nil: not loaded
		for k := range routeKinds {
			q := routesQueryOf(k, c)
			r := result{Size: sz, Server: "decoy", Query: q.ID, Status: "ok", Target: targets[k]}
			if err := cmp.Or(err, checks[k].err); err != nil {
				r.Status, r.Note = "failed", err.Error()
				logf("   decoy %s: failed: %s", q.ID, r.Note)
				b.routes = append(b.routes, r)
				continue
			}
			r.Records, r.SameAsRef, r.Note = checks[k].records, checks[k].same, checks[k].note
			r.BodyBytes = int64(len(ans.plain[k]))
			if ans.encoding[k] != "" {
				r.WireBytes = int64(len(ans.wire[k]))
			}
			rows[k] = &r
		}
		// The reads take turns, a window of each per round, so that what
		// else runs on the machine weighs on each about alike; and each
		// round starts one read further on, so that each read comes first
		// as often as the others, just after -wait-quiet found the
		// machine quiet (which it seldom stays).
		windows := make([][]result, len(routeKinds))
		for round := 0; round < rounds && ctx.Err() == nil; round++ {
			if rounds > 1 {
				logf("   %s client: round %d of %d", c.ID, round+1, rounds)
			}
			b.waitQuiet(ctx)
			for _, k := range roundOrder(round, len(rows)) {
				r := rows[k]
				if r == nil || ctx.Err() != nil {
					continue
				}
				w := *r
				b.measureFor(ctx, p, addr, []string{r.Target}, headerLines(c.headers("")), &w, b.cfg.Duration/time.Duration(rounds))
				windows[k] = append(windows[k], w)
			}
		}
		for k := range rows {
			if len(windows[k]) > 0 { // also when interrupted: what was measured is reported
				r := mergeWindows(windows[k])
				logResult(&r)
				b.routes = append(b.routes, r)
			}
		}
	}
}

// roundOrder is the order n reads take in round: from read round mod n
// on, around.
func roundOrder(round, n int) []int {
	order := make([]int, n)
	for i := range order {
		order[i] = (round + i) % n
	}
	return order
}

// statusRank orders a row's statuses from the best to the worst.
var statusRank = map[string]int{"ok": 0, "limited": 1, "errors": 2, "timeout": 3, "failed": 4}

// mergeWindows is one row of the measurements of the same read in several
// windows: their answers, bytes and latencies counted together over their
// time, the CPU used in each weighed by its length, the highest peaks,
// the worst status and every note.
func mergeWindows(windows []result) result {
	m := windows[0]
	lr := &loadResult{}
	var secs, server, load, others, iowait float64
	var notes []string
	for _, w := range windows {
		if l := w.Load; l != nil {
			lr.OK, lr.Limited, lr.Errors, lr.Timeouts = lr.OK+l.OK, lr.Limited+l.Limited, lr.Errors+l.Errors, lr.Timeouts+l.Timeouts
			lr.Bytes, lr.InWindow, lr.Elapsed = lr.Bytes+l.Bytes, lr.InWindow+l.InWindow, lr.Elapsed+l.Elapsed
			lr.FirstErr = cmp.Or(lr.FirstErr, l.FirstErr)
			lr.hist.merge(&l.hist)
			s := l.Elapsed.Seconds()
			secs += s
			server, load, others, iowait = server+w.ServerCPU*s, load+w.LoadCPU*s, others+w.OtherCPU*s, iowait+w.IOWait*s
		}
		m.PeakRSS, m.MaxRSS = max(m.PeakRSS, w.PeakRSS), max(m.MaxRSS, w.MaxRSS)
		if statusRank[w.Status] > statusRank[m.Status] {
			m.Status = w.Status
		}
		for _, n := range strings.Split(w.Note, "; ") {
			if n != "" && !slices.Contains(notes, n) {
				notes = append(notes, n)
			}
		}
	}
	m.Note = strings.Join(notes, "; ")
	if secs > 0 {
		m.ServerCPU, m.LoadCPU, m.OtherCPU, m.IOWait = server/secs, load/secs, others/secs, iowait/secs
	}
	m.Load = lr
	m.ReqPerSec = lr.rate()
	m.P50, m.P99 = ms(lr.hist.quantile(0.50)), ms(lr.hist.quantile(0.99))
	return m
}

// startRoutesDecoy starts the phase's Decoy on an empty data folder and
// makes its two projects, and returns the paths of the phase's reads.
func (b *bench) startRoutesDecoy(ctx context.Context) (*proc, string, []string, error) {
	port, err := freePort()
	if err != nil {
		return nil, "", nil, err
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	p, err := startProc("decoy", filepath.Join(b.work, "logs", "decoy-routes.log"), b.work, b.tools.decoy, "serve",
		"--addr", addr, "--data-dir", filepath.Join(b.work, "decoy-data-routes"), "--admin-token", adminToken,
		"--rate-limit", "0", "--monthly-quota", "0", "--max-routes", strconv.Itoa(routesLarge), "--log-level", "warn")
	if err != nil {
		return nil, "", nil, err
	}
	sctx, cancel := context.WithTimeout(ctx, b.cfg.StartTimeout)
	defer cancel()
	t0 := time.Now()
	if err := waitReady(sctx, p, "http://"+addr+"/readyz"); err != nil {
		p.stop()
		return nil, "", nil, err
	}
	mockID, slug, err := makeRoutesProjects(sctx, adminclient.New("http://"+addr, adminToken))
	if err != nil {
		p.stop()
		return nil, "", nil, err
	}
	logf("   decoy: both projects made %.1f s after start, RSS %s; the large one's slug is %s", time.Since(t0).Seconds(), formatBytes(p.memory("VmRSS")), slug)
	return p, addr, routesTargets(mockID, slug), nil
}

// makeRoutesProjects makes the phase's projects through the admin API: the
// users document as a mock of the default project with its two routes,
// created one by one; and a new project, its routesLarge routes and its own
// copy of the document imported in one transaction as a Decoy export. It
// returns the default project's mock id and the new project's slug.
func makeRoutesProjects(ctx context.Context, ac *adminclient.Client) (mockID, slug string, err error) {
	doc := dataset.Users(routesRecords)
	m, err := ac.CreateMock(ctx, bytes.NewReader(doc), adminclient.CreateOptions{
		ID: benchID("routes-small"), Name: "routes-small", ProjectID: decoy.DefaultProjectID})
	if err != nil {
		return "", "", fmt.Errorf("creating the default project's mock: %w", err)
	}
	for _, path := range []string{"/users", "/users/{id}", "/ruled"} {
		in := map[string]any{"method": http.MethodGet, "path": path, "mock_id": m.ID}
		if path == "/ruled" {
			in["rules"] = benchRules(routesRules)
		}
		if err := ac.Do(ctx, http.MethodPost, "/admin/v1/projects/"+decoy.DefaultProjectID+"/routes", in, nil); err != nil {
			return "", "", fmt.Errorf("creating the route GET %s: %w", path, err)
		}
	}
	var proj struct {
		ID   string `json:"id"`
		Slug string `json:"slug"`
	}
	if err := ac.Do(ctx, http.MethodPost, "/admin/v1/workspaces/"+decoy.DefaultWorkspaceID+"/projects",
		map[string]string{"name": "routes " + sizeLabel(routesLarge)}, &proj); err != nil {
		return "", "", fmt.Errorf("creating the large project: %w", err)
	}
	if proj.ID == "" || proj.Slug == "" {
		return "", "", fmt.Errorf("creating the large project: no id or slug in the answer")
	}
	export, err := routesExport(benchID("routes-large"), doc, routesLarge)
	if err != nil {
		return "", "", err
	}
	t0 := time.Now()
	res, err := ac.Import(ctx, proj.ID, bytes.NewReader(export), adminclient.ImportOptions{Format: importer.FormatDecoy})
	if err != nil {
		return "", "", fmt.Errorf("importing %s routes: %w", commas(routesLarge), err)
	}
	if len(res.Created) != 1 || len(res.Routes) != routesLarge {
		return "", "", fmt.Errorf("the import made %d mocks and %d routes, not 1 and %d", len(res.Created), len(res.Routes), routesLarge)
	}
	logf("   decoy: %s routes imported in %.1f s", commas(routesLarge), time.Since(t0).Seconds())
	return m.ID, proj.Slug, nil
}

// benchRules are n rules none of which holds for the phase's reads, so
// that each read is asked all n (§13.1): conditions on the method and a
// query parameter, on two headers, on a query parameter and another, and
// on the body (a GET has none), in turn; each answer other than the
// route's, a status or a body.
func benchRules(n int) []map[string]any {
	rules := make([]map[string]any, n)
	for i := range rules {
		switch i % 4 {
		case 0:
			rules[i] = map[string]any{"when": fmt.Sprintf("method=POST&query.page=%d", i), "status": 503}
		case 1:
			rules[i] = map[string]any{"when": fmt.Sprintf("header.x-scenario=case-%d&header.accept-encoding[$eqi]=none", i), "status": 503}
		case 2:
			rules[i] = map[string]any{"when": fmt.Sprintf("query.order_by[$ne]=age&query.x=%d", i), "body": map[string]int{"n": i}}
		default:
			rules[i] = map[string]any{"when": fmt.Sprintf("body.kind=k%d", i), "times": 3, "status": 500}
		}
	}
	return rules
}

// routesExport is a Decoy export of one mock, id holding doc, and n routes
// reading it: n-2 at /r{i}/things/{id}, then GET /users and GET
// /users/{id}, last, so that they are the last a table built in creation
// order adds.
func routesExport(id string, doc []byte, n int) ([]byte, error) {
	var buf bytes.Buffer
	ew := importer.NewExportWriter(&buf, "routes", time.Now())
	err := ew.Add(importer.ManifestMock{ID: id, Name: "routes-large", ContentType: "application/json", Status: http.StatusOK},
		int64(len(doc)), bytes.NewReader(doc))
	if err != nil {
		return nil, err
	}
	add := func(path string) {
		ew.AddRoute(importer.ManifestRoute{Method: http.MethodGet, Path: path, MockID: id, Action: decoy.ActionRead})
	}
	for i := range n - 2 {
		add("/r" + strconv.Itoa(i) + "/things/{id}")
	}
	add("/users")
	add("/users/{id}")
	if err := ew.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// routeCheck is what the check before the load found of one read.
type routeCheck struct {
	records int
	// same: for the routed collection reads, the same bytes as the read
	// at /mock/{id}, as the client got them; for the large project's
	// item, the same as the small one's. Nil for the reference reads.
	same *bool
	note string
	err  error // the read is not the one the phase measures: not loaded
}

// checkRoutes checks the answers of the phase's reads, fetched plain and
// as one client in routeKinds order: the routed collection reads must
// answer the bytes /mock/{id} answers (the records it selected, or the
// read is not the same read); each item read one record, the one asked
// for, the same in both projects. As the client got them, an answer that
// differs only in its compressed bytes is marked, not refused.
func checkRoutes(a *rotateAnswers) []routeCheck {
	checks := make([]routeCheck, len(routeKinds))
	var recs []json.RawMessage
	if err := json.Unmarshal(a.plain[routeMock], &recs); err != nil {
		checks[routeMock].err = fmt.Errorf("/mock/{id} answered no JSON array: %w", err)
	}
	checks[routeMock].records = len(recs)
	for _, k := range []int{routeSmall, routeLarge, routeRules} {
		c := &checks[k]
		c.records = len(recs)
		switch {
		case checks[routeMock].err != nil:
			c.err = fmt.Errorf("not compared: %w", checks[routeMock].err)
		case !bytes.Equal(a.plain[k], a.plain[routeMock]):
			c.err = fmt.Errorf("answered %d bytes that differ from the %d bytes /mock/{id} answered", len(a.plain[k]), len(a.plain[routeMock]))
		default:
			c.same = sameWire(a, k, routeMock, &c.note, "/mock/{id}")
		}
	}
	for _, k := range []int{routeItemSmall, routeItemLarge} {
		var rec struct {
			ID json.Number `json:"id"`
		}
		c := &checks[k]
		if err := json.Unmarshal(a.plain[k], &rec); err != nil {
			c.err = fmt.Errorf("answered no record: %w", err)
			continue
		}
		if rec.ID.String() != strconv.Itoa(routesItem) {
			c.err = fmt.Errorf("answered the record %q, not %d", rec.ID, routesItem)
			continue
		}
		c.records = 1
	}
	if checks[routeItemSmall].err == nil && checks[routeItemLarge].err == nil {
		c := &checks[routeItemLarge]
		if !bytes.Equal(a.plain[routeItemLarge], a.plain[routeItemSmall]) {
			c.err = fmt.Errorf("answered %d bytes that differ from the %d bytes of the project of %d routes", len(a.plain[routeItemLarge]), len(a.plain[routeItemSmall]), routesSmall)
		} else {
			c.same = sameWire(a, routeItemLarge, routeItemSmall, &c.note, fmt.Sprintf("the project of %d routes", routesSmall))
		}
	}
	return checks
}

// sameWire says whether answers k and ref reached the client the same
// way, and notes how they differ when not.
func sameWire(a *rotateAnswers, k, ref int, note *string, refName string) *bool {
	same := a.encoding[k] == a.encoding[ref] && bytes.Equal(a.wire[k], a.wire[ref])
	if !same {
		*note = fmt.Sprintf("sent %d bytes (%s) where %s sent %d (%s)", len(a.wire[k]), encodingName(a.encoding[k]), refName, len(a.wire[ref]), encodingName(a.encoding[ref]))
	}
	return &same
}

func encodingName(enc string) string {
	if enc == "" {
		return "uncompressed"
	}
	return enc
}

// routesRatio is one comparison of the phase: read k's req/s over read
// ref's, and what it must reach.
type routesRatio struct {
	k, ref int
	want   float64
}

// routesRatios are the phase's targets, for each client: the routed read
// against the same read at /mock/{id}; in the large project against the
// small one, for the collection and for the item.
var routesRatios = []routesRatio{
	{routeSmall, routeMock, routedVsMock},
	{routeLarge, routeSmall, largeVsSmall},
	{routeItemLarge, routeItemSmall, largeVsSmall},
	{routeRules, routeSmall, rulesVsNone},
}

// of is read x's req/s over read ref's, and whether it meets the target:
// a row with errors does not, whatever its rate. ok is false when either
// was not measured.
func (r routesRatio) of(x, ref *result) (v float64, met, ok bool) {
	if !x.measured() || !ref.measured() {
		return 0, false, false
	}
	v = x.ReqPerSec / ref.ReqPerSec
	return v, v >= r.want && x.Status == "ok" && ref.Status == "ok", true
}

// what names the comparison r, for client c.
func (r routesRatio) what(c client) string {
	on := ""
	if c.ID != "plain" {
		on = ", " + c.ID
	}
	switch {
	case r.k == routeRules:
		return fmt.Sprintf("routes%s: /p/default/ruled%s, a route of %d rules, none holding: ≥ %.1f× the same read through /users, without", on, routesQuery, routesRules, r.want)
	case r.ref == routeMock:
		return fmt.Sprintf("routes%s: /p/default/users%s, a project of %d routes: ≥ %.2f× the same read at /mock/{id}", on, routesQuery, routesSmall, r.want)
	case r.ref == routeSmall:
		return fmt.Sprintf("routes%s: /users%s in a project of %s routes: ≥ %.1f× in one of %d", on, routesQuery, commas(routesLarge), r.want, routesSmall)
	}
	return fmt.Sprintf("routes%s: /users/%d in a project of %s routes: ≥ %.1f× in one of %d", on, routesItem, commas(routesLarge), r.want, routesSmall)
}

// routesTargetRows are the phase's targets with what this run measured.
// A row with errors does not meet its target, whatever its rate.
func routesTargetRows(r *report) []targetRow {
	var rows []targetRow
	for _, c := range rotateClients(r.Config) {
		for _, rr := range routesRatios {
			x, ref := r.findRoutes(routesQueryOf(rr.k, c).ID), r.findRoutes(routesQueryOf(rr.ref, c).ID)
			v, met, ok := rr.of(x, ref)
			if !ok {
				continue
			}
			row := targetRow{what: rr.what(c), measured: formatRatio3(v) + "×", met: met}
			for _, y := range []*result{x, ref} {
				if y.Status != "ok" {
					row.measured += fmt.Sprintf(" (%s: %s)", routeKinds[routeIndex(y.Query)].id, y.Status)
				}
			}
			rows = append(rows, row)
		}
	}
	return rows
}

// roundsNote says how the phase's reads were measured.
func roundsNote(cfg *config) string {
	if cfg.RoutesRounds <= 1 {
		return fmt.Sprintf("Each read is measured for %v after a warm-up of %v, one after the other.", cfg.Duration, cfg.Warmup)
	}
	return fmt.Sprintf("The reads take turns: in each of %d rounds, each read is measured for %v after a warm-up of %v, each round starting one read further on, and its row counts its %d windows together (%v), so that what else runs on the machine weighs on every read about alike.",
		cfg.RoutesRounds, cfg.Duration/time.Duration(cfg.RoutesRounds), cfg.Warmup, cfg.RoutesRounds, cfg.Duration)
}

// formatRatio3 prints a ratio of the phase with three decimals: its
// targets sit at 0.95 and 0.9, and 0.949 printed 0.95 would read as met.
func formatRatio3(v float64) string { return fmt.Sprintf("%.3f", v) }

// routeIndex is the index in routeKinds of a query of the phase.
func routeIndex(queryID string) int {
	id := strings.TrimPrefix(strings.SplitN(queryID, ".", 2)[0], "routes-")
	for k, rk := range routeKinds {
		if rk.id == id {
			return k
		}
	}
	return -1
}

// findRoutes returns the phase's row of a query, if it ran.
func (r *report) findRoutes(queryID string) *result {
	for i := range r.Routes {
		if r.Routes[i].Query == queryID {
			return &r.Routes[i]
		}
	}
	return nil
}

// writeRoutes writes the rows of the routes phase, with the ratios its
// targets are on.
func writeRoutes(w io.Writer, r *report) {
	if len(r.Routes) == 0 {
		return
	}
	fmt.Fprintf(w, "## Routes: the same read at /mock/{id}, in a project of %d routes and in one of %s\n\n", routesSmall, commas(routesLarge))
	fmt.Fprintf(w, "One Decoy, `--rate-limit 0 --monthly-quota 0 --max-routes %d`, holding %s users records twice: as a mock of the default project (slug `default`) with the routes `GET /users`, `GET /users/{id}` and `GET /ruled`, a route of %d rules none of which holds the phase's reads (on the method, the query, headers and the body: each read is asked all %d), made through the admin API; and as a mock of a second project with %s routes (%s at `/r{i}/things/{id}`, then `GET /users` and `GET /users/{id}`), made by one import of a Decoy export. %s Before the load each answer is fetched plain and as the client asks it: the routed reads of the query answer the bytes `/mock/{id}` answers (✓: also as the client got them), and each item read answers the record with id %d (✓: the same in both projects). Targets: a routed read at least %.2f× the req/s of the same read at `/mock/{id}`; in the project of %s routes at least %.1f× the same read in the project of %d (the item has no `/mock/{id}` twin); through the route of %d rules at least %.1f× the same read through `/users`.\n\n",
		routesLarge, commas(routesRecords), routesRules, routesRules, commas(routesLarge), commas(routesLarge-2), roundsNote(r.Config), routesItem, routedVsMock, commas(routesLarge), largeVsSmall, routesSmall, routesRules, rulesVsNone)
	fmt.Fprintf(w, "| read | answer | req/s | p50 ms | p99 ms | CPU µs/req | req/s ÷ | CPU µs/req ÷ | target | met |\n|---|---|--:|--:|--:|--:|---|--:|--:|:-:|\n")
	var notes []string
	for _, c := range rotateClients(r.Config) {
		for k := range routeKinds {
			q := routesQueryOf(k, c)
			x := r.findRoutes(q.ID)
			if x == nil {
				continue
			}
			status := ""
			if x.Status != "ok" {
				status = " (" + x.Status + ")"
			}
			note := x.Note
			if x.OtherCPU >= busyCores || x.IOWait >= busyCores {
				status += " ⚠"
				note = join(note, fmt.Sprintf("meanwhile other processes on the machine used %.2f cores, and %.2f cores sat waiting on the disk", x.OtherCPU, x.IOWait))
			}
			if note != "" {
				notes = append(notes, q.Title+": "+note)
				status += fmt.Sprintf(" (%d)", len(notes))
			}
			if !x.measured() {
				fmt.Fprintf(w, "| %s | %s | –%s | | | | | | | |\n", q.Title, answerCell(x), status)
				continue
			}
			vs, cpu, target, met := "", "", "", ""
			for _, rr := range routesRatios {
				if rr.k != k {
					continue
				}
				ref := r.findRoutes(routesQueryOf(rr.ref, c).ID)
				v, ok, measured := rr.of(x, ref)
				if !measured {
					break
				}
				vs = fmt.Sprintf("%s× %s", formatRatio3(v), routeKinds[rr.ref].id)
				cpu = ratioOf(x, ref, (*result).cpuPerRequest)
				target, met = fmt.Sprintf("≥ %.2f×", rr.want), "yes"
				if !ok {
					met = "**no**"
				}
			}
			if k == routeLarge {
				// Beside its target, the large project's read against
				// /mock/{id} too.
				if m := r.findRoutes(routesQueryOf(routeMock, c).ID); m.measured() {
					vs += fmt.Sprintf("; %s× mock", formatRatio3(x.ReqPerSec/m.ReqPerSec))
				}
			}
			micros := "–"
			if v := x.cpuPerRequest(); v > 0 {
				micros = formatMicros(v)
			}
			fmt.Fprintf(w, "| %s | %s | %s%s | %.2f | %.2f | %s | %s | %s | %s | %s |\n", q.Title, answerCell(x), commas(int64(x.ReqPerSec)), status,
				x.P50, x.P99, micros, vs, cpu, target, met)
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
