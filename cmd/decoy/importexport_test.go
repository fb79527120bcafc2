package main_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/decoy-mock/decoy/client"
)

// snapshot is what a round trip keeps of a mock: its settings and bytes.
type snapshot struct {
	mock client.Mock
	ct   string
	data string
}

func snapshots(t *testing.T, p *proc) map[string]snapshot {
	t.Helper()
	ctx := context.Background()
	mocks, _, err := p.admin().ListMocks(ctx, "", 1000)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]snapshot{}
	for _, m := range mocks {
		ct, data, err := p.admin().Data(ctx, m.ID)
		if err != nil {
			t.Fatal(err)
		}
		out[m.ID] = snapshot{m, ct, string(data)}
	}
	return out
}

func sameSnapshots(t *testing.T, got, want map[string]snapshot) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d mocks, want %d", len(got), len(want))
	}
	for id, w := range want {
		g, ok := got[id]
		a, b := g.mock, w.mock
		if !ok || a.Name != b.Name || a.Private != b.Private || a.ContentType != b.ContentType || a.Status != b.Status ||
			a.DelayMS != b.DelayMS || !sameLimit(a.RateLimit, b.RateLimit) || !sameLimit(a.MonthlyQuota, b.MonthlyQuota) ||
			a.ETag != b.ETag || a.Size != b.Size || g.ct != w.ct || g.data != w.data {
			t.Errorf("mock %s:\n got %+v %q %q\nwant %+v %q %q", id, a.Mock, g.ct, g.data, b.Mock, w.ct, w.data)
		}
	}
}

func sameLimit(a, b *int64) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }

func deleteAll(t *testing.T, p *proc) {
	t.Helper()
	for id := range snapshots(t, p) {
		if err := p.admin().DeleteMock(context.Background(), id); err != nil {
			t.Fatal(err)
		}
	}
}

var tokenLine = regexp.MustCompile(`token (dcy_[A-Za-z0-9_-]{43}) \(shown once\)`)

// TestExportDeleteImport: decoy export, delete every mock, decoy import
// gives back identical ids, settings and bytes, from the .tar.gz and from
// the folder; decoy serve --seed takes the folder too. On both stores.
func TestExportDeleteImport(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) {
		testExportDeleteImport(t, func() []string { return nil })
	})
	t.Run("postgres", func(t *testing.T) {
		testExportDeleteImport(t, func() []string { return []string{"--database-url", postgresURL(t)} })
	})
}

