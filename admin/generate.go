package admin

import (
	"cmp"
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"strconv"

	"github.com/decoy-mock/decoy"
	"github.com/decoy-mock/decoy/answer"
	"github.com/decoy-mock/decoy/docfile"
	"github.com/decoy-mock/decoy/generate"
	"github.com/decoy-mock/decoy/mockcache"
)

// This file is generated data (§7 of the contract) in the admin API: a
// mock's template, run once into its data or set to run on every read
// (which the server's read endpoint does), the preview, and the list of
// functions.

// generating runs f in a turn to generate for ctx (Config.Generate),
// within the turn's bounds: the compile and run of one template (with, for
// a template not kept compiled, its reading from the store), not the
// reading of the request or the writing of the data, which would hold the
// turn from others.
func (s *API) generating(ctx context.Context, f func(generate.Limits) error) error {
	return s.cfg.Generate(ctx, 0, f)
}

// seedOf returns the seed a request asks for, in the Decoy-Seed header or
// the seed parameter, or a new random one.
func seedOf(r *http.Request) (uint64, error) {
	return generate.ParseSeed(cmp.Or(r.Header.Get(generate.SeedHeader), r.URL.Query().Get("seed")))
}

// template returns mock m's template, compiled (within lim), from the
// cache the read endpoint keeps.
func (s *API) template(ctx context.Context, m *decoy.Mock, lim generate.Limits) (*generate.Template, error) {
	if s.cfg.Templates == nil {
		return nil, answer.ErrNoTemplates
	}
	return s.cfg.TemplateCache.Get(ctx, s.cfg.Templates, m, lim)
}

// readTemplate reads the template a request sends: JSON, or a JSON Schema
// (application/schema+json), of at most MaxDataBytes. It is compiled once
// read, within the bounds of its generation.
func (s *API) readTemplate(w http.ResponseWriter, r *http.Request) (decoy.Template, error) {
	tpl := decoy.Template{ContentType: r.Header.Get("Content-Type")}
	switch {
	case tpl.ContentType == "":
		tpl.ContentType = "application/json"
	case generate.IsSchema(tpl.ContentType):
		tpl.ContentType = generate.SchemaContentType
	case mockcache.IsJSON(tpl.ContentType):
		tpl.ContentType = "application/json"
	default:
		return tpl, decoy.Errorf(decoy.EUNSUPPORTED, "A template is JSON (application/json) or a JSON Schema (application/schema+json)")
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.cfg.MaxDataBytes))
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &mbe):
		return tpl, decoy.Errorf(decoy.ETOOLARGE, "Template larger than %d bytes (--max-data-bytes)", s.cfg.MaxDataBytes)
	case err != nil:
		return tpl, decoy.Errorf(decoy.EINVALID, "Could not read the request body")
	}
	tpl.Body = body
	return tpl, nil
}

// runTemplate compiles tpl and runs it with seed, both within lim.
func runTemplate(tpl decoy.Template, seed uint64, lim generate.Limits) ([]byte, error) {
	t, err := generate.Parse(tpl.ContentType, tpl.Body, lim)
	if err != nil {
		return nil, err
	}
	return t.Run(seed, lim)
}

// previewGenerate is POST /admin/v1/generate: the output of a template,
// stored nowhere.
func (s *API) previewGenerate(w http.ResponseWriter, r *http.Request, _ string) error {
	seed, err := seedOf(r)
	if err != nil {
		return err
	}
	tpl, err := s.readTemplate(w, r)
	if err != nil {
		return err
	}
	var out []byte
	if err := s.generating(r.Context(), func(lim generate.Limits) (err error) {
		out, err = runTemplate(tpl, seed, lim)
		return err
	}); err != nil {
		return err
	}
	h := w.Header()
	h.Set(generate.SeedHeader, strconv.FormatUint(seed, 10))
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(out)))
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(out)
	return nil
}

// listFunctions is GET /admin/v1/generate/functions.
func (s *API) listFunctions(w http.ResponseWriter, _ *http.Request, _ string) error {
	answer.JSON(w, http.StatusOK, struct {
		Functions []generate.Function `json:"functions"`
	}{generate.Functions()})
	return nil
}

