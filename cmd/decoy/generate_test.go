package main_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/decoy-mock/decoy/client"
)

const usersTemplate = `{"$repeat": 25, "$item": {"id": "{{ index }}", "name": "{{ name }}", "email": "{{ email }}", "age": "{{ number 18 80 }}"}}`

// TestGeneratedEndToEnd: a template created with the CLI, read fresh
// twice, then reproduced with Decoy-Seed; decoy generate prints what the
// server gives for the same seed.
func TestGeneratedEndToEnd(t *testing.T) {
	p := start(t, t.TempDir(), "--admin-token", adminToken)
	file := filepath.Join(t.TempDir(), "users.json")
	if err := os.WriteFile(file, []byte(usersTemplate), 0o600); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := decoyCLI(t, p, "", "mock", "create", "--template", file, "--mode", "always", "--name", "users")
	if code != 0 {
		t.Fatalf("create --template: %d %s", code, errOut)
	}
	var m client.TemplateMock
	if err := json.Unmarshal([]byte(out), &m); err != nil || m.TemplateMode == nil || *m.TemplateMode != "always" || m.Name != "users" {
		t.Fatalf("create printed %s (%v)", out, err)
	}
	a, b := get(t, m.URL), get(t, m.URL)
	if a.status != 200 || b.status != 200 || a.header.Get("X-Total-Count") != "25" {
		t.Fatalf("reads: %d %d %v", a.status, b.status, a.header)
	}
	if a.body == b.body || a.header.Get("Decoy-Seed") == b.header.Get("Decoy-Seed") {
		t.Fatalf("two reads gave the same data")
	}
	seed := a.header.Get("Decoy-Seed")
	if c := get(t, m.URL, "Decoy-Seed", seed); c.body != a.body || c.header.Get("Decoy-Seed") != seed {
		t.Fatalf("Decoy-Seed %s did not reproduce the answer", seed)
	}
	if c := get(t, m.URL+"?order_by=age&limit=3", "Decoy-Seed", seed); c.status != 200 || strings.Count(c.body, `"id":`) != 3 {
		t.Errorf("a query over a seed: %d %s", c.status, c.body)
	}

	// decoy generate, locally, gives the server's data for the seed.
	out, errOut, code = decoyCLI(t, p, "", "generate", file, "--seed", seed)
	if code != 0 || strings.TrimSuffix(out, "\n") != a.body || !strings.Contains(errOut, "seed: "+seed) {
		t.Errorf("decoy generate --seed %s: %d %s %s", seed, code, out, errOut)
	}

	// once: the data is generated now, and stays.
	out, errOut, code = decoyCLI(t, p, usersTemplate, "mock", "create", "--template", "-")
	if code != 0 {
		t.Fatalf("create --template - (once): %d %s", code, errOut)
	}
	var once client.TemplateMock
	if err := json.Unmarshal([]byte(out), &once); err != nil || once.TemplateMode == nil || *once.TemplateMode != "once" {
		t.Fatalf("create printed %s (%v)", out, err)
	}
	if x, y := get(t, once.URL), get(t, once.URL); x.body != y.body || x.header.Get("X-Total-Count") != "25" {
		t.Errorf("a once mock changed between reads")
	}

	// A bad template is refused before anything is created, naming where.
	bad := filepath.Join(t.TempDir(), "bad.json")
	os.WriteFile(bad, []byte(`{"items":{"$repeat":2,"$item":{"name":"{{ nmae }}"}}}`), 0o600)
	_, errOut, code = decoyCLI(t, p, "", "mock", "create", "--template", bad)
	if code == 0 || !strings.Contains(errOut, `$.items.name: unknown function "nmae"`) {
		t.Errorf("bad template: %d %s", code, errOut)
	}
	if ms, _, _ := p.admin().ListMocks(t.Context(), "", 100); len(ms) != 2 {
		t.Errorf("%d mocks, want 2", len(ms))
	}
}

// hostileAllOf is a JSON Schema of an object whose allOf has n branches of
// one property each: merging it without a bound takes about n³ steps (3,000
// branches, 194 KB: a minute of a core, answered 200 at the end).
func hostileAllOf(n int) string {
	parts := make([]string, n)
	for i := range parts {
		parts[i] = fmt.Sprintf(`{"properties":{"p%d":{"type":"string"}},"required":["p%d"]}`, i, i)
	}
	return `{"type":"object","allOf":[` + strings.Join(parts, ",") + `]}`
}

