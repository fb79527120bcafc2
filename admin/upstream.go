package admin

import (
	"context"
	"net/http"

	"github.com/decoy-mock/decoy"
	"github.com/decoy-mock/decoy/answer"
	"github.com/decoy-mock/decoy/upstream"
)

// This file sets projects' upstreams and modes (§14 of the contract), by
// the project endpoints (PATCH and POST), for editors.

// upstreamFields are the fields of a project's body that set its upstream
// and mode: "upstream" (a base URL; "" for none) and "mode".
type upstreamFields struct {
	Upstream *string `json:"upstream"`
	Mode     *string `json:"mode"`
}

// given reports whether the body set either.
func (f upstreamFields) given() bool { return f.Upstream != nil || f.Mode != nil }

// errNoUpstreams answers a server whose store keeps no routes.
var errNoUpstreams = answer.New(http.StatusNotImplemented, "This server keeps no routes")

// upstreamOf is project p's upstream and mode once f is applied: the URL
// checked and written as ParseBase gives it, the mode one of the modes,
// and a mode other than mock only with an upstream. Errors are EINVALID.
func upstreamOf(p *decoy.Project, f upstreamFields) (decoy.ProjectUpstream, error) {
	up := decoy.ProjectUpstream{Upstream: p.Upstream, Mode: p.Mode}
	if up.Mode == "" {
		up.Mode = decoy.ModeMock
	}
	if f.Upstream != nil {
		up.Upstream = *f.Upstream
		if up.Upstream != "" {
			u, err := upstream.ParseBase(up.Upstream)
			if err != nil {
				return up, err
			}
			up.Upstream = u.String()
		}
	}
	if f.Mode != nil {
		up.Mode = *f.Mode
	}
	return up, decoy.CheckProjectUpstream(up)
}

// setUpstream applies f to project p and returns the project as stored;
// p itself when f changes nothing. The caller holds writeMu.
func (s *API) setUpstream(ctx context.Context, p *decoy.Project, f upstreamFields) (*decoy.Project, bool, error) {
	up, err := upstreamOf(p, f)
	if err != nil {
		return nil, false, err
	}
	if up.Upstream == p.Upstream && up.Mode == p.Mode {
		return p, false, nil
	}
	if s.cfg.Routes == nil {
		return nil, false, errNoUpstreams
	}
	updated, err := s.cfg.Routes.SetProjectUpstream(ctx, p.ID, up)
	if err != nil {
		return nil, false, err
	}
	s.routesChanged(ctx, p.ID)
	return updated, true, nil
}
