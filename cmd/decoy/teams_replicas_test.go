package main_test

import (
	"strings"
	"testing"
	"time"
)

// Teams across replicas on one PostgreSQL and one Redis: what one replica
// changes about who may do what is in force on the other within a second.

// storesCountWorkspaces says whether the stores' QuotaCounter counts a
// workspace's reads under its id (server.WorkspaceQuotaKey), as it counts a
// mock's: SQLite's and PostgreSQL's count only ids of mocks so far, and a
// workspace's monthly_reads needs them to. Set it once they do.
const storesCountWorkspaces = false

// within polls check until it is true, for at most d.
func within(d time.Duration, check func() bool) bool {
	deadline := time.Now().Add(d)
	for {
		if check() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestReplicasTeams(t *testing.T) {
	db := postgresURL(t)
	rd, prefix := redisURL(t)
	ps := startReplicas(t, 2, db, rd, prefix, "--auth-failure-limit", "0")
	a, b := ps[0], ps[1]
	o := newOrg(t, a)

	t.Run("revoked key", func(t *testing.T) {
		id, secret := o.key(`{"name":"` + o.unique("r") + `","role":"viewer"}`)
		for _, p := range ps {
			if r := api(t, p, "GET", "workspaces/"+o.ws, secret, ""); r.status != 200 {
				t.Fatalf("%s before revoking: %d %s", p.url, r.status, r.body)
			}
		}
		if r := api(t, a, "DELETE", "workspaces/"+o.ws+"/keys/"+id, o.tokens["owner"], ""); r.status != 204 {
			t.Fatalf("revoke: %d %s", r.status, r.body)
		}
		revoked := time.Now()
		for _, p := range ps {
			if !within(time.Second-time.Since(revoked), func() bool { return api(t, p, "GET", "workspaces/"+o.ws, secret, "").status == 401 }) {
				t.Errorf("%s still takes the revoked key a second later", p.url)
			}
		}
	})

	t.Run("changed role", func(t *testing.T) {
		patch := func(p *proc) int {
			return api(t, p, "PATCH", "mocks/"+o.mock2, o.tokens["viewer"], `{"delay_ms":0}`).status
		}
		if s := patch(b); s != 403 {
			t.Fatalf("viewer patch on b: %d", s)
		}
		if r := api(t, a, "PATCH", "workspaces/"+o.ws+"/members/"+o.users["viewer"], o.tokens["owner"], `{"role":"editor"}`); r.status != 200 {
			t.Fatalf("promote: %d %s", r.status, r.body)
		}
		if !within(time.Second, func() bool { return patch(b) == 200 }) {
			t.Error("b refuses the promoted member a second later")
		}
		api(t, a, "DELETE", "workspaces/"+o.ws+"/members/"+o.users["viewer"], o.tokens["owner"], "")
		if !within(time.Second, func() bool { return patch(b) == 404 }) {
			t.Error("b lets a removed member in a second later")
		}
	})

	t.Run("workspace monthly reads", func(t *testing.T) {
		if !storesCountWorkspaces {
			t.Skip("the stores' QuotaCounter does not count workspace ids yet")
		}
		ws := o.admin("POST", "workspaces", `{"name":"`+o.unique("q")+`"}`, 201, "id")
		project := o.defaultProject(ws)
		m1, m2 := o.newMock(project, "", `[1]`), o.newMock(project, "", `[2]`)
		if r := api(t, b, "PATCH", "workspaces/"+ws, adminToken, `{"limits":{"monthly_reads":5}}`); r.status != 200 {
			t.Fatalf("limits: %d %s", r.status, r.body)
		}
		// No replica read this workspace's mocks yet, so none holds its
		// limit from before.
		counts := concurrentGets(t, 20, func(i int) string {
			m := m1
			if i%4 >= 2 {
				m = m2
			}
			return ps[i%2].url + "/mock/" + m
		})
		if counts[200] != 5 || counts[429] != 15 {
			t.Errorf("20 reads against monthly_reads 5: %v, want 5 200s and 15 429s", counts)
		}
		for _, p := range ps {
			if r := get(t, p.url+"/mock/"+m2); r.status != 429 || !strings.Contains(r.body, "Monthly request quota exceeded") {
				t.Errorf("%s after the limit: %d %s", p.url, r.status, r.body)
			}
		}
	})
}
