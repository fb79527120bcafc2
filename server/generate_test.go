package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/decoy-mock/decoy/client"
	"github.com/decoy-mock/decoy/generate"
	"github.com/decoy-mock/decoy/internal/servertest"
	"github.com/decoy-mock/decoy/jsondoc"
	"github.com/decoy-mock/decoy/query"
	"github.com/decoy-mock/decoy/server"
)

const usersTemplate = `{"$repeat":40,"$item":{"id":"{{ index }}","name":"{{ name }}","age":"{{ number 18 80 }}","city":"{{ choice \"Paris\" \"Oslo\" \"Lima\" }}","active":"{{ boolean }}","tags":["{{ choice \"a\" \"b\" }}","{{ choice \"b\" \"c\" }}"]}}`

// templated creates a mock with a template in mode.
func templated(h *servertest.Harness, template, ct, mode string) *client.Mock {
	h.T.Helper()
	m := h.Create(`[]`, client.CreateOptions{})
	r := h.Send(http.MethodPut, "/admin/v1/mocks/"+m.ID+"/template?mode="+mode, ct, template)
	if r.Status != http.StatusOK {
		h.T.Fatalf("PUT template: %d %s", r.Status, r.Body)
	}
	var v struct {
		TemplateMode *string `json:"template_mode"`
	}
	if err := json.Unmarshal([]byte(r.Body), &v); err != nil || v.TemplateMode == nil || *v.TemplateMode != mode {
		h.T.Fatalf("PUT template answered %s", r.Body)
	}
	return m
}

func TestTemplateAlways(t *testing.T) {
	h := servertest.New(t)
	m := templated(h, usersTemplate, "", "always")
	path := "/mock/" + m.ID

	a, b := h.Get(path), h.Get(path)
	for _, r := range []servertest.Response{a, b} {
		if r.Status != 200 || r.Header.Get("X-Total-Count") != "40" || r.Header.Get("Content-Type") != "application/json" {
			t.Fatalf("read: %d %v", r.Status, r.Header)
		}
		if _, err := strconv.ParseUint(r.Header.Get(generate.SeedHeader), 10, 64); err != nil {
			t.Fatalf("Decoy-Seed %q", r.Header.Get(generate.SeedHeader))
		}
	}
	if a.Body == b.Body || a.Header.Get(generate.SeedHeader) == b.Header.Get(generate.SeedHeader) {
		t.Fatalf("two reads gave the same data")
	}
	// Decoy-Seed reproduces an answer, with its ETag; If-None-Match then
	// answers 304.
	seed := a.Header.Get(generate.SeedHeader)
	c := h.Get(path, generate.SeedHeader, seed)
	if c.Body != a.Body || c.Header.Get("ETag") != a.Header.Get("ETag") || c.Header.Get(generate.SeedHeader) != seed {
		t.Fatalf("the seed of an answer gave other data")
	}
	if r := h.Get(path, generate.SeedHeader, seed, "If-None-Match", a.Header.Get("ETag")); r.Status != http.StatusNotModified {
		t.Errorf("If-None-Match with the seed: %d", r.Status)
	}
	// gzip, as for stored data.
	if r := h.Get(path, generate.SeedHeader, seed, "Accept-Encoding", "gzip"); r.Header.Get("Content-Encoding") != "gzip" || r.Header.Get("ETag") == a.Header.Get("ETag") {
		t.Errorf("gzip: %v", r.Header)
	}
	// HEAD: the headers of the GET.
	if r := h.Do(http.MethodHead, path, generate.SeedHeader, seed); r.Status != 200 || r.Body != "" || r.Header.Get("Content-Length") != strconv.Itoa(len(a.Body)) {
		t.Errorf("HEAD: %d %v", r.Status, r.Header)
	}
	// A query: over the same array.
	if r := h.Get(path+"?limit=2&offset=1", generate.SeedHeader, seed); r.Header.Get("X-Total-Count") != "40" || !strings.HasPrefix(r.Body, `[{"id":1,`) {
		t.Errorf("limit and offset: %s", r.Body)
	}
	servertest.WantError(t, h.Get(path+"?limit=x"), 400, "Limit must be an integer")
	servertest.WantError(t, h.Get(path, generate.SeedHeader, "-1"), 400, "Decoy-Seed must be an integer from 0 to 18446744073709551615")

	// The stored data is untouched.
	if r := h.Send(http.MethodGet, "/admin/v1/mocks/"+m.ID+"/data", "", ""); r.Body != `[]` {
		t.Errorf("stored data: %s", r.Body)
	}
	// Every read counted against the quota, as a stored read.
	if u, _ := h.Admin.Usage(context.Background(), m.ID); u.Month.Used < 5 {
		t.Errorf("quota used %d", u.Month.Used)
	}
}

