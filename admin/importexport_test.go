package admin_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/decoy-mock/decoy"
	"github.com/decoy-mock/decoy/client"
	"github.com/decoy-mock/decoy/importer"
	"github.com/decoy-mock/decoy/internal/servertest"
	"github.com/decoy-mock/decoy/server"
)

const projectPath = "/admin/v1/projects/" + decoy.DefaultProjectID

type importAnswer struct {
	Created []client.Mock    `json:"created"`
	Skipped []client.Skipped `json:"skipped"`
}

func decodeImport(t *testing.T, r servertest.Response, status int) importAnswer {
	t.Helper()
	if r.Status != status {
		t.Fatalf("status %d, want %d: %s", r.Status, status, r.Body)
	}
	var a importAnswer
	if err := json.Unmarshal([]byte(r.Body), &a); err != nil {
		t.Fatal(err)
	}
	return a
}

func mockCount(h *servertest.Harness) int {
	h.T.Helper()
	mocks, _, err := h.Admin.ListMocks(context.Background(), "", 1000)
	if err != nil {
		h.T.Fatal(err)
	}
	return len(mocks)
}

// TestImportOpenAPI imports a description written by others: each mock
// serves its example. Operations on a resource share its mock (§11.5):
// the events' GET, PATCH and DELETE by id are routes on the list's mock,
// and every operation is imported.
func TestImportOpenAPI(t *testing.T) {
	h := servertest.New(t)
	doc, err := os.ReadFile("../importer/testdata/thirdparty/museum.yaml")
	if err != nil {
		t.Fatal(err)
	}
	a := decodeImport(t, h.SendFile("POST", projectPath+"/import?format=openapi", doc), 201)
	names := map[string]client.Mock{}
	for _, m := range a.Created {
		names[m.Name] = m
	}
	if len(a.Created) != 4 || names["listSpecialEvents"].ID == "" || names["buyMuseumTickets"].ID == "" {
		t.Fatalf("created %+v", a.Created)
	}
	r := h.Get("/mock/" + names["buyMuseumTickets"].ID)
	if r.Status != 200 || !strings.Contains(r.Body, `"message":"Museum general entry ticket purchased"`) {
		t.Errorf("GET the mock: %d %s", r.Status, r.Body)
	}
	r = h.Get("/mock/" + names["listSpecialEvents"].ID + "?filters=name%3DCook%20like%20a%20Caveman")
	if r.Status != 200 || r.Header.Get("X-Total-Count") != "1" {
		t.Errorf("a query on an imported array: %d %s", r.Status, r.Body)
	}
	if len(a.Skipped) != 0 {
		t.Errorf("skipped %+v", a.Skipped)
	}
}

func TestImportJSONServerKeepsBytes(t *testing.T) {
	h := servertest.New(t)
	db := "{\"posts\": [ {\"id\": 1.0, \"title\": \"caf\\u00e9\"} ], \"profile\": {\"name\": \"typicode\"}}"
	// No format: guessed from the content.
	a := decodeImport(t, h.SendFile("POST", projectPath+"/import", []byte(db)), 201)
	if len(a.Created) != 2 || a.Created[0].Name != "posts" || a.Created[1].Name != "profile" || len(a.Skipped) != 0 {
		t.Fatalf("answer %+v", a)
	}
	if r := h.Get("/mock/" + a.Created[0].ID); r.Body != `[ {"id": 1.0, "title": "caf\u00e9"} ]` {
		t.Errorf("data %q", r.Body)
	}
}

func TestImportDryRun(t *testing.T) {
	h := servertest.New(t)
	a := decodeImport(t, h.SendFile("POST", projectPath+"/import?format=json-server&dry_run=true", []byte(`{"a":[1],"b":{}}`)), 200)
	if len(a.Created) != 2 || a.Created[0].Name != "a" || a.Created[0].Size != 3 {
		t.Fatalf("answer %+v", a)
	}
	if n := mockCount(h); n != 0 {
		t.Fatalf("a dry run stored %d mocks", n)
	}
}

