package importer

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"os"
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

// emptyContentType is the content type of a mock whose operation gives it
// no data: an empty body is no JSON document.
const emptyContentType = "text/plain; charset=utf-8"

// OpenAPI reads an OpenAPI 3.0 or 3.1 description (JSON or YAML) and
// mounts a route for every operation it can (§11.5 of the contract), at the
// operation's path under opt.BasePath. Operations that share a resource
// share a mock:
//
//   - A GET whose path ends with a literal segment (or is "/") and whose
//     data is a collection (see collection.go) owns a mock, named by its
//     operationId (else "GET <path>"), and reads it.
//   - A POST at the same path creates its records; a GET, PUT, PATCH or
//     DELETE at the same path followed by one parameter reads, replaces,
//     updates or deletes one, the parameter bound to the records' field of
//     its name when they have it, else to "id".
//   - Any other operation with a 2xx response gets a mock of its own, named
//     as above with its method, and a read route that answers it as it is,
//     whatever the method.
//
// Every parameter of a route's path is bound: the last one of an item
// route as said, the others (in the middle: "/users/{userId}/posts") to
// the field of their own name, as the contract binds a parameter it is not
// told about; so "/users/{userId}/posts" lists the posts whose userId is
// the path's.
//
// A mock's data is the first example (example, else the first of
// examples, $refs resolved) of the operation's lowest 2xx response with
// JSON content, else what opt.Generate makes of that response's schema;
// its status is that response's. When no 2xx response has JSON content, or
// the content has neither example nor schema, the mock of an operation of
// its own has an empty body with the lowest 2xx status (the example of a
// text/* response, when it is a string). A route made from a POST, PUT or
// PATCH keeps the operation's JSON request body schema (schema.go).
//
// What cannot be a route is listed as skipped with why: HEAD, OPTIONS and
// TRACE operations, paths that are no route path ("/files/{name}.json"),
// a second path of the same shape ("/u/{a}" after "/u/{b}"), and
// operations whose mock cannot be made (no 2xx response, an example that
// does not resolve, no data generated).
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
	base, err := basePath(opt.BasePath)
	if err != nil {
		return nil, err
	}
	var im *openAPIImport
	defer func() {
		// The loader is a large parser of untrusted input: a panic in it
		// is a file it could not read, not a reason to stop the server.
		if p := recover(); p != nil {
			res, err = nil, decoy.Errorf(decoy.EINVALID, "Invalid OpenAPI description: %s", clip(fmt.Sprint(p)))
		}
		if im != nil {
			im.unspool(err != nil)
		}
	}()
	loader := &openapi3.Loader{IncludeOrigin: true, IsExternalRefsAllowed: false}
	raw, isJSON, err := checkRefChains(data)
	if err != nil {
		return nil, err
	}
	w := &written{data: data, json: isJSON} // JSON: kin-openapi reads it as such
	doc, err := loader.LoadFromData(data)
	if err != nil {
		return nil, decoy.Errorf(decoy.EINVALID, "Invalid OpenAPI description: %s", clip(syntaxError(err.Error(), isJSON || bytes.HasPrefix(bytes.TrimSpace(data), []byte("{")))))
	}
	if v := doc.OpenAPI; !strings.HasPrefix(v, "3.0") && !strings.HasPrefix(v, "3.1") {
		if v == "" {
			return nil, decoy.Errorf(decoy.EINVALID, "Not an OpenAPI 3.0 or 3.1 description: it has no openapi field (Swagger 2.0 is not read)")
		}
		return nil, decoy.Errorf(decoy.EINVALID, "OpenAPI %s is not read: only 3.0 and 3.1", clip(v))
	}
	im = &openAPIImport{
		doc: doc, w: w, order: exampleOrders(data), opt: opt, base: base, res: &Result{},
		schemas: &schemaDocs{raw: raw, v30: strings.HasPrefix(doc.OpenAPI, "3.0"), limit: opt.MaxUnpackedBytes},
	}
	if err := im.run(); err != nil {
		return nil, err
	}
	return im.res, nil
}

// openAPIImport is one OpenAPI import under way.
type openAPIImport struct {
	spooled []string // the answers' files (see keep)
	doc     *openapi3.T
	w       *written
	order   examplesOrder
	opt     Options
	base    []string
	schemas *schemaDocs
	res     *Result
}

// What an operation becomes.
type opKind int

const (
	ownMock          opKind = iota // a mock of its own, and a read route
	collectionRead                 // the GET that owns a collection's mock
	collectionCreate               // a POST at the collection's path
	itemRoute                      // at the collection's path and one parameter
)

