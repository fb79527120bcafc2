package storetest

import (
	"context"
	"testing"

	"github.com/decoy-mock/decoy"
)

// TemplateBackend is a store that keeps templates.
type TemplateBackend interface {
	Backend
	decoy.TemplateStore
}

// RunTemplates runs the suite of templates. open returns an empty store
// for each test.
func RunTemplates(t *testing.T, open func(t *testing.T) TemplateBackend) {
	t.Run("SetFindDelete", func(t *testing.T) { testTemplates(t, open(t)) })
	t.Run("NotFound", func(t *testing.T) { testTemplatesNotFound(t, open(t)) })
}

func testTemplates(t *testing.T, s TemplateBackend) {
	ctx := context.Background()
	m0 := create(t, s, 1, `[]`)
	if m0.TemplateMode != "" {
		t.Fatalf("new mock: TemplateMode %q, want none", m0.TemplateMode)
	}
	tpl := decoy.Template{Mode: decoy.TemplateAlways, ContentType: "application/schema+json", Body: []byte(`{"type":"integer"}`)}
	m, err := s.SetTemplate(ctx, id(1), tpl)
	if err != nil {
		t.Fatalf("SetTemplate: %v", err)
	}
	if m.TemplateMode != decoy.TemplateAlways || m.Version <= m0.Version || m.ETag != m0.ETag {
		t.Fatalf("after SetTemplate: mode %q version %d (was %d) etag %s (was %s): want always, a new version, the same data",
			m.TemplateMode, m.Version, m0.Version, m.ETag, m0.ETag)
	}
	for name, get := range map[string]func() (*decoy.Mock, error){
		"FindMock": func() (*decoy.Mock, error) { return s.FindMock(ctx, id(1)) },
		"FindMockData": func() (*decoy.Mock, error) {
			m, d, err := s.FindMockData(ctx, id(1))
			if err == nil && read(t, d) != `[]` {
				t.Errorf("FindMockData: the data changed")
			}
			return m, err
		},
		"ListMocks": func() (*decoy.Mock, error) {
			ms, _, err := s.ListMocks(ctx, "", 10)
			if err != nil || len(ms) != 1 {
				t.Fatalf("ListMocks: %d mocks, %v", len(ms), err)
			}
			return ms[0], nil
		},
	} {
		got, err := get()
		if err != nil || got.TemplateMode != decoy.TemplateAlways || got.Version != m.Version {
			t.Errorf("%s: mode %q version %d, %v; want always, %d", name, got.TemplateMode, got.Version, err, m.Version)
		}
	}
	got, err := s.FindTemplate(ctx, id(1))
	if err != nil || got.Mode != tpl.Mode || got.ContentType != tpl.ContentType || string(got.Body) != string(tpl.Body) {
		t.Fatalf("FindTemplate = %+v, %v; want %+v", got, err, tpl)
	}
	// Replaced whole.
	tpl2 := decoy.Template{Mode: decoy.TemplateOnce, ContentType: "application/json", Body: []byte(`{"a":"{{ name }}"}`)}
	if m, err = s.SetTemplate(ctx, id(1), tpl2); err != nil || m.TemplateMode != decoy.TemplateOnce {
		t.Fatalf("SetTemplate again: %v, %v", m, err)
	}
	if got, _ := s.FindTemplate(ctx, id(1)); got == nil || string(got.Body) != string(tpl2.Body) || got.ContentType != tpl2.ContentType {
		t.Fatalf("FindTemplate after a replace = %+v", got)
	}
	// Settings changes keep it.
	if m, err = s.UpdateMock(ctx, id(1), decoy.MockUpdate{Name: ptr("renamed")}); err != nil || m.TemplateMode != decoy.TemplateOnce {
		t.Fatalf("UpdateMock: mode %q, %v", m.TemplateMode, err)
	}
	before := m.Version
	if m, err = s.DeleteTemplate(ctx, id(1)); err != nil || m.TemplateMode != "" || m.Version <= before {
		t.Fatalf("DeleteTemplate: %+v, %v", m, err)
	}
	_, err = s.FindTemplate(ctx, id(1))
	wantCode(t, err, decoy.ENOTFOUND)
	if d, err := find(t, s, 1); err != nil || d != `[]` {
		t.Fatalf("data after DeleteTemplate = %q, %v; want it kept", d, err)
	}
	_, err = s.DeleteTemplate(ctx, id(1))
	wantCode(t, err, decoy.ENOTFOUND)

	// A mock deleted and created again has no template.
	if _, err := s.SetTemplate(ctx, id(1), tpl); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteMock(ctx, id(1)); err != nil {
		t.Fatal(err)
	}
	create(t, s, 1, `[]`)
	_, err = s.FindTemplate(ctx, id(1))
	wantCode(t, err, decoy.ENOTFOUND)
}

func testTemplatesNotFound(t *testing.T, s TemplateBackend) {
	ctx := context.Background()
	_, err := s.SetTemplate(ctx, id(9), decoy.Template{Mode: decoy.TemplateOnce, ContentType: "application/json", Body: []byte(`1`)})
	wantCode(t, err, decoy.ENOTFOUND)
	_, err = s.FindTemplate(ctx, id(9))
	wantCode(t, err, decoy.ENOTFOUND)
	_, err = s.DeleteTemplate(ctx, id(9))
	wantCode(t, err, decoy.ENOTFOUND)
}