func TestImportErrors(t *testing.T) {
	h := servertest.New(t, func(c *server.Config) { c.MaxDataBytes = 1 << 10 })
	big := []byte(`{"a":"` + strings.Repeat("x", 2<<10) + `"}`)
	for _, tc := range []struct {
		name, path string
		body       []byte
		status     int
		msg        string
	}{
		{"unknown project", "/admin/v1/projects/00000000-0000-4000-8000-000000000001/import", []byte(`{}`), 404, "Project not found"},
		{"not a uuid", "/admin/v1/projects/default/import", []byte(`{}`), 404, "Project not found"},
		{"unknown format", projectPath + "/import?format=csv", []byte(`a,b`), 400, "format must be openapi, json-server or decoy"},
		{"unknown parameter", projectPath + "/import?force=1", []byte(`{}`), 400, "Unknown parameter: force"},
		{"bad boolean", projectPath + "/import?dry_run=maybe", []byte(`{}`), 400, "dry_run must be true or false"},
		{"too large", projectPath + "/import?format=json-server", big, 413, `The value of \"a\" is larger than 1024 bytes (--max-data-bytes)`},
		{"too large, guessed", projectPath + "/import", big, 413, `The value of \"a\" is larger than 1024 bytes (--max-data-bytes)`},
		{"OpenAPI too large", projectPath + "/import?format=openapi", big, 413, "The file is larger than 1024 bytes (--max-data-bytes)"},
		{"not an object", projectPath + "/import?format=json-server", []byte(`[1]`), 400, "A json-server db.json must be a JSON object, one key per resource"},
		{"tar with ..", projectPath + "/import?format=decoy", tarGz(t, "../x", "1"), 400, `The export entry \"../x\" has a name outside the export (absolute, or with ..)`},
		{"invalid JSON value", projectPath + "/import?format=decoy", exportOf(t, `{"a":`), 400, `Mock "m": Invalid JSON: unexpected end of JSON input (line 1, column 6)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := h.SendFile("POST", tc.path, tc.body)
			if tc.status == 400 && tc.name == "invalid JSON value" {
				if r.Status != 400 || !strings.HasPrefix(r.Body, `{"error":"Mock \"m\": Invalid JSON`) {
					t.Errorf("got %d %s", r.Status, r.Body)
				}
				return
			}
			servertest.WantError(t, r, tc.status, tc.msg)
		})
	}
	r := h.SendFile("GET", "/admin/v1/projects/00000000-0000-4000-8000-000000000001/export", nil)
	servertest.WantError(t, r, 404, "Project not found")
	r = h.SendFile("PUT", projectPath+"/import", nil)
	if r.Status != 405 || r.Header.Get("Allow") != "POST" {
		t.Errorf("PUT …/import: %d %s", r.Status, r.Header.Get("Allow"))
	}
	if n := mockCount(h); n != 0 {
		t.Fatalf("failed imports stored %d mocks", n)
	}
}

func tarGz(t *testing.T, name, body string) []byte {
	var b bytes.Buffer
	gz := gzip.NewWriter(&b)
	tw := tar.NewWriter(gz)
	tw.WriteHeader(&tar.Header{Name: name, Typeflag: tar.TypeReg, Size: int64(len(body)), Mode: 0o644})
	tw.Write([]byte(body))
	tw.Close()
	gz.Close()
	return b.Bytes()
}

// exportOf is an export of one JSON mock named m holding data.
func exportOf(t *testing.T, data string) []byte {
	id := "00000000-0000-4000-8000-000000000009"
	manifest := `{"format":"decoy-export","version":1,"project":"p","mocks":[{"id":"` + id + `","name":"m","content_type":"application/json","status":200}]}`
	var b bytes.Buffer
	gz := gzip.NewWriter(&b)
	tw := tar.NewWriter(gz)
	for _, f := range [][2]string{{"data/" + id + ".json", data}, {"decoy.json", manifest}} {
		tw.WriteHeader(&tar.Header{Name: f[0], Typeflag: tar.TypeReg, Size: int64(len(f[1])), Mode: 0o644})
		tw.Write([]byte(f[1]))
	}
	tw.Close()
	gz.Close()
	return b.Bytes()
}