// operation is one operation of the description.
type operation struct {
	method string // as kin-openapi gives it: upper case
	path   string // as written
	source string // "GET /pets", as skipped lists it
	segs   []string
	op     *openapi3.Operation
	kind   opKind
	res    *resource // of every kind but ownMock
	ans    *answer   // its mock's answer, once made
	skip   *Skipped  // why it is not imported
}

// resource is a collection's mock and the GET that owns it.
type resource struct {
	owner *operation
	coll  *collection
	mock  int // index in Result.Mocks; -1 until made
}

// routeMethodOrder is the order of an operation's methods in the result:
// the routes' methods as decoy.RouteMethods lists them, then the others.
func routeMethodOrder(m string) int {
	if i := slices.Index(decoy.RouteMethods, m); i >= 0 {
		return i
	}
	return len(decoy.RouteMethods)
}

func (im *openAPIImport) run() error {
	ops := im.operations()
	// Collections, the shortest paths first: a GET at a collection's path
	// and one parameter is one of its item routes, whatever it answers.
	var gets []*operation
	for _, op := range ops {
		if op.skip == nil && op.method == "GET" {
			gets = append(gets, op)
		}
	}
	sort.SliceStable(gets, func(i, j int) bool { return len(gets[i].segs) < len(gets[j].segs) })
	resources := map[string]*resource{}
	for _, op := range gets {
		if isItemPath(op.segs) {
			if r := resources[pathShape(op.segs[:len(op.segs)-1])]; r != nil {
				op.kind, op.res = itemRoute, r
			}
			continue
		}
		op.ans, op.skip = im.answer(op, true)
		if err := im.keep(op.ans); err != nil {
			return err
		}
		if op.ans != nil && op.ans.coll != nil {
			r := &resource{owner: op, coll: op.ans.coll, mock: -1}
			resources[pathShape(op.segs)] = r
			op.kind, op.res = collectionRead, r
		}
	}
	for _, op := range ops {
		if op.skip != nil {
			continue
		}
		switch op.method {
		case "POST":
			if r := resources[pathShape(op.segs)]; r != nil {
				op.kind, op.res = collectionCreate, r
			}
		case "PUT", "PATCH", "DELETE":
			if isItemPath(op.segs) {
				if r := resources[pathShape(op.segs[:len(op.segs)-1])]; r != nil {
					op.kind, op.res = itemRoute, r
				}
			}
		}
	}
	for _, op := range ops {
		if err := im.emit(op); err != nil {
			return err
		}
	}
	return nil
}

// operations lists the description's operations by path, then method;
// those that cannot be routes carry why.
func (im *openAPIImport) operations() []*operation {
	if im.doc.Paths == nil {
		return nil
	}
	var ops []*operation
	shapes := map[string]string{} // method and path shape: the first path
	paths := im.doc.Paths.Keys()
	sort.Strings(paths)
	for _, path := range paths {
		item := im.doc.Paths.Value(path)
		if item == nil {
			continue
		}
		segs, reason := openAPIPath(im.base, path)
		all := item.Operations()
		methods := make([]string, 0, len(all))
		for m := range all {
			methods = append(methods, m)
		}
		sort.Slice(methods, func(i, j int) bool {
			a, b := routeMethodOrder(methods[i]), routeMethodOrder(methods[j])
			if a != b {
				return a < b
			}
			return methods[i] < methods[j]
		})
		for _, method := range methods {
			op := &operation{method: method, path: path, source: method + " " + path, segs: segs, op: all[method]}
			ops = append(ops, op)
			switch {
			case method == "HEAD":
				op.skip = &Skipped{op.source, "HEAD is not a route's method: a GET route answers it"}
			case method == "OPTIONS":
				op.skip = &Skipped{op.source, "OPTIONS is not a route's method: Decoy answers CORS preflights itself"}
			case routeMethodOrder(method) == len(decoy.RouteMethods):
				op.skip = &Skipped{op.source, clip(method) + " is not a route's method (GET, POST, PUT, PATCH or DELETE)"}
			case reason != "":
				op.skip = &Skipped{op.source, reason}
			default:
				key := method + " " + pathShape(segs)
				if first, taken := shapes[key]; taken {
					op.skip = &Skipped{op.source, "the path has the shape of " + clip(first) + ", imported before it (parameter names aside)"}
				} else {
					shapes[key] = path
				}
			}
		}
	}
	return ops
}

