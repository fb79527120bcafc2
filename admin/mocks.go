package admin

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"unicode/utf8"

	"github.com/decoy-mock/decoy"
	"github.com/decoy-mock/decoy/answer"
	"github.com/decoy-mock/decoy/jsondoc"
	"github.com/decoy-mock/decoy/mockcache"
	"github.com/decoy-mock/decoy/secret"
	"github.com/google/uuid"
)

// TokenPrefix starts every mock token.
const TokenPrefix = "dcy_"

// maxPatchBytes caps the JSON body of PATCH.
const maxPatchBytes = 64 << 10

// This file is mocks in the admin API: listing, creating, reading,
// changing and deleting them, their data, tokens and usage.

// mockView is a mock as the admin API shows it.
type mockView struct {
	*decoy.Mock
	URL   string `json:"url"`
	Token string `json:"token,omitempty"`
	// TemplateMode is the mode of the mock's template, null when none.
	TemplateMode *string `json:"template_mode"`
}

type mockList struct {
	Mocks      []mockView `json:"mocks"`
	NextCursor *string    `json:"next_cursor"`
}

func (s *API) view(r *http.Request, m *decoy.Mock, token string) mockView {
	v := mockView{Mock: m, URL: s.baseURL(r) + "/mock/" + m.ID, Token: token}
	if m.TemplateMode != "" {
		v.TemplateMode = &m.TemplateMode
	}
	return v
}

func (s *API) listMocks(w http.ResponseWriter, r *http.Request, _ string) error {
	q := r.URL.Query()
	limit := 100
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 1000 {
			return decoy.Errorf(decoy.EINVALID, "limit must be an integer from 1 to 1000")
		}
		limit = n
	}
	var mocks []*decoy.Mock
	var next string
	var err error
	if s.cfg.Teams != nil {
		var f decoy.MockFilter
		if f, err = s.mockFilter(r); err != nil {
			return err
		}
		mocks, next, err = s.cfg.Teams.SearchMocks(r.Context(), f, q.Get("cursor"), limit)
	} else {
		mocks, next, err = s.cfg.Store.ListMocks(r.Context(), q.Get("cursor"), limit)
	}
	if err != nil {
		return err
	}
	out := mockList{Mocks: make([]mockView, 0, len(mocks))}
	for _, m := range mocks {
		out.Mocks = append(out.Mocks, s.view(r, m, ""))
	}
	if next != "" {
		out.NextCursor = &next
	}
	answer.JSON(w, http.StatusOK, out)
	return nil
}

// createParams are the query parameters of POST /admin/v1/mocks.
var createParams = map[string]bool{
	"name": true, "private": true, "status": true, "delay_ms": true, "id": true, "rate_limit": true, "monthly_quota": true,
	"project_id": true,
}

func (s *API) createMock(w http.ResponseWriter, r *http.Request, _ string) error {
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return decoy.Errorf(decoy.EINVALID, "Invalid query string: %v", err)
	}
	m := &decoy.Mock{Status: http.StatusOK}
	for k := range q {
		if !createParams[k] {
			return decoy.Errorf(decoy.EINVALID, "Unknown parameter: %s", k)
		}
	}
	if v := q.Get("id"); v != "" {
		var ok bool
		if m.ID, ok = decoy.CanonicalID(v); !ok {
			return decoy.Errorf(decoy.EINVALID, "id must be a UUID")
		}
	} else {
		m.ID = uuid.NewString()
	}
	if err := applyParams(m, q); err != nil {
		return err
	}
	if err := s.placeMock(r, m, q.Get("project_id")); err != nil {
		return err
	}
	up, err := s.readData(w, r)
	if err != nil {
		return err
	}
	defer up.discard()
	m.ContentType = up.contentType
	m.ETag = jsondoc.ETag(up.doc.Bytes())
	e, err := mockcache.NewEntry(m, up.doc)
	if err != nil {
		return err
	}
	token := ""
	if m.Private {
		var h *[]byte
		token, h = issueToken()
		m.TokenHash = *h
	}

	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	ctx, cancel := writeContext(r)
	defer cancel()
	created, err := s.addMock(ctx, m, e, up.data())
	if err != nil {
		return err
	}
	callOf(r).auditTarget = &decoy.AuditTarget{Kind: "mock", ID: created.ID, Name: created.Name}
	w.Header().Set("Location", "/admin/v1/mocks/"+created.ID)
	answer.JSON(w, http.StatusCreated, s.view(r, created, token))
	return nil
}

