package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/decoy-mock/decoy/client"
	"github.com/decoy-mock/decoy/generate"
	"github.com/decoy-mock/decoy/jsondoc"
	"github.com/decoy-mock/decoy/query"
	"github.com/decoy-mock/decoy/server"
)

const usersTemplate = `{"$repeat":40,"$item":{"id":"{{ index }}","name":"{{ name }}","age":"{{ number 18 80 }}","city":"{{ choice \"Paris\" \"Oslo\" \"Lima\" }}","active":"{{ boolean }}","tags":["{{ choice \"a\" \"b\" }}","{{ choice \"b\" \"c\" }}"]}}`

// send sends an admin request with a body.
func (h *harness) send(method, path, ct, body string, header ...string) response {
	h.t.Helper()
	req, err := http.NewRequest(method, h.url+path, strings.NewReader(body))
	if err != nil {
		h.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+adminToken)
	if ct != "" {
		req.Header.Set("Content-Type", ct)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return response{status: resp.StatusCode, header: resp.Header, body: string(b)}
}

// templated creates a mock with a template in mode.
func (h *harness) templated(template, ct, mode string) *client.Mock {
	h.t.Helper()
	m := h.create(`[]`, client.CreateOptions{})
	r := h.send(http.MethodPut, "/admin/v1/mocks/"+m.ID+"/template?mode="+mode, ct, template)
	if r.status != http.StatusOK {
		h.t.Fatalf("PUT template: %d %s", r.status, r.body)
	}
	var v struct {
		TemplateMode *string `json:"template_mode"`
	}
	if err := json.Unmarshal([]byte(r.body), &v); err != nil || v.TemplateMode == nil || *v.TemplateMode != mode {
		h.t.Fatalf("PUT template answered %s", r.body)
	}
	return m
}

func TestTemplateAlways(t *testing.T) {
	h := newHarness(t)
	m := h.templated(usersTemplate, "", "always")
	path := "/mock/" + m.ID

	a, b := h.get(path), h.get(path)
	for _, r := range []response{a, b} {
		if r.status != 200 || r.header.Get("X-Total-Count") != "40" || r.header.Get("Content-Type") != "application/json" {
			t.Fatalf("read: %d %v", r.status, r.header)
		}
		if _, err := strconv.ParseUint(r.header.Get(generate.SeedHeader), 10, 64); err != nil {
			t.Fatalf("Decoy-Seed %q", r.header.Get(generate.SeedHeader))
		}
	}
	if a.body == b.body || a.header.Get(generate.SeedHeader) == b.header.Get(generate.SeedHeader) {
		t.Fatalf("two reads gave the same data")
	}
	// Decoy-Seed reproduces an answer, with its ETag; If-None-Match then
	// answers 304.
	seed := a.header.Get(generate.SeedHeader)
	c := h.get(path, generate.SeedHeader, seed)
	if c.body != a.body || c.header.Get("ETag") != a.header.Get("ETag") || c.header.Get(generate.SeedHeader) != seed {
		t.Fatalf("the seed of an answer gave other data")
	}
	if r := h.get(path, generate.SeedHeader, seed, "If-None-Match", a.header.Get("ETag")); r.status != http.StatusNotModified {
		t.Errorf("If-None-Match with the seed: %d", r.status)
	}
	// gzip, as for stored data.
	if r := h.get(path, generate.SeedHeader, seed, "Accept-Encoding", "gzip"); r.header.Get("Content-Encoding") != "gzip" || r.header.Get("ETag") == a.header.Get("ETag") {
		t.Errorf("gzip: %v", r.header)
	}
	// HEAD: the headers of the GET.
	if r := h.do(http.MethodHead, path, generate.SeedHeader, seed); r.status != 200 || r.body != "" || r.header.Get("Content-Length") != strconv.Itoa(len(a.body)) {
		t.Errorf("HEAD: %d %v", r.status, r.header)
	}
	// A query: over the same array.
	if r := h.get(path+"?limit=2&offset=1", generate.SeedHeader, seed); r.header.Get("X-Total-Count") != "40" || !strings.HasPrefix(r.body, `[{"id":1,`) {
		t.Errorf("limit and offset: %s", r.body)
	}
	wantError(t, h.get(path+"?limit=x"), 400, "Limit must be an integer")
	wantError(t, h.get(path, generate.SeedHeader, "-1"), 400, "Decoy-Seed must be an integer from 0 to 18446744073709551615")

	// The stored data is untouched.
	if r := h.send(http.MethodGet, "/admin/v1/mocks/"+m.ID+"/data", "", ""); r.body != `[]` {
		t.Errorf("stored data: %s", r.body)
	}
	// Every read counted against the quota, as a stored read.
	if u, _ := h.admin.Usage(context.Background(), m.ID); u.Month.Used < 5 {
		t.Errorf("quota used %d", u.Month.Used)
	}
}

// TestTemplateAlwaysDifferential: a read with a seed and a query is the
// query engine's answer over the preview of the same seed.
func TestTemplateAlwaysDifferential(t *testing.T) {
	h := newHarness(t, func(c *server.Config) { c.DefaultRateLimit, c.DefaultMonthlyQuota = 0, 0 })
	m := h.templated(usersTemplate, "", "always")
	queries := []string{"", "filters=city%3DParis", "filters=active%3Dtrue%26city[$ne]%3DLima", "order_by=age&order_direction=desc",
		"order_by=name", "filters=tags%3Db&order_by=age&offset=2&limit=5", "filters=age[$eq]%3D30", "limit=0", "offset=39",
		"filters=city[$eqi]%3Doslo&order_by=id&order_direction=DESC&limit=3"}
	for seed := 0; seed < 25; seed++ {
		s := strconv.Itoa(seed)
		preview := h.send(http.MethodPost, "/admin/v1/generate?seed="+s, "application/json", usersTemplate)
		if preview.status != 200 || preview.header.Get(generate.SeedHeader) != s {
			t.Fatalf("preview: %d %s", preview.status, preview.body)
		}
		doc, err := jsondoc.Parse([]byte(preview.body))
		if err != nil {
			t.Fatal(err)
		}
		for _, raw := range queries {
			q, err := query.Compile(query.ParseParams(raw))
			if err != nil {
				t.Fatal(err)
			}
			want, total := preview.body, strconv.Itoa(doc.Len())
			if q.Processing() {
				res := q.Run(doc)
				var b bytes.Buffer
				res.WriteTo(&b)
				want, total = b.String(), strconv.Itoa(res.Total)
			}
			got := h.get("/mock/"+m.ID+"?"+raw, generate.SeedHeader, s)
			if got.body != want || got.header.Get("X-Total-Count") != total {
				t.Fatalf("seed %s, %q:\nread   %s (total %s)\nengine %s (total %s)", s, raw, got.body, got.header.Get("X-Total-Count"), want, total)
			}
		}
	}
}

func TestTemplateOnce(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	m := h.create(`{"old":true}`, client.CreateOptions{})
	base := "/admin/v1/mocks/" + m.ID
	r := h.send(http.MethodPut, base+"/template?mode=once&seed=7", "", usersTemplate)
	if r.status != 200 || r.header.Get(generate.SeedHeader) != "7" {
		t.Fatalf("PUT: %d %s", r.status, r.body)
	}
	preview := h.send(http.MethodPost, "/admin/v1/generate?seed=7", "", usersTemplate)
	first := h.get("/mock/" + m.ID)
	if first.body != preview.body || first.header.Get(generate.SeedHeader) != "" {
		t.Fatalf("once: the data is not the output of the seed")
	}
	if g := h.send(http.MethodGet, base+"/template", "", ""); g.body != usersTemplate || g.header.Get("Decoy-Template-Mode") != "once" || g.header.Get("Content-Type") != "application/json" {
		t.Errorf("GET template: %v %s", g.header, g.body)
	}
	if r := h.get("/mock/" + m.ID); r.body != first.body {
		t.Errorf("a once mock changed between reads")
	}
	r = h.send(http.MethodPost, base+"/regenerate", "", "")
	if r.status != 200 {
		t.Fatalf("regenerate: %d %s", r.status, r.body)
	}
	if again := h.get("/mock/" + m.ID); again.body == first.body {
		t.Errorf("regenerate kept the data")
	}
	if r := h.send(http.MethodPost, base+"/regenerate?seed=7", "", ""); r.status != 200 || h.get("/mock/"+m.ID).body != first.body {
		t.Errorf("regenerate with the first seed: %d", r.status)
	}
	// DELETE: the template goes, the data stays.
	if r := h.send(http.MethodDelete, base+"/template", "", ""); r.status != http.StatusNoContent {
		t.Fatalf("DELETE: %d %s", r.status, r.body)
	}
	if r := h.get("/mock/" + m.ID); r.body != first.body {
		t.Errorf("data after DELETE template changed")
	}
	wantError(t, h.send(http.MethodGet, base+"/template", "", ""), 404, "Mock api has no template")
	wantError(t, h.send(http.MethodDelete, base+"/template", "", ""), 404, "Mock api has no template")
	wantError(t, h.send(http.MethodPost, base+"/regenerate", "", ""), 404, "Mock api has no template")
	if got := h.send(http.MethodGet, base, "", ""); !strings.Contains(got.body, `"template_mode":null`) {
		t.Errorf("mock view: %s", got.body)
	}
	// From once to always: reads generate, until the template goes.
	if r := h.send(http.MethodPut, base+"/template?mode=always", "", `{"$repeat":2,"$item":"{{ index }}"}`); r.status != 200 {
		t.Fatalf("PUT: %d", r.status)
	}
	if r := h.get("/mock/" + m.ID); r.body != `[0,1]` {
		t.Errorf("always after once: %s", r.body)
	}
	h.send(http.MethodDelete, base+"/template", "", "")
	if r := h.get("/mock/" + m.ID); r.body != first.body {
		t.Errorf("after the always template went: %s", r.body)
	}
	if _, err := h.admin.GetMock(ctx, m.ID); err != nil {
		t.Fatal(err)
	}
}

func TestTemplateSchema(t *testing.T) {
	h := newHarness(t)
	schema := `{"type":"array","minItems":3,"maxItems":3,"items":{"type":"object","required":["id","email"],"properties":{"id":{"type":"string","format":"uuid"},"email":{"type":"string","format":"email"}}}}`
	m := h.templated(schema, "application/schema+json", "always")
	r := h.get("/mock/" + m.ID)
	if r.status != 200 || r.header.Get("X-Total-Count") != "3" || !strings.Contains(r.body, `"email":"`) {
		t.Fatalf("schema read: %d %s", r.status, r.body)
	}
	if g := h.send(http.MethodGet, "/admin/v1/mocks/"+m.ID+"/template", "", ""); g.header.Get("Content-Type") != "application/schema+json" {
		t.Errorf("GET template Content-Type %q", g.header.Get("Content-Type"))
	}
}

func TestTemplateErrors(t *testing.T) {
	h := newHarness(t, func(c *server.Config) { c.MaxDataBytes = 4096 })
	m := h.create(`[]`, client.CreateOptions{})
	put := "/admin/v1/mocks/" + m.ID + "/template"
	wantError(t, h.send(http.MethodPut, put, "", `{"items":{"$repeat":2,"$item":{"name":"{{ nmae }}"}}}`), 400, `$.items.name: unknown function \"nmae\"`)
	wantError(t, h.send(http.MethodPost, "/admin/v1/generate", "", `{"a":"{{ number 9 1 }}"}`), 400, `$.a: min is greater than max`)
	wantError(t, h.send(http.MethodPut, put+"?mode=sometimes", "", `1`), 400, "mode must be once or always")
	wantError(t, h.send(http.MethodPut, put, "text/plain", `1`), 415, "A template is JSON (application/json) or a JSON Schema (application/schema+json)")
	wantError(t, h.send(http.MethodPut, put, "", `{"$repeat":1000,"$item":"{{ name }}"}`), 400, "Generated data larger than 4096 bytes (--max-data-bytes)")
	wantError(t, h.send(http.MethodPost, "/admin/v1/generate", "", `{"$repeat":1000,"$item":"{{ name }}"}`), 400, "Generated data larger than 4096 bytes (--max-data-bytes)")
	wantError(t, h.send(http.MethodPut, put, "", strings.Repeat(" ", 5000)+"1"), 413, "Template larger than 4096 bytes (--max-data-bytes)")
	wantError(t, h.send(http.MethodPost, "/admin/v1/generate?seed=x", "", `1`), 400, "Decoy-Seed must be an integer from 0 to 18446744073709551615")
	wantError(t, h.send(http.MethodPut, "/admin/v1/mocks/00000000-0000-4000-8000-000000000000/template", "", `1`), 404, "Mock api not found")
	wantError(t, h.send(http.MethodPost, "/admin/v1/mocks/00000000-0000-4000-8000-000000000000/regenerate", "", ``), 404, "Mock api not found")
	// A regenerate of an always mock has nothing to do.
	if r := h.send(http.MethodPut, put+"?mode=always", "", `[1]`); r.status != 200 {
		t.Fatalf("PUT: %d", r.status)
	}
	wantError(t, h.send(http.MethodPost, "/admin/v1/mocks/"+m.ID+"/regenerate", "", ``), 409, "Mock api's template runs on every read (mode always): there is nothing to regenerate")
	// Nothing was stored by the failed calls or the previews.
	if r := h.send(http.MethodGet, "/admin/v1/mocks/"+m.ID+"/data", "", ""); r.body != `[]` {
		t.Errorf("data: %s", r.body)
	}
	// Unauthenticated calls see nothing.
	if r := h.do(http.MethodGet, "/admin/v1/generate/functions"); r.status != 401 {
		t.Errorf("functions without a token: %d", r.status)
	}
}

func TestGenerateTimeout(t *testing.T) {
	h := newHarness(t, func(c *server.Config) { c.GenerateTimeout = time.Millisecond; c.MaxDataBytes = 1 << 30 })
	start := time.Now()
	wantError(t, h.send(http.MethodPost, "/admin/v1/generate", "", `{"$repeat":100000000,"$item":"{{ paragraph }}"}`), 400,
		"Generating the data took too long: make the template smaller")
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("a timed-out generation answered after %v", d)
	}
}

