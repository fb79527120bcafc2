package importer_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/decoy-mock/decoy"
	"github.com/decoy-mock/decoy/importer"
)

// openapi is a 3.1 description with the paths given, in YAML.
func openapi(paths string) string {
	return "openapi: 3.1.0\ninfo: {title: t, version: '1'}\npaths:\n" + paths
}

// TestOpenAPIResources: which operations share a mock, and how their
// routes bind and find the records (§11.5 of the contract).
func TestOpenAPIResources(t *testing.T) {
	tests := []struct {
		name   string
		doc    string
		opt    importer.Options
		mocks  []string
		routes []string
	}{{
		name: "wrapped collection; the parameter binds the field of its name",
		doc: openapi(`  /users:
    get:
      operationId: listUsers
      responses:
        "200": {description: x, content: {application/json: {example: {"data": [{"userId": 7, "name": "Ann"}], "links": {"next": null}, "tags": ["a"]}}}}
    post:
      responses: {"201": {description: x}}
  /users/{userId}:
    get: {responses: {"200": {description: x}}}
    put: {responses: {"200": {description: x}}}
    patch: {responses: {"200": {description: x}}}
    delete: {responses: {"204": {description: x}}}
`),
		mocks: []string{`listUsers 200 {"data":[{"userId":7,"name":"Ann"}],"links":{"next":null},"tags":["a"]}`},
		routes: []string{
			"GET /users -> 0 read items data",
			"POST /users -> 0 create items data",
			"GET /users/{userId} -> 0 read bind userId=userId items data",
			"PUT /users/{userId} -> 0 replace bind userId=userId items data",
			"PATCH /users/{userId} -> 0 update bind userId=userId items data",
			"DELETE /users/{userId} -> 0 delete bind userId=userId items data",
		},
	}, {
		name: "records without the parameter's field: bound to id; a name with a dot too",
		doc: openapi(`  /a:
    get: {responses: {"200": {description: x, content: {application/json: {example: [{"id": 1, "a.b": 2}]}}}}}
  /a/{key}:
    get: {responses: {"200": {description: x}}}
  /b:
    get: {responses: {"200": {description: x, content: {application/json: {example: [{"id": 1, "a.b": 2}]}}}}}
  /b/{a.b}:
    delete: {responses: {"204": {description: x}}}
`),
		mocks:  []string{`GET /a 200 [{"id":1,"a.b":2}]`, `GET /b 200 [{"id":1,"a.b":2}]`},
		routes: []string{"GET /a -> 0 read", "GET /a/{key} -> 0 read bind key=id", "GET /b -> 1 read", "DELETE /b/{a.b} -> 1 delete bind a.b=id"},
	}, {
		name: "the records' schema has the field",
		doc: openapi(`  /a:
    get:
      responses:
        "200":
          description: x
          content:
            application/json:
              schema: {type: array, items: {$ref: "#/components/schemas/A"}}
              example: [{"id": 1}]
  /a/{code}:
    get: {responses: {"200": {description: x}}}
components:
  schemas:
    A: {allOf: [{type: object, properties: {id: {type: integer}}}, {properties: {code: {type: string}}}]}
`),
		mocks:  []string{`GET /a 200 [{"id":1}]`},
		routes: []string{"GET /a -> 0 read", "GET /a/{code} -> 0 read bind code=code"},
	}, {
		name: "not collections: two arrays of objects, an array of strings, an empty array its schema says is of strings",
		doc: openapi(`  /two:
    get: {responses: {"200": {description: x, content: {application/json: {example: {"a": [{"x": 1}], "b": []}}}}}}
    post: {responses: {"201": {description: x, content: {application/json: {example: {"x": 1}}}}}}
  /two/{id}:
    delete: {responses: {"204": {description: x}}}
  /strings:
    get: {responses: {"200": {description: x, content: {application/json: {example: {"a": ["x"]}}}}}}
  /empty:
    get:
      responses:
        "200":
          description: x
          content: {application/json: {schema: {type: array, items: {type: string}}, example: []}}
`),
		mocks: []string{`GET /empty 200 []`, `GET /strings 200 {"a":["x"]}`, `GET /two 200 {"a":[{"x":1}],"b":[]}`, `POST /two 201 {"x":1}`, `DELETE /two/{id} 204 `},
		routes: []string{
			"GET /empty -> 0 read", "GET /strings -> 1 read", "GET /two -> 2 read", "POST /two -> 3 read", "DELETE /two/{id} -> 4 read bind id=id",
		},
	}, {
		name: "collections: an empty array its schema says is of objects, an empty array without a schema, a wrapped empty array",
		doc: openapi(`  /objects:
    get:
      responses:
        "200":
          description: x
          content: {application/json: {schema: {type: array, items: {properties: {sku: {type: string}}}}, example: []}}
  /objects/{sku}:
    get: {responses: {"200": {description: x}}}
  /any:
    get: {responses: {"200": {description: x, content: {application/json: {example: []}}}}}
  /any/{id}:
    get: {responses: {"200": {description: x}}}
  /wrapped:
    get: {responses: {"200": {description: x, content: {application/json: {example: {"items": [], "total": 0}}}}}}
  /wrapped/{id}:
    get: {responses: {"200": {description: x}}}
`),
		mocks: []string{`GET /any 200 []`, `GET /objects 200 []`, `GET /wrapped 200 {"items":[],"total":0}`},
		routes: []string{
			"GET /any -> 0 read", "GET /any/{id} -> 0 read bind id=id",
			"GET /objects -> 1 read", "GET /objects/{sku} -> 1 read bind sku=sku",
			"GET /wrapped -> 2 read items items", "GET /wrapped/{id} -> 2 read bind id=id items items",
		},
	}, {
		name: "parameters in the middle: a collection of its own, each parameter bound to its field",
		doc: openapi(`  /users/{userId}/posts:
    get: {responses: {"200": {description: x, content: {application/json: {example: [{"postId": 1, "userId": 7}]}}}}}
    post: {responses: {"201": {description: x}}}
  /users/{userId}/posts/{postId}:
    get: {responses: {"200": {description: x}}}
    patch: {responses: {"200": {description: x}}}
  /users/{userId}/posts/{postId}/like:
    post: {responses: {"204": {description: x}}}
`),
		mocks: []string{`GET /users/{userId}/posts 200 [{"postId":1,"userId":7}]`, "POST /users/{userId}/posts/{postId}/like 204 "},
		routes: []string{
			"GET /users/{userId}/posts -> 0 read bind userId=userId",
			"POST /users/{userId}/posts -> 0 create bind userId=userId",
			"GET /users/{userId}/posts/{postId} -> 0 read bind postId=postId,userId=userId",
			"PATCH /users/{userId}/posts/{postId} -> 0 update bind postId=postId,userId=userId",
			"POST /users/{userId}/posts/{postId}/like -> 1 read bind postId=postId,userId=userId",
		},
	}, {
		name: "a GET at a collection's item path is an item route, whatever it answers",
		doc: openapi(`  /a:
    get: {responses: {"200": {description: x, content: {application/json: {example: [{"id": 1}]}}}}}
  /a/{id}:
    get: {responses: {"200": {description: x, content: {application/json: {example: [{"id": 2}]}}}}}
    post: {responses: {"200": {description: x, content: {application/json: {example: {"ok": true}}}}}}
  /a/{id}/{sub}:
    get: {responses: {"200": {description: x, content: {application/json: {example: [{"id": 3}]}}}}}
`),
		mocks: []string{`GET /a 200 [{"id":1}]`, `POST /a/{id} 200 {"ok":true}`, `GET /a/{id}/{sub} 200 [{"id":3}]`},
		routes: []string{
			"GET /a -> 0 read", "GET /a/{id} -> 0 read bind id=id", "POST /a/{id} -> 1 read bind id=id",
			"GET /a/{id}/{sub} -> 2 read bind id=id,sub=sub",
		},
	}, {
		name: "the root, a trailing slash, under a base path",
		doc: openapi(`  /:
    get: {responses: {"200": {description: x, content: {application/json: {example: [{"id": 1}]}}}}}
  /{id}:
    delete: {responses: {"204": {description: x}}}
  /pets/:
    put: {responses: {"200": {description: x, content: {application/json: {example: {"ok": 1}}}}}}
`),
		opt:    importer.Options{BasePath: "/api/v1"},
		mocks:  []string{`GET / 200 [{"id":1}]`, `PUT /pets/ 200 {"ok":1}`},
		routes: []string{"GET /api/v1 -> 0 read", "PUT /api/v1/pets -> 1 read", "DELETE /api/v1/{id} -> 0 delete bind id=id"},
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
			if len(skipped) > 0 {
				t.Errorf("skipped %q", skipped)
			}
			checkRoutes(t, r)
		})
	}
}

