package admin_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/decoy-mock/decoy"
	"github.com/decoy-mock/decoy/internal/servertest"
)

// journalOf starts a harness with teams and a journal, a route GET /users
// on a mock of the workspace's default project, and returns the path it
// answers at.
func journalOf(t *testing.T) (tm *teams, path string) {
	tm = newTeams(t, servertest.WithJournal(t, 100))
	m := tm.mock(tm.project, `[{"id":1},{"id":2}]`)
	tm.want(tm.call("POST", "/admin/v1/projects/"+tm.project+"/routes", tm.editor, `{"method":"GET","path":"/users","mock_id":"`+m+`"}`), 201)
	slug := tm.want(tm.call("GET", "/admin/v1/projects/"+tm.project, tm.viewer, ""), 200)["slug"].(string)
	return tm, "/p/" + slug + "/users"
}

// CONTRACT §13.2: the journal's listing, its filters and pages, its count
// and its clearing, as the OpenAPI document describes them.
func TestJournalEndpoints(t *testing.T) {
	router := servertest.OpenAPIRouter(t)
	tm, path := journalOf(t)
	for i := range 6 {
		tm.Get(fmt.Sprintf("%s?n=%d", path, i))
	}
	tm.Get(path + "/nothing")
	tm.Do("HEAD", path)
	base := "/admin/v1/projects/" + tm.project + "/requests"
	tm.Journal(tm.project, 8)
	check := func(method, url, token string, status int) servertest.Response {
		t.Helper()
		return tm.CheckDocumented(t, router, method, url, nil, status, "Authorization", "Bearer "+token)
	}
	queries := func(r servertest.Response) (out []string, next *string) {
		t.Helper()
		var page struct {
			Requests   []decoy.JournalEntry `json:"requests"`
			NextCursor *string              `json:"next_cursor"`
		}
		if err := json.Unmarshal([]byte(r.Body), &page); err != nil {
			t.Fatal(err)
		}
		for _, e := range page.Requests {
			out = append(out, e.Method+" "+e.Query)
		}
		return out, page.NextCursor
	}
	for _, tc := range []struct {
		query, want string
		count       int
	}{
		{"", "[HEAD  GET  GET n=5 GET n=4 GET n=3 GET n=2 GET n=1 GET n=0]", 8},
		{"?method=head", "[HEAD ]", 1},
		{"?status=404", "[GET ]", 1},
		{"?path=" + path, "[HEAD  GET n=5 GET n=4 GET n=3 GET n=2 GET n=1 GET n=0]", 7},
		{"?path=" + path + "/*", "[GET ]", 1},
		{"?method=GET&status=200&since=2000-01-01T00:00:00Z", "[GET n=5 GET n=4 GET n=3 GET n=2 GET n=1 GET n=0]", 6},
		{"?since=2100-01-01T00:00:00Z", "[]", 0},
	} {
		got, next := queries(check("GET", base+tc.query, tm.viewer, 200))
		if fmt.Sprint(got) != tc.want || next != nil {
			t.Errorf("%s: %v (next %v), want %s", tc.query, got, next, tc.want)
		}
		r := check("GET", base+"/count"+tc.query, tm.viewerKey, 200)
		if want := fmt.Sprintf(`{"count":%d}`, tc.count); strings.TrimSpace(r.Body) != want {
			t.Errorf("count%s: %s, want %s", tc.query, r.Body, want)
		}
	}
	// Pages.
	got, next := queries(check("GET", base+"?limit=3", tm.viewer, 200))
	if fmt.Sprint(got) != "[HEAD  GET  GET n=5]" || next == nil {
		t.Fatalf("first page: %v %v", got, next)
	}
	got, next = queries(check("GET", base+"?limit=3&status=200&cursor="+*next, tm.viewer, 200))
	if fmt.Sprint(got) != "[GET n=4 GET n=3 GET n=2]" || next == nil {
		t.Fatalf("second page, filtered: %v %v", got, next)
	}
	got, next = queries(check("GET", base+"?limit=3&status=200&cursor="+*next, tm.viewer, 200))
	if fmt.Sprint(got) != "[GET n=1 GET n=0]" || next != nil {
		t.Fatalf("last page: %v %v", got, next)
	}
	for _, q := range []struct{ query, msg string }{
		{"?status=abc", "status must be an HTTP status code, from 100 to 599"},
		{"?status=99", "status must be an HTTP status code, from 100 to 599"},
		{"?since=yesterday", "since must be a time such as 2026-01-02T15:04:05Z (RFC 3339)"},
		{"?limit=0", "limit must be an integer from 1 to 1000"},
		{"?cursor=nope", "Invalid cursor"},
	} {
		servertest.WantError(t, check("GET", base+q.query, tm.viewer, 400), 400, q.msg)
	}
	// Viewers see, editors clear; the clear is audited.
	servertest.WantError(t, check("DELETE", base, tm.viewer, 403), 403, "Forbidden: clearing the request journal needs the editor role")
	check("GET", base, tm.out, 404)
	check("DELETE", base, tm.editor, 204)
	if got, _ := queries(check("GET", base, tm.viewer, 200)); len(got) != 0 {
		t.Errorf("after the clear: %v", got)
	}
	audit := tm.want(tm.call("GET", "/admin/v1/workspaces/"+tm.ws+"/audit?limit=1", tm.owner, ""), 200)
	if e := audit["entries"].([]any)[0].(map[string]any); e["action"] != "journal.clear" || e["target"].(map[string]any)["id"] != tm.project {
		t.Errorf("audit after the clear: %v", e)
	}
}

