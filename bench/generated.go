//go:build linux

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/decoy-mock/decoy/internal/dataset"
)

// The generated-data phase: one Decoy holding a stored mock of
// generatedRecords users records and a mock whose template generates as
// many records of the same shape afresh on every read (mode always), both
// read whole by the same load generator, one after the other, so that the
// cost of generating is a ratio within one run.

// generatedRecords is the records of each answer of the phase.
const generatedRecords = 100

// generatedTemplate makes records shaped as dataset.Users's.
const generatedTemplate = `{"$repeat":100,"$item":{"id":"{{ index }}","name":"{{ name }}","email":"{{ email }}",
"age":"{{ number 18 80 }}","status":"{{ choice \"active\" \"inactive\" \"suspended\" }}","createdAt":"{{ date \"2020-01-01\" \"2025-12-31\" }}",
"address":{"city":"{{ city }}","zip":"{{ zip }}","geo":{"lat":"{{ latitude }}","lng":"{{ longitude }}"}},
"tags":["{{ choice \"trial\" \"enterprise\" \"beta\" }}"],"score":"{{ float 0 100 2 }}"}}`

// generatedQuery is the query of the phase: stored or generated, as client
// c asks it.
func generatedQuery(kind string, c client) query {
	q := query{ID: "generated-" + kind}
	switch kind {
	case "stored":
		q.Title = fmt.Sprintf("%d stored records", generatedRecords)
	default:
		q.Title = fmt.Sprintf("%d records generated on every read (template, mode always)", generatedRecords)
	}
	return variant(q, c)
}

func (b *bench) runGenerated(ctx context.Context) {
	cs := rotateClients(b.cfg) // open mocks: no private client
	sz := size{N: generatedRecords, Label: sizeLabel(generatedRecords)}
	logf("== %d records stored, and generated on every read", generatedRecords)
	fail := func(q query, note string) {
		logf("   decoy %s: failed: %s", q.ID, note)
		b.generated = append(b.generated, result{Size: sz, Server: "decoy", Query: q.ID, Status: "failed", Note: note})
	}
	port, err := freePort()
	if err != nil {
		fail(generatedQuery("always", clients[0]), err.Error())
		return
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	dataDir := filepath.Join(b.work, "decoy-data-generated")
	p, err := startProc("decoy", filepath.Join(b.work, "logs", "decoy-generated.log"), b.work, b.tools.decoy, "serve",
		"--addr", addr, "--data-dir", dataDir, "--admin-token", adminToken, "--rate-limit", "0",
		"--monthly-quota", "0", "--log-level", "warn")
	if err == nil {
		if err = waitReady(ctx, p, "http://"+addr+"/readyz"); err != nil {
			p.stop()
		}
	}
	if err != nil {
		fail(generatedQuery("always", clients[0]), err.Error())
		return
	}
	defer p.stop()
	stored, always := benchID("generated-stored"), benchID("generated-always")
	doc := dataset.Users(generatedRecords)
	_, err = createMock(ctx, addr, stored, "stored", false, bytes.NewReader(doc), int64(len(doc)))
	if err == nil {
		_, err = createMock(ctx, addr, always, "always", false, strings.NewReader("[]"), 2)
	}
	if err == nil {
		err = putTemplate(ctx, addr, always, generatedTemplate)
	}
	if err != nil {
		fail(generatedQuery("always", clients[0]), err.Error())
		return
	}
	for _, c := range cs {
		for _, kind := range []string{"stored", "always"} {
			if ctx.Err() != nil {
				return
			}
			q := generatedQuery(kind, c)
			id := stored
			if kind == "always" {
				id = always
			}
			r := result{Size: sz, Server: "decoy", Query: q.ID, Status: "ok", Target: "/mock/" + id}
			// Checked with one seed, so that the gzip answer is the plain
			// one compressed; loaded with none, a new seed every read.
			a, err := checkGenerated(ctx, "http://"+addr+r.Target, b.cfg.Timeout, c)
			if err != nil {
				fail(q, err.Error())
				continue
			}
			r.Records, r.BodyBytes, r.WireBytes = a.records, int64(len(a.plain)), a.wire
			if r.Records != generatedRecords {
				r.Note = join(r.Note, fmt.Sprintf("%d records, not %d", r.Records, generatedRecords))
			}
			b.measure(ctx, p, addr, []string{r.Target}, headerLines(c.headers("")), &r)
			logResult(&r)
			b.generated = append(b.generated, r)
		}
	}
}

// putTemplate gives mock id a template generating on every read.
func putTemplate(ctx context.Context, addr, id, template string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, "http://"+addr+"/admin/v1/mocks/"+id+"/template?mode=always", strings.NewReader(template))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+adminToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("setting the template of %s: %s: %.300s", id, resp.Status, body)
	}
	return nil
}

