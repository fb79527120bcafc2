package admin

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/decoy-mock/decoy"
	"github.com/decoy-mock/decoy/answer"
	"github.com/decoy-mock/decoy/docfile"
	"github.com/decoy-mock/decoy/generate"
	"github.com/decoy-mock/decoy/importer"
	"github.com/decoy-mock/decoy/jsondoc"
	"github.com/decoy-mock/decoy/mockcache"
	"github.com/decoy-mock/decoy/route"
	"github.com/decoy-mock/decoy/rule"
	"github.com/google/uuid"
)

// findProject returns the name of a project: from the TeamStore, or,
// on a server without teams, the default project, its only one.
func (s *API) findProject(ctx context.Context, project string) (string, error) {
	if s.cfg.Teams == nil {
		if project != decoy.DefaultProjectID {
			return "", errProjectNotFound
		}
		return decoy.DefaultName, nil
	}
	p, err := s.cfg.Teams.FindProject(ctx, project)
	if err != nil {
		return "", err
	}
	return p.Name, nil
}

// projectMocks returns the mocks of a project, in creation order; on a
// server without teams, the default project holds every mock.
func (s *API) projectMocks(ctx context.Context, project string) ([]*decoy.Mock, error) {
	if _, err := s.findProject(ctx, project); err != nil {
		return nil, err
	}
	var all []*decoy.Mock
	cursor := ""
	for {
		var page []*decoy.Mock
		var next string
		var err error
		if s.cfg.Teams == nil {
			page, next, err = s.cfg.Store.ListMocks(ctx, cursor, 1000)
		} else {
			page, next, err = s.cfg.Teams.SearchMocks(ctx, decoy.MockFilter{ProjectID: project}, cursor, 1000)
		}
		if err != nil {
			return nil, err
		}
		all = append(all, page...)
		if next == "" {
			return all, nil
		}
		cursor = next
	}
}

// importParams are the query parameters of POST …/import.
var importParams = map[string]bool{"format": true, "new_ids": true, "dry_run": true, "base_path": true}

// importAnswer is the answer of an import: what it created (or would
// create, for a dry run), the mocks it gave new data (an import of the
// same file again updates in place, §11.5), the routes it made or changed,
// and what it skipped.
type importAnswer struct {
	Created []mockView         `json:"created"`
	Updated []mockView         `json:"updated"`
	Routes  []*decoy.Route     `json:"routes"`
	Skipped []importer.Skipped `json:"skipped"`
}

// importLimits bound what one import reads: the file is at most
// --max-data-bytes, as a mock's document; an export, which streams, is
// bounded by streamLimits.
func (s *API) importLimits() importer.Limits {
	return importer.Limits{MaxDataBytes: s.cfg.MaxDataBytes, MaxUnpackedBytes: 4 * s.cfg.MaxDataBytes, MaxRoutes: s.maxRoutes()}
}

// importGeneration is the generation of one import: the data of its
// OpenAPI operations that have no example, made from their schemas, and
// the compiling of its mocks' templates. Each takes a turn of its own
// among the server's generations (Config.Generate), and all of them
// together get the time of one generation (GenerateTimeout): an import is
// one request, however many operations its file holds. What comes after
// that time is refused, saying so; a server too busy, or a client gone,
// ends the import (err).
type importGeneration struct {
	s    *API
	ctx  context.Context
	left time.Duration
	// err ends the import: the server too busy, or the request ended.
	err error
}

func (s *API) newImportGeneration(ctx context.Context) *importGeneration {
	return &importGeneration{s: s, ctx: ctx, left: cmp.Or(s.cfg.GenerateTimeout, generate.DefaultTimeout)}
}

// run runs f in a turn, within the time the import has left.
func (g *importGeneration) run(f func(generate.Limits) error) error {
	if g.err != nil {
		return g.err
	}
	if g.left <= 0 {
		return decoy.Errorf(decoy.EINVALID, "the import's %v of generating data were spent before this one", cmp.Or(g.s.cfg.GenerateTimeout, generate.DefaultTimeout))
	}
	err := g.s.cfg.Generate(g.ctx, g.left, func(lim generate.Limits) error {
		// What is left is what this turn's deadline, g.left from the
		// turn's start, leaves: a run stopped by its deadline leaves
		// none, however soon it noticed.
		defer func() { g.left = time.Until(lim.Deadline) }()
		return f(lim)
	})
	if status, _, _ := answer.Of(err); status == http.StatusServiceUnavailable {
		g.err = err
	}
	return err
}

// fromSchema makes the data of an imported OpenAPI operation that has no
// example from its response's schema, as a JSON Schema template (§7)
// does: output that validates against it.
func (g *importGeneration) fromSchema(schema []byte) (out []byte, err error) {
	err = g.run(func(lim generate.Limits) error {
		t, err := generate.ParseSchema(schema, lim)
		if err != nil {
			return err
		}
		out, err = t.Run(generate.NewSeed(), lim)
		return err
	})
	return out, err
}

// check compiles an imported mock's template, as PUT …/template does.
func (g *importGeneration) check(t *decoy.Template) error {
	return g.run(func(lim generate.Limits) error {
		_, err := generate.Parse(t.ContentType, t.Body, lim)
		return err
	})
}

