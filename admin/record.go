package admin

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/url"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/decoy-mock/decoy"
	"github.com/decoy-mock/decoy/importer"
	"github.com/decoy-mock/decoy/route"
)

// This file keeps what a project in mode record hears from its upstream
// (§14 of the contract): each GET answer with a JSON body becomes a mock
// with a route at its path, the latest answer winning. It is written as
// an import of that one answer is (planImport, writeImport), so that a
// route at the same path keeps its id and its mock gets the answer as a
// new version, and the workspace's limits are checked in the store's
// transaction. A collection and the items of the same resource are bound
// together as an OpenAPI import binds them (§11.5): a collection's mock
// has an item route, and an item recorded next to a recorded collection
// becomes (or replaces) its record there.

// Recording is one answer to keep.
type Recording struct {
	ProjectID string
	// Path is the request's path after the project's prefix, escaped as
	// it came; its query is not part of it (a query makes no new route).
	Path        string
	Status      int
	ContentType string
	// Body is the answer's JSON body, whole.
	Body []byte
	// Client is the address of the client whose request was recorded,
	// for the audit log.
	Client string
}

// recorder is the actor of the changes recording makes (the audit log,
// the versions it writes): the server on the project's behalf, as no
// caller of the admin API made them.
var recorder = decoy.Actor{Kind: decoy.ServerAdmin.Kind, Label: "recording"}

// Recorded is where a recording went.
type Recorded struct {
	RouteID, MockID string
}

// errNotRecordable is a recording that cannot be a route: a path that is
// no route's, or a body that is not JSON.
var errNotRecordable = decoy.Errorf(decoy.EINVALID, "The answer cannot be recorded")