// event is one Server-Sent Event.
type event struct{ id, name, data string }

// feed opens the live feed of a project's journal, with the query and
// Last-Event-ID given, and sends its events on a channel until the test
// ends.
func feed(t *testing.T, tm *teams, query, lastID, token string) (<-chan event, *http.Response) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, "GET", tm.URL+"/admin/v1/projects/"+tm.project+"/requests/stream"+query, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	events := make(chan event, 100)
	go func() {
		defer close(events)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		var e event
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				if e.name != "" {
					events <- e
				}
				e = event{}
			case strings.HasPrefix(line, "id: "):
				e.id = line[4:]
			case strings.HasPrefix(line, "event: "):
				e.name = line[7:]
			case strings.HasPrefix(line, "data: "):
				e.data = line[6:]
			}
		}
	}()
	return events, resp
}

func nextEntry(t *testing.T, events <-chan event) decoy.JournalEntry {
	t.Helper()
	select {
	case e, ok := <-events:
		if !ok {
			t.Fatal("the feed ended")
		}
		var entry decoy.JournalEntry
		if err := json.Unmarshal([]byte(e.data), &entry); err != nil || e.name != "request" || e.id != entry.ID {
			t.Fatalf("event %+v: %v", e, err)
		}
		return entry
	case <-time.After(5 * time.Second):
		t.Fatal("no event within 5 s")
	}
	panic("unreachable")
}

// The live feed sends each new entry as it is recorded, with the filters
// asked; resumes after Last-Event-ID; is bounded per client; and ends when
// the server stops.
func TestJournalStream(t *testing.T) {
	tm, path := journalOf(t)
	all, resp := feed(t, tm, "", "", tm.viewer)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("%d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	missing, _ := feed(t, tm, "?status=404", "", tm.viewerKey)
	tm.Get(path + "?n=1")
	tm.Get(path + "/nothing")
	first, second := nextEntry(t, all), nextEntry(t, all)
	if first.Query != "n=1" || second.Status != 404 {
		t.Errorf("feed: %+v then %+v", first, second)
	}
	if e := nextEntry(t, missing); e.Status != 404 || e.ID != second.ID {
		t.Errorf("filtered feed: %+v", e)
	}
	resumed, _ := feed(t, tm, "", first.ID, tm.viewer)
	if e := nextEntry(t, resumed); e.ID != second.ID {
		t.Errorf("resumed after %s: %+v", first.ID, e)
	}

	// Bounded per client: this client has 3 open; one more, then no more.
	feed(t, tm, "", "", tm.viewer)
	_, refused := feed(t, tm, "", "", tm.viewer)
	if refused.StatusCode != http.StatusTooManyRequests || refused.Header.Get("Retry-After") == "" {
		t.Errorf("a fifth feed from one client: %d", refused.StatusCode)
	}
	servertest.WantError(t, tm.call("GET", "/admin/v1/projects/"+tm.project+"/requests/stream?status=x", tm.viewer, ""), 400,
		"status must be an HTTP status code, from 100 to 599")
	r, err := http.NewRequest("GET", tm.URL+"/admin/v1/projects/"+tm.project+"/requests/stream", nil)
	if err != nil {
		t.Fatal(err)
	}
	r.Header.Set("Authorization", "Bearer "+tm.viewer)
	r.Header.Set("Last-Event-ID", "garbage")
	if resp, err := http.DefaultClient.Do(r); err != nil || resp.StatusCode != 400 {
		t.Errorf("a bad Last-Event-ID: %v %v", resp.StatusCode, err)
	}
	if r := tm.call("GET", "/admin/v1/projects/"+tm.otherProject+"/requests/stream", tm.viewer, ""); r.Status != 404 {
		t.Errorf("another workspace's feed: %d", r.Status)
	}

	// The server stops at once, ending the feeds.
	start := time.Now()
	tm.Srv.Close()
	if took := time.Since(start); took > 20*time.Second { // hung feeds would hold it for good; a loaded machine takes seconds
		t.Errorf("closing the server with feeds open took %v", took)
	}
	for range all { // ends
	}
}
