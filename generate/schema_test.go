package generate_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/decoy-mock/decoy/generate"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// TestSchemaOutputsValidate generates from a schema for each keyword of
// the contract, over many seeds, and validates every output with a JSON
// Schema validator (formats asserted).
func TestSchemaOutputsValidate(t *testing.T) {
	tests := []struct{ name, schema string }{
		{"type string", `{"type":"string"}`},
		{"type number", `{"type":"number"}`},
		{"type integer", `{"type":"integer"}`},
		{"type boolean", `{"type":"boolean"}`},
		{"type null", `{"type":"null"}`},
		{"several types", `{"type":["string","integer","null"]}`},
		{"no type", `{}`},
		{"true schema", `true`},
		{"object, required", `{"type":"object","required":["id","name"],"properties":{"id":{"type":"integer"},"name":{"type":"string"},"nick":{"type":"string"}},"additionalProperties":false}`},
		{"required without a schema", `{"type":"object","required":["x"],"properties":{}}`},
		{"enum", `{"enum":["a",1,null,{"b":[true]}]}`},
		{"const", `{"const":{"k":[1,"2"]}}`},
		// Found in black-box testing: enum values the keywords beside
		// them refuse are never generated.
		{"enum narrowed by type", `{"type":"integer","enum":[1,"a",2.5,3]}`},
		{"enum narrowed by maxLength", `{"type":"string","enum":["abcdef","x","yz"],"maxLength":2}`},
		{"enum narrowed by bounds", `{"type":"number","enum":[-1,0,7,100],"minimum":0,"maximum":10}`},
		{"minimum maximum", `{"type":"integer","minimum":-3,"maximum":3}`},
		{"exclusive bounds", `{"type":"number","exclusiveMinimum":0,"exclusiveMaximum":0.5}`},
		{"exclusive integer bounds", `{"type":"integer","exclusiveMinimum":1,"exclusiveMaximum":3}`},
		{"only a minimum", `{"type":"number","minimum":1e6}`},
		{"only a maximum", `{"type":"integer","maximum":-10}`},
		{"multipleOf", `{"type":"number","multipleOf":0.01,"minimum":0,"maximum":1}`},
		{"integer multipleOf", `{"type":"integer","multipleOf":5,"minimum":1,"maximum":99}`},
		{"minLength maxLength", `{"type":"string","minLength":3,"maxLength":7}`},
		{"exact length", `{"type":"string","minLength":12,"maxLength":12}`},
		{"empty string", `{"type":"string","maxLength":0}`},
		{"long string", `{"type":"string","minLength":200}`},
		{"pattern", `{"type":"string","pattern":"^[A-Z]{3}-[0-9]{4}$"}`},
		{"pattern, unanchored", `{"type":"string","pattern":"ab+c"}`},
		{"pattern with lengths", `{"type":"string","pattern":"^[a-z]+$","minLength":2,"maxLength":6}`},
		{"format email", `{"type":"string","format":"email"}`},
		{"format uuid", `{"type":"string","format":"uuid"}`},
		{"format date", `{"type":"string","format":"date"}`},
		{"format date-time", `{"type":"string","format":"date-time"}`},
		{"format uri", `{"type":"string","format":"uri"}`},
		{"format ipv4", `{"type":"string","format":"ipv4"}`},
		{"minItems maxItems", `{"type":"array","items":{"type":"integer"},"minItems":2,"maxItems":3}`},
		{"array without items", `{"type":"array","minItems":1}`},
		{"hinted names within lengths", `{"type":"object","required":["name","email","city"],"properties":{"name":{"type":"string","maxLength":4},"email":{"type":"string"},"city":{"type":"string","minLength":1}}}`},
		{"anyOf", `{"anyOf":[{"type":"string","maxLength":2},{"type":"integer","minimum":10}]}`},
		{"allOf of one", `{"allOf":[{"$ref":"#/$defs/n"}],"$defs":{"n":{"type":"integer"}}}`},
		{"allOf of one, described", `{"allOf":[{"$ref":"#/$defs/n"},{"description":"a count"}],"$defs":{"n":{"type":"integer"}}}`},
		{"allOf merged", `{"allOf":[{"$ref":"#/$defs/new"},{"type":"object","required":["id"],"properties":{"id":{"type":"integer","format":"int64"}}}],
			"$defs":{"new":{"type":"object","required":["name"],"properties":{"name":{"type":"string"},"tag":{"type":"string"}}}}}`},
		{"allOf bounds", `{"allOf":[{"type":"number","minimum":3,"maximum":90,"multipleOf":4},{"type":"integer","exclusiveMaximum":50,"multipleOf":6},{"minimum":10}]}`},
		{"allOf lengths and items", `{"allOf":[{"type":"string","minLength":5},{"maxLength":6}]}`},
		{"allOf same property", `{"type":"object","required":["a"],"properties":{"a":{"type":"string","maxLength":3}},"allOf":[{"properties":{"a":{"minLength":2}}},{"required":["b"]}]}`},
		{"allOf additionalProperties", `{"allOf":[{"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"boolean"}},"additionalProperties":false},{"properties":{"c":{"type":"string"},"a":{"minimum":5}},"required":["a"]}]}`},
		{"allOf enums", `{"allOf":[{"enum":[1,2,"x",3.5,"yy"]},{"enum":[2,3.5,"yy","x"]},{"type":["integer","string"]},{"maxLength":1}]}`},
		{"allOf const and type", `{"allOf":[{"const":7},{"type":"integer","minimum":7}]}`},
		{"allOf draft 4", `{"$schema":"http://json-schema.org/draft-04/schema#","allOf":[{"type":"number","minimum":0,"exclusiveMinimum":true},{"maximum":1,"exclusiveMaximum":true}]}`},
		{"allOf nested", `{"allOf":[{"allOf":[{"type":"array","items":{"type":"integer","minimum":0}},{"maxItems":3}]},{"items":{"maximum":9},"minItems":2}]}`},
		{"allOf with recursion", `{"$defs":{"node":{"allOf":[{"$ref":"#/$defs/base"},{"properties":{"kids":{"type":"array","items":{"$ref":"#/$defs/node"}}}}]},
			"base":{"type":"object","required":["v"],"properties":{"v":{"type":"integer"}}}},"$ref":"#/$defs/node"}`},
		{"anyOf with siblings", `{"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"integer"}},"anyOf":[{"required":["a"]},{"required":["b"]}]}`},
		{"oneOf by type", `{"oneOf":[{"type":"string","maxLength":3},{"type":"integer"},{"type":"boolean"}]}`},
		{"oneOf discriminator", `{"type":"array","minItems":4,"items":{"oneOf":[{"$ref":"#/$defs/cat"},{"$ref":"#/$defs/dog"}]},"$defs":{
			"cat":{"type":"object","required":["kind","hunts"],"properties":{"kind":{"const":"cat"},"hunts":{"type":"boolean"}}},
			"dog":{"type":"object","required":["kind","barks"],"properties":{"kind":{"enum":["dog","puppy"]},"barks":{"type":"boolean"}}}}}`},
		{"oneOf, one branch alone", `{"oneOf":[{"type":"number"},{"type":"integer"},{"type":"string","format":"email"}]}`},
		{"oneOf with siblings", `{"type":"object","required":["k"],"properties":{"n":{"type":"integer"}},"oneOf":[{"properties":{"k":{"const":1}}},{"properties":{"k":{"const":2}},"required":["n"]}]}`},
		{"oneOf forbidding", `{"oneOf":[{"type":"object","required":["a"],"properties":{"a":{"type":"integer"}},"additionalProperties":false},{"type":"object","required":["b"]}]}`},
		{"uniqueItems of an enum", `{"type":"array","uniqueItems":true,"minItems":3,"maxItems":5,"items":{"enum":["a","b","c","d","e",1,1.0]}}`},
		{"uniqueItems of strings", `{"type":"array","uniqueItems":true,"minItems":5,"maxItems":10,"items":{"type":"string","maxLength":3}}`},
		{"uniqueItems of numbers", `{"type":"array","uniqueItems":true,"minItems":4,"items":{"type":"number","minimum":0,"maximum":2,"multipleOf":0.5}}`},
		{"uniqueItems, few values", `{"type":"array","uniqueItems":true,"maxItems":6,"items":{"type":"boolean"}}`},
		{"$ref to $defs", `{"type":"array","items":{"$ref":"#/$defs/user"},"$defs":{"user":{"type":"object","required":["id","email"],"properties":{"id":{"type":"string","format":"uuid"},"email":{"type":"string","format":"email"}}}}}`},
		{"$ref to definitions", `{"definitions":{"a":{"type":"boolean"}},"properties":{"x":{"$ref":"#/definitions/a"}},"required":["x"]}`},
		{"recursive $ref", `{"$defs":{"node":{"type":"object","required":["v"],"properties":{"v":{"type":"integer"},"children":{"type":"array","items":{"$ref":"#/$defs/node"}}}}},"$ref":"#/$defs/node"}`},
		{"root $ref", `{"type":"object","properties":{"self":{"$ref":"#"}}}`},
		{"draft 4 exclusive", `{"$schema":"http://json-schema.org/draft-04/schema#","type":"number","minimum":0,"exclusiveMinimum":true,"maximum":1,"exclusiveMaximum":true}`},
		{"a shop", `{"type":"array","minItems":5,"maxItems":5,"items":{"type":"object","required":["sku","price","tags","created"],
			"properties":{"sku":{"type":"string","pattern":"^SKU-[0-9]{6}$"},"price":{"type":"number","minimum":0.5,"maximum":999,"multipleOf":0.01},
			"tags":{"type":"array","items":{"enum":["new","sale","eco"]},"maxItems":3},"created":{"type":"string","format":"date-time"},
			"owner":{"type":"object","properties":{"email":{"type":"string","format":"email"},"site":{"type":"string","format":"uri"}}}}}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := jsonschema.NewCompiler()
			c.AssertFormat()
			doc, err := jsonschema.UnmarshalJSON(strings.NewReader(tt.schema))
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
			for seed := uint64(0); seed < 300; seed++ {
				out := run(t, generate.SchemaContentType, tt.schema, seed)
				v, err := jsonschema.UnmarshalJSON(bytes.NewReader([]byte(out)))
				if err != nil {
					t.Fatal(err)
				}
				if err := sch.Validate(v); err != nil {
					t.Fatalf("seed %d: %s does not validate: %v", seed, out, err)
				}
			}
		})
	}
}

// FuzzParse compiles any text as a template and as a schema: never a
// panic; what compiles runs, within its bounds, into valid JSON.
func FuzzParse(f *testing.F) {
	for _, s := range []string{usersTemplate, `{"$repeat":[1,3],"$item":"{{ choice 1 \"a\" }} {{ index }}"}`,
		`"{{ date \"2020-01-01\" }}"`, `{"type":"array","items":{"$ref":"#"}}`, `{"type":"string","pattern":"a{2,}"}`,
		`{"properties":{"a":{"type":"integer","multipleOf":3}}}`, `"{{"`,
		`{"id":"{{ request.path.id }}","t":"x {{ request.body.a }} {{ request.query.n }}","b":"{{ request.body }}"}`, `{"$repeat":99999999,"$item":[]}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		for _, ct := range []string{"application/json", generate.SchemaContentType} {
			tp, err := generate.Parse(ct, []byte(src), generate.Limits{Deadline: time.Now().Add(time.Second)})
			if err != nil {
				continue
			}
			out, err := tp.Run(1, generate.Limits{MaxBytes: 1 << 16, Deadline: time.Now().Add(time.Second)})
			if err == nil && !jsonValid(out) {
				t.Fatalf("%s (%s) gave invalid JSON: %s", src, ct, out)
			}
		}
		// As a rule's template, reading a request whose values are of
		// every kind (one with invalid UTF-8).
		tp, err := generate.ParseRequestTemplate([]byte(src), generate.Limits{Deadline: time.Now().Add(time.Second)})
		if err != nil {
			return
		}
		req := request{"method": `"GET"`, "path.id": "\"a\\\"\xff\"", "body": `{"a":[1,null,true]}`, "body.a": `[1,null,true]`, "query.n": `-1.5e3`}
		out, err := tp.RunRequest(1, generate.Limits{MaxBytes: 1 << 16, Deadline: time.Now().Add(time.Second)}, req)
		if err == nil && !jsonValid(out) {
			t.Fatalf("%s (as a rule's template) gave invalid JSON: %s", src, out)
		}
	})
}

