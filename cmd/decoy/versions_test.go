package main_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/decoy-mock/decoy"
	"github.com/decoy-mock/decoy/client"
)

// The versions of a mock's data through the CLI, on the real binary with
// --max-versions 3: the list, a version's data, a restore, and the files
// of the docs folder, one per version kept.
func TestVersionsCLI(t *testing.T) {
	dir := t.TempDir()
	p := start(t, dir, "--admin-token", adminToken, "--max-versions", "3")
	out, errOut, code := decoyCLI(t, p, `["v1"]`, "mock", "create", "--file", "-")
	if code != 0 {
		t.Fatalf("create: %d %s", code, errOut)
	}
	var m client.Mock
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatal(err)
	}
	for i := 2; i <= 5; i++ {
		if _, errOut, code := decoyCLI(t, p, fmt.Sprintf(`["v%d"]`, i), "mock", "update", m.ID, "--file", "-"); code != 0 {
			t.Fatalf("update %d: %d %s", i, code, errOut)
		}
	}
	out, errOut, code = decoyCLI(t, p, "", "mock", "versions", m.ID)
	var list struct {
		Versions []decoy.Version `json:"versions"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &list) != nil {
		t.Fatalf("versions: %d %q %s", code, out, errOut)
	}
	if vs := list.Versions; len(vs) != 3 || vs[0].Version != 5 || !vs[0].Current || vs[2].Version != 3 || vs[1].Current ||
		vs[0].Actor.Kind != "server_admin" || vs[0].Size != 6 || vs[0].CreatedAt.IsZero() {
		t.Errorf("versions printed %s", out)
	}
	if docs, _ := os.ReadDir(filepath.Join(dir, "docs")); len(docs) != 3 {
		t.Errorf("%d files in docs/, want 3 (the versions kept)", len(docs))
	}
	if out, _, code := decoyCLI(t, p, "", "mock", "version-data", m.ID, "3"); code != 0 || out != `["v3"]` {
		t.Errorf("version-data 3: %d %q", code, out)
	}
	out, errOut, code = decoyCLI(t, p, "", "mock", "restore", m.ID, "3")
	if code != 0 || !strings.Contains(out, `"etag": `) {
		t.Fatalf("restore: %d %q %s", code, out, errOut)
	}
	if a := get(t, m.URL); a.body != `["v3"]` {
		t.Errorf("read after the restore: %q", a.body)
	}
	out, _, _ = decoyCLI(t, p, "", "mock", "versions", m.ID)
	if json.Unmarshal([]byte(out), &list); len(list.Versions) != 3 || list.Versions[0].Version != 6 {
		t.Errorf("versions after the restore: %s", out)
	}
	for _, tc := range []struct {
		args    []string
		code    int
		message string
	}{
		{[]string{"mock", "version-data", m.ID, "1"}, 1, "404 Version not found"},
		{[]string{"mock", "restore", m.ID, "2"}, 1, "404 Version not found"},
		{[]string{"mock", "restore", m.ID}, 2, "needs a mock (id or name) and a version"},
		{[]string{"mock", "version-data", m.ID, "x"}, 2, "the version is a number"},
		{[]string{"mock", "versions"}, 2, "needs a mock (id or name)"},
		{[]string{"mock", "versions", "0b9d7c8e-1d2f-4a3b-9c8d-7e6f5a4b3c2d"}, 1, "404 Mock api not found"},
		{[]string{"serve", "--data-dir", t.TempDir(), "--max-versions", "0"}, 1, "--max-versions must be from 1 to 1000"},
	} {
		_, errOut, code := decoyCLI(t, p, "", tc.args...)
		if code != tc.code || !strings.Contains(errOut, tc.message) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", tc.args, code, errOut, tc.code, tc.message)
		}
	}
	if err := p.admin().DeleteMock(context.Background(), m.ID); err != nil {
		t.Fatal(err)
	}
	if docs, _ := os.ReadDir(filepath.Join(dir, "docs")); len(docs) != 0 {
		t.Errorf("%d files in docs/ after the mock was deleted", len(docs))
	}
}

// A restore through one replica is seen by the other within a second, as
// any data written; the versions are the same through both.
func TestReplicasRestoreVersion(t *testing.T) {
	db := postgresURL(t)
	rd, prefix := redisURL(t)
	ps := startReplicas(t, 2, db, rd, prefix)
	a, b := ps[0], ps[1]
	ctx := context.Background()

	m := createMock(t, a, `[{"v":1}]`, client.CreateOptions{})
	path := "/mock/" + m.ID
	if _, err := a.admin().ReplaceData(ctx, m.ID, strings.NewReader(`[{"v":2}]`), "application/json"); err != nil {
		t.Fatal(err)
	}
	for _, p := range ps { // both have the current data cached
		if r := get(t, p.url+path); r.body != `[{"v":2}]` {
			t.Fatalf("read on %s: %d %s", p.url, r.status, r.body)
		}
	}
	if _, err := b.admin().RestoreVersion(ctx, m.ID, 1); err != nil {
		t.Fatal(err)
	}
	seenWithin(t, "restore", b, a, func(p *proc) bool { return get(t, p.url+path).body == `[{"v":1}]` })
	for _, p := range ps {
		vs, err := p.admin().Versions(ctx, m.ID)
		if err != nil || len(vs) != 3 || vs[0].Version != 3 || !vs[0].Current || vs[0].ETag != m.ETag {
			t.Errorf("versions through %s: %+v, %v", p.url, vs, err)
		}
		if _, data, err := p.admin().VersionData(ctx, m.ID, 2); err != nil || string(data) != `[{"v":2}]` {
			t.Errorf("version 2 through %s: %q, %v", p.url, data, err)
		}
	}
}
