package importer

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/decoy-mock/decoy"
	"github.com/getkin/kin-openapi/openapi3"
)

// ReasonNoExample is why an operation with no example is skipped while
// Options.Generate is not set.
const ReasonNoExample = "no example; generated data is not available yet"

// maxErrorText bounds the part of a parser's message an answer quotes.
const maxErrorText = 300

// OpenAPI makes one mock per GET operation of an OpenAPI 3.0 or 3.1
// description (JSON or YAML) that has a 2xx JSON response: named by its
// operationId (else "GET <path>"), with the lowest such status, and the
// response's first example as data (else data generated from its schema,
// when opt.Generate is set). Everything else is listed as skipped.
//
// References to other files or URLs are refused: an uploaded description
// must not make the server read its disk or the network. YAML aliases are
// bounded by the YAML decoder (it refuses excessive aliasing), and cyclic
// references by the loader.
func OpenAPI(data []byte, opt Options) (res *Result, err error) {
	opt.Limits = opt.Limits.withDefaults()
	if int64(len(data)) > opt.MaxDataBytes {
		return nil, decoy.Errorf(decoy.ETOOLARGE, "The file is larger than %d bytes (--max-data-bytes)", opt.MaxDataBytes)
	}
	defer func() {
		// The loader is a large parser of untrusted input: a panic in it
		// is a file it could not read, not a reason to stop the server.
		if p := recover(); p != nil {
			res, err = nil, decoy.Errorf(decoy.EINVALID, "Invalid OpenAPI description: %s", clip(fmt.Sprint(p)))
		}
	}()
	loader := &openapi3.Loader{IncludeOrigin: true, IsExternalRefsAllowed: false}
	isJSON, err := checkRefChains(data)
	if err != nil {
		return nil, err
	}
	w := &written{data: data, json: isJSON} // JSON: kin-openapi reads it as such
	doc, err := loader.LoadFromData(data)
	if err != nil {
		return nil, decoy.Errorf(decoy.EINVALID, "Invalid OpenAPI description: %s", clip(err.Error()))
	}
	if v := doc.OpenAPI; !strings.HasPrefix(v, "3.0") && !strings.HasPrefix(v, "3.1") {
		if v == "" {
			return nil, decoy.Errorf(decoy.EINVALID, "Not an OpenAPI 3.0 or 3.1 description: it has no openapi field (Swagger 2.0 is not read)")
		}
		return nil, decoy.Errorf(decoy.EINVALID, "OpenAPI %s is not read: only 3.0 and 3.1", clip(v))
	}
	res = &Result{}
	order := exampleOrders(data)
	if doc.Paths == nil {
		return res, nil
	}
	paths := doc.Paths.Keys()
	sort.Strings(paths)
	for _, path := range paths {
		item := doc.Paths.Value(path)
		if item == nil {
			continue
		}
		ops := item.Operations()
		methods := make([]string, 0, len(ops))
		for m := range ops {
			methods = append(methods, m)
		}
		sort.Strings(methods)
		for _, method := range methods {
			source := method + " " + path
			if method != http.MethodGet {
				res.Skipped = append(res.Skipped, Skipped{source, "not a GET operation"})
				continue
			}
			if len(res.Mocks) >= opt.MaxMocks {
				return nil, decoy.Errorf(decoy.ETOOLARGE, "The file makes more than %d mocks", opt.MaxMocks)
			}
			res.add(operation(doc, w, []string{"paths", path, "get"}, source, ops[method], order, opt))
		}
	}
	return res, nil
}

// add records what one operation made.
func (r *Result) add(m *Mock, skipped []Skipped) {
	if m != nil {
		r.Mocks = append(r.Mocks, *m)
	}
	r.Skipped = append(r.Skipped, skipped...)
}

