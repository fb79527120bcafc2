package server_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/decoy-mock/decoy"
	"github.com/decoy-mock/decoy/generate"
	"github.com/decoy-mock/decoy/internal/servertest"
	"github.com/decoy-mock/decoy/jsondoc"
	"github.com/decoy-mock/decoy/query"
	"github.com/decoy-mock/decoy/server"
	"github.com/google/uuid"
)

func TestTemplateAlways(t *testing.T) {
	h := servertest.New(t)
	m := h.Templated(servertest.UsersTemplate, "", "always")
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
	m := h.Templated(servertest.UsersTemplate, "", "always")
	queries := []string{"", "filters=city%3DParis", "filters=active%3Dtrue%26city[$ne]%3DLima", "order_by=age&order_direction=desc",
		"order_by=name", "filters=tags%3Db&order_by=age&offset=2&limit=5", "filters=age[$eq]%3D30", "limit=0", "offset=39",
		"filters=city[$eqi]%3Doslo&order_by=id&order_direction=DESC&limit=3"}
	for seed := 0; seed < 25; seed++ {
		s := strconv.Itoa(seed)
		preview := h.Send(http.MethodPost, "/admin/v1/generate?seed="+s, "application/json", servertest.UsersTemplate)
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

// TestGeneratedReadBounded: the read of a mock whose template would take
// a minute to compile answers at the bound of its generation, which the
// compile is inside (such a template is refused when set, but one may be
// stored already, or have been set on an idle server).
func TestGeneratedReadBounded(t *testing.T) {
	h := servertest.New(t, func(c *server.Config) { c.GenerateTimeout = 20 * time.Millisecond })
	id := storeTemplated(t, h, generate.SchemaContentType, servertest.HostileAllOf(3000))
	start := time.Now()
	servertest.WantError(t, h.Get("/mock/"+id), 400, "Generating the data took too long: make the template smaller")
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("answered after %v", d)
	}
}

// storeTemplated stores a mock generating on every read from template
// straight into the store, unchecked, as a replica of an older version
// could have; the server reads it from the store on its first read.
func storeTemplated(t *testing.T, h *servertest.Harness, ct, template string) string {
	t.Helper()
	ctx := context.Background()
	m, err := h.Store.CreateMock(ctx, &decoy.Mock{ID: uuid.NewString(), ContentType: "application/json", Status: 200, ETag: `"e"`}, decoy.Data{Bytes: []byte(`[]`)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.Store.SetTemplate(ctx, m.ID, decoy.Template{Mode: decoy.TemplateAlways, ContentType: ct, Body: []byte(template)}); err != nil {
		t.Fatal(err)
	}
	return m.ID
}

func TestSeedCORS(t *testing.T) {
	h := servertest.New(t)
	m := h.Templated(`[1]`, "", "always")
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
	gen := h.Templated(`{"$repeat":100,"$item":{"id":"{{ index }}","name":"{{ name }}","email":"{{ email }}",
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

// TestGeneratedReadClientLeft: a client that leaves while its data is
// generated stops the work, and the request is counted as 499 (the client
// went away), not as the server's 503.
func TestGeneratedReadClientLeft(t *testing.T) {
	h := servertest.New(t, func(c *server.Config) { c.GenerateTimeout = time.Minute })
	id := storeTemplated(t, h, generate.SchemaContentType, servertest.HostileAllOf(3000))
	ctx, cancel := context.WithCancel(context.Background())
	defer time.AfterFunc(100*time.Millisecond, cancel).Stop() // as net/http cancels it when the connection closes
	rec := httptest.NewRecorder()
	h.Srv.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/mock/"+id, nil).WithContext(ctx))
	if rec.Body.Len() != 0 {
		t.Errorf("an answer to a client that left: %d %s", rec.Code, rec.Body)
	}
	m := h.Get("/metrics").Body
	if !strings.Contains(m, `decoy_http_requests_total{code="499",route="mock"} 1`) || strings.Contains(m, `code="503",route="mock"`) {
		t.Errorf("the request is not counted as 499: %s", grepLines(m, "decoy_http_requests_total"))
	}
}
