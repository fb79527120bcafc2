package postgres_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/decoy-mock/decoy"
)

// A database whose personal access tokens have no id, name or last use
// (the schema before 0018) opens with each token still working, named
// "token", with an id of its own that lists and revokes it.
func TestMigrateAccessTokenNames(t *testing.T) {
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
	// The files before the step 0016, which is Go's (Open takes it and
	// those after): access_tokens is as 0010 made it until 0018.
	for _, name := range migrationNames(t) {
		if name >= "0016" {
			continue
		}
		sql, err := os.ReadFile("migration/" + name)
		if err != nil {
			t.Fatal(err)
		}
		exec(string(sql))
		exec(`INSERT INTO schema_migrations (name) VALUES ($1)`, name)
	}
	user := "00000000-0000-4000-8000-0000000000a1"
	exec(`INSERT INTO users (id, email, email_key, name, password_hash, created_at) VALUES ($1, 'ann@example.com', 'ann@example.com', 'Ann', '\x01', now())`, user)
	for _, h := range []string{"t1", "t2"} {
		exec(`INSERT INTO access_tokens (hash, user_id, created_at, expires_at) VALUES ($1, $2, now(), now() + interval '1 hour')`, []byte(h), user)
	}
	conn.Close(ctx)

	db := open(t, u)
	now := time.Now()
	tok, found, err := db.FindAccessToken(ctx, []byte("t1"), now)
	if err != nil || found.ID != user || tok.Name != "token" || tok.LastUsedAt != nil {
		t.Fatalf("FindAccessToken = %+v, %+v, %v", tok, found, err)
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
