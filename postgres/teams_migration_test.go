package postgres_test

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/decoy-mock/decoy"
)

// A database of the schema before teams (the migrations before 0010, mocks
// as that code stored them) opens with every mock in the default workspace
// and project, its data, settings, token and counts intact.
func TestMigrateToTeams(t *testing.T) {
	_, u := newSchema(t)
	ctx := context.Background()
	conn := connect(t, u)
	var applied []string
	for _, name := range migrationNames(t) {
		if name >= "0010" {
			continue
		}
		sql, err := os.ReadFile("migration/" + name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := conn.Exec(ctx, string(sql)); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		applied = append(applied, name)
	}
	if _, err := conn.Exec(ctx, `CREATE TABLE schema_migrations (name text NOT NULL PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`); err != nil {
		t.Fatal(err)
	}
	for _, name := range applied {
		if _, err := conn.Exec(ctx, `INSERT INTO schema_migrations (name) VALUES ($1)`, name); err != nil {
			t.Fatal(err)
		}
	}
	type old struct {
		id, name      string
		data          []byte
		private       bool
		token         []byte
		rate, quota   *int64
		status, delay int
	}
	seven, zero := int64(7), int64(0)
	mocks := []old{
		{id: "00000000-0000-4000-8000-000000000001", name: "users", data: []byte(`[{"a":1}]`), status: 200},
		{id: "00000000-0000-4000-8000-000000000002", name: "secret", data: document(2<<20 + 5), private: true, token: []byte{1, 2, 3},
			rate: &seven, quota: &zero, status: 201, delay: 250},
		{id: "00000000-0000-4000-8000-000000000003", name: "empty", data: []byte{}, status: 204},
	}
	created := time.Date(2026, 1, 2, 3, 4, 5, 6000000, time.UTC)
	for i, m := range mocks {
		if _, err := conn.Exec(ctx, `INSERT INTO mocks (id, name, private, token_hash, content_type, status, delay_ms, rate_limit, monthly_quota,
			size, etag, version, created_at, updated_at) VALUES ($1, $2, $3, $4, 'application/json', $5, $6, $7, $8, $9, '"e"', 3, $10, $11)`,
			m.id, m.name, m.private, m.token, m.status, m.delay, m.rate, m.quota, len(m.data), created.Add(time.Duration(i)*time.Second), created.Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		for n := 0; n*(1<<20) < len(m.data); n++ {
			chunk := m.data[n*(1<<20) : min((n+1)*(1<<20), len(m.data))]
			if _, err := conn.Exec(ctx, `INSERT INTO mock_chunks (mock_id, n, data) VALUES ($1, $2, $3)`, m.id, n, chunk); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := conn.Exec(ctx, `INSERT INTO quota_usage (mock_id, month, used) VALUES ($1, '2026-11', 42)`, mocks[1].id); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `INSERT INTO settings (key, value) VALUES ('admin_token_sha256', '\xabcd')`); err != nil {
		t.Fatal(err)
	}
	conn.Close(ctx)

	db := open(t, u)
	listed, _, err := db.ListMocks(ctx, "", 10)
	if err != nil || len(listed) != len(mocks) {
		t.Fatalf("ListMocks = %v, %v", listed, err)
	}
	for i, want := range mocks {
		m, d, err := db.FindMockData(ctx, want.id)
		if err != nil {
			t.Fatalf("%s: %v", want.id, err)
		}
		if got := readAll(t, d); !bytes.Equal(got, want.data) {
			t.Errorf("%s: %d bytes after the migration, want %d", want.id, len(got), len(want.data))
		}
		if m.WorkspaceID != decoy.DefaultWorkspaceID || m.ProjectID != decoy.DefaultProjectID || listed[i].ID != want.id || listed[i].ProjectID != decoy.DefaultProjectID {
			t.Errorf("%s: placed in %s/%s", want.id, m.WorkspaceID, m.ProjectID)
		}
		if m.Name != want.name || m.Private != want.private || !bytes.Equal(m.TokenHash, want.token) || m.Status != want.status ||
			m.DelayMS != want.delay || (m.RateLimit == nil) != (want.rate == nil) || (m.MonthlyQuota == nil) != (want.quota == nil) ||
			m.Version != 3 || !m.CreatedAt.Equal(created.Add(time.Duration(i)*time.Second)) || !m.UpdatedAt.Equal(created.Add(time.Hour)) ||
			m.Size != int64(len(want.data)) {
			t.Errorf("%s: settings changed: %+v", want.id, m)
		}
	}
	if used, err := db.QuotaUsed(ctx, mocks[1].id, "2026-11"); err != nil || used != 42 {
		t.Errorf("quota count after the migration: %d, %v", used, err)
	}
	if h, err := db.AdminTokenHash(ctx); err != nil || string(h) != "\xab\xcd" {
		t.Errorf("admin token hash: %x, %v", h, err)
	}
	if n, size, err := db.WorkspaceUsage(ctx, decoy.DefaultWorkspaceID); err != nil || n != 3 || size != int64(len(mocks[0].data)+len(mocks[1].data)) {
		t.Errorf("WorkspaceUsage = %d, %d, %v", n, size, err)
	}
	found, _, err := db.SearchMocks(ctx, decoy.MockFilter{ProjectID: decoy.DefaultProjectID, Q: "SECRET"}, "", 10)
	if err != nil || len(found) != 1 || !strings.HasSuffix(found[0].ID, "2") {
		t.Errorf("SearchMocks = %v, %v", found, err)
	}
	// The migrated mocks hold their project: it cannot go while they are in it.
	if _, err := db.DeleteProject(ctx, decoy.DefaultProjectID, false); decoy.ErrorCode(err) != decoy.ECONFLICT {
		t.Errorf("deleting the default project with mocks: %v", err)
	}
}
