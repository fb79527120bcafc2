package main_test

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/decoy-mock/decoy"
	"github.com/decoy-mock/decoy/client"
	"github.com/decoy-mock/decoy/importer"
)

// Issue 35, items 6 and 9: a project larger than four times
// --max-data-bytes exported, then imported into the same server, with the
// same settings. An import once held its unpacked data whole, bounded by
// four times --max-data-bytes, and its file by --max-data-bytes.

// streamMaxData is the --max-data-bytes of these tests: small, to keep
// them fast.
const streamMaxData = 64 << 10

// randomDoc is a JSON document of about size bytes that gzip cannot make
// much smaller: the export of a project of them is as large as it is.
func randomDoc(t *testing.T, size int) string {
	b := make([]byte, size*3/4-16)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return `["` + base64.StdEncoding.EncodeToString(b) + `"]`
}

// routeList is a project's routes as method, path and mock, sorted.
func routeList(t *testing.T, p *proc) []string {
	t.Helper()
	a := send(t, "GET", p.url+"/admin/v1/projects/"+decoy.DefaultProjectID+"/routes", "", "Authorization", "Bearer "+adminToken)
	var rs struct {
		Routes []decoy.Route `json:"routes"`
	}
	if a.status != 200 || json.Unmarshal([]byte(a.body), &rs) != nil {
		t.Fatalf("list routes: %d %s", a.status, a.body)
	}
	var out []string
	for _, r := range rs.Routes {
		out = append(out, r.Method+" "+r.Path+" "+r.MockID)
	}
	slices.Sort(out)
	return out
}

// TestImportStreamsLargeProject: a project of 12 mocks of about 60 KiB,
// 11 times --max-data-bytes unpacked and about 8 times as a .tar.gz, with
// routes, goes through decoy export and decoy import, from the .tar.gz and
// from the folder, into the server that exported it: the same ids,
// settings, bytes and routes; and the folder as --seed of a new server.
// On both stores.
func TestImportStreamsLargeProject(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) { testImportStreamsLargeProject(t, nil) })
	t.Run("postgres", func(t *testing.T) { testImportStreamsLargeProject(t, []string{"--database-url", postgresURL(t)}) })
}

func testImportStreamsLargeProject(t *testing.T, store []string) {
	p := start(t, t.TempDir(), append(store, "--admin-token", adminToken, "--max-data-bytes", fmt.Sprint(streamMaxData))...)
	auth := []string{"Authorization", "Bearer " + adminToken, "Content-Type", "application/json"}
	const n = 12
	total := 0
	for i := range n {
		doc := randomDoc(t, 60<<10)
		total += len(doc)
		m := createMock(t, p, doc, client.CreateOptions{Name: fmt.Sprint("m", i), Private: i == 3, Status: 200 + i})
		if i%3 == 0 {
			body := fmt.Sprintf(`{"method":"GET","path":"/things/%d/{id}","mock_id":%q}`, i, m.ID)
			if a := send(t, "POST", p.url+"/admin/v1/projects/"+decoy.DefaultProjectID+"/routes", body, auth...); a.status != 201 {
				t.Fatalf("create a route: %d %s", a.status, a.body)
			}
		}
	}
	if total <= 4*streamMaxData {
		t.Fatalf("the project holds %d bytes: not more than four times --max-data-bytes", total)
	}
	want, wantRoutes := snapshots(t, p), routeList(t, p)

	work := t.TempDir()
	file, dir := filepath.Join(work, "project.tar.gz"), filepath.Join(work, "mocks")
	for _, out := range []string{file, dir} {
		if stdout, stderr, code := decoyCLI(t, p, "", "export", "--out", out); code != 0 {
			t.Fatalf("export --out %s: %d %s %s", out, code, stdout, stderr)
		}
	}
	if fi, err := os.Stat(file); err != nil || fi.Size() <= 4*streamMaxData {
		t.Fatalf("the export: %v, %d bytes: want more than four times --max-data-bytes", err, fi.Size())
	}
	for _, in := range []string{file, dir} {
		deleteAll(t, p)
		stdout, stderr, code := decoyCLI(t, p, "", "import", in, "-o", "table")
		if code != 0 || !strings.Contains(stdout, fmt.Sprintf("Created %d mocks", n)) {
			t.Fatalf("import %s: %d %s %s", in, code, stdout, stderr)
		}
		sameSnapshots(t, snapshots(t, p), want)
		if got := routeList(t, p); !slices.Equal(got, wantRoutes) {
			t.Errorf("routes after importing %s:\n got %q\nwant %q", in, got, wantRoutes)
		}
	}
	if store == nil {
		// The folder as --seed of a new server with the same settings.
		q := start(t, t.TempDir(), "--admin-token", adminToken, "--max-data-bytes", fmt.Sprint(streamMaxData), "--seed", dir)
		sameSnapshots(t, snapshots(t, q), want)
	}
}

