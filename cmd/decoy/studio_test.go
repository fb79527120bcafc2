package main_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/decoy-mock/decoy"
	"github.com/decoy-mock/decoy/client"
)

// Reads counted in memory are written at a graceful stop: after a restart
// the history still has them, though the stop came before any flush.
func TestUsageHistoryFlushedAtStop(t *testing.T) {
	dir := t.TempDir()
	p := start(t, dir, "--admin-token", adminToken, "--rate-limit", "3")
	m := createMock(t, p, `[1,2,3]`, client.CreateOptions{Name: "h"})
	for range 4 {
		get(t, p.url+"/mock/"+m.ID) // 3 served, then 1 refused by the rate limit
	}
	if err := p.stop(); err != nil {
		t.Fatal(err)
	}
	q := start(t, dir, "--admin-token", adminToken)
	a := get(t, q.url+"/admin/v1/mocks/"+m.ID+"/usage/history", "Authorization", "Bearer "+adminToken)
	var h decoy.UsageHistory
	if err := json.Unmarshal([]byte(a.body), &h); err != nil || a.status != 200 {
		t.Fatalf("%d %s: %v", a.status, a.body, err)
	}
	var served, refused int64
	for _, b := range h.Minutes {
		served += b.Served
		refused += b.Refused
	}
	if served != 3 || refused != 1 {
		t.Errorf("after a restart the last hour has %d served and %d refused, want 3 and 1", served, refused)
	}
	if today := h.Days[len(h.Days)-1]; today.Served != 3 || today.Refused != 1 {
		t.Errorf("today: %+v", today)
	}
}

// The Studio is served at / by default, and --studio=false turns it off.
func TestStudioFlag(t *testing.T) {
	p := start(t, t.TempDir(), "--admin-token", adminToken)
	a := get(t, p.url+"/")
	if a.status != 200 || !strings.HasPrefix(a.header.Get("Content-Type"), "text/html") || !p.waitOutput("Decoy Studio: "+p.url+"/") {
		t.Errorf("GET / with the Studio on: %d %q", a.status, a.header.Get("Content-Type"))
	}
	q := start(t, t.TempDir(), "--admin-token", adminToken, "--studio=false")
	for _, path := range []string{"/", "/studio/session"} {
		if a := get(t, q.url+path); a.status != http.StatusNotFound || a.body != `{"error":"Not found"}`+"\n" {
			t.Errorf("GET %s with --studio=false: %d %s", path, a.status, a.body)
		}
	}
	if strings.Contains(q.stdout.String(), "Decoy Studio") {
		t.Error("--studio=false still announces the Studio")
	}
}
