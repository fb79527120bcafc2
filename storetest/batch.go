package storetest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/decoy-mock/decoy"
)

// BatchBackend is a store that creates mocks in batches.
type BatchBackend interface {
	Backend
	decoy.MockBatchStore
	decoy.TemplateStore
	decoy.TeamStore
}

// RunBatch runs the suite of decoy.MockBatchStore. open returns an empty
// store for each test.
func RunBatch(t *testing.T, open func(t *testing.T) BatchBackend) {
	t.Run("CreateMocks", func(t *testing.T) { testCreateMocks(t, open(t)) })
	t.Run("CreateMocksAllOrNothing", func(t *testing.T) { testCreateMocksAllOrNothing(t, open(t)) })
	t.Run("CreateMocksFromFiles", func(t *testing.T) { testCreateMocksFromFiles(t, open(t)) })
	t.Run("CreateMocksWithTemplates", func(t *testing.T) { testCreateMocksWithTemplates(t, open(t)) })
	t.Run("CreateMocksWorkspaceLimits", func(t *testing.T) { testCreateMocksWorkspaceLimits(t, open(t)) })
}

func batch(ns ...int) []decoy.NewMock {
	var out []decoy.NewMock
	for _, n := range ns {
		out = append(out, decoy.NewMock{
			Mock: &decoy.Mock{ID: id(n), Name: fmt.Sprintf("mock %d", n), ContentType: "application/json", Status: 200 + n, ETag: `"e"`,
				Private: n%2 == 0, TokenHash: []byte("hash"), RateLimit: ptr(int64(n))},
			Data: bytesOf(fmt.Sprintf("[%d]", n)),
		})
	}
	return out
}

func testCreateMocks(t *testing.T, s BatchBackend) {
	ctx := context.Background()
	created, err := s.CreateMocks(ctx, batch(1, 2, 3))
	if err != nil {
		t.Fatal(err)
	}
	if len(created) != 3 {
		t.Fatalf("%d mocks created", len(created))
	}
	for i, n := range []int{1, 2, 3} {
		m := created[i]
		if m.ID != id(n) || m.Status != 200+n || m.Private != (n%2 == 0) || *m.RateLimit != int64(n) || m.Size != 3 || m.Version != 1 || m.CreatedAt.IsZero() {
			t.Errorf("created[%d] = %+v", i, m)
		}
		if data, err := find(t, s, n); err != nil || data != fmt.Sprintf("[%d]", n) {
			t.Errorf("mock %d data %q, %v", n, data, err)
		}
	}
	if created, err := s.CreateMocks(ctx, nil); err != nil || len(created) != 0 {
		t.Errorf("an empty batch: %v %v", created, err)
	}
	mocks, _, err := s.ListMocks(ctx, "", 10)
	if err != nil || len(mocks) != 3 || mocks[0].ID != id(1) || mocks[2].ID != id(3) {
		t.Errorf("listed in creation order: %v %v", mocks, err)
	}
}

// testCreateMocksAllOrNothing: a batch whose last mock's id is taken, or
// that gives an id twice, creates nothing, and says which id.
func testCreateMocksAllOrNothing(t *testing.T, s BatchBackend) {
	ctx := context.Background()
	create(t, s, 9, `"taken"`)
	for name, b := range map[string][]decoy.NewMock{
		"taken":  batch(1, 2, 9),
		"twice":  append(batch(3, 4), batch(3)...),
		"taken1": batch(9, 5),
	} {
		_, err := s.CreateMocks(ctx, b)
		wantCode(t, err, decoy.ECONFLICT)
		if !strings.Contains(err.Error(), b[len(b)-1].Mock.ID) && !strings.Contains(err.Error(), id(9)) {
			t.Errorf("%s: the error does not name the id: %v", name, err)
		}
	}
	mocks, _, err := s.ListMocks(ctx, "", 10)
	if err != nil || len(mocks) != 1 || mocks[0].ID != id(9) {
		t.Fatalf("after refused batches: %d mocks (%v)", len(mocks), err)
	}
	if data, err := find(t, s, 9); err != nil || data != `"taken"` {
		t.Errorf("the mock in the way: %q %v", data, err)
	}
	// The ids of a refused batch are free.
	if _, err := s.CreateMocks(ctx, batch(1, 2)); err != nil {
		t.Fatal(err)
	}
}

