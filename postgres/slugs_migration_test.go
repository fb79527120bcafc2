package postgres_test

import (
	"context"
	"os"
	"testing"

	"github.com/decoy-mock/decoy"
)

// A database of the schema before routes opens with a slug for every
// project, derived from its name in creation order, but for the default
// project of the default workspace, which has "default" whenever it was
// made.
func TestMigrateToSlugs(t *testing.T) {
	_, u := newSchema(t)
	ctx := context.Background()
	conn := connect(t, u)
	exec := func(sql string, args ...any) {
		t.Helper()
		if _, err := conn.Exec(ctx, sql, args...); err != nil {
			t.Fatalf("%.60s: %v", sql, err)
		}
	}
	exec(`CREATE TABLE schema_migrations (name text NOT NULL PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`)
	for _, name := range migrationNames(t) {
		if name >= "0015" {
			continue
		}
		sql, err := os.ReadFile("migration/" + name)
		if err != nil {
			t.Fatal(err)
		}
		exec(string(sql))
		exec(`INSERT INTO schema_migrations (name) VALUES ($1)`, name)
	}
	ws := []string{"00000000-0000-4000-8000-0000000000a1", "00000000-0000-4000-8000-0000000000a2", "00000000-0000-4000-8000-0000000000a3"}
	for i, w := range ws {
		exec(`INSERT INTO workspaces (id, name, created_at) VALUES ($1, $2, now())`, w, "w"+string(rune('1'+i)))
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
		exec(`INSERT INTO projects (id, workspace_id, name, created_at) VALUES ($1, $2, $3, now())`, p.id, p.workspace, p.name)
	}
	// The default project, made again after the others: it still comes
	// first.
	exec(`DELETE FROM projects WHERE id = $1`, decoy.DefaultProjectID)
	exec(`INSERT INTO projects (id, workspace_id, name, created_at) VALUES ($1, $2, 'default', now())`, decoy.DefaultProjectID, decoy.DefaultWorkspaceID)
	conn.Close(ctx)

	db := open(t, u)
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
	conn = connect(t, u)
	defer conn.Close(ctx)
	for _, slug := range []any{nil, "default"} {
		if _, err := conn.Exec(ctx, `INSERT INTO projects (id, workspace_id, name, slug, created_at) VALUES ('x', $1, 'x', $2, now())`, ws[0], slug); err == nil {
			t.Errorf("a project with the slug %v was stored", slug)
		}
	}
}