// exportArchive is an export of the given JSON documents as mocks of ids
// 1, 2, …, each with a route.
func exportArchive(t *testing.T, docs ...string) []byte {
	var b bytes.Buffer
	ew := importer.NewExportWriter(&b, "p", time.Now())
	for i, d := range docs {
		id := fmt.Sprintf("00000000-0000-4000-8000-%012d", i+1)
		if err := ew.Add(importer.ManifestMock{ID: id, Name: fmt.Sprint("m", i), ContentType: "application/json", Status: 200},
			int64(len(d)), strings.NewReader(d)); err != nil {
			t.Fatal(err)
		}
		ew.AddRoute(importer.ManifestRoute{Method: "GET", Path: fmt.Sprint("/m", i), MockID: id, Action: decoy.ActionRead})
	}
	if err := ew.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestImportStreamsAllOrNothing: an import of an export or of a db.json
// that fails midway stores nothing, on both stores: not a mock, a version, a route or a file, and
// the spooled data is gone. It fails on the last document (invalid JSON),
// on an archive cut short in the middle, on the workspace's max_bytes
// passed while the archive is read, and on max_bytes passed by what the
// workspace holds already, which the store finds once every document is
// written (PostgreSQL) or before (SQLite).
func TestImportStreamsAllOrNothing(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) { testImportStreamsAllOrNothing(t, nil) })
	t.Run("postgres", func(t *testing.T) { testImportStreamsAllOrNothing(t, []string{"--database-url", postgresURL(t)}) })
}

func testImportStreamsAllOrNothing(t *testing.T, store []string) {
	dataDir := t.TempDir()
	p := start(t, dataDir, append(store, "--admin-token", adminToken, "--max-data-bytes", fmt.Sprint(streamMaxData))...)
	auth := []string{"Authorization", "Bearer " + adminToken}
	existing := createMock(t, p, randomDoc(t, 60<<10), client.CreateOptions{Name: "existing"})
	before := snapshots(t, p)
	files := func() []string {
		var names []string
		for _, sub := range []string{"docs", "tmp"} {
			entries, _ := os.ReadDir(filepath.Join(dataDir, sub))
			for _, e := range entries {
				names = append(names, sub+"/"+e.Name())
			}
		}
		return names
	}
	filesBefore := files()

	var docs []string
	size := 0
	for range 8 {
		d := randomDoc(t, 60<<10)
		docs = append(docs, d)
		size += len(d)
	}
	good := exportArchive(t, docs...)
	bad := exportArchive(t, append(slices.Clone(docs), `{"cut":`)...)

	a := send(t, "GET", p.url+"/admin/v1/projects/"+decoy.DefaultProjectID, "", auth...)
	var project struct {
		WorkspaceID string `json:"workspace_id"`
	}
	if a.status != 200 || json.Unmarshal([]byte(a.body), &project) != nil || project.WorkspaceID == "" {
		t.Fatalf("the default project: %d %s", a.status, a.body)
	}
	limit := func(maxBytes string) {
		t.Helper()
		if a := send(t, "PATCH", p.url+"/admin/v1/workspaces/"+project.WorkspaceID, `{"limits":{"max_bytes":`+maxBytes+`}}`,
			append(auth, "Content-Type", "application/json")...); a.status != 200 {
			t.Fatalf("PATCH the workspace's limits: %d %s", a.status, a.body)
		}
	}

	goodDB, badDB := dbJSON(docs...), dbJSON(append(slices.Clone(docs), `{"cut":1,}`)...)
	for _, tc := range []struct {
		name     string
		format   string
		body     []byte
		maxBytes string
		status   int
		msg      string
	}{
		{"last document invalid", "decoy", bad, "null", 400, `Mock \"m8\": Invalid JSON`},
		{"cut short", "decoy", good[:len(good)*3/5], "null", 400, "Not a valid Decoy export"},
		{"past max_bytes while read", "decoy", good, fmt.Sprint(size - 1), 413, "The export unpacks to more than"},
		{"past max_bytes with what is held", "decoy", good, fmt.Sprint(size + 1000), 403, "Workspace limit reached: max_bytes"},
		{"db.json: last value invalid", "json-server", []byte(badDB), "null", 400, "Invalid JSON"},
		{"db.json: cut short", "json-server", []byte(goodDB[:len(goodDB)*3/5]), "null", 400, "Invalid JSON: the file ends early"},
		{"db.json: past max_bytes while read", "json-server", []byte(goodDB), fmt.Sprint(size - 1), 413,
			fmt.Sprintf("The db.json's values come to more than %d bytes (the workspace's max_bytes)", size-1)},
		{"db.json: past max_bytes with what is held", "json-server", []byte(goodDB), fmt.Sprint(size + 1000), 403, "Workspace limit reached: max_bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			limit(tc.maxBytes)
			a := send(t, "POST", p.url+"/admin/v1/projects/"+decoy.DefaultProjectID+"/import?format="+tc.format, string(tc.body),
				append(auth, "Content-Type", "application/octet-stream")...)
			if a.status != tc.status || !strings.Contains(a.body, tc.msg) {
				t.Errorf("import: %d %s, want %d %s", a.status, a.body, tc.status, tc.msg)
			}
			sameSnapshots(t, snapshots(t, p), before)
			if rs := routeList(t, p); len(rs) != 0 {
				t.Errorf("routes after a failed import: %q", rs)
			}
			vs := send(t, "GET", p.url+"/admin/v1/mocks/"+existing.ID+"/versions", "", auth...)
			if vs.status != 200 || strings.Count(vs.body, `"version":`) != 1 {
				t.Errorf("versions of the mock the import did not touch: %d %s", vs.status, vs.body)
			}
			if store == nil {
				if got := files(); !slices.Equal(got, filesBefore) {
					t.Errorf("files after a failed import:\n got %q\nwant %q", got, filesBefore)
				}
			}
		})
	}
	// The same archive, within the limit, is imported whole.
	limit(fmt.Sprint(size + 200<<10))
	a = send(t, "POST", p.url+"/admin/v1/projects/"+decoy.DefaultProjectID+"/import?format=decoy", string(good),
		append(auth, "Content-Type", "application/octet-stream")...)
	if a.status != 201 || len(snapshots(t, p)) != 1+len(docs) || len(routeList(t, p)) != len(docs) {
		t.Fatalf("the import within the limit: %d %s", a.status, a.body)
	}
	// Its keys are the export's routes' paths: it updates their mocks,
	// whose versions the workspace holds too.
	limit(fmt.Sprint(3*size + 400<<10))
	a = send(t, "POST", p.url+"/admin/v1/projects/"+decoy.DefaultProjectID+"/import?format=json-server", goodDB,
		append(auth, "Content-Type", "application/octet-stream")...)
	if a.status != 201 || strings.Count(a.body, `"size":`) != len(docs) || len(snapshots(t, p)) != 1+len(docs) || len(routeList(t, p)) != 6*len(docs) {
		t.Fatalf("the db.json within the limit: %d %.300s", a.status, a.body)
	}
}