// testExportDeleteImport runs the round trip on the store that store's
// flags name (each call a new, empty one).
func testExportDeleteImport(t *testing.T, store func() []string) {
	p := start(t, t.TempDir(), append(store(), "--admin-token", adminToken)...)
	createMock(t, p, `[{"id": 1.0, "name": "caf\u00e9"}]`, client.CreateOptions{Name: "users", Status: 203, DelayMS: 10, RateLimit: i64(5), MonthlyQuota: i64(0)})
	priv := createMock(t, p, "id,name\n1,Ada\n", client.CreateOptions{Name: "people.csv", Private: true, ContentType: "text/csv"})
	tm := createMock(t, p, `[]`, client.CreateOptions{Name: "generated"})
	const tpl = `{"$repeat":2,"$item":{"n":"{{ number 1 9 }}"}}`
	auth := []string{"Authorization", "Bearer " + adminToken, "Content-Type", "application/json"}
	if a := send(t, "PUT", p.url+"/admin/v1/mocks/"+tm.ID+"/template?mode=once", tpl, auth...); a.status != 200 {
		t.Fatalf("PUT template: %d %s", a.status, a.body)
	}
	want := snapshots(t, p)
	// wantTemplate checks that the generated mock has its template back.
	wantTemplate := func(p *proc) {
		t.Helper()
		a := get(t, p.url+"/admin/v1/mocks/"+tm.ID+"/template", auth...)
		var compact bytes.Buffer
		if a.status != 200 || json.Compact(&compact, []byte(a.body)) != nil || compact.String() != tpl {
			t.Errorf("the template after the round trip: %d %s", a.status, a.body)
		}
	}

	work := t.TempDir()
	file, dir := filepath.Join(work, "project.tar.gz"), filepath.Join(work, "mocks")
	for _, out := range []string{file, dir} {
		if stdout, stderr, code := decoyCLI(t, p, "", "export", "--project", "default", "--out", out); code != 0 || !strings.Contains(stdout, "Exported to "+out) {
			t.Fatalf("export --out %s: %d %s %s", out, code, stdout, stderr)
		}
	}
	manifest, err := os.ReadFile(filepath.Join(dir, "decoy.json"))
	if err != nil || strings.Contains(string(manifest), "dcy_") {
		t.Fatalf("decoy.json: %v %s", err, manifest)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "data", priv.ID+".json")); string(b) != "id,name\n1,Ada\n" {
		t.Errorf("data/%s.json = %q", priv.ID, b)
	}

	for _, in := range []string{file, dir} {
		deleteAll(t, p)
		stdout, stderr, code := decoyCLI(t, p, "", "import", in, "-o", "table")
		if code != 0 || !strings.Contains(stdout, "Created 3 mocks") {
			t.Fatalf("import %s: %d %s %s", in, code, stdout, stderr)
		}
		sameSnapshots(t, snapshots(t, p), want)
		wantTemplate(p)
		tok := tokenLine.FindStringSubmatch(stdout)
		if tok == nil {
			t.Fatalf("no token printed for the private mock:\n%s", stdout)
		}
		if a := get(t, p.url+"/mock/"+priv.ID, "decoyauthtoken", tok[1]); a.status != 200 || a.body != "id,name\n1,Ada\n" {
			t.Errorf("the new token: %d %q", a.status, a.body)
		}
		if a := get(t, p.url+"/mock/"+priv.ID, "decoyauthtoken", priv.Token); a.status != 401 {
			t.Errorf("the old token: %d", a.status)
		}
	}
	// Once more: every id is taken, nothing is imported.
	if _, stderr, code := decoyCLI(t, p, "", "import", file); code != 1 || !strings.Contains(stderr, "409") || !strings.Contains(stderr, "nothing was imported") {
		t.Errorf("import again: %d %s", code, stderr)
	}

	// The folder as --seed of a new server: the same mocks.
	q := start(t, t.TempDir(), append(store(), "--admin-token", adminToken, "--seed", dir)...)
	sameSnapshots(t, snapshots(t, q), want)
	wantTemplate(q)
	// The seeded mocks are printed after the line that start waits for.
	if !q.waitOutput("(shown once)") || !tokenLine.MatchString(q.stdout.String()) {
		t.Errorf("serve --seed printed no token for the private mock:\n%s", q.stdout)
	}
	q.stop()
	// Started again on the same folder, nothing changes and no token is
	// printed: the mock keeps the one it has.
	dataDir, again := t.TempDir(), store()
	q = start(t, dataDir, append(again, "--admin-token", adminToken, "--seed", dir)...)
	q.stop()
	r := start(t, dataDir, append(again, "--admin-token", adminToken, "--seed", dir)...)
	sameSnapshots(t, snapshots(t, r), want)
	if tokenLine.MatchString(r.stdout.String()) {
		t.Errorf("a restart printed a new token:\n%s", r.stdout)
	}
}

func TestImportOpenAPICLI(t *testing.T) {
	p := start(t, t.TempDir(), "--admin-token", adminToken)
	file := "../../importer/testdata/thirdparty/museum.yaml"
	stdout, stderr, code := decoyCLI(t, p, "", "import", file, "--dry-run", "-o", "table")
	if code != 0 || !strings.Contains(stdout, "Would create 4 mocks (dry run: nothing was stored)") || !strings.Contains(stdout, "buyMuseumTickets") {
		t.Fatalf("dry run: %d %s %s", code, stdout, stderr)
	}
	if len(snapshots(t, p)) != 0 {
		t.Fatal("a dry run stored mocks")
	}
	// Piped, without -o: JSON, as -o's help says (a walkthrough's jq
	// choked on the table).
	stdout, stderr, code = decoyCLI(t, p, "", "import", file, "--dry-run")
	var dry struct {
		Created []struct {
			Name string `json:"name"`
		} `json:"created"`
	}
	if err := json.Unmarshal([]byte(stdout), &dry); code != 0 || err != nil || len(dry.Created) != 4 {
		t.Fatalf("dry run, piped: %d %v %s %s", code, err, stdout, stderr)
	}
	stdout, stderr, code = decoyCLI(t, p, "", "import", file, "--format", "openapi", "-o", "table")
	if code != 0 || !strings.Contains(stdout, "Created 4 mocks") || !strings.Contains(stdout, "getMuseumHours") || !strings.Contains(stdout, p.url+"/mock/") {
		t.Fatalf("import: %d %s %s", code, stdout, stderr)
	}
	if _, stderr, code := decoyCLI(t, p, "", "import", "--format", "json-server", file); code != 1 || !strings.Contains(stderr, "400") {
		t.Errorf("YAML as json-server: %d %s", code, stderr)
	}
	if _, stderr, code := decoyCLI(t, p, "", "import"); code != 2 {
		t.Errorf("import without a file: %d %s", code, stderr)
	}
}