// TestExportImportRoundTrip: export, delete every mock, import the export:
// the same ids, settings and bytes; a private mock is private again with a
// new token, and its old one is refused.
func TestExportImportRoundTrip(t *testing.T) {
	h := servertest.New(t)
	ctx := context.Background()
	open := h.Create(`[{"id": 1.0, "t":"\u00e9"}]`, client.CreateOptions{Name: "users", Status: 203, DelayMS: 5, RateLimit: servertest.Ptr(int64(9)), MonthlyQuota: servertest.Ptr(int64(0))})
	priv := h.Create("a,b\n1,2\n", client.CreateOptions{Name: "csv", Private: true, ContentType: "text/csv"})
	before := map[string]client.Mock{}
	for _, id := range []string{open.ID, priv.ID} {
		m, err := h.Admin.GetMock(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		before[id] = *m
	}

	r := h.SendFile("GET", projectPath+"/export", nil)
	if r.Status != 200 || r.Header.Get("Content-Type") != "application/gzip" ||
		r.Header.Get("Content-Disposition") != `attachment; filename=decoy-default.tar.gz` {
		t.Fatalf("export: %d %v", r.Status, r.Header)
	}
	if strings.Contains(gunzip(t, []byte(r.Body)), priv.Token) {
		t.Fatal("the export holds a token")
	}
	export := []byte(r.Body)
	for id := range before {
		if err := h.Admin.DeleteMock(ctx, id); err != nil {
			t.Fatal(err)
		}
	}

	a := decodeImport(t, h.SendFile("POST", projectPath+"/import?format=decoy", export), 201)
	if len(a.Created) != 2 {
		t.Fatalf("created %+v", a.Created)
	}
	for _, m := range a.Created {
		b := before[m.ID]
		if m.Name != b.Name || m.ContentType != b.ContentType || m.Private != b.Private || m.Status != b.Status || m.DelayMS != b.DelayMS ||
			!eqLimit(m.RateLimit, b.RateLimit) || !eqLimit(m.MonthlyQuota, b.MonthlyQuota) || m.ETag != b.ETag || m.Size != b.Size {
			t.Errorf("imported %+v\nwas %+v", m.Mock, b.Mock)
		}
		if (m.Token != "") != m.Private {
			t.Errorf("mock %s: private %v, token %q", m.ID, m.Private, m.Token)
		}
	}
	if r := h.Get("/mock/" + open.ID); r.Status != 203 || r.Body != `[{"id": 1.0, "t":"\u00e9"}]` {
		t.Errorf("open mock: %d %q", r.Status, r.Body)
	}
	newToken := a.Created[1].Token
	if a.Created[1].ID != priv.ID {
		newToken = a.Created[0].Token
	}
	if r := h.Get("/mock/"+priv.ID, "decoyauthtoken", priv.Token); r.Status != 401 {
		t.Errorf("the old token: %d", r.Status)
	}
	if r := h.Get("/mock/"+priv.ID, "decoyauthtoken", newToken); r.Status != 200 || r.Body != "a,b\n1,2\n" {
		t.Errorf("the new token: %d %q", r.Status, r.Body)
	}

	// Again: the ids are taken, so nothing is imported.
	r = h.SendFile("POST", projectPath+"/import?format=decoy", export)
	if r.Status != 409 || !strings.Contains(r.Body, "already exists; nothing was imported") {
		t.Errorf("second import: %d %s", r.Status, r.Body)
	}
	if n := mockCount(h); n != 2 {
		t.Errorf("%d mocks after a refused import", n)
	}
	a = decodeImport(t, h.SendFile("POST", projectPath+"/import?format=decoy&new_ids=true", export), 201)
	if len(a.Created) != 2 || before[a.Created[0].ID].ID != "" || mockCount(h) != 4 {
		t.Errorf("new_ids: %+v", a.Created)
	}
}

func eqLimit(a, b *int64) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }

func gunzip(t *testing.T, b []byte) string {
	gz, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	out, err := io.ReadAll(gz)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// batchStore is a store that writes imports in one transaction, as both
// stores do.
type batchStore interface {
	decoy.Store
	decoy.RouteStore
}

// raceStore fails WriteImport when fail is set, and hides the mocks that
// exist from FindMock when hide is set, as when another replica creates
// one of an import's ids between its check and its transaction.
type raceStore struct {
	batchStore
	fail, hide bool
}

func (f *raceStore) WriteImport(ctx context.Context, b decoy.ImportBatch) (*decoy.ImportWritten, error) {
	if f.fail {
		return nil, errors.New("store failed")
	}
	return f.batchStore.WriteImport(ctx, b)
}

func (f *raceStore) FindMock(ctx context.Context, id string) (*decoy.Mock, error) {
	if f.hide {
		return nil, decoy.Errorf(decoy.ENOTFOUND, "Mock api not found")
	}
	return f.batchStore.FindMock(ctx, id)
}

// TestImportAllOrNothing: an import whose transaction fails stores
// nothing, and one that meets an id taken since its check imports nothing
// and says which (the stores' transactions: storetest.RunBatch).
func TestImportAllOrNothing(t *testing.T) {
	rs := &raceStore{}
	h := servertest.New(t, func(c *server.Config) { rs.batchStore = c.Store.(batchStore); c.Store, c.Routes = rs, rs })
	ctx := context.Background()

	rs.fail = true
	servertest.WantError(t, h.SendFile("POST", projectPath+"/import?format=json-server", []byte(`{"a":1,"b":2,"c":3}`)), 500, "Internal server error")
	if left, _, _ := h.Store.ListMocks(ctx, "", 100); len(left) != 0 {
		t.Errorf("%d mocks left behind by a failed import", len(left))
	}
	rs.fail = false

	const taken = "00000000-0000-4000-8000-000000000009"
	h.Create(`"in the way"`, client.CreateOptions{ID: taken})
	export := exportOfMocks(t, "00000000-0000-4000-8000-000000000001", "00000000-0000-4000-8000-000000000002", taken)
	rs.hide = true
	r := h.SendFile("POST", projectPath+"/import?format=decoy", export)
	rs.hide = false
	servertest.WantError(t, r, 409, "A mock with id "+taken+" already exists; nothing was imported (import with new_ids=true, the CLI's --new-ids, to give the mocks new ids)")
	left, _, _ := h.Store.ListMocks(ctx, "", 100)
	if len(left) != 1 || left[0].ID != taken {
		t.Errorf("after a refused import: %d mocks", len(left))
	}
	if r := h.Get("/mock/00000000-0000-4000-8000-000000000001"); r.Status != 404 {
		t.Errorf("a mock of the refused import is served: %d", r.Status)
	}
	if r := h.Get("/mock/" + taken); r.Body != `"in the way"` {
		t.Errorf("the mock in the way: %q", r.Body)
	}
}

// exportOfMocks is an export of open JSON mocks with these ids.
func exportOfMocks(t *testing.T, ids ...string) []byte {
	var mocks []string
	var b bytes.Buffer
	gz := gzip.NewWriter(&b)
	tw := tar.NewWriter(gz)
	for _, id := range ids {
		mocks = append(mocks, `{"id":"`+id+`","name":"m","content_type":"application/json","status":200}`)
		tw.WriteHeader(&tar.Header{Name: "data/" + id + ".json", Typeflag: tar.TypeReg, Size: 3, Mode: 0o644})
		tw.Write([]byte("[1]"))
	}
	manifest := `{"format":"decoy-export","version":1,"project":"p","mocks":[` + strings.Join(mocks, ",") + `]}`
	tw.WriteHeader(&tar.Header{Name: "decoy.json", Typeflag: tar.TypeReg, Size: int64(len(manifest)), Mode: 0o644})
	tw.Write([]byte(manifest))
	tw.Close()
	gz.Close()
	return b.Bytes()
}

// TestImportExportMatchOpenAPI validates live answers against
// server/openapi.json.
func TestImportExportMatchOpenAPI(t *testing.T) {
	router := servertest.OpenAPIRouter(t)
	h := servertest.New(t)
	h.Create(`[1]`, client.CreateOptions{Name: "x"})
	for _, tc := range []struct {
		method, path string
		body         []byte
		status       int
	}{
		{"POST", projectPath + "/import?format=json-server&dry_run=true", []byte(`{"a":[1]}`), 200},
		{"POST", projectPath + "/import?format=json-server", []byte(`{"a":[1]}`), 201},
		{"POST", projectPath + "/import?format=openapi", []byte(`{"openapi":"3.0.0"`), 400},
		{"POST", "/admin/v1/projects/00000000-0000-4000-8000-000000000001/import", []byte(`{}`), 404},
		{"POST", projectPath + "/import?format=decoy", exportOf(t, `[1]`), 201},
		{"POST", projectPath + "/import?format=decoy", exportOf(t, `[1]`), 409},
		{"GET", projectPath + "/export", nil, 200},
		{"GET", "/admin/v1/projects/00000000-0000-4000-8000-000000000001/export", nil, 404},
	} {
		t.Run(tc.method+" "+tc.path, func(t *testing.T) {
			h.CheckDocumented(t, router, tc.method, tc.path, tc.body, tc.status,
				"Authorization", "Bearer "+servertest.AdminToken, "Content-Type", "application/octet-stream")
		})
	}
}

// TestSeedMock: a mock of an exported folder given to --seed is created
// with its id and settings; seeded again, it takes the folder's settings
// where they differ, and a token is issued only when it turns private.
func TestSeedMock(t *testing.T) {
	h := servertest.New(t)
	ctx := context.Background()
	id := "00000000-0000-4000-8000-0000000000aa"
	m := func(private bool, status int, rate *int64) *decoy.Mock {
		return &decoy.Mock{ID: id, Name: "seeded", ContentType: "application/json", Private: private, Status: status, RateLimit: rate}
	}
	got, changed, token, err := h.Srv.Admin().SeedMock(ctx, m(false, 201, servertest.Ptr(int64(3))), []byte(`[1]`), nil)
	if err != nil || !changed || token != "" || got.Status != 201 || *got.RateLimit != 3 {
		t.Fatalf("first seed: %+v %v %q %v", got, changed, token, err)
	}
	if _, changed, _, _ = h.Srv.Admin().SeedMock(ctx, m(false, 201, servertest.Ptr(int64(3))), []byte(`[1]`), nil); changed {
		t.Error("the same seed again changed the mock")
	}
	got, changed, token, err = h.Srv.Admin().SeedMock(ctx, m(true, 202, nil), []byte(`[1]`), nil)
	if err != nil || !changed || token == "" || !got.Private || got.Status != 202 || got.RateLimit != nil {
		t.Fatalf("turned private: %+v %v %q %v", got, changed, token, err)
	}
	if r := h.Get("/mock/"+id, "decoyauthtoken", token); r.Status != 202 || r.Body != "[1]" {
		t.Errorf("read with the token: %d %s", r.Status, r.Body)
	}
	if _, _, again, _ := h.Srv.Admin().SeedMock(ctx, m(true, 202, nil), []byte(`[2]`), nil); again != "" {
		t.Error("a mock private already got a new token")
	}
	if r := h.Get("/mock/"+id, "decoyauthtoken", token); r.Status != 202 || r.Body != "[2]" {
		t.Errorf("after new data: %d %s", r.Status, r.Body)
	}
}

// TestImportAtTheBound: a db.json's value of exactly --max-data-bytes is
// imported, one byte more is 413; so is an OpenAPI file, which is read
// whole. A db.json of many values at the bound, much larger than
// --max-data-bytes, is imported (it streams).
func TestImportAtTheBound(t *testing.T) {
	const max = 1 << 10
	h := servertest.New(t, func(c *server.Config) { c.MaxDataBytes = max })
	value := func(n int) string { return `"` + strings.Repeat("x", n-2) + `"` }
	if r := h.SendFile("POST", projectPath+"/import?format=json-server", []byte(`{"a":`+value(max)+`}`)); r.Status != 201 {
		t.Errorf("a value of exactly the limit: %d %s", r.Status, r.Body)
	}
	servertest.WantError(t, h.SendFile("POST", projectPath+"/import?format=json-server", []byte(`{"a":`+value(max+1)+`}`)), 413,
		`The value of \"a\" is larger than 1024 bytes (--max-data-bytes)`)
	var db strings.Builder
	db.WriteString("{")
	for i := range 40 {
		fmt.Fprintf(&db, `%s"k%d":%s`, map[bool]string{true: ",", false: ""}[i > 0], i, value(max))
	}
	db.WriteString("}")
	if r := h.SendFile("POST", projectPath+"/import", []byte(db.String())); r.Status != 201 || strings.Count(r.Body, `"size":1024`) != 40 {
		t.Errorf("a db.json of 40 values at the limit (%d bytes): %d %.300s", db.Len(), r.Status, r.Body)
	}
	openapi := `{"openapi":"3.0.3","info":{"title":"` + strings.Repeat("x", max) + `","version":"1"},"paths":{}}`
	servertest.WantError(t, h.SendFile("POST", projectPath+"/import", []byte(openapi)), 413, "The file is larger than 1024 bytes (--max-data-bytes)")
}

// TestImportGuessesLate: without a format, a file is guessed from its
// first MiB (importer.DetectBytes), and past it, when that does not tell,
// from its whole (kept in the upload folder meanwhile): a JSON OpenAPI
// description whose "openapi" member comes late, as a serializer that
// sorts keys writes it, is one; a db.json whose records have an "openapi"
// member is one. Given as json-server, the description is a db.json.
func TestImportGuessesLate(t *testing.T) {
	uploads := t.TempDir()
	h := servertest.New(t, func(c *server.Config) {
		c.MaxDataBytes = 4 << 20
		c.UploadDir = uploads
	})
	left := func(what string) {
		t.Helper()
		if files, _ := os.ReadDir(uploads); len(files) != 0 {
			t.Errorf("%s: %d files left in the upload folder", what, len(files))
		}
	}
	doc := `{"components":{"schemas":{"X":{"description":"` + strings.Repeat("x", importer.DetectBytes) + `"}}},` +
		`"info":{"title":"late","version":"1"},"openapi":"3.0.3",` +
		`"paths":{"/late":{"get":{"operationId":"late","responses":{"200":{"description":"x","content":{"application/json":{"example":[1]}}}}}}}}`
	r := h.SendFile("POST", projectPath+"/import", []byte(doc))
	if r.Status != 201 || !strings.Contains(r.Body, `"name":"late"`) || strings.Contains(r.Body, `"name":"components"`) {
		t.Errorf("a late openapi member, guessed: %d %.300s", r.Status, r.Body)
	}
	left("OpenAPI guessed late")
	if r := h.SendFile("POST", projectPath+"/import?format=json-server&dry_run=true", []byte(doc)); r.Status != 200 || strings.Count(r.Body, `"name":`) != 4 {
		t.Errorf("as json-server: %d %.300s", r.Status, r.Body)
	}
	db := `{"specs":[{"id":1,"openapi":"3.0.3","body":"` + strings.Repeat("x", importer.DetectBytes) + `"}],"swaggers":[]}`
	r = h.SendFile("POST", projectPath+"/import", []byte(db))
	if r.Status != 201 || !strings.Contains(r.Body, `"name":"specs"`) || !strings.Contains(r.Body, `"name":"swaggers"`) {
		t.Errorf("a db.json with openapi in its records, guessed: %d %.300s", r.Status, r.Body)
	}
	left("db.json guessed late")
	big := `{"components":{"x":"` + strings.Repeat("x", 4<<20) + `"},"openapi":"3.0.3"}`
	servertest.WantError(t, h.SendFile("POST", projectPath+"/import", []byte(big)), 413, "The file is larger than 4194304 bytes (--max-data-bytes)")
	left("OpenAPI too large, guessed late")
}

// TestImportOpenAPIGenerates: an operation without an example gets data
// generated from its schema (§7), valid against it; one whose schema
// cannot be generated is skipped, saying why.
func TestImportOpenAPIGenerates(t *testing.T) {
	h := servertest.New(t)
	doc := `openapi: 3.1.0
info: {title: t, version: "1"}
paths:
  /users:
    get:
      operationId: listUsers
      responses:
        "200":
          description: ok
          content:
            application/json:
              schema:
                type: array
                minItems: 3
                maxItems: 3
                items: {$ref: "#/components/schemas/User"}
  /odd:
    get:
      operationId: odd
      responses:
        "200":
          description: ok
          content:
            application/json:
              schema: {not: {type: string}}
components:
  schemas:
    User:
      type: object
      required: [id, email]
      properties:
        id: {type: integer, minimum: 1, maximum: 9}
        email: {type: string, format: email}
`
	a := decodeImport(t, h.SendFile("POST", projectPath+"/import?format=openapi", []byte(doc)), 201)
	if len(a.Created) != 1 || a.Created[0].Name != "listUsers" {
		t.Fatalf("created %+v", a.Created)
	}
	var users []struct {
		ID    int    `json:"id"`
		Email string `json:"email"`
	}
	r := h.Get("/mock/" + a.Created[0].ID)
	if err := json.Unmarshal([]byte(r.Body), &users); err != nil || len(users) != 3 {
		t.Fatalf("generated data %s: %v", r.Body, err)
	}
	for _, u := range users {
		if u.ID < 1 || u.ID > 9 || !strings.Contains(u.Email, "@") {
			t.Errorf("a generated user out of its schema: %+v", u)
		}
	}
	if len(a.Skipped) != 1 || a.Skipped[0].Source != "GET /odd 200" || !strings.HasPrefix(a.Skipped[0].Reason, "no example, and data could not be generated from its schema: ") {
		t.Errorf("skipped %+v", a.Skipped)
	}
}

// TestImportGenerationBounded: the data an import generates, for all its
// operations together, gets the time of one generation: an operation
// whose schema would take a minute to merge is skipped at the bound, and
// those after it, their time spent, are skipped saying so, rather than
// the import taking a minute per operation.
func TestImportGenerationBounded(t *testing.T) {
	h := servertest.New(t, func(c *server.Config) { c.GenerateTimeout = 100 * time.Millisecond })
	op := func(schema string) string {
		return `{"get":{"responses":{"200":{"description":"ok","content":{"application/json":{"schema":` + schema + `}}}}}}`
	}
	doc := `{"openapi":"3.1.0","info":{"title":"t","version":"1"},"paths":{` +
		`"/a":` + op(servertest.HostileAllOf(3000)) + `,"/b":` + op(`{"type":"integer"}`) + `}}`
	start := time.Now()
	a := decodeImport(t, h.SendFile("POST", projectPath+"/import?format=openapi", []byte(doc)), 201)
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("the import answered after %v", d)
	}
	reasons := map[string]string{}
	for _, sk := range a.Skipped {
		reasons[sk.Source] = sk.Reason
	}
	const prefix = "no example, and data could not be generated from its schema: "
	if len(a.Created) != 0 || len(a.Skipped) != 2 ||
		reasons["GET /a 200"] != prefix+"Generating the data took too long: make the template smaller" ||
		reasons["GET /b 200"] != prefix+"the import's 100ms of generating data were spent before this one" {
		t.Errorf("created %+v, skipped %+v", a.Created, a.Skipped)
	}
}