// applyParams sets the settings given as query parameters of a create.
func applyParams(m *decoy.Mock, q url.Values) error {
	if q.Has("name") {
		name := q.Get("name")
		if err := validName(name); err != nil {
			return err
		}
		m.Name = name
	}
	if v := q.Get("private"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return decoy.Errorf(decoy.EINVALID, "private must be true or false")
		}
		m.Private = b
	}
	if v := q.Get("status"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || validStatus(n) != nil {
			return validStatus(-1)
		}
		m.Status = n
	}
	if v := q.Get("delay_ms"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || validDelay(n) != nil {
			return validDelay(-1)
		}
		m.DelayMS = n
	}
	for _, p := range []struct {
		name string
		dst  **int64
	}{{"rate_limit", &m.RateLimit}, {"monthly_quota", &m.MonthlyQuota}} {
		if v := q.Get(p.name); v != "" {
			n, err := strconv.ParseInt(v, 10, 64)
			if p.name == "rate_limit" && (err != nil || decoy.CheckRateLimit(p.name, n) != nil) {
				return decoy.CheckRateLimit(p.name, -1)
			}
			if err != nil || n < 0 {
				return decoy.Errorf(decoy.EINVALID, "%s must be an integer of 0 or more (0: unlimited)", p.name)
			}
			*p.dst = &n
		}
	}
	return nil
}

func validName(name string) error {
	if len(name) > decoy.MaxNameLength || !utf8.ValidString(name) {
		return decoy.Errorf(decoy.EINVALID, "name must be valid UTF-8 of at most %d bytes", decoy.MaxNameLength)
	}
	return nil
}

func validStatus(n int) error {
	if n < 200 || n > 599 {
		return decoy.Errorf(decoy.EINVALID, "status must be an HTTP status from 200 to 599")
	}
	return nil
}

func validDelay(n int) error {
	if n < 0 || n > decoy.MaxDelayMS {
		return decoy.Errorf(decoy.EINVALID, "delay_ms must be from 0 to %d", decoy.MaxDelayMS)
	}
	return nil
}

func (s *API) getMock(w http.ResponseWriter, r *http.Request, id string) error {
	m, err := s.cfg.Store.FindMock(r.Context(), id)
	if err != nil {
		return err
	}
	answer.JSON(w, http.StatusOK, s.view(r, m, ""))
	return nil
}

// LiveHeader tells, on GET /admin/v1/mocks/{id}/data, whether the data is
// the mock's current version ("version") or live data that writes changed
// since ("changed").
const LiveHeader = "Decoy-Live"

func (s *API) getData(w http.ResponseWriter, r *http.Request, id string) error {
	e, err := s.cache.Get(r.Context(), id)
	if err != nil {
		return err
	}
	defer e.Release()
	h := w.Header()
	h.Set("Content-Type", e.Mock.ContentType)
	data := e.Bytes()
	h.Set("Content-Length", strconv.Itoa(len(data)))
	answer.SetHeader(h, "ETag", e.Mock.ETag)
	// Whether the data is the current version's, or live data that writes
	// through routes changed since (§12.2), for the Studio's Data tab.
	live := "version"
	if e.Changed() {
		live = "changed"
	}
	answer.SetHeader(h, LiveHeader, live)
	h.Set("X-Content-Type-Options", "nosniff")
	if e.Doc == nil {
		h.Set("Content-Security-Policy", "sandbox")
	}
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(data)
	return nil
}

func (s *API) replaceData(w http.ResponseWriter, r *http.Request, id string) error {
	up, err := s.readData(w, r)
	if err != nil {
		return err
	}
	defer up.discard()
	m, err := s.writeData(r, id, up)
	if err != nil {
		return err
	}
	answer.JSON(w, http.StatusOK, s.view(r, m, ""))
	return nil
}

// writeData makes an upload the data of mock id: every write of a mock's
// data (a PUT of it, a template's output) comes through here.
func (s *API) writeData(r *http.Request, id string, up *upload) (*decoy.Mock, error) {
	md := decoy.MockData{ContentType: up.contentType, Data: up.data(), ETag: jsondoc.ETag(up.doc.Bytes())}
	e, err := mockcache.NewEntry(&decoy.Mock{ContentType: up.contentType}, up.doc)
	if err != nil {
		return nil, err
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	ctx, cancel := writeContext(r)
	defer cancel()
	m, gen, err := s.replaceKeepingLive(ctx, id, md)
	s.announce(ctx, id)
	if err != nil {
		s.cache.Remove(id)
		return nil, err
	}
	e.Mock = m
	s.cache.PutAt(e, gen)
	return m, nil
}

func (s *API) patchMock(w http.ResponseWriter, r *http.Request, id string) error {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxPatchBytes))
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &mbe):
		return decoy.Errorf(decoy.ETOOLARGE, "The body of a PATCH is at most %d bytes", maxPatchBytes)
	case err != nil:
		return decoy.Errorf(decoy.EINVALID, "Could not read the request body")
	case !utf8.Valid(body):
		return decoy.NotUTF8(body)
	}
	upd, err := parsePatch(body)
	if err != nil {
		return err
	}
	return s.changeMock(w, r, id, func(cur *decoy.Mock) (decoy.MockUpdate, string, error) {
		token := ""
		if upd.Private != nil {
			switch {
			case *upd.Private && !cur.Private:
				token, upd.TokenHash = issueToken()
			case !*upd.Private:
				var none []byte
				upd.TokenHash = &none
			}
		}
		return upd, token, nil
	})
}

// issueToken returns a new mock token and its hash.
func issueToken() (string, *[]byte) {
	token := secret.New(TokenPrefix)
	h := secret.Hash(token)
	return token, &h
}

