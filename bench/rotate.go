//go:build linux

package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/decoy-mock/decoy/internal/dataset"
)

// The many-mocks phase: a Decoy holding -rotate-mocks small mocks, with its
// rate limiter and monthly quota on, read round-robin (each request takes
// the next mock from a counter the connections share), and nginx and
// nethttp serving the same answers as as many files, rotated the same way.
//
// Decoy's default rate limit, 100 a minute per mock, admits 100,000
// requests a minute over 1,000 mocks: less than Decoy answers in a
// measurement's warm-up and window, and a 429 costs less than an answer, so
// a mix of both would flatter it. The per-mock limit is therefore raised
// (-rotate-rate-limit, 100,000 a minute by default), never reached, but
// still a limit: every request goes through the limiter and reserves its
// monthly quota, which stays the default 50,000 a mock. Each measurement
// gets a Decoy started on an empty data folder, so that no quota count
// carries over; 429s are counted apart from the answers all the same.

// Decoy's defaults per mock: requests a minute, answers a month. The
// many-mocks phase checks that the quota is in force.
const (
	defaultRateLimit    = 100
	defaultMonthlyQuota = 50_000
)

// rotateQuery is the many-mocks query as client c asks it.
func rotateQuery(cfg *config, c client) query {
	q := query{ID: "rotate", Title: fmt.Sprintf("%s mocks of %d records, round-robin", commas(int64(cfg.RotateMocks)), cfg.RotateRecords)}
	return variant(q, c)
}

// rotateClients are the selected clients but the private one: the mocks of
// this phase are open ones.
func rotateClients(cfg *config) []client {
	var cs []client
	for _, id := range cfg.Clients {
		if c, ok := clientByID(id); ok && !c.Token {
			cs = append(cs, c)
		}
	}
	if len(cfg.Clients) == 0 {
		cs = append(cs, clients[0])
	}
	return cs
}

// rotateAnswers are Decoy's answers to every mock of the phase, as one
// client got them, which the floors' are checked against.
type rotateAnswers struct {
	plain, wire         [][]byte
	encoding            []string
	plainHead, wireHead []http.Header // the headers sent with plain and wire
}

func (b *bench) runRotation(ctx context.Context) {
	measureDecoy := slices.Contains(b.cfg.Servers, "decoy")
	withFloor := b.floorWanted()
	cs := rotateClients(b.cfg)
	if !measureDecoy && !withFloor || len(cs) == 0 {
		return
	}
	n, per := b.cfg.RotateMocks, b.cfg.RotateRecords
	sz := size{N: per, Label: sizeLabel(per)}
	logf("== %s mocks of %d records each, read round-robin", commas(int64(n)), per)
	// Distinct documents: one users array of n×per records, cut up.
	docs, err := splitRecords(dataset.Users(n*per), per)
	if err == nil && len(docs) != n {
		err = fmt.Errorf("%d documents cut, not %d", len(docs), n)
	}
	ids := make([]string, n)
	decoyTargets, floorTargets := make([]string, n), make([]string, n)
	for i := range ids {
		ids[i] = benchID("rotate-" + strconv.Itoa(i))
		decoyTargets[i] = "/mock/" + ids[i]
		floorTargets[i] = "/" + rotateFloor(i)
	}
	fail := func(server string, q query, status, note string) {
		logf("   %s %s: %s: %s", server, q.ID, status, note)
		if server == "decoy" && !measureDecoy {
			return
		}
		b.rotation = append(b.rotation, result{Size: sz, Server: server, Query: q.ID, Status: status, Note: note})
	}
	if err != nil {
		for _, c := range cs {
			fail("decoy", rotateQuery(b.cfg, c), "failed", err.Error())
		}
		return
	}

	ref := map[string]*rotateAnswers{}
	for _, c := range cs {
		if ctx.Err() != nil {
			return
		}
		q := rotateQuery(b.cfg, c)
		r := result{Size: sz, Server: "decoy", Query: q.ID, Status: "ok", Records: per,
			Target: fmt.Sprintf("/mock/{each of %d ids}", n)}
		p, addr, err := b.startRotationDecoy(ctx, docs, ids, c)
		if err != nil {
			fail("decoy", q, "failed", err.Error())
			continue
		}
		ans, err := rotationAnswers(ctx, addr, decoyTargets, c, b.cfg.Timeout, b.cfg.RotateRateLimit)
		if err == nil {
			for i, doc := range docs {
				if !bytes.Equal(ans.plain[i], doc) {
					err = fmt.Errorf("mock %s answered %d bytes that differ from its %d-byte document", ids[i], len(ans.plain[i]), len(doc))
					break
				}
			}
		}
		if err == nil && withFloor {
			err = writeRotationFloor(filepath.Join(b.work, "www"), ans)
		}
		if err != nil {
			p.stop()
			fail("decoy", q, "failed", err.Error())
			continue
		}
		ref[q.ID] = ans
		r.BodyBytes, r.WireBytes = ans.meanSizes()
		if measureDecoy {
			b.measure(ctx, p, addr, decoyTargets, headerLines(c.headers("")), &r)
			b.rotation = append(b.rotation, r)
			logResult(&r)
		}
		p.stop()
	}

	for _, server := range serverNames {
		if servesFloor(server) && slices.Contains(b.cfg.Servers, server) && ctx.Err() == nil {
			b.runRotationFloor(ctx, server, sz, cs, ref, floorTargets, fail)
		}
	}
}