// TestExportImportTemplates: a mock's template goes out with the export
// and comes back with the import, in its mode.
func TestExportImportTemplates(t *testing.T) {
	h := servertest.New(t)
	ctx := context.Background()
	m := h.Create(`[]`, client.CreateOptions{Name: "numbers"})
	const tpl = `{"$repeat":3,"$item":"{{ number 1 9 }}"}`
	if r := h.Send("PUT", "/admin/v1/mocks/"+m.ID+"/template?mode=always", "application/json", tpl); r.Status != 200 {
		t.Fatalf("PUT template: %d %s", r.Status, r.Body)
	}
	export := []byte(h.SendFile("GET", projectPath+"/export", nil).Body)
	if !strings.Contains(gunzip(t, export), `"mode": "always"`) {
		t.Fatalf("the manifest lacks the template:\n%s", gunzip(t, export))
	}
	if err := h.Admin.DeleteMock(ctx, m.ID); err != nil {
		t.Fatal(err)
	}
	a := decodeImport(t, h.SendFile("POST", projectPath+"/import?format=decoy", export), 201)
	if len(a.Created) != 1 || a.Created[0].ID != m.ID {
		t.Fatalf("created %+v", a.Created)
	}
	// The template as JSON: the manifest is indented, and so is the
	// template within it.
	r := h.Send("GET", "/admin/v1/mocks/"+m.ID+"/template", "", "")
	if r.Status != 200 || !jsonSame(r.Body, tpl) {
		t.Errorf("GET template: %d %q", r.Status, r.Body)
	}
	var got struct {
		TemplateMode *string `json:"template_mode"`
	}
	json.Unmarshal([]byte(h.Send("GET", "/admin/v1/mocks/"+m.ID, "", "").Body), &got)
	if got.TemplateMode == nil || *got.TemplateMode != "always" {
		t.Errorf("template_mode %v", got.TemplateMode)
	}
	// Every read runs it afresh: three numbers.
	var nums []int
	if r := h.Get("/mock/" + m.ID); json.Unmarshal([]byte(r.Body), &nums) != nil || len(nums) != 3 || r.Header.Get("Decoy-Seed") == "" {
		t.Errorf("a read of the imported always mock: %d %s", r.Status, r.Body)
	}
	// A template that does not compile is refused, naming the mock.
	bad := regzip(bytes.Replace([]byte(gunzip(t, export)), []byte(`number 1 9`), []byte(`nmbr 1 9  `), 1))
	r = h.SendFile("POST", projectPath+"/import?format=decoy&new_ids=true", bad)
	if r.Status != 400 || !strings.Contains(r.Body, `Mock \"numbers\"`) {
		t.Errorf("a bad template: %d %s", r.Status, r.Body)
	}
}