// TestOpenAPIGeneratedCollections: without an example, the schema alone
// says whether a GET's data is a collection; a wrapped one's items are
// made required in the schema given to Generate, so that they are always
// there.
func TestOpenAPIGeneratedCollections(t *testing.T) {
	doc := openapi(`  /wrapped:
    get:
      responses:
        "200":
          description: x
          content:
            application/json:
              schema:
                type: object
                properties:
                  data: {type: array, items: {$ref: "#/components/schemas/Thing"}}
                  meta: {type: object, properties: {total: {type: integer}}}
  /wrapped/{thingId}:
    get: {responses: {"200": {description: x}}}
  /bare:
    get:
      responses:
        "200":
          description: x
          content:
            application/json:
              schema: {type: array, items: {oneOf: [{$ref: "#/components/schemas/Thing"}, {type: object, properties: {other: {type: string}}}]}}
  /bare/{id}:
    get: {responses: {"200": {description: x}}}
  /strings:
    get:
      responses:
        "200":
          description: x
          content: {application/json: {schema: {type: object, properties: {data: {type: array, items: {type: string}}}}}}
  /pets:
    get:
      responses:
        "200":
          description: x
          content: {application/json: {schema: {type: array, items: {oneOf: [{$ref: "#/components/schemas/Cat"}, {$ref: "#/components/schemas/Dog"}]}}}}
  /pets/{uuid}:
    get: {responses: {"200": {description: x}}}
components:
  schemas:
    Thing: {type: object, properties: {thingId: {type: string, format: uuid}, name: {type: string}}}
    Pet: {type: object, properties: {uuid: {type: string, format: uuid}}}
    Cat: {allOf: [{$ref: "#/components/schemas/Pet"}, {properties: {meows: {type: boolean}}}]}
    Dog: {type: object, properties: {uuid: {type: string}, barks: {type: boolean}}}
`)
	given := map[string]string{}
	r, err := importer.OpenAPI([]byte(doc), importer.Options{Generate: func(schema []byte) ([]byte, error) {
		var s map[string]json.RawMessage
		json.Unmarshal(schema, &s)
		if s["components"] == nil {
			t.Errorf("no components in %s", schema)
		}
		delete(s, "components")
		b, _ := json.Marshal(s)
		given[string(b)] = string(b)
		return []byte(`{"data":[]}`), nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	routes := []string{
		"GET /bare -> 0 read", "GET /bare/{id} -> 0 read bind id=id",
		"GET /pets -> 1 read", "GET /pets/{uuid} -> 1 read bind uuid=uuid", // a field of every branch
		"GET /strings -> 2 read",
		"GET /wrapped -> 3 read items data", "GET /wrapped/{thingId} -> 3 read bind thingId=thingId items data",
	}
	if got := routeSummary(r); !reflect.DeepEqual(got, routes) {
		t.Errorf("routes:\n%q\nwant\n%q", got, routes)
	}
	wrapped := `{"allOf":[{"properties":{"data":{"items":{"$ref":"#/components/schemas/Thing"},"type":"array"},"meta":{"properties":{"total":{"type":"integer"}},"type":"object"}},"type":"object"},{"properties":{"data":{"minItems":3}},"required":["data"]}]}`
	if given[wrapped] == "" {
		t.Errorf("schemas given to Generate:\n%q\nwant among them\n%s", given, wrapped)
	}
}

// TestOpenAPIRequestSchema: a route made from a POST, PUT or PATCH keeps
// its JSON request body schema as a document of its own, readOnly members
// not required, OpenAPI 3.0's nullable and boolean exclusive bounds (also
// met in 3.1 descriptions) said as JSON Schema says them.
func TestOpenAPIRequestSchema(t *testing.T) {
	const components = `components:
  requestBodies:
    Pet:
      content: {application/json: {schema: {$ref: "#/components/schemas/Pet"}}}
  schemas:
    Id: {type: integer, readOnly: true}
    Pet:
      type: object
      required: [id, name, created, age]
      properties:
        id: {$ref: "#/components/schemas/Id"}
        name: {type: string, nullable: true}
        created: {type: string, readOnly: true}
        age: {type: integer, minimum: 0, exclusiveMinimum: true, maximum: 30, exclusiveMaximum: false}
    Tagged:
      allOf:
        - {$ref: "#/components/schemas/Base"}
        - {required: [uid, tag], properties: {tag: {type: string}}}
    Base: {type: object, required: [uid], properties: {uid: {type: string, readOnly: true}}}
`
	paths := `paths:
  /pets:
    get: {responses: {"200": {description: x, content: {application/json: {example: [{"id": 1}]}}}}}
    post: {requestBody: {$ref: "#/components/requestBodies/Pet"}, responses: {"201": {description: x}}}
  /pets/{id}:
    put: {requestBody: {$ref: "#/components/requestBodies/Pet"}, responses: {"200": {description: x}}}
    patch:
      requestBody: {content: {application/x-www-form-urlencoded: {schema: {type: object}}}}
      responses: {"200": {description: x}}
    delete:
      requestBody: {content: {application/json: {schema: {type: object}}}}
      responses: {"204": {description: x}}
  /tagged:
    post:
      requestBody: {content: {application/merge-patch+json: {schema: {$ref: "#/components/schemas/Tagged"}}}}
      responses: {"200": {description: x}}
`
	for _, version := range []string{"3.0.3", "3.1.0"} {
		t.Run(version, func(t *testing.T) {
			doc := "openapi: " + version + "\ninfo: {title: t, version: '1'}\n" + paths + components
			r, err := importer.OpenAPI([]byte(doc), importer.Options{})
			if err != nil {
				t.Fatal(err)
			}
			want := []string{
				"GET /pets -> 0 read", "POST /pets -> 0 create schema",
				"PUT /pets/{id} -> 0 replace bind id=id schema", "PATCH /pets/{id} -> 0 update bind id=id", "DELETE /pets/{id} -> 0 delete bind id=id",
				"POST /tagged -> 1 read schema",
			}
			if got := routeSummary(r); !reflect.DeepEqual(got, want) {
				t.Fatalf("routes:\n%q\nwant\n%q", got, want)
			}
			pet := r.Routes[1].RequestSchema
			if string(pet) != string(r.Routes[2].RequestSchema) {
				t.Errorf("one schema, two documents:\n%s\n%s", pet, r.Routes[2].RequestSchema)
			}
			if strings.Contains(string(pet), "Tagged") || strings.Contains(string(pet), "requestBodies") {
				t.Errorf("the document holds more than the schema needs: %s", pet)
			}
			tagged := r.Routes[5].RequestSchema
			v30 := version == "3.0.3"
			for _, tc := range []struct {
				schema []byte
				body   string
				ok     bool
			}{
				{pet, `{"name":"Rex","age":3}`, true},                      // id and created are readOnly
				{pet, `{"id":1,"name":"Rex","created":"x","age":3}`, true}, // readOnly: not required, still allowed
				{pet, `{"age":3}`, false},                                  // name is required
				{pet, `{"name":null,"age":3}`, v30},                        // nullable: 3.0 only
				{pet, `{"name":"Rex","age":0}`, false},                     // exclusiveMinimum: true
				{pet, `{"name":"Rex","age":30}`, true},                     // exclusiveMaximum: false
				{tagged, `{"tag":"a"}`, true},                              // uid is readOnly in Base
				{tagged, `{"uid":"u"}`, false},                             // tag is required
			} {
				if err := validation(t, tc.schema, []byte(tc.body)); (err == nil) != tc.ok {
					t.Errorf("%s against %s: %v, want valid %v", tc.body, tc.schema, err, tc.ok)
				}
			}
		})
	}
}

// TestBasePath: Options.BasePath is checked by every format's import.
func TestBasePath(t *testing.T) {
	doc := openapi(`  /a:
    get: {responses: {"200": {description: x, content: {application/json: {example: 1}}}}}
`)
	for _, base := range []string{"api", "/api/", "/", "/a/{b}", "/a//b", "/a b", "/" + strings.Repeat("a/", 32) + "a"} {
		for _, format := range []string{importer.FormatOpenAPI, importer.FormatJSONServer, importer.FormatDecoy} {
			file := []byte(doc)
			switch format {
			case importer.FormatJSONServer:
				file = []byte(`{"a":[]}`)
			case importer.FormatDecoy:
				file = export(t)
			}
			_, err := importer.Read(format, file, importer.Options{BasePath: base})
			wantCode(t, err, decoy.EINVALID)
			if !strings.HasPrefix(decoy.ErrorMessage(err), "Invalid base_path") {
				t.Errorf("%s, %q: %v", format, base, err)
			}
		}
	}
	r, err := importer.Read(importer.FormatOpenAPI, []byte(doc), importer.Options{BasePath: "/v1/my-api.x"})
	if err != nil || r.Routes[0].Path != "/v1/my-api.x/a" {
		t.Fatalf("%v %+v", err, r)
	}
	// Past 32 segments under the base path, an operation is skipped.
	deep := openapi("  /" + strings.Repeat("a/", 30) + "b:\n    get: {responses: {\"200\": {description: x}}}\n")
	r, err = importer.OpenAPI([]byte(deep), importer.Options{BasePath: "/x/y"})
	if err != nil || len(r.Routes) != 0 || len(r.Skipped) != 1 || !strings.Contains(r.Skipped[0].Reason, "more than 32 segments") {
		t.Fatalf("%v %+v", err, r)
	}
}

// TestMaxRoutes: an import makes at most Limits.MaxRoutes routes.
func TestMaxRoutes(t *testing.T) {
	doc := openapi(`  /a:
    get: {responses: {"200": {description: x, content: {application/json: {example: [{"id": 1}]}}}}}
    post: {responses: {"201": {description: x}}}
  /a/{id}:
    delete: {responses: {"204": {description: x}}}
`)
	if r, err := importer.OpenAPI([]byte(doc), importer.Options{Limits: importer.Limits{MaxRoutes: 3}}); err != nil || len(r.Routes) != 3 {
		t.Errorf("at the bound: %v %v", r, err)
	}
	_, err := importer.OpenAPI([]byte(doc), importer.Options{Limits: importer.Limits{MaxRoutes: 2}})
	wantCode(t, err, decoy.ETOOLARGE)
	_, err = importer.JSONServer([]byte(`{"a":[]}`), importer.Options{Limits: importer.Limits{MaxRoutes: 5}})
	wantCode(t, err, decoy.ETOOLARGE)
	if r, err := importer.JSONServer([]byte(`{"a":[],"b":{}}`), importer.Options{Limits: importer.Limits{MaxRoutes: 7}}); err != nil || len(r.Routes) != 7 {
		t.Errorf("at the bound: %v %v", r, err)
	}
}

// regexpOp is the description that tells the operations' schemas apart.
var regexpOp = regexp.MustCompile(`\{description: op\d+, `)

// TestOpenAPIRequestSchemaBound: request schemas are made within
// Limits.MaxUnpackedBytes, however many operations share a large one; a
// "$ref" in an example or an extension is data, not followed.
func TestOpenAPIRequestSchemaBound(t *testing.T) {
	var b strings.Builder
	b.WriteString("openapi: 3.0.3\ninfo: {title: t, version: '1'}\npaths:\n")
	for i := range 50 {
		fmt.Fprintf(&b, "  /p%d:\n    post:\n      requestBody: {content: {application/json: {schema: {description: op%d, allOf: [{$ref: '#/components/schemas/Big'}]}}}}\n      responses: {'204': {description: x}}\n", i, i)
	}
	b.WriteString("components:\n  schemas:\n    Big:\n      type: object\n      example: {$ref: '#/nowhere'}\n      x-note: {$ref: '#/nowhere'}\n      properties:\n")
	for i := range 200 {
		fmt.Fprintf(&b, "        p%d: {type: string, description: a property of a large schema}\n", i)
	}
	doc := []byte(b.String())
	r, err := importer.OpenAPI(doc, importer.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Routes) != 50 || r.Routes[0].RequestSchema == nil || r.Routes[49].RequestSchema == nil {
		t.Fatalf("%d routes; the first one's schema: %s", len(r.Routes), r.Routes[0].RequestSchema)
	}
	total := 0
	for _, rt := range r.Routes {
		total += len(rt.RequestSchema)
	}
	_, err = importer.OpenAPI(doc, importer.Options{Limits: importer.Limits{MaxUnpackedBytes: int64(total) / 2}})
	wantCode(t, err, decoy.ETOOLARGE)

	// Operations that share one schema share the document made of it, but
	// each route stores it, and the table compiles it for each: what the
	// routes store is bounded, not only what was made (2,000 routes
	// taking one schema of 1.4 MB stored 2.7 GB).
	shared := []byte(strings.NewReplacer(", allOf: [{$ref: '#/components/schemas/Big'}]}", ", $ref: '#/components/schemas/Big'}").Replace(string(doc)))
	shared = []byte(regexpOp.ReplaceAllString(string(shared), "{"))
	r, err = importer.OpenAPI(shared, importer.Options{})
	if err != nil {
		t.Fatal(err)
	}
	one := len(r.Routes[0].RequestSchema)
	for _, rt := range r.Routes {
		if string(rt.RequestSchema) != string(r.Routes[0].RequestSchema) {
			t.Fatal("the operations' schemas differ: the case tests nothing")
		}
	}
	if _, err := importer.OpenAPI(shared, importer.Options{Limits: importer.Limits{MaxUnpackedBytes: int64(50 * one)}}); err != nil {
		t.Errorf("the 50 routes' schemas at the bound: %v", err)
	}
	_, err = importer.OpenAPI(shared, importer.Options{Limits: importer.Limits{MaxUnpackedBytes: int64(50*one) - 1}})
	wantCode(t, err, decoy.ETOOLARGE)
}
