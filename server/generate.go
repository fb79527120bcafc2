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
	t, err := s.template(r.Context(), e.Mock)
	if err != nil {
		return nil, err
	}
	out, err := t.Run(seed, generate.NewLimits(s.cfg.MaxDataBytes, s.cfg.GenerateTimeout))
	if err != nil {
		return nil, err
	}
	m := *e.Mock
	m.ContentType, m.Size, m.ETag = "application/json", int64(len(out)), jsondoc.ETag(out)
	return mockcache.NewAnswerEntry(&m, docfile.FromBytes(out))
}

// template returns mock m's template, compiled.
func (s *Server) template(ctx context.Context, m *decoy.Mock) (*generate.Template, error) {
	if s.cfg.Templates == nil {
		return nil, answer.ErrNoTemplates
	}
	return s.templates.Get(ctx, s.cfg.Templates, m)
}
