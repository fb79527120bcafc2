// Package importer turns files people already have into mocks and the
// routes that serve them at their API's own paths (§11.5 of the contract):
// OpenAPI descriptions (3.0 and 3.1, JSON or YAML), json-server db.json
// files, and Decoy's own exports, which it also writes. It reads and writes
// bytes only: the HTTP server and the CLI decide where they come from and
// where the mocks and routes go.
//
// Every input is untrusted: each reader is bounded by Limits and answers a
// malformed or hostile file with a *decoy.Error (EINVALID, or ETOOLARGE
// past a bound), never a panic.
package importer

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"os"
	"unicode/utf8"

	"github.com/decoy-mock/decoy"
)

// Formats an import reads.
const (
	FormatOpenAPI    = "openapi"
	FormatJSONServer = "json-server"
	FormatDecoy      = "decoy"
)

// Mock is one mock an import creates: its settings and its data.
type Mock struct {
	// ID is the mock's id in a Decoy export; empty for the other formats.
	ID          string
	Name        string
	ContentType string
	Private     bool
	Status      int
	DelayMS     int
	// RateLimit and MonthlyQuota override the server defaults when set.
	RateLimit    *int64
	MonthlyQuota *int64
	// Template is the mock's template in a Decoy export, when it has one.
	Template *decoy.Template
	// Data is the mock's document, byte for byte; nil when Spool holds
	// it.
	Data []byte
	// Spool, when not empty, is the file that holds the document (an
	// export read by SpoolExport), Size bytes, removed by Result.Close.
	Spool string
	Size  int64
}

// Skipped is a part of the file no mock was made from, and why.
type Skipped struct {
	Source string `json:"source"`
	Reason string `json:"reason"`
}

// Route is a route an import mounts on one of the Result's mocks (§11.2).
type Route struct {
	// Method is GET, POST, PUT, PATCH or DELETE (decoy.RouteMethods).
	Method string
	// Path is the template, under Options.BasePath: "/" or segments that
	// are literal or a whole parameter "{name}".
	Path string
	// Mock is the index of the route's mock in Result.Mocks.
	Mock int
	// Action is one of the decoy.Action constants, always set.
	Action string
	// Bind maps every parameter of Path to the record field (§1.3 path)
	// it is an $eq condition on. Never nil.
	Bind map[string]string
	// Items is the dot path of the array, inside the mock's data, that the
	// route works on; nil: the whole data.
	Items *string
	// RequestSchema is the JSON Schema that bodies written through the
	// route must validate against (§12.3): the OpenAPI operation's request
	// body schema, as one document in which every $ref resolves, with
	// readOnly members no longer required. Nil when there is none.
	RequestSchema []byte
	// Rules are the route's rules (§13.1), as an export lists them,
	// unchecked (the admin API checks them as it checks a route's); nil
	// when the file gives none, so that a route it replaces keeps its own.
	Rules []decoy.Rule
}

// Result is what an import makes of a file.
type Result struct {
	Mocks []Mock
	// Routes serve the mocks at their API's paths, in the order of the
	// file (by path for OpenAPI).
	Routes  []Route
	Skipped []Skipped
	// Slug is the project's slug in a Decoy export; empty otherwise, and
	// in an export written before projects had slugs.
	Slug string
	// Upstream is the project's upstream and mode in a Decoy export
	// (§14); nil when it has none.
	Upstream *decoy.ProjectUpstream
}

// Close removes the files that hold the result's documents (see
// SpoolExport), those a store took over aside.
func (r *Result) Close() {
	for _, m := range r.Mocks {
		if m.Spool != "" {
			_ = os.Remove(m.Spool)
		}
	}
}

// Limits bound what one import reads.
type Limits struct {
	// MaxDataBytes is the largest document of one mock (--max-data-bytes).
	MaxDataBytes int64
	// MaxUnpackedBytes bounds the bytes a Decoy export unpacks to, and
	// the values of a db.json together.
	MaxUnpackedBytes int64
	// MaxMocks is the most mocks one import makes.
	MaxMocks int
	// MaxRoutes is the most routes one import makes (--max-routes; by
	// default decoy.DefaultMaxRoutes).
	MaxRoutes int
}

// DefaultMaxMocks is the most mocks one import makes unless told otherwise.
const DefaultMaxMocks = 10000

