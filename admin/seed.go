package admin

import (
	"bytes"
	"context"
	"maps"

	"github.com/decoy-mock/decoy"
	"github.com/decoy-mock/decoy/docfile"
	"github.com/decoy-mock/decoy/generate"
	"github.com/decoy-mock/decoy/jsondoc"
	"github.com/decoy-mock/decoy/mockcache"
	"github.com/decoy-mock/decoy/secret"
)

// Seed stores data as the open JSON mock called name, under decoy.SeedID(name).
// A mock that exists keeps its settings, and its data is replaced only when
// it differs. It reports whether anything was written.
func (s *API) Seed(ctx context.Context, name string, data []byte) (*decoy.Mock, bool, error) {
	m := &decoy.Mock{ID: decoy.SeedID(name), Name: name, ContentType: "application/json", Status: 200}
	return s.seed(ctx, m, data, false)
}

// SeedMock stores data as mock m, with m's id and settings, and tpl as
// its template (nil: none) — a mock of an exported folder given to
// --seed. A mock that exists takes m's settings and template where they
// differ, and its data is replaced only when it differs. It reports
// whether anything was written, and the token of a mock made private now
// (shown once).
func (s *API) SeedMock(ctx context.Context, m *decoy.Mock, data []byte, tpl *decoy.Template) (*decoy.Mock, bool, string, error) {
	token := ""
	if m.Private {
		var h *[]byte
		token, h = issueToken()
		m.TokenHash = *h
	}
	seeded, changed, err := s.seed(ctx, m, data, true)
	if err != nil {
		return nil, false, "", err
	}
	if s.cfg.Templates != nil {
		withTemplate, set, err := s.seedTemplate(ctx, m.ID, tpl)
		if err != nil {
			return nil, false, "", err
		}
		if set {
			seeded, changed = withTemplate, true
		}
	}
	if !secret.Matches(token, seeded.TokenHash) {
		token = "" // it was private already, with its own token
	}
	return seeded, changed, token, nil
}

// seed stores data as mock m: created when it does not exist; else its
// data replaced when it differs, and, when settings is set, its settings
// made m's where they differ.
func (s *API) seed(ctx context.Context, m *decoy.Mock, data []byte, settings bool) (*decoy.Mock, bool, error) {
	id := m.ID
	if int64(len(data)) > s.cfg.MaxDataBytes {
		return nil, false, decoy.Errorf(decoy.ETOOLARGE, "larger than %d bytes (--max-data-bytes)", s.cfg.MaxDataBytes)
	}
	m.ETag = jsondoc.ETag(data)
	e, err := mockcache.NewEntry(m, docfile.FromBytes(data))
	if err != nil {
		return nil, false, err
	}
	defer e.Release() // the cache takes its own
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	cur, stored, err := s.cfg.Store.FindMockData(ctx, id)
	if decoy.ErrorCode(err) == decoy.ENOTFOUND {
		var created *decoy.Mock
		gen := s.cache.Generation()
		created, err = s.cfg.Store.CreateMock(ctx, m, decoy.Data{Bytes: data})
		if err == nil {
			e.Mock = created
			s.cache.PutAt(e, gen)
			s.announce(ctx, id)
			return created, true, nil
		}
		if decoy.ErrorCode(err) != decoy.ECONFLICT {
			return nil, false, err
		}
		// Another replica seeding the same folder created it just now.
		cur, stored, err = s.cfg.Store.FindMockData(ctx, id)
	}
	if err != nil {
		return nil, false, err
	}
	same, err := sameData(stored, data)
	if err != nil {
		return nil, false, err
	}
	changed := false
	if settings {
		if upd, ok := settingsUpdate(cur, m); ok {
			gen := s.cache.Generation()
			if cur, err = s.cfg.Store.UpdateMock(ctx, id, upd); err != nil {
				return nil, false, err
			}
			s.cache.PutSettingsAt(cur, gen)
			s.announce(ctx, id)
			changed = true
		}
	}
	if same && cur.ContentType == m.ContentType {
		return cur, changed, nil
	}
	updated, gen, err := s.replaceKeepingLive(ctx, id, decoy.MockData{ContentType: m.ContentType, Data: decoy.Data{Bytes: data}, ETag: m.ETag})
	if err != nil {
		return nil, false, err
	}
	e.Mock = updated
	s.cache.PutAt(e, gen)
	s.announce(ctx, id)
	return updated, true, nil
}

