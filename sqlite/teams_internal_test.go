package sqlite

import (
	"context"
	"database/sql"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/decoy-mock/decoy"
	"github.com/decoy-mock/decoy/storetest"
)

// A data directory of the schema before teams (the migrations before
// 0010, mocks as that code stored them) opens with every mock in the
// default workspace and project, its data, settings, token and counts
// intact.
func TestMigrateToTeams(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	raw, err := sql.Open("sqlite", "file:"+filepath.Join(dir, FileName)+"?_foreign_keys=1")
	if err != nil {
		t.Fatal(err)
	}
	exec := func(query string, args ...any) {
		t.Helper()
		if _, err := raw.ExecContext(ctx, query, args...); err != nil {
			t.Fatalf("%.60s: %v", query, err)
		}
	}
	exec(`CREATE TABLE migrations (name TEXT PRIMARY KEY)`)
	names, err := fs.Glob(migrationFS, "migration/*.sql")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		if filepath.Base(name) >= "0010" {
			continue
		}
		body, err := fs.ReadFile(migrationFS, name)
		if err != nil {
			t.Fatal(err)
		}
		exec(string(body))
		exec(`INSERT INTO migrations (name) VALUES (?)`, name)
	}
	exec(`DROP TABLE mock_data`) // as the code of 0002_data_files did at its first Open
	if err := os.MkdirAll(filepath.Join(dir, DocsDir), 0o700); err != nil {
		t.Fatal(err)
	}
	type old struct {
		id, name, data string
		private        bool
		token          []byte
		rate, quota    any
		status, delay  int
	}
	mocks := []old{
		{id: "00000000-0000-4000-8000-000000000001", name: "users", data: `[{"a":1}]`, status: 200},
		{id: "00000000-0000-4000-8000-000000000002", name: "secret", data: `{"k":"v"}`, private: true, token: []byte{1, 2, 3},
			rate: int64(7), quota: int64(0), status: 201, delay: 250},
		{id: "00000000-0000-4000-8000-000000000003", name: "empty", data: "", status: 204},
	}
	for i, m := range mocks {
		file := m.id + "-00000000000000a" + string(rune('0'+i))
		if err := os.WriteFile(filepath.Join(dir, DocsDir, file), []byte(m.data), 0o600); err != nil {
			t.Fatal(err)
		}
		exec(`INSERT INTO mocks (id, name, private, token_hash, content_type, status, delay_ms, rate_limit, monthly_quota,
			size, etag, version, created_at, updated_at, data_file) VALUES (?, ?, ?, ?, 'application/json', ?, ?, ?, ?, ?, '"e"', 3, ?, ?, ?)`,
			m.id, m.name, m.private, m.token, m.status, m.delay, m.rate, m.quota, len(m.data), 1000+i, 2000+i, file)
	}
	exec(`INSERT INTO quota_usage (mock_id, month, used) VALUES (?, '2026-11', 42)`, mocks[1].id)
	exec(`INSERT INTO settings (key, value) VALUES ('admin_token_sha256', x'abcd')`)
	raw.Close()

	db, err := Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	listed, _, err := db.ListMocks(ctx, "", 10)
	if err != nil || len(listed) != len(mocks) {
		t.Fatalf("ListMocks = %v, %v", listed, err)
	}
	for i, want := range mocks {
		m, d, err := db.FindMockData(ctx, want.id)
		if err != nil {
			t.Fatalf("%s: %v", want.id, err)
		}
		b, _ := io.ReadAll(d.File)
		d.File.Close()
		if string(b) != want.data {
			t.Errorf("%s: data %q, want %q", want.id, b, want.data)
		}
		if m.WorkspaceID != decoy.DefaultWorkspaceID || m.ProjectID != decoy.DefaultProjectID || listed[i].ID != want.id || listed[i].ProjectID != decoy.DefaultProjectID {
			t.Errorf("%s: placed in %s/%s", want.id, m.WorkspaceID, m.ProjectID)
		}
		if m.Name != want.name || m.Private != want.private || string(m.TokenHash) != string(want.token) || m.Status != want.status ||
			m.DelayMS != want.delay || (m.RateLimit == nil) != (want.rate == nil) || (m.MonthlyQuota == nil) != (want.quota == nil) ||
			m.Version != 3 || m.CreatedAt.UnixMilli() != int64(1000+i) || m.UpdatedAt.UnixMilli() != int64(2000+i) || m.Size != int64(len(want.data)) {
			t.Errorf("%s: settings changed: %+v", want.id, m)
		}
	}
	if used, err := db.QuotaUsed(ctx, mocks[1].id, "2026-11"); err != nil || used != 42 {
		t.Errorf("quota count after the migration: %d, %v", used, err)
	}
	if h, err := db.AdminTokenHash(ctx); err != nil || string(h) != "\xab\xcd" {
		t.Errorf("admin token hash: %x, %v", h, err)
	}
	if mocks, bytes, err := db.WorkspaceUsage(ctx, decoy.DefaultWorkspaceID); err != nil || mocks != 3 || bytes != int64(len(`[{"a":1}]`)+len(`{"k":"v"}`)) {
		t.Errorf("WorkspaceUsage = %d, %d, %v", mocks, bytes, err)
	}
	found, _, err := db.SearchMocks(ctx, decoy.MockFilter{ProjectID: decoy.DefaultProjectID, Q: "SECRET"}, "", 10)
	if err != nil || len(found) != 1 || !strings.HasSuffix(found[0].ID, "2") {
		t.Errorf("SearchMocks = %v, %v", found, err)
	}
}

// The audit log of a workspace keeps its newest auditKeep entries.
func TestAuditRetention(t *testing.T) {
	keep, every := auditKeep, auditPruneEvery
	auditKeep, auditPruneEvery = 5, 1
	defer func() { auditKeep, auditPruneEvery = keep, every }()
	db, err := Open(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	storetest.RunAuditRetention(t, db, 5)
}

// A workspace's log is pruned whatever other workspaces append between.
func TestAuditPruneInterleaved(t *testing.T) {
	keep, every := auditKeep, auditPruneEvery
	auditKeep, auditPruneEvery = 5, 4
	defer func() { auditKeep, auditPruneEvery = keep, every }()
	db, err := Open(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	storetest.RunAuditPruneInterleaved(t, db, 5)
}
