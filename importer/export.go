package importer

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"mime"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/decoy-mock/decoy"
	"github.com/decoy-mock/decoy/upstream"
	"github.com/google/uuid"
)

// The files of a Decoy export: the manifest, and each mock's data as
// data/<id>.json, whatever its content type (the manifest records it).
const (
	ManifestName = "decoy.json"
	DataDir      = "data"
	// ExportFormat and ExportVersion head every manifest; a reader refuses
	// a version it does not know.
	ExportFormat  = "decoy-export"
	ExportVersion = 1
)

// maxManifestBytes bounds the manifest, whatever the data limit: a mock's
// entry is a few hundred bytes.
const maxManifestBytes = 16 << 20

// Manifest is the decoy.json of an export: the project, its mocks'
// settings and its routes. It holds no tokens, and nothing that changes
// from one export of the same mocks to the next (no date, no route ids),
// so that an exported folder kept in Git changes only when the project
// does.
//
// Slug and Routes came with routes (§11 of the contract), in the same
// version of the format: an export without them (written before) reads as
// a project without routes, and a Decoy that predates them reads the mocks
// of a newer export and leaves its routes out.
type Manifest struct {
	Format  string `json:"format"`
	Version int    `json:"version"`
	Project string `json:"project"`
	// Slug is the project's slug (§11.1); empty in older exports.
	Slug string `json:"slug,omitempty"`
	// Upstream and Mode are the project's upstream and mode (§14);
	// absent when it has none and is in mode mock, and in older exports.
	Upstream string          `json:"upstream,omitempty"`
	Mode     string          `json:"mode,omitempty"`
	Mocks    []ManifestMock  `json:"mocks"`
	Routes   []ManifestRoute `json:"routes"`
}

// ManifestRoute is one route of a manifest: a decoy.Route without its id
// and project, its mock named by the mock's id in the export.
type ManifestRoute struct {
	Method string            `json:"method"`
	Path   string            `json:"path"`
	MockID string            `json:"mock_id"`
	Action string            `json:"action"`
	Bind   map[string]string `json:"bind"`
	Items  *string           `json:"items"`
	// RequestSchema is the JSON Schema bodies written through the route
	// validate against (§12.3); absent when it has none.
	RequestSchema json.RawMessage `json:"request_schema,omitempty"`
	// Rules are the route's rules (§13.1), [] for none; absent in exports
	// written before rules, whose import leaves a route's rules as they
	// are.
	Rules []decoy.Rule `json:"rules"`
}

// ManifestRouteOf is the manifest entry of a route an import read, whose
// mock has the id mockID (to write it out again).
func ManifestRouteOf(r Route, mockID string) ManifestRoute {
	return ManifestRoute{
		Method: r.Method, Path: r.Path, MockID: mockID, Action: r.Action, Bind: r.Bind, Items: r.Items,
		RequestSchema: r.RequestSchema, Rules: r.Rules,
	}
}

// ManifestMock is one mock of a manifest.
type ManifestMock struct {
	ID           string `json:"id"`
	Name         string `json:"name"`
	ContentType  string `json:"content_type"`
	Private      bool   `json:"private"`
	Status       int    `json:"status"`
	DelayMS      int    `json:"delay_ms"`
	RateLimit    *int64 `json:"rate_limit"`
	MonthlyQuota *int64 `json:"monthly_quota"`
	// Template is the mock's template (§7 of the contract), null when it
	// has none.
	Template *ManifestTemplate `json:"template"`
}

// ManifestTemplate is a mock's template in a manifest: its mode (once or
// always), its content type (application/json, or application/schema+json
// for a JSON Schema) and its body, the JSON as stored.
type ManifestTemplate struct {
	Mode        string          `json:"mode"`
	ContentType string          `json:"content_type"`
	Body        json.RawMessage `json:"body"`
}

// ManifestOf is the manifest entry of a mock an import read (to write it
// out again).
func ManifestOf(m Mock) ManifestMock {
	return ManifestMock{
		ID: m.ID, Name: m.Name, ContentType: m.ContentType, Private: m.Private, Status: m.Status,
		DelayMS: m.DelayMS, RateLimit: m.RateLimit, MonthlyQuota: m.MonthlyQuota, Template: TemplateOf(m.Template),
	}
}