// testCreateMocksFromFiles: documents given as files are taken over as
// CreateMock takes them, and a refused batch leaves the stored data whole.
func testCreateMocksFromFiles(t *testing.T, s BatchBackend) {
	ctx := context.Background()
	dir := t.TempDir()
	var b []decoy.NewMock
	for i, n := range []int{1, 2} {
		data := []byte(fmt.Sprintf(`{"file":%d}`, n))
		path := filepath.Join(dir, fmt.Sprint(i))
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		nm := batch(n)[0]
		nm.Data = decoy.Data{Bytes: data, File: f}
		b = append(b, nm)
	}
	if _, err := s.CreateMocks(ctx, b); err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{1, 2} {
		if data, err := find(t, s, n); err != nil || data != fmt.Sprintf(`{"file":%d}`, n) {
			t.Errorf("mock %d: %q %v", n, data, err)
		}
	}
}

// testCreateMocksWithTemplates: a mock of a batch keeps the template it is
// created with.
func testCreateMocksWithTemplates(t *testing.T, s BatchBackend) {
	ctx := context.Background()
	b := batch(1, 2)
	b[1].Template = &decoy.Template{Mode: decoy.TemplateAlways, ContentType: "application/schema+json", Body: []byte(`{"type":"integer"}`)}
	created, err := s.CreateMocks(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	if created[0].TemplateMode != "" || created[1].TemplateMode != decoy.TemplateAlways {
		t.Errorf("template modes %q %q", created[0].TemplateMode, created[1].TemplateMode)
	}
	tpl, err := s.FindTemplate(ctx, id(2))
	if err != nil || tpl.Mode != decoy.TemplateAlways || tpl.ContentType != "application/schema+json" || string(tpl.Body) != `{"type":"integer"}` {
		t.Errorf("FindTemplate = %+v, %v", tpl, err)
	}
	_, err = s.FindTemplate(ctx, id(1))
	wantCode(t, err, decoy.ENOTFOUND)
}

// testCreateMocksWorkspaceLimits: a batch goes to its mocks' project, and
// one that would take their workspace past max_mocks or max_bytes, as a
// whole, stores nothing.
func testCreateMocksWorkspaceLimits(t *testing.T, s BatchBackend) {
	ctx := context.Background()
	created, err := s.CreateMocks(ctx, batch(1))
	if err != nil {
		t.Fatal(err)
	}
	if created[0].ProjectID != decoy.DefaultProjectID || created[0].WorkspaceID != decoy.DefaultWorkspaceID {
		t.Errorf("placed in %s/%s, want the default project", created[0].WorkspaceID, created[0].ProjectID)
	}
	if _, err := s.UpdateWorkspace(ctx, decoy.DefaultWorkspaceID, decoy.WorkspaceUpdate{Limits: map[string]*int64{"max_mocks": ptr(int64(3))}}); err != nil {
		t.Fatal(err)
	}
	_, err = s.CreateMocks(ctx, batch(2, 3, 4))
	wantCode(t, err, decoy.EFORBIDDEN)
	if mocks, _, _ := s.ListMocks(ctx, "", 10); len(mocks) != 1 {
		t.Errorf("%d mocks after a batch past max_mocks", len(mocks))
	}
	if _, err := s.CreateMocks(ctx, batch(2, 3)); err != nil {
		t.Errorf("a batch up to max_mocks: %v", err)
	}
	if _, err := s.UpdateWorkspace(ctx, decoy.DefaultWorkspaceID, decoy.WorkspaceUpdate{Limits: map[string]*int64{"max_bytes": ptr(int64(100)), "max_mocks": nil}}); err != nil {
		t.Fatal(err)
	}
	// Each fits alone; the two do not.
	big := batch(5, 6)
	for i := range big {
		big[i].Data = bytesOf(fmt.Sprintf("[%q]", strings.Repeat("x", 40)+strings.Repeat("y", 20)))
	}
	_, err = s.CreateMocks(ctx, big)
	wantCode(t, err, decoy.EFORBIDDEN)
	if mocks, _, _ := s.ListMocks(ctx, "", 10); len(mocks) != 3 {
		t.Errorf("%d mocks after a batch past max_bytes", len(mocks))
	}
	p := "00000000-0000-4000-8000-00000000dead"
	nm := batch(7)
	nm[0].Mock.ProjectID = p
	_, err = s.CreateMocks(ctx, nm)
	wantCode(t, err, decoy.ENOTFOUND)
}