// checkRules checks the rules an imported route gives, as a route's are
// checked (§13.1): its templates compiled in the import's generation.
func (g *importGeneration) checkRules(ir *importer.Route) error {
	if len(ir.Rules) == 0 {
		return nil
	}
	t, err := route.Parse(ir.Path)
	if err != nil {
		return err
	}
	check := func(lim generate.Limits) error { return rule.Check(ir.Rules, t.Params(), lim) }
	if err := runRuleCheck(ir.Rules, check, g.run); err != nil {
		return decoy.Errorf(decoy.ErrorCode(err), "Route %s %s: %s", ir.Method, ir.Path, decoy.ErrorMessage(err))
	}
	return nil
}

// errNoImports answers an import to a server whose store cannot write an
// import's mocks and routes in one transaction.
var errNoImports = answer.New(http.StatusNotImplemented, "This server's store cannot import mocks")

// importProject serves POST /admin/v1/projects/{id}/import: the file in
// the body becomes mocks of the project and the routes that serve them
// (§8, §11.5), all of them or none. A route that exists at the same method
// and path keeps its id and its mock, which gets the new data as a new
// version: importing a file again duplicates nothing.
func (s *API) importProject(w http.ResponseWriter, r *http.Request, project string) error {
	if s.cfg.Routes == nil {
		return errNoImports
	}
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return decoy.Errorf(decoy.EINVALID, "Invalid query string: %v", err)
	}
	for k := range q {
		if !importParams[k] {
			return decoy.Errorf(decoy.EINVALID, "Unknown parameter: %s", k)
		}
	}
	var newIDs, dryRun bool
	for _, p := range []struct {
		name string
		dst  *bool
	}{{"new_ids", &newIDs}, {"dry_run", &dryRun}} {
		if v := q.Get(p.name); v != "" {
			b, err := strconv.ParseBool(v)
			if err != nil {
				return decoy.Errorf(decoy.EINVALID, "%s must be true or false", p.name)
			}
			*p.dst = b
		}
	}
	format := q.Get("format")
	switch format {
	case "", importer.FormatOpenAPI, importer.FormatJSONServer, importer.FormatDecoy:
	default:
		return decoy.Errorf(decoy.EINVALID, "format must be openapi, json-server or decoy")
	}
	if _, err := s.findProject(r.Context(), project); err != nil {
		return err
	}
	done, err := s.imports.start(r.Context(), callOf(r).workspaceID)
	if err != nil {
		return err
	}
	defer done()
	// A base path is a prefix of paths: "/" and a trailing "/" say nothing.
	basePath := strings.TrimRight(q.Get("base_path"), "/")
	gen := s.newImportGeneration(r.Context())
	read, err := s.readImport(w, r, project, format, basePath, gen)
	if gen.err != nil {
		// Refused as a whole, rather than with operations skipped for
		// the server's load.
		if read != nil {
			read.Close()
		}
		return gen.err
	}
	if err != nil {
		return err
	}
	defer read.Close() // on an error; the answers remove the files first
	res := read.Result
	format = read.format

	keepIDs := format == importer.FormatDecoy && !newIDs
	mocks := make([]*importedMock, 0, len(res.Mocks))
	defer func() {
		for _, im := range mocks {
			if im.entry != nil {
				im.entry.Release()
			}
		}
	}()
	skipped := append([]importer.Skipped{}, res.Skipped...)
	for i := range res.Routes {
		if err := gen.checkRules(&res.Routes[i]); err != nil {
			return err
		}
	}
	for _, in := range res.Mocks {
		im, err := newImportedMock(in, project, keepIDs, gen.check)
		if err != nil {
			return err
		}
		mocks = append(mocks, im)
	}
	out := importAnswer{Created: []mockView{}, Updated: []mockView{}, Routes: []*decoy.Route{}, Skipped: skipped}

	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	if keepIDs {
		ctx, cancel := writeContext(r)
		defer cancel()
		for _, im := range mocks {
			_, err := s.cfg.Store.FindMock(ctx, im.mock.ID)
			if err == nil {
				return decoy.Errorf(decoy.ECONFLICT, "A mock with id %s already exists; nothing was imported (import with new_ids=true, the CLI's --new-ids, to give the mocks new ids)", im.mock.ID)
			}
			if decoy.ErrorCode(err) != decoy.ENOTFOUND {
				return err
			}
		}
	}
	plan, err := s.planImport(r.Context(), project, res, mocks)
	if err != nil {
		return err
	}
	if dryRun {
		for _, im := range plan.created {
			out.Created = append(out.Created, s.view(r, im.mock, ""))
		}
		for _, im := range plan.replaced {
			// As the import would leave it: its own settings, the
			// file's data.
			m, err := s.cfg.Store.FindMock(r.Context(), im.mock.ID)
			if err != nil {
				return err
			}
			m.Size, m.ETag, m.ContentType = im.mock.Size, im.mock.ETag, im.mock.ContentType
			out.Updated = append(out.Updated, s.view(r, m, ""))
		}
		for _, rt := range plan.batch.Routes {
			// As the import would leave it: a route given no rules keeps
			// the rules of the route it replaces, a new one has none.
			shown := *rt
			if shown.Rules == nil {
				shown.Rules = []decoy.Rule{}
				if old := plan.existing[rt.ID]; old != nil {
					shown.Rules = old.Rules
				}
			}
			out.Routes = append(out.Routes, &shown)
		}
		read.Close() // its files gone before the answer says it ended
		answer.JSON(w, http.StatusOK, out)
		return nil
	}
	// One transaction, bounded on its own: a large import is not cut by
	// the bound of one write, and one cut short stores nothing.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), importTimeout)
	defer cancel()
	written, err := s.writeImport(ctx, plan)
	var raced *importRaced
	if decoy.ErrorCode(err) == decoy.ECONFLICT && keepIDs && !errors.As(err, &raced) {
		return decoy.Errorf(decoy.ECONFLICT, "%s; nothing was imported (import with new_ids=true, the CLI's --new-ids, to give the mocks new ids)", decoy.ErrorMessage(err))
	}
	if err != nil {
		return err
	}
	for i, m := range written.Created {
		out.Created = append(out.Created, s.view(r, m, plan.created[i].token))
	}
	for _, m := range written.Replaced {
		out.Updated = append(out.Updated, s.view(r, m, ""))
	}
	out.Routes = append(out.Routes, written.Routes...)
	if res.Slug != "" {
		// An export's project keeps its URLs where it can (§11.2): its
		// slug, or the slug with a suffix when another project has it.
		if err := s.adoptSlug(ctx, project, res.Slug); err != nil {
			s.log.Warn("import: the export's slug was not taken", "project", project, "slug", res.Slug, "err", err)
		}
	}
	if up := res.Upstream; up != nil {
		// An export's project passes requests on as it did (§14).
		p, err := s.cfg.Teams.FindProject(ctx, project)
		if err == nil {
			_, _, err = s.setUpstream(ctx, p, upstreamFields{Upstream: &up.Upstream, Mode: &up.Mode})
		}
		if err != nil {
			s.log.Warn("import: the export's upstream was not set", "project", project, "err", err)
		}
	}
	s.log.Info("import", "project", project, "format", format, "created", len(written.Created), "updated", len(written.Replaced),
		"routes", len(written.Routes), "skipped", len(out.Skipped))
	read.Close()
	answer.JSON(w, http.StatusCreated, out)
	return nil
}