// changeMock applies to a mock the change that decide derives from its
// current settings (and the token it issued, if any), under the write lock,
// puts the result in the cache, and answers with it.
func (s *API) changeMock(w http.ResponseWriter, r *http.Request, id string,
	decide func(cur *decoy.Mock) (decoy.MockUpdate, string, error)) error {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	ctx, cancel := writeContext(r)
	defer cancel()
	cur, err := s.cfg.Store.FindMock(ctx, id)
	if err != nil {
		return err
	}
	upd, token, err := decide(cur)
	if err != nil {
		return err
	}
	gen := s.cache.Generation()
	m, err := s.cfg.Store.UpdateMock(ctx, id, upd)
	s.announce(ctx, id)
	if err != nil {
		s.cache.Remove(id)
		return err
	}
	s.cache.PutSettingsAt(m, gen)
	answer.JSON(w, http.StatusOK, s.view(r, m, token))
	return nil
}

// parsePatch reads the JSON object of a PATCH: any of name, private, status,
// delay_ms, rate_limit and monthly_quota (null: the server default).
func parsePatch(body []byte) (decoy.MockUpdate, error) {
	var upd decoy.MockUpdate
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(body, &fields); err != nil || fields == nil {
		return upd, decoy.Errorf(decoy.EINVALID, "The body must be a JSON object with any of name, private, status, delay_ms, rate_limit, monthly_quota")
	}
	var err error
	for name, raw := range fields {
		switch name {
		case "name":
			upd.Name, err = decodeField(name, raw, "a string", validName)
		case "private":
			upd.Private, err = decodeField[bool](name, raw, "true or false", nil)
		case "status":
			upd.Status, err = decodeField(name, raw, "an HTTP status from 200 to 599", validStatus)
		case "delay_ms":
			upd.DelayMS, err = decodeField(name, raw, "an integer", validDelay)
		case "rate_limit", "monthly_quota":
			what := "null (server default) or an integer of 0 or more (0: unlimited)"
			if name == "rate_limit" {
				what = "null (server default) or an integer from 0 to " + strconv.Itoa(decoy.MaxRateLimit) + " (0: unlimited)"
			}
			lu := &decoy.LimitUpdate{}
			if string(raw) != "null" {
				lu.Value, err = decodeField(name, raw, what, func(n int64) error {
					if n < 0 || name == "rate_limit" && decoy.CheckRateLimit(name, n) != nil {
						return decoy.Errorf(decoy.EINVALID, "%s must be %s", name, what)
					}
					return nil
				})
			}
			if name == "rate_limit" {
				upd.RateLimit = lu
			} else {
				upd.MonthlyQuota = lu
			}
		default:
			err = decoy.Errorf(decoy.EINVALID, "Unknown field: %s", name)
		}
		if err != nil {
			return upd, err
		}
	}
	return upd, nil
}

// decodeField decodes one PATCH field, which must be a T (described by
// what) and pass valid when given.
func decodeField[T any](name string, raw json.RawMessage, what string, valid func(T) error) (*T, error) {
	var v T
	if string(raw) == "null" || json.Unmarshal(raw, &v) != nil {
		return nil, decoy.Errorf(decoy.EINVALID, "%s must be %s", name, what)
	}
	if valid != nil {
		if err := valid(v); err != nil {
			return nil, err
		}
	}
	return &v, nil
}

func (s *API) rotateToken(w http.ResponseWriter, r *http.Request, id string) error {
	return s.changeMock(w, r, id, func(cur *decoy.Mock) (decoy.MockUpdate, string, error) {
		if !cur.Private {
			return decoy.MockUpdate{}, "", decoy.Errorf(decoy.ECONFLICT, "Mock api is not private; set private to true to issue a token")
		}
		token, hash := issueToken()
		return decoy.MockUpdate{TokenHash: hash}, token, nil
	})
}

func (s *API) usage(w http.ResponseWriter, r *http.Request, id string) error {
	ctx := r.Context()
	m, err := s.cfg.Store.FindMock(ctx, id)
	if err != nil {
		return err
	}
	now := s.cfg.Now()
	var u decoy.Usage
	u.Minute.Limit = m.EffectiveRateLimit(s.cfg.DefaultRateLimit)
	if u.Minute.Limit > 0 {
		res, err := s.cfg.Limiter.Peek(ctx, decoy.RateKey(id), u.Minute.Limit)
		if err != nil {
			return err
		}
		u.Minute.Used = res.Used
	}
	u.Month.Limit = m.EffectiveMonthlyQuota(s.cfg.DefaultMonthlyQuota)
	if u.Month.Used, err = s.cfg.Quota.QuotaUsed(ctx, id, decoy.Month(now)); err != nil {
		return err
	}
	u.Month.ResetsAt = decoy.MonthEnd(now)
	answer.JSON(w, http.StatusOK, u)
	return nil
}

func (s *API) deleteMock(w http.ResponseWriter, r *http.Request, id string) error {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	ctx, cancel := writeContext(r)
	defer cancel()
	if err := s.removeMock(ctx, id); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