// TestGenerationBoundedEndToEnd: on the real binary, with the default
// bound of 2 s, a preview of a schema whose allOf would take a minute to
// merge answers 400 in seconds; so does the template of a mock.
func TestGenerationBoundedEndToEnd(t *testing.T) {
	p := start(t, t.TempDir(), "--admin-token", adminToken)
	schema := hostileAllOf(3000)
	auth := []string{"Authorization", "Bearer " + adminToken, "Content-Type", "application/schema+json"}
	m := createMock(t, p, `[]`, client.CreateOptions{})
	for _, path := range []string{"/admin/v1/generate", "/admin/v1/mocks/" + m.ID + "/template?mode=always"} {
		method := http.MethodPost
		if strings.Contains(path, "template") {
			method = http.MethodPut
		}
		began := time.Now()
		a := send(t, method, p.url+path, schema, auth...)
		took := time.Since(began)
		t.Logf("%s %s: %d in %v", method, path, a.status, took)
		if a.status != 400 || a.body != `{"error":"Generating the data took too long: make the template smaller"}`+"\n" {
			t.Errorf("%s %s: %d %.200s", method, path, a.status, a.body)
		}
		if took > 20*time.Second { // the bound is 2 s: slack for a loaded machine, not a measure
			t.Errorf("%s %s answered after %v", method, path, took)
		}
	}
}

// TestImportGenerationEndToEnd: on the real binary, an OpenAPI import
// whose schema would take half a minute to generate from is cut at the
// bound of its generation (the operation skipped, saying why), and an
// import into another workspace, sent while it runs, does not wait for
// it.
func TestImportGenerationEndToEnd(t *testing.T) {
	p := start(t, t.TempDir(), "--admin-token", adminToken)
	project := func(name string) string {
		ws := field(t, api(t, p, "POST", "workspaces", adminToken, `{"name":"`+name+`"}`), 201, "id")
		return field(t, api(t, p, "POST", "workspaces/"+ws+"/projects", adminToken, `{"name":"`+name+`"}`), 201, "id")
	}
	heavy, light := project("heavy"), project("light")
	op := func(schema string) string {
		return `{"get":{"responses":{"200":{"description":"ok","content":{"application/json":{"schema":` + schema + `}}}}}}`
	}
	// Padded past what loopback sockets hold, so that the file is sent
	// whole only once the server reads it, which it does in its turn to
	// import.
	doc := `{"openapi":"3.1.0","info":{"title":"t","version":"1","description":"` + strings.Repeat("x", 8<<20) + `"},` +
		`"paths":{"/slow":` + op(hostileAllOf(2500)) + `,"/ok":` + op(`{"type":"integer"}`) + `}}`

	type result struct {
		answer
		took time.Duration
	}
	heavyDone := make(chan result, 1)
	sent := make(chan struct{})
	go func() {
		began := time.Now()
		trace := &httptrace.ClientTrace{WroteRequest: func(httptrace.WroteRequestInfo) { close(sent) }}
		req, _ := http.NewRequestWithContext(httptrace.WithClientTrace(context.Background(), trace), http.MethodPost,
			p.url+"/admin/v1/projects/"+heavy+"/import?format=openapi", strings.NewReader(doc))
		req.Header.Set("Authorization", "Bearer "+adminToken)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			heavyDone <- result{answer{status: -1, body: err.Error()}, time.Since(began)}
			return
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		heavyDone <- result{answer{resp.StatusCode, resp.Header, string(b)}, time.Since(began)}
	}()
	<-sent

	began := time.Now()
	a := api(t, p, "POST", "projects/"+light+"/import?format=json-server", adminToken, `{"one":[1]}`)
	t.Logf("light import: %d in %v", a.status, time.Since(began))
	if a.status != 201 {
		t.Fatalf("light import: %d %s", a.status, a.body)
	}
	select {
	case r := <-heavyDone:
		t.Errorf("the light import waited for the heavy one, which answered %d after %v", r.status, r.took)
		heavyDone <- r
	default:
	}

	r := <-heavyDone
	t.Logf("heavy import: %d in %v", r.status, r.took)
	var got struct {
		Created []struct{ Name string }
		Skipped []struct{ Source, Reason string }
	}
	if err := json.Unmarshal([]byte(r.body), &got); err != nil || r.status != 201 {
		t.Fatalf("heavy import: %d %.300s", r.status, r.body)
	}
	if len(got.Skipped) != 1 || got.Skipped[0].Source != "GET /slow 200" ||
		got.Skipped[0].Reason != "no example, and data could not be generated from its schema: Generating the data took too long: make the template smaller" {
		t.Errorf("skipped %+v", got.Skipped)
	}
	if r.took > 20*time.Second { // the bound is 2 s: slack for a loaded machine, not a measure
		t.Errorf("the heavy import answered after %v", r.took)
	}
}