// dbJSON is a json-server db.json of the given values, keys m0, m1, ….
func dbJSON(values ...string) string {
	var b strings.Builder
	b.WriteString("{")
	for i, v := range values {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, "\n  \"m%d\": %s", i, v)
	}
	b.WriteString("\n}\n")
	return b.String()
}

// TestImportStreamsDBJSON: a json-server db.json of 20 collections of
// about 60 KiB, 18 times --max-data-bytes and more than the first MiB the
// server reads to guess its format, goes through decoy import (format
// guessed) into a server with those settings, each collection a mock with
// json-server's routes, its bytes as the file's; imported again, it
// updates the same mocks. A file once had to fit in --max-data-bytes
// whole. On both stores.
func TestImportStreamsDBJSON(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) { testImportStreamsDBJSON(t, nil) })
	t.Run("postgres", func(t *testing.T) { testImportStreamsDBJSON(t, []string{"--database-url", postgresURL(t)}) })
}

func testImportStreamsDBJSON(t *testing.T, store []string) {
	p := start(t, t.TempDir(), append(store, "--admin-token", adminToken, "--max-data-bytes", fmt.Sprint(streamMaxData))...)
	const n = 20
	var docs []string
	for range n {
		docs = append(docs, randomDoc(t, 60<<10))
	}
	file := filepath.Join(t.TempDir(), "db.json")
	db := dbJSON(docs...)
	if len(db) <= importer.DetectBytes {
		t.Fatalf("the db.json is %d bytes: not more than the %d the server reads to guess", len(db), importer.DetectBytes)
	}
	if err := os.WriteFile(file, []byte(db), 0o600); err != nil {
		t.Fatal(err)
	}
	for round, want := range []string{fmt.Sprintf("Created %d mocks", n), fmt.Sprintf("Updated %d mocks", n)} {
		stdout, stderr, code := decoyCLI(t, p, "", "import", file, "-o", "table")
		if code != 0 || !strings.Contains(stdout, want) {
			t.Fatalf("import %d: %d %s %s", round+1, code, stdout, stderr)
		}
		got := snapshots(t, p)
		if len(got) != n {
			t.Fatalf("import %d: %d mocks, want %d", round+1, len(got), n)
		}
		byName := map[string]snapshot{}
		for _, s := range got {
			byName[s.mock.Name] = s
		}
		for i, d := range docs {
			if s := byName[fmt.Sprint("m", i)]; s.data != d || s.ct != "application/json" {
				t.Errorf("import %d: mock m%d holds %d bytes of %q, want the file's %d", round+1, i, len(s.data), s.ct, len(d))
			}
		}
		if rs := routeList(t, p); len(rs) != 6*n {
			t.Errorf("import %d: %d routes, want %d", round+1, len(rs), 6*n)
		}
	}
	a := send(t, "GET", p.url+"/p/default/m7", "")
	if a.status != 200 || a.body != docs[7] {
		t.Errorf("GET /p/default/m7: %d, %d bytes", a.status, len(a.body))
	}
}