// operation makes the mock of one GET operation, if it has one, and lists
// its other responses as skipped.
// at is the operation's JSON pointer, as segments.
func operation(doc *openapi3.T, w *written, at []string, source string, op *openapi3.Operation, order examplesOrder, opt Options) (*Mock, []Skipped) {
	if op.Responses == nil || op.Responses.Len() == 0 {
		return nil, []Skipped{{source, "no responses"}}
	}
	type response struct {
		code   string
		status int
		ref    *openapi3.ResponseRef
	}
	var ok []response
	var skipped []Skipped
	for _, code := range op.Responses.Keys() {
		status, isOK := okStatus(code)
		if !isOK {
			skipped = append(skipped, Skipped{source + " " + code, "not a 2xx response"})
			continue
		}
		ok = append(ok, response{code, status, op.Responses.Value(code)})
	}
	sort.Slice(ok, func(i, j int) bool {
		if ok[i].status != ok[j].status {
			return ok[i].status < ok[j].status
		}
		return ok[i].code < ok[j].code // "200" before "2XX"
	})
	var mock *Mock
	for _, r := range ok {
		src := source + " " + r.code
		if mock != nil {
			skipped = append(skipped, Skipped{src, fmt.Sprintf("a lower 2xx response (%d) was imported", mock.Status)})
			continue
		}
		var content openapi3.Content
		switch {
		case r.ref != nil && r.ref.Value != nil:
			content = r.ref.Value.Content
		case r.ref != nil && r.ref.Ref != "":
			// $refs that lead nowhere (a cycle, or "#"): kin-openapi
			// leaves them unresolved.
			skipped = append(skipped, Skipped{src, "its response could not be resolved (" + clip(r.ref.Ref) + ")"})
			continue
		}
		ct, key, mt := jsonContent(content)
		if mt == nil {
			skipped = append(skipped, Skipped{src, "no JSON content"})
			continue
		}
		data, reason := exampleData(doc, w, append(slices.Clip(at), "responses", r.code, "content", key), mt, order, opt)
		if reason != "" {
			skipped = append(skipped, Skipped{src, reason})
			continue
		}
		n := source
		if op.OperationID != "" {
			n = op.OperationID
		}
		mock = &Mock{Name: name(n), ContentType: ct, Status: r.status, Data: data}
	}
	sort.Slice(skipped, func(i, j int) bool { return skipped[i].Source < skipped[j].Source })
	return mock, skipped
}

// okStatus reads a response code: 2xx ones (200-299, or "2XX", taken as
// 200) are ok.
func okStatus(code string) (int, bool) {
	if strings.EqualFold(code, "2XX") {
		return 200, true
	}
	n, err := strconv.Atoi(code)
	return n, err == nil && len(code) == 3 && n >= 200 && n <= 299
}