// TemplateOf is a template as a manifest holds it; nil for none.
func TemplateOf(t *decoy.Template) *ManifestTemplate {
	if t == nil {
		return nil
	}
	return &ManifestTemplate{Mode: t.Mode, ContentType: t.ContentType, Body: t.Body}
}

// DataPath is where the data of mock id is in an export.
func DataPath(id string) string { return DataDir + "/" + id + ".json" }

// ExportWriter writes an export as a .tar.gz, one mock at a time: each
// mock's data is copied from its reader to the archive, never held whole.
// The manifest, written last by Close, lists the mocks added, and the
// routes added whose mock was added.
type ExportWriter struct {
	gz       *gzip.Writer
	tw       *tar.Writer
	manifest Manifest
	now      time.Time
}

// NewExportWriter starts an export of project to w.
func NewExportWriter(w io.Writer, project string, now time.Time) *ExportWriter {
	gz := gzip.NewWriter(w)
	return &ExportWriter{
		gz: gz, tw: tar.NewWriter(gz), now: now.UTC(),
		manifest: Manifest{Format: ExportFormat, Version: ExportVersion, Project: project, Mocks: []ManifestMock{}, Routes: []ManifestRoute{}},
	}
}

// SetSlug records the project's slug.
func (e *ExportWriter) SetSlug(slug string) { e.manifest.Slug = slug }

// SetUpstream records the project's upstream and mode (§14); mode mock
// with no upstream is left out, as the default.
func (e *ExportWriter) SetUpstream(up decoy.ProjectUpstream) {
	if up.Upstream == "" && (up.Mode == "" || up.Mode == decoy.ModeMock) {
		return
	}
	e.manifest.Upstream, e.manifest.Mode = up.Upstream, up.Mode
}

// AddRoute records a route of the project. Routes are written in the
// order they are added (creation order, as ListRoutes gives them); one
// whose mock is not added by Close (a mock deleted since the routes were
// listed, which took its routes with it) is left out.
func (e *ExportWriter) AddRoute(r ManifestRoute) {
	if r.Bind == nil {
		r.Bind = map[string]string{}
	}
	e.manifest.Routes = append(e.manifest.Routes, r)
}

// Add writes the data of mock m, size bytes read from data.
func (e *ExportWriter) Add(m ManifestMock, size int64, data io.Reader) error {
	if err := e.tw.WriteHeader(e.header(DataPath(m.ID), size)); err != nil {
		return err
	}
	if _, err := io.CopyN(e.tw, data, size); err != nil {
		return fmt.Errorf("export data of mock %s: %w", m.ID, err)
	}
	e.manifest.Mocks = append(e.manifest.Mocks, m)
	return nil
}

func (e *ExportWriter) header(name string, size int64) *tar.Header {
	return &tar.Header{Typeflag: tar.TypeReg, Name: name, Size: size, Mode: 0o644, ModTime: e.now, Format: tar.FormatPAX}
}

// Close writes the manifest and ends the archive.
func (e *ExportWriter) Close() error {
	added := make(map[string]bool, len(e.manifest.Mocks))
	for _, m := range e.manifest.Mocks {
		added[m.ID] = true
	}
	e.manifest.Routes = slices.DeleteFunc(e.manifest.Routes, func(r ManifestRoute) bool { return !added[r.MockID] })
	b, err := json.MarshalIndent(e.manifest, "", "  ")
	if err != nil {
		return err
	}
	b = append(b, '\n')
	if err := e.tw.WriteHeader(e.header(ManifestName, int64(len(b)))); err != nil {
		return err
	}
	if _, err := e.tw.Write(b); err != nil {
		return err
	}
	if err := e.tw.Close(); err != nil {
		return err
	}
	return e.gz.Close()
}

// tarEntryOverhead is the most a tar stream adds to one file of an export:
// its header, an extended (PAX) header with its own header, and the
// padding of each to a 512-byte block.
const tarEntryOverhead = 5 * 512

