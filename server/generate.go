package server

import (
	"context"
	"net/http"

	"github.com/decoy-mock/decoy"
	"github.com/decoy-mock/decoy/answer"
	"github.com/decoy-mock/decoy/docfile"
	"github.com/decoy-mock/decoy/generate"
	"github.com/decoy-mock/decoy/jsondoc"
	"github.com/decoy-mock/decoy/mockcache"
)

// This file is the read side of generated data (§7 of the contract): the
// answer of a mock whose template runs on every read. The admin API sets
// templates and runs them once (admin/generate.go).

// generated returns an entry of mock e's data generated afresh from seed:
// an entry of its own, not kept in the cache, so that queries,
// ETags, gzip and the rest apply to it as to stored data. The caller
// releases it.
func (s *Server) generated(r *http.Request, e *mockcache.Entry, seed uint64) (*mockcache.Entry, error) {
	// One bound for the compile, if the template is not kept compiled,
	// and the run.
	lim := generate.NewLimits(r.Context(), s.cfg.MaxDataBytes, s.cfg.GenerateTimeout)
	t, err := s.template(r.Context(), e.Mock, lim)
	if err != nil {
		return nil, err
	}
	out, err := t.Run(seed, lim)
	if err != nil {
		return nil, err
	}
	m := *e.Mock
	m.ContentType, m.Size, m.ETag = "application/json", int64(len(out)), jsondoc.ETag(out)
	return mockcache.NewAnswerEntry(&m, docfile.FromBytes(out))
}

// template returns mock m's template, compiled (within lim).
func (s *Server) template(ctx context.Context, m *decoy.Mock, lim generate.Limits) (*generate.Template, error) {
	if s.cfg.Templates == nil {
		return nil, answer.ErrNoTemplates
	}
	return s.templates.Get(ctx, s.cfg.Templates, m, lim)
}
