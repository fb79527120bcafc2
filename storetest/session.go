package storetest

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/decoy-mock/decoy"
)

// StudioBackend is what Decoy Studio needs from a store, besides the rest:
// with the users (§6) who sign in to it.
type StudioBackend interface {
	Backend
	decoy.SessionStore
	decoy.UsageHistoryStore
	decoy.TeamStore
}

// RunStudio runs the suite of sessions and usage history. open returns an
// empty store for each test.
func RunStudio(t *testing.T, open func(t *testing.T) StudioBackend) {
	t.Run("Sessions", func(t *testing.T) { testSessions(t, open(t)) })
	t.Run("SessionExpiry", func(t *testing.T) { testSessionExpiry(t, open(t)) })
	t.Run("SessionsPerUser", func(t *testing.T) { testSessionsPerUser(t, open(t)) })
	t.Run("SessionsOfAnotherAdminToken", func(t *testing.T) { testSessionsNotOf(t, open(t)) })
	t.Run("UserSessions", func(t *testing.T) { testUserSessions(t, open(t)) })
	t.Run("UserSessionsEnd", func(t *testing.T) { testUserSessionsEnd(t, open(t)) })
	t.Run("UsageHistory", func(t *testing.T) { testUsageHistory(t, open(t)) })
	t.Run("UsagePrune", func(t *testing.T) { testUsagePrune(t, open(t)) })
	t.Run("UsageConcurrent", func(t *testing.T) { testUsageConcurrent(t, open(t)) })
}

var t0 = time.Date(2026, 11, 22, 10, 30, 0, 0, time.UTC)

func session(id string, created time.Time) *decoy.Session {
	return &decoy.Session{
		ID: id, SecretHash: []byte("secret-hash-" + id), AdminHash: []byte("admin"),
		CreatedAt: created, LastSeenAt: created, ExpiresAt: created.Add(7 * 24 * time.Hour),
	}
}