// jsonContent picks the JSON media type of a response: application/json
// first, else the first (by name) of the other JSON types (+json).
func jsonContent(content openapi3.Content) (string, string, *openapi3.MediaType) {
	var keys []string
	for k, mt := range content {
		if mt != nil && isJSON(k) {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return "", "", nil
	}
	sort.Slice(keys, func(i, j int) bool {
		ai, aj := base(keys[i]) == "application/json", base(keys[j]) == "application/json"
		if ai != aj {
			return ai
		}
		return keys[i] < keys[j]
	})
	return base(keys[0]), keys[0], content[keys[0]]
}

func base(mediaType string) string {
	t, _, err := mime.ParseMediaType(mediaType)
	if err != nil {
		return strings.ToLower(strings.TrimSpace(mediaType))
	}
	return t
}

func isJSON(mediaType string) bool {
	t := base(mediaType)
	return t == "application/json" || strings.HasSuffix(t, "+json")
}

// exampleData returns the data of a JSON media type: its example, the
// first of its examples, or what Generate makes of its schema; else the
// reason there is none. An example is kept as written (written.example),
// else encoded from the value kin-openapi read.
func exampleData(doc *openapi3.T, w *written, at []string, mt *openapi3.MediaType, order examplesOrder, opt Options) ([]byte, string) {
	var value any
	p := place{ptr: at} // where the example is written
	found := false
	reason := ReasonNoExample
	switch {
	case mt.Example != nil:
		value, found = mt.Example, true
		p.ptr = append(p.ptr, "example")
		if mt.Origin != nil {
			p.at = mt.Origin.Fields.Get("example")
		}
	case len(mt.Examples) > 0:
		name, ex := firstExample(mt.Examples, order)
		p.ptr = append(p.ptr, "examples", name, "value")
		if ex == nil || ex.Value == nil {
			return nil, "its first example could not be resolved"
		}
		if ex.Value.Value == nil {
			if ex.Value.ExternalValue != "" {
				return nil, "its first example is external (externalValue): not read"
			}
			// An example without a value (a summary only) is no
			// example: the data comes from the schema, as without one.
			reason = "its first example has no value"
			break
		}
		value, found = ex.Value.Value, true
		if ex.Value.Origin != nil {
			p.at = ex.Value.Origin.Fields.Get("value")
		}
	}
	if !found {
		if opt.Generate == nil || mt.Schema == nil {
			return nil, reason
		}
		schema, err := schemaDocument(doc, mt.Schema)
		if err != nil {
			return nil, "no example, and its schema could not be written out"
		}
		data, err := opt.Generate(schema)
		if err != nil {
			return nil, "no example, and data could not be generated from its schema: " + clip(decoy.ErrorMessage(err))
		}
		return checkSize(data, opt.Limits)
	}
	if kept := w.example(p, value, opt.MaxDataBytes); kept != nil {
		return checkSize(kept, opt.Limits)
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(value); err != nil {
		return nil, "its example is not JSON"
	}
	return checkSize(bytes.TrimSuffix(b.Bytes(), []byte("\n")), opt.Limits)
}

func checkSize(data []byte, l Limits) ([]byte, string) {
	if int64(len(data)) > l.MaxDataBytes {
		return nil, fmt.Sprintf("its data is larger than %d bytes (--max-data-bytes)", l.MaxDataBytes)
	}
	return data, ""
}

// firstExample returns the example written first in the file: by its
// position in a YAML file, by the order exampleOrders read in a JSON one,
// else the first by name.
func firstExample(examples openapi3.Examples, order examplesOrder) (string, *openapi3.ExampleRef) {
	names := make([]string, 0, len(examples))
	for n := range examples {
		names = append(names, n)
	}
	sort.Strings(names)
	if written, ok := order[orderKey(names)]; ok {
		return written[0], examples[written[0]]
	}
	line := func(n string) int {
		if ex := examples[n]; ex != nil && ex.Origin != nil && ex.Origin.Key != nil {
			return ex.Origin.Key.Line
		}
		return 0
	}
	sort.SliceStable(names, func(i, j int) bool { return line(names[i]) < line(names[j]) })
	return names[0], examples[names[0]]
}

// examplesOrder holds the order in which the names of each "examples"
// object of a JSON file are written, by the set of its names (orderKey):
// the JSON decoder behind kin-openapi keeps no order, and the first example
// is the one written first. Two "examples" objects with the same names in
// different orders are ambiguous: neither is kept, and the first by name
// is taken.
type examplesOrder map[string][]string

func orderKey(sortedNames []string) string { return strings.Join(sortedNames, "\x00") }

// maxDepth bounds the nesting exampleOrders follows, as encoding/json
// bounds what it decodes.
const maxDepth = 10000

var errTooDeep = errors.New("nested too deeply")

// exampleOrders reads the order of the names of every "examples" object
// of a JSON file; nil for anything else (YAML keeps positions itself).
func exampleOrders(data []byte) examplesOrder {
	trimmed := bytes.TrimLeft(bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")), " \t\r\n")
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return nil
	}
	order := examplesOrder{}
	ambiguous := map[string]bool{}
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	// walk reads one value at depth; examples says it is the value of an
	// "examples" member.
	var walk func(examples bool, depth int) error
	walk = func(examples bool, depth int) error {
		if depth > maxDepth {
			return errTooDeep
		}
		t, err := dec.Token()
		if err != nil {
			return err
		}
		switch t {
		case json.Delim('['):
			for dec.More() {
				if err := walk(false, depth+1); err != nil {
					return err
				}
			}
			_, err = dec.Token()
			return err
		case json.Delim('{'):
			var names []string
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					return err
				}
				name, _ := k.(string)
				names = append(names, name)
				if err := walk(name == "examples", depth+1); err != nil {
					return err
				}
			}
			if _, err := dec.Token(); err != nil {
				return err
			}
			if examples && len(names) > 1 {
				sorted := append([]string(nil), names...)
				sort.Strings(sorted)
				key := orderKey(sorted)
				if prev, ok := order[key]; ok && strings.Join(prev, "\x00") != strings.Join(names, "\x00") {
					ambiguous[key] = true
				}
				order[key] = names
			}
		}
		return nil
	}
	if walk(false, 0) != nil {
		return nil
	}
	for key := range ambiguous {
		delete(order, key)
	}
	return order
}

// schemaDocument writes a response's schema out as a JSON Schema document
// that Generate can read on its own: the schema as written, its $refs
// unchanged, with the description's components beside it so that every
// "#/components/..." reference resolves within the document.
func schemaDocument(doc *openapi3.T, schema *openapi3.SchemaRef) ([]byte, error) {
	raw, err := json.Marshal(schema)
	if err != nil {
		return nil, err
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		return raw, nil // a boolean schema
	}
	if doc.Components != nil {
		if obj["components"], err = json.Marshal(doc.Components); err != nil {
			return nil, err
		}
	}
	return json.Marshal(obj)
}

// clip shortens a message quoted in an answer.
func clip(s string) string {
	if len(s) <= maxErrorText {
		return s
	}
	return cut(s, maxErrorText) + "…"
}