// readImport is an import's file as read: its mocks and routes, and its
// format (as given, or guessed).
type readImport struct {
	*importer.Result
	format string
}

// readImport reads the body of an import into project in format (guessed
// from the content when empty). A Decoy export and a json-server db.json
// stream (see readStreamed); an OpenAPI description is one document, read
// whole, of at most --max-data-bytes, whose mocks' data is written to
// files as it is made.
func (s *API) readImport(w http.ResponseWriter, r *http.Request, project, format, basePath string, gen *importGeneration) (*readImport, error) {
	body := bufio.NewReaderSize(r.Body, importer.DetectBytes)
	var in io.Reader = body
	if format == "" {
		head, err := body.Peek(importer.DetectBytes)
		format = importer.Detect(head)
		if err == nil && format == importer.FormatJSONServer {
			// A JSON object longer than its first bytes, none of whose
			// members so far says it is OpenAPI: kept in a file and read
			// there to its end to tell, then imported from it.
			kept, err := s.keepBody(w, r, project, body)
			if err != nil {
				return nil, err
			}
			defer func() {
				kept.Close()
				os.Remove(kept.Name())
			}()
			if format = importer.DetectReader(kept, s.importLimits()); format != importer.FormatJSONServer {
				format = importer.FormatOpenAPI
			}
			if _, err := kept.Seek(0, io.SeekStart); err != nil {
				return nil, uploadFileError("read", err)
			}
			in = kept
		}
	}
	if format == importer.FormatDecoy || format == importer.FormatJSONServer {
		return s.readStreamed(w, r, project, in, format, basePath)
	}
	max := s.cfg.MaxDataBytes
	file, err := io.ReadAll(http.MaxBytesReader(w, io.NopCloser(in), max))
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &mbe):
		return nil, decoy.Errorf(decoy.ETOOLARGE, "The file is larger than %d bytes (--max-data-bytes)", max)
	case err != nil:
		return nil, decoy.Errorf(decoy.EINVALID, "Could not read the request body")
	}
	// Each mock's data goes to a file as it is made, as an import that
	// streams has it: the import holds the file and one document.
	res, err := importer.Read(format, file, importer.Options{Limits: s.importLimits(), Generate: gen.fromSchema, BasePath: basePath, Spool: cmp.Or(s.cfg.UploadDir, os.TempDir())})
	var se *importer.SpoolError
	if errors.As(err, &se) {
		return nil, uploadFileError("write", se.Err)
	}
	if err != nil {
		return nil, err
	}
	return &readImport{Result: res, format: format}, nil
}