func testSessions(t *testing.T, s StudioBackend) {
	ctx := context.Background()
	in := session("a", t0)
	if err := s.CreateSession(ctx, in); err != nil {
		t.Fatal(err)
	}
	wantCode(t, s.CreateSession(ctx, session("a", t0)), decoy.ECONFLICT)
	got, err := s.FindSession(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	if got.ID != "a" || string(got.SecretHash) != "secret-hash-a" || string(got.AdminHash) != "admin" || got.UserID != "" ||
		!got.CreatedAt.Equal(t0) || !got.LastSeenAt.Equal(t0) || !got.ExpiresAt.Equal(in.ExpiresAt) {
		t.Errorf("stored session differs: %+v", got)
	}
	if got.CreatedAt.Location() != time.UTC {
		t.Errorf("times not in UTC: %v", got.CreatedAt)
	}
	if err := s.TouchSession(ctx, "a", t0.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.FindSession(ctx, "a"); !got.LastSeenAt.Equal(t0.Add(time.Hour)) || !got.CreatedAt.Equal(t0) {
		t.Errorf("after touch: %+v", got)
	}
	_, err = s.FindSession(ctx, "b")
	wantCode(t, err, decoy.ENOTFOUND)
	if err := s.TouchSession(ctx, "b", t0); err != nil {
		t.Errorf("touching a missing session: %v", err)
	}
	if err := s.DeleteSession(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	_, err = s.FindSession(ctx, "a")
	wantCode(t, err, decoy.ENOTFOUND)
	if err := s.DeleteSession(ctx, "a"); err != nil {
		t.Errorf("deleting twice: %v", err)
	}
}

func testSessionExpiry(t *testing.T, s StudioBackend) {
	ctx := context.Background()
	fresh := session("fresh", t0)
	idle := session("idle", t0.Add(-13*time.Hour))
	old := session("old", t0.Add(-8*24*time.Hour))
	old.LastSeenAt = t0.Add(-time.Minute)
	for _, x := range []*decoy.Session{fresh, idle, old} {
		if err := s.CreateSession(ctx, x); err != nil {
			t.Fatal(err)
		}
	}
	n, err := s.DeleteExpiredSessions(ctx, t0, t0.Add(-12*time.Hour))
	if err != nil || n != 2 {
		t.Fatalf("deleted %d, %v; want 2", n, err)
	}
	if _, err := s.FindSession(ctx, "fresh"); err != nil {
		t.Errorf("a live session was deleted: %v", err)
	}
	for _, id := range []string{"idle", "old"} {
		_, err := s.FindSession(ctx, id)
		wantCode(t, err, decoy.ENOTFOUND)
	}
}

// userSession is a session of a user, whose AdminHash is the user's (see
// decoy.Session).
func userSession(id, userID string, created time.Time) *decoy.Session {
	x := session(id, created)
	x.UserID, x.AdminHash = userID, []byte("user "+userID)
	return x
}

// The server admin's sessions of another admin token end; users' sessions,
// which no admin token opened, stay.
func testSessionsNotOf(t *testing.T, s StudioBackend) {
	ctx := context.Background()
	u, err := s.CreateUser(ctx, &decoy.User{Email: "ann@example.com", Name: "Ann", PasswordHash: []byte("h")})
	if err != nil {
		t.Fatal(err)
	}
	mine, other, user := session("mine", t0), session("other", t0), userSession("user", u.ID, t0)
	other.AdminHash = []byte("another admin")
	for _, x := range []*decoy.Session{mine, other, user} {
		if err := s.CreateSession(ctx, x); err != nil {
			t.Fatal(err)
		}
	}
	n, err := s.DeleteSessionsNotOf(ctx, []byte("admin"))
	if err != nil || n != 1 {
		t.Fatalf("deleted %d, %v; want 1", n, err)
	}
	if _, err := s.FindSession(ctx, "mine"); err != nil {
		t.Errorf("a session of the admin token in force was deleted: %v", err)
	}
	_, err = s.FindSession(ctx, "other")
	wantCode(t, err, decoy.ENOTFOUND)
	if _, err := s.FindSession(ctx, "user"); err != nil {
		t.Errorf("a user's session was deleted with the admin's: %v", err)
	}
}

// A user's session keeps its UserID; one of no user is refused.
func testUserSessions(t *testing.T, s StudioBackend) {
	ctx := context.Background()
	u, err := s.CreateUser(ctx, &decoy.User{Email: "ann@example.com", Name: "Ann", PasswordHash: []byte("h")})
	if err != nil {
		t.Fatal(err)
	}
	in := userSession("a", u.ID, t0)
	if err := s.CreateSession(ctx, in); err != nil {
		t.Fatal(err)
	}
	got, err := s.FindSession(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	if got.UserID != u.ID || string(got.AdminHash) != string(in.AdminHash) || !got.ExpiresAt.Equal(in.ExpiresAt) {
		t.Errorf("stored session differs: %+v", got)
	}
	wantCode(t, s.CreateSession(ctx, userSession("b", id(9), t0)), decoy.ENOTFOUND)
	_, err = s.FindSession(ctx, "b")
	wantCode(t, err, decoy.ENOTFOUND)
}

// A user's sessions end when its password changes or it is deleted, and
// only its own.
func testUserSessionsEnd(t *testing.T, s StudioBackend) {
	ctx := context.Background()
	var users []*decoy.User
	for _, email := range []string{"ann@example.com", "bob@example.com"} {
		u, err := s.CreateUser(ctx, &decoy.User{Email: email, Name: email, PasswordHash: []byte("h")})
		if err != nil {
			t.Fatal(err)
		}
		users = append(users, u)
	}
	ann, bob := users[0], users[1]
	for _, x := range []*decoy.Session{session("admin", t0), userSession("ann", ann.ID, t0), userSession("bob", bob.ID, t0)} {
		if err := s.CreateSession(ctx, x); err != nil {
			t.Fatal(err)
		}
	}
	live := func(want ...string) {
		t.Helper()
		for _, sid := range []string{"admin", "ann", "bob"} {
			_, err := s.FindSession(ctx, sid)
			if slices.Contains(want, sid) != (err == nil) {
				t.Errorf("session %s: %v; want live: %v", sid, err, slices.Contains(want, sid))
			}
		}
	}
	name, hash := "Ann B.", []byte("new hash")
	if _, err := s.UpdateUser(ctx, ann.ID, decoy.UserUpdate{Name: &name}); err != nil {
		t.Fatal(err)
	}
	live("admin", "ann", "bob")
	if _, err := s.UpdateUser(ctx, ann.ID, decoy.UserUpdate{PasswordHash: &hash}); err != nil {
		t.Fatal(err)
	}
	live("admin", "bob")
	if err := s.DeleteUser(ctx, bob.ID); err != nil {
		t.Fatal(err)
	}
	live("admin")
}

func bucketsOf(bs []decoy.UsageBucket) map[time.Time][2]int64 {
	m := map[time.Time][2]int64{}
	for _, b := range bs {
		m[b.Start.UTC()] = [2]int64{b.Served, b.Refused}
	}
	return m
}

func testUsageHistory(t *testing.T, s StudioBackend) {
	ctx := context.Background()
	create(t, s, 1, "[]")
	create(t, s, 2, "[]")
	midnight := time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)
	counts := []decoy.UsageCount{
		{MockID: id(1), Minute: t0, Served: 3, Refused: 1},
		{MockID: id(1), Minute: t0.Add(-time.Minute), Served: 2},
		{MockID: id(1), Minute: midnight.Add(-time.Minute), Served: 7}, // the day before
		{MockID: id(2), Minute: t0, Served: 100},
		{MockID: id(9), Minute: t0, Served: 5}, // no such mock: dropped
	}
	if err := s.AddUsage(ctx, counts, t0); err != nil {
		t.Fatal(err)
	}
	// Increments: a second replica's counts add up.
	if err := s.AddUsage(ctx, []decoy.UsageCount{{MockID: id(1), Minute: t0, Served: 1, Refused: 4}}, t0); err != nil {
		t.Fatal(err)
	}
	minutes, days, err := s.UsageHistory(ctx, id(1), t0.Add(-59*time.Minute), time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	m := bucketsOf(minutes)
	if len(m) != 2 || m[t0] != [2]int64{4, 5} || m[t0.Add(-time.Minute)] != [2]int64{2, 0} {
		t.Errorf("minutes = %+v", minutes)
	}
	for i := 1; i < len(minutes); i++ {
		if !minutes[i-1].Start.Before(minutes[i].Start) {
			t.Errorf("minutes not oldest first: %+v", minutes)
		}
	}
	d := bucketsOf(days)
	if len(d) != 2 || d[midnight] != [2]int64{6, 5} || d[midnight.AddDate(0, 0, -1)] != [2]int64{7, 0} {
		t.Errorf("days = %+v", days)
	}
	// From today only: the day before is left out.
	_, days, _ = s.UsageHistory(ctx, id(1), t0, midnight)
	if len(days) != 1 {
		t.Errorf("days from %v: %+v", midnight, days)
	}
	if _, days, _ := s.UsageHistory(ctx, id(9), t0.Add(-time.Hour), midnight); len(days) != 0 {
		t.Errorf("a missing mock has history %+v", days)
	}
	// Deleting the mock deletes its history; one made again starts empty.
	if err := s.DeleteMock(ctx, id(1)); err != nil {
		t.Fatal(err)
	}
	create(t, s, 1, "[]")
	if minutes, days, _ := s.UsageHistory(ctx, id(1), t0.Add(-time.Hour), midnight.AddDate(0, -1, 0)); len(minutes)+len(days) != 0 {
		t.Errorf("history survived deletion: %+v %+v", minutes, days)
	}
}

func testUsagePrune(t *testing.T, s StudioBackend) {
	ctx := context.Background()
	create(t, s, 1, "[]")
	old := t0.Add(-3 * time.Hour)
	ancient := t0.AddDate(0, 0, -70)
	if err := s.AddUsage(ctx, []decoy.UsageCount{
		{MockID: id(1), Minute: old, Served: 1},
		{MockID: id(1), Minute: ancient, Served: 1},
	}, old); err != nil {
		t.Fatal(err)
	}
	// A later flush prunes what is past retention.
	if err := s.AddUsage(ctx, []decoy.UsageCount{{MockID: id(1), Minute: t0, Served: 1}}, t0); err != nil {
		t.Fatal(err)
	}
	minutes, days, err := s.UsageHistory(ctx, id(1), ancient.AddDate(0, 0, -1), ancient.AddDate(0, 0, -1))
	if err != nil {
		t.Fatal(err)
	}
	if m := bucketsOf(minutes); len(m) != 1 || m[t0][0] != 1 {
		t.Errorf("minutes older than %v kept: %+v", decoy.UsageMinuteRetention, minutes)
	}
	if d := bucketsOf(days); len(d) != 1 {
		t.Errorf("days older than %v kept or today lost: %+v", decoy.UsageDayRetention, days)
	}
}

func testUsageConcurrent(t *testing.T, s StudioBackend) {
	ctx := context.Background()
	create(t, s, 1, "[]")
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 10 {
				if err := s.AddUsage(ctx, []decoy.UsageCount{{MockID: id(1), Minute: t0, Served: 1, Refused: 2}}, t0); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	minutes, _, err := s.UsageHistory(ctx, id(1), t0, t0)
	if err != nil {
		t.Fatal(err)
	}
	if len(minutes) != 1 || minutes[0].Served != 40 || minutes[0].Refused != 80 {
		t.Errorf("concurrent increments: %+v, want 40 served and 80 refused", minutes)
	}
}

// A user keeps at most decoy.MaxSessionsPerUser sessions, the newest; the
// server admin as many per admin token; one's sign-ins never end
// another's sessions.
func testSessionsPerUser(t *testing.T, s StudioBackend) {
	ctx := context.Background()
	u, err := s.CreateUser(ctx, &decoy.User{Email: "many@example.com", Name: "Many", PasswordHash: []byte("h")})
	if err != nil {
		t.Fatal(err)
	}
	other := session("other-admin", t0)
	other.AdminHash = []byte("another admin token")
	if err := s.CreateSession(ctx, other); err != nil {
		t.Fatal(err)
	}
	const extra = 5
	for i := range decoy.MaxSessionsPerUser + extra {
		for _, who := range []string{"user", "admin"} {
			x := session(fmt.Sprintf("%s-%03d", who, i), t0.Add(time.Duration(i)*time.Second))
			if who == "user" {
				x.UserID = u.ID
			}
			if err := s.CreateSession(ctx, x); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, who := range []string{"user", "admin"} {
		for i := range decoy.MaxSessionsPerUser + extra {
			_, err := s.FindSession(ctx, fmt.Sprintf("%s-%03d", who, i))
			if kept := err == nil; kept != (i >= extra) {
				t.Fatalf("%s's session %d of %d kept: %v (%v)", who, i+1, decoy.MaxSessionsPerUser+extra, kept, err)
			}
		}
	}
	if _, err := s.FindSession(ctx, "other-admin"); err != nil {
		t.Errorf("the session of another admin token was deleted: %v", err)
	}
}
