package admin_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/decoy-mock/decoy/client"
	"github.com/decoy-mock/decoy/generate"
	"github.com/decoy-mock/decoy/internal/servertest"
	"github.com/decoy-mock/decoy/server"
)

func TestTemplateOnce(t *testing.T) {
	h := servertest.New(t)
	ctx := context.Background()
	m := h.Create(`{"old":true}`, client.CreateOptions{})
	base := "/admin/v1/mocks/" + m.ID
	r := h.Send(http.MethodPut, base+"/template?mode=once&seed=7", "", servertest.UsersTemplate)
	if r.Status != 200 || r.Header.Get(generate.SeedHeader) != "7" {
		t.Fatalf("PUT: %d %s", r.Status, r.Body)
	}
	preview := h.Send(http.MethodPost, "/admin/v1/generate?seed=7", "", servertest.UsersTemplate)
	first := h.Get("/mock/" + m.ID)
	if first.Body != preview.Body || first.Header.Get(generate.SeedHeader) != "" {
		t.Fatalf("once: the data is not the output of the seed")
	}
	if g := h.Send(http.MethodGet, base+"/template", "", ""); g.Body != servertest.UsersTemplate || g.Header.Get("Decoy-Template-Mode") != "once" || g.Header.Get("Content-Type") != "application/json" {
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
	m := h.Templated(schema, "application/schema+json", "always")
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

// TestGenerateTimeout: the bound of a generation holds whatever takes
// the time, writing the output or compiling the template (a schema whose
// allOf would take a minute to merge).
func TestGenerateTimeout(t *testing.T) {
	h := servertest.New(t, func(c *server.Config) { c.GenerateTimeout = time.Millisecond; c.MaxDataBytes = 1 << 30 })
	for _, tt := range []struct{ name, ct, template string }{
		{"a long output", "", `{"$repeat":100000000,"$item":"{{ paragraph }}"}`},
		{"an allOf of 3000 branches", generate.SchemaContentType, servertest.HostileAllOf(3000)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Now()
			servertest.WantError(t, h.Send(http.MethodPost, "/admin/v1/generate", tt.ct, tt.template), 400,
				"Generating the data took too long: make the template smaller")
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("a timed-out generation answered after %v", d)
			}
		})
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
