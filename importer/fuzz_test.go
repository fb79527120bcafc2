package importer_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"mime"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/decoy-mock/decoy"
	"github.com/decoy-mock/decoy/importer"
)

// fuzzLimits keep each input's work small.
var fuzzLimits = importer.Limits{MaxDataBytes: 1 << 20, MaxUnpackedBytes: 4 << 20, MaxMocks: 100, MaxRoutes: 100}

// checkError fails on an error that is not a client's (*decoy.Error):
// every input gets an answer that says what is wrong with it.
func checkError(t *testing.T, err error) {
	if err != nil && decoy.ErrorCode(err) == decoy.EINTERNAL {
		t.Fatalf("internal error: %v", err)
	}
}

func FuzzOpenAPI(f *testing.F) {
	// The third-party descriptions are left out: with them as seeds, the
	// fuzzing engine spends its time in mutating and minimising large
	// inputs (a handful of executions a minute).
	for _, name := range []string{} {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"openapi":"3.1.0","info":{"title":"t","version":"1"},"paths":{"/a":{"get":{"responses":{"200":{"description":"x","content":{"application/json":{"examples":{"a":{"$ref":"#/components/examples/a"}}}}}}}}},"components":{"examples":{"a":{"value":[1]}}}}`))
	f.Add([]byte("openapi: 3.0.0\ninfo: {title: t, version: '1'}\nx: &a [*a]\npaths: {}\n"))
	// Resources: a wrapped collection and its items, parameters in the
	// middle, an operation of its own, request schemas.
	f.Add([]byte(`{"openapi":"3.0.3","info":{"title":"t","version":"1"},"paths":{
"/u":{"get":{"responses":{"200":{"description":"x","content":{"application/json":{"example":{"data":[{"uid":1}],"links":{}}}}}}},
 "post":{"requestBody":{"content":{"application/json":{"schema":{"$ref":"#/components/schemas/U"}}}},"responses":{"201":{"description":"x"}}}},
"/u/{uid}":{"patch":{"requestBody":{"$ref":"#/components/requestBodies/U"},"responses":{"200":{"description":"x"}}}},
"/u/{uid}/p":{"get":{"responses":{"200":{"description":"x","content":{"application/json":{"example":[{"uid":1,"p":2}]}}}}}},
"/u/{uid}/p/{p}/{q}.json":{"get":{"responses":{"200":{"description":"x"}}}},
"/v":{"delete":{"responses":{"204":{"description":"x","content":{"text/plain":{"example":"gone"}}}}}}},
"components":{"requestBodies":{"U":{"content":{"application/json":{"schema":{"$ref":"#/components/schemas/U"}}}}},
"schemas":{"U":{"type":"object","required":["uid","n"],"properties":{"uid":{"type":"integer","readOnly":true},"n":{"type":"string","nullable":true,"minimum":1,"exclusiveMinimum":true}},
"allOf":[{"required":["uid"]}]}}}}`))
	f.Add([]byte("openapi: 3.1.0\ninfo: {title: t, version: '1'}\npaths:\n  /:\n    get: {responses: {'200': {description: x, content: {application/json: {schema: {type: array, items: {type: object}}}}}}}\n  /{id}:\n    put: {responses: {'200': {description: x}}}\n"))
	f.Fuzz(func(t *testing.T, doc []byte) {
		for _, base := range []string{"", "/api/v1"} {
			r, err := importer.OpenAPI(doc, importer.Options{Limits: fuzzLimits, BasePath: base,
				Generate: func([]byte) ([]byte, error) { return []byte(`{"data":[]}`), nil }})
			checkError(t, err)
			if err != nil {
				return
			}
			for _, m := range r.Mocks {
				if isJSONType(m.ContentType) && !json.Valid(m.Data) || m.Status < 200 || m.Status > 299 {
					t.Fatalf("mock %q: status %d, %s data %q", m.Name, m.Status, m.ContentType, m.Data)
				}
			}
			checkRoutes(t, r)
			for _, rt := range r.Routes {
				if !strings.HasPrefix(rt.Path, base) {
					t.Fatalf("route %s %s is not under %s", rt.Method, rt.Path, base)
				}
			}
		}
		// With a spool folder: the same mocks and routes, each mock's
		// data in a file of its own, and no other file left.
		dir := t.TempDir()
		opt := importer.Options{Limits: fuzzLimits, Spool: dir, Generate: func([]byte) ([]byte, error) { return []byte(`{"data":[]}`), nil }}
		r, _ := importer.OpenAPI(doc, importer.Options{Limits: fuzzLimits, Generate: opt.Generate})
		s, err := importer.OpenAPI(doc, opt)
		if (err == nil) != (r != nil) {
			t.Fatalf("spooled: %v; held: %v", err, r != nil)
		}
		left, _ := os.ReadDir(dir)
		if err != nil {
			if len(left) != 0 {
				t.Fatalf("refused (%v), and left %d files", err, len(left))
			}
			return
		}
		if len(left) != len(s.Mocks) || len(s.Mocks) != len(r.Mocks) || !reflect.DeepEqual(s.Routes, r.Routes) {
			t.Fatalf("spooled: %d mocks, %d files, routes %v; held: %d mocks, routes %v", len(s.Mocks), len(left), s.Routes, len(r.Mocks), r.Routes)
		}
		for i, m := range s.Mocks {
			b, err := os.ReadFile(m.Spool)
			if err != nil || m.Data != nil || m.Size != int64(len(b)) || !bytes.Equal(b, r.Mocks[i].Data) {
				t.Fatalf("spooled mock %q: %q (%v); held: %q", m.Name, b, err, r.Mocks[i].Data)
			}
		}
		s.Close()
		if left, _ := os.ReadDir(dir); len(left) != 0 {
			t.Fatalf("%d files left after Close", len(left))
		}
	})
}

// isJSONType reports whether a content type is JSON's.
func isJSONType(ct string) bool {
	t, _, err := mime.ParseMediaType(ct)
	return err == nil && (t == "application/json" || strings.HasSuffix(t, "+json"))
}

func FuzzJSONServer(f *testing.F) {
	f.Add([]byte(`{"posts":[{"id":1,"title":"json-server"}],"profile":{"name":"typicode"}}`))
	f.Add([]byte(`{"a": 1.0 , "b":"\u00e9"}`))
	f.Add([]byte(`[]`))
	f.Add([]byte(`{"a/b":[],"{x}":[1],"c":[],"..":{}}`))
	f.Fuzz(func(t *testing.T, doc []byte) {
		r, err := importer.JSONServer(doc, importer.Options{Limits: fuzzLimits, BasePath: "/x"})
		checkError(t, err)
		if err != nil {
			return
		}
		if !json.Valid(doc) {
			t.Fatalf("invalid JSON accepted: %q", doc)
		}
		for _, m := range r.Mocks {
			if !json.Valid(m.Data) || !bytes.Contains(doc, m.Data) {
				t.Fatalf("mock %q: data %q is not the file's bytes", m.Name, m.Data)
			}
		}
		checkRoutes(t, r)
		for _, rt := range r.Routes {
			if m := r.Mocks[rt.Mock]; rt.Path != "/x/"+m.Name && rt.Path != "/x/"+m.Name+"/{id}" {
				t.Fatalf("route %s %s for key %q", rt.Method, rt.Path, m.Name)
			}
		}
		// Read as it arrives, a byte at a time, the same file makes the
		// same mocks and routes, its values in files of their own.
		dir := t.TempDir()
		s, err := importer.SpoolJSONServer(iotest.OneByteReader(bytes.NewReader(doc)), importer.Options{Limits: fuzzLimits, BasePath: "/x", Spool: dir})
		if err != nil {
			t.Fatalf("read whole: ok; streamed: %v", err)
		}
		defer s.Close()
		if len(s.Mocks) != len(r.Mocks) || !reflect.DeepEqual(s.Routes, r.Routes) || !reflect.DeepEqual(s.Skipped, r.Skipped) {
			t.Fatalf("streamed: %d mocks, routes %v, skipped %v; read whole: %d, %v, %v", len(s.Mocks), s.Routes, s.Skipped, len(r.Mocks), r.Routes, r.Skipped)
		}
		for i, m := range s.Mocks {
			b, err := os.ReadFile(m.Spool)
			if err != nil || m.Data != nil || m.Size != int64(len(b)) || !bytes.Equal(b, r.Mocks[i].Data) || m.Name != r.Mocks[i].Name {
				t.Fatalf("streamed mock %q: %q (%v), size %d; read whole: %q %q", m.Name, b, err, m.Size, r.Mocks[i].Name, r.Mocks[i].Data)
			}
		}
	})
}

// FuzzDetectReader: guessing a file's format as it is read, a member at a
// time (and a byte at a time), and with the whole file in memory (Detect),
// both guess what a plain reading of the rules does (detectWhole).
func FuzzDetectReader(f *testing.F) {
	f.Add([]byte(`{"posts":[],"openapi":"3.0.3"}`))
	f.Add([]byte("\xef\xbb\xbf {\"a\": {\"openapi\": 1}}"))
	f.Add([]byte("openapi: 3.0.0\n"))
	f.Add([]byte{0x1f, 0x8b, 8})
	f.Fuzz(func(t *testing.T, doc []byte) {
		want := detectWhole(doc)
		if got := importer.DetectReader(iotest.OneByteReader(bytes.NewReader(doc)), fuzzLimits); got != want {
			t.Fatalf("DetectReader: %s; the rules: %s", got, want)
		}
		if got := importer.Detect(doc); got != want {
			t.Fatalf("Detect: %s; the rules: %s", got, want)
		}
	})
}

// detectWhole is Detect's rules read plainly, over a file in memory: a
// gzip stream is an export; a JSON object (after a byte order mark and
// spaces) with a top-level "openapi" or "swagger" member before any
// member it cannot read is an OpenAPI description, any other a db.json;
// anything else is an OpenAPI description (YAML).
func detectWhole(data []byte) string {
	if bytes.HasPrefix(data, []byte{0x1f, 0x8b}) {
		return importer.FormatDecoy
	}
	trimmed := bytes.TrimLeft(bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")), " \t\r\n")
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return importer.FormatOpenAPI
	}
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return importer.FormatOpenAPI
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			break
		}
		if k, _ := t.(string); k == "openapi" || k == "swagger" {
			return importer.FormatOpenAPI
		}
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			break
		}
	}
	return importer.FormatJSONServer
}

func FuzzReadExport(f *testing.F) {
	var b bytes.Buffer
	w := importer.NewExportWriter(&b, "default", time.Unix(0, 0))
	w.Add(importer.ManifestMock{ID: "00000000-0000-4000-8000-000000000001", Name: "a", ContentType: "application/json", Status: 200}, 3, bytes.NewReader([]byte("[1]")))
	w.Close()
	f.Add(b.Bytes())
	b.Reset()
	w = importer.NewExportWriter(&b, "default", time.Unix(0, 0))
	w.SetSlug("s")
	w.Add(importer.ManifestMock{ID: "00000000-0000-4000-8000-000000000001", Name: "a", ContentType: "application/json", Status: 200}, 3, bytes.NewReader([]byte("[1]")))
	w.AddRoute(importer.ManifestRoute{Method: "GET", Path: "/a/{id}", MockID: "00000000-0000-4000-8000-000000000001", Bind: map[string]string{"id": "x.y"}})
	w.AddRoute(importer.ManifestRoute{Method: "POST", Path: "/a", MockID: "00000000-0000-4000-8000-000000000001", Action: "create", RequestSchema: []byte(`{"type":"object"}`)})
	w.Close()
	f.Add(b.Bytes())
	f.Add([]byte{0x1f, 0x8b, 0x08, 0x00})
	f.Fuzz(func(t *testing.T, file []byte) {
		r, err := importer.ReadExport(bytes.NewReader(file), fuzzLimits)
		checkError(t, err)
		if err != nil {
			return
		}
		for _, m := range r.Mocks {
			if int64(len(m.Data)) > fuzzLimits.MaxDataBytes {
				t.Fatalf("mock %s: %d bytes, past the limit", m.ID, len(m.Data))
			}
		}
		if r.Slug != "" && !decoy.ValidSlug(r.Slug) {
			t.Fatalf("slug %q", r.Slug)
		}
		checkRoutes(t, r)
	})
}

// FuzzSpoolExport: SpoolExport reads what ReadExport reads, the same
// mocks, routes and refusals, and leaves no file behind but the data of
// the mocks it gives (which Close removes).
func FuzzSpoolExport(f *testing.F) {
	var b bytes.Buffer
	w := importer.NewExportWriter(&b, "default", time.Unix(0, 0))
	w.Add(importer.ManifestMock{ID: "00000000-0000-4000-8000-000000000001", Name: "a", ContentType: "application/json", Status: 200}, 3, bytes.NewReader([]byte("[1]")))
	w.AddRoute(importer.ManifestRoute{Method: "GET", Path: "/a/{id}", MockID: "00000000-0000-4000-8000-000000000001"})
	w.Close()
	f.Add(b.Bytes())
	f.Add([]byte{0x1f, 0x8b, 0x08, 0x00})
	f.Fuzz(func(t *testing.T, file []byte) {
		dir := t.TempDir()
		want, werr := importer.ReadExport(bytes.NewReader(file), fuzzLimits)
		got, err := importer.SpoolExport(bytes.NewReader(file), fuzzLimits, dir)
		checkError(t, err)
		if (err == nil) != (werr == nil) || err != nil && decoy.ErrorMessage(err) != decoy.ErrorMessage(werr) {
			t.Fatalf("SpoolExport: %v; ReadExport: %v", err, werr)
		}
		left, _ := os.ReadDir(dir)
		if err != nil {
			if len(left) != 0 {
				t.Fatalf("%d files left by a refused export", len(left))
			}
			return
		}
		if len(left) != len(got.Mocks) || len(got.Mocks) != len(want.Mocks) || len(got.Routes) != len(want.Routes) || got.Slug != want.Slug {
			t.Fatalf("%d files, %d mocks, %d routes; ReadExport: %d mocks, %d routes", len(left), len(got.Mocks), len(got.Routes), len(want.Mocks), len(want.Routes))
		}
		for i, m := range got.Mocks {
			data, err := os.ReadFile(m.Spool)
			if err != nil || !bytes.Equal(data, want.Mocks[i].Data) || m.Size != int64(len(data)) || m.ID != want.Mocks[i].ID {
				t.Fatalf("mock %d: %q (%d bytes), want %q: %v", i, data, m.Size, want.Mocks[i].Data, err)
			}
		}
		got.Close()
		if left, _ := os.ReadDir(dir); len(left) != 0 {
			t.Fatalf("%d files left after Close", len(left))
		}
	})
}

// paramName is what a route's parameter may be named (§11.2 of the
// contract): letters, digits, _, - and ., not starting with a digit.
var paramName = regexp.MustCompile(`^[A-Za-z_.-][A-Za-z0-9_.-]*$`)

// templateParams checks a route's path as §11.2 has it, apart from the
// importer: it starts with "/"; its segments are literal or a whole
// parameter "{name}"; no empty segment but the root "/"; at most 32
// segments. It returns the parameters.
func templateParams(path string) ([]string, error) {
	if path == "/" {
		return nil, nil
	}
	if !strings.HasPrefix(path, "/") {
		return nil, fmt.Errorf("%q does not start with /", path)
	}
	segs := strings.Split(path[1:], "/")
	if len(segs) > 32 {
		return nil, fmt.Errorf("%q has %d segments", path, len(segs))
	}
	var names []string
	for _, seg := range segs {
		switch {
		case seg == "":
			return nil, fmt.Errorf("%q has an empty segment", path)
		case strings.HasPrefix(seg, "{") && strings.HasSuffix(seg, "}"):
			name := seg[1 : len(seg)-1]
			if !paramName.MatchString(name) || slices.Contains(names, name) {
				return nil, fmt.Errorf("%q: parameter %q", path, name)
			}
			names = append(names, name)
		case strings.ContainsAny(seg, "{}"):
			return nil, fmt.Errorf("%q: segment %q is part literal, part parameter", path, seg)
		}
	}
	return names, nil
}

// fieldPath reports whether p is a field path of §1.3: segments split on
// '.', none empty.
func fieldPath(p string) bool {
	return p != "" && !slices.Contains(strings.Split(p, "."), "")
}

// checkRoutes checks the routes of a result: each names one of its mocks,
// has a route's method and path, an action its shape allows, a bind of
// each of its parameters (and no other) to a field path, and items that
// are a field path; no two share a method and a path shape.
func checkRoutes(t testing.TB, r *importer.Result) {
	t.Helper()
	shapes := map[string]bool{}
	for i, rt := range r.Routes {
		fail := func(format string, args ...any) {
			t.Helper()
			t.Fatalf("route %d (%s %q): %s", i, rt.Method, rt.Path, fmt.Sprintf(format, args...))
		}
		if rt.Mock < 0 || rt.Mock >= len(r.Mocks) {
			fail("mock %d of %d", rt.Mock, len(r.Mocks))
		}
		if !slices.Contains(decoy.RouteMethods, rt.Method) {
			fail("not a route's method")
		}
		names, err := templateParams(rt.Path)
		if err != nil {
			fail("%v", err)
		}
		shape := rt.Method + " " + decoy.PathShape(rt.Path)
		if shapes[shape] {
			fail("a second route of shape %s", shape)
		}
		shapes[shape] = true
		item := len(names) > 0 && strings.HasSuffix(rt.Path, "{"+names[len(names)-1]+"}")
		switch rt.Action {
		case decoy.ActionRead:
		case decoy.ActionCreate:
			if item {
				fail("create on an item route")
			}
		case decoy.ActionReplace, decoy.ActionUpdate, decoy.ActionDelete:
			if !item {
				fail("%s on a collection route", rt.Action)
			}
		default:
			fail("action %q", rt.Action)
		}
		if rt.Bind == nil || len(rt.Bind) != len(names) {
			fail("bind %v for parameters %v", rt.Bind, names)
		}
		for _, n := range names {
			if !fieldPath(rt.Bind[n]) {
				fail("bind %v for parameters %v", rt.Bind, names)
			}
		}
		if rt.Items != nil && !fieldPath(*rt.Items) {
			fail("items %q", *rt.Items)
		}
		if rt.RequestSchema != nil && !json.Valid(rt.RequestSchema) {
			fail("request schema %q", rt.RequestSchema)
		}
	}
}

// FuzzExportManifest fuzzes the manifest of an export whose archive is
// well formed, so that the fuzzer works on the manifest's routes rather
// than on gzip and tar.
func FuzzExportManifest(f *testing.F) {
	const id = "00000000-0000-4000-8000-000000000001"
	f.Add([]byte(`{"format":"decoy-export","version":1,"project":"p","slug":"p","mocks":[{"id":"` + id + `","name":"a","content_type":"application/json","status":200}],
"routes":[{"method":"GET","path":"/a/{id}","mock_id":"` + id + `","action":"read","bind":{"id":"x.y"},"items":"data"},
{"method":"POST","path":"/a","mock_id":"` + id + `","action":"","bind":null,"items":null,"request_schema":{"type":"object"}}]}`))
	f.Fuzz(func(t *testing.T, manifest []byte) {
		var b bytes.Buffer
		gz := gzip.NewWriter(&b)
		tw := tar.NewWriter(gz)
		for _, e := range []struct {
			name string
			body []byte
		}{{"decoy.json", manifest}, {"data/" + id + ".json", []byte(`{"data":[]}`)}} {
			tw.WriteHeader(&tar.Header{Name: e.name, Typeflag: tar.TypeReg, Size: int64(len(e.body)), Mode: 0o644})
			tw.Write(e.body)
		}
		tw.Close()
		gz.Close()
		for _, base := range []string{"", "/v1"} {
			r, err := importer.Read(importer.FormatDecoy, b.Bytes(), importer.Options{Limits: fuzzLimits, BasePath: base})
			checkError(t, err)
			if err != nil {
				return
			}
			if r.Slug != "" && !decoy.ValidSlug(r.Slug) {
				t.Fatalf("slug %q", r.Slug)
			}
			checkRoutes(t, r)
		}
	})
}
