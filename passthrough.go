package decoy

import "context"

// Pass-through and recording (§14 of the contract): a project may stand
// in front of a real backend, its upstream, and pass it the requests its
// routes do not answer, or all of them while recording its answers.

// Project modes (§14): what a project does with a request.
const (
	// ModeMock answers from routes only: unmatched requests get the 404
	// of §11.3. The default.
	ModeMock = "mock"
	// ModePassthrough forwards the requests that match no route to the
	// upstream and returns its answer.
	ModePassthrough = "passthrough"
	// ModeRecord forwards every request, and keeps each GET answer with a
	// JSON body as a mock with a route at its path.
	ModeRecord = "record"
)

// ValidMode reports whether m is one of the project modes.
func ValidMode(m string) bool {
	return m == ModeMock || m == ModePassthrough || m == ModeRecord
}

// MaxUpstreamLength is the longest upstream URL a project keeps.
const MaxUpstreamLength = 2048

// ProjectUpstream is a project's upstream and mode, as a store keeps
// them: Upstream "" is none, and then Mode is ModeMock.
type ProjectUpstream struct {
	Upstream string
	Mode     string
}

// UpstreamStore changes projects' upstreams and modes. Both stores
// implement it (on the RouteStore they are); storetest holds them to one
// behaviour.
type UpstreamStore interface {
	// SetProjectUpstream sets a project's upstream and mode. It is a
	// change of how the project answers, so the project's RoutesVersion
	// advances, as for a change of its routes. EINVALID when the mode is
	// not one of the modes, or is not ModeMock while Upstream is empty;
	// the caller checks the URL (see package upstream). Returns ENOTFOUND
	// "Project not found".
	SetProjectUpstream(ctx context.Context, projectID string, up ProjectUpstream) (*Project, error)
}

// CheckProjectUpstream is the store's check of an upstream and mode:
// EINVALID when they do not go together.
func CheckProjectUpstream(up ProjectUpstream) error {
	switch {
	case !ValidMode(up.Mode):
		return Errorf(EINVALID, "mode must be mock, passthrough or record")
	case up.Upstream == "" && up.Mode != ModeMock:
		return Errorf(EINVALID, "mode %s needs an upstream", up.Mode)
	case len(up.Upstream) > MaxUpstreamLength:
		return Errorf(EINVALID, "upstream must be at most %d characters", MaxUpstreamLength)
	}
	return nil
}