// keepBody writes the body of an import into project to a file of the
// upload folder, of at most what a db.json may take (see readStreamed),
// and returns it open at its start.
func (s *API) keepBody(w http.ResponseWriter, r *http.Request, project string, body io.Reader) (*os.File, error) {
	l, _, err := s.streamLimits(r.Context(), project)
	if err != nil {
		return nil, err
	}
	max := importer.MaxJSONServerBytes(l)
	f, err := os.CreateTemp(s.cfg.UploadDir, "import-*")
	if err != nil {
		return nil, uploadFileError("create", err)
	}
	in := &bodyError{r: http.MaxBytesReader(w, io.NopCloser(body), max)}
	_, err = io.Copy(f, in)
	if err == nil {
		if _, err = f.Seek(0, io.SeekStart); err == nil {
			return f, nil
		}
	}
	var mbe *http.MaxBytesError
	switch {
	case errors.As(in.err, &mbe):
		err = decoy.Errorf(decoy.ETOOLARGE, "The file is larger than %d bytes", max)
	case in.err != nil:
		err = decoy.Errorf(decoy.EINVALID, "Could not read the request body")
	default:
		err = uploadFileError("write", err)
	}
	f.Close()
	os.Remove(f.Name())
	return nil, err
}

// readStreamed reads a Decoy export or a db.json (format) from body as it
// arrives, each document written to a file of the upload folder (see
// importer.SpoolExport and importer.SpoolJSONServer) rather than held:
// the import's memory does not grow with the project. Each document is
// bounded by --max-data-bytes, and all of them together by the max_bytes
// of the project's workspace (with no such limit, by what the most mocks
// an import makes can hold); the file itself by what those take.
func (s *API) readStreamed(w http.ResponseWriter, r *http.Request, project string, body io.Reader, format, basePath string) (*readImport, error) {
	l, byWorkspace, err := s.streamLimits(r.Context(), project)
	if err != nil {
		return nil, err
	}
	opt := importer.Options{Limits: l, BasePath: basePath, Spool: s.cfg.UploadDir}
	max, tooMuch, read := importer.MaxArchiveBytes(l), "The export unpacks to more than", importer.ReadSpooled
	if format == importer.FormatJSONServer {
		max, tooMuch, read = importer.MaxJSONServerBytes(l), "The db.json's values come to more than", importer.SpoolJSONServer
	}
	in := &bodyError{r: http.MaxBytesReader(w, io.NopCloser(body), max)}
	res, err := read(in, opt)
	var mbe *http.MaxBytesError
	var se *importer.SpoolError
	switch {
	case err == nil:
		return &readImport{Result: res, format: format}, nil
	case errors.As(in.err, &mbe):
		return nil, decoy.Errorf(decoy.ETOOLARGE, "The file is larger than %d bytes", max)
	case in.err != nil && !errors.Is(in.err, io.EOF) && decoy.ErrorCode(err) != decoy.ETOOLARGE:
		return nil, decoy.Errorf(decoy.EINVALID, "Could not read the request body")
	case errors.As(err, &se):
		return nil, uploadFileError("write", se.Err)
	case byWorkspace && decoy.ErrorCode(err) == decoy.ETOOLARGE && strings.HasPrefix(decoy.ErrorMessage(err), tooMuch):
		return nil, decoy.Errorf(decoy.ETOOLARGE, "%s (the workspace's max_bytes)", decoy.ErrorMessage(err))
	}
	return nil, err
}

// streamLimits are the bounds of an import that streams into project
// (see readStreamed), and whether the workspace's max_bytes bounds it.
func (s *API) streamLimits(ctx context.Context, project string) (l importer.Limits, byWorkspace bool, err error) {
	l = s.importLimits()
	l.MaxMocks = importer.DefaultMaxMocks
	l.MaxUnpackedBytes = int64(l.MaxMocks) * min(l.MaxDataBytes, maxStreamedBytes/int64(l.MaxMocks))
	if s.cfg.Teams == nil {
		return l, false, nil
	}
	p, err := s.cfg.Teams.FindProject(ctx, project)
	if err != nil {
		return l, false, err
	}
	ws, err := s.cfg.Teams.FindWorkspace(ctx, p.WorkspaceID)
	if err != nil {
		return l, false, err
	}
	if m := ws.Limits.MaxBytes; m != nil {
		l.MaxUnpackedBytes = min(max(*m, 1), maxStreamedBytes)
		return l, true, nil
	}
	return l, false, nil
}

// maxStreamedBytes bounds an import that streams, whatever the limits: a
// pebibyte, far past any disk, and far from overflowing.
const maxStreamedBytes = 1 << 50

// bodyError is a request body that remembers why reading it failed: a
// reader of an archive says only that the archive ended.
type bodyError struct {
	r   io.Reader
	err error
}

func (b *bodyError) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if err != nil && b.err == nil {
		b.err = err
	}
	return n, err
}

// importPlan is what an import writes: the batch for the store, and for
// each mock of the file the id of the existing mock it gives new data
// ("" when it creates one), with the mocks it creates in the batch's order.
type importPlan struct {
	batch decoy.ImportBatch
	// existing are the project's routes before the import, by id.
	existing map[string]*decoy.Route
	replaces []string
	created  []*importedMock
	replaced []*importedMock
}

