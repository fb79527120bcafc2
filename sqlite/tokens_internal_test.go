package sqlite

import (
	"context"
	"database/sql"
	"io/fs"
	"path/filepath"
	"testing"
	"time"

	"github.com/decoy-mock/decoy"
)

// A data directory whose personal access tokens have no id, name or last
// use (the schema before 0018) opens with each token still working, named
// "token", with an id of its own that lists and revokes it.
func TestMigrateAccessTokenNames(t *testing.T) {
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
	// The files before the step 0016, which is Go's (Open takes it and
	// those after): access_tokens is as 0010 made it until 0018.
	for _, name := range names {
		if filepath.Base(name) >= "0016" {
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
	user := "00000000-0000-4000-8000-0000000000a1"
	exec(`INSERT INTO users (id, email, email_key, name, password_hash, created_at) VALUES (?, 'ann@example.com', 'ann@example.com', 'Ann', X'01', 1)`, user)
	expires := time.Now().Add(time.Hour)
	for _, h := range []string{"t1", "t2"} {
		exec(`INSERT INTO access_tokens (hash, user_id, created_at, expires_at) VALUES (?, ?, ?, ?)`, []byte(h), user, 1, expires.UnixMilli())
	}
	raw.Close()

	db, err := Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	now := time.Now()
	tok, u, err := db.FindAccessToken(ctx, []byte("t1"), now)
	if err != nil || u.ID != user || tok.Name != "token" || tok.LastUsedAt != nil {
		t.Fatalf("FindAccessToken = %+v, %+v, %v", tok, u, err)
	}
	ts, err := db.ListAccessTokens(ctx, user, now)
	if err != nil || len(ts) != 2 {
		t.Fatalf("ListAccessTokens = %d tokens, %v", len(ts), err)
	}
	for _, x := range ts {
		if id, ok := decoy.CanonicalID(x.ID); !ok || id != x.ID {
			t.Errorf("token id %q is not a UUID in canonical form", x.ID)
		}
	}
	if ts[0].ID == ts[1].ID {
		t.Errorf("two tokens share the id %s", ts[0].ID)
	}
	if _, err := db.RevokeAccessToken(ctx, user, tok.ID); err != nil {
		t.Fatal(err)
	}
	if _, _, err := db.FindAccessToken(ctx, []byte("t1"), now); decoy.ErrorCode(err) != decoy.ENOTFOUND {
		t.Errorf("a revoked token: %v", err)
	}
	if _, _, err := db.FindAccessToken(ctx, []byte("t2"), now); err != nil {
		t.Errorf("the other token: %v", err)
	}
}