func TestGenerateFunctions(t *testing.T) {
	h := newHarness(t)
	r := h.send(http.MethodGet, "/admin/v1/generate/functions", "", "")
	var v struct {
		Functions []struct {
			Name, Example, Returns string
			Output                 json.RawMessage
			Args                   []struct{ Name, Type string }
		}
	}
	if err := json.Unmarshal([]byte(r.body), &v); err != nil || r.status != 200 {
		t.Fatalf("%d %s %v", r.status, r.body, err)
	}
	found := false
	for _, f := range v.Functions {
		if f.Name == "number" {
			found = f.Example == "{{ number 18 80 }}" && len(f.Args) == 2 && f.Returns == "integer" && len(f.Output) > 0
		}
	}
	if !found || len(v.Functions) < 30 {
		t.Errorf("functions: %s", r.body)
	}
}

func TestSeedCORS(t *testing.T) {
	h := newHarness(t)
	m := h.templated(`[1]`, "", "always")
	r := h.get("/mock/"+m.ID, "Origin", "https://app.example")
	if !strings.Contains(r.header.Get("Access-Control-Expose-Headers"), "Decoy-Seed") {
		t.Errorf("exposed: %q", r.header.Get("Access-Control-Expose-Headers"))
	}
	p := h.do(http.MethodOptions, "/mock/"+m.ID, "Origin", "https://app.example", "Access-Control-Request-Method", "GET")
	if !strings.Contains(p.header.Get("Access-Control-Allow-Headers"), "Decoy-Seed") {
		t.Errorf("preflight allows: %q", p.header.Get("Access-Control-Allow-Headers"))
	}
}