// WalkExport reads a .tar.gz export from r and calls fn with each of its
// files (the manifest and the data files), checked before fn sees them:
// regular files only (no links or devices), with names that stay inside
// the export (no absolute paths, no ".."), each at most limit bytes
// (maxManifestBytes for the manifest), at most 2 × MaxMocks + 2 entries,
// and at most MaxUnpackedBytes of data files in all (the tar stream's own
// headers and padding aside), so that a small gzip stream cannot unpack to
// fill memory or disk.
func WalkExport(r io.Reader, l Limits, fn func(name string, size int64, body io.Reader) error) error {
	l = l.withDefaults()
	gz, err := gzip.NewReader(r)
	if err != nil {
		return decoy.Errorf(decoy.EINVALID, "Not a Decoy export: not a gzip stream")
	}
	defer gz.Close()
	maxEntries := 2*l.MaxMocks + 2
	// The bound is on the files' bytes; the tar stream adds its own to
	// each entry (a header, perhaps an extended one, padding to 512) and
	// ends with two blocks, which an export of many small mocks must not
	// be refused for.
	unpacked := &boundedReader{r: gz, left: l.MaxUnpackedBytes + maxManifestBytes + int64(maxEntries)*tarEntryOverhead + tarRecordBytes}
	tr := tar.NewReader(unpacked)
	tooLarge := decoy.Errorf(decoy.ETOOLARGE, "The export unpacks to more than %d bytes", l.MaxUnpackedBytes)
	var files int64   // the bytes of its data files so far
	var entries int64 // where the last entry's data and padding end
	for n := 0; ; n++ {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			if err := endOfExport(unpacked, entries); err != nil {
				if unpacked.over {
					return tooLarge
				}
				return err
			}
			return nil
		}
		if err != nil {
			if unpacked.over {
				return tooLarge
			}
			return decoy.Errorf(decoy.EINVALID, "Not a valid Decoy export: %s", clip(err.Error()))
		}
		if n >= maxEntries {
			return decoy.Errorf(decoy.ETOOLARGE, "The export has more than %d entries", maxEntries)
		}
		// Next read the entry's header blocks and nothing more.
		entries = unpacked.read + (max(h.Size, 0)+511)/512*512
		name, err := entryName(h.Name)
		if err != nil {
			return err
		}
		switch h.Typeflag {
		case tar.TypeDir:
			continue
		case tar.TypeReg:
		default:
			return decoy.Errorf(decoy.EINVALID, "The export entry %q is not a regular file (links are not accepted)", clip(h.Name))
		}
		limit := l.MaxDataBytes
		if name == ManifestName {
			limit = maxManifestBytes
		}
		if h.Size > limit {
			return decoy.Errorf(decoy.ETOOLARGE, "The export entry %s is larger than %d bytes", name, limit)
		}
		if name != ManifestName { // bounded on its own, by maxManifestBytes
			if files += h.Size; files > l.MaxUnpackedBytes {
				return tooLarge
			}
		}
		if err := fn(name, h.Size, tr); err != nil {
			if unpacked.over {
				return tooLarge
			}
			return err
		}
	}
}

// entryName checks the name of an export's entry and returns it cleaned:
// "decoy.json", "data/<id>.json" or a folder ("data", "."), relative,
// without "..", never outside the export.
func entryName(raw string) (string, error) {
	bad := decoy.Errorf(decoy.EINVALID, "The export entry %q has a name outside the export (absolute, or with ..)", clip(raw))
	if raw == "" || strings.HasPrefix(raw, "/") || strings.Contains(raw, "\\") || strings.ContainsRune(raw, 0) {
		return "", bad
	}
	for _, seg := range strings.Split(raw, "/") {
		if seg == ".." {
			return "", bad
		}
	}
	name := path.Clean(raw)
	if !fs.ValidPath(name) {
		return "", bad
	}
	return name, nil
}

// tarRecordBytes is the most a tar stream may hold after its last entry:
// its two zero blocks, padded with zeros to a record of 20 blocks (GNU
// tar's).
const tarRecordBytes = 20 * 512

// endOfExport checks what follows the last entry of an export's tar
// stream, whose data and padding end at entries: its two zero blocks
// (which the tar reader read, and found zero, to report the end), then
// nothing but zeros to the end of a gzip stream whose checksum holds. An
// export cut short, or with data after its end, is not taken for a whole
// one.
func endOfExport(b *boundedReader, entries int64) error {
	if b.read-entries < 2*512 {
		return decoy.Errorf(decoy.EINVALID, "Not a valid Decoy export: its tar stream has no end (was it cut short?)")
	}
	buf := make([]byte, 4096)
	for {
		n, err := b.Read(buf)
		for _, c := range buf[:n] {
			if c != 0 {
				return decoy.Errorf(decoy.EINVALID, "Not a valid Decoy export: it has data after the end of its tar stream")
			}
		}
		switch {
		case errors.Is(err, io.EOF):
			return nil
		case err != nil:
			return decoy.Errorf(decoy.EINVALID, "Not a valid Decoy export: %s", clip(err.Error()))
		}
	}
}

