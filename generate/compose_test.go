package generate_test

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/decoy-mock/decoy"
	"github.com/decoy-mock/decoy/generate"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// TestComposedSchemasValidate draws schemas that combine allOf, anyOf
// and oneOf over small schemas that often conflict or overlap: each is
// either refused or gives outputs that validate, over several seeds.
func TestComposedSchemasValidate(t *testing.T) {
	r := rand.New(rand.NewPCG(composeSeed, 11))
	n := 3000
	if testing.Short() {
		n = 300
	}
	compiled := 0
	for i := 0; i < n; i++ {
		src := composed(r, 0)
		tp, err := generate.ParseSchema([]byte(src), generate.Limits{})
		if err != nil {
			continue
		}
		c := jsonschema.NewCompiler()
		c.AssertFormat()
		doc, err := jsonschema.UnmarshalJSON(strings.NewReader(src))
		if err != nil {
			t.Fatal(err)
		}
		if err := c.AddResource("schema.json", doc); err != nil {
			t.Fatal(err)
		}
		sch, err := c.Compile("schema.json")
		if err != nil {
			continue
		}
		compiled++
		for seed := uint64(0); seed < 8; seed++ {
			out, err := tp.Run(seed, generate.Limits{MaxBytes: 1 << 16})
			if err != nil {
				continue
			}
			v, err := jsonschema.UnmarshalJSON(bytes.NewReader(out))
			if err != nil {
				t.Fatalf("%s: invalid JSON %s", src, out)
			}
			if err := sch.Validate(v); err != nil {
				t.Fatalf("seed %d: %s does not validate against %s: %v", seed, out, src, err)
			}
		}
	}
	t.Logf("%d of %d schemas compiled", compiled, n)
	if compiled < n/5 {
		t.Errorf("only %d of %d schemas compiled: the test draws too many contradictions", compiled, n)
	}
}

// hostileSchemas are schemas of a few hundred KB whose compiling, without
// a bound, takes minutes (measured: 20 s and more each): merges that each
// read all the merges before them, and oneOf branches compared in pairs.
var hostileSchemas = []struct {
	name   string
	schema func() string
}{
	{"allOf of 3000 one-property branches", func() string {
		return fmt.Sprintf(`{"type":"object","allOf":[%s]}`, join(3000, func(i int) string {
			return fmt.Sprintf(`{"properties":{"p%d":{"type":"string"}},"required":["p%d"]}`, i, i)
		}))
	}},
	{"anyOf of 2000 branches beside 2000 properties", func() string {
		return fmt.Sprintf(`{"type":"object","properties":{%s},"anyOf":[%s]}`,
			join(2000, func(i int) string { return fmt.Sprintf(`"p%d":{"type":"string"}`, i) }),
			join(2000, func(i int) string { return fmt.Sprintf(`{"properties":{"q%d":{"type":"integer"}}}`, i) }))
	}},
	{"oneOf of 9000 branches told apart in pairs", func() string {
		return fmt.Sprintf(`{"oneOf":[%s]}`, join(9000, func(i int) string { return fmt.Sprintf(`{"enum":[%d,%d,%d]}`, 3*i, 3*i+1, 3*i+2) }))
	}},
	{"allOf nested 21 deep, 800 properties a level", func() string {
		level := func(l int) string {
			return fmt.Sprintf(`{"properties":{%s}}`, join(800, func(i int) string { return fmt.Sprintf(`"l%d_%d":{"type":"string"}`, l, i) }))
		}
		s := level(0)
		for l := 1; l <= 21; l++ {
			s = fmt.Sprintf(`{"allOf":[%s,%s]}`, s, level(l))
		}
		return `{"type":"object","allOf":[` + s + `]}`
	}},
}

// join joins n strings made by f with commas.
func join(n int, f func(int) string) string {
	parts := make([]string, n)
	for i := range parts {
		parts[i] = f(i)
	}
	return strings.Join(parts, ",")
}

// TestHostileCompositionStops: compiling a schema whose allOf, anyOf or
// oneOf would take minutes to merge stops at its deadline, with the
// template's error, or when its request ends, with ErrCanceled; the
// compile's goroutine ends either way.
func TestHostileCompositionStops(t *testing.T) {
	for _, tt := range hostileSchemas {
		body := []byte(tt.schema())
		t.Run(tt.name, func(t *testing.T) {
			t.Run("deadline", func(t *testing.T) {
				err := compileWithin(t, body, generate.Limits{Deadline: time.Now().Add(100 * time.Millisecond)})
				if decoy.ErrorCode(err) != decoy.EINVALID || decoy.ErrorMessage(err) != "Generating the data took too long: make the template smaller" {
					t.Errorf("got %v, want the deadline's error", err)
				}
			})
			t.Run("request ends", func(t *testing.T) {
				done := make(chan struct{})
				time.AfterFunc(100*time.Millisecond, func() { close(done) })
				err := compileWithin(t, body, generate.Limits{Done: done})
				if !errors.Is(err, generate.ErrCanceled) || decoy.ErrorCode(err) != decoy.EUNAVAILABLE {
					t.Errorf("got %v, want ErrCanceled", err)
				}
			})
		})
	}
}