// planImport decides what an import writes into project: a mock of the
// file whose route exists at the same method and path (shape, §11.2)
// replaces the data of that route's mock; the others are created. Routes
// that exist are updated in place, keeping their ids; the others created.
func (s *API) planImport(ctx context.Context, project string, res *importer.Result, mocks []*importedMock) (*importPlan, error) {
	existing, err := s.cfg.Routes.ListRoutes(ctx, project)
	if err != nil {
		return nil, err
	}
	byShape := make(map[string]*decoy.Route, len(existing))
	byID := make(map[string]*decoy.Route, len(existing))
	for _, rt := range existing {
		byShape[rt.Shape()] = rt
		byID[rt.ID] = rt
	}
	plan := &importPlan{batch: decoy.ImportBatch{ProjectID: project, MaxRoutes: s.maxRoutes()}, replaces: make([]string, len(mocks)), existing: byID}
	taken := map[string]bool{}
	for _, ir := range res.Routes {
		rt := &decoy.Route{Method: ir.Method, Path: ir.Path}
		if old := byShape[rt.Shape()]; old != nil && plan.replaces[ir.Mock] == "" && !taken[old.MockID] {
			plan.replaces[ir.Mock] = old.MockID
			taken[old.MockID] = true
		}
	}
	for i, im := range mocks {
		id := plan.replaces[i]
		if id == "" {
			plan.created = append(plan.created, im)
			plan.batch.Create = append(plan.batch.Create, decoy.NewMock{Mock: im.mock, Data: im.data(), Template: im.template})
			continue
		}
		im.mock.ID = id
		plan.replaced = append(plan.replaced, im)
		plan.batch.Replace = append(plan.batch.Replace, decoy.MockReplacement{ID: id,
			Data: decoy.MockData{ContentType: im.mock.ContentType, Data: im.data(), ETag: im.mock.ETag}, Template: im.template, Size: im.mock.Size})
	}
	if len(mocks) > 0 && mocks[0].spool != "" {
		// An import that streams: the store loads each document as it
		// writes it.
		plan.batch.Load = func(ctx context.Context, i int) (decoy.Data, func(), error) {
			if i < len(plan.created) {
				return plan.created[i].load(ctx, i)
			}
			return plan.replaced[i-len(plan.created)].load(ctx, i)
		}
	}
	for _, ir := range res.Routes {
		rt := &decoy.Route{ProjectID: project, Method: ir.Method, Path: ir.Path, MockID: mocks[ir.Mock].mock.ID, Action: ir.Action,
			Bind: ir.Bind, Items: ir.Items, RequestSchema: ir.RequestSchema, Rules: ir.Rules}
		if rt.Bind == nil {
			rt.Bind = map[string]string{}
		}
		if old := byShape[rt.Shape()]; old != nil {
			rt.ID = old.ID
		}
		plan.batch.Routes = append(plan.batch.Routes, rt)
	}
	return plan, nil
}

// writeImport writes a planned import, and puts its mocks in the cache;
// those of an import that streams, of which nothing is held, are dropped
// from it instead, for their next reads to load them. The caller holds
// writeMu.
func (s *API) writeImport(ctx context.Context, plan *importPlan) (*decoy.ImportWritten, error) {
	// Each mock the import gives new data keeps its live data first, as
	// every data write does (keepLive).
	for j := range plan.batch.Replace {
		r := &plan.batch.Replace[j]
		if r.Data.IfLiveSeq != nil {
			continue // made from the live data it must find (recordItem)
		}
		// The snapshot is taken again while route writes come in; the
		// import's write then fails whole if one comes after it.
		err := s.keptLive(ctx, r.ID, func(seq *int64) error {
			r.Data.IfLiveSeq = seq
			return nil
		})
		if err != nil {
			if decoy.ErrorCode(err) == decoy.ECONFLICT {
				err = errImportRaced(r.ID)
			}
			return nil, err
		}
	}
	all := append(slices.Clip(plan.created), plan.replaced...)
	var written *decoy.ImportWritten
	write := func(ctx context.Context) ([]*decoy.Mock, error) {
		var err error
		if written, err = s.cfg.Routes.WriteImport(ctx, plan.batch); err != nil {
			return nil, err
		}
		return append(slices.Clip(written.Created), written.Replaced...), nil
	}
	var err error
	if plan.batch.Load != nil {
		_, err = write(ctx)
		for _, im := range all {
			s.announce(ctx, im.mock.ID)
			s.cache.Remove(im.mock.ID)
		}
	} else {
		entries := make([]*mockcache.Entry, len(all))
		for i, im := range all {
			entries[i] = im.entry
		}
		_, err = s.storeMocks(ctx, entries, write)
	}
	s.routesChanged(ctx, plan.batch.ProjectID)
	if decoy.ErrorCode(err) == decoy.ECONFLICT {
		if id := s.movedOn(ctx, plan.batch.Replace); id != "" {
			return nil, errImportRaced(id)
		}
	}
	if err == nil {
		var anew []string // rules given anew: counted anew
		for i, rt := range plan.batch.Routes {
			if rt.ID != "" && rt.Rules != nil {
				anew = append(anew, written.Routes[i].ID)
			}
		}
		s.resetRules(ctx, anew...)
	}
	return written, err
}

// importRaced is the conflict of an import during which a route's write
// changed the live data of a mock it gives new data.
type importRaced struct{ err error }

func errImportRaced(id string) error {
	return &importRaced{decoy.Errorf(decoy.ECONFLICT, "Mock %s was written through its routes while the import ran; nothing was imported: import again", id)}
}

func (e *importRaced) Error() string { return e.err.Error() }
func (e *importRaced) Unwrap() error { return e.err }

