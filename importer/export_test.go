package importer_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/decoy-mock/decoy"
	"github.com/decoy-mock/decoy/importer"
)

func ptr[T any](v T) *T { return &v }

var exportMocks = []importer.ManifestMock{
	{ID: "00000000-0000-4000-8000-000000000001", Name: "users", ContentType: "application/json", Status: 200},
	{ID: "00000000-0000-4000-8000-000000000002", Name: "secret", ContentType: "text/csv; charset=utf-8", Private: true, Status: 203,
		DelayMS: 50, RateLimit: ptr(int64(7)), MonthlyQuota: ptr(int64(0))},
	{ID: "00000000-0000-4000-8000-000000000003", Name: "generated", ContentType: "application/json", Status: 200,
		Template: &importer.ManifestTemplate{Mode: "always", ContentType: "application/schema+json", Body: []byte(`{"type":"integer"}`)}},
}

var exportData = [][]byte{[]byte(`[{"id": 1.0}]`), []byte("a,b\n\x00\xff"), []byte(`7`)}

func export(t *testing.T) []byte {
	t.Helper()
	var b bytes.Buffer
	w := importer.NewExportWriter(&b, "default", time.Unix(0, 0))
	for i, m := range exportMocks {
		if err := w.Add(m, int64(len(exportData[i])), bytes.NewReader(exportData[i])); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func checkExport(t *testing.T, r *importer.Result) {
	t.Helper()
	if len(r.Mocks) != len(exportMocks) {
		t.Fatalf("%d mocks", len(r.Mocks))
	}
	for i, m := range r.Mocks {
		want := exportMocks[i]
		got := importer.ManifestOf(m)
		if got.Template != nil {
			var b bytes.Buffer
			json.Compact(&b, got.Template.Body)
			got.Template.Body = b.Bytes()
		}
		if !reflect.DeepEqual(got, want) || !bytes.Equal(m.Data, exportData[i]) {
			t.Errorf("mock %d = %+v %q, want %+v %q", i, got, m.Data, want, exportData[i])
		}
	}
}

func TestExportRoundTrip(t *testing.T) {
	b := export(t)
	if importer.Detect(b) != importer.FormatDecoy {
		t.Fatal("an export is not detected as one")
	}
	r, err := importer.ReadExport(bytes.NewReader(b), importer.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	checkExport(t, r)

	// The same files unpacked into a folder.
	dir := t.TempDir()
	err = importer.WalkExport(bytes.NewReader(b), importer.Limits{}, func(name string, size int64, body io.Reader) error {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		data, err := io.ReadAll(body)
		if err != nil {
			return err
		}
		return os.WriteFile(p, data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	if !importer.HasManifest(dir) {
		t.Fatal("no manifest in the folder")
	}
	manifest, _ := os.ReadFile(filepath.Join(dir, importer.ManifestName))
	if bytes.Contains(manifest, []byte("token")) {
		t.Errorf("the manifest names a token: %s", manifest)
	}
	if r, err = importer.ReadExportDir(dir, importer.Limits{}); err != nil {
		t.Fatal(err)
	}
	checkExport(t, r)
}

// entry is one file of a hand-made archive.
type entry struct {
	name     string
	typ      byte
	body     string
	linkname string
}

func archive(t *testing.T, entries ...entry) []byte {
	t.Helper()
	var b bytes.Buffer
	gz := gzip.NewWriter(&b)
	tw := tar.NewWriter(gz)
	for _, e := range entries {
		typ := e.typ
		if typ == 0 {
			typ = tar.TypeReg
		}
		size := int64(len(e.body))
		if typ != tar.TypeReg {
			size = 0
		}
		if err := tw.WriteHeader(&tar.Header{Name: e.name, Typeflag: typ, Size: size, Linkname: e.linkname, Mode: 0o644}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(e.body)); err != nil {
			t.Fatal(err)
		}
	}
	tw.Close()
	gz.Close()
	return b.Bytes()
}

func manifest(ids ...string) string {
	m := importer.Manifest{Format: importer.ExportFormat, Version: importer.ExportVersion, Project: "p"}
	for _, id := range ids {
		m.Mocks = append(m.Mocks, importer.ManifestMock{ID: id, Name: "m", ContentType: "application/json", Status: 200})
	}
	b, _ := json.Marshal(m)
	return string(b)
}

const id1 = "00000000-0000-4000-8000-000000000001"

func TestReadExportHostile(t *testing.T) {
	lim := importer.Limits{MaxDataBytes: 1 << 10, MaxUnpackedBytes: 64 << 10, MaxMocks: 4}
	var many []entry
	for i := 0; i < 20; i++ {
		many = append(many, entry{name: "data/", typ: tar.TypeDir})
	}
	bomb := func() []byte {
		// 64 MiB of zeros gzip to about 64 KiB.
		var b bytes.Buffer
		gz := gzip.NewWriter(&b)
		tw := tar.NewWriter(gz)
		tw.WriteHeader(&tar.Header{Name: "data/" + id1 + ".json", Typeflag: tar.TypeReg, Size: 64 << 20})
		io.Copy(tw, io.LimitReader(zeros{}, 64<<20))
		tw.Close()
		gz.Close()
		return b.Bytes()
	}
	tests := []struct {
		name string
		file []byte
		code string
		text string
	}{
		{"not gzip", []byte("PK\x03\x04 a zip"), decoy.EINVALID, "not a gzip stream"},
		{"gzip of garbage", gzipOf("not a tar at all, not a tar at all"), decoy.EINVALID, "Not a valid Decoy export"},
		{"no manifest", archive(t, entry{name: "data/" + id1 + ".json", body: "1"}), decoy.EINVALID, "no decoy.json"},
		{"dot-dot", archive(t, entry{name: "../evil.json", body: "1"}), decoy.EINVALID, "outside the export"},
		{"dot-dot inside", archive(t, entry{name: "data/../../evil.json", body: "1"}), decoy.EINVALID, "outside the export"},
		{"absolute", archive(t, entry{name: "/etc/cron.d/x", body: "1"}), decoy.EINVALID, "outside the export"},
		{"backslash", archive(t, entry{name: `..\evil.json`, body: "1"}), decoy.EINVALID, "outside the export"},
		{"symlink", archive(t, entry{name: "data/" + id1 + ".json", typ: tar.TypeSymlink, linkname: "/etc/passwd"}), decoy.EINVALID, "not a regular file"},
		{"hardlink", archive(t, entry{name: "decoy.json", typ: tar.TypeLink, linkname: "/etc/passwd"}), decoy.EINVALID, "not a regular file"},
		{"device", archive(t, entry{name: "decoy.json", typ: tar.TypeChar}), decoy.EINVALID, "not a regular file"},
		{"too many entries", archive(t, many...), decoy.ETOOLARGE, "more than 10 entries"},
		{"oversized entry", archive(t, entry{name: "data/" + id1 + ".json", body: strings.Repeat("1", 2<<10)}), decoy.ETOOLARGE, "larger than 1024 bytes"},
		{"gzip bomb", bomb(), decoy.ETOOLARGE, ""},
		{"unexpected file", archive(t, entry{name: "run.sh", body: "rm -rf /"}), decoy.EINVALID, "unexpected file"},
		{"data the manifest lacks", archive(t, entry{name: "decoy.json", body: manifest()}, entry{name: "data/" + id1 + ".json", body: "1"}), decoy.EINVALID, "does not list"},
		{"manifest names missing data", archive(t, entry{name: "decoy.json", body: manifest(id1)}), decoy.EINVALID, "which its manifest lists"},
		{"bad manifest", archive(t, entry{name: "decoy.json", body: "{"}), decoy.EINVALID, "Invalid decoy.json"},
		// Decoded, each bad byte would become U+FFFD, as the admin API
		// refuses to let it (a name, a rule's body).
		{"manifest not UTF-8", archive(t, entry{name: "decoy.json", body: strings.Replace(manifest(id1), `"status":200`, "\"status\":200,\"name\":\"\xff\"", 1)}, entry{name: "data/" + id1 + ".json", body: "1"}),
			decoy.EINVALID, "Invalid decoy.json: not UTF-8"},
		{"future version", archive(t, entry{name: "decoy.json", body: `{"format":"decoy-export","version":9}`}), decoy.EINVALID, "version 9"},
		{"bad id", archive(t, entry{name: "decoy.json", body: manifest("../../x")}), decoy.EINVALID, "must be a UUID"},
		{"upper-case id", archive(t, entry{name: "decoy.json", body: manifest(strings.ToUpper("0000000a-0000-4000-8000-000000000001"))}), decoy.EINVALID, "must be a UUID"},
		{"duplicate id", archive(t, entry{name: "decoy.json", body: manifest(id1, id1)}, entry{name: "data/" + id1 + ".json", body: "1"}), decoy.EINVALID, "twice"},
		{"too many mocks", archive(t, entry{name: "decoy.json", body: manifest(id1, "00000000-0000-4000-8000-000000000002",
			"00000000-0000-4000-8000-000000000003", "00000000-0000-4000-8000-000000000004", "00000000-0000-4000-8000-000000000005")}), decoy.ETOOLARGE, "more than 4 mocks"},
		{"bad status", archive(t, entry{name: "decoy.json", body: strings.Replace(manifest(id1), `"status":200`, `"status":99`, 1)},
			entry{name: "data/" + id1 + ".json", body: "1"}), decoy.EINVALID, "status"},
		{"rate limit past the bound", archive(t, entry{name: "decoy.json", body: strings.Replace(manifest(id1), `"rate_limit":null`, `"rate_limit":1000001`, 1)},
			entry{name: "data/" + id1 + ".json", body: "1"}), decoy.EINVALID, "rate_limit must be at most 1000000"},
		{"bad template mode", archive(t, entry{name: "decoy.json", body: strings.Replace(manifest(id1), `"template":null`, `"template":{"mode":"sometimes","content_type":"application/json","body":{}}`, 1)},
			entry{name: "data/" + id1 + ".json", body: "1"}), decoy.EINVALID, "template.mode must be once or always"},
		{"template without a body", archive(t, entry{name: "decoy.json", body: strings.Replace(manifest(id1), `"template":null`, `"template":{"mode":"once","content_type":"application/json"}`, 1)},
			entry{name: "data/" + id1 + ".json", body: "1"}), decoy.EINVALID, "template.body"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := importer.ReadExport(bytes.NewReader(tt.file), lim)
			wantCode(t, err, tt.code)
			if !strings.Contains(err.Error(), tt.text) {
				t.Fatalf("err = %q, want it to say %q", err, tt.text)
			}
		})
	}
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) { clear(p); return len(p), nil }

func gzipOf(s string) []byte {
	var b bytes.Buffer
	gz := gzip.NewWriter(&b)
	gz.Write([]byte(s))
	gz.Close()
	return b.Bytes()
}

func TestReadExportDirHostile(t *testing.T) {
	t.Run("link out of the folder", func(t *testing.T) {
		dir, outside := t.TempDir(), t.TempDir()
		os.WriteFile(filepath.Join(outside, "secret"), []byte(`"secret"`), 0o600)
		os.WriteFile(filepath.Join(dir, "decoy.json"), []byte(manifest(id1)), 0o600)
		os.Mkdir(filepath.Join(dir, "data"), 0o700)
		if err := os.Symlink(filepath.Join(outside, "secret"), filepath.Join(dir, "data", id1+".json")); err != nil {
			t.Skip(err)
		}
		_, err := importer.ReadExportDir(dir, importer.Limits{})
		wantCode(t, err, decoy.EINVALID)
	})
	t.Run("oversized file", func(t *testing.T) {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, "decoy.json"), []byte(manifest(id1)), 0o600)
		os.Mkdir(filepath.Join(dir, "data"), 0o700)
		os.WriteFile(filepath.Join(dir, "data", id1+".json"), bytes.Repeat([]byte("1"), 2000), 0o600)
		_, err := importer.ReadExportDir(dir, importer.Limits{MaxDataBytes: 1000})
		wantCode(t, err, decoy.ETOOLARGE)
	})
}

func TestOpenAPIHostile(t *testing.T) {
	head := "openapi: 3.0.0\ninfo: {title: t, version: '1'}\n"
	// A billion laughs: each level refers nine times to the one before.
	var laughs strings.Builder
	laughs.WriteString(head + "x-a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n")
	for i := 1; i < 10; i++ {
		fmt.Fprintf(&laughs, "x-a%d: &a%d [*a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d]\n", i, i, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1)
	}
	laughs.WriteString("paths: {}\n")

	cyclic := head + `paths:
  /a:
    get:
      responses:
        "200":
          description: x
          content:
            application/json:
              examples:
                one: {$ref: "#/components/examples/two"}
components:
  examples:
    two: {$ref: "#/components/examples/one"}
    one: {$ref: "#/components/examples/two"}
`
	cyclicSchema := head + `paths:
  /a:
    get:
      responses:
        "200":
          description: x
          content:
            application/json:
              schema: {$ref: "#/components/schemas/Node"}
              example: {"next": {"next": null}}
components:
  schemas:
    Node: {type: object, properties: {next: {$ref: "#/components/schemas/Node"}}}
`
	// A chain of $refs each pointing at another: kin-openapi takes time
	// that grows with the square of its length (2,000 links took 5 s).
	refChain := func(links int, responses string) string {
		var b strings.Builder
		b.WriteString(head + "paths:\n  /a:\n    get:\n      responses:\n        '200': {$ref: '#/components/responses/r0'}\ncomponents:\n  responses:\n")
		for i := 0; i < links-1; i++ {
			fmt.Fprintf(&b, "    r%d: {$ref: '#/components/%s/r%d'}\n", i, responses, i+1)
		}
		fmt.Fprintf(&b, "    r%d: {description: x, content: {application/json: {example: 1}}}\n", links-1)
		return b.String()
	}
	jsonChain := func(head string) string {
		var b strings.Builder
		b.WriteString(`{` + head + `"info":{"title":"t","version":"1"},"paths":{},"components":{"schemas":{`)
		for i := range 500 {
			fmt.Fprintf(&b, `"s%d":{"$ref":"#/components/schemas/s%d"},`, i, i+1)
		}
		b.WriteString(`"s500":{"type":"integer"}}}}`)
		return b.String()
	}
	var nested strings.Builder
	nested.WriteString(`{"openapi":"3.0.0","info":{"title":"t","version":"1"},"x-deep":`)
	nested.WriteString(strings.Repeat("[", 100000) + strings.Repeat("]", 100000) + `,"paths":{}}`)

	tests := []struct {
		name string
		doc  string
		ok   bool // read without error (bounded) rather than refused
	}{
		{"billion laughs", laughs.String(), false},
		{"cyclic example refs", cyclic, true}, // skipped: "its first example could not be resolved"
		{"cyclic schema", cyclicSchema, true},
		{"ref chain at the bound", refChain(100, "responses"), true},
		{"deep ref chain", refChain(2000, "responses"), false},
		{"deep ref chain, percent-encoded", refChain(2000, "%72esponses"), false},
		{"deep ref chain beside a key that is not a string", refChain(2000, "responses") + "    1: {description: y}\n", false},
		{"deep ref chain, YAML in JSON's braces", func() string {
			var b strings.Builder
			b.WriteString(`{openapi: 3.0.0, info: {title: t, version: "1"}, paths: {}, components: {schemas: {`)
			for i := range 2000 {
				fmt.Fprintf(&b, `s%d: {$ref: "#/components/schemas/s%d"}, `, i, i+1)
			}
			b.WriteString(`s2000: {type: integer}}}}`)
			return b.String()
		}(), false},
		{"deep ref chain, JSON", jsonChain(`"openapi":"3.0.0",`), false},
		{"deep ref chain, JSON with a key twice", jsonChain(`"openapi":"3.0.0","openapi":"3.0.0",`), false},
		{"deep nesting", nested.String(), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			done := make(chan struct{})
			var err error
			go func() {
				defer close(done)
				_, err = importer.OpenAPI([]byte(tt.doc), importer.Options{})
			}()
			select {
			case <-done:
			case <-time.After(20 * time.Second):
				t.Fatal("still reading after 20 s")
			}
			if tt.ok && err != nil {
				t.Fatalf("err = %v", err)
			}
			if !tt.ok {
				wantCode(t, err, decoy.EINVALID)
			}
		})
	}
	t.Run("larger than the limit", func(t *testing.T) {
		_, err := importer.OpenAPI([]byte(head+strings.Repeat("#", 2000)), importer.Options{Limits: importer.Limits{MaxDataBytes: 1000}})
		wantCode(t, err, decoy.ETOOLARGE)
		_, err = importer.JSONServer([]byte(`{"a":"`+strings.Repeat("x", 2000)+`"}`), importer.Options{Limits: importer.Limits{MaxDataBytes: 1000}})
		wantCode(t, err, decoy.ETOOLARGE)
	})
	t.Run("too many mocks", func(t *testing.T) {
		_, err := importer.JSONServer([]byte(`{"a":1,"b":2,"c":3}`), importer.Options{Limits: importer.Limits{MaxMocks: 2}})
		wantCode(t, err, decoy.ETOOLARGE)
	})
}

// TestReadExportGzipBomb: entries each within the data limit that unpack,
// together, past MaxUnpackedBytes are refused once the bound is passed.
func TestReadExportGzipBomb(t *testing.T) {
	var b bytes.Buffer
	gz := gzip.NewWriter(&b)
	tw := tar.NewWriter(gz)
	for i := 0; i < 3; i++ {
		tw.WriteHeader(&tar.Header{Name: fmt.Sprintf("data/00000000-0000-4000-8000-00000000000%d.json", i), Typeflag: tar.TypeReg, Size: 1 << 20})
		io.Copy(tw, io.LimitReader(zeros{}, 1<<20))
	}
	tw.Close()
	gz.Close()
	if b.Len() > 16<<10 {
		t.Fatalf("the bomb is %d bytes", b.Len())
	}
	_, err := importer.ReadExport(&b, importer.Limits{MaxDataBytes: 1 << 20, MaxUnpackedBytes: 2 << 20})
	wantCode(t, err, decoy.ETOOLARGE)
	if !strings.Contains(err.Error(), "unpacks to more than") {
		t.Fatalf("err = %v", err)
	}
}

// TestReadExportAtTheBound: an export whose data files (not the manifest,
// bounded on its own, nor the tar stream's headers and padding) hold
// exactly MaxUnpackedBytes is read; one byte less of room refuses it.
func TestReadExportAtTheBound(t *testing.T) {
	file := export(t)
	gz, err := gzip.NewReader(bytes.NewReader(file))
	if err != nil {
		t.Fatal(err)
	}
	var n, stream int64
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Name != importer.ManifestName {
			n += h.Size
		}
	}
	stream = int64(len(mustGunzip(t, file)))
	if stream <= n {
		t.Fatalf("the tar stream (%d bytes) is no larger than its files (%d)", stream, n)
	}
	r, err := importer.ReadExport(bytes.NewReader(file), importer.Limits{MaxUnpackedBytes: n})
	if err != nil {
		t.Fatalf("at the bound (%d bytes of files, %d of tar): %v", n, stream, err)
	}
	checkExport(t, r)
	_, err = importer.ReadExport(bytes.NewReader(file), importer.Limits{MaxUnpackedBytes: n - 1})
	wantCode(t, err, decoy.ETOOLARGE)
}

func mustGunzip(t *testing.T, b []byte) []byte {
	t.Helper()
	gz, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	out, err := io.ReadAll(gz)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// An export is whole only with its tar stream's end and nothing after it
// but zeros, in a gzip stream whose checksum holds.
func TestReadExportEnds(t *testing.T) {
	lim := importer.Limits{MaxDataBytes: 4 << 10, MaxUnpackedBytes: 64 << 10, MaxMocks: 4}
	gz, err := gzip.NewReader(bytes.NewReader(export(t)))
	if err != nil {
		t.Fatal(err)
	}
	tarred, err := io.ReadAll(gz)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasSuffix(tarred, make([]byte, 1024)) {
		t.Fatal("the export's tar stream does not end with two zero blocks")
	}
	entries := tarred[:len(tarred)-1024]
	badCRC := export(t)
	badCRC[len(badCRC)-8] ^= 0xff
	for _, tc := range []struct {
		name, text string
		file       []byte
	}{
		{"whole", "", export(t)},
		{"padded to a record, as GNU tar does", "", gzipOf(string(tarred) + string(make([]byte, 8<<10)))},
		{"without its end", "its tar stream has no end", gzipOf(string(entries))},
		{"with one end block", "its tar stream has no end", gzipOf(string(entries) + string(make([]byte, 512)))},
		{"data after its end", "data after the end of its tar stream", gzipOf(string(tarred) + "more")},
		{"gzip garbage after", "Not a valid Decoy export", append(export(t), "garbage"...)},
		{"gzip checksum wrong", "Not a valid Decoy export", badCRC},
		{"cut after an entry ending in zeros", "its tar stream has no end", func() []byte {
			var b bytes.Buffer
			gz := gzip.NewWriter(&b)
			tw := tar.NewWriter(gz)
			for i, m := range exportMocks {
				body := string(exportData[i])
				if i == len(exportMocks)-1 {
					body += string(make([]byte, 2048)) // a last entry whose data ends in zeros
				}
				tw.WriteHeader(&tar.Header{Name: "data/" + m.ID + ".json", Typeflag: tar.TypeReg, Size: int64(len(body)), Mode: 0o644})
				tw.Write([]byte(body))
			}
			tw.Flush() // no end blocks
			gz.Close()
			return b.Bytes()
		}()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := importer.ReadExport(bytes.NewReader(tc.file), lim)
			if tc.text == "" {
				if err != nil {
					t.Fatal(err)
				}
				checkExport(t, r)
				return
			}
			wantCode(t, err, decoy.EINVALID)
			if !strings.Contains(err.Error(), tc.text) {
				t.Fatalf("err = %q, want it to say %q", err, tc.text)
			}
		})
	}
}

// exportWithRoutes is export's mocks with a slug and routes; the last
// route's mock is not in the export.
func exportWithRoutes(t *testing.T, routes ...importer.ManifestRoute) []byte {
	t.Helper()
	var b bytes.Buffer
	w := importer.NewExportWriter(&b, "default", time.Unix(0, 0))
	w.SetSlug("my-api")
	for _, r := range routes {
		w.AddRoute(r)
	}
	for i, m := range exportMocks {
		if err := w.Add(m, int64(len(exportData[i])), bytes.NewReader(exportData[i])); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

var exportRoutes = []importer.ManifestRoute{
	{Method: "GET", Path: "/users", MockID: exportMocks[0].ID, Action: "read", Bind: map[string]string{}},
	{Method: "POST", Path: "/users", MockID: exportMocks[0].ID, Action: "create", Items: ptr("data"),
		RequestSchema: json.RawMessage(`{"type":"object","required":["name"]}`)},
	{Method: "PATCH", Path: "/users/{uid}", MockID: exportMocks[0].ID, Action: "update", Bind: map[string]string{"uid": "user.id"}},
	{Method: "DELETE", Path: "/users/{id}", MockID: exportMocks[0].ID}, // no action, no bind: the defaults
	{Method: "GET", Path: "/secret", MockID: exportMocks[1].ID, Action: "read"},
	{Method: "GET", Path: "/gone", MockID: "00000000-0000-4000-8000-0000000000ff", Action: "read"},
}

// TestExportRoutes: an export carries the project's slug and routes, each
// naming its mock by id; reading it gives them back, each naming its mock
// by index, with its action and bind filled in.
func TestExportRoutes(t *testing.T) {
	b := exportWithRoutes(t, exportRoutes...)
	want := []string{
		"GET /users -> 0 read",
		`POST /users -> 0 create items data schema`,
		"PATCH /users/{uid} -> 0 update bind uid=user.id",
		"DELETE /users/{id} -> 0 delete bind id=id",
		"GET /secret -> 1 read",
	}
	check := func(r *importer.Result) {
		t.Helper()
		checkExport(t, r)
		if r.Slug != "my-api" {
			t.Errorf("slug %q", r.Slug)
		}
		if got := routeSummary(r); !reflect.DeepEqual(got, want) {
			t.Errorf("routes:\n%q\nwant\n%q", got, want)
		}
		if s := string(r.Routes[1].RequestSchema); s != `{"type":"object","required":["name"]}` {
			t.Errorf("request schema %s", s)
		}
		checkRoutes(t, r)
	}
	r, err := importer.ReadExport(bytes.NewReader(b), importer.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	check(r)

	// Unpacked into a folder, and packed again as the CLI does.
	dir := t.TempDir()
	err = importer.WalkExport(bytes.NewReader(b), importer.Limits{}, func(name string, size int64, body io.Reader) error {
		p := filepath.Join(dir, filepath.FromSlash(name))
		os.MkdirAll(filepath.Dir(p), 0o755)
		data, _ := io.ReadAll(body)
		return os.WriteFile(p, data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	manifest, _ := os.ReadFile(filepath.Join(dir, importer.ManifestName))
	if bytes.Contains(manifest, []byte("/gone")) || !bytes.Contains(manifest, []byte(`"slug": "my-api"`)) {
		t.Errorf("manifest:\n%s", manifest)
	}
	if r, err = importer.ReadExportDir(dir, importer.Limits{}); err != nil {
		t.Fatal(err)
	}
	check(r)
	var again bytes.Buffer
	w := importer.NewExportWriter(&again, "default", time.Unix(0, 0))
	w.SetSlug(r.Slug)
	for _, m := range r.Mocks {
		w.Add(importer.ManifestOf(m), int64(len(m.Data)), bytes.NewReader(m.Data))
	}
	for _, rt := range r.Routes {
		w.AddRoute(importer.ManifestRouteOf(rt, r.Mocks[rt.Mock].ID))
	}
	w.Close()
	if r, err = importer.ReadExport(&again, importer.Limits{}); err != nil {
		t.Fatal(err)
	}
	check(r)

	// Under a base path, as an import with ?base_path= has it.
	r, err = importer.Read(importer.FormatDecoy, b, importer.Options{BasePath: "/v2"})
	if err != nil {
		t.Fatal(err)
	}
	if r.Routes[0].Path != "/v2/users" || r.Routes[2].Path != "/v2/users/{uid}" {
		t.Errorf("routes %q", routeSummary(r))
	}
}

// TestExportWithoutRoutes: an export written before routes (no slug, no
// routes) reads as a project without routes.
func TestExportWithoutRoutes(t *testing.T) {
	old := `{"format":"decoy-export","version":1,"project":"p","mocks":[{"id":"` + id1 + `","name":"m","content_type":"application/json","private":false,"status":200,"delay_ms":0,"rate_limit":null,"monthly_quota":null,"template":null}]}`
	r, err := importer.ReadExport(bytes.NewReader(archive(t, entry{name: "decoy.json", body: old}, entry{name: "data/" + id1 + ".json", body: "[]"})), importer.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Mocks) != 1 || r.Routes != nil || r.Slug != "" {
		t.Errorf("%+v", r)
	}
}

// TestReadExportHostileRoutes: a manifest's routes are checked as the
// admin API checks a new route, and bounded.
func TestReadExportHostileRoutes(t *testing.T) {
	withRoutes := func(slug string, routes ...string) []byte {
		m := strings.Replace(manifest(id1), `"routes":null`, `"slug":"`+slug+`","routes":[`+strings.Join(routes, ",")+`]`, 1)
		return archive(t, entry{name: "decoy.json", body: m}, entry{name: "data/" + id1 + ".json", body: "[]"})
	}
	route := func(method, path, action, rest string) string {
		return `{"method":"` + method + `","path":"` + path + `","mock_id":"` + id1 + `","action":"` + action + `"` + rest + `}`
	}
	many := make([]string, 5)
	for i := range many {
		many[i] = route("GET", fmt.Sprintf("/r%d", i), "read", "")
	}
	tests := []struct {
		name string
		file []byte
		code string
		text string
	}{
		{"at the bound", withRoutes("ok", many[:4]...), "", ""},
		{"too many routes", withRoutes("ok", many...), decoy.ETOOLARGE, "more than 4 routes"},
		{"bad slug", withRoutes("Not A Slug"), decoy.EINVALID, "slug"},
		{"bad method", withRoutes("ok", route("HEAD", "/a", "read", "")), decoy.EINVALID, "routes[0]: method"},
		{"no leading slash", withRoutes("ok", route("GET", "a", "read", "")), decoy.EINVALID, "routes[0]: path"},
		{"empty segment", withRoutes("ok", route("GET", "/a//b", "read", "")), decoy.EINVALID, "routes[0]: path"},
		{"trailing slash", withRoutes("ok", route("GET", "/a/", "read", "")), decoy.EINVALID, "routes[0]: path"},
		{"part parameter", withRoutes("ok", route("GET", "/a/{b}.json", "read", "")), decoy.EINVALID, "mixes literal text"},
		{"bad parameter name", withRoutes("ok", route("GET", "/a/{9}", "read", "")), decoy.EINVALID, "parameter name"},
		{"33 segments", withRoutes("ok", route("GET", strings.Repeat("/a", 33), "read", "")), decoy.EINVALID, "more than 32 segments"},
		{"unknown mock", withRoutes("ok", strings.Replace(route("GET", "/a", "read", ""), id1, "00000000-0000-4000-8000-000000000009", 1)), decoy.EINVALID, "mock_id"},
		{"bad action", withRoutes("ok", route("GET", "/a", "erase", "")), decoy.EINVALID, "action must be"},
		{"create on an item route", withRoutes("ok", route("POST", "/a/{id}", "create", "")), decoy.EINVALID, "collection route"},
		{"delete on a collection route", withRoutes("ok", route("DELETE", "/a", "delete", "")), decoy.EINVALID, "item route"},
		{"same shape", withRoutes("ok", route("GET", "/a/{x}", "read", ""), route("GET", "/a/{y}", "read", "")), decoy.EINVALID, "Route exists: GET /a/{x}"},
		{"bind of no parameter", withRoutes("ok", route("GET", "/a/{x}", "read", `,"bind":{"y":"y"}`)), decoy.EINVALID, "not a parameter"},
		{"bind to no field", withRoutes("ok", route("GET", "/a/{x}", "read", `,"bind":{"x":"a..b"}`)), decoy.EINVALID, "bind.x"},
		{"bad items", withRoutes("ok", route("GET", "/a", "read", `,"items":""`)), decoy.EINVALID, "items"},
		{"request schema not a schema", withRoutes("ok", route("POST", "/a", "create", `,"request_schema":"x"`)), decoy.EINVALID, "request_schema"},
	}
	lim := importer.Limits{MaxDataBytes: 1 << 10, MaxUnpackedBytes: 64 << 10, MaxMocks: 4, MaxRoutes: 4}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := importer.ReadExport(bytes.NewReader(tt.file), lim)
			if tt.code == "" {
				if err != nil {
					t.Fatal(err)
				}
				checkRoutes(t, r)
				return
			}
			wantCode(t, err, tt.code)
			if !strings.Contains(err.Error(), tt.text) {
				t.Fatalf("err = %q, want it to say %q", err, tt.text)
			}
		})
	}
}

// TestReadExportUpstream: a manifest's upstream and mode (§14) are read
// as the admin API takes them, and refused when they are not.
func TestReadExportUpstream(t *testing.T) {
	with := func(fields string) []byte {
		m := strings.Replace(manifest(id1), `"routes":null`, fields+`"routes":null`, 1)
		return archive(t, entry{name: "decoy.json", body: m}, entry{name: "data/" + id1 + ".json", body: "[]"})
	}
	r, err := importer.ReadExport(bytes.NewReader(with(`"upstream":"https://api.example.com/v1","mode":"record",`)), importer.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Upstream == nil || r.Upstream.Upstream != "https://api.example.com/v1" || r.Upstream.Mode != decoy.ModeRecord {
		t.Errorf("upstream %+v", r.Upstream)
	}
	if r, err := importer.ReadExport(bytes.NewReader(with("")), importer.Limits{}); err != nil || r.Upstream != nil {
		t.Errorf("no upstream: %+v, %v", r, err)
	}
	for _, c := range []struct{ fields, text string }{
		{`"upstream":"ftp://x","mode":"passthrough",`, "scheme"},
		{`"upstream":"http://u:p@x",`, "credentials"},
		{`"mode":"passthrough",`, "needs an upstream"},
		{`"upstream":"http://x","mode":"tunnel",`, "mode must be"},
	} {
		_, err := importer.ReadExport(bytes.NewReader(with(c.fields)), importer.Limits{})
		wantCode(t, err, decoy.EINVALID)
		if !strings.Contains(err.Error(), c.text) {
			t.Errorf("%s: %v, want it to say %q", c.fields, err, c.text)
		}
	}
}