// writeGenerated writes the rows of the generated-data phase, with the
// cost of generating as ratios to reading the stored records.
func writeGenerated(w io.Writer, r *report) {
	if len(r.Generated) == 0 {
		return
	}
	fmt.Fprintf(w, "## %d records: stored, and generated on every read\n\n", generatedRecords)
	fmt.Fprintf(w, "One Decoy, `--rate-limit 0 --monthly-quota 0`, with a stored mock of %d users records and a mock whose template makes %d records of the same shape afresh on every read (`mode=always`: a new seed, generation, parsing for the query engine, ETag, gzip when asked). Each is read whole. Targets: at least 2,000 req/s generated, and CPU per request at most 10× the stored read's.\n\n",
		generatedRecords, generatedRecords)
	fmt.Fprintf(w, "| query | answer | req/s | p50 ms | p99 ms | CPU µs/req | generated/stored req/s | generated/stored CPU µs/req |\n|---|---|---|---|---|---|---|---|\n")
	find := func(id string) *result {
		for i := range r.Generated {
			if r.Generated[i].Query == id {
				return &r.Generated[i]
			}
		}
		return nil
	}
	for _, c := range clients {
		st, gen := find(generatedQuery("stored", c).ID), find(generatedQuery("always", c).ID)
		for _, x := range []*result{st, gen} {
			if x == nil {
				continue
			}
			q := generatedQuery(strings.TrimPrefix(strings.SplitN(x.Query, ".", 2)[0], "generated-"), c)
			if !x.measured() {
				fmt.Fprintf(w, "| %s | %s: %s |  |  |  |  |  |  |\n", q.Title, x.Status, x.Note)
				continue
			}
			ratios := " | "
			if x == gen && st.measured() {
				ratios = fmt.Sprintf("%.2f | %.2f", x.ReqPerSec/st.ReqPerSec, x.cpuPerRequest()/st.cpuPerRequest())
			}
			fmt.Fprintf(w, "| %s | %s | %s | %.2f | %.2f | %s | %s |\n", q.Title, answerCell(x), commas(int64(x.ReqPerSec)),
				x.P50, x.P99, formatMicros(x.cpuPerRequest()), ratios)
		}
	}
	fmt.Fprintln(w)
}

// generatedAnswer is one answer of the phase, as checked before its load.
type generatedAnswer struct {
	plain   []byte
	records int
	wire    int64 // bytes on the wire when gzipped, else 0
}

// checkGenerated fetches an answer plain and, for a client accepting gzip,
// gzipped, both with the same Decoy-Seed, and checks that the second is the
// first compressed.
func checkGenerated(ctx context.Context, url string, timeout time.Duration, c client) (*generatedAnswer, error) {
	seed := [2]string{"Decoy-Seed", "1"}
	plain, _, err := fetch(ctx, url, timeout, [][2]string{seed})
	if err != nil {
		return nil, err
	}
	var recs []json.RawMessage
	if err := json.Unmarshal(plain, &recs); err != nil {
		return nil, fmt.Errorf("the answer is not a JSON array: %w", err)
	}
	a := &generatedAnswer{plain: plain, records: len(recs)}
	if !c.Gzip {
		return a, nil
	}
	wire, h, err := fetch(ctx, url, timeout, append(c.headers(""), seed))
	if err != nil {
		return nil, err
	}
	if h.Get("Content-Encoding") != "gzip" {
		return nil, fmt.Errorf("a client accepting gzip got Content-Encoding %q", h.Get("Content-Encoding"))
	}
	if err := verifyGzip(wire, plain); err != nil {
		return nil, err
	}
	a.wire = int64(len(wire))
	return a, nil
}