// movedOn returns the first mock of rs whose live data is no longer the
// one its replace was to find (a route's write came in between), or "".
func (s *API) movedOn(ctx context.Context, rs []decoy.MockReplacement) string {
	for _, r := range rs {
		if r.Data.IfLiveSeq == nil {
			continue
		}
		if m, err := s.cfg.Store.FindMock(ctx, r.ID); err == nil && m.LiveSeq != *r.Data.IfLiveSeq {
			return r.ID
		}
	}
	return ""
}

// adoptSlug gives project slug, or slug-2, slug-3, … when another project
// has it; a project that has it already keeps it.
func (s *API) adoptSlug(ctx context.Context, project, slug string) error {
	if !decoy.ValidSlug(slug) {
		return nil
	}
	for n := 1; n <= 100; n++ {
		cand := decoy.SlugCandidate(slug, n)
		p, err := s.cfg.Routes.FindProjectBySlug(ctx, cand)
		switch {
		case err == nil && p.ID == project:
			return nil
		case err == nil:
			continue
		case decoy.ErrorCode(err) != decoy.ENOTFOUND:
			return err
		}
		_, err = s.cfg.Routes.SetProjectSlug(ctx, project, cand)
		if err == nil {
			s.routesChanged(ctx, project)
			return nil
		}
		if err != decoy.ErrSlugTaken && decoy.ErrorMessage(err) != decoy.ErrSlugTaken.Message {
			return err
		}
	}
	return decoy.ErrSlugTaken
}

// importedMock is a mock of an import, ready to store: its settings, its
// data as a cache entry (or, for an import that streams, the file that
// holds it, loaded when the store writes it), and the token issued when
// it is private.
type importedMock struct {
	mock     *decoy.Mock
	entry    *mockcache.Entry
	spool    string
	token    string
	template *decoy.Template
}

// newImportedMock checks a mock an import read as the admin API checks an
// upload, its template with checkTemplate, and makes it ready to store in
// project. A mock whose data is in a file (an import that streams) is
// checked by loading it, and keeps none of it: its data is loaded again
// when the store writes it.
func newImportedMock(in importer.Mock, project string, keepID bool, checkTemplate func(*decoy.Template) error) (*importedMock, error) {
	m := &decoy.Mock{
		ID: uuid.NewString(), ProjectID: project, Name: in.Name, ContentType: in.ContentType, Private: in.Private, Status: in.Status,
		DelayMS: in.DelayMS, RateLimit: in.RateLimit, MonthlyQuota: in.MonthlyQuota, ETag: jsondoc.ETag(in.Data),
		Size: int64(len(in.Data)),
	}
	if keepID {
		m.ID = in.ID
	}
	named := func(err error) error {
		return decoy.Errorf(decoy.ErrorCode(err), "Mock %q: %s", in.Name, decoy.ErrorMessage(err))
	}
	if _, _, err := mime.ParseMediaType(m.ContentType); err != nil {
		return nil, named(decoy.Errorf(decoy.EINVALID, "invalid content type %q", m.ContentType))
	}
	for _, err := range []error{validName(m.Name), validStatus(m.Status), validDelay(m.DelayMS)} {
		if err != nil {
			return nil, named(err)
		}
	}
	if t := in.Template; t != nil {
		// A template is checked as PUT …/template checks it.
		if err := checkTemplate(t); err != nil {
			return nil, named(err)
		}
		m.TemplateMode = t.Mode
	}
	im := &importedMock{mock: m, template: in.Template, spool: in.Spool}
	if in.Spool != "" {
		m.Size = in.Size
		if err := im.check(); err != nil {
			return nil, named(err)
		}
	} else {
		e, err := mockcache.NewEntry(m, docfile.FromBytes(in.Data))
		if err != nil {
			return nil, named(err)
		}
		im.entry = e
	}
	if m.Private {
		var h *[]byte
		im.token, h = issueToken()
		m.TokenHash = *h
	}
	return im, nil
}

// data is the mock's data as a batch holds it: none for a mock that
// streams, which the batch loads (see importPlan).
func (im *importedMock) data() decoy.Data {
	if im.entry == nil {
		return decoy.Data{}
	}
	return decoy.Data{Bytes: im.entry.Bytes()}
}

// check checks the data of a mock that streams as an upload's is checked
// (see mockcache.NewEntry) and takes its ETag, holding it no longer than
// that.
func (im *importedMock) check() error {
	d, release, err := im.load(context.Background(), 0)
	if err != nil {
		return err
	}
	defer release()
	im.mock.ETag = jsondoc.ETag(d.Bytes)
	doc := docfile.FromBytes(d.Bytes) // the entry's reference, to d's bytes
	e, err := mockcache.NewEntry(im.mock, doc)
	if err != nil {
		return err
	}
	e.Release()
	return nil
}

// load opens the data of a mock that streams: its file, mapped or read
// (see docfile.Load), given to the store with the file, which a store that
// keeps documents in files may take over (see decoy.Data). It is an
// ImportBatch's Load, for one document.
func (im *importedMock) load(context.Context, int) (decoy.Data, func(), error) {
	f, err := os.Open(im.spool)
	if err != nil {
		return decoy.Data{}, nil, fmt.Errorf("open the data of an import: %w", err)
	}
	doc, err := docfile.Load(f)
	if err != nil {
		f.Close()
		return decoy.Data{}, nil, fmt.Errorf("load the data of an import: %w", err)
	}
	return decoy.Data{Bytes: doc.Bytes(), File: f}, func() {
		doc.Release()
		f.Close()
	}, nil
}

