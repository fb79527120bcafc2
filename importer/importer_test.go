package importer_test

import (
	"bytes"
	"encoding/json"
	"os"
	"reflect"
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

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

func TestOpenAPI(t *testing.T) {
	tests := []struct {
		name        string
		doc         string
		mocks       []string
		skipped     []string
		contentType string
	}{{
		name: "example, examples and none (3.0 YAML)",
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
`,
		mocks: []string{
			`listPets 200 [{"id":1,"name":"Rex"}]`,
			`GET /pets/{id} 203 {"first":true}`,
		},
		skipped: []string{
			"GET /empty 200: " + importer.ReasonNoExample,
			"GET /pets default: not a 2xx response",
			"POST /pets: not a GET operation",
			"GET /pets/{id} 200: no JSON content",
			"GET /pets/{id} 404: not a 2xx response",
			"GET /summary 200: its first example has no value",
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
		skipped: []string{"GET /a 200: its response could not be resolved (#/components/responses/r0)"},
	}, {
		name: "examples by $ref, lowest 2xx, +json (3.1 JSON)",
		doc: `{"openapi":"3.1.0","info":{"title":"t","version":"1"},
"paths":{"/a":{"get":{"operationId":"a","responses":{
  "201":{"description":"x","content":{"application/json":{"example":{"n":2}}}},
  "200":{"description":"x","content":{"application/vnd.api+json":{"examples":{"one":{"$ref":"#/components/examples/One"}}}}}}}}},
"components":{"examples":{"One":{"value":{"n":1,"s":"<é>"}}}}}`,
		mocks:       []string{`a 200 {"n":1,"s":"<é>"}`},
		skipped:     []string{"GET /a 201: a lower 2xx response (200) was imported"},
		contentType: "application/vnd.api+json",
	}, {
		name: "no paths",
		doc:  `{"openapi":"3.1.0","info":{"title":"t","version":"1"}}`,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := importer.OpenAPI([]byte(tt.doc), importer.Options{})
			if err != nil {
				t.Fatal(err)
			}
			mocks, skipped := summary(r)
			if !reflect.DeepEqual(mocks, tt.mocks) {
				t.Errorf("mocks:\n%q\nwant\n%q", mocks, tt.mocks)
			}
			if !reflect.DeepEqual(skipped, tt.skipped) {
				t.Errorf("skipped:\n%q\nwant\n%q", skipped, tt.skipped)
			}
			if tt.contentType != "" && r.Mocks[0].ContentType != tt.contentType {
				t.Errorf("content type %q, want %q", r.Mocks[0].ContentType, tt.contentType)
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
		{"not YAML or JSON", "{{{", decoy.EINVALID, "Invalid OpenAPI description"},
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

// TestThirdParty imports OpenAPI descriptions written by others (see
// testdata/thirdparty/SOURCES.md) and checks that each mock's data equals
// its example, as read from the file apart from the importer.
func TestThirdParty(t *testing.T) {
	tests := []struct {
		file    string
		mocks   map[string]string // operationId: the JSON pointer of its example in the file
		status  map[string]int
		skipped []string
	}{{
		file: "museum.yaml",
		mocks: map[string]string{
			"getMuseumHours":    "/components/examples/GetMuseumHoursResponseExample/value",
			"listSpecialEvents": "/components/examples/ListSpecialEventsResponseExample/value",
			"getSpecialEvent":   "/components/examples/GetSpecialEventResponseExample/value",
		},
		skipped: []string{
			"DELETE /special-events/{eventId}: not a GET operation",
			"GET /tickets/{ticketId}/qr 200: no JSON content",
			"PATCH /special-events/{eventId}: not a GET operation",
			"POST /special-events: not a GET operation",
			"POST /tickets: not a GET operation",
		},
	}, {
		file: "api-with-examples.json",
		mocks: map[string]string{
			"listVersionsv2":      "/paths/~1/get/responses/200/content/application~1json/examples/foo/value",
			"getVersionDetailsv2": "/paths/~1v2/get/responses/200/content/application~1json/examples/foo/value",
		},
		skipped: []string{
			"GET / 300: not a 2xx response",
			"GET /v2 203: a lower 2xx response (200) was imported",
		},
	}}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			raw, err := os.ReadFile("testdata/thirdparty/" + tt.file)
			if err != nil {
				t.Fatal(err)
			}
			r, err := importer.OpenAPI(raw, importer.Options{})
			if err != nil {
				t.Fatal(err)
			}
			// Dates stay strings, as in YAML 1.2 and in the JSON form.
			var parsed any
			if _, err := yaml.Unmarshal(raw, &parsed, yaml.DecodeOpts{DisableTimestamps: true}); err != nil {
				t.Fatal(err)
			}
			whole, err := json.Marshal(parsed)
			if err != nil {
				t.Fatal(err)
			}
			if len(r.Mocks) != len(tt.mocks) {
				t.Errorf("%d mocks, want %d", len(r.Mocks), len(tt.mocks))
			}
			for _, m := range r.Mocks {
				ptr, ok := tt.mocks[m.Name]
				if !ok {
					t.Errorf("unexpected mock %q", m.Name)
					continue
				}
				want := pointer(t, whole, ptr)
				if !jsonEqual(t, m.Data, want) {
					t.Errorf("%s: data\n%s\nwant the example\n%s", m.Name, m.Data, want)
				}
				if m.Status != 200 || m.ContentType != "application/json" {
					t.Errorf("%s: status %d, content type %s", m.Name, m.Status, m.ContentType)
				}
			}
			var skipped []string
			for _, s := range r.Skipped {
				if !strings.HasSuffix(s.Reason, "not a 2xx response") || tt.file != "museum.yaml" {
					skipped = append(skipped, s.Source+": "+s.Reason)
				}
			}
			for _, want := range tt.skipped {
				if !contains(skipped, want) {
					t.Errorf("skipped lacks %q: %q", want, skipped)
				}
			}
		})
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
	tests := []struct {
		name    string
		doc     string
		mocks   []string
		skipped []string
		code    string
	}{
		{name: "keys in order, bytes as written", doc: "{\"posts\": [ {\"id\": 1.0, \"t\": \"\\u00e9\"} ],\n \"profile\": {\"name\":\"typicode\"}, \"n\": 3}",
			mocks: []string{`posts 200 [ {"id": 1.0, "t": "\u00e9"} ]`, `profile 200 {"name":"typicode"}`, `n 200 3`}},
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
			r, err := importer.JSONServer([]byte(tt.doc), importer.Limits{})
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
	if r, err := importer.JSONServer([]byte(`{"a":1,"b":2}`), importer.Limits{MaxMocks: 2}); err != nil || len(r.Mocks) != 2 {
		t.Errorf("at the bound: %v %v", r, err)
	}
	_, err := importer.JSONServer([]byte(`{"a":1,"b":2,"c":3}`), importer.Limits{MaxMocks: 2})
	wantCode(t, err, decoy.ETOOLARGE)
}

// TestThirdPartyWithoutExamples: the OAI's petstore-expanded has no
// examples: its GET operations are skipped without Options.Generate, and
// handed to it, with its components, once it is set; with the schema
// generator the server uses, both import, with data that validates
// against their schemas (Pet is an allOf of NewPet and an id).
func TestThirdPartyWithoutExamples(t *testing.T) {
	raw, err := os.ReadFile("testdata/thirdparty/petstore-expanded.yaml")
	if err != nil {
		t.Fatal(err)
	}
	r, err := importer.OpenAPI(raw, importer.Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, skipped := summary(r)
	want := []string{
		"GET /pets 200: " + importer.ReasonNoExample,
		"GET /pets default: not a 2xx response",
		"POST /pets: not a GET operation",
		"DELETE /pets/{id}: not a GET operation",
		"GET /pets/{id} 200: " + importer.ReasonNoExample,
		"GET /pets/{id} default: not a 2xx response",
	}
	if len(r.Mocks) != 0 || !reflect.DeepEqual(skipped, want) {
		t.Errorf("mocks %d, skipped:\n%q\nwant\n%q", len(r.Mocks), skipped, want)
	}

	schemas := map[string]string{}
	r, err = importer.OpenAPI(raw, importer.Options{Generate: func(schema []byte) ([]byte, error) {
		return []byte(`[]`), nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	r2, _ := importer.OpenAPI(raw, importer.Options{Generate: func(schema []byte) ([]byte, error) {
		var s struct {
			Type       string `json:"type"`
			Ref        string `json:"$ref"`
			Components struct {
				Schemas map[string]json.RawMessage `json:"schemas"`
			} `json:"components"`
		}
		if err := json.Unmarshal(schema, &s); err != nil || s.Components.Schemas["Pet"] == nil || s.Components.Schemas["NewPet"] == nil {
			t.Errorf("schema %s: %v", schema, err)
		}
		schemas[s.Type+s.Ref] = string(schema)
		return []byte(`{}`), nil
	}})
	if len(r.Mocks) != 2 || r.Mocks[0].Name != "findPets" || r.Mocks[1].Name != "find pet by id" || len(r2.Mocks) != 2 {
		t.Errorf("with Generate: %+v", r.Mocks)
	}
	if schemas["array"] == "" || schemas["#/components/schemas/Pet"] == "" {
		t.Errorf("schemas given to Generate: %v", schemas)
	}

	// With the schema generator, as the server imports: Pet is an allOf
	// of NewPet and an id, and every output validates against the
	// operation's schema, over many seeds.
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
		if len(r.Mocks) != 2 {
			t.Fatalf("seed %d: %d mocks, skipped %v", seed, len(r.Mocks), r.Skipped)
		}
		for _, m := range r.Mocks {
			schema := given[string(m.Data)]
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
				t.Fatal(err)
			}
			v, err := jsonschema.UnmarshalJSON(bytes.NewReader(m.Data))
			if err != nil {
				t.Fatal(err)
			}
			if err := sch.Validate(v); err != nil {
				t.Errorf("seed %d: %s: %s does not validate against %s: %v", seed, m.Name, m.Data, schema, err)
			}
			var pets []map[string]any
			if m.Name == "find pet by id" {
				var pet map[string]any
				json.Unmarshal(m.Data, &pet)
				pets = append(pets, pet)
			} else {
				json.Unmarshal(m.Data, &pets)
			}
			for _, p := range pets {
				if _, ok := p["id"].(float64); !ok {
					t.Errorf("seed %d: %s: a pet without an integer id: %s", seed, m.Name, m.Data)
				}
			}
		}
	}
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
