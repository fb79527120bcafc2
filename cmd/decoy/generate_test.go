package main_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