// emit adds what one operation makes to the result.
func (im *openAPIImport) emit(op *operation) error {
	if op.skip != nil {
		im.res.Skipped = append(im.res.Skipped, *op.skip)
		return nil
	}
	rt := Route{Method: op.method, Path: joinPath(op.segs), Action: decoy.ActionRead, Bind: map[string]string{}}
	for _, p := range params(op.segs) {
		rt.Bind[p] = p
	}
	if r := op.res; r != nil {
		if r.mock < 0 {
			idx, err := im.addMock(r.owner, r.owner.ans)
			if err != nil {
				return err
			}
			r.mock = idx
		}
		rt.Mock, rt.Items = r.mock, r.coll.itemsPath()
		switch op.kind {
		case collectionCreate:
			rt.Action = decoy.ActionCreate
		case itemRoute:
			last := params(op.segs[len(op.segs)-1:])[0]
			rt.Bind[last] = r.coll.idField(last)
			rt.Action = map[string]string{
				"GET": decoy.ActionRead, "PUT": decoy.ActionReplace,
				"PATCH": decoy.ActionUpdate, "DELETE": decoy.ActionDelete,
			}[op.method]
		}
	} else {
		if op.ans == nil {
			op.ans, op.skip = im.answer(op, false)
			if err := im.keep(op.ans); err != nil {
				return err
			}
			if op.skip != nil {
				im.res.Skipped = append(im.res.Skipped, *op.skip)
				return nil
			}
		}
		idx, err := im.addMock(op, op.ans)
		if err != nil {
			return err
		}
		rt.Mock = idx
	}
	schema, err := im.requestSchema(op)
	if err != nil {
		return err
	}
	rt.RequestSchema = schema
	if len(im.res.Routes) >= im.opt.MaxRoutes {
		return decoy.Errorf(decoy.ETOOLARGE, "The file makes more than %d routes", im.opt.MaxRoutes)
	}
	im.res.Routes = append(im.res.Routes, rt)
	return nil
}

// addMock adds the mock of an operation, with its answer; it returns the
// mock's index.
func (im *openAPIImport) addMock(op *operation, a *answer) (int, error) {
	if len(im.res.Mocks) >= im.opt.MaxMocks {
		return 0, decoy.Errorf(decoy.ETOOLARGE, "The file makes more than %d mocks", im.opt.MaxMocks)
	}
	n := op.source
	if op.op.OperationID != "" {
		n = op.op.OperationID
	}
	im.res.Mocks = append(im.res.Mocks, Mock{Name: name(n), ContentType: a.contentType, Status: a.status, Data: a.data, Spool: a.spool, Size: a.size})
	return len(im.res.Mocks) - 1, nil
}

// keep writes the data of an answer just made to a file of its own, with
// Options.Spool, and drops it: answers are made for every operation
// before their mocks are, and would all be held at once.
func (im *openAPIImport) keep(a *answer) error {
	if a == nil || im.opt.Spool == "" {
		return nil
	}
	spool, err := spoolFile(im.opt.Spool, "", int64(len(a.data)), bytes.NewReader(a.data))
	if err != nil {
		return err
	}
	im.spooled = append(im.spooled, spool)
	a.spool, a.size, a.data = spool, int64(len(a.data)), nil
	return nil
}

// unspool removes the files of answers no mock took, and on an error all
// of them.
func (im *openAPIImport) unspool(failed bool) {
	taken := map[string]bool{}
	if !failed {
		for _, m := range im.res.Mocks {
			taken[m.Spool] = true
		}
	}
	for _, f := range im.spooled {
		if !taken[f] {
			_ = os.Remove(f)
		}
	}
}

// requestSchema returns the document of a POST, PUT or PATCH operation's
// JSON request body schema (see schemaDocs); nil for any other.
func (im *openAPIImport) requestSchema(op *operation) ([]byte, error) {
	switch op.method {
	case "POST", "PUT", "PATCH":
	default:
		return nil, nil
	}
	rb := op.op.RequestBody
	if rb == nil || rb.Value == nil {
		return nil, nil
	}
	_, key, mt := jsonContent(rb.Value.Content)
	if mt == nil || mt.Schema == nil {
		return nil, nil
	}
	return im.schemas.requestSchema([]string{"paths", op.path, strings.ToLower(op.method), "requestBody", "content", key, "schema"})
}

// answer is what a mock answers: its status, content type and data, and,
// for a GET that may own one, the collection its data is.
type answer struct {
	status      int
	contentType string
	data        []byte
	coll        *collection
	// spool and size, with Options.Spool: the file that holds data.
	spool string
	size  int64
}