// Record keeps an answer as a mock with a route at its path (see the top
// of this file). Errors are the store's, the workspace's limits among
// them, and EINVALID for an answer that cannot be recorded.
func (s *API) Record(ctx context.Context, rec Recording) (*Recorded, error) {
	if s.cfg.Routes == nil {
		return nil, errNoUpstreams
	}
	path, ok := routePath(rec.Path)
	if !ok || !json.Valid(rec.Body) || int64(len(rec.Body)) > s.cfg.MaxDataBytes {
		return nil, errNotRecordable
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	routes, err := s.cfg.Routes.ListRoutes(ctx, rec.ProjectID)
	if err != nil {
		return nil, err
	}
	if same := s.recordedAlready(ctx, rec, path, routes); same != nil {
		// The answer the route gives already: no version, no entry in
		// the audit log, for each request that asks the same.
		return same, nil
	}
	// What recording writes is the recorder's: the versions it makes,
	// the live data it keeps first included.
	ctx = decoy.WithActor(ctx, recorder)
	var written *decoy.ImportWritten
	for attempt := 1; ; attempt++ {
		written, err = s.recordOnce(ctx, rec, path, routes)
		var raced *importRaced
		if !errors.As(err, &raced) || attempt == maxRecordAttempts {
			break
		}
		// A route's write came in between (an item recorded into a
		// collection written through its routes): made again over it.
	}
	if err != nil {
		return nil, err
	}
	s.auditRecording(ctx, rec, written)
	out := &Recorded{}
	if len(written.Routes) > 0 {
		out.RouteID, out.MockID = written.Routes[0].ID, written.Routes[0].MockID
	}
	return out, nil
}

// maxRecordAttempts bounds how many times a recording is made again when
// a route's write comes in between.
const maxRecordAttempts = 3

// recordOnce writes what recording rec at path makes (recordResult), as
// an import.
func (s *API) recordOnce(ctx context.Context, rec Recording, path string, routes []*decoy.Route) (*decoy.ImportWritten, error) {
	res, base, err := s.recordResult(ctx, rec, path, routes)
	if err != nil {
		return nil, err
	}
	mocks := make([]*importedMock, 0, len(res.Mocks))
	defer func() {
		for _, im := range mocks {
			im.entry.Release()
		}
	}()
	for _, in := range res.Mocks {
		im, err := newImportedMock(in, rec.ProjectID, false, nil)
		if err != nil {
			return nil, err
		}
		mocks = append(mocks, im)
	}
	plan, err := s.planImport(ctx, rec.ProjectID, res, mocks)
	if err != nil {
		return nil, err
	}
	for j := range plan.batch.Replace {
		if r := &plan.batch.Replace[j]; base != nil && r.ID == base.id {
			r.Data.IfLiveSeq = base.seq
		}
	}
	return s.writeImport(ctx, plan)
}

// auditRecording appends to the audit log (§6.4) a mock.record entry for
// each mock a recording made or gave new data.
func (s *API) auditRecording(ctx context.Context, rec Recording, written *decoy.ImportWritten) {
	if s.cfg.Teams == nil {
		return
	}
	for _, m := range append(slices.Clip(written.Created), written.Replaced...) {
		e := &decoy.AuditEntry{WorkspaceID: m.WorkspaceID, At: s.cfg.Now().UTC(), Actor: recorder, Action: "mock.record",
			Target: decoy.AuditTarget{Kind: "mock", ID: m.ID, Name: m.Name}, IP: rec.Client}
		if err := s.cfg.Teams.AppendAudit(ctx, e); err != nil {
			s.log.Error("could not append to the audit log", "action", e.Action, "workspace", e.WorkspaceID, "err", err)
		}
	}
}

// routePath is the route path of a request's escaped path: each segment
// decoded, a trailing "/" dropped; false when that is no route's path (an
// encoded "/", braces, too many segments).
func routePath(escaped string) (string, bool) {
	escaped = strings.TrimRight(escaped, "/")
	if escaped == "" {
		return "/", true
	}
	segs := strings.Split(escaped[1:], "/")
	for i, seg := range segs {
		dec, err := url.PathUnescape(seg)
		if err != nil || strings.Contains(dec, "/") {
			return "", false
		}
		segs[i] = dec
	}
	path := "/" + strings.Join(segs, "/")
	t, err := route.Parse(path)
	if err != nil || t.Item() {
		return "", false
	}
	return path, true
}

// liveBase is the live data a recording's new data for mock id was made
// from (a collection an item is recorded into): its replace must find it,
// numbered seq.
type liveBase struct {
	id  string
	seq *int64
}

// recordResult is what recording rec at path writes, as an import's
// result: its mocks and routes. The mock of an existing route at the same
// path gets the answer (planImport finds it by the route's shape). base
// is set when the new data of a mock is made from its data.
func (s *API) recordResult(ctx context.Context, rec Recording, path string, routes []*decoy.Route) (*importer.Result, *liveBase, error) {
	byShape := make(map[string]*decoy.Route, len(routes))
	for _, rt := range routes {
		byShape[rt.Shape()] = rt
	}
	answer := importer.Mock{Name: mockName(path), ContentType: rec.ContentType, Status: rec.Status, Data: rec.Body}
	if old := byShape["GET "+path]; old != nil {
		if err := sharedElsewhere(routes, old.MockID, path); err != nil {
			return nil, nil, err
		}
		// The latest answer wins, kept where the route sends it.
		res := &importer.Result{Mocks: []importer.Mock{answer},
			Routes: []importer.Route{{Method: "GET", Path: path, Action: old.Action, Bind: old.Bind}}}
		if items, ok := collectionOf(rec.Body); ok {
			res.Routes[0].Items = items
			res.Routes = append(res.Routes, itemRoutes(path, items, rec.Body, byShape, old.MockID)...)
		}
		return res, nil, nil
	}
	if res, base, ok, err := s.recordItem(ctx, rec, path, routes, byShape); ok || err != nil {
		return res, base, err
	}
	res := &importer.Result{Mocks: []importer.Mock{answer}, Routes: []importer.Route{{Method: "GET", Path: path, Action: decoy.ActionRead}}}
	if items, ok := collectionOf(rec.Body); ok {
		res.Routes[0].Items = items
		res.Routes = append(res.Routes, itemRoutes(path, items, rec.Body, byShape, "")...)
	}
	return res, nil, nil
}

// recordedAlready returns where rec went, when the GET route at path
// answers it already, byte for byte, with its status and content type;
// else nil.
func (s *API) recordedAlready(ctx context.Context, rec Recording, path string, routes []*decoy.Route) *Recorded {
	for _, rt := range routes {
		if rt.Method != "GET" || rt.Path != path || rt.Action != decoy.ActionRead {
			continue
		}
		e, err := s.cache.Get(ctx, rt.MockID)
		if err != nil {
			return nil
		}
		defer e.Release()
		m := e.Mock
		if m.Status == rec.Status && m.ContentType == rec.ContentType && bytes.Equal(e.Bytes(), rec.Body) {
			return &Recorded{RouteID: rt.ID, MockID: rt.MockID}
		}
		return nil
	}
	return nil
}

// sharedElsewhere refuses to record at path into mock id when a route of
// another resource answers from it too (a mock made by hand, shared by
// routes at other paths): its answers would change under that route. The
// routes of path itself and of its items, path/{param}, are the
// resource's.
func sharedElsewhere(routes []*decoy.Route, id, path string) error {
	below := strings.TrimSuffix(path, "/") + "/"
	for _, rt := range routes {
		item, ok := strings.CutPrefix(rt.Path, below)
		item = strings.TrimSuffix(item, "/")
		ok = ok && strings.HasPrefix(item, "{") && strings.HasSuffix(item, "}") && !strings.Contains(item, "/")
		if rt.MockID == id && rt.Path != path && !ok {
			return decoy.Errorf(decoy.ECONFLICT, "The mock of GET %s also answers %s %s: recording does not change it", path, rt.Method, rt.Path)
		}
	}
	return nil
}

// mockName names a recorded mock: "GET /path", cut to a name's bound.
func mockName(path string) string {
	name := "GET " + path
	for len(name) > decoy.MaxNameLength {
		_, size := utf8.DecodeLastRuneInString(name)
		name = name[:len(name)-size]
	}
	return name
}

// collectionOf reports whether a JSON body is a collection, as an OpenAPI
// import tells one (§11.5): an array of objects (nil items), or an object
// with exactly one member that is an array of objects (items names it).
func collectionOf(body []byte) (*string, bool) {
	body = bytes.TrimSpace(body)
	if len(body) == 0 {
		return nil, false
	}
	switch body[0] {
	case '[':
		return nil, objects(body)
	case '{':
		var members map[string]json.RawMessage
		if json.Unmarshal(body, &members) != nil {
			return nil, false
		}
		var found *string
		for k, v := range members {
			if v = bytes.TrimSpace(v); len(v) > 0 && v[0] == '[' && objects(v) {
				if found != nil {
					return nil, false
				}
				k := k
				found = &k
			}
		}
		if found == nil || strings.Contains(*found, ".") {
			return nil, false
		}
		return found, true
	}
	return nil, false
}

// objects reports whether a JSON array holds objects only (an empty one
// does).
func objects(array []byte) bool {
	var elems []json.RawMessage
	if json.Unmarshal(array, &elems) != nil {
		return false
	}
	for _, e := range elems {
		if e = bytes.TrimSpace(e); len(e) == 0 || e[0] != '{' {
			return false
		}
	}
	return true
}

// recordField is the record field a recorded collection's item route
// binds.
const recordField = "id"

// itemRoutes is the item route of a recorded collection at path, GET
// path/{id} bound to its records' id, when every record has one and the
// project has no route of that shape on another mock (mockID: the
// collection's, "" for a new one).
func itemRoutes(path string, items *string, body []byte, byShape map[string]*decoy.Route, mockID string) []importer.Route {
	itemPath := strings.TrimSuffix(path, "/") + "/{" + recordField + "}"
	if old := byShape["GET "+decoy.PathShape(itemPath)]; old != nil && old.MockID != mockID {
		return nil
	}
	elems, _, _, ok := arrayOf(body, items)
	if !ok || len(elems) == 0 {
		return nil
	}
	for _, e := range elems {
		if _, ok := fieldText(e, recordField); !ok {
			return nil
		}
	}
	return []importer.Route{{Method: "GET", Path: itemPath, Action: decoy.ActionRead, Bind: map[string]string{recordField: recordField}, Items: items}}
}

// recordItem binds an item answer at path to a recorded collection at its
// parent path: when the parent's GET route reads a collection and the
// answer is an object whose id field (the one the collection's item route
// binds, else id) is the path's last segment, the answer becomes the
// collection's record of that id, replaced or appended, and the item route
// is made when missing. ok is false when the answer is not such an item.
//
// The record goes into the data the collection answers: its live data,
// which writes through its routes may have changed. That is kept as a
// version first (keepLive), as every data write keeps it, and the
// collection's new data is made from it; its replace must then find it
// (base), or the recording is a race (importRaced), made again by Record.
// The new data is made once, from the live data that is kept.
func (s *API) recordItem(ctx context.Context, rec Recording, path string, routes []*decoy.Route, byShape map[string]*decoy.Route) (*importer.Result, *liveBase, bool, error) {
	i := strings.LastIndexByte(path, '/')
	parentPath, key := path[:i], path[i+1:]
	if parentPath == "" || key == "" {
		return nil, nil, false, nil
	}
	parent := byShape["GET "+parentPath]
	if parent == nil || parent.Action != decoy.ActionRead {
		return nil, nil, false, nil
	}
	if err := sharedElsewhere(routes, parent.MockID, parentPath); err != nil {
		return nil, nil, false, err
	}
	field, item := recordField, (*decoy.Route)(nil)
	if old := byShape["GET "+decoy.PathShape(parentPath+"/{x}")]; old != nil {
		if old.MockID != parent.MockID {
			return nil, nil, false, nil
		}
		item = old
		t, err := route.Parse(old.Path)
		if err != nil {
			return nil, nil, false, nil
		}
		names := t.Params()
		param := names[len(names)-1]
		field = param
		if f, ok := old.Bind[param]; ok {
			field = f
		}
	}
	if strings.Contains(field, ".") {
		return nil, nil, false, nil
	}
	if v, ok := fieldText(rec.Body, field); !ok || v != key {
		return nil, nil, false, nil
	}
	ne, err := s.liveEntry(ctx, parent.MockID)
	if err != nil {
		return nil, nil, false, err
	}
	defer ne.Release()
	merged, ok := withRecord(ne.Bytes(), parent.Items, field, key, bytes.TrimSpace(rec.Body))
	if !ok || int64(len(merged)) > s.cfg.MaxDataBytes {
		return nil, nil, false, nil // no record of it, or too large: recorded apart
	}
	var seq *int64
	if s.keepsLive() {
		// Kept only now, for an answer that is a record of it.
		if seq, err = s.keepLiveOf(ctx, parent.MockID, ne); decoy.ErrorCode(err) == decoy.ECONFLICT {
			return nil, nil, false, errImportRaced(parent.MockID)
		} else if err != nil {
			return nil, nil, false, err
		}
	}
	m := ne.Mock
	res := &importer.Result{
		Mocks: []importer.Mock{{Name: m.Name, ContentType: m.ContentType, Status: m.Status, DelayMS: m.DelayMS,
			RateLimit: m.RateLimit, MonthlyQuota: m.MonthlyQuota, Private: m.Private, Data: merged}},
	}
	itemPath := parentPath + "/{" + field + "}"
	bind := map[string]string{field: field}
	if item != nil {
		itemPath, bind = item.Path, item.Bind
	}
	res.Routes = []importer.Route{
		{Method: "GET", Path: itemPath, Action: decoy.ActionRead, Bind: bind, Items: parent.Items},
		{Method: "GET", Path: parent.Path, Action: parent.Action, Bind: parent.Bind, Items: parent.Items},
	}
	return res, &liveBase{id: parent.MockID, seq: seq}, true, nil
}

// fieldText is the text of a JSON object's member as a path segment
// would name it: a string's content, a number's digits; false for any
// other value, a missing member, or a body that is no object.
func fieldText(object []byte, field string) (string, bool) {
	var members map[string]json.RawMessage
	if json.Unmarshal(object, &members) != nil {
		return "", false
	}
	v, ok := members[field]
	if !ok {
		return "", false
	}
	v = bytes.TrimSpace(v)
	var s string
	if len(v) > 0 && v[0] == '"' && json.Unmarshal(v, &s) == nil {
		return s, true
	}
	var n json.Number
	if len(v) > 0 && (v[0] == '-' || v[0] >= '0' && v[0] <= '9') && json.Unmarshal(v, &n) == nil {
		return n.String(), true
	}
	return "", false
}

// arrayOf finds the array of a collection's data: the data itself (nil
// items) or its member items; it returns the elements and the byte range
// of the array within data.
func arrayOf(data []byte, items *string) (elems []json.RawMessage, start, end int, ok bool) {
	if items == nil {
		trimmed := bytes.TrimSpace(data)
		start = bytes.Index(data, trimmed[:min(1, len(trimmed))])
		if json.Unmarshal(trimmed, &elems) != nil {
			return nil, 0, 0, false
		}
		return elems, start, start + len(trimmed), true
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, 0, 0, false
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, 0, 0, false
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, 0, 0, false
		}
		if k, _ := t.(string); k == *items {
			end = int(dec.InputOffset())
			start = end - len(raw)
			if json.Unmarshal(raw, &elems) != nil {
				return nil, 0, 0, false
			}
			return elems, start, end, true
		}
	}
	return nil, 0, 0, false
}

// withRecord is a collection's data with record in place of the record
// whose field is key, or appended when none is; every other byte stays.
func withRecord(data []byte, items *string, field, key string, record []byte) ([]byte, bool) {
	elems, start, end, ok := arrayOf(data, items)
	if !ok {
		return nil, false
	}
	replaced := false
	for i, e := range elems {
		if v, ok := fieldText(e, field); ok && v == key {
			elems[i] = record
			replaced = true
			break
		}
	}
	if !replaced {
		elems = append(elems, record)
	}
	out := make([]byte, 0, len(data)+len(record)+1)
	out = append(out, data[:start]...)
	out = append(out, '[')
	for i, e := range elems {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, e...)
	}
	out = append(out, ']')
	return append(out, data[end:]...), true
}
