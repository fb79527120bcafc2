package admin_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/decoy-mock/decoy"
	"github.com/decoy-mock/decoy/client"
	"github.com/decoy-mock/decoy/internal/servertest"
	"github.com/decoy-mock/decoy/server"
)

// newVersionsHarness is a harness whose server serves the versions its
// store keeps.
func newVersionsHarness(t *testing.T, configure ...func(*server.Config)) *servertest.Harness {
	t.Helper()
	return servertest.New(t, append([]func(*server.Config){func(c *server.Config) {
		c.Versions = c.Store.(decoy.VersionStore)
	}}, configure...)...)
}

// numbersOf returns the numbers of versions, in order, with the current
// one starred.
func numbersOf(vs []decoy.Version) string {
	var parts []string
	for _, v := range vs {
		s := fmt.Sprint(v.Version)
		if v.Current {
			s += "*"
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, " ")
}

// Each upload is a version; a version's data is served as stored, and a
// restore makes it the data again, as a new version, at once for readers.
func TestVersionsLifecycle(t *testing.T) {
	ctx := context.Background()
	h := newVersionsHarness(t)
	m := h.Create(`[{"v":1}]`, client.CreateOptions{Name: "users"})
	if _, err := h.Admin.ReplaceData(ctx, m.ID, strings.NewReader("v,2\n"), "text/csv"); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Admin.ReplaceData(ctx, m.ID, strings.NewReader(`[{"v":3}]`), ""); err != nil {
		t.Fatal(err)
	}
	vs, err := h.Admin.Versions(ctx, m.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got := numbersOf(vs); got != "3* 2 1" {
		t.Fatalf("versions = %s, want 3* 2 1", got)
	}
	if vs[2].ETag != m.ETag || vs[2].Size != m.Size || vs[1].Size != 4 || vs[0].Actor != decoy.ServerAdmin {
		t.Errorf("versions = %+v (mock %+v)", vs, m)
	}
	r := h.Get("/admin/v1/mocks/"+m.ID+"/versions/2/data", "Authorization", "Bearer "+servertest.AdminToken)
	if r.Status != 200 || r.Body != "v,2\n" || r.Header.Get("Content-Type") != "text/csv" ||
		r.Header.Get("ETag") != vs[1].ETag || r.Header.Get("X-Content-Type-Options") != "nosniff" {
		t.Errorf("version 2 data: %d %q %v", r.Status, r.Body, r.Header)
	}
	// Read once, so that the restore has a cached copy to replace.
	if r := h.Get("/mock/" + m.ID); r.Body != `[{"v":3}]` {
		t.Fatalf("read before the restore: %q", r.Body)
	}
	restored, err := h.Admin.RestoreVersion(ctx, m.ID, 1)
	if err != nil {
		t.Fatal(err)
	}
	if restored.ETag != m.ETag || restored.Size != m.Size || restored.ContentType != "application/json" || restored.URL == "" {
		t.Errorf("restore answered %+v", restored)
	}
	if r := h.Get("/mock/" + m.ID); r.Status != 200 || r.Body != `[{"v":1}]` || r.Header.Get("ETag") != m.ETag {
		t.Errorf("read after the restore: %d %q %s", r.Status, r.Body, r.Header.Get("ETag"))
	}
	if r := h.Get("/mock/" + m.ID + "?filters=v%3D3"); r.Status != 200 || r.Body != `[]` {
		t.Errorf("query after the restore: %d %q", r.Status, r.Body)
	}
	if _, data, err := h.Admin.Data(ctx, m.ID); err != nil || string(data) != `[{"v":1}]` {
		t.Errorf("data after the restore = %q, %v", data, err)
	}
	vs, _ = h.Admin.Versions(ctx, m.ID)
	if got := numbersOf(vs); got != "4* 3 2 1" || vs[0].ETag != m.ETag {
		t.Errorf("versions after the restore = %s (%+v)", got, vs[0])
	}
	// A version of another content type comes back with it.
	if _, err := h.Admin.RestoreVersion(ctx, m.ID, 2); err != nil {
		t.Fatal(err)
	}
	if r := h.Get("/mock/" + m.ID); r.Body != "v,2\n" || !strings.HasPrefix(r.Header.Get("Content-Type"), "text/csv") {
		t.Errorf("read after restoring the CSV: %q %s", r.Body, r.Header.Get("Content-Type"))
	}
	// A settings change is no version.
	if _, err := h.Admin.UpdateMock(ctx, m.ID, map[string]any{"name": "renamed"}); err != nil {
		t.Fatal(err)
	}
	if vs, _ := h.Admin.Versions(ctx, m.ID); numbersOf(vs) != "5* 4 3 2 1" {
		t.Errorf("versions after a rename = %s", numbersOf(vs))
	}
	// A deleted mock's versions are gone.
	if err := h.Admin.DeleteMock(ctx, m.ID); err != nil {
		t.Fatal(err)
	}
	_, err = h.Admin.Versions(ctx, m.ID)
	wantClientError(t, err, 404, "Mock api not found")
}

// Past the bound (20 by default), the oldest versions are forgotten.
func TestVersionsBound(t *testing.T) {
	ctx := context.Background()
	h := newVersionsHarness(t)
	m := h.Create(`1`, client.CreateOptions{})
	for i := 2; i <= 21; i++ {
		if _, err := h.Admin.ReplaceData(ctx, m.ID, strings.NewReader(fmt.Sprint(i)), ""); err != nil {
			t.Fatal(err)
		}
	}
	vs, err := h.Admin.Versions(ctx, m.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) != 20 || vs[0].Version != 21 || !vs[0].Current || vs[19].Version != 2 {
		t.Errorf("%d versions: %s", len(vs), numbersOf(vs))
	}
	_, _, err = h.Admin.VersionData(ctx, m.ID, 1)
	wantClientError(t, err, 404, "Version not found")
	_, err = h.Admin.RestoreVersion(ctx, m.ID, 1)
	wantClientError(t, err, 404, "Version not found")
	if _, data, err := h.Admin.VersionData(ctx, m.ID, 2); err != nil || string(data) != "2" {
		t.Errorf("version 2 = %q, %v", data, err)
	}
}

// Unknown mocks, versions and methods get the JSON error of each.
func TestVersionsErrors(t *testing.T) {
	h := newVersionsHarness(t)
	m := h.Create(`[]`, client.CreateOptions{})
	auth := []string{"Authorization", "Bearer " + servertest.AdminToken}
	base := "/admin/v1/mocks/" + m.ID + "/versions"
	none := "/admin/v1/mocks/0b9d7c8e-1d2f-4a3b-9c8d-7e6f5a4b3c2d/versions"
	for _, tc := range []struct {
		name, method, path string
		header             []string
		status             int
		msg                string
	}{
		{"no token", "GET", base, nil, 401, "Admin token required"},
		{"unknown mock", "GET", none, auth, 404, "Mock api not found"},
		{"unknown mock's version", "GET", none + "/1/data", auth, 404, "Mock api not found"},
		{"unknown mock's bad version", "GET", none + "/x/data", auth, 404, "Mock api not found"},
		{"unknown mock restored", "POST", none + "/1/restore", auth, 404, "Mock api not found"},
		{"not a mock id", "GET", "/admin/v1/mocks/nope/versions", auth, 404, "Mock api not found"},
		{"version not kept", "GET", base + "/2/data", auth, 404, "Version not found"},
		{"version not kept restored", "POST", base + "/2/restore", auth, 404, "Version not found"},
		{"version 0", "GET", base + "/0/data", auth, 404, "Version not found"},
		{"negative version", "GET", base + "/-1/data", auth, 404, "Version not found"},
		{"leading zero", "GET", base + "/01/data", auth, 404, "Version not found"},
		{"plus sign", "GET", base + "/+1/data", auth, 404, "Version not found"},
		{"not a number", "POST", base + "/abc/restore", auth, 404, "Version not found"},
		{"too large", "GET", base + "/99999999999999999999/data", auth, 404, "Version not found"},
		{"version alone", "GET", base + "/1", auth, 404, "Not found"},
		{"more after", "GET", base + "/1/data/x", auth, 404, "Not found"},
		{"unknown action", "POST", base + "/1/undo", auth, 404, "Not found"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			servertest.WantError(t, h.Do(tc.method, tc.path, tc.header...), tc.status, tc.msg)
		})
	}
	for _, tc := range []struct{ method, path, allow string }{
		{"PUT", base, "GET, POST"},
		{"DELETE", base, "GET, POST"},
		{"PUT", base + "/1/data", "GET"},
		{"GET", base + "/1/restore", "POST"},
	} {
		r := h.Do(tc.method, tc.path, auth...)
		servertest.WantError(t, r, 405, "Method not allowed")
		if r.Header.Get("Allow") != tc.allow {
			t.Errorf("%s %s: Allow %q, want %q", tc.method, tc.path, r.Header.Get("Allow"), tc.allow)
		}
	}
}

// A version larger than --max-data-bytes, lowered since it was stored, is
// refused as its upload would be, and nothing changes.
func TestRestoreTooLarge(t *testing.T) {
	ctx := context.Background()
	h := newVersionsHarness(t)
	big := `"` + strings.Repeat("x", 1<<20) + `"` // over the harness's 1 MiB
	id := "0b9d7c8e-1d2f-4a3b-9c8d-7e6f5a4b3c2e"
	if _, err := h.Store.CreateMock(ctx, &decoy.Mock{ID: id, ContentType: "application/json", Status: 200, ETag: `"big"`},
		decoy.Data{Bytes: []byte(big)}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Admin.ReplaceData(ctx, id, strings.NewReader(`[]`), ""); err != nil {
		t.Fatal(err)
	}
	_, err := h.Admin.RestoreVersion(ctx, id, 1)
	wantClientError(t, err, 413, fmt.Sprintf("Mock data larger than %d bytes (--max-data-bytes)", 1<<20))
	if vs, _ := h.Admin.Versions(ctx, id); numbersOf(vs) != "2* 1" {
		t.Errorf("versions after a refused restore = %s", numbersOf(vs))
	}
	// Its data can still be read.
	if _, data, err := h.Admin.VersionData(ctx, id, 1); err != nil || string(data) != big {
		t.Errorf("version 1: %d bytes, %v", len(data), err)
	}
}

// A server without a version store serves no versions.
func TestVersionsOff(t *testing.T) {
	h := servertest.New(t)
	m := h.Create(`[]`, client.CreateOptions{})
	servertest.WantError(t, h.Get("/admin/v1/mocks/"+m.ID+"/versions", "Authorization", "Bearer "+servertest.AdminToken), 404, "Not found")
}

// The versions answers are as the OpenAPI document describes them.
func TestOpenAPIVersions(t *testing.T) {
	router := servertest.OpenAPIRouter(t)
	h := newVersionsHarness(t)
	m := h.Create(`[1]`, client.CreateOptions{})
	if _, err := h.Admin.ReplaceData(context.Background(), m.ID, strings.NewReader(`[2]`), ""); err != nil {
		t.Fatal(err)
	}
	auth := "Bearer " + servertest.AdminToken
	base := "/admin/v1/mocks/" + m.ID + "/versions"
	none := "/admin/v1/mocks/0b9d7c8e-1d2f-4a3b-9c8d-7e6f5a4b3c2d/versions"
	for _, tc := range []struct {
		method, path, auth string
		status             int
	}{
		{"GET", base, auth, 200},
		{"GET", base, "Bearer wrong", 401},
		{"GET", none, auth, 404},
		{"GET", base + "/1/data", auth, 200},
		{"GET", base + "/9/data", auth, 404},
		{"POST", base + "/1/restore", auth, 200},
		{"POST", base + "/9/restore", auth, 404},
	} {
		h.CheckDocumented(t, router, tc.method, tc.path, nil, tc.status, "Authorization", tc.auth)
	}
}