// regzip gzips b (an export's tar, changed in place).
func regzip(b []byte) []byte {
	var out bytes.Buffer
	gz := gzip.NewWriter(&out)
	gz.Write(b)
	gz.Close()
	return out.Bytes()
}

func jsonSame(a, b string) bool {
	var ca, cb bytes.Buffer
	return json.Compact(&ca, []byte(a)) == nil && json.Compact(&cb, []byte(b)) == nil && ca.String() == cb.String()
}

// A server re-imports its own export of many small mocks: the import's
// bound is on the bytes of the export's files, not on the tar stream's
// headers and padding, which a small --max-data-bytes would refuse (found
// in black-box testing: 12 mocks of 5,457 bytes, refused at 2,000).
func TestImportOwnExportOfManySmallMocks(t *testing.T) {
	h := servertest.New(t, func(c *server.Config) { c.MaxDataBytes = 2000 })
	for i := range 12 {
		h.Create(fmt.Sprintf(`[{"id":%d,"name":"%s"}]`, i, strings.Repeat("x", 400)), client.CreateOptions{Name: fmt.Sprintf("m%d", i)})
	}
	r := h.SendFile("GET", projectPath+"/export", nil)
	if r.Status != 200 {
		t.Fatalf("export: %d %s", r.Status, r.Body)
	}
	a := decodeImport(t, h.SendFile("POST", projectPath+"/import?format=decoy&new_ids=true", []byte(r.Body)), 201)
	if len(a.Created) != 12 {
		t.Errorf("%d mocks created, want 12", len(a.Created))
	}
}