// boundedReader reads at most left bytes from r and reports when r had
// more, and how much it read.
type boundedReader struct {
	r    io.Reader
	left int64
	over bool
	read int64
}

func (b *boundedReader) Read(p []byte) (int, error) {
	if b.left <= 0 {
		// At the bound: the stream may end here, or have more.
		var one [1]byte
		n, err := b.r.Read(one[:])
		if n > 0 {
			b.over = true
			return 0, errors.New("export too large")
		}
		return 0, err
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.r.Read(p)
	b.left -= int64(n)
	b.read += int64(n)
	return n, err
}

// ReadExport reads a .tar.gz export: its mocks with their ids, settings
// and data.
func ReadExport(r io.Reader, l Limits) (*Result, error) {
	l = l.withDefaults()
	var manifest []byte
	files := map[string][]byte{}
	err := WalkExport(r, l, func(name string, size int64, body io.Reader) error {
		b := make([]byte, size)
		if _, err := io.ReadFull(body, b); err != nil {
			return decoy.Errorf(decoy.EINVALID, "Not a valid Decoy export: entry %s is cut short", name)
		}
		switch {
		case name == ManifestName:
			manifest = b
		case path.Dir(name) == DataDir && strings.HasSuffix(name, ".json"):
			if _, dup := files[name]; dup {
				return decoy.Errorf(decoy.EINVALID, "The export holds %s twice", name)
			}
			files[name] = b
		default:
			return decoy.Errorf(decoy.EINVALID, "The export holds an unexpected file: %s", clip(name))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if manifest == nil {
		return nil, decoy.Errorf(decoy.EINVALID, "Not a Decoy export: no %s", ManifestName)
	}
	return fromManifest(manifest, l, func(name string, m *Mock) error {
		b, ok := files[name]
		if !ok {
			return decoy.Errorf(decoy.EINVALID, "The export has no %s, which its manifest lists", name)
		}
		delete(files, name)
		m.Data = b
		return nil
	}, func() error {
		for name := range files {
			return decoy.Errorf(decoy.EINVALID, "The export holds %s, which its manifest does not list", name)
		}
		return nil
	})
}

// ReadExportDir reads an export unpacked into a folder (decoy export
// --out DIR). Files are opened within the folder only: a link that leads
// out of it is refused.
func ReadExportDir(dir string, l Limits) (*Result, error) {
	l = l.withDefaults()
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	read := func(name string, limit int64) ([]byte, error) {
		f, err := root.Open(name)
		if err != nil {
			return nil, decoy.Errorf(decoy.EINVALID, "Cannot read %s of the export: %v", name, err)
		}
		defer f.Close()
		b, err := io.ReadAll(io.LimitReader(f, limit+1))
		if err != nil {
			return nil, decoy.Errorf(decoy.EINVALID, "Cannot read %s of the export: %v", name, err)
		}
		if int64(len(b)) > limit {
			return nil, decoy.Errorf(decoy.ETOOLARGE, "%s of the export is larger than %d bytes", name, limit)
		}
		return b, nil
	}
	manifest, err := read(ManifestName, maxManifestBytes)
	if err != nil {
		return nil, err
	}
	var total int64
	return fromManifest(manifest, l, func(name string, m *Mock) error {
		b, err := read(name, l.MaxDataBytes)
		total += int64(len(b))
		if err == nil && total > l.MaxUnpackedBytes {
			return decoy.Errorf(decoy.ETOOLARGE, "The export holds more than %d bytes", l.MaxUnpackedBytes)
		}
		m.Data = b
		return err
	}, func() error { return nil })
}

// HasManifest reports whether dir holds an unpacked export.
func HasManifest(dir string) bool {
	fi, err := os.Stat(filepath.Join(dir, ManifestName))
	return err == nil && fi.Mode().IsRegular()
}

// fromManifest checks a manifest and makes its mocks, each given its data
// (or where it is) by data, with the name of its file in the export; rest
// is called last, to refuse files the manifest does not list.
func fromManifest(raw []byte, l Limits, data func(name string, m *Mock) error, rest func() error) (*Result, error) {
	if !utf8.Valid(raw) {
		// Decoded, each bad byte would become U+FFFD: a name, a rule's
		// body, that the admin API refuses to take.
		return nil, decoy.Errorf(decoy.EINVALID, "Invalid %s: not UTF-8", ManifestName)
	}
	var m Manifest
	dec := json.NewDecoder(bytes.NewReader(raw))
	if err := dec.Decode(&m); err != nil {
		return nil, decoy.Errorf(decoy.EINVALID, "Invalid %s: %s", ManifestName, clip(err.Error()))
	}
	if m.Format != ExportFormat {
		return nil, decoy.Errorf(decoy.EINVALID, "Invalid %s: format must be %q", ManifestName, ExportFormat)
	}
	if m.Version != ExportVersion {
		return nil, decoy.Errorf(decoy.EINVALID, "Invalid %s: version %d is not read by this Decoy (it reads %d)", ManifestName, m.Version, ExportVersion)
	}
	if len(m.Mocks) > l.MaxMocks {
		return nil, decoy.Errorf(decoy.ETOOLARGE, "The export holds more than %d mocks", l.MaxMocks)
	}
	if len(m.Routes) > l.MaxRoutes {
		return nil, decoy.Errorf(decoy.ETOOLARGE, "The export holds more than %d routes", l.MaxRoutes)
	}
	if m.Slug != "" && !decoy.ValidSlug(m.Slug) {
		return nil, decoy.Errorf(decoy.EINVALID, "Invalid %s: slug must be 1 to 63 characters of a-z, 0-9 and -, not starting or ending with -", ManifestName)
	}
	res := &Result{Slug: m.Slug}
	if m.Upstream != "" || m.Mode != "" {
		up := decoy.ProjectUpstream{Upstream: m.Upstream, Mode: m.Mode}
		if up.Mode == "" {
			up.Mode = decoy.ModeMock
		}
		if up.Upstream != "" {
			if _, err := upstream.ParseBase(up.Upstream); err != nil {
				return nil, decoy.Errorf(decoy.EINVALID, "Invalid %s: %s", ManifestName, decoy.ErrorMessage(err))
			}
		}
		if err := decoy.CheckProjectUpstream(up); err != nil {
			return nil, decoy.Errorf(decoy.EINVALID, "Invalid %s: %s", ManifestName, decoy.ErrorMessage(err))
		}
		res.Upstream = &up
	}
	seen := map[string]bool{}
	for i, mm := range m.Mocks {
		u, err := uuid.Parse(mm.ID)
		if err != nil || mm.ID != u.String() {
			return nil, decoy.Errorf(decoy.EINVALID, "Invalid %s: mocks[%d].id must be a UUID in lower case", ManifestName, i)
		}
		id := u.String()
		if seen[id] {
			return nil, decoy.Errorf(decoy.EINVALID, "Invalid %s: the mock %s appears twice", ManifestName, id)
		}
		seen[id] = true
		if err := checkSettings(mm); err != nil {
			return nil, decoy.Errorf(decoy.EINVALID, "Invalid %s: mock %s: %s", ManifestName, id, err)
		}
		var tmpl *decoy.Template
		if t := mm.Template; t != nil {
			tmpl = &decoy.Template{Mode: t.Mode, ContentType: t.ContentType, Body: t.Body}
		}
		m := Mock{
			ID: id, Name: mm.Name, ContentType: mm.ContentType, Private: mm.Private, Status: mm.Status,
			DelayMS: mm.DelayMS, RateLimit: mm.RateLimit, MonthlyQuota: mm.MonthlyQuota, Template: tmpl,
		}
		if err := data(DataPath(mm.ID), &m); err != nil {
			return nil, err
		}
		res.Mocks = append(res.Mocks, m)
	}
	if err := res.manifestRoutes(m.Routes); err != nil {
		return nil, err
	}
	if err := rest(); err != nil {
		return nil, err
	}
	return res, nil
}

// manifestRoutes checks a manifest's routes as the admin API checks a new
// route (§11.2 of the contract) and adds them to the result, each naming
// its mock by index. A route without an action gets the default one; a
// parameter its bind does not name binds to the field of its own name.
func (r *Result) manifestRoutes(routes []ManifestRoute) error {
	index := make(map[string]int, len(r.Mocks))
	for i, m := range r.Mocks {
		index[m.ID] = i
	}
	shapes := map[string]string{}
	for i, mr := range routes {
		invalid := func(format string, args ...any) error {
			return decoy.Errorf(decoy.EINVALID, "Invalid %s: routes[%d]: %s", ManifestName, i, fmt.Sprintf(format, args...))
		}
		if !slices.Contains(decoy.RouteMethods, mr.Method) {
			return invalid("method must be GET, POST, PUT, PATCH or DELETE")
		}
		segs, reason := splitPath(mr.Path)
		if reason != "" {
			return invalid("path: %s", reason)
		}
		mock, ok := index[mr.MockID]
		if !ok {
			return invalid("mock_id is not a mock of the export")
		}
		action := mr.Action
		if action == "" {
			action = defaultAction(mr.Method, segs)
		}
		if reason := actionProblem(action, segs); reason != "" {
			return invalid("%s", reason)
		}
		key := mr.Method + " " + pathShape(segs)
		if first, taken := shapes[key]; taken {
			return invalid("Route exists: %s %s", mr.Method, clip(first))
		}
		shapes[key] = mr.Path
		names := params(segs)
		bind := make(map[string]string, len(names))
		for _, n := range names {
			bind[n] = n
		}
		for p, field := range mr.Bind {
			if !slices.Contains(names, p) {
				return invalid("bind names %q, which is not a parameter of the path", clip(p))
			}
			if !validFieldPath(field) {
				return invalid("bind.%s must be a field path (its segments split on '.', none empty)", p)
			}
			bind[p] = field
		}
		if mr.Items != nil && !validFieldPath(*mr.Items) {
			return invalid("items must be null or a dot path (none of its segments empty)")
		}
		var schema []byte
		if s := bytes.TrimSpace(mr.RequestSchema); len(s) > 0 && string(s) != "null" {
			if s[0] != '{' && string(s) != "true" && string(s) != "false" {
				return invalid("request_schema must be a JSON Schema (an object or a boolean)")
			}
			var b bytes.Buffer
			if err := json.Compact(&b, s); err != nil { // the manifest was decoded: it is JSON
				return invalid("request_schema: %s", clip(err.Error()))
			}
			schema = b.Bytes()
		}
		if len(mr.Rules) > decoy.MaxRules {
			return invalid("a route has at most %d rules", decoy.MaxRules)
		}
		r.Routes = append(r.Routes, Route{
			Method: mr.Method, Path: mr.Path, Mock: mock, Action: action, Bind: bind, Items: mr.Items, RequestSchema: schema,
			Rules: mr.Rules,
		})
	}
	return nil
}

// checkSettings checks a manifest's mock as the admin API checks a new
// mock's settings.
func checkSettings(m ManifestMock) error {
	switch {
	case name(m.Name) != m.Name:
		return fmt.Errorf("name must be valid UTF-8 of at most %d bytes", decoy.MaxNameLength)
	case m.Status < 200 || m.Status > 599:
		return errors.New("status must be from 200 to 599")
	case m.DelayMS < 0 || m.DelayMS > decoy.MaxDelayMS:
		return fmt.Errorf("delay_ms must be from 0 to %d", decoy.MaxDelayMS)
	case m.RateLimit != nil && *m.RateLimit < 0, m.MonthlyQuota != nil && *m.MonthlyQuota < 0:
		return errors.New("rate_limit and monthly_quota must be null or 0 or more")
	case m.RateLimit != nil && *m.RateLimit > decoy.MaxRateLimit:
		return fmt.Errorf("rate_limit must be at most %d (0: unlimited)", decoy.MaxRateLimit)
	}
	if _, _, err := mime.ParseMediaType(m.ContentType); err != nil {
		return errors.New("content_type must be a media type")
	}
	if t := m.Template; t != nil {
		if t.Mode != decoy.TemplateOnce && t.Mode != decoy.TemplateAlways {
			return errors.New("template.mode must be once or always")
		}
		if _, _, err := mime.ParseMediaType(t.ContentType); err != nil {
			return errors.New("template.content_type must be a media type")
		}
		if len(t.Body) == 0 || string(t.Body) == "null" {
			return errors.New("template.body must be the template, as JSON")
		}
	}
	return nil
}