// compileWithin compiles schema in a goroutine of its own and returns its
// error, failing the test if the goroutine has not ended long after the
// bound in lim (the bound is 100 milliseconds; a compile that stops
// ends in a few: 10 s is slack for a loaded machine, not a measure).
func compileWithin(t *testing.T, schema []byte, lim generate.Limits) error {
	t.Helper()
	ended := make(chan error, 1)
	go func() {
		_, err := generate.ParseSchema(schema, lim)
		ended <- err
	}()
	select {
	case err := <-ended:
		return err
	case <-time.After(10 * time.Second):
		t.Fatalf("still compiling 10 s after a bound of 100 ms")
		return nil
	}
}

// composed draws a schema.
func composed(r *rand.Rand, depth int) string {
	if depth < 3 && r.IntN(3) == 0 {
		kw := []string{"allOf", "anyOf", "oneOf"}[r.IntN(3)]
		k := 1 + r.IntN(3)
		parts := make([]string, k)
		for i := range parts {
			parts[i] = composed(r, depth+1)
		}
		sib := ""
		if r.IntN(2) == 0 {
			sib = simple(r, depth) // keywords beside the composition
			sib = strings.TrimSuffix(sib, "}")
			if sib != "{" {
				sib += ","
			}
		} else {
			sib = "{"
		}
		return fmt.Sprintf(`%s"%s":[%s]}`, sib, kw, strings.Join(parts, ","))
	}
	return simple(r, depth)
}

// simple draws a schema without composition.
func simple(r *rand.Rand, depth int) string {
	var kws []string
	add := func(format string, a ...any) { kws = append(kws, fmt.Sprintf(format, a...)) }
	switch r.IntN(7) {
	case 0:
		add(`"type":"integer"`)
		if r.IntN(2) == 0 {
			add(`"minimum":%d`, r.IntN(10)-5)
		}
		if r.IntN(2) == 0 {
			add(`"maximum":%d`, r.IntN(10))
		}
		if r.IntN(3) == 0 {
			add(`"multipleOf":%d`, 1+r.IntN(4))
		}
	case 1:
		add(`"type":"number"`)
		if r.IntN(2) == 0 {
			add(`"exclusiveMinimum":%d`, r.IntN(4))
		}
		if r.IntN(2) == 0 {
			add(`"maximum":%d.5`, r.IntN(6))
		}
	case 2:
		add(`"type":"string"`)
		if r.IntN(2) == 0 {
			add(`"minLength":%d`, r.IntN(4))
		}
		if r.IntN(2) == 0 {
			add(`"maxLength":%d`, 2+r.IntN(5))
		}
		if r.IntN(4) == 0 {
			add(`"format":"email"`)
		}
	case 3:
		vals := []string{`1`, `2`, `"a"`, `"b"`, `true`, `null`, `2.0`}
		k := 1 + r.IntN(3)
		var pick []string
		for range k {
			pick = append(pick, vals[r.IntN(len(vals))])
		}
		if k == 1 && r.IntN(2) == 0 {
			add(`"const":%s`, pick[0])
		} else {
			add(`"enum":[%s]`, strings.Join(pick, ","))
		}
	case 4:
		add(`"type":"object"`)
		props := []string{}
		for _, p := range []string{"a", "b", "kind"} {
			if r.IntN(2) == 0 {
				if depth < 3 {
					props = append(props, fmt.Sprintf(`"%s":%s`, p, composed(r, depth+1)))
				} else {
					props = append(props, fmt.Sprintf(`"%s":{"type":"integer"}`, p))
				}
			}
		}
		add(`"properties":{%s}`, strings.Join(props, ","))
		var req []string
		for _, p := range []string{"a", "b", "kind"} {
			if r.IntN(3) == 0 {
				req = append(req, `"`+p+`"`)
			}
		}
		if len(req) > 0 {
			add(`"required":[%s]`, strings.Join(req, ","))
		}
		if r.IntN(4) == 0 {
			add(`"additionalProperties":false`)
		}
	case 5:
		add(`"type":"array"`)
		if depth < 3 {
			add(`"items":%s`, composed(r, depth+1))
		}
		if r.IntN(2) == 0 {
			add(`"maxItems":%d`, r.IntN(4))
		}
		if r.IntN(3) == 0 {
			add(`"minItems":%d`, r.IntN(3))
		}
		if r.IntN(3) == 0 {
			add(`"uniqueItems":true`)
		}
	default:
		if r.IntN(2) == 0 {
			add(`"type":["string","integer","null"]`)
		}
	}
	return "{" + strings.Join(kws, ",") + "}"
}

// composeSeed chooses the schemas drawn.
var composeSeed uint64 = 7
