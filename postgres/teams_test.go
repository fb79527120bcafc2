package postgres_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/decoy-mock/decoy"
	"github.com/decoy-mock/decoy/postgres"
	"github.com/decoy-mock/decoy/storetest"
)

func TestTeamStore(t *testing.T) {
	baseURL(t)
	storetest.RunTeams(t, func(t *testing.T) storetest.TeamBackend {
		_, u := newSchema(t)
		return open(t, u)
	})
}

// Two stores on one schema stand for two replicas: 20 creates spread over
// them against max_mocks 5 store exactly 5, and the last owner stays
// whichever replica demotes.
func TestTeamsAcrossStores(t *testing.T) {
	_, u := newSchema(t)
	dbs := []*postgres.DB{open(t, u), open(t, u)}
	ctx := context.Background()
	five := int64(5)
	w, err := dbs[0].CreateWorkspace(ctx, &decoy.Workspace{Name: "acme", Limits: decoy.WorkspaceLimits{MaxMocks: &five}}, "")
	if err != nil {
		t.Fatal(err)
	}
	ps, err := dbs[1].ListProjects(ctx, w.ID)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make([]error, 20)
	for i := range errs {
		db := dbs[i%len(dbs)]
		wg.Go(func() {
			_, errs[i] = db.CreateMock(ctx, &decoy.Mock{ID: fmt.Sprintf("00000000-0000-4000-8000-%012d", i), ProjectID: ps[0].ID,
				ContentType: "application/json", Status: 200}, decoy.Data{Bytes: []byte(`[]`)})
		})
	}
	wg.Wait()
	created := 0
	for _, err := range errs {
		switch {
		case err == nil:
			created++
		case decoy.ErrorMessage(err) != "Workspace limit reached: max_mocks":
			t.Errorf("CreateMock: %v", err)
		}
	}
	if created != 5 {
		t.Errorf("%d created across replicas against max_mocks 5", created)
	}

	var owners []string
	for i := range 2 {
		u, err := dbs[i].CreateUser(ctx, &decoy.User{Email: fmt.Sprint("owner", i, "@example.com")})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := dbs[i].PutMember(ctx, w.ID, u.ID, decoy.RoleOwner); err != nil {
			t.Fatal(err)
		}
		owners = append(owners, u.ID)
	}
	for i, id := range owners {
		wg.Go(func() { dbs[i].RemoveMember(ctx, w.ID, id) })
	}
	wg.Wait()
	if members, err := dbs[0].ListMembers(ctx, w.ID); err != nil || len(members) != 1 || members[0].Role != decoy.RoleOwner {
		t.Errorf("members after two replicas removed both owners at once: %v, %v", members, err)
	}
}

// The audit log of a workspace keeps its newest entries.
func TestAuditRetention(t *testing.T) {
	_, u := newSchema(t)
	defer postgres.SetAuditRetention(5, 1)()
	storetest.RunAuditRetention(t, open(t, u), 5)
}

// A workspace's log is pruned whatever other workspaces append between.
func TestAuditPruneInterleaved(t *testing.T) {
	_, u := newSchema(t)
	defer postgres.SetAuditRetention(5, 4)()
	storetest.RunAuditPruneInterleaved(t, open(t, u), 5)
}

func TestRouteStore(t *testing.T) {
	baseURL(t)
	storetest.RunRoutes(t, func(t *testing.T) storetest.RouteBackend {
		_, u := newSchema(t)
		return open(t, u)
	})
}

func TestRuleCounter(t *testing.T) {
	baseURL(t)
	storetest.RunRuleCounter(t, func(t *testing.T) (decoy.RuleCounter, func(t *testing.T) string) {
		_, u := newSchema(t)
		db := open(t, u)
		return db, func(t *testing.T) string { return storetest.NewRoute(t, db) }
	})
}

// A route deleted takes its counts with it; a take for it counts nothing.
func TestRuleCounterRouteGone(t *testing.T) {
	baseURL(t)
	_, u := newSchema(t)
	db := open(t, u)
	ctx := context.Background()
	route := storetest.NewRoute(t, db)
	if ok, err := db.TakeRule(ctx, route, 0, 1); !ok || err != nil {
		t.Fatalf("take: %v, %v", ok, err)
	}
	if err := db.DeleteRoute(ctx, route); err != nil {
		t.Fatal(err)
	}
	if ok, err := db.TakeRule(ctx, route, 0, 5); ok || err != nil {
		t.Errorf("take for a deleted route: %v, %v", ok, err)
	}
}