// TestTemplateAlwaysDifferential: a read with a seed and a query is the
// query engine's answer over the preview of the same seed.
func TestTemplateAlwaysDifferential(t *testing.T) {
	h := servertest.New(t, func(c *server.Config) { c.DefaultRateLimit, c.DefaultMonthlyQuota = 0, 0 })
	m := templated(h, usersTemplate, "", "always")
	queries := []string{"", "filters=city%3DParis", "filters=active%3Dtrue%26city[$ne]%3DLima", "order_by=age&order_direction=desc",
		"order_by=name", "filters=tags%3Db&order_by=age&offset=2&limit=5", "filters=age[$eq]%3D30", "limit=0", "offset=39",
		"filters=city[$eqi]%3Doslo&order_by=id&order_direction=DESC&limit=3"}
	for seed := 0; seed < 25; seed++ {
		s := strconv.Itoa(seed)
		preview := h.Send(http.MethodPost, "/admin/v1/generate?seed="+s, "application/json", usersTemplate)
		if preview.Status != 200 || preview.Header.Get(generate.SeedHeader) != s {
			t.Fatalf("preview: %d %s", preview.Status, preview.Body)
		}
		doc, err := jsondoc.Parse([]byte(preview.Body))
		if err != nil {
			t.Fatal(err)
		}
		for _, raw := range queries {
			q, err := query.Compile(query.ParseParams(raw))
			if err != nil {
				t.Fatal(err)
			}
			want, total := preview.Body, strconv.Itoa(doc.Len())
			if q.Processing() {
				res := q.Run(doc)
				var b bytes.Buffer
				res.WriteTo(&b)
				want, total = b.String(), strconv.Itoa(res.Total)
			}
			got := h.Get("/mock/"+m.ID+"?"+raw, generate.SeedHeader, s)
			if got.Body != want || got.Header.Get("X-Total-Count") != total {
				t.Fatalf("seed %s, %q:\nread   %s (total %s)\nengine %s (total %s)", s, raw, got.Body, got.Header.Get("X-Total-Count"), want, total)
			}
		}
	}
}

