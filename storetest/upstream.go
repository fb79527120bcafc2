package storetest

import (
	"context"
	"testing"

	"github.com/decoy-mock/decoy"
)

// testProjectUpstream: a project starts in mode mock with no upstream;
// SetProjectUpstream sets both, every way of reading the project sees them,
// the project's RoutesVersion advances, and what does not go together is
// refused and leaves the project as it was.
func testProjectUpstream(t *testing.T, s RouteBackend) {
	ctx := context.Background()
	ws, err := s.CreateWorkspace(ctx, &decoy.Workspace{Name: "up"}, "")
	if err != nil {
		t.Fatal(err)
	}
	p, err := projectWithSlug(t, s, ws.ID, "shop", "shop")
	if err != nil {
		t.Fatal(err)
	}
	if p.Upstream != "" || p.Mode != decoy.ModeMock {
		t.Fatalf("new project: upstream %q, mode %q; want none, mock", p.Upstream, p.Mode)
	}
	before := routesVersion(t, s, p.ID)
	up := decoy.ProjectUpstream{Upstream: "https://api.example.com/v1", Mode: decoy.ModePassthrough}
	got, err := s.SetProjectUpstream(ctx, p.ID, up)
	if err != nil {
		t.Fatal(err)
	}
	if got.Upstream != up.Upstream || got.Mode != up.Mode || got.Slug != "shop" || got.Name != "shop" {
		t.Fatalf("SetProjectUpstream = %+v", got)
	}
	if v := routesVersion(t, s, p.ID); v <= before {
		t.Errorf("RoutesVersion %d after SetProjectUpstream, was %d: want it advanced", v, before)
	}
	read := map[string]func() (*decoy.Project, error){
		"FindProject":       func() (*decoy.Project, error) { return s.FindProject(ctx, p.ID) },
		"FindProjectBySlug": func() (*decoy.Project, error) { return s.FindProjectBySlug(ctx, "shop") },
		"ListProjects": func() (*decoy.Project, error) {
			ps, err := s.ListProjects(ctx, ws.ID)
			for _, q := range ps {
				if q.ID == p.ID {
					return q, err
				}
			}
			return nil, err
		},
		"RenameProject": func() (*decoy.Project, error) { return s.RenameProject(ctx, p.ID, "shop") },
		"SetProjectSlug": func() (*decoy.Project, error) {
			return s.SetProjectSlug(ctx, p.ID, "shop")
		},
	}
	for name, f := range read {
		q, err := f()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if q == nil || q.Upstream != up.Upstream || q.Mode != up.Mode {
			t.Errorf("%s = %+v; want upstream %q, mode %q", name, q, up.Upstream, up.Mode)
		}
	}

	refused := []struct {
		name string
		up   decoy.ProjectUpstream
	}{
		{"unknown mode", decoy.ProjectUpstream{Upstream: "http://x", Mode: "proxy"}},
		{"empty mode", decoy.ProjectUpstream{Upstream: "http://x"}},
		{"passthrough without upstream", decoy.ProjectUpstream{Mode: decoy.ModePassthrough}},
		{"record without upstream", decoy.ProjectUpstream{Mode: decoy.ModeRecord}},
	}
	for _, c := range refused {
		if _, err := s.SetProjectUpstream(ctx, p.ID, c.up); decoy.ErrorCode(err) != decoy.EINVALID {
			t.Errorf("%s: err %v; want EINVALID", c.name, err)
		}
	}
	if q, _ := s.FindProject(ctx, p.ID); q.Upstream != up.Upstream || q.Mode != up.Mode {
		t.Errorf("after refusals: %+v", q)
	}
	if _, err := s.SetProjectUpstream(ctx, "00000000-0000-0000-0000-000000000999", up); decoy.ErrorCode(err) != decoy.ENOTFOUND {
		t.Errorf("unknown project: err %v; want ENOTFOUND", err)
	}
	// Back to mock, with no upstream.
	got, err = s.SetProjectUpstream(ctx, p.ID, decoy.ProjectUpstream{Mode: decoy.ModeMock})
	if err != nil || got.Upstream != "" || got.Mode != decoy.ModeMock {
		t.Fatalf("cleared: %+v, %v", got, err)
	}
	// A project of another workspace, created after, is untouched.
	other, err := projectWithSlug(t, s, ws.ID, "other", "")
	if err != nil || other.Mode != decoy.ModeMock || other.Upstream != "" {
		t.Fatalf("other project: %+v, %v", other, err)
	}
}