// seedTemplate makes tpl (nil: none) the template of mock id, unless it is
// already, and reports whether it wrote.
func (s *API) seedTemplate(ctx context.Context, id string, tpl *decoy.Template) (*decoy.Mock, bool, error) {
	cur, err := s.cfg.Templates.FindTemplate(ctx, id)
	switch {
	case decoy.ErrorCode(err) == decoy.ENOTFOUND:
		cur = nil
	case err != nil:
		return nil, false, err
	}
	same := tpl != nil && cur != nil && tpl.Mode == cur.Mode && tpl.ContentType == cur.ContentType && bytes.Equal(tpl.Body, cur.Body)
	if tpl == nil && cur == nil || same {
		return nil, false, nil
	}
	if tpl != nil {
		if err := s.generating(ctx, func(lim generate.Limits) error {
			_, err := generate.Parse(tpl.ContentType, tpl.Body, lim)
			return err
		}); err != nil {
			return nil, false, err
		}
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	gen := s.cache.Generation()
	var m *decoy.Mock
	if tpl == nil {
		m, err = s.cfg.Templates.DeleteTemplate(ctx, id)
	} else {
		m, err = s.cfg.Templates.SetTemplate(ctx, id, *tpl)
	}
	s.announce(ctx, id)
	if err != nil {
		s.cache.Remove(id)
		return nil, false, err
	}
	s.cache.PutSettingsAt(m, gen)
	return m, true, nil
}

// settingsUpdate is the change that gives cur the settings of want, and
// whether there is any. A mock that stays private keeps its token.
func settingsUpdate(cur, want *decoy.Mock) (decoy.MockUpdate, bool) {
	var upd decoy.MockUpdate
	differs := false
	if cur.Name != want.Name {
		upd.Name, differs = &want.Name, true
	}
	if cur.Status != want.Status {
		upd.Status, differs = &want.Status, true
	}
	if cur.DelayMS != want.DelayMS {
		upd.DelayMS, differs = &want.DelayMS, true
	}
	if !sameLimit(cur.RateLimit, want.RateLimit) {
		upd.RateLimit, differs = &decoy.LimitUpdate{Value: want.RateLimit}, true
	}
	if !sameLimit(cur.MonthlyQuota, want.MonthlyQuota) {
		upd.MonthlyQuota, differs = &decoy.LimitUpdate{Value: want.MonthlyQuota}, true
	}
	if cur.Private != want.Private {
		upd.Private, differs = &want.Private, true
		hash := want.TokenHash
		if !want.Private {
			hash = nil
		}
		upd.TokenHash = &hash
	}
	return upd, differs
}

func sameLimit(a, b *int64) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }

// sameData reports whether the data a store returned holds b.
func sameData(stored decoy.Data, b []byte) (bool, error) {
	doc, err := mockcache.DocOf(stored)
	if err != nil {
		return false, err
	}
	defer doc.Release()
	return bytes.Equal(doc.Bytes(), b), nil
}

// SeedRoutes makes routes the routes of project, as an exported folder
// given to --seed has them (§11.2): a route of the same method and path
// (shape) is changed in place when it differs, any other is created; the
// project's other routes stay. It reports whether anything was written.
func (s *API) SeedRoutes(ctx context.Context, project string, routes []*decoy.Route) (bool, error) {
	if s.cfg.Routes == nil || len(routes) == 0 {
		return false, nil
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	existing, err := s.cfg.Routes.ListRoutes(ctx, project)
	if err != nil {
		return false, err
	}
	byShape := make(map[string]*decoy.Route, len(existing))
	for _, rt := range existing {
		byShape[rt.Shape()] = rt
	}
	var batch []*decoy.Route
	for _, rt := range routes {
		rt.ProjectID = project
		if rt.Rules != nil {
			if err := s.checkRules(ctx, rt); err != nil {
				return false, decoy.Errorf(decoy.ErrorCode(err), "Route %s %s: %s", rt.Method, rt.Path, decoy.ErrorMessage(err))
			}
		}
		if old := byShape[rt.Shape()]; old != nil {
			if sameRoute(old, rt) {
				continue
			}
			rt.ID = old.ID
		}
		batch = append(batch, rt)
	}
	if len(batch) == 0 {
		return false, nil
	}
	if _, err := s.cfg.Routes.WriteImport(ctx, decoy.ImportBatch{ProjectID: project, Routes: batch, MaxRoutes: s.maxRoutes()}); err != nil {
		return false, err
	}
	s.routesChanged(ctx, project)
	var anew []string
	for _, rt := range batch {
		if rt.ID != "" && rt.Rules != nil {
			anew = append(anew, rt.ID)
		}
	}
	s.resetRules(ctx, anew...)
	return true, nil
}

// sameRoute reports whether two routes of one shape do the same: b's
// rules, when it gives none (nil), are a's.
func sameRoute(a, b *decoy.Route) bool {
	return a.Path == b.Path && a.MockID == b.MockID && a.Action == b.Action && maps.Equal(a.Bind, b.Bind) &&
		(a.Items == nil) == (b.Items == nil) && (a.Items == nil || *a.Items == *b.Items) && bytes.Equal(a.RequestSchema, b.RequestSchema) &&
		(b.Rules == nil || sameRules(a.Rules, b.Rules))
}

// sameRules reports whether two lists of rules are the same, as stored.
func sameRules(a, b []decoy.Rule) bool {
	ja, errA := decoy.EncodeRules(a)
	jb, errB := decoy.EncodeRules(b)
	return errA == nil && errB == nil && bytes.Equal(ja, jb)
}