// answer makes the answer of an operation's mock (see OpenAPI), or says
// why there is none. collectible: tell whether its data is a collection.
func (im *openAPIImport) answer(op *operation, collectible bool) (*answer, *Skipped) {
	responses := op.op.Responses
	if responses == nil || responses.Len() == 0 {
		return nil, &Skipped{op.source, "no responses"}
	}
	type response struct {
		code   string
		status int
		ref    *openapi3.ResponseRef
	}
	var ok []response
	for _, code := range responses.Keys() {
		if status, isOK := okStatus(code); isOK {
			ok = append(ok, response{code, status, responses.Value(code)})
		}
	}
	sort.Slice(ok, func(i, j int) bool {
		if ok[i].status != ok[j].status {
			return ok[i].status < ok[j].status
		}
		return ok[i].code < ok[j].code // "200" before "2XX"
	})
	var empty *answer   // the lowest 2xx response, should none give data
	var failed *Skipped // the first reason a JSON response gave no data
	for _, r := range ok {
		src := op.source + " " + r.code
		var content openapi3.Content
		switch {
		case r.ref != nil && r.ref.Value != nil:
			content = r.ref.Value.Content
		case r.ref != nil && r.ref.Ref != "":
			// $refs that lead nowhere (a cycle, or "#"): kin-openapi
			// leaves them unresolved.
			if failed == nil {
				failed = &Skipped{src, "its response could not be resolved (" + clip(r.ref.Ref) + ")"}
			}
			continue
		}
		ct, key, mt := jsonContent(content)
		if mt == nil {
			if empty == nil {
				empty = im.emptyAnswer(r.status, content)
			}
			continue
		}
		at := []string{"paths", op.path, strings.ToLower(op.method), "responses", r.code, "content", key}
		a, reason := im.mediaAnswer(at, ct, mt, collectible)
		switch {
		case reason != "":
			if failed == nil {
				failed = &Skipped{src, reason}
			}
		case a == nil:
			if empty == nil {
				empty = &answer{status: r.status, contentType: emptyContentType, data: []byte{}}
			}
		default:
			a.status = r.status
			return a, nil
		}
	}
	switch {
	case failed != nil:
		// The description says the operation answers JSON: an empty body
		// would not be what it says.
		return nil, failed
	case empty != nil:
		return empty, nil
	}
	return nil, &Skipped{op.source, "no 2xx response"}
}

// mediaAnswer makes an answer of a JSON media type, written at the JSON
// pointer at: its first example, else what Generate makes of its schema.
// Nil and no reason: it has neither.
func (im *openAPIImport) mediaAnswer(at []string, ct string, mt *openapi3.MediaType, collectible bool) (*answer, string) {
	var schema *openapi3.Schema
	if mt.Schema != nil {
		schema = mt.Schema.Value
	}
	ex := im.example(at, mt)
	switch {
	case ex.found:
		data, reason := im.exampleBytes(ex.at, ex.value)
		if reason != "" {
			return nil, reason
		}
		a := &answer{contentType: ct, data: data}
		if collectible {
			a.coll = collectionOfExample(ex.value, schema)
		}
		return a, ""
	case ex.final:
		return nil, ex.reason
	case mt.Schema == nil:
		return nil, ""
	case schema == nil:
		return nil, "its schema could not be resolved"
	case im.opt.Generate == nil:
		return nil, ex.reason
	}
	var coll *collection
	if collectible {
		coll = collectionOfSchema(schema)
	}
	doc, err := schemaDocument(im.doc, mt.Schema, coll)
	if err != nil {
		return nil, "no example, and its schema could not be written out"
	}
	data, err := im.opt.Generate(doc)
	if err != nil {
		return nil, "no example, and data could not be generated from its schema: " + clip(decoy.ErrorMessage(err))
	}
	data, reason := checkSize(data, im.opt.Limits)
	if reason != "" {
		return nil, reason
	}
	return &answer{contentType: ct, data: data, coll: coll}, ""
}