// putTemplate is PUT /admin/v1/mocks/{id}/template?mode=once|always. The
// template runs once now in either mode, so that one that cannot run is
// refused; in "once" mode its output becomes the mock's data, written as
// an upload is.
func (s *API) putTemplate(w http.ResponseWriter, r *http.Request, id string) error {
	if s.cfg.Templates == nil {
		return answer.ErrNoTemplates
	}
	mode := r.URL.Query().Get("mode")
	switch mode {
	case "":
		mode = decoy.TemplateOnce
	case decoy.TemplateOnce, decoy.TemplateAlways:
	default:
		return decoy.Errorf(decoy.EINVALID, "mode must be once or always")
	}
	seed, err := seedOf(r)
	if err != nil {
		return err
	}
	tpl, err := s.readTemplate(w, r)
	if err != nil {
		return err
	}
	tpl.Mode = mode
	if _, err := s.cfg.Store.FindMock(r.Context(), id); err != nil {
		return err
	}
	var out []byte
	if err := s.generating(r.Context(), func(lim generate.Limits) (err error) {
		out, err = runTemplate(tpl, seed, lim)
		return err
	}); err != nil {
		return err
	}
	if mode == decoy.TemplateOnce {
		if _, err := s.writeGenerated(r, id, out); err != nil {
			return err
		}
	}
	m, err := s.commitTemplate(r, id, func(ctx context.Context) (*decoy.Mock, error) {
		return s.cfg.Templates.SetTemplate(ctx, id, tpl)
	})
	if err != nil {
		return err
	}
	w.Header().Set(generate.SeedHeader, strconv.FormatUint(seed, 10))
	answer.JSON(w, http.StatusOK, s.view(r, m, ""))
	return nil
}

// commitTemplate applies a change of template under the write lock,
// announces it, and puts the mock's new settings in the cache.
func (s *API) commitTemplate(r *http.Request, id string, change func(context.Context) (*decoy.Mock, error)) (*decoy.Mock, error) {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	ctx, cancel := writeContext(r)
	defer cancel()
	gen := s.cache.Generation()
	m, err := change(ctx)
	s.announce(ctx, id)
	if err != nil {
		s.cache.Remove(id)
		return nil, err
	}
	s.cache.PutSettingsAt(m, gen)
	return m, nil
}

// writeGenerated makes generated output the mock's data, through the
// path of an upload.
func (s *API) writeGenerated(r *http.Request, id string, out []byte) (*decoy.Mock, error) {
	up, err := s.uploadBytes("application/json", out)
	if err != nil {
		return nil, err
	}
	defer up.discard()
	return s.writeData(r, id, up)
}

// uploadBytes makes an upload of data the server made itself, as readData
// makes one of a request's body.
func (s *API) uploadBytes(contentType string, b []byte) (*upload, error) {
	f, err := os.CreateTemp(s.cfg.UploadDir, "upload-*")
	if err != nil {
		return nil, uploadFileError("create", err)
	}
	u := &upload{contentType: contentType, file: f}
	if _, err := f.Write(b); err != nil {
		u.discard()
		return nil, uploadFileError("write", err)
	}
	if u.doc, err = docfile.Load(f); err != nil {
		u.discard()
		return nil, decoy.Errorf(decoy.EINTERNAL, "map upload: %v", err)
	}
	return u, nil
}

// getTemplate is GET /admin/v1/mocks/{id}/template: the template as it was
// sent, with its mode in Decoy-Template-Mode.
func (s *API) getTemplate(w http.ResponseWriter, r *http.Request, id string) error {
	if s.cfg.Templates == nil {
		return answer.ErrNoTemplates
	}
	tpl, err := s.cfg.Templates.FindTemplate(r.Context(), id)
	if err != nil {
		return err
	}
	h := w.Header()
	h.Set("Content-Type", tpl.ContentType)
	h.Set("Content-Length", strconv.Itoa(len(tpl.Body)))
	h.Set("Decoy-Template-Mode", tpl.Mode)
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(tpl.Body)
	return nil
}

// deleteTemplate is DELETE /admin/v1/mocks/{id}/template: the data stays.
func (s *API) deleteTemplate(w http.ResponseWriter, r *http.Request, id string) error {
	if s.cfg.Templates == nil {
		return answer.ErrNoTemplates
	}
	if _, err := s.commitTemplate(r, id, func(ctx context.Context) (*decoy.Mock, error) {
		return s.cfg.Templates.DeleteTemplate(ctx, id)
	}); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// regenerate is POST /admin/v1/mocks/{id}/regenerate: the "once" template
// runs again into new data.
func (s *API) regenerate(w http.ResponseWriter, r *http.Request, id string) error {
	if s.cfg.Templates == nil {
		return answer.ErrNoTemplates
	}
	seed, err := seedOf(r)
	if err != nil {
		return err
	}
	m, err := s.cfg.Store.FindMock(r.Context(), id)
	if err != nil {
		return err
	}
	switch m.TemplateMode {
	case "":
		return decoy.Errorf(decoy.ENOTFOUND, "Mock api has no template")
	case decoy.TemplateAlways:
		return decoy.Errorf(decoy.ECONFLICT, "Mock api's template runs on every read (mode always): there is nothing to regenerate")
	}
	var out []byte
	if err := s.generating(r.Context(), func(lim generate.Limits) error {
		t, err := s.template(r.Context(), m, lim)
		if err != nil {
			return err
		}
		out, err = t.Run(seed, lim)
		return err
	}); err != nil {
		return err
	}
	if m, err = s.writeGenerated(r, id, out); err != nil {
		return err
	}
	w.Header().Set(generate.SeedHeader, strconv.FormatUint(seed, 10))
	answer.JSON(w, http.StatusOK, s.view(r, m, ""))
	return nil
}