// FuzzSchemaValidates: whatever schema compiles, its outputs validate
// against it, as a JSON Schema validator reads it (formats asserted).
func FuzzSchemaValidates(f *testing.F) {
	for _, s := range []string{
		`{"allOf":[{"type":"object","required":["a"],"properties":{"a":{"type":"integer","minimum":2}}},{"properties":{"a":{"maximum":9},"b":{"enum":[1,"x"]}}}]}`,
		`{"oneOf":[{"type":"object","required":["k"],"properties":{"k":{"const":1}}},{"type":"object","required":["k"],"properties":{"k":{"enum":[2,3]}}}]}`,
		`{"type":"array","uniqueItems":true,"minItems":2,"items":{"enum":["a","b",1,1.0,true]}}`,
		`{"anyOf":[{"type":"string","maxLength":2},{"type":"number"}],"allOf":[{"type":["string","integer"]}]}`,
		`{"allOf":[{"multipleOf":4},{"multipleOf":6},{"type":"integer","minimum":-20,"maximum":30}]}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		tp, err := generate.ParseSchema([]byte(src), generate.Limits{Deadline: time.Now().Add(time.Second)})
		if err != nil {
			return
		}
		c := jsonschema.NewCompiler()
		c.AssertFormat()
		doc, err := jsonschema.UnmarshalJSON(strings.NewReader(src))
		if err != nil || c.AddResource("schema.json", doc) != nil {
			return
		}
		sch, err := c.Compile("schema.json")
		if err != nil {
			return
		}
		for seed := uint64(0); seed < 5; seed++ {
			out, err := tp.Run(seed, generate.Limits{MaxBytes: 1 << 16, Deadline: time.Now().Add(time.Second)})
			if err != nil {
				return
			}
			v, err := jsonschema.UnmarshalJSON(bytes.NewReader(out))
			if err != nil {
				t.Fatalf("%s gave invalid JSON: %s", src, out)
			}
			if err := sch.Validate(v); err != nil {
				t.Fatalf("seed %d: %s does not validate against %s: %v", seed, out, src, err)
			}
		}
	})
}