// emptyAnswer is the answer of a 2xx response without JSON content: an
// empty body in its first media type (by name), or the example of a
// text/* one when that is a string.
func (im *openAPIImport) emptyAnswer(status int, content openapi3.Content) *answer {
	a := &answer{status: status, contentType: emptyContentType, data: []byte{}}
	var keys []string
	for k, mt := range content {
		if _, _, err := mime.ParseMediaType(k); mt != nil && err == nil {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return a
	}
	sort.Strings(keys)
	a.contentType = keys[0]
	mt := content[keys[0]]
	if !strings.HasPrefix(base(keys[0]), "text/") {
		return a
	}
	ex := im.example(nil, mt)
	if s, ok := ex.value.(string); ok && ex.found {
		if data, reason := checkSize([]byte(s), im.opt.Limits); reason == "" {
			a.data = data
		}
	}
	return a
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

// exampleOf is a media type's first example, or why it has none.
type exampleOf struct {
	value any
	at    place // where it is written
	found bool
	// reason is why there is none; final: no data is made of the schema
	// either (the example is there, but cannot be read).
	reason string
	final  bool
}

// example finds the first example of a media type written at the JSON
// pointer at: its example, else the first of its examples.
func (im *openAPIImport) example(at []string, mt *openapi3.MediaType) exampleOf {
	p := place{ptr: slices.Clip(at)}
	switch {
	case mt.Example != nil:
		p.ptr = append(p.ptr, "example")
		if mt.Origin != nil {
			p.at = mt.Origin.Fields.Get("example")
		}
		return exampleOf{value: mt.Example, at: p, found: true}
	case len(mt.Examples) > 0:
		name, ex := firstExample(mt.Examples, im.order)
		p.ptr = append(p.ptr, "examples", name, "value")
		if ex == nil || ex.Value == nil {
			return exampleOf{reason: "its first example could not be resolved", final: true}
		}
		if ex.Value.Value == nil {
			if ex.Value.ExternalValue != "" {
				return exampleOf{reason: "its first example is external (externalValue): not read", final: true}
			}
			// An example without a value (a summary only) is no
			// example: the data comes from the schema, as without one.
			return exampleOf{reason: "its first example has no value"}
		}
		if ex.Value.Origin != nil {
			p.at = ex.Value.Origin.Fields.Get("value")
		}
		return exampleOf{value: ex.Value.Value, at: p, found: true}
	}
	return exampleOf{reason: ReasonNoExample}
}

// exampleBytes returns an example as data: as written (written.example),
// else encoded from the value kin-openapi read.
func (im *openAPIImport) exampleBytes(p place, value any) ([]byte, string) {
	if kept := im.w.example(p, value, im.opt.MaxDataBytes); kept != nil {
		return checkSize(kept, im.opt.Limits)
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(value); err != nil {
		return nil, "its example is not JSON"
	}
	return checkSize(bytes.TrimSuffix(b.Bytes(), []byte("\n")), im.opt.Limits)
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
// "#/components/..." reference resolves within the document. For a
// collection (coll not nil), the schema is an allOf of itself and of what
// makes a list look like one: a wrapped collection's items required, so
// that they are always generated, and at least coll.minRecords records.
func schemaDocument(doc *openapi3.T, schema *openapi3.SchemaRef, coll *collection) ([]byte, error) {
	raw, err := json.Marshal(schema)
	if err != nil {
		return nil, err
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		return raw, nil // a boolean schema
	}
	if coll != nil && (coll.items != "" || coll.minRecords > 0) {
		var more any = map[string]uint64{"minItems": coll.minRecords}
		if coll.minRecords == 0 {
			more = map[string]any{}
		}
		if coll.items != "" {
			more = map[string]any{"required": []string{coll.items}, "properties": map[string]any{coll.items: more}}
		}
		b, err := json.Marshal(more)
		if err != nil {
			return nil, err
		}
		obj = map[string]json.RawMessage{"allOf": json.RawMessage("[" + string(raw) + "," + string(b) + "]")}
	}
	if doc.Components != nil {
		if obj["components"], err = json.Marshal(doc.Components); err != nil {
			return nil, err
		}
	}
	return json.Marshal(obj)
}

// clip shortens a message quoted in an answer.
// syntaxError keeps, of the loader's error for a file that parses neither
// as JSON nor as YAML ("failed to unmarshal data: json error: …, yaml
// error: …"), the part about the language the file is written in: a YAML
// file's error began with what a JSON parser thought of it.
func syntaxError(msg string, isJSON bool) string {
	rest, ok := strings.CutPrefix(msg, "failed to unmarshal data: json error: ")
	if !ok {
		return msg
	}
	jsonErr, yamlErr, ok := strings.Cut(rest, ", yaml error: ")
	if !ok {
		return msg
	}
	if isJSON {
		return "not valid JSON: " + jsonErr
	}
	yamlErr = strings.TrimPrefix(yamlErr, "error converting YAML to JSON: ")
	return "not valid YAML: " + strings.TrimPrefix(yamlErr, "yaml: ")
}

func clip(s string) string {
	if len(s) <= maxErrorText {
		return s
	}
	return cut(s, maxErrorText) + "…"
}