// BenchmarkReadGenerated reads 100 records generated on every read (a
// template in mode always) and 100 stored records through the whole
// handler: the cost of generating as a ratio, within one run.
func BenchmarkReadGenerated(b *testing.B) {
	h, stored := usersServer(b, 100)
	gen := h.templated(`{"$repeat":100,"$item":{"id":"{{ index }}","name":"{{ name }}","email":"{{ email }}",
"age":"{{ number 18 80 }}","status":"{{ choice \"active\" \"inactive\" \"suspended\" }}","createdAt":"{{ date \"2020-01-01\" \"2025-12-31\" }}",
"address":{"city":"{{ city }}","zip":"{{ zip }}","geo":{"lat":"{{ latitude }}","lng":"{{ longitude }}"}},
"tags":["{{ choice \"trial\" \"enterprise\" \"beta\" }}"],"score":"{{ float 0 100 2 }}"}}`, "", "always")
	for _, c := range []struct{ name, id, encoding string }{
		{"stored", stored.ID, ""}, {"generated", gen.ID, ""},
		{"stored+gzip", stored.ID, "gzip"}, {"generated+gzip", gen.ID, "gzip"},
	} {
		req := httptest.NewRequest(http.MethodGet, "/mock/"+c.id, nil)
		if c.encoding != "" {
			req.Header.Set("Accept-Encoding", c.encoding)
		}
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				rec := httptest.NewRecorder()
				h.srv.ServeHTTP(rec, req)
				if rec.Code != 200 {
					b.Fatalf("status %d: %s", rec.Code, rec.Body)
				}
			}
		})
	}
}
