package importer_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/decoy-mock/decoy"
	"github.com/decoy-mock/decoy/generate"
	"github.com/decoy-mock/decoy/importer"
	"github.com/oasdiff/yaml"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// jsonEqual reports whether a and b hold the same JSON value.
func jsonEqual(t *testing.T, a, b []byte) bool {
	t.Helper()
	var va, vb any
	if err := json.Unmarshal(a, &va); err != nil {
		t.Fatalf("%s: %v", a, err)
	}
	if err := json.Unmarshal(b, &vb); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	return reflect.DeepEqual(va, vb)
}

func wantCode(t *testing.T, err error, code string) {
	t.Helper()
	if decoy.ErrorCode(err) != code {
		t.Fatalf("err = %v (%s), want code %s", err, decoy.ErrorCode(err), code)
	}
}

// summary is a Result in short: each mock as "name status data" and each
// skipped part as "source: reason".
func summary(r *importer.Result) (mocks, skipped []string) {
	for _, m := range r.Mocks {
		mocks = append(mocks, m.Name+" "+itoa(m.Status)+" "+string(m.Data))
	}
	for _, s := range r.Skipped {
		skipped = append(skipped, s.Source+": "+s.Reason)
	}
	return mocks, skipped
}

// routeSummary is each route in short: "METHOD path -> mock action", then
// its bind (param=field, by name), its items, and "schema" when it keeps a
// request schema.
func routeSummary(r *importer.Result) []string {
	var out []string
	for _, rt := range r.Routes {
		s := fmt.Sprintf("%s %s -> %d %s", rt.Method, rt.Path, rt.Mock, rt.Action)
		var bind []string
		for k, v := range rt.Bind {
			bind = append(bind, k+"="+v)
		}
		sort.Strings(bind)
		if len(bind) > 0 {
			s += " bind " + strings.Join(bind, ",")
		}
		if rt.Items != nil {
			s += " items " + *rt.Items
		}
		if rt.RequestSchema != nil {
			s += " schema"
		}
		out = append(out, s)
	}
	return out
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

func TestOpenAPI(t *testing.T) {
	tests := []struct {
		name        string
		doc         string
		opt         importer.Options
		mocks       []string
		routes      []string
		skipped     []string
		contentType []string // of each mock, when given
	}{{
		name: "a collection, operations of their own, example, examples and none (3.0 YAML)",
		doc: `openapi: 3.0.3
info: {title: t, version: "1"}
paths:
  /pets:
    get:
      operationId: listPets
      responses:
        "200":
          description: ok
          content:
            application/json:
              example: [{"id": 1, "name": "Rex"}]
        default:
          description: error
    post:
      responses:
        "201": {description: created}
  /pets/{id}:
    get:
      responses:
        "200": {description: ok, content: {application/json: {example: {"id": 1}}}}
    delete:
      responses:
        "204": {description: gone}
  /things/{id}:
    get:
      responses:
        "404": {description: nope}
        "203":
          description: ok
          content:
            application/json:
              examples:
                zebra: {value: {"first": true}}
                alpha: {value: {"first": false}}
        "200":
          description: ok
          content:
            text/plain:
              example: hi
  /empty:
    get:
      operationId: noExample
      responses:
        "200":
          description: ok
          content:
            application/json:
              schema: {type: object}
  /summary:
    get:
      operationId: summaryOnly
      responses:
        "200":
          description: ok
          content:
            application/json:
              examples:
                a: {summary: "an example with no value"}
  /text:
    put:
      responses:
        "200": {description: ok, content: {text/plain: {example: "it is done"}}}
`,
		mocks: []string{
			`listPets 200 [{"id":1,"name":"Rex"}]`,
			`summaryOnly 200 `,
			`PUT /text 200 it is done`,
			`GET /things/{id} 203 {"first":true}`,
		},
		contentType: []string{"application/json", "text/plain; charset=utf-8", "text/plain", "application/json"},
		routes: []string{
			"GET /pets -> 0 read",
			"POST /pets -> 0 create",
			"GET /pets/{id} -> 0 read bind id=id",
			"DELETE /pets/{id} -> 0 delete bind id=id",
			"GET /summary -> 1 read",
			"PUT /text -> 2 read",
			"GET /things/{id} -> 3 read bind id=id",
		},
		skipped: []string{
			"GET /empty 200: " + importer.ReasonNoExample,
		},
	}, {
		name: "a response that is a cycle of $refs (3.0 YAML)",
		doc: `openapi: 3.0.0
info: {title: t, version: "1"}
paths:
  /a:
    get:
      responses:
        "200": {$ref: "#/components/responses/r0"}
  /b:
    get:
      responses:
        "200": {description: x, content: {application/json: {example: [1]}}}
components:
  responses:
    r0: {$ref: "#/components/responses/r1"}
    r1: {$ref: "#/components/responses/r0"}
`,
		mocks:   []string{`GET /b 200 [1]`},
		routes:  []string{"GET /b -> 0 read"},
		skipped: []string{"GET /a 200: its response could not be resolved (#/components/responses/r0)"},
	}, {
		name: "examples by $ref, lowest 2xx, +json (3.1 JSON)",
		doc: `{"openapi":"3.1.0","info":{"title":"t","version":"1"},
"paths":{"/a":{"get":{"operationId":"a","responses":{
  "201":{"description":"x","content":{"application/json":{"example":{"n":2}}}},
  "200":{"description":"x","content":{"application/vnd.api+json":{"examples":{"one":{"$ref":"#/components/examples/One"}}}}}}}}},
"components":{"examples":{"One":{"value":{"n":1,"s":"<é>"}}}}}`,
		mocks:       []string{`a 200 {"n":1,"s":"<é>"}`},
		routes:      []string{"GET /a -> 0 read"},
		contentType: []string{"application/vnd.api+json"},
	}, {
		name: "no paths",
		doc:  `{"openapi":"3.1.0","info":{"title":"t","version":"1"}}`,
	}, {
		name: "what cannot be a route is skipped",
		doc: `openapi: 3.1.0
info: {title: t, version: "1"}
paths:
  /files/{name}.json:
    get: {responses: {"200": {description: x, content: {application/json: {example: 1}}}}}
  /u/{b}:
    get: {responses: {"200": {description: x, content: {application/json: {example: 2}}}}}
  /u/{a}:
    get: {responses: {"200": {description: x, content: {application/json: {example: 3}}}}}
    put: {responses: {"200": {description: x, content: {application/json: {example: 4}}}}}
  /v/{1st}:
    get: {responses: {"200": {description: x}}}
  /w/{x}/{x}:
    get: {responses: {"200": {description: x}}}
  /a b:
    get: {responses: {"200": {description: x}}}
  /h:
    head: {responses: {"200": {description: x}}}
    options: {responses: {"204": {description: x}}}
    trace: {responses: {"200": {description: x}}}
    get: {responses: {"400": {description: x}}}
  /n:
    get: {responses: {}}
`,
		mocks:  []string{"GET /u/{a} 200 3", "PUT /u/{a} 200 4"},
		routes: []string{"GET /u/{a} -> 0 read bind a=a", "PUT /u/{a} -> 1 read bind a=a"},
		skipped: []string{
			`GET /a b: the segment "a b" holds a character a route's path segment cannot (a space, a control character, /, ? or #)`,
			`GET /files/{name}.json: the segment "{name}.json" mixes literal text and a parameter: a route's parameter is a whole segment`,
			"GET /h: no 2xx response",
			"HEAD /h: HEAD is not a route's method: a GET route answers it",
			"OPTIONS /h: OPTIONS is not a route's method: Decoy answers CORS preflights itself",
			"TRACE /h: TRACE is not a route's method (GET, POST, PUT, PATCH or DELETE)",
			"GET /n: no responses",
			"GET /u/{b}: the path has the shape of /u/{a}, imported before it (parameter names aside)",
			`GET /v/{1st}: the parameter name "1st" is not one a route can have (letters, digits, _, - and ., not starting with a digit)`,
			"GET /w/{x}/{x}: the parameter {x} appears twice",
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := importer.OpenAPI([]byte(tt.doc), tt.opt)
			if err != nil {
				t.Fatal(err)
			}
			mocks, skipped := summary(r)
			if !reflect.DeepEqual(mocks, tt.mocks) {
				t.Errorf("mocks:\n%q\nwant\n%q", mocks, tt.mocks)
			}
			if routes := routeSummary(r); !reflect.DeepEqual(routes, tt.routes) {
				t.Errorf("routes:\n%q\nwant\n%q", routes, tt.routes)
			}
			if !reflect.DeepEqual(skipped, tt.skipped) {
				t.Errorf("skipped:\n%q\nwant\n%q", skipped, tt.skipped)
			}
			for i, ct := range tt.contentType {
				if i < len(r.Mocks) && r.Mocks[i].ContentType != ct {
					t.Errorf("mock %d: content type %q, want %q", i, r.Mocks[i].ContentType, ct)
				}
			}
		})
	}
}

func TestOpenAPIGenerate(t *testing.T) {
	doc := `openapi: 3.0.3
info: {title: t, version: "1"}
paths:
  /pets:
    get:
      responses:
        "200":
          description: ok
          content:
            application/json:
              schema: {$ref: "#/components/schemas/Pets"}
components:
  schemas:
    Pets: {type: array, items: {type: string}}
`
	var got []byte
	r, err := importer.OpenAPI([]byte(doc), importer.Options{Generate: func(schema []byte) ([]byte, error) {
		got = schema
		return []byte(`["generated"]`), nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Mocks) != 1 || string(r.Mocks[0].Data) != `["generated"]` {
		t.Fatalf("mocks = %+v", r.Mocks)
	}
	var schema struct {
		Ref        string `json:"$ref"`
		Components struct {
			Schemas map[string]any `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(got, &schema); err != nil || schema.Ref != "#/components/schemas/Pets" || schema.Components.Schemas["Pets"] == nil {
		t.Fatalf("schema given to Generate = %s (%v)", got, err)
	}
}

func TestOpenAPIErrors(t *testing.T) {
	tests := []struct {
		name string
		doc  string
		code string
		text string
	}{
		{"not YAML or JSON", "{{{", decoy.EINVALID, "Invalid OpenAPI description: not valid JSON: "},
		// A YAML file's error is about YAML, not what a JSON parser made
		// of it first (a newcomer's walk through the docs).
		{"bad YAML", "openapi: 3.0.0\ninfo:\n  title: t\n  version: '1'\npaths:\n  /a: [get, {\n", decoy.EINVALID, "Invalid OpenAPI description: not valid YAML: line "},
		{"Swagger 2.0", `{"swagger":"2.0","info":{"title":"t","version":"1"},"paths":{}}`, decoy.EINVALID, "Swagger 2.0"},
		{"OpenAPI 4", `{"openapi":"4.0.0","info":{"title":"t","version":"1"}}`, decoy.EINVALID, "only 3.0 and 3.1"},
		{"external ref", `{"openapi":"3.0.0","info":{"title":"t","version":"1"},"paths":{"/a":{"get":{"responses":{"200":{"$ref":"/etc/passwd#/x"}}}}}}`, decoy.EINVALID, "external reference"},
		{"URL ref", `{"openapi":"3.0.0","info":{"title":"t","version":"1"},"paths":{"/a":{"$ref":"http://169.254.169.254/x"}}}`, decoy.EINVALID, "external reference"},
		{"missing ref", `{"openapi":"3.0.0","info":{"title":"t","version":"1"},"paths":{"/a":{"get":{"responses":{"200":{"$ref":"#/components/responses/nope"}}}}}}`, decoy.EINVALID, "Invalid OpenAPI description"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := importer.OpenAPI([]byte(tt.doc), importer.Options{})
			wantCode(t, err, tt.code)
			if !strings.Contains(err.Error(), tt.text) {
				t.Fatalf("err = %q, want it to say %q", err, tt.text)
			}
		})
	}
}

var update = flag.Bool("update", false, "rewrite the golden files of testdata/golden")

// TestThirdParty imports OpenAPI descriptions written by others (see
// testdata/thirdparty/SOURCES.md): the mocks, routes (binds, items,
// request schemas) and skipped parts each makes are in
// testdata/golden/<file>.golden (go test -run TestThirdParty -update
// rewrites them), and each mock's data equals its example, as read from
// the file apart from the importer.
func TestThirdParty(t *testing.T) {
	generated := func([]byte) ([]byte, error) { return []byte(`[]`), nil }
	tests := []struct {
		file     string
		generate bool
		examples map[string]string // mock: the JSON pointer of its example in the file
	}{{
		file: "museum.yaml",
		examples: map[string]string{
			"getMuseumHours":    "/components/examples/GetMuseumHoursResponseExample/value",
			"listSpecialEvents": "/components/examples/ListSpecialEventsResponseExample/value",
			"buyMuseumTickets":  "/components/examples/BuyGeneralTicketsResponseExample/value",
		},
	}, {
		file: "api-with-examples.json",
		examples: map[string]string{
			"listVersionsv2":      "/paths/~1/get/responses/200/content/application~1json/examples/foo/value",
			"getVersionDetailsv2": "/paths/~1v2/get/responses/200/content/application~1json/examples/foo/value",
		},
	}, {
		file:     "petstore-expanded.yaml",
		generate: true,
	}, {
		file: "api-pastry.yaml",
		examples: map[string]string{
			"GetPastries": "/paths/~1pastry/get/responses/200/content/application~1json/examples/pastries_json/value",
		},
	}, {
		file: "xero-projects.yaml",
		examples: map[string]string{
			"getProjects":     "/paths/~1Projects/get/responses/200/content/application~1json/example",
			"getProjectUsers": "/paths/~1ProjectsUsers/get/responses/200/content/application~1json/example",
			"getTasks":        "/paths/~1Projects~1{projectId}~1Tasks/get/responses/200/content/application~1json/example",
			"getTimeEntries":  "/paths/~1Projects~1{projectId}~1Time/get/responses/200/content/application~1json/example",
		},
	}}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			raw, err := os.ReadFile("testdata/thirdparty/" + tt.file)
			if err != nil {
				t.Fatal(err)
			}
			opt := importer.Options{}
			if tt.generate {
				opt.Generate = generated
			}
			r, err := importer.OpenAPI(raw, opt)
			if err != nil {
				t.Fatal(err)
			}
			golden(t, "testdata/golden/"+tt.file+".golden", describe(r))

			// Dates stay strings, as in YAML 1.2 and in the JSON form.
			var parsed any
			if _, err := yaml.Unmarshal(raw, &parsed, yaml.DecodeOpts{DisableTimestamps: true}); err != nil {
				t.Fatal(err)
			}
			whole, err := json.Marshal(parsed)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range r.Mocks {
				ptr, ok := tt.examples[m.Name]
				if !ok {
					continue
				}
				delete(tt.examples, m.Name)
				if want := pointer(t, whole, ptr); !jsonEqual(t, m.Data, want) {
					t.Errorf("%s: data\n%s\nwant the example\n%s", m.Name, m.Data, want)
				}
			}
			for name := range tt.examples {
				t.Errorf("no mock %s", name)
			}
			checkRoutes(t, r)
		})
	}
}

// describe writes a result out for a golden file: each mock (without its
// data), each route, each part skipped, and each request schema once.
func describe(r *importer.Result) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "mocks:\n")
	for i, m := range r.Mocks {
		fmt.Fprintf(&b, "  %d %q %d %s, %d bytes\n", i, m.Name, m.Status, m.ContentType, len(m.Data))
	}
	fmt.Fprintf(&b, "routes:\n")
	var schemas []string
	for _, line := range routeSummary(r) {
		fmt.Fprintf(&b, "  %s\n", line)
	}
	for _, rt := range r.Routes {
		if rt.RequestSchema != nil && !contains(schemas, string(rt.RequestSchema)) {
			schemas = append(schemas, string(rt.RequestSchema))
		}
	}
	fmt.Fprintf(&b, "skipped:\n")
	for _, s := range r.Skipped {
		fmt.Fprintf(&b, "  %s: %s\n", s.Source, s.Reason)
	}
	fmt.Fprintf(&b, "request schemas:\n")
	for _, rt := range r.Routes {
		if rt.RequestSchema == nil {
			continue
		}
		i := slices.Index(schemas, string(rt.RequestSchema))
		fmt.Fprintf(&b, "  %s %s: %d\n", rt.Method, rt.Path, i)
	}
	for i, s := range schemas {
		var indented bytes.Buffer
		json.Indent(&indented, []byte(s), "  ", "  ")
		fmt.Fprintf(&b, "%d:\n  %s\n", i, indented.Bytes())
	}
	return b.Bytes()
}

// golden compares got with a golden file, or rewrites it with -update.
func golden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -run %s -update writes it)", err, t.Name())
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs (go test -update rewrites it); got:\n%s", path, got)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// pointer returns the value at a JSON pointer of a document, as JSON.
func pointer(t *testing.T, doc []byte, ptr string) []byte {
	t.Helper()
	var v any
	if err := json.Unmarshal(doc, &v); err != nil {
		t.Fatal(err)
	}
	for _, seg := range strings.Split(strings.TrimPrefix(ptr, "/"), "/") {
		seg = strings.NewReplacer("~1", "/", "~0", "~").Replace(seg)
		m, ok := v.(map[string]any)
		if !ok {
			t.Fatalf("%s: no %s", ptr, seg)
		}
		v = m[seg]
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestJSONServer(t *testing.T) {
	arrayRoutes := func(mock int, path string) []string {
		return []string{
			fmt.Sprintf("GET %s -> %d read", path, mock),
			fmt.Sprintf("POST %s -> %d create", path, mock),
			fmt.Sprintf("GET %s/{id} -> %d read bind id=id", path, mock),
			fmt.Sprintf("PUT %s/{id} -> %d replace bind id=id", path, mock),
			fmt.Sprintf("PATCH %s/{id} -> %d update bind id=id", path, mock),
			fmt.Sprintf("DELETE %s/{id} -> %d delete bind id=id", path, mock),
		}
	}
	tests := []struct {
		name    string
		doc     string
		base    string
		mocks   []string
		routes  []string
		skipped []string
		code    string
	}{
		{name: "keys in order, bytes as written", doc: "{\"posts\": [ {\"id\": 1.0, \"t\": \"\\u00e9\"} ],\n \"profile\": {\"name\":\"typicode\"}, \"n\": 3}",
			mocks:  []string{`posts 200 [ {"id": 1.0, "t": "\u00e9"} ]`, `profile 200 {"name":"typicode"}`, `n 200 3`},
			routes: append(arrayRoutes(0, "/posts"), "GET /profile -> 1 read", "GET /n -> 2 read")},
		{name: "under a base path", doc: `{"posts":[],"db.v2":null}`, base: "/api",
			mocks:  []string{`posts 200 []`, `db.v2 200 null`},
			routes: append(arrayRoutes(0, "/api/posts"), "GET /api/db.v2 -> 1 read")},
		{name: "keys that are no path segment: mocks without routes", doc: `{"a/b":[],"{x}":1,"c d":2,"":3,"..":4}`,
			mocks: []string{`a/b 200 []`, `{x} 200 1`, `c d 200 2`, ` 200 3`, `.. 200 4`},
			skipped: []string{
				`a/b: no routes: the key is no path segment (the segment "a/b" holds a character a route's path segment cannot (a space, a control character, /, ? or #))`,
				`{x}: no routes: the key is no path segment (the segment "{x}" mixes literal text and a parameter: a route's parameter is a whole segment)`,
				`c d: no routes: the key is no path segment (the segment "c d" holds a character a route's path segment cannot (a space, a control character, /, ? or #))`,
				`: no routes: the key is no path segment (the path has an empty segment)`,
				`..: no routes: the key is no path segment (the segment ".." is not one a request's path holds)`,
			}},
		{name: "empty object", doc: `{}`},
		{name: "long key", doc: `{"` + strings.Repeat("k", 201) + `": 1}`, skipped: []string{strings.Repeat("k", 100) + ": the key is not a valid name (UTF-8, at most 200 bytes)"}},
		{name: "array", doc: `[1,2]`, code: decoy.EINVALID},
		{name: "duplicate key", doc: `{"a":1,"a":2}`, code: decoy.EINVALID},
		{name: "trailing text", doc: `{"a":1} x`, code: decoy.EINVALID},
		{name: "cut short", doc: `{"a":[1,`, code: decoy.EINVALID},
		{name: "bad value", doc: `{"a":tru}`, code: decoy.EINVALID},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := importer.JSONServer([]byte(tt.doc), importer.Options{BasePath: tt.base})
			if tt.code != "" {
				wantCode(t, err, tt.code)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			mocks, skipped := summary(r)
			if !reflect.DeepEqual(mocks, tt.mocks) || !reflect.DeepEqual(skipped, tt.skipped) {
				t.Errorf("mocks %q skipped %q, want %q %q", mocks, skipped, tt.mocks, tt.skipped)
			}
			if routes := routeSummary(r); !reflect.DeepEqual(routes, tt.routes) {
				t.Errorf("routes:\n%q\nwant\n%q", routes, tt.routes)
			}
			checkRoutes(t, r)
		})
	}
}

func TestDetect(t *testing.T) {
	tests := []struct{ doc, want string }{
		{"openapi: 3.1.0\n", importer.FormatOpenAPI},
		{`{"openapi":"3.0.0"}`, importer.FormatOpenAPI},
		{`{"info":{},"swagger":"2.0"}`, importer.FormatOpenAPI},
		{` {"posts":[],"comments":[]}`, importer.FormatJSONServer},
		{"\x1f\x8b\x08", importer.FormatDecoy},
		{"\xef\xbb\xbf\n {\"a\":[],\"openapi\":\"3.0.0\"}", importer.FormatOpenAPI},
		{`{"a":{"openapi":"3.0.0"},"b":[]}`, importer.FormatJSONServer}, // nested: not the description's
		{`{"a":x,"openapi":"3.0.0"}`, importer.FormatJSONServer},        // unreadable before it
		{`{"a":[1,2`, importer.FormatJSONServer},                        // cut short
		{`[{"openapi":"3.0.0"}]`, importer.FormatOpenAPI},               // not an object: YAML's to tell
		{"", importer.FormatOpenAPI},
	}
	for _, tt := range tests {
		if got := importer.Detect([]byte(tt.doc)); got != tt.want {
			t.Errorf("Detect(%q) = %s, want %s", tt.doc, got, tt.want)
		}
	}
}

func TestReadUnknownFormat(t *testing.T) {
	_, err := importer.Read("csv", []byte("a,b"), importer.Options{})
	wantCode(t, err, decoy.EINVALID)
}

var _ = bytes.Equal

// TestOpenAPIFirstExample: the first example is the one written first, in
// YAML and in JSON alike.
func TestOpenAPIFirstExample(t *testing.T) {
	const yamlDoc = `openapi: 3.0.0
info: {title: t, version: "1"}
paths:
  /a:
    get:
      responses:
        "200":
          description: x
          content:
            application/json:
              examples:
                zebra: {value: 1}
                alpha: {value: 2}
`
	const jsonDoc = `{"openapi":"3.0.0","info":{"title":"t","version":"1"},"paths":{"/a":{"get":{"responses":{"200":{"description":"x",
"content":{"application/json":{"examples":{"zebra":{"value":1},"alpha":{"value":2}}}}}}}}}}`
	for name, doc := range map[string]string{"yaml": yamlDoc, "json": jsonDoc} {
		r, err := importer.OpenAPI([]byte(doc), importer.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Mocks) != 1 || string(r.Mocks[0].Data) != "1" {
			t.Errorf("%s: mocks %+v, want the zebra example (1)", name, r.Mocks)
		}
	}
}

// TestMaxMocksBound: an import makes at most MaxMocks mocks.
func TestMaxMocksBound(t *testing.T) {
	if r, err := importer.JSONServer([]byte(`{"a":1,"b":2}`), importer.Options{Limits: importer.Limits{MaxMocks: 2}}); err != nil || len(r.Mocks) != 2 {
		t.Errorf("at the bound: %v %v", r, err)
	}
	_, err := importer.JSONServer([]byte(`{"a":1,"b":2,"c":3}`), importer.Options{Limits: importer.Limits{MaxMocks: 2}})
	wantCode(t, err, decoy.ETOOLARGE)
}

// TestThirdPartyWithoutExamples: the OAI's petstore-expanded has no
// examples. Without Options.Generate its operations with JSON responses
// are skipped, and its DELETE (a 204, no content) is a mock of its own;
// once it is set, GET /pets (an array of Pet) owns a collection, its
// schema (with its components) handed to Generate, and the other
// operations are routes on it. With the schema generator the server uses,
// its data validates against the schema (Pet is an allOf of NewPet and an
// id).
func TestThirdPartyWithoutExamples(t *testing.T) {
	raw, err := os.ReadFile("testdata/thirdparty/petstore-expanded.yaml")
	if err != nil {
		t.Fatal(err)
	}
	r, err := importer.OpenAPI(raw, importer.Options{})
	if err != nil {
		t.Fatal(err)
	}
	mocks, skipped := summary(r)
	want := []string{
		"GET /pets 200: " + importer.ReasonNoExample,
		"POST /pets 200: " + importer.ReasonNoExample,
		"GET /pets/{id} 200: " + importer.ReasonNoExample,
	}
	if !reflect.DeepEqual(mocks, []string{"deletePet 204 "}) || !reflect.DeepEqual(skipped, want) {
		t.Errorf("mocks %q, skipped:\n%q\nwant\n%q", mocks, skipped, want)
	}
	if routes := routeSummary(r); !reflect.DeepEqual(routes, []string{"DELETE /pets/{id} -> 0 read bind id=id"}) {
		t.Errorf("routes %q", routes)
	}

	var schemas []string
	r, err = importer.OpenAPI(raw, importer.Options{Generate: func(schema []byte) ([]byte, error) {
		var s struct {
			// The list's schema, and at least three records: a fake
			// list is not empty.
			AllOf      []map[string]any `json:"allOf"`
			Components struct {
				Schemas map[string]json.RawMessage `json:"schemas"`
			} `json:"components"`
		}
		if err := json.Unmarshal(schema, &s); err != nil || s.Components.Schemas["Pet"] == nil || s.Components.Schemas["NewPet"] == nil || len(s.AllOf) != 2 {
			t.Fatalf("schema %s: %v", schema, err)
		}
		schemas = append(schemas, fmt.Sprint(s.AllOf[0]["type"], " ", s.AllOf[1]["minItems"]))
		return []byte(`[]`), nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Mocks) != 1 || r.Mocks[0].Name != "findPets" || len(r.Routes) != 4 || len(r.Skipped) != 0 {
		t.Errorf("with Generate: %+v %q %v", r.Mocks, routeSummary(r), r.Skipped)
	}
	if !reflect.DeepEqual(schemas, []string{"array 3"}) {
		t.Errorf("schemas given to Generate: %v", schemas)
	}

	// With the schema generator, as the server imports: the output
	// validates against the operation's schema, over many seeds.
	for seed := uint64(0); seed < 50; seed++ {
		given := map[string][]byte{} // data: its schema
		r, err := importer.OpenAPI(raw, importer.Options{Generate: func(schema []byte) ([]byte, error) {
			tp, err := generate.ParseSchema(schema, generate.Limits{})
			if err != nil {
				return nil, err
			}
			out, err := tp.Run(seed, generate.Limits{})
			given[string(out)] = schema
			return out, err
		}})
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Mocks) != 1 {
			t.Fatalf("seed %d: %d mocks, skipped %v", seed, len(r.Mocks), r.Skipped)
		}
		for _, m := range r.Mocks {
			schema := given[string(m.Data)]
			validate(t, schema, m.Data)
			var pets []map[string]any
			json.Unmarshal(m.Data, &pets)
			if len(pets) < 3 {
				t.Errorf("seed %d: %d pets generated, want at least 3", seed, len(pets))
			}
			for _, p := range pets {
				if _, ok := p["id"].(float64); !ok {
					t.Errorf("seed %d: %s: a pet without an integer id: %s", seed, m.Name, m.Data)
				}
			}
		}
	}
}

// validate fails unless data validates against a JSON Schema document.
func validate(t *testing.T, schema, data []byte) {
	t.Helper()
	if err := validation(t, schema, data); err != nil {
		t.Errorf("%s does not validate against %s: %v", data, schema, err)
	}
}

// validation validates data against a JSON Schema document (draft
// 2020-12, as the server validates request bodies).
func validation(t *testing.T, schema, data []byte) error {
	t.Helper()
	c := jsonschema.NewCompiler()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.AddResource("schema.json", doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile("schema.json")
	if err != nil {
		t.Fatalf("%s: %v", schema, err)
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	return sch.Validate(v)
}

// An example is kept as its description writes it: keys in their order,
// numbers as spelled, through $refs, in YAML and JSON; what JSON spells
// otherwise is written as JSON does, and what cannot be kept is encoded
// from the value read.
func TestOpenAPIExamplesAsWritten(t *testing.T) {
	yamlDoc := func(example string) string {
		return `openapi: 3.0.3
info: {title: t, version: "1"}
paths:
  /a:
    get:
      operationId: a
      responses:
        "200": {$ref: '#/components/responses/A'}
components:
  responses:
    A:
      description: ok
      content:
        application/json:
` + example
	}
	jsonDoc := func(content string) string {
		return `{"openapi":"3.1.0","info":{"title":"t","version":"1"},"paths":{"/a":{"get":{"operationId":"a","responses":{"200":{"description":"x",
  "content":{"application/json":` + content + `}}}}}},
"components":{"examples":{"One":{"summary":"s","value":{"zeta":1.50,"alpha":[1e3,-0.0,2],"mid":{"y":null,"x":true},"s":"<\u00e9>"}}}}}`
	}
	for _, tc := range []struct {
		name, doc, want string
	}{
		{"YAML, by $ref", yamlDoc(`          example:
            zeta: 1.50
            alpha: [1e3, 2, "3"]
            mid: {y: null, x: true, w: 2024-01-02}
`), `{"zeta":1.50,"alpha":[1e3,2,"3"],"mid":{"y":null,"x":true,"w":"2024-01-02"}}`},
		{"YAML spellings JSON writes otherwise", yamlDoc(`          example: {hex: 0x1F, octal: 0o17, tilde: ~, yes: yes, dot: .5}
`), `{"hex":31,"octal":15,"tilde":null,"yes":"yes","dot":0.5}`},
		{"YAML aliases", yamlDoc(`          example:
            b: &x {k: [1, 2]}
            a: *x
`), `{"b":{"k":[1,2]},"a":{"k":[1,2]}}`},
		{"YAML merge key: encoded from the value", yamlDoc(`          example:
            base: &b {z: 1}
            more: {<<: *b, a: 2}
`), `{"base":{"z":1},"more":{"a":2,"z":1}}`},
		{"JSON example", jsonDoc(`{"example":{"zeta":1.50,"alpha":[1e3,2],"mid":{"y":null,"x":false}}}`),
			`{"zeta":1.50,"alpha":[1e3,2],"mid":{"y":null,"x":false}}`},
		{"JSON examples by $ref", jsonDoc(`{"examples":{"one":{"$ref":"#/components/examples/One"}}}`),
			`{"zeta":1.50,"alpha":[1e3,-0.0,2],"mid":{"y":null,"x":true},"s":"<\u00e9>"}`},
		{"JSON, its path item by $ref", `{"openapi":"3.1.0","info":{"title":"t","version":"1"},"paths":{"/a":{"$ref":"#/components/pathItems/A"}},
"components":{"pathItems":{"A":{"get":{"responses":{"200":{"$ref":"#/components/responses/R"}}}}},
"responses":{"R":{"description":"x","content":{"application/json; charset=utf-8":{"example":[{"b":1,"a":2}]}}}}}}`, `[{"b":1,"a":2}]`},
		{"JSON after a byte-order mark", "\ufeff" + jsonDoc(`{"example":{"b":1,"a":2}}`), `{"b":1,"a":2}`},
		{"JSON with a key twice, as written", jsonDoc(`{"example":{"b":1,"a":2,"b":3}}`), `{"b":1,"a":2,"b":3}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := importer.OpenAPI([]byte(tc.doc), importer.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if len(r.Mocks) != 1 {
				t.Fatalf("%d mocks, skipped %v", len(r.Mocks), r.Skipped)
			}
			if got := string(r.Mocks[0].Data); got != tc.want {
				t.Errorf("data\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}
