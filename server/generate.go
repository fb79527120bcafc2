package server

import (
	"context"
	"errors"
	"net/http"
	"time"

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
// releases it. It generates in a turn (generating): a server too busy
// answers 503, which refused reports.
func (s *Server) generated(r *http.Request, e *mockcache.Entry, seed uint64) (*mockcache.Entry, error) {
	var ge *mockcache.Entry
	err := s.generating(r.Context(), 0, func(lim generate.Limits) error {
		// One bound for the compile, if the template is not kept
		// compiled, and the run.
		t, err := s.template(r.Context(), e.Mock, lim)
		if err != nil {
			return err
		}
		out, err := t.Run(seed, lim)
		if err != nil {
			return err
		}
		m := *e.Mock
		m.ContentType, m.Size, m.ETag = "application/json", int64(len(out)), jsondoc.ETag(out)
		// Parsed in the turn too: work of the size of the output.
		ge, err = mockcache.NewAnswerEntry(&m, docfile.FromBytes(out))
		return err
	})
	return ge, err
}

// generating runs f in a turn to generate for ctx (see generate.Queue),
// within the bounds of a generation that starts with the turn and lasts
// at most run (0 or less: GenerateTimeout): the one way the read endpoint
// and the admin API generate. The time spent waiting for the turn never
// counts against the generation, so that a template is not called too
// slow for the load it met; a server too busy to give a turn in time
// answers 503 with Retry-After.
func (s *Server) generating(ctx context.Context, run time.Duration, f func(generate.Limits) error) error {
	lim, end, err := s.generation.Start(ctx, run)
	if err == nil {
		err = func() error {
			defer end() // even if f panics
			return f(lim)
		}()
	}
	if errors.Is(err, generate.ErrBusy) {
		return answer.New(http.StatusServiceUnavailable, decoy.ErrorMessage(err), "Retry-After", seconds(s.generation.RetryAfter()))
	}
	return err
}

// refused reports whether a generation failed for the server's sake (too
// busy, the client gone, the store unreachable) rather than the
// template's or the request's: a 503. The read then gives back its
// rate-limit slot, as other refusals do.
func refused(err error) bool {
	status, _, _ := answer.Of(err)
	return status == http.StatusServiceUnavailable
}

// template returns mock m's template, compiled (within lim).
func (s *Server) template(ctx context.Context, m *decoy.Mock, lim generate.Limits) (*generate.Template, error) {
	if s.cfg.Templates == nil {
		return nil, answer.ErrNoTemplates
	}
	return s.templates.Get(ctx, s.cfg.Templates, m, lim)
}