func (l Limits) withDefaults() Limits {
	if l.MaxDataBytes <= 0 {
		l.MaxDataBytes = 64 << 20
	}
	if l.MaxUnpackedBytes <= 0 {
		l.MaxUnpackedBytes = 4 * l.MaxDataBytes
	}
	if l.MaxMocks <= 0 {
		l.MaxMocks = DefaultMaxMocks
	}
	if l.MaxRoutes <= 0 {
		l.MaxRoutes = decoy.DefaultMaxRoutes
	}
	return l
}

// Options are the settings of Read.
type Options struct {
	Limits
	// Generate, when set, makes the data of an OpenAPI operation that has
	// no example from the response's schema (a JSON Schema, as JSON).
	// Without it such operations are skipped.
	Generate func(schema []byte) ([]byte, error)
	// Spool is the folder each mock's data is written to as it is read or
	// made (see Mock.Spool), rather than held with all the others: by
	// OpenAPI when it is not empty (the import's memory is then the
	// file's and one document's, however many operations it has), and
	// always by the imports that stream, SpoolJSONServer and ReadSpooled
	// (empty: the system's temporary folder). Result.Close removes the
	// files; on an error they are removed already.
	Spool string
	// BasePath is put before the path of every route the import makes
	// (?base_path=/prefix): "" or a path of literal segments, starting
	// with "/" and not ending with one. Any other is EINVALID "Invalid
	// base_path".
	BasePath string
}

// Read makes mocks and routes of data in format, one of the Format
// constants; an empty format is guessed with Detect. The routes of a Decoy
// export are put under opt.BasePath as those of the other formats are.
func Read(format string, data []byte, opt Options) (*Result, error) {
	opt.Limits = opt.Limits.withDefaults()
	if format == "" {
		format = Detect(data)
	}
	switch format {
	case FormatOpenAPI:
		return OpenAPI(data, opt)
	case FormatJSONServer:
		return JSONServer(data, opt)
	case FormatDecoy:
		base, err := basePath(opt.BasePath)
		if err != nil {
			return nil, err
		}
		res, err := ReadExport(bytes.NewReader(data), opt.Limits)
		if err != nil {
			return nil, err
		}
		return res, res.mount(base)
	}
	return nil, decoy.Errorf(decoy.EINVALID, "format must be openapi, json-server or decoy")
}

// DetectBytes is how much of a file the server reads to guess its format
// (see Detect) before it streams it: past it, a JSON object whose members
// so far name no OpenAPI is read to its end (see DetectReader).
const DetectBytes = 1 << 20

// DetectReader guesses the format of a file as Detect does, reading it
// from r one top-level member at a time, to its end if need be: it holds
// one member at most, of at most l.MaxDataBytes; a larger one ends the
// reading, and the file is guessed a db.json, whose reading refuses it.
func DetectReader(r io.Reader, l Limits) string {
	l = l.withDefaults()
	br := bufio.NewReader(r)
	if head, _ := br.Peek(2); bytes.HasPrefix(head, []byte{0x1f, 0x8b}) {
		return FormatDecoy
	}
	in := &window{r: br}
	dec := json.NewDecoder(in)
	next := in.next(dec, l)
	next()
	if err := in.skipBOM(); err != nil {
		return FormatJSONServer
	}
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		if in.over {
			return FormatJSONServer
		}
		return FormatOpenAPI
	}
	for {
		next()
		if !dec.More() {
			return FormatJSONServer
		}
		t, err := dec.Token()
		if err != nil {
			return FormatJSONServer
		}
		if k, _ := t.(string); k == "openapi" || k == "swagger" {
			return FormatOpenAPI
		}
		next()
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return FormatJSONServer
		}
	}
}

// Detect guesses the format of a file from its content: a gzip stream is a
// Decoy export, a JSON object with an "openapi" or "swagger" member an
// OpenAPI description, any other JSON object a json-server db.json, and
// anything else (YAML) an OpenAPI description. Of a file's first bytes
// only, a JSON object whose members so far name neither is a db.json.
//
// It is DetectReader over data held whole, with no member too large to
// read: one way to tell a format, whether the file is held or streamed.
func Detect(data []byte) string {
	return DetectReader(bytes.NewReader(data), Limits{MaxDataBytes: int64(len(data)) + 1})
}

// name makes s a valid mock name: valid UTF-8 of at most
// decoy.MaxNameLength bytes, cut at a character boundary.
func name(s string) string {
	return cut(string(bytes.ToValidUTF8([]byte(s), []byte("\uFFFD"))), decoy.MaxNameLength)
}

// cut returns the longest start of s of at most n bytes that ends at a
// character boundary.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
