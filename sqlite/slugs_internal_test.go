package sqlite

import (
	"context"
	"database/sql"
	"io/fs"
	"path/filepath"
	"testing"

	"github.com/decoy-mock/decoy"
)

// A data directory of the schema before routes opens with a slug for
// every project, derived from its name in creation order, but for the
// default project of the default workspace, which has "default" whenever
// it was made.
func TestMigrateToSlugs(t *testing.T) {
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
		if filepath.Base(name) >= "0015" {
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
	ws := []string{"00000000-0000-4000-8000-0000000000a1", "00000000-0000-4000-8000-0000000000a2", "00000000-0000-4000-8000-0000000000a3"}
	for i, w := range ws {
		exec(`INSERT INTO workspaces (id, name, created_at) VALUES (?, ?, 1)`, w, "w"+string(rune('1'+i)))
	}
	projects := []struct{ id, workspace, name, slug string }{
		{"00000000-0000-4000-8000-000000000001", ws[0], "default", "default-2"},
		{"00000000-0000-4000-8000-000000000002", ws[0], "My API!", "my-api"},
		{"00000000-0000-4000-8000-000000000003", ws[1], "default", "default-3"},
		{"00000000-0000-4000-8000-000000000004", ws[1], "my api", "my-api-2"},
		{"00000000-0000-4000-8000-000000000005", ws[1], "***", "project"},
		{"00000000-0000-4000-8000-000000000006", ws[1], "A", "a"},
		{"00000000-0000-4000-8000-000000000007", ws[1], "a 2", "a-2"},
		{"00000000-0000-4000-8000-000000000008", ws[2], "A", "a-3"},
		{"00000000-0000-4000-8000-000000000009", ws[2], "Ünïcode Tëst", "n-code-t-st"},
	}
	for _, p := range projects {
		exec(`INSERT INTO projects (id, workspace_id, name, created_at) VALUES (?, ?, ?, 2)`, p.id, p.workspace, p.name)
	}
	// The default project, made again after the others: it still comes
	// first.
	exec(`DELETE FROM projects WHERE id = ?`, decoy.DefaultProjectID)
	exec(`INSERT INTO projects (id, workspace_id, name, created_at) VALUES (?, ?, 'default', 3)`, decoy.DefaultProjectID, decoy.DefaultWorkspaceID)
	raw.Close()

	db, err := Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	projects = append(projects, struct{ id, workspace, name, slug string }{decoy.DefaultProjectID, decoy.DefaultWorkspaceID, "default", "default"})
	for _, want := range projects {
		p, err := db.FindProject(ctx, want.id)
		if err != nil {
			t.Fatal(err)
		}
		if p.Slug != want.slug || p.RoutesVersion != 0 {
			t.Errorf("project %q: slug %q, routes version %d; want %q, 0", want.name, p.Slug, p.RoutesVersion, want.slug)
		}
		if found, err := db.FindProjectBySlug(ctx, want.slug); err != nil || found.ID != want.id {
			t.Errorf("FindProjectBySlug(%s) = %+v, %v", want.slug, found, err)
		}
	}
	// Slugs are unique from now on, and new ones follow.
	if _, err := db.SetProjectSlug(ctx, projects[1].id, "default"); decoy.ErrorCode(err) != decoy.ECONFLICT {
		t.Errorf("a taken slug: %v", err)
	}
	if w, err := db.CreateWorkspace(ctx, &decoy.Workspace{Name: "new"}, ""); err != nil {
		t.Fatal(err)
	} else if ps, err := db.ListProjects(ctx, w.ID); err != nil || len(ps) != 1 || ps[0].Slug != "default-4" {
		t.Errorf("the default project of a new workspace: %+v, %v", ps, err)
	}
	for _, slug := range []string{"", "default"} {
		if _, err := db.writes.ExecContext(ctx, `INSERT INTO projects (id, workspace_id, name, slug, created_at) VALUES ('x', ?, 'x', ?, 1)`, ws[0], slug); err == nil {
			t.Errorf("a project with the slug %q was stored", slug)
		}
	}
}