func TestTemplateOnce(t *testing.T) {
	h := servertest.New(t)
	ctx := context.Background()
	m := h.Create(`{"old":true}`, client.CreateOptions{})
	base := "/admin/v1/mocks/" + m.ID
	r := h.Send(http.MethodPut, base+"/template?mode=once&seed=7", "", usersTemplate)
	if r.Status != 200 || r.Header.Get(generate.SeedHeader) != "7" {
		t.Fatalf("PUT: %d %s", r.Status, r.Body)
	}
	preview := h.Send(http.MethodPost, "/admin/v1/generate?seed=7", "", usersTemplate)
	first := h.Get("/mock/" + m.ID)
	if first.Body != preview.Body || first.Header.Get(generate.SeedHeader) != "" {
		t.Fatalf("once: the data is not the output of the seed")
	}
	if g := h.Send(http.MethodGet, base+"/template", "", ""); g.Body != usersTemplate || g.Header.Get("Decoy-Template-Mode") != "once" || g.Header.Get("Content-Type") != "application/json" {
		t.Errorf("GET template: %v %s", g.Header, g.Body)
	}
	if r := h.Get("/mock/" + m.ID); r.Body != first.Body {
		t.Errorf("a once mock changed between reads")
	}
	r = h.Send(http.MethodPost, base+"/regenerate", "", "")
	if r.Status != 200 {
		t.Fatalf("regenerate: %d %s", r.Status, r.Body)
	}
	if again := h.Get("/mock/" + m.ID); again.Body == first.Body {
		t.Errorf("regenerate kept the data")
	}
	if r := h.Send(http.MethodPost, base+"/regenerate?seed=7", "", ""); r.Status != 200 || h.Get("/mock/"+m.ID).Body != first.Body {
		t.Errorf("regenerate with the first seed: %d", r.Status)
	}
	// DELETE: the template goes, the data stays.
	if r := h.Send(http.MethodDelete, base+"/template", "", ""); r.Status != http.StatusNoContent {
		t.Fatalf("DELETE: %d %s", r.Status, r.Body)
	}
	if r := h.Get("/mock/" + m.ID); r.Body != first.Body {
		t.Errorf("data after DELETE template changed")
	}
	servertest.WantError(t, h.Send(http.MethodGet, base+"/template", "", ""), 404, "Mock api has no template")
	servertest.WantError(t, h.Send(http.MethodDelete, base+"/template", "", ""), 404, "Mock api has no template")
	servertest.WantError(t, h.Send(http.MethodPost, base+"/regenerate", "", ""), 404, "Mock api has no template")
	if got := h.Send(http.MethodGet, base, "", ""); !strings.Contains(got.Body, `"template_mode":null`) {
		t.Errorf("mock view: %s", got.Body)
	}
	// From once to always: reads generate, until the template goes.
	if r := h.Send(http.MethodPut, base+"/template?mode=always", "", `{"$repeat":2,"$item":"{{ index }}"}`); r.Status != 200 {
		t.Fatalf("PUT: %d", r.Status)
	}
	if r := h.Get("/mock/" + m.ID); r.Body != `[0,1]` {
		t.Errorf("always after once: %s", r.Body)
	}
	h.Send(http.MethodDelete, base+"/template", "", "")
	if r := h.Get("/mock/" + m.ID); r.Body != first.Body {
		t.Errorf("after the always template went: %s", r.Body)
	}
	if _, err := h.Admin.GetMock(ctx, m.ID); err != nil {
		t.Fatal(err)
	}
}

func TestTemplateSchema(t *testing.T) {
	h := servertest.New(t)
	schema := `{"type":"array","minItems":3,"maxItems":3,"items":{"type":"object","required":["id","email"],"properties":{"id":{"type":"string","format":"uuid"},"email":{"type":"string","format":"email"}}}}`
	m := templated(h, schema, "application/schema+json", "always")
	r := h.Get("/mock/" + m.ID)
	if r.Status != 200 || r.Header.Get("X-Total-Count") != "3" || !strings.Contains(r.Body, `"email":"`) {
		t.Fatalf("schema read: %d %s", r.Status, r.Body)
	}
	if g := h.Send(http.MethodGet, "/admin/v1/mocks/"+m.ID+"/template", "", ""); g.Header.Get("Content-Type") != "application/schema+json" {
		t.Errorf("GET template Content-Type %q", g.Header.Get("Content-Type"))
	}
}

func TestTemplateErrors(t *testing.T) {
	h := servertest.New(t, func(c *server.Config) { c.MaxDataBytes = 4096 })
	m := h.Create(`[]`, client.CreateOptions{})
	put := "/admin/v1/mocks/" + m.ID + "/template"
	servertest.WantError(t, h.Send(http.MethodPut, put, "", `{"items":{"$repeat":2,"$item":{"name":"{{ nmae }}"}}}`), 400, `$.items.name: unknown function \"nmae\"`)
	servertest.WantError(t, h.Send(http.MethodPost, "/admin/v1/generate", "", `{"a":"{{ number 9 1 }}"}`), 400, `$.a: min is greater than max`)
	servertest.WantError(t, h.Send(http.MethodPut, put+"?mode=sometimes", "", `1`), 400, "mode must be once or always")
	servertest.WantError(t, h.Send(http.MethodPut, put, "text/plain", `1`), 415, "A template is JSON (application/json) or a JSON Schema (application/schema+json)")
	servertest.WantError(t, h.Send(http.MethodPut, put, "", `{"$repeat":1000,"$item":"{{ name }}"}`), 400, "Generated data larger than 4096 bytes (--max-data-bytes)")
	servertest.WantError(t, h.Send(http.MethodPost, "/admin/v1/generate", "", `{"$repeat":1000,"$item":"{{ name }}"}`), 400, "Generated data larger than 4096 bytes (--max-data-bytes)")
	servertest.WantError(t, h.Send(http.MethodPut, put, "", strings.Repeat(" ", 5000)+"1"), 413, "Template larger than 4096 bytes (--max-data-bytes)")
	servertest.WantError(t, h.Send(http.MethodPost, "/admin/v1/generate?seed=x", "", `1`), 400, "Decoy-Seed must be an integer from 0 to 18446744073709551615")
	servertest.WantError(t, h.Send(http.MethodPut, "/admin/v1/mocks/00000000-0000-4000-8000-000000000000/template", "", `1`), 404, "Mock api not found")
	servertest.WantError(t, h.Send(http.MethodPost, "/admin/v1/mocks/00000000-0000-4000-8000-000000000000/regenerate", "", ``), 404, "Mock api not found")
	// A regenerate of an always mock has nothing to do.
	if r := h.Send(http.MethodPut, put+"?mode=always", "", `[1]`); r.Status != 200 {
		t.Fatalf("PUT: %d", r.Status)
	}
	servertest.WantError(t, h.Send(http.MethodPost, "/admin/v1/mocks/"+m.ID+"/regenerate", "", ``), 409, "Mock api's template runs on every read (mode always): there is nothing to regenerate")
	// Nothing was stored by the failed calls or the previews.
	if r := h.Send(http.MethodGet, "/admin/v1/mocks/"+m.ID+"/data", "", ""); r.Body != `[]` {
		t.Errorf("data: %s", r.Body)
	}
	// Unauthenticated calls see nothing.
	if r := h.Do(http.MethodGet, "/admin/v1/generate/functions"); r.Status != 401 {
		t.Errorf("functions without a token: %d", r.Status)
	}
}