// exportProject serves GET /admin/v1/projects/{id}/export: the project's
// mocks as a .tar.gz (see importer.ExportWriter), streamed as each mock's
// data is read.
func (s *API) exportProject(w http.ResponseWriter, r *http.Request, project string) error {
	ctx := r.Context()
	name, err := s.findProject(ctx, project)
	if err != nil {
		return err
	}
	mocks, err := s.projectMocks(ctx, project)
	if err != nil {
		return err
	}
	h := w.Header()
	h.Set("Content-Type", "application/gzip")
	h.Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": "decoy-" + name + ".tar.gz"}))
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	ew := importer.NewExportWriter(w, name, s.cfg.Now())
	if err := s.exportRoutes(ctx, ew, project); err != nil {
		s.log.Error("export failed", "project", project, "err", err)
		return nil
	}
	for _, listed := range mocks {
		if err := s.exportMock(ctx, ew, listed.ID); err != nil {
			// The answer has started: the archive is left unfinished (no
			// gzip trailer), which every reader reports as an error.
			s.log.Error("export failed", "project", project, "mock", listed.ID, "err", err)
			return nil
		}
	}
	if err := ew.Close(); err != nil {
		s.log.Warn("export not sent whole", "project", project, "err", err)
	}
	return nil
}

// exportRoutes adds a project's slug and routes to an export (§11.2).
func (s *API) exportRoutes(ctx context.Context, ew *importer.ExportWriter, project string) error {
	if s.cfg.Routes == nil || s.cfg.Teams == nil {
		return nil
	}
	p, err := s.cfg.Teams.FindProject(ctx, project)
	if err != nil {
		return err
	}
	ew.SetSlug(p.Slug)
	ew.SetUpstream(decoy.ProjectUpstream{Upstream: p.Upstream, Mode: p.Mode})
	routes, err := s.cfg.Routes.ListRoutes(ctx, project)
	if err != nil {
		return err
	}
	for _, rt := range routes {
		ew.AddRoute(importer.ManifestRoute{Method: rt.Method, Path: rt.Path, MockID: rt.MockID, Action: rt.Action, Bind: rt.Bind,
			Items: rt.Items, RequestSchema: rt.RequestSchema, Rules: rt.Rules})
	}
	return nil
}

// exportMock adds one mock to an export: its settings and data as read
// together from the store, and its template. A mock deleted since the
// listing is left out.
func (s *API) exportMock(ctx context.Context, ew *importer.ExportWriter, id string) error {
	m, data, err := s.cfg.Store.FindMockData(ctx, id)
	if decoy.ErrorCode(err) == decoy.ENOTFOUND {
		return nil
	}
	if err != nil {
		return err
	}
	var body io.Reader
	if data.File != nil {
		defer data.File.Close()
		body = data.File
	} else {
		body = bytes.NewReader(data.Bytes)
	}
	size := m.Size
	if m.LiveSeq > 0 && s.cache != nil {
		// Written through its routes (or reset) since it was made: the
		// export holds its live data, as every read sees it (§12.2), not
		// the version the writes left behind.
		e, err := s.cache.Get(ctx, id)
		if err != nil {
			return err
		}
		if e, err = s.cache.CatchUp(ctx, e); err != nil { // takes over the reference
			return err
		}
		defer e.Release()
		if e.Changed() {
			// Assembled once: Bytes may build the live data anew when the
			// cache holds no copy. The settings stay the store's, read just
			// now (the cache's may be a second old on a shared store),
			// unless the cache read the mock after them (its data replaced
			// in between, so that CatchUp loaded it again): then the
			// cache's, which go with its data. Writes leave the Version.
			live := e.Bytes()
			if e.Mock.Version > m.Version {
				m = e.Mock
			}
			body, size = bytes.NewReader(live), int64(len(live))
		}
	}
	var tmpl *decoy.Template
	if m.TemplateMode != "" && s.cfg.Templates != nil {
		t, err := s.cfg.Templates.FindTemplate(ctx, id)
		switch {
		case decoy.ErrorCode(err) == decoy.ENOTFOUND: // removed since
		case err != nil:
			return err
		case !json.Valid(t.Body):
			return fmt.Errorf("the template of mock %s is not JSON", id)
		default:
			tmpl = t
		}
	}
	return ew.Add(importer.ManifestMock{
		ID: m.ID, Name: m.Name, ContentType: m.ContentType, Private: m.Private, Status: m.Status,
		DelayMS: m.DelayMS, RateLimit: boundedRate(m.RateLimit), MonthlyQuota: m.MonthlyQuota, Template: importer.TemplateOf(tmpl),
	}, size, body)
}

// boundedRate is a rate limit as an export holds it: one stored before
// decoy.MaxRateLimit bounded it is the bound, as it counts, so that the
// export imports again.
func boundedRate(n *int64) *int64 {
	if n == nil || *n <= decoy.MaxRateLimit {
		return n
	}
	b := int64(decoy.MaxRateLimit)
	return &b
}

// importTimeout bounds the transaction of an import.
const importTimeout = 5 * time.Minute

