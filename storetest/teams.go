package storetest

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/decoy-mock/decoy"
)

// TeamBackend is a store with teams (§6 of the contract).
type TeamBackend interface {
	Backend
	decoy.TeamStore
}

// RunTeams runs the suite of decoy.TeamStore. open returns an empty store
// (but for the default workspace and project) for each test.
func RunTeams(t *testing.T, open func(t *testing.T) TeamBackend) {
	t.Run("DefaultPlacement", func(t *testing.T) { testDefaultPlacement(t, open(t)) })
	t.Run("Users", func(t *testing.T) { testUsers(t, open(t)) })
	t.Run("AccessTokens", func(t *testing.T) { testAccessTokens(t, open(t)) })
	t.Run("AccessTokensBound", func(t *testing.T) { testAccessTokensBound(t, open(t)) })
	t.Run("AccessTokensListed", func(t *testing.T) { testAccessTokensListed(t, open(t)) })
	t.Run("AccessTokensEndWithPassword", func(t *testing.T) { testAccessTokensEndWithPassword(t, open(t)) })
	t.Run("Workspaces", func(t *testing.T) { testWorkspaces(t, open(t)) })
	t.Run("Members", func(t *testing.T) { testMembers(t, open(t)) })
	t.Run("LastOwner", func(t *testing.T) { testLastOwner(t, open(t)) })
	t.Run("Invitations", func(t *testing.T) { testInvitations(t, open(t)) })
	t.Run("PendingInvitations", func(t *testing.T) { testPendingInvitations(t, open(t)) })
	t.Run("Projects", func(t *testing.T) { testProjects(t, open(t)) })
	t.Run("ProjectsBound", func(t *testing.T) { testProjectsBound(t, open(t)) })
	t.Run("DeleteProject", func(t *testing.T) { testDeleteProject(t, open(t)) })
	t.Run("Keys", func(t *testing.T) { testKeys(t, open(t)) })
	t.Run("KeysBound", func(t *testing.T) { testKeysBound(t, open(t)) })
	t.Run("DeleteWorkspace", func(t *testing.T) { testDeleteWorkspace(t, open(t)) })
	t.Run("Limits", func(t *testing.T) { testLimits(t, open(t)) })
	t.Run("LimitsConcurrent", func(t *testing.T) { testLimitsConcurrent(t, open(t)) })
	t.Run("WorkspaceQuota", func(t *testing.T) { testWorkspaceQuota(t, open(t)) })
	t.Run("WorkspaceQuotaConcurrent", func(t *testing.T) { testWorkspaceQuotaConcurrent(t, open(t)) })
	t.Run("SearchMocks", func(t *testing.T) { testSearchMocks(t, open(t)) })
	t.Run("Audit", func(t *testing.T) { testAudit(t, open(t)) })
	t.Run("AuditBound", func(t *testing.T) { testAuditBound(t, open(t)) })
}

func hash(s string) []byte {
	h := sha256.Sum256([]byte(s))
	return h[:]
}

func mustUser(t *testing.T, s TeamBackend, email string) *decoy.User {
	t.Helper()
	u, err := s.CreateUser(context.Background(), &decoy.User{Email: email, Name: email, PasswordHash: []byte("argon2id$" + email)})
	if err != nil {
		t.Fatalf("CreateUser(%s): %v", email, err)
	}
	return u
}

func mustWorkspace(t *testing.T, s TeamBackend, name, ownerID string) *decoy.Workspace {
	t.Helper()
	w, err := s.CreateWorkspace(context.Background(), &decoy.Workspace{Name: name}, ownerID)
	if err != nil {
		t.Fatalf("CreateWorkspace(%s): %v", name, err)
	}
	return w
}

func mustProject(t *testing.T, s TeamBackend, workspaceID, name string) *decoy.Project {
	t.Helper()
	p, err := s.CreateProject(context.Background(), &decoy.Project{WorkspaceID: workspaceID, Name: name})
	if err != nil {
		t.Fatalf("CreateProject(%s): %v", name, err)
	}
	return p
}

// createIn creates mock n in a project ("" for the default one).
func createIn(t *testing.T, s TeamBackend, n int, projectID, name, data string) *decoy.Mock {
	t.Helper()
	m, err := s.CreateMock(context.Background(), &decoy.Mock{
		ID: id(n), Name: name, ProjectID: projectID, ContentType: "application/json", Status: 200, ETag: `"e"`,
	}, bytesOf(data))
	if err != nil {
		t.Fatalf("CreateMock(%d): %v", n, err)
	}
	return m
}

// wantError checks err's code and, when msg is not empty, its message.
func wantError(t *testing.T, err error, code, msg string) {
	t.Helper()
	if got := decoy.ErrorCode(err); got != code {
		t.Fatalf("error %v has code %q, want %q", err, got, code)
	}
	if msg != "" && decoy.ErrorMessage(err) != msg {
		t.Fatalf("error message %q, want %q", decoy.ErrorMessage(err), msg)
	}
}

func defaultProject(t *testing.T, s TeamBackend, workspaceID string) *decoy.Project {
	t.Helper()
	ps, err := s.ListProjects(context.Background(), workspaceID)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range ps {
		if p.Name == decoy.DefaultName {
			return p
		}
	}
	t.Fatalf("workspace %s has no default project: %v", workspaceID, ps)
	return nil
}

// The default workspace and project exist from the start; a mock made
// without a project goes there, and every way of reading it says so.
func testDefaultPlacement(t *testing.T, s TeamBackend) {
	ctx := context.Background()
	w, err := s.FindWorkspace(ctx, decoy.DefaultWorkspaceID)
	if err != nil || w.Name != decoy.DefaultName {
		t.Fatalf("default workspace: %+v, %v", w, err)
	}
	p, err := s.FindProject(ctx, decoy.DefaultProjectID)
	if err != nil || p.Name != decoy.DefaultName || p.WorkspaceID != decoy.DefaultWorkspaceID {
		t.Fatalf("default project: %+v, %v", p, err)
	}
	created := createIn(t, s, 1, "", "m", "[]")
	found, err := s.FindMock(ctx, id(1))
	if err != nil {
		t.Fatal(err)
	}
	withData, d, err := s.FindMockData(ctx, id(1))
	if err != nil {
		t.Fatal(err)
	}
	read(t, d)
	listed, _, err := s.ListMocks(ctx, "", 10)
	if err != nil || len(listed) != 1 {
		t.Fatal(listed, err)
	}
	for _, m := range []*decoy.Mock{created, found, withData, listed[0]} {
		if m.WorkspaceID != decoy.DefaultWorkspaceID || m.ProjectID != decoy.DefaultProjectID {
			t.Errorf("mock placed in %s/%s, want the defaults", m.WorkspaceID, m.ProjectID)
		}
	}
	other := mustWorkspace(t, s, "other", "")
	op := mustProject(t, s, other.ID, "api")
	m := createIn(t, s, 2, op.ID, "n", "{}")
	if m.WorkspaceID != other.ID || m.ProjectID != op.ID {
		t.Errorf("mock in project %s: placed in %s/%s", op.ID, m.WorkspaceID, m.ProjectID)
	}
	_, err = s.CreateMock(ctx, &decoy.Mock{ID: id(3), ProjectID: id(99), ContentType: "application/json", Status: 200}, bytesOf("[]"))
	wantError(t, err, decoy.ENOTFOUND, "Project not found")
	if _, err := s.FindMock(ctx, id(3)); decoy.ErrorCode(err) != decoy.ENOTFOUND {
		t.Errorf("a mock of an unknown project was stored: %v", err)
	}
}

func testUsers(t *testing.T, s TeamBackend) {
	ctx := context.Background()
	u, err := s.CreateUser(ctx, &decoy.User{Email: "Ann@Example.com", Name: "Ann", PasswordHash: []byte("h1"), ServerAdmin: true})
	if err != nil {
		t.Fatal(err)
	}
	if u.ID == "" || u.CreatedAt.IsZero() || u.Email != "Ann@Example.com" || !u.ServerAdmin || string(u.PasswordHash) != "h1" {
		t.Errorf("created %+v", u)
	}
	for _, email := range []string{"ann@example.com", "ANN@EXAMPLE.COM", "Ann@Example.com"} {
		_, err := s.CreateUser(ctx, &decoy.User{Email: email})
		if !errors.Is(err, decoy.ErrEmailTaken) && decoy.ErrorMessage(err) != decoy.ErrEmailTaken.Message {
			t.Errorf("CreateUser(%s): %v, want ErrEmailTaken", email, err)
		}
		wantError(t, err, decoy.ECONFLICT, "")
		found, err := s.FindUserByEmail(ctx, email)
		if err != nil || found.ID != u.ID {
			t.Errorf("FindUserByEmail(%s) = %+v, %v", email, found, err)
		}
	}
	_, err = s.FindUserByEmail(ctx, "bob@example.com")
	wantError(t, err, decoy.ENOTFOUND, "User not found")
	found, err := s.FindUser(ctx, u.ID)
	if err != nil || found.Email != u.Email || !found.CreatedAt.Equal(u.CreatedAt) {
		t.Errorf("FindUser = %+v, %v", found, err)
	}
	_, err = s.FindUser(ctx, id(9))
	wantError(t, err, decoy.ENOTFOUND, "User not found")

	upd, err := s.UpdateUser(ctx, u.ID, decoy.UserUpdate{Name: ptr("Anna"), PasswordHash: ptr([]byte("h2")), ServerAdmin: ptr(false)})
	if err != nil || upd.Name != "Anna" || string(upd.PasswordHash) != "h2" || upd.ServerAdmin || upd.Email != u.Email {
		t.Errorf("UpdateUser = %+v, %v", upd, err)
	}
	if upd, err := s.UpdateUser(ctx, u.ID, decoy.UserUpdate{}); err != nil || upd.Name != "Anna" {
		t.Errorf("empty UpdateUser = %+v, %v", upd, err)
	}
	_, err = s.UpdateUser(ctx, id(9), decoy.UserUpdate{Name: ptr("x")})
	wantError(t, err, decoy.ENOTFOUND, "User not found")

	// Paging, in creation order.
	want := []string{u.ID}
	for i := range 4 {
		want = append(want, mustUser(t, s, fmt.Sprintf("user%d@example.com", i)).ID)
	}
	var seen []string
	cursor := ""
	for pages := 0; ; pages++ {
		users, next, err := s.ListUsers(ctx, cursor, 2)
		if err != nil || len(users) > 2 || pages > 3 {
			t.Fatalf("page %d: %d users, %v", pages, len(users), err)
		}
		for _, u := range users {
			seen = append(seen, u.ID)
		}
		if next == "" {
			break
		}
		cursor = next
	}
	if !slices.Equal(seen, want) {
		t.Errorf("listed %v, want %v", seen, want)
	}
	for _, bad := range []struct {
		cursor string
		limit  int
	}{{"", 0}, {"x", 2}, {"-1", 2}, {"01", 2}} {
		if _, _, err := s.ListUsers(ctx, bad.cursor, bad.limit); decoy.ErrorCode(err) != decoy.EINVALID {
			t.Errorf("ListUsers(%q, %d): %v, want EINVALID", bad.cursor, bad.limit, err)
		}
	}

	if err := s.DeleteUser(ctx, u.ID); err != nil {
		t.Fatal(err)
	}
	_, err = s.FindUser(ctx, u.ID)
	wantError(t, err, decoy.ENOTFOUND, "User not found")
	wantError(t, s.DeleteUser(ctx, u.ID), decoy.ENOTFOUND, "User not found")
	// The email is free again.
	mustUser(t, s, "ann@example.com")
}