func TestGenerateTimeout(t *testing.T) {
	h := servertest.New(t, func(c *server.Config) { c.GenerateTimeout = time.Millisecond; c.MaxDataBytes = 1 << 30 })
	start := time.Now()
	servertest.WantError(t, h.Send(http.MethodPost, "/admin/v1/generate", "", `{"$repeat":100000000,"$item":"{{ paragraph }}"}`), 400,
		"Generating the data took too long: make the template smaller")
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("a timed-out generation answered after %v", d)
	}
}

func TestGenerateFunctions(t *testing.T) {
	h := servertest.New(t)
	r := h.Send(http.MethodGet, "/admin/v1/generate/functions", "", "")
	var v struct {
		Functions []struct {
			Name, Example, Returns string
			Output                 json.RawMessage
			Args                   []struct{ Name, Type string }
		}
	}
	if err := json.Unmarshal([]byte(r.Body), &v); err != nil || r.Status != 200 {
		t.Fatalf("%d %s %v", r.Status, r.Body, err)
	}
	found := false
	for _, f := range v.Functions {
		if f.Name == "number" {
			found = f.Example == "{{ number 18 80 }}" && len(f.Args) == 2 && f.Returns == "integer" && len(f.Output) > 0
		}
	}
	if !found || len(v.Functions) < 30 {
		t.Errorf("functions: %s", r.Body)
	}
}

func TestSeedCORS(t *testing.T) {
	h := servertest.New(t)
	m := templated(h, `[1]`, "", "always")
	r := h.Get("/mock/"+m.ID, "Origin", "https://app.example")
	if !strings.Contains(r.Header.Get("Access-Control-Expose-Headers"), "Decoy-Seed") {
		t.Errorf("exposed: %q", r.Header.Get("Access-Control-Expose-Headers"))
	}
	p := h.Do(http.MethodOptions, "/mock/"+m.ID, "Origin", "https://app.example", "Access-Control-Request-Method", "GET")
	if !strings.Contains(p.Header.Get("Access-Control-Allow-Headers"), "Decoy-Seed") {
		t.Errorf("preflight allows: %q", p.Header.Get("Access-Control-Allow-Headers"))
	}
}

// BenchmarkReadGenerated reads 100 records generated on every read (a
// template in mode always) and 100 stored records through the whole
// handler: the cost of generating as a ratio, within one run.
func BenchmarkReadGenerated(b *testing.B) {
	h, stored := usersServer(b, 100)
	gen := templated(h, `{"$repeat":100,"$item":{"id":"{{ index }}","name":"{{ name }}","email":"{{ email }}",
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
				h.Srv.ServeHTTP(rec, req)
				if rec.Code != 200 {
					b.Fatalf("status %d: %s", rec.Code, rec.Body)
				}
			}
		})
	}
}