// runRotationFloor measures a server of the floor files (nginx, nethttp)
// serving Decoy's answers of the phase's mocks, rotated as Decoy's were.
func (b *bench) runRotationFloor(ctx context.Context, server string, sz size, cs []client, ref map[string]*rotateAnswers, targets []string, fail func(string, query, string, string)) {
	if err := b.tools.missing[server]; err != nil {
		for _, c := range cs {
			fail(server, rotateQuery(b.cfg, c), "failed", err.Error())
		}
		return
	}
	port, err := freePort()
	var p *proc
	if err == nil {
		// start reads only the dataset's label of the floor's data, for
		// its log.
		p, _, err = b.start(ctx, server, &dataFiles{size: size{Label: "rotate"}}, port, false)
	}
	if err != nil {
		for _, c := range cs {
			fail(server, rotateQuery(b.cfg, c), "failed", "did not start: "+err.Error())
		}
		return
	}
	defer p.stop()
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	for _, c := range cs {
		if ctx.Err() != nil {
			return
		}
		q := rotateQuery(b.cfg, c)
		want := ref[q.ID]
		if want == nil {
			fail(server, q, "failed", "no answers from Decoy to serve")
			continue
		}
		r := result{Size: sz, Server: server, Query: q.ID, Status: "ok", Records: sz.N,
			Target: fmt.Sprintf("/floor/rotate/{0 to %d}.json", len(targets)-1)}
		got, err := rotationAnswers(ctx, addr, targets, c, b.cfg.Timeout, 0)
		if err != nil {
			fail(server, q, "failed", err.Error())
			continue
		}
		same := got.same(want)
		r.SameAsRef = &same
		if !same {
			r.Note = "answers differ from Decoy's (plain or as the client got them)"
		}
		r.BodyBytes, r.WireBytes = got.meanSizes()
		b.measure(ctx, p, addr, targets, headerLines(c.headers("")), &r)
		b.rotation = append(b.rotation, r)
		logResult(&r)
	}
}

// rotateFloor is where nginx and nethttp serve the answer of the phase's
// mock i.
func rotateFloor(i int) string { return "floor/rotate/" + strconv.Itoa(i) + ".json" }