func testAccessTokens(t *testing.T, s TeamBackend) {
	ctx := context.Background()
	u := mustUser(t, s, "ann@example.com")
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	tok := &decoy.AccessToken{Name: "laptop", Hash: hash("pat1"), UserID: u.ID, CreatedAt: now, ExpiresAt: now.Add(90 * 24 * time.Hour)}
	if err := s.CreateAccessToken(ctx, tok); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		hash []byte
		at   time.Time
		ok   bool
	}{
		{"Fresh", hash("pat1"), now, true},
		{"LastMillisecond", hash("pat1"), tok.ExpiresAt.Add(-time.Millisecond), true},
		{"Expired", hash("pat1"), tok.ExpiresAt, false},
		{"Unknown", hash("pat2"), now, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tok, got, err := s.FindAccessToken(ctx, tt.hash, tt.at)
			if tt.ok {
				if err != nil || got.ID != u.ID || got.Email != u.Email || tok.UserID != u.ID || tok.Name != "laptop" {
					t.Errorf("FindAccessToken = %+v, %+v, %v", tok, got, err)
				}
				return
			}
			wantError(t, err, decoy.ENOTFOUND, "Access token not found")
		})
	}
	if tok.ID == "" {
		t.Error("CreateAccessToken filled in no id")
	}
	if deleted, err := s.DeleteAccessToken(ctx, hash("pat1")); err != nil || deleted.ID != tok.ID || deleted.Name != "laptop" {
		t.Fatalf("DeleteAccessToken = %+v, %v", deleted, err)
	}
	_, _, err := s.FindAccessToken(ctx, hash("pat1"), now)
	wantError(t, err, decoy.ENOTFOUND, "")
	_, err = s.DeleteAccessToken(ctx, hash("pat1"))
	wantError(t, err, decoy.ENOTFOUND, "Access token not found")
	wantError(t, s.CreateAccessToken(ctx, &decoy.AccessToken{Hash: hash("x"), UserID: id(9), CreatedAt: now, ExpiresAt: now.Add(time.Hour)}),
		decoy.ENOTFOUND, "User not found")
	// A deleted user's tokens go with it.
	if err := s.CreateAccessToken(ctx, &decoy.AccessToken{Hash: hash("pat3"), UserID: u.ID, CreatedAt: now, ExpiresAt: now.Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteUser(ctx, u.ID); err != nil {
		t.Fatal(err)
	}
	_, _, err = s.FindAccessToken(ctx, hash("pat3"), now)
	wantError(t, err, decoy.ENOTFOUND, "")
}

// A user holds at most decoy.MaxAccessTokens: its oldest go first.
func testAccessTokensBound(t *testing.T, s TeamBackend) {
	ctx := context.Background()
	u := mustUser(t, s, "ann@example.com")
	start := time.Now().Add(time.Hour) // unexpired while the test runs
	for i := range decoy.MaxAccessTokens + 1 {
		at := start.Add(time.Duration(i) * time.Second)
		if err := s.CreateAccessToken(ctx, &decoy.AccessToken{Hash: hash(fmt.Sprint(i)), UserID: u.ID, CreatedAt: at, ExpiresAt: at.Add(time.Hour)}); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := s.FindAccessToken(ctx, hash("0"), start); decoy.ErrorCode(err) != decoy.ENOTFOUND {
		t.Errorf("the oldest token past the bound: %v, want ENOTFOUND", err)
	}
	for _, i := range []int{1, decoy.MaxAccessTokens} {
		if _, _, err := s.FindAccessToken(ctx, hash(fmt.Sprint(i)), start); err != nil {
			t.Errorf("token %d: %v", i, err)
		}
	}
}

// A user lists its unexpired tokens, newest first, with their names and
// last uses, and revokes one by id; another user's token is not found to
// it.
func testAccessTokensListed(t *testing.T, s TeamBackend) {
	ctx := context.Background()
	ann, bob := mustUser(t, s, "ann@example.com"), mustUser(t, s, "bob@example.com")
	now := time.Now().UTC().Truncate(time.Millisecond)
	mint := func(u *decoy.User, name string, created time.Time, life time.Duration) *decoy.AccessToken {
		t.Helper()
		tok := &decoy.AccessToken{Name: name, Hash: hash(u.ID + name), UserID: u.ID, CreatedAt: created, ExpiresAt: created.Add(life)}
		if err := s.CreateAccessToken(ctx, tok); err != nil {
			t.Fatal(err)
		}
		return tok
	}
	laptop := mint(ann, "laptop", now.Add(-time.Hour), 90*24*time.Hour)
	ci := mint(ann, "ci", now.Add(-time.Minute), 90*24*time.Hour)
	mint(ann, "gone", now.Add(-2*time.Hour), time.Hour) // expired
	bobs := mint(bob, "bob's", now, time.Hour)

	list := func(u *decoy.User) []*decoy.AccessToken {
		t.Helper()
		ts, err := s.ListAccessTokens(ctx, u.ID, now)
		if err != nil {
			t.Fatal(err)
		}
		return ts
	}
	names := func(ts []*decoy.AccessToken) []string {
		var n []string
		for _, tok := range ts {
			n = append(n, tok.Name)
		}
		return n
	}
	got := list(ann)
	if !slices.Equal(names(got), []string{"ci", "laptop"}) {
		t.Fatalf("ann's tokens: %v, want ci, laptop", names(got))
	}
	for i, want := range []*decoy.AccessToken{ci, laptop} {
		g := got[i]
		if _, ok := decoy.CanonicalID(g.ID); !ok || g.ID != want.ID || g.UserID != ann.ID || !g.CreatedAt.Equal(want.CreatedAt) ||
			!g.ExpiresAt.Equal(want.ExpiresAt) || g.LastUsedAt != nil || string(g.Hash) != string(want.Hash) {
			t.Errorf("listed %+v, want %+v", g, want)
		}
	}
	_, err := s.ListAccessTokens(ctx, id(9), now)
	wantError(t, err, decoy.ENOTFOUND, "User not found")

	// Last use: batched, never going back; an unknown id is no error.
	at := now.Add(-30 * time.Second)
	if err := s.TouchAccessTokens(ctx, map[string]time.Time{ci.ID: at, bobs.ID: at.Add(time.Second), id(9): at}); err != nil {
		t.Fatal(err)
	}
	if err := s.TouchAccessTokens(ctx, map[string]time.Time{ci.ID: at.Add(-time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if err := s.TouchAccessTokens(ctx, nil); err != nil {
		t.Fatal(err)
	}
	got = list(ann)
	if got[0].LastUsedAt == nil || !got[0].LastUsedAt.Equal(at) || got[1].LastUsedAt != nil {
		t.Errorf("last uses: %v, %v; want %v, never", got[0].LastUsedAt, got[1].LastUsedAt, at)
	}
	if tok, _, err := s.FindAccessToken(ctx, ci.Hash, now); err != nil || tok.LastUsedAt == nil || !tok.LastUsedAt.Equal(at) {
		t.Errorf("FindAccessToken: %+v, %v", tok, err)
	}

	// Revoked by its user only, once, at once.
	_, err = s.RevokeAccessToken(ctx, bob.ID, ci.ID)
	wantError(t, err, decoy.ENOTFOUND, "Access token not found")
	revoked, err := s.RevokeAccessToken(ctx, ann.ID, ci.ID)
	if err != nil || revoked.ID != ci.ID || revoked.Name != "ci" {
		t.Fatalf("RevokeAccessToken = %+v, %v", revoked, err)
	}
	_, _, err = s.FindAccessToken(ctx, ci.Hash, now)
	wantError(t, err, decoy.ENOTFOUND, "")
	_, err = s.RevokeAccessToken(ctx, ann.ID, ci.ID)
	wantError(t, err, decoy.ENOTFOUND, "Access token not found")
	if n := names(list(ann)); !slices.Equal(n, []string{"laptop"}) {
		t.Errorf("after revoking ci: %v", n)
	}
	if n := names(list(bob)); !slices.Equal(n, []string{"bob's"}) {
		t.Errorf("bob's tokens: %v", n)
	}
	// A user without tokens lists none.
	if ts := list(mustUser(t, s, "cy@example.com")); len(ts) != 0 {
		t.Errorf("a new user's tokens: %v", names(ts))
	}

	// Expiry is the caller's clock's, also when a new token purges the
	// expired ones: by a clock a month behind this process's, two tokens
	// made at that time both stand (the first was purged by the process's
	// clock, as invitations were: see testInvitations).
	dee := mustUser(t, s, "dee@example.com")
	past := now.Add(-30 * 24 * time.Hour)
	for _, name := range []string{"old1", "old2"} {
		mint(dee, name, past, 7*24*time.Hour)
	}
	if ts, err := s.ListAccessTokens(ctx, dee.ID, past); err != nil || len(ts) != 2 {
		t.Errorf("tokens by a clock a month behind: %v, %v (want old1 and old2)", names(ts), err)
	}
	// And by the caller's clock, a new one purges those expired then.
	mint(dee, "new1", now, time.Hour)
	for _, name := range []string{"old1", "old2"} {
		if _, _, err := s.FindAccessToken(ctx, hash(dee.ID+name), past); decoy.ErrorCode(err) != decoy.ENOTFOUND {
			t.Errorf("an expired token outlived a new one: %v", err)
		}
	}
}

// A new password revokes the user's tokens, in the same change, and no
// token is made for a password that was changed since it was checked; a
// change of name keeps them.
func testAccessTokensEndWithPassword(t *testing.T, s TeamBackend) {
	ctx := context.Background()
	ann, bob := mustUser(t, s, "ann@example.com"), mustUser(t, s, "bob@example.com")
	now := time.Now().UTC().Truncate(time.Millisecond)
	mint := func(u *decoy.User, name string, checked []byte) error {
		return s.CreateAccessToken(ctx, &decoy.AccessToken{Name: name, Hash: hash(u.ID + name), UserID: u.ID,
			CreatedAt: now, ExpiresAt: now.Add(time.Hour), PasswordHash: checked})
	}
	for _, m := range []struct {
		u    *decoy.User
		name string
	}{{ann, "a1"}, {ann, "a2"}, {bob, "b1"}} {
		if err := mint(m.u, m.name, m.u.PasswordHash); err != nil {
			t.Fatal(err)
		}
	}
	live := func(want ...string) {
		t.Helper()
		for _, m := range []struct {
			u    *decoy.User
			name string
		}{{ann, "a1"}, {ann, "a2"}, {bob, "b1"}} {
			_, _, err := s.FindAccessToken(ctx, hash(m.u.ID+m.name), now)
			if slices.Contains(want, m.name) != (err == nil) {
				t.Errorf("token %s: %v; want live: %v", m.name, err, slices.Contains(want, m.name))
			}
		}
	}
	if _, err := s.UpdateUser(ctx, ann.ID, decoy.UserUpdate{Name: ptr("Ann B."), ServerAdmin: ptr(true)}); err != nil {
		t.Fatal(err)
	}
	live("a1", "a2", "b1")
	newHash := []byte("argon2id$new")
	if _, err := s.UpdateUser(ctx, ann.ID, decoy.UserUpdate{PasswordHash: &newHash}); err != nil {
		t.Fatal(err)
	}
	live("b1")
	if ts, err := s.ListAccessTokens(ctx, ann.ID, now); err != nil || len(ts) != 0 {
		t.Errorf("ann's tokens after a new password: %d, %v", len(ts), err)
	}
	// A token asked for with the old password, checked before the change,
	// is not made; with the new one, or unchecked, it is.
	if err := mint(ann, "late", ann.PasswordHash); !errors.Is(err, decoy.ErrPasswordChanged) {
		t.Errorf("a token for the old password: %v, want ErrPasswordChanged", err)
	}
	wantError(t, mint(ann, "late", ann.PasswordHash), decoy.EUNAUTHORIZED, "Invalid email or password")
	if err := mint(ann, "new", newHash); err != nil {
		t.Errorf("a token for the new password: %v", err)
	}
	if err := mint(ann, "unchecked", nil); err != nil {
		t.Errorf("a token without a checked password: %v", err)
	}
	if ts, _ := s.ListAccessTokens(ctx, ann.ID, now); len(ts) != 2 {
		t.Errorf("ann's tokens: %d, want 2", len(ts))
	}
	// A change checked against the old password does not undo the new one
	// (a user's own change, racing a server admin's reset); checked
	// against the current one, it applies.
	selfHash := []byte("argon2id$self")
	if _, err := s.UpdateUser(ctx, ann.ID, decoy.UserUpdate{PasswordHash: &selfHash, IfPasswordHash: &ann.PasswordHash}); !errors.Is(err, decoy.ErrPasswordChanged) {
		t.Errorf("a new password checked against the old one: %v, want ErrPasswordChanged", err)
	}
	if ts, _ := s.ListAccessTokens(ctx, ann.ID, now); len(ts) != 2 {
		t.Errorf("ann's tokens after a refused change: %d, want 2", len(ts))
	}
	if u, err := s.UpdateUser(ctx, ann.ID, decoy.UserUpdate{PasswordHash: &selfHash, IfPasswordHash: &newHash}); err != nil || string(u.PasswordHash) != string(selfHash) {
		t.Errorf("a new password checked against the current one: %v", err)
	}
	if _, err := s.UpdateUser(ctx, "00000000-0000-4000-8000-000000000999", decoy.UserUpdate{PasswordHash: &selfHash, IfPasswordHash: &newHash}); decoy.ErrorCode(err) != decoy.ENOTFOUND {
		t.Errorf("a checked change of a user that does not exist: %v, want ENOTFOUND", err)
	}
	if _, err := s.UpdateUser(ctx, ann.ID, decoy.UserUpdate{PasswordHash: &newHash}); err != nil {
		t.Fatal(err)
	}
	if ts, _ := s.ListAccessTokens(ctx, ann.ID, now); len(ts) != 0 {
		t.Errorf("ann's tokens after two more new passwords: %d, want 0", len(ts))
	}
}

func testWorkspaces(t *testing.T, s TeamBackend) {
	ctx := context.Background()
	ann := mustUser(t, s, "ann@example.com")
	bob := mustUser(t, s, "bob@example.com")
	w, err := s.CreateWorkspace(ctx, &decoy.Workspace{Name: "acme", Limits: decoy.WorkspaceLimits{MaxMocks: ptr(int64(3))}}, ann.ID)
	if err != nil {
		t.Fatal(err)
	}
	if w.ID == "" || w.CreatedAt.IsZero() || w.Name != "acme" || w.Limits.MaxMocks == nil || *w.Limits.MaxMocks != 3 ||
		w.Limits.MaxBytes != nil || w.Limits.MonthlyReads != nil {
		t.Errorf("created %+v", w)
	}
	if p := defaultProject(t, s, w.ID); p.WorkspaceID != w.ID || p.ID == decoy.DefaultProjectID {
		t.Errorf("default project of a new workspace: %+v", p)
	}
	if role, err := s.MemberRole(ctx, w.ID, ann.ID); err != nil || role != decoy.RoleOwner {
		t.Errorf("creator's role = %q, %v", role, err)
	}
	_, err = s.CreateWorkspace(ctx, &decoy.Workspace{Name: "x"}, id(9))
	wantError(t, err, decoy.ENOTFOUND, "User not found")
	other := mustWorkspace(t, s, "other", bob.ID)

	all, err := s.ListWorkspaces(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if ids := workspaceIDs(all); !slices.Equal(ids, []string{decoy.DefaultWorkspaceID, w.ID, other.ID}) {
		t.Errorf("every workspace: %v", ids)
	}
	mine, err := s.ListWorkspaces(ctx, ann.ID)
	if err != nil || !slices.Equal(workspaceIDs(mine), []string{w.ID}) {
		t.Errorf("ann's workspaces: %v, %v", workspaceIDs(mine), err)
	}
	found, err := s.FindWorkspace(ctx, w.ID)
	if err != nil || found.Name != "acme" || !found.CreatedAt.Equal(w.CreatedAt) {
		t.Errorf("FindWorkspace = %+v, %v", found, err)
	}
	_, err = s.FindWorkspace(ctx, id(9))
	wantError(t, err, decoy.ENOTFOUND, "Workspace not found")

	upd, err := s.UpdateWorkspace(ctx, w.ID, decoy.WorkspaceUpdate{Name: ptr("acme inc")})
	if err != nil || upd.Name != "acme inc" || upd.Limits.MaxMocks == nil {
		t.Errorf("rename = %+v, %v", upd, err)
	}
	// Limits not named are kept; a nil one is no limit.
	upd, err = s.UpdateWorkspace(ctx, w.ID, decoy.WorkspaceUpdate{Limits: map[string]*int64{"max_bytes": ptr(int64(100)), "monthly_reads": ptr(int64(0))}})
	if err != nil || upd.Name != "acme inc" || upd.Limits.MaxMocks == nil || *upd.Limits.MaxMocks != 3 || *upd.Limits.MaxBytes != 100 || *upd.Limits.MonthlyReads != 0 {
		t.Errorf("set limits = %+v, %v", upd, err)
	}
	upd, err = s.UpdateWorkspace(ctx, w.ID, decoy.WorkspaceUpdate{Limits: map[string]*int64{"max_mocks": nil}})
	if err != nil || upd.Limits.MaxMocks != nil || upd.Limits.MaxBytes == nil || *upd.Limits.MaxBytes != 100 {
		t.Errorf("clear max_mocks = %+v, %v", upd, err)
	}
	if found, err := s.FindWorkspace(ctx, w.ID); err != nil || found.Limits.MaxMocks != nil || found.Limits.MonthlyReads == nil {
		t.Errorf("FindWorkspace after limits = %+v, %v", found, err)
	}
	_, err = s.UpdateWorkspace(ctx, id(9), decoy.WorkspaceUpdate{Name: ptr("x")})
	wantError(t, err, decoy.ENOTFOUND, "Workspace not found")

	createIn(t, s, 1, defaultProject(t, s, w.ID).ID, "a", "[1,2]")
	createIn(t, s, 2, defaultProject(t, s, w.ID).ID, "b", "{}")
	createIn(t, s, 3, "", "c", "[]")
	if mocks, bytes, err := s.WorkspaceUsage(ctx, w.ID); err != nil || mocks != 2 || bytes != 7 {
		t.Errorf("WorkspaceUsage = %d, %d, %v; want 2, 7", mocks, bytes, err)
	}
	_, _, err = s.WorkspaceUsage(ctx, id(9))
	wantError(t, err, decoy.ENOTFOUND, "Workspace not found")

	ms, err := s.Memberships(ctx, ann.ID)
	if err != nil || len(ms) != 1 || ms[0].Workspace.ID != w.ID || ms[0].Role != decoy.RoleOwner || ms[0].Workspace.Name != "acme inc" {
		t.Errorf("Memberships = %+v, %v", ms, err)
	}
}

func workspaceIDs(ws []*decoy.Workspace) []string {
	var ids []string
	for _, w := range ws {
		ids = append(ids, w.ID)
	}
	return ids
}

func testMembers(t *testing.T, s TeamBackend) {
	ctx := context.Background()
	ann := mustUser(t, s, "ann@example.com")
	bob := mustUser(t, s, "bob@example.com")
	w := mustWorkspace(t, s, "acme", ann.ID)
	m, err := s.PutMember(ctx, w.ID, bob.ID, decoy.RoleViewer)
	if err != nil || m.UserID != bob.ID || m.Email != bob.Email || m.Role != decoy.RoleViewer || m.Previous != "" {
		t.Fatalf("PutMember = %+v, %v", m, err)
	}
	// Previous is the role found in the same transaction.
	if m, err := s.PutMember(ctx, w.ID, bob.ID, decoy.RoleEditor); err != nil || m.Role != decoy.RoleEditor || m.Previous != decoy.RoleViewer {
		t.Fatalf("change role = %+v, %v", m, err)
	}
	if m, err := s.PutMember(ctx, w.ID, bob.ID, decoy.RoleEditor); err != nil || m.Role != decoy.RoleEditor || m.Previous != decoy.RoleEditor {
		t.Fatalf("same role = %+v, %v", m, err)
	}
	members, err := s.ListMembers(ctx, w.ID)
	if err != nil || len(members) != 2 {
		t.Fatalf("ListMembers = %v, %v", members, err)
	}
	roles := map[string]decoy.Role{}
	for _, m := range members {
		roles[m.UserID] = m.Role
	}
	if roles[ann.ID] != decoy.RoleOwner || roles[bob.ID] != decoy.RoleEditor {
		t.Errorf("roles = %v", roles)
	}
	tests := []struct {
		name      string
		workspace string
		user      string
		role      decoy.Role
		code, msg string
	}{
		{"UnknownWorkspace", id(9), bob.ID, decoy.RoleViewer, decoy.ENOTFOUND, "Workspace not found"},
		{"UnknownUser", w.ID, id(9), decoy.RoleViewer, decoy.ENOTFOUND, "User not found"},
		{"BadRole", w.ID, bob.ID, "admin", decoy.EINVALID, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := s.PutMember(ctx, tt.workspace, tt.user, tt.role)
			wantError(t, err, tt.code, tt.msg)
		})
	}
	_, err = s.ListMembers(ctx, id(9))
	wantError(t, err, decoy.ENOTFOUND, "Workspace not found")
	if err := s.RemoveMember(ctx, w.ID, bob.ID); err != nil {
		t.Fatal(err)
	}
	_, err = s.MemberRole(ctx, w.ID, bob.ID)
	wantError(t, err, decoy.ENOTFOUND, "Workspace not found")
	wantError(t, s.RemoveMember(ctx, w.ID, bob.ID), decoy.ENOTFOUND, "")
	if ms, err := s.Memberships(ctx, bob.ID); err != nil || len(ms) != 0 {
		t.Errorf("Memberships after removal = %v, %v", ms, err)
	}
	// A deleted user leaves its workspaces.
	if _, err := s.PutMember(ctx, w.ID, bob.ID, decoy.RoleViewer); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteUser(ctx, bob.ID); err != nil {
		t.Fatal(err)
	}
	if members, _ := s.ListMembers(ctx, w.ID); len(members) != 1 {
		t.Errorf("members after deleting a user: %v", members)
	}
}

// A workspace keeps at least one owner: removing, demoting or deleting the
// last one is ErrLastOwner (409); with two owners one may go.
func testLastOwner(t *testing.T, s TeamBackend) {
	ctx := context.Background()
	ann := mustUser(t, s, "ann@example.com")
	bob := mustUser(t, s, "bob@example.com")
	w := mustWorkspace(t, s, "acme", ann.ID)
	if _, err := s.PutMember(ctx, w.ID, bob.ID, decoy.RoleEditor); err != nil {
		t.Fatal(err)
	}
	last := func(t *testing.T, err error) {
		t.Helper()
		wantError(t, err, decoy.ECONFLICT, decoy.ErrLastOwner.Message)
	}
	_, err := s.PutMember(ctx, w.ID, ann.ID, decoy.RoleEditor)
	last(t, err)
	_, err = s.PutMember(ctx, w.ID, ann.ID, decoy.RoleViewer)
	last(t, err)
	last(t, s.RemoveMember(ctx, w.ID, ann.ID))
	last(t, s.DeleteUser(ctx, ann.ID))
	if role, _ := s.MemberRole(ctx, w.ID, ann.ID); role != decoy.RoleOwner {
		t.Fatalf("refused changes left ann %q", role)
	}
	// Two owners: one may be demoted, then the other is the last.
	if _, err := s.PutMember(ctx, w.ID, bob.ID, decoy.RoleOwner); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutMember(ctx, w.ID, ann.ID, decoy.RoleViewer); err != nil {
		t.Fatal(err)
	}
	last(t, s.RemoveMember(ctx, w.ID, bob.ID))
	if err := s.RemoveMember(ctx, w.ID, ann.ID); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteUser(ctx, ann.ID); err != nil {
		t.Fatal(err)
	}
	// Concurrent demotions of two owners leave one.
	carol := mustUser(t, s, "carol@example.com")
	if _, err := s.PutMember(ctx, w.ID, carol.ID, decoy.RoleOwner); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for _, u := range []string{bob.ID, carol.ID} {
		wg.Go(func() { s.PutMember(ctx, w.ID, u, decoy.RoleViewer) })
	}
	wg.Wait()
	owners := 0
	members, _ := s.ListMembers(ctx, w.ID)
	for _, m := range members {
		if m.Role == decoy.RoleOwner {
			owners++
		}
	}
	if owners != 1 {
		t.Errorf("%d owners after two concurrent demotions, want 1", owners)
	}
}

func testInvitations(t *testing.T, s TeamBackend) {
	ctx := context.Background()
	ann := mustUser(t, s, "ann@example.com")
	w := mustWorkspace(t, s, "acme", ann.ID)
	now := time.Now().UTC().Truncate(time.Millisecond)
	inv := &decoy.Invitation{Hash: hash("inv1"), WorkspaceID: w.ID, Email: "Bob@Example.com", Role: decoy.RoleEditor,
		CreatedAt: now, ExpiresAt: now.Add(7 * 24 * time.Hour)}
	if err := s.CreateInvitation(ctx, inv); err != nil {
		t.Fatal(err)
	}
	found, err := s.FindInvitation(ctx, hash("inv1"), now)
	if err != nil || found.WorkspaceID != w.ID || found.Email != inv.Email || found.Role != decoy.RoleEditor || !found.ExpiresAt.Equal(inv.ExpiresAt) {
		t.Fatalf("FindInvitation = %+v, %v", found, err)
	}
	_, err = s.FindInvitation(ctx, hash("inv1"), inv.ExpiresAt)
	wantError(t, err, decoy.ENOTFOUND, "Invitation not found")
	_, err = s.AcceptInvitation(ctx, hash("inv1"), inv.ExpiresAt, &decoy.User{Name: "Bob", PasswordHash: []byte("h")})
	wantError(t, err, decoy.ENOTFOUND, "Invitation not found")

	bob, err := s.AcceptInvitation(ctx, hash("inv1"), now, &decoy.User{Email: "evil@example.com", Name: "Bob", PasswordHash: []byte("h")})
	if err != nil {
		t.Fatal(err)
	}
	if bob.Email != "Bob@Example.com" || bob.Name != "Bob" || string(bob.PasswordHash) != "h" || bob.ServerAdmin {
		t.Errorf("accepted user: %+v (the invitation's email, the given name)", bob)
	}
	if role, err := s.MemberRole(ctx, w.ID, bob.ID); err != nil || role != decoy.RoleEditor {
		t.Errorf("role after accepting: %q, %v", role, err)
	}
	// Single use.
	_, err = s.AcceptInvitation(ctx, hash("inv1"), now, &decoy.User{Name: "Bob"})
	wantError(t, err, decoy.ENOTFOUND, "Invitation not found")
	_, err = s.FindInvitation(ctx, hash("inv1"), now)
	wantError(t, err, decoy.ENOTFOUND, "Invitation not found")

	// An invitation of an email that has a user (in another case: made
	// since the invitation) is refused, and stays unused: accepting it never
	// acts as that account. A second invitation of the same email replaces
	// the first.
	other := mustWorkspace(t, s, "other", "")
	for _, h := range []string{"inv2", "inv3"} {
		if err := s.CreateInvitation(ctx, &decoy.Invitation{Hash: hash(h), WorkspaceID: other.ID, Email: "ANN@example.com",
			Role: decoy.RoleViewer, CreatedAt: now, ExpiresAt: now.Add(time.Hour)}); err != nil {
			t.Fatal(err)
		}
	}
	_, err = s.FindInvitation(ctx, hash("inv2"), now)
	wantError(t, err, decoy.ENOTFOUND, "Invitation not found")
	_, err = s.AcceptInvitation(ctx, hash("inv3"), now, &decoy.User{Name: "someone", PasswordHash: []byte("x")})
	wantError(t, err, decoy.ECONFLICT, decoy.ErrEmailTaken.Message)
	if role, _ := s.MemberRole(ctx, other.ID, ann.ID); role != "" {
		t.Errorf("ann joined other through a refused invitation, as %q", role)
	}
	if u, err := s.FindUser(ctx, ann.ID); err != nil || u.Name != ann.Name || string(u.PasswordHash) != string(ann.PasswordHash) {
		t.Errorf("ann after a refused invitation: %+v, %v", u, err)
	}
	if _, err := s.FindInvitation(ctx, hash("inv3"), now); err != nil {
		t.Errorf("a refused invitation was used up: %v", err)
	}
	err = s.CreateInvitation(ctx, &decoy.Invitation{Hash: hash("inv5"), WorkspaceID: id(9), Email: "x@example.com",
		Role: decoy.RoleViewer, CreatedAt: now, ExpiresAt: now.Add(time.Hour)})
	wantError(t, err, decoy.ENOTFOUND, "Workspace not found")

	// Two concurrent acceptances of one invitation: one wins.
	if err := s.CreateInvitation(ctx, &decoy.Invitation{Hash: hash("inv6"), WorkspaceID: w.ID, Email: "dan@example.com",
		Role: decoy.RoleViewer, CreatedAt: now, ExpiresAt: now.Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Go(func() { _, errs[i] = s.AcceptInvitation(ctx, hash("inv6"), now, &decoy.User{Name: "Dan"}) })
	}
	wg.Wait()
	wins := 0
	for _, err := range errs {
		if err == nil {
			wins++
		} else if decoy.ErrorCode(err) != decoy.ENOTFOUND {
			t.Errorf("a losing acceptance: %v", err)
		}
	}
	if wins != 1 {
		t.Errorf("%d acceptances of a single-use invitation", wins)
	}

	// Expiry is the caller's clock's, also when a new invitation purges
	// the expired ones: by a clock a month behind this process's, two
	// invitations made at that time both stand (the first was purged by
	// the process's clock, which a test's clock on 2026-11-22 met a week
	// later).
	past := now.Add(-30 * 24 * time.Hour)
	for _, h := range []string{"old1", "old2"} {
		if err := s.CreateInvitation(ctx, &decoy.Invitation{Hash: hash(h), WorkspaceID: other.ID, Email: h + "@example.com",
			Role: decoy.RoleViewer, CreatedAt: past, ExpiresAt: past.Add(7 * 24 * time.Hour)}); err != nil {
			t.Fatal(err)
		}
	}
	if list, err := s.ListInvitations(ctx, other.ID, past); err != nil || len(list) != 3 {
		t.Errorf("invitations by a clock a month behind: %d, %v (want inv3, old1 and old2)", len(list), err)
	}
	// And by the caller's clock, a new one purges those expired then.
	if err := s.CreateInvitation(ctx, &decoy.Invitation{Hash: hash("new1"), WorkspaceID: other.ID, Email: "new1@example.com",
		Role: decoy.RoleViewer, CreatedAt: now, ExpiresAt: now.Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	for _, h := range []string{"old1", "old2"} {
		if _, err := s.FindInvitation(ctx, hash(h), past); decoy.ErrorCode(err) != decoy.ENOTFOUND {
			t.Errorf("an expired invitation outlived a new one: %v", err)
		}
	}
}

// testPendingInvitations: a workspace's pending invitations are listed,
// oldest first, without the expired ones or other workspaces'; one is
// revoked by its email in any case, and its link stops working.
func testPendingInvitations(t *testing.T, s TeamBackend) {
	ctx := context.Background()
	ann := mustUser(t, s, "ann@example.com")
	w := mustWorkspace(t, s, "acme", ann.ID)
	other := mustWorkspace(t, s, "other", "")
	now := time.Now().UTC().Truncate(time.Millisecond)
	for i, inv := range []*decoy.Invitation{
		{Hash: hash("p1"), WorkspaceID: w.ID, Email: "Bob@example.com", Role: decoy.RoleEditor, CreatedAt: now, ExpiresAt: now.Add(time.Hour)},
		{Hash: hash("p2"), WorkspaceID: w.ID, Email: "cat@example.com", Role: decoy.RoleViewer, CreatedAt: now.Add(time.Second), ExpiresAt: now.Add(time.Hour)},
		{Hash: hash("p3"), WorkspaceID: w.ID, Email: "old@example.com", Role: decoy.RoleViewer, CreatedAt: now.Add(-2 * time.Hour), ExpiresAt: now.Add(-time.Hour)},
		{Hash: hash("p4"), WorkspaceID: other.ID, Email: "dan@example.com", Role: decoy.RoleViewer, CreatedAt: now, ExpiresAt: now.Add(time.Hour)},
	} {
		if err := s.CreateInvitation(ctx, inv); err != nil {
			t.Fatalf("invitation %d: %v", i, err)
		}
	}
	invs, err := s.ListInvitations(ctx, w.ID, now)
	if err != nil || len(invs) != 2 || invs[0].Email != "Bob@example.com" || invs[1].Email != "cat@example.com" ||
		invs[0].Role != decoy.RoleEditor || !invs[0].ExpiresAt.Equal(now.Add(time.Hour)) || invs[0].WorkspaceID != w.ID {
		t.Fatalf("ListInvitations = %+v, %v", invs, err)
	}
	_, err = s.ListInvitations(ctx, id(9), now)
	wantError(t, err, decoy.ENOTFOUND, "Workspace not found")

	got, err := s.RevokeInvitation(ctx, w.ID, "BOB@EXAMPLE.COM", now)
	if err != nil || got.Email != "Bob@example.com" || got.Role != decoy.RoleEditor {
		t.Fatalf("RevokeInvitation = %+v, %v", got, err)
	}
	_, err = s.FindInvitation(ctx, hash("p1"), now)
	wantError(t, err, decoy.ENOTFOUND, "Invitation not found")
	_, err = s.AcceptInvitation(ctx, hash("p1"), now, &decoy.User{Name: "Bob", PasswordHash: []byte("h")})
	wantError(t, err, decoy.ENOTFOUND, "Invitation not found")
	_, err = s.RevokeInvitation(ctx, w.ID, "bob@example.com", now)
	wantError(t, err, decoy.ENOTFOUND, "Invitation not found")
	// Another workspace's invitation is not this one's to revoke.
	_, err = s.RevokeInvitation(ctx, w.ID, "dan@example.com", now)
	wantError(t, err, decoy.ENOTFOUND, "Invitation not found")
	if _, err := s.FindInvitation(ctx, hash("p4"), now); err != nil {
		t.Errorf("another workspace's invitation went: %v", err)
	}
	if invs, err := s.ListInvitations(ctx, w.ID, now); err != nil || len(invs) != 1 || invs[0].Email != "cat@example.com" {
		t.Errorf("after revoking: %+v, %v", invs, err)
	}
}

func testProjects(t *testing.T, s TeamBackend) {
	ctx := context.Background()
	w := mustWorkspace(t, s, "acme", "")
	p := mustProject(t, s, w.ID, "web")
	if p.ID == "" || p.WorkspaceID != w.ID || p.Name != "web" || p.CreatedAt.IsZero() {
		t.Errorf("created %+v", p)
	}
	_, err := s.CreateProject(ctx, &decoy.Project{WorkspaceID: w.ID, Name: "web"})
	wantError(t, err, decoy.ECONFLICT, "")
	_, err = s.CreateProject(ctx, &decoy.Project{WorkspaceID: id(9), Name: "x"})
	wantError(t, err, decoy.ENOTFOUND, "Workspace not found")
	// Names are unique within a workspace only.
	mustProject(t, s, decoy.DefaultWorkspaceID, "web")
	ps, err := s.ListProjects(ctx, w.ID)
	if err != nil || len(ps) != 2 || ps[0].Name != decoy.DefaultName || ps[1].ID != p.ID {
		t.Errorf("ListProjects = %v, %v", ps, err)
	}
	_, err = s.ListProjects(ctx, id(9))
	wantError(t, err, decoy.ENOTFOUND, "Workspace not found")
	r, err := s.RenameProject(ctx, p.ID, "site")
	if err != nil || r.Name != "site" || r.WorkspaceID != w.ID {
		t.Errorf("RenameProject = %+v, %v", r, err)
	}
	_, err = s.RenameProject(ctx, p.ID, decoy.DefaultName)
	wantError(t, err, decoy.ECONFLICT, "")
	if r, err := s.RenameProject(ctx, p.ID, "site"); err != nil || r.Name != "site" {
		t.Errorf("renaming to its own name: %+v, %v", r, err)
	}
	_, err = s.RenameProject(ctx, id(9), "x")
	wantError(t, err, decoy.ENOTFOUND, "Project not found")
	found, err := s.FindProject(ctx, p.ID)
	if err != nil || found.Name != "site" {
		t.Errorf("FindProject = %+v, %v", found, err)
	}
	_, err = s.FindProject(ctx, id(9))
	wantError(t, err, decoy.ENOTFOUND, "Project not found")
}

// A workspace holds at most decoy.MaxProjects projects, its default one
// included.
func testProjectsBound(t *testing.T, s TeamBackend) {
	ctx := context.Background()
	w := mustWorkspace(t, s, "acme", "")
	for i := 1; i < decoy.MaxProjects; i++ {
		mustProject(t, s, w.ID, fmt.Sprint("p", i))
	}
	_, err := s.CreateProject(ctx, &decoy.Project{WorkspaceID: w.ID, Name: "one too many"})
	wantError(t, err, decoy.EINVALID, "")
	if ps, err := s.ListProjects(ctx, w.ID); err != nil || len(ps) != decoy.MaxProjects {
		t.Errorf("ListProjects: %d, %v", len(ps), err)
	}
}

func testDeleteProject(t *testing.T, s TeamBackend) {
	ctx := context.Background()
	w := mustWorkspace(t, s, "acme", "")
	p := mustProject(t, s, w.ID, "web")
	keep := mustProject(t, s, w.ID, "keep")
	createIn(t, s, 1, p.ID, "a", "[1]")
	createIn(t, s, 2, p.ID, "b", "[2]")
	createIn(t, s, 3, keep.ID, "c", "[3]")
	key, err := s.CreateKey(ctx, &decoy.APIKey{Name: "ci", WorkspaceID: w.ID, Role: decoy.RoleEditor, ProjectID: &p.ID, Hash: hash("key")})
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.DeleteProject(ctx, p.ID, false)
	wantError(t, err, decoy.ECONFLICT, decoy.ErrProjectNotEmpty.Message)
	if _, err := s.FindProject(ctx, p.ID); err != nil {
		t.Fatalf("a refused delete removed the project: %v", err)
	}
	ids, err := s.DeleteProject(ctx, p.ID, true)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(ids)
	if !slices.Equal(ids, []string{id(1), id(2)}) {
		t.Errorf("deleted mocks %v", ids)
	}
	for _, n := range []int{1, 2} {
		if _, err := find(t, s, n); decoy.ErrorCode(err) != decoy.ENOTFOUND {
			t.Errorf("mock %d after its project went: %v", n, err)
		}
	}
	if d, err := find(t, s, 3); err != nil || d != "[3]" {
		t.Errorf("mock of another project: %q, %v", d, err)
	}
	_, err = s.FindProject(ctx, p.ID)
	wantError(t, err, decoy.ENOTFOUND, "Project not found")
	// A key limited to the project goes with it, never widening.
	_, err = s.FindKey(ctx, hash("key"))
	wantError(t, err, decoy.ENOTFOUND, "Key not found")
	wantError(t, s.RevokeKey(ctx, w.ID, key.ID), decoy.ENOTFOUND, "Key not found")
	// An empty project goes without cascade.
	empty := mustProject(t, s, w.ID, "empty")
	if ids, err := s.DeleteProject(ctx, empty.ID, false); err != nil || len(ids) != 0 {
		t.Errorf("deleting an empty project: %v, %v", ids, err)
	}
	_, err = s.DeleteProject(ctx, empty.ID, true)
	wantError(t, err, decoy.ENOTFOUND, "Project not found")
	// The mock's id is free again.
	createIn(t, s, 1, keep.ID, "again", "[]")
}

func testKeys(t *testing.T, s TeamBackend) {
	ctx := context.Background()
	w := mustWorkspace(t, s, "acme", "")
	p := defaultProject(t, s, w.ID)
	expires := time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)
	k, err := s.CreateKey(ctx, &decoy.APIKey{Name: "ci", WorkspaceID: w.ID, Role: decoy.RoleEditor, ExpiresAt: &expires, Hash: hash("k1")})
	if err != nil {
		t.Fatal(err)
	}
	if k.ID == "" || k.CreatedAt.IsZero() || k.ProjectID != nil || k.LastUsedAt != nil || !k.ExpiresAt.Equal(expires) || k.Role != decoy.RoleEditor {
		t.Errorf("created %+v", k)
	}
	k2, err := s.CreateKey(ctx, &decoy.APIKey{Name: "viewer", WorkspaceID: w.ID, Role: decoy.RoleViewer, ProjectID: &p.ID, Hash: hash("k2")})
	if err != nil || k2.ProjectID == nil || *k2.ProjectID != p.ID || k2.ExpiresAt != nil {
		t.Fatalf("project key %+v, %v", k2, err)
	}
	tests := []struct {
		name      string
		key       decoy.APIKey
		code, msg string
	}{
		{"OwnerRole", decoy.APIKey{WorkspaceID: w.ID, Role: decoy.RoleOwner, Hash: hash("x1")}, decoy.EINVALID, ""},
		{"UnknownWorkspace", decoy.APIKey{WorkspaceID: id(9), Role: decoy.RoleViewer, Hash: hash("x2")}, decoy.ENOTFOUND, "Workspace not found"},
		{"ProjectOfAnotherWorkspace", decoy.APIKey{WorkspaceID: w.ID, Role: decoy.RoleViewer, ProjectID: ptr(decoy.DefaultProjectID), Hash: hash("x3")}, decoy.ENOTFOUND, "Project not found"},
		{"SameSecret", decoy.APIKey{WorkspaceID: w.ID, Role: decoy.RoleViewer, Hash: hash("k1")}, decoy.ECONFLICT, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := s.CreateKey(ctx, &tt.key)
			wantError(t, err, tt.code, tt.msg)
		})
	}
	found, err := s.FindKey(ctx, hash("k1"))
	if err != nil || found.ID != k.ID || found.WorkspaceID != w.ID || string(found.Hash) != string(hash("k1")) {
		t.Errorf("FindKey = %+v, %v", found, err)
	}
	ks, err := s.ListKeys(ctx, w.ID)
	if err != nil || len(ks) != 2 || ks[0].ID != k.ID || ks[1].ID != k2.ID {
		t.Errorf("ListKeys = %v, %v", ks, err)
	}
	_, err = s.ListKeys(ctx, id(9))
	wantError(t, err, decoy.ENOTFOUND, "Workspace not found")

	// Last use: batched, and never going back.
	at := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	if err := s.TouchKeys(ctx, map[string]time.Time{k.ID: at, k2.ID: at.Add(time.Minute), id(9): at}); err != nil {
		t.Fatal(err)
	}
	if err := s.TouchKeys(ctx, map[string]time.Time{k.ID: at.Add(-time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if err := s.TouchKeys(ctx, nil); err != nil {
		t.Fatal(err)
	}
	ks, _ = s.ListKeys(ctx, w.ID)
	if ks[0].LastUsedAt == nil || !ks[0].LastUsedAt.Equal(at) || ks[1].LastUsedAt == nil || !ks[1].LastUsedAt.Equal(at.Add(time.Minute)) {
		t.Errorf("last uses: %v, %v", ks[0].LastUsedAt, ks[1].LastUsedAt)
	}

	// Revoked: found no more, listed no more, revoked once.
	wantError(t, s.RevokeKey(ctx, decoy.DefaultWorkspaceID, k.ID), decoy.ENOTFOUND, "Key not found")
	if err := s.RevokeKey(ctx, w.ID, k.ID); err != nil {
		t.Fatal(err)
	}
	_, err = s.FindKey(ctx, hash("k1"))
	wantError(t, err, decoy.ENOTFOUND, "Key not found")
	wantError(t, s.RevokeKey(ctx, w.ID, k.ID), decoy.ENOTFOUND, "Key not found")
	if ks, _ := s.ListKeys(ctx, w.ID); len(ks) != 1 || ks[0].ID != k2.ID {
		t.Errorf("ListKeys after revoking: %v", ks)
	}
}

// A workspace holds at most decoy.MaxKeys unrevoked keys; revoked ones make
// room.
func testKeysBound(t *testing.T, s TeamBackend) {
	ctx := context.Background()
	w := mustWorkspace(t, s, "acme", "")
	var first *decoy.APIKey
	for i := range decoy.MaxKeys {
		k, err := s.CreateKey(ctx, &decoy.APIKey{Name: fmt.Sprint(i), WorkspaceID: w.ID, Role: decoy.RoleViewer, Hash: hash(fmt.Sprint(i))})
		if err != nil {
			t.Fatal(err)
		}
		if first == nil {
			first = k
		}
	}
	_, err := s.CreateKey(ctx, &decoy.APIKey{WorkspaceID: w.ID, Role: decoy.RoleViewer, Hash: hash("more")})
	wantError(t, err, decoy.EINVALID, "")
	if err := s.RevokeKey(ctx, w.ID, first.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateKey(ctx, &decoy.APIKey{WorkspaceID: w.ID, Role: decoy.RoleViewer, Hash: hash("more")}); err != nil {
		t.Errorf("a key after revoking one: %v", err)
	}
	if ks, err := s.ListKeys(ctx, w.ID); err != nil || len(ks) != decoy.MaxKeys {
		t.Errorf("ListKeys: %d, %v", len(ks), err)
	}
}

func testDeleteWorkspace(t *testing.T, s TeamBackend) {
	ctx := context.Background()
	ann := mustUser(t, s, "ann@example.com")
	w := mustWorkspace(t, s, "acme", ann.ID)
	p := mustProject(t, s, w.ID, "web")
	createIn(t, s, 1, p.ID, "a", "[1]")
	createIn(t, s, 2, defaultProject(t, s, w.ID).ID, "b", "[2]")
	createIn(t, s, 3, "", "c", "[3]")
	if _, ok, err := s.ReserveQuota(ctx, id(1), "2026-11", 0); err != nil || !ok {
		t.Fatal(ok, err)
	}
	if _, err := s.CreateKey(ctx, &decoy.APIKey{WorkspaceID: w.ID, Role: decoy.RoleViewer, Hash: hash("k")}); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	if err := s.CreateInvitation(ctx, &decoy.Invitation{Hash: hash("inv"), WorkspaceID: w.ID, Email: "bob@example.com",
		Role: decoy.RoleViewer, CreatedAt: now, ExpiresAt: now.Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if err := s.AppendAudit(ctx, &decoy.AuditEntry{WorkspaceID: w.ID, At: now, Actor: decoy.ServerAdmin, Action: "mock.create"}); err != nil {
		t.Fatal(err)
	}
	ids, err := s.DeleteWorkspace(ctx, w.ID)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(ids)
	if !slices.Equal(ids, []string{id(1), id(2)}) {
		t.Errorf("deleted mocks %v", ids)
	}
	checks := []struct {
		name string
		err  error
	}{
		{"FindWorkspace", second(s.FindWorkspace(ctx, w.ID))},
		{"FindProject", second(s.FindProject(ctx, p.ID))},
		{"FindMock", second(s.FindMock(ctx, id(1)))},
		{"FindKey", second(s.FindKey(ctx, hash("k")))},
		{"FindInvitation", second(s.FindInvitation(ctx, hash("inv"), now))},
		{"MemberRole", second(s.MemberRole(ctx, w.ID, ann.ID))},
	}
	for _, c := range checks {
		if decoy.ErrorCode(c.err) != decoy.ENOTFOUND {
			t.Errorf("%s after deleting the workspace: %v", c.name, c.err)
		}
	}
	if es, _, err := s.ListAudit(ctx, w.ID, "", 10); err != nil || len(es) != 0 {
		t.Errorf("audit log after deleting the workspace: %v, %v", es, err)
	}
	if d, err := find(t, s, 3); err != nil || d != "[3]" {
		t.Errorf("a mock of another workspace: %q, %v", d, err)
	}
	// The user stays, the ids are free again.
	if _, err := s.FindUser(ctx, ann.ID); err != nil {
		t.Error(err)
	}
	createIn(t, s, 1, "", "again", "[]")
	if used, _ := s.QuotaUsed(ctx, id(1), "2026-11"); used != 0 {
		t.Errorf("counts survived the workspace: %d", used)
	}
	_, err = s.DeleteWorkspace(ctx, w.ID)
	wantError(t, err, decoy.ENOTFOUND, "Workspace not found")
}

func second[T any](_ T, err error) error { return err }

// A workspace's reads (its monthly_reads, §6.2) are counted under its id by
// the QuotaCounter, apart from its mocks' counts, and go with it.
func testWorkspaceQuota(t *testing.T, s TeamBackend) {
	ctx := context.Background()
	ann := mustUser(t, s, "ann@example.com")
	w := mustWorkspace(t, s, "acme", ann.ID)
	createIn(t, s, 1, defaultProject(t, s, w.ID).ID, "a", "[1]")
	for i := int64(1); i <= 3; i++ {
		used, ok, err := s.ReserveQuota(ctx, w.ID, "2026-11", 3)
		if err != nil || !ok || used != i {
			t.Fatalf("reservation %d: used=%d ok=%v err=%v", i, used, ok, err)
		}
	}
	if used, ok, err := s.ReserveQuota(ctx, w.ID, "2026-11", 3); err != nil || ok || used != 3 {
		t.Fatalf("over the limit: used=%d ok=%v err=%v", used, ok, err)
	}
	if err := s.ReleaseQuota(ctx, w.ID, "2026-11"); err != nil {
		t.Fatal(err)
	}
	if used, err := s.QuotaUsed(ctx, w.ID, "2026-11"); err != nil || used != 2 {
		t.Errorf("after release: %d, %v", used, err)
	}
	// The mock's count and the workspace's are apart.
	if _, ok, err := s.ReserveQuota(ctx, id(1), "2026-11", 0); err != nil || !ok {
		t.Fatal(ok, err)
	}
	if used, _ := s.QuotaUsed(ctx, id(1), "2026-11"); used != 1 {
		t.Errorf("the mock's count: %d, want 1", used)
	}
	if used, _ := s.QuotaUsed(ctx, w.ID, "2026-12"); used != 0 {
		t.Errorf("another month: %d", used)
	}
	// Deleting a mock leaves the workspace's count.
	if err := s.DeleteMock(ctx, id(1)); err != nil {
		t.Fatal(err)
	}
	if used, _ := s.QuotaUsed(ctx, w.ID, "2026-11"); used != 2 {
		t.Errorf("after deleting a mock: %d, want 2", used)
	}
	// Deleting the workspace deletes its count; it cannot be counted then.
	if _, err := s.DeleteWorkspace(ctx, w.ID); err != nil {
		t.Fatal(err)
	}
	if used, err := s.QuotaUsed(ctx, w.ID, "2026-11"); err != nil || used != 0 {
		t.Errorf("counts survived the workspace: %d, %v", used, err)
	}
	_, _, err := s.ReserveQuota(ctx, w.ID, "2026-11", 3)
	wantError(t, err, decoy.ENOTFOUND, "")
}

// Concurrent reads of a workspace's mocks grant exactly its limit, while
// the mocks' own counts go on beside it.
func testWorkspaceQuotaConcurrent(t *testing.T, s TeamBackend) {
	ctx := context.Background()
	ann := mustUser(t, s, "ann@example.com")
	w := mustWorkspace(t, s, "acme", ann.ID)
	createIn(t, s, 1, defaultProject(t, s, w.ID).ID, "a", "[1]")
	var granted, mock atomic.Int64
	var wg sync.WaitGroup
	for g := range 16 {
		wg.Go(func() {
			for range 10 {
				key, limit, n := w.ID, int64(37), &granted
				if g%2 == 1 {
					key, limit, n = id(1), 0, &mock
				}
				_, ok, err := s.ReserveQuota(ctx, key, "2026-11", limit)
				if err != nil {
					t.Error(err)
					return
				}
				if ok {
					n.Add(1)
				}
			}
		})
	}
	wg.Wait()
	if granted.Load() != 37 {
		t.Errorf("granted %d of 80 against a workspace limit of 37", granted.Load())
	}
	if used, _ := s.QuotaUsed(ctx, w.ID, "2026-11"); used != 37 {
		t.Errorf("workspace count %d, want 37", used)
	}
	if used, _ := s.QuotaUsed(ctx, id(1), "2026-11"); used != 80 || mock.Load() != 80 {
		t.Errorf("mock count %d (granted %d), want 80", used, mock.Load())
	}
}

func testLimits(t *testing.T, s TeamBackend) {
	ctx := context.Background()
	w, err := s.CreateWorkspace(ctx, &decoy.Workspace{Name: "acme", Limits: decoy.WorkspaceLimits{MaxMocks: ptr(int64(2)), MaxBytes: ptr(int64(10))}}, "")
	if err != nil {
		t.Fatal(err)
	}
	p := defaultProject(t, s, w.ID).ID
	createIn(t, s, 1, p, "a", "[1,2]") // 5 bytes
	createIn(t, s, 2, p, "b", "[]")    // 7
	// max_mocks first: this one has room for its bytes.
	_, err = s.CreateMock(ctx, &decoy.Mock{ID: id(3), ProjectID: p, ContentType: "application/json", Status: 200}, bytesOf("1"))
	wantError(t, err, decoy.EFORBIDDEN, "Workspace limit reached: max_mocks")
	if _, err := s.FindMock(ctx, id(3)); decoy.ErrorCode(err) != decoy.ENOTFOUND {
		t.Errorf("a mock past the limit was stored: %v", err)
	}
	// Other workspaces are not limited.
	createIn(t, s, 3, "", "c", "[1,2,3,4,5,6,7,8,9]")

	// The data a write replaces is kept as a version (§9), and counts:
	// a is 5 bytes, b holds "[]" and would keep it beside 7 more: 14.
	_, err = s.ReplaceMockData(ctx, id(2), decoy.MockData{ContentType: "application/json", Data: bytesOf("[1,2,3]")})
	wantError(t, err, decoy.EFORBIDDEN, "Workspace limit reached: max_bytes")
	if d, _ := find(t, s, 2); d != "[]" {
		t.Errorf("refused data stored: %q", d)
	}
	if _, err := s.ReplaceMockData(ctx, id(2), decoy.MockData{ContentType: "application/json", Data: bytesOf("[1]")}); err != nil {
		t.Errorf("data up to the limit exactly: %v", err) // 5 + 2 + 3: 10
	}
	if _, err := s.UpdateWorkspace(ctx, w.ID, decoy.WorkspaceUpdate{Limits: map[string]*int64{"max_bytes": ptr(int64(15)), "max_mocks": nil}}); err != nil {
		t.Fatal(err)
	}
	_, err = s.CreateMock(ctx, &decoy.Mock{ID: id(4), ProjectID: p, ContentType: "application/json", Status: 200}, bytesOf("[1,2,3,4,5]"))
	wantError(t, err, decoy.EFORBIDDEN, "Workspace limit reached: max_bytes")
	createIn(t, s, 4, p, "d", "[1,2]") // 15
	// A limit lowered under what is held refuses growth, and a data
	// write grows the workspace even when the new data is smaller, as the
	// old data is kept; settings still change.
	if _, err := s.UpdateWorkspace(ctx, w.ID, decoy.WorkspaceUpdate{Limits: map[string]*int64{"max_bytes": ptr(int64(1)), "max_mocks": ptr(int64(1))}}); err != nil {
		t.Fatal(err)
	}
	_, err = s.ReplaceMockData(ctx, id(4), decoy.MockData{ContentType: "application/json", Data: bytesOf("[]")})
	wantError(t, err, decoy.EFORBIDDEN, "Workspace limit reached: max_bytes")
	name := "renamed"
	if _, err := s.UpdateMock(ctx, id(4), decoy.MockUpdate{Name: &name}); err != nil {
		t.Errorf("a settings change over the limit: %v", err)
	}
	if mocks, bytes, err := s.WorkspaceUsage(ctx, w.ID); err != nil || mocks != 3 || bytes != 15 {
		t.Errorf("WorkspaceUsage = %d, %d, %v; want 3 mocks, 15 bytes (versions included)", mocks, bytes, err)
	}
}

// Limits are exact under concurrency: 20 creates against max_mocks 5 store
// exactly 5, and against max_bytes exactly what fits.
func testLimitsConcurrent(t *testing.T, s TeamBackend) {
	tests := []struct {
		name   string
		limits decoy.WorkspaceLimits
		which  string
	}{
		{"MaxMocks", decoy.WorkspaceLimits{MaxMocks: ptr(int64(5))}, "max_mocks"},
		{"MaxBytes", decoy.WorkspaceLimits{MaxBytes: ptr(int64(5 * 10))}, "max_bytes"}, // documents of 10 bytes
	}
	for k, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			w, err := s.CreateWorkspace(ctx, &decoy.Workspace{Name: tt.name, Limits: tt.limits}, "")
			if err != nil {
				t.Fatal(err)
			}
			p := defaultProject(t, s, w.ID).ID
			var wg sync.WaitGroup
			errs := make([]error, 20)
			for i := range errs {
				wg.Go(func() {
					_, errs[i] = s.CreateMock(ctx, &decoy.Mock{ID: id(100*k + i), ProjectID: p, ContentType: "application/json", Status: 200},
						bytesOf("[1,2,3,45]"))
				})
			}
			wg.Wait()
			created := 0
			for _, err := range errs {
				switch {
				case err == nil:
					created++
				case decoy.ErrorMessage(err) != "Workspace limit reached: "+tt.which:
					t.Errorf("CreateMock: %v", err)
				}
			}
			mocks, _, err := s.WorkspaceUsage(ctx, w.ID)
			if created != 5 || mocks != 5 || err != nil {
				t.Errorf("%d created, %d held (%v), want exactly 5", created, mocks, err)
			}
		})
	}
}

func testSearchMocks(t *testing.T, s TeamBackend) {
	ctx := context.Background()
	a := mustWorkspace(t, s, "a", "")
	b := mustWorkspace(t, s, "b", "")
	pa := defaultProject(t, s, a.ID).ID
	pa2 := mustProject(t, s, a.ID, "two").ID
	pb := defaultProject(t, s, b.ID).ID
	createIn(t, s, 1, pa, "Users list", "[]")
	createIn(t, s, 2, pa2, "orders", "[]")
	createIn(t, s, 3, pb, "USERS by id", "[]")
	createIn(t, s, 4, "", "users in default", "[]")
	createIn(t, s, 5, pa, "100% real_data", "[]")
	createIn(t, s, 6, pa2, "Posts", "[]")
	tests := []struct {
		name string
		f    decoy.MockFilter
		want []int
	}{
		{"All", decoy.MockFilter{}, []int{1, 2, 3, 4, 5, 6}},
		{"NoWorkspaces", decoy.MockFilter{WorkspaceIDs: []string{}}, nil},
		{"WorkspaceSet", decoy.MockFilter{WorkspaceIDs: []string{a.ID, decoy.DefaultWorkspaceID}}, []int{1, 2, 4, 5, 6}},
		{"Workspace", decoy.MockFilter{WorkspaceID: a.ID}, []int{1, 2, 5, 6}},
		{"WorkspaceOutsideSet", decoy.MockFilter{WorkspaceIDs: []string{b.ID}, WorkspaceID: a.ID}, nil},
		{"Project", decoy.MockFilter{ProjectID: pa2}, []int{2, 6}},
		{"NameAnyCase", decoy.MockFilter{Q: "users"}, []int{1, 3, 4}},
		{"NameUpper", decoy.MockFilter{Q: "ORDER"}, []int{2}},
		{"NameInWorkspace", decoy.MockFilter{WorkspaceID: a.ID, Q: "Users"}, []int{1}},
		{"IDPrefix", decoy.MockFilter{Q: "00000000-0000-4000-8000-00000000000"}, []int{1, 2, 3, 4, 5, 6}},
		{"WholeID", decoy.MockFilter{Q: id(3)}, []int{3}},
		{"IDInside", decoy.MockFilter{Q: "4000-8000"}, nil},
		{"PercentIsLiteral", decoy.MockFilter{Q: "0%"}, []int{5}},
		{"UnderscoreIsLiteral", decoy.MockFilter{Q: "l_d"}, []int{5}},
		{"Nothing", decoy.MockFilter{Q: "nothing"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []int
			cursor := ""
			for pages := 0; ; pages++ {
				mocks, next, err := s.SearchMocks(ctx, tt.f, cursor, 2)
				if err != nil || len(mocks) > 2 || pages > 5 {
					t.Fatalf("page %d: %d mocks, %v", pages, len(mocks), err)
				}
				for _, m := range mocks {
					var n int
					fmt.Sscanf(m.ID[len(m.ID)-12:], "%d", &n)
					got = append(got, n)
					if m.WorkspaceID == "" || m.ProjectID == "" {
						t.Errorf("mock %s without its place", m.ID)
					}
				}
				if next == "" {
					break
				}
				cursor = next
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("found %v, want %v", got, tt.want)
			}
		})
	}
	for _, bad := range []struct {
		cursor string
		limit  int
	}{{"", 0}, {"x", 2}, {"-1", 2}, {"01", 2}} {
		if _, _, err := s.SearchMocks(ctx, decoy.MockFilter{}, bad.cursor, bad.limit); decoy.ErrorCode(err) != decoy.EINVALID {
			t.Errorf("SearchMocks(%q, %d): %v, want EINVALID", bad.cursor, bad.limit, err)
		}
	}
}

func testAudit(t *testing.T, s TeamBackend) {
	ctx := context.Background()
	w := mustWorkspace(t, s, "acme", "")
	at := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	for i := range 7 {
		for _, ws := range []string{w.ID, decoy.DefaultWorkspaceID} {
			e := &decoy.AuditEntry{WorkspaceID: ws, At: at.Add(time.Duration(i) * time.Second),
				Actor:  decoy.Actor{Kind: "user", ID: id(50), Label: "ann@example.com"},
				Action: fmt.Sprint("mock.create.", i), Target: decoy.AuditTarget{Kind: "mock", ID: id(i), Name: "m"}, IP: "192.0.2.1"}
			if err := s.AppendAudit(ctx, e); err != nil {
				t.Fatal(err)
			}
		}
	}
	// Entries with no workspace are kept apart.
	if err := s.AppendAudit(ctx, &decoy.AuditEntry{At: at, Actor: decoy.ServerAdmin, Action: "user.create", Target: decoy.AuditTarget{Kind: "user", ID: id(50)}}); err != nil {
		t.Fatal(err)
	}
	err := s.AppendAudit(ctx, &decoy.AuditEntry{WorkspaceID: id(9), At: at, Actor: decoy.ServerAdmin, Action: "x"})
	wantError(t, err, decoy.ENOTFOUND, "Workspace not found")
	var got []*decoy.AuditEntry
	cursor := ""
	for pages := 0; ; pages++ {
		es, next, err := s.ListAudit(ctx, w.ID, cursor, 3)
		if err != nil || len(es) > 3 || pages > 3 {
			t.Fatalf("page %d: %d entries, %v", pages, len(es), err)
		}
		got = append(got, es...)
		if next == "" {
			break
		}
		cursor = next
		// An entry added meanwhile is not seen by the next pages.
		if pages == 0 {
			s.AppendAudit(ctx, &decoy.AuditEntry{WorkspaceID: w.ID, At: at.Add(time.Hour), Actor: decoy.ServerAdmin, Action: "late"})
		}
	}
	if len(got) != 7 {
		t.Fatalf("%d entries, want 7", len(got))
	}
	for i, e := range got {
		n := 6 - i
		want := decoy.AuditEntry{WorkspaceID: w.ID, At: at.Add(time.Duration(n) * time.Second),
			Actor:  decoy.Actor{Kind: "user", ID: id(50), Label: "ann@example.com"},
			Action: fmt.Sprint("mock.create.", n), Target: decoy.AuditTarget{Kind: "mock", ID: id(n), Name: "m"}, IP: "192.0.2.1"}
		if e.WorkspaceID != want.WorkspaceID || !e.At.Equal(want.At) || e.Actor != want.Actor || e.Action != want.Action || e.Target != want.Target || e.IP != want.IP {
			t.Errorf("entry %d = %+v, want %+v", i, e, want)
		}
	}
	for _, bad := range []struct {
		cursor string
		limit  int
	}{{"", 0}, {"x", 2}, {"-1", 2}, {"01", 2}} {
		if _, _, err := s.ListAudit(ctx, w.ID, bad.cursor, bad.limit); decoy.ErrorCode(err) != decoy.EINVALID {
			t.Errorf("ListAudit(%q, %d): %v, want EINVALID", bad.cursor, bad.limit, err)
		}
	}
}

// A page of the audit log, of users and of mocks found, holds at most
// decoy.MaxPage entries, whatever the limit asked.
func testAuditBound(t *testing.T, s TeamBackend) {
	ctx := context.Background()
	at := time.Now()
	for i := range decoy.MaxPage + 1 {
		if err := s.AppendAudit(ctx, &decoy.AuditEntry{WorkspaceID: decoy.DefaultWorkspaceID, At: at, Actor: decoy.ServerAdmin, Action: fmt.Sprint(i)}); err != nil {
			t.Fatal(err)
		}
	}
	es, next, err := s.ListAudit(ctx, decoy.DefaultWorkspaceID, "", decoy.MaxPage+100)
	if err != nil || len(es) != decoy.MaxPage || next == "" {
		t.Fatalf("a page asked larger than the bound: %d entries, next %q, %v", len(es), next, err)
	}
	es, next, err = s.ListAudit(ctx, decoy.DefaultWorkspaceID, next, decoy.MaxPage+100)
	if err != nil || len(es) != 1 || next != "" || es[0].Action != "0" {
		t.Errorf("last page: %v, %q, %v", es, next, err)
	}
	if _, _, err := s.SearchMocks(ctx, decoy.MockFilter{}, "", 1<<40); err != nil {
		t.Errorf("SearchMocks with a huge limit: %v", err)
	}
	if _, _, err := s.ListUsers(ctx, "", 1<<40); err != nil {
		t.Errorf("ListUsers with a huge limit: %v", err)
	}
}

// RunAuditRetention checks that a store set to keep keep entries of a
// workspace's audit log, pruned at every append, keeps the newest keep of
// each workspace (and of no workspace), whatever the others hold.
func RunAuditRetention(t *testing.T, s TeamBackend, keep int) {
	ctx := context.Background()
	w := mustWorkspace(t, s, "acme", "")
	at := time.Now()
	appends := []struct {
		workspace string
		n         int
	}{{w.ID, keep + 3}, {decoy.DefaultWorkspaceID, keep - 1}, {"", keep + 2}}
	for _, a := range appends {
		for i := range a.n {
			if err := s.AppendAudit(ctx, &decoy.AuditEntry{WorkspaceID: a.workspace, At: at, Actor: decoy.ServerAdmin, Action: fmt.Sprint(i)}); err != nil {
				t.Fatal(err)
			}
		}
	}
	tests := []struct {
		workspace   string
		want, first int // entries kept, the action of the newest
	}{{w.ID, keep, keep + 2}, {decoy.DefaultWorkspaceID, keep - 1, keep - 2}}
	for _, tt := range tests {
		es, _, err := s.ListAudit(ctx, tt.workspace, "", 2*keep)
		if err != nil || len(es) != tt.want || es[0].Action != fmt.Sprint(tt.first) || es[len(es)-1].Action != fmt.Sprint(tt.first-tt.want+1) {
			t.Errorf("workspace %s: %d entries kept (%v), want the newest %d", tt.workspace, len(es), err, tt.want)
		}
	}
}

// RunAuditPruneInterleaved checks, on a store set to keep keep entries of
// a workspace and to prune one in every (about) 4 appends, that a
// workspace whose appends interleave with another's is pruned all the
// same: pruned on the global sequence's turns, a workspace whose appends
// never landed on one kept every entry (found by an audit).
func RunAuditPruneInterleaved(t *testing.T, s TeamBackend, keep int) {
	ctx := context.Background()
	a, b := mustWorkspace(t, s, "odd", ""), mustWorkspace(t, s, "even", "")
	at := time.Now()
	for i := range 400 {
		for _, w := range []string{a.ID, b.ID} {
			if err := s.AppendAudit(ctx, &decoy.AuditEntry{WorkspaceID: w, At: at, Actor: decoy.ServerAdmin, Action: fmt.Sprint(i)}); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, w := range []string{a.ID, b.ID} {
		es, _, err := s.ListAudit(ctx, w, "", decoy.MaxPage)
		// Past keep, each append prunes with a chance of 1 in 4: 60 in a
		// row that do not is a chance of 3e-8.
		if err != nil || len(es) > keep+60 {
			t.Errorf("workspace %s: %d entries kept after 400 (%v), want at most %d", w, len(es), err, keep+60)
		}
	}
}