// maxImports bounds the imports that run at once on a server. Each holds
// in memory its file and the mocks made of it (at most --max-data-bytes),
// or, for an export, which streams, the manifest and one document at a
// time, so their number bounds the whole; it is two so that one long
// import, of one workspace, leaves room for another workspace's.
const maxImports = 2

// importSlots lets imports run one at a time per workspace, in the order
// they came, and maxImports at a time on the server. A workspace waits
// for its own imports only, never for a long one of another workspace
// while a slot is free.
type importSlots struct {
	mu         sync.Mutex
	workspaces map[string]*workspaceImports
	server     chan struct{}
}

// workspaceImports is a workspace's turn to import, and how many want it.
type workspaceImports struct {
	turn  chan struct{}
	users int
}

func newImportSlots() *importSlots {
	return &importSlots{workspaces: map[string]*workspaceImports{}, server: make(chan struct{}, maxImports)}
}

// errImportEnded ends an import whose request ended while it waited.
var errImportEnded = decoy.Errorf(decoy.EUNAVAILABLE, "The import stopped: the request ended")

// start waits for workspace's turn to import, then for the server's, and
// returns the function that ends them; it gives up when ctx ends.
func (is *importSlots) start(ctx context.Context, workspace string) (done func(), err error) {
	is.mu.Lock()
	w := is.workspaces[workspace]
	if w == nil {
		w = &workspaceImports{turn: make(chan struct{}, 1)}
		is.workspaces[workspace] = w
	}
	w.users++
	is.mu.Unlock()
	leave := func() {
		is.mu.Lock()
		if w.users--; w.users == 0 {
			delete(is.workspaces, workspace)
		}
		is.mu.Unlock()
	}
	select {
	case w.turn <- struct{}{}:
	case <-ctx.Done():
		leave()
		return nil, errImportEnded
	}
	select {
	case is.server <- struct{}{}:
	case <-ctx.Done():
		<-w.turn
		leave()
		return nil, errImportEnded
	}
	return func() {
		<-is.server
		<-w.turn
		leave()
	}, nil
}

// addMock stores a new mock with its data and puts it in the cache.
// The caller holds writeMu.
func (s *API) addMock(ctx context.Context, m *decoy.Mock, e *mockcache.Entry, data decoy.Data) (*decoy.Mock, error) {
	e.Mock = m
	stored, err := s.storeMocks(ctx, []*mockcache.Entry{e}, func(ctx context.Context) ([]*decoy.Mock, error) {
		m, err := s.cfg.Store.CreateMock(ctx, m, data)
		return []*decoy.Mock{m}, err
	})
	if err != nil {
		return nil, err
	}
	return stored[0], nil
}

// storeMocks runs write, which stores the mocks of entries (created, or
// given new data) all or none and returns them as stored, in order, and
// puts them in the cache: the one path of every mock an upload creates
// and an import writes. The caller holds writeMu.
func (s *API) storeMocks(ctx context.Context, entries []*mockcache.Entry, write func(context.Context) ([]*decoy.Mock, error)) ([]*decoy.Mock, error) {
	gen := s.cache.Generation()
	stored, err := write(ctx)
	for _, e := range entries {
		s.announce(ctx, e.Mock.ID)
	}
	if err != nil {
		for _, e := range entries {
			s.cache.Remove(e.Mock.ID)
		}
		return nil, err
	}
	for i, e := range entries {
		e.Mock = stored[i]
		s.cache.PutAt(e, gen)
	}
	return stored, nil
}

// removeMock deletes a mock and drops it from the cache. The caller holds
// writeMu.
func (s *API) removeMock(ctx context.Context, id string) error {
	m, ferr := s.cfg.Store.FindMock(ctx, id)
	var gone []*decoy.Route
	if ferr == nil {
		gone = s.routesOf(ctx, m.ProjectID, id)
	}
	err := s.cfg.Store.DeleteMock(ctx, id)
	s.announce(ctx, id)
	s.cache.Remove(id)
	if ferr == nil && s.cfg.Routes != nil {
		s.routesChanged(ctx, m.ProjectID) // its routes went with it
	}
	if err == nil {
		s.forgetRules(ctx, gone)
	}
	return err
}

// routesOf lists the routes of project that a deletion takes with it: all
// of them, or only mock's when mock is not "". A listing that fails is
// logged, and lists none.
func (s *API) routesOf(ctx context.Context, project, mock string) []*decoy.Route {
	if s.cfg.Routes == nil || s.cfg.RuleCounter == nil {
		return nil
	}
	routes, err := s.cfg.Routes.ListRoutes(ctx, project)
	if err != nil {
		s.log.Error("routes not listed before a deletion; their rule counts stay", "project", project, "err", err)
		return nil
	}
	if mock == "" {
		return routes
	}
	gone := routes[:0]
	for _, rt := range routes {
		if rt.MockID == mock {
			gone = append(gone, rt)
		}
	}
	return gone
}

// forgetRules resets the rule counts of routes a deletion took with it:
// the in-memory counter kept them until a restart, and Redis for its TTL.
func (s *API) forgetRules(ctx context.Context, routes []*decoy.Route) {
	ids := make([]string, len(routes))
	for i, rt := range routes {
		ids[i] = rt.ID
	}
	s.resetRules(ctx, ids...)
}