// startRotationDecoy starts a Decoy on an empty data folder with the
// phase's rate limit and the default monthly quota, and creates the mocks.
func (b *bench) startRotationDecoy(ctx context.Context, docs [][]byte, ids []string, c client) (*proc, string, error) {
	if err := b.tools.missing["decoy"]; err != nil {
		return nil, "", err
	}
	port, err := freePort()
	if err != nil {
		return nil, "", err
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	p, err := startProc("decoy", filepath.Join(b.work, "logs", "decoy-rotate-"+c.ID+".log"), b.work, b.tools.decoy,
		"serve", "--addr", addr, "--data-dir", filepath.Join(b.work, "decoy-data-rotate-"+c.ID),
		"--admin-token", adminToken, "--rate-limit", strconv.FormatInt(b.cfg.RotateRateLimit, 10),
		"--log-level", "warn")
	if err != nil {
		return nil, "", err
	}
	sctx, cancel := context.WithTimeout(ctx, b.cfg.StartTimeout)
	defer cancel()
	t0 := time.Now()
	if err := waitReady(sctx, p, "http://"+addr+"/readyz"); err != nil {
		p.stop()
		return nil, "", err
	}
	for i, doc := range docs {
		if _, err := createMock(sctx, addr, ids[i], "rotate-"+strconv.Itoa(i), false, bytes.NewReader(doc), int64(len(doc))); err != nil {
			p.stop()
			return nil, "", err
		}
	}
	logf("   decoy (%s): %d mocks created %.1f s after start, RSS %s", c.ID, len(docs), time.Since(t0).Seconds(), formatBytes(p.memory("VmRSS")))
	return p, addr, nil
}

// rotationAnswers gets every target's answer once, plain and as client c,
// and checks that a gzipped one decompresses to the plain one. With
// rateLimit above 0 (Decoy), it also checks that every answer went through
// the rate limiter and the default monthly quota, from their headers.
func rotationAnswers(ctx context.Context, addr string, targets []string, c client, timeout time.Duration, rateLimit int64) (*rotateAnswers, error) {
	a := &rotateAnswers{plain: make([][]byte, len(targets)), wire: make([][]byte, len(targets)), encoding: make([]string, len(targets)),
		plainHead: make([]http.Header, len(targets)), wireHead: make([]http.Header, len(targets))}
	for i, t := range targets {
		url := "http://" + addr + t
		body, h, err := fetch(ctx, url, timeout, nil)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", t, err)
		}
		if rateLimit > 0 {
			if err := limitsInForce(h, rateLimit, defaultMonthlyQuota); err != nil {
				return nil, fmt.Errorf("%s: %w", t, err)
			}
		}
		a.plain[i], a.wire[i] = body, body
		a.plainHead[i], a.wireHead[i] = h, h
		if c.Gzip {
			wire, h, err := fetch(ctx, url, timeout, c.headers(""))
			if err != nil {
				return nil, fmt.Errorf("%s: %w", t, err)
			}
			enc := h.Get("Content-Encoding")
			if err := verifyEncoded(enc, wire, body); err != nil {
				return nil, fmt.Errorf("%s: %w", t, err)
			}
			a.wire[i], a.encoding[i], a.wireHead[i] = wire, enc, h
		}
	}
	return a, nil
}

// limitsInForce checks an answer's X-RateLimit-Limit and X-Quota-Limit.
func limitsInForce(h http.Header, rateLimit, quota int64) error {
	for _, l := range []struct {
		name string
		want int64
	}{{"X-RateLimit-Limit", rateLimit}, {"X-Quota-Limit", quota}} {
		if got := h.Get(l.name); got != strconv.FormatInt(l.want, 10) {
			return fmt.Errorf("%s is %q, not %d: the limit the phase measures is not in force", l.name, got, l.want)
		}
	}
	return nil
}

// writeRotationFloor writes Decoy's answers where nginx and nethttp serve them.
func writeRotationFloor(www string, a *rotateAnswers) error {
	for i := range a.plain {
		f := floorFile{plain: a.plain[i], plainHead: a.plainHead[i]}
		if a.encoding[i] != "" {
			f.gz, f.gzHead = a.wire[i], a.wireHead[i]
		}
		if err := saveFloor(www, rotateFloor(i), f); err != nil {
			return err
		}
	}
	return nil
}

// meanSizes are the mean sizes of the answers, plain and as the client got
// them (0 when none was compressed).
func (a *rotateAnswers) meanSizes() (plain, wire int64) {
	if len(a.plain) == 0 {
		return 0, 0
	}
	compressed := false
	for i := range a.plain {
		plain += int64(len(a.plain[i]))
		wire += int64(len(a.wire[i]))
		compressed = compressed || a.encoding[i] != ""
	}
	n := int64(len(a.plain))
	if !compressed {
		return plain / n, 0
	}
	return plain / n, wire / n
}

// same says whether a holds the same answers as o, byte for byte, plain
// and as the client got them.
func (a *rotateAnswers) same(o *rotateAnswers) bool {
	if len(a.plain) != len(o.plain) {
		return false
	}
	for i := range a.plain {
		if !bytes.Equal(a.plain[i], o.plain[i]) || !bytes.Equal(a.wire[i], o.wire[i]) || a.encoding[i] != o.encoding[i] {
			return false
		}
	}
	return true
}
