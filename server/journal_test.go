package server_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/decoy-mock/decoy"
	"github.com/decoy-mock/decoy/client"
	"github.com/decoy-mock/decoy/internal/servertest"
	"github.com/decoy-mock/decoy/server"
)

// CONTRACT §13.2: every request a project answers through its routes, and
// every read of its mocks at /mock/{id}, is recorded, with the route and
// the mock it reached; requests that reached no project are not.
func TestJournalRecords(t *testing.T) {
	h := servertest.New(t, withTeams, servertest.WithJournal(t, 100))
	u := h.Create(users, client.CreateOptions{Name: "users"})
	priv := h.Create(users, client.CreateOptions{Name: "private", Private: true})
	list := addRoute(t, h, "GET", "/users", u.ID)
	item := addRoute(t, h, "GET", "/users/{id}", u.ID)
	post := addRoute(t, h, "POST", "/users", u.ID)

	for _, r := range []struct {
		method, path string
		header       []string
		status       int
	}{
		{"GET", "/p/default/users?limit=1", nil, 200},
		{"GET", "/p/default/users/2", []string{"Accept-Encoding", "gzip"}, 200},
		{"GET", "/p/default/users/99", nil, 404},
		{"GET", "/mock/" + u.ID + "?order_by=id", nil, 200},
		{"GET", "/api/" + strings.ToUpper(priv.ID), nil, 401},
		{"GET", "/p/default/nothing", nil, 404},
		{"DELETE", "/p/default/users", nil, 405},
		{"POST", "/p/default/users", nil, 400}, // no body: not one JSON object
		{"HEAD", "/p/default/users", nil, 200},
		// Reached no project: not recorded.
		{"GET", "/p/no-such-project/users", nil, 404},
		{"GET", "/mock/3f1c5a8e-0000-4000-8000-000000000000", nil, 404},
		{"GET", "/mock/not-an-id", nil, 404},
		{"POST", "/mock/" + u.ID, nil, 405},
		{"GET", "/healthz", nil, 200},
	} {
		if got := h.Do(r.method, r.path, r.header...); got.Status != r.status {
			t.Fatalf("%s %s: %d %s", r.method, r.path, got.Status, got.Body)
		}
	}
	es := h.Journal(decoy.DefaultProjectID, 9)
	type row struct {
		Method, Path, Query, Route, Mock string
		Status                           int
	}
	var got []row
	for _, e := range es {
		got = append(got, row{e.Method, e.Path, e.Query, e.RouteID, e.MockID, e.Status})
		if e.Client != "127.0.0.1" || e.At.IsZero() || e.DurationMS < 0 || e.Headers["Host"] == "" || e.ID == "" || e.Rule != "" {
			t.Errorf("entry %+v", e)
		}
	}
	want := []row{
		{"HEAD", "/p/default/users", "", list.ID, u.ID, 200},
		{"POST", "/p/default/users", "", post.ID, u.ID, 400},
		{"DELETE", "/p/default/users", "", "", "", 405},
		{"GET", "/p/default/nothing", "", "", "", 404},
		{"GET", "/api/" + strings.ToUpper(priv.ID), "", "", priv.ID, 401},
		{"GET", "/mock/" + u.ID, "order_by=id", "", u.ID, 200},
		{"GET", "/p/default/users/99", "", item.ID, u.ID, 404},
		{"GET", "/p/default/users/2", "", item.ID, u.ID, 200},
		{"GET", "/p/default/users", "limit=1", list.ID, u.ID, 200},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("journal, newest first:\n got %v\nwant %v", got, want)
	}
	if es[7].Headers["Accept-Encoding"] != "gzip" {
		t.Errorf("headers of the item read: %v", es[7].Headers)
	}
}

// Secrets are REDACTED: the token headers in any letter case (the
// --token-header one too), auth_token in the query in any case and
// spelling, credentials and cookies; nothing else is.
func TestJournalRedacts(t *testing.T) {
	h := servertest.New(t, withTeams, servertest.WithJournal(t, 100), func(c *server.Config) { c.TokenHeader = "X-Acme-Key" })
	priv := h.Create(users, client.CreateOptions{Name: "private", Private: true})
	addRoute(t, h, "GET", "/users", priv.ID)
	const secret = "s3cr3t-value"
	cases := []struct {
		name, query string
		header      []string
		redacted    string // the header shown as REDACTED, or the query as recorded
	}{
		{"serviceauthtoken", "", []string{"serviceauthtoken", secret}, "Serviceauthtoken"},
		{"SERVICEAUTHTOKEN", "", []string{"SERVICEAUTHTOKEN", secret}, "Serviceauthtoken"},
		{"DecoyAuthToken", "", []string{"DecoyAuthToken", secret}, "Decoyauthtoken"},
		{"decoyauthtoken", "", []string{"decoyauthtoken", secret}, "Decoyauthtoken"},
		{"token header flag", "", []string{"x-acme-key", secret}, "X-Acme-Key"},
		{"token header flag, upper", "", []string{"X-ACME-KEY", secret}, "X-Acme-Key"},
		{"Authorization", "", []string{"Authorization", "Bearer " + secret}, "Authorization"},
		{"authorization", "", []string{"authorization", "Basic " + secret}, "Authorization"},
		{"Proxy-Authorization", "", []string{"Proxy-Authorization", secret}, "Proxy-Authorization"},
		{"Cookie", "", []string{"Cookie", "session=" + secret}, "Cookie"},
		{"cookie", "", []string{"cookie", "a=1; b=" + secret}, "Cookie"},
		{"Set-Cookie", "", []string{"Set-Cookie", secret}, "Set-Cookie"},
		{"auth_token", "auth_token=" + secret, nil, "auth_token=REDACTED"},
		{"AUTH_TOKEN", "limit=1&AUTH_TOKEN=" + secret, nil, "limit=1&AUTH_TOKEN=REDACTED"},
		{"Auth_Token", "Auth_Token=" + secret + "&limit=1", nil, "Auth_Token=REDACTED&limit=1"},
		{"escaped", "auth%5Ftoken=" + secret, nil, "auth%5Ftoken=REDACTED"},
		{"escaped letters", "%61uth_%74oken=" + secret, nil, "%61uth_%74oken=REDACTED"},
		{"plus", "auth_token=" + secret + "+x", nil, "auth_token=REDACTED"},
		{"twice", "auth_token=a&auth_token=" + secret, nil, "auth_token=REDACTED&auth_token=REDACTED"},
	}
	for _, c := range cases {
		path := "/p/default/users"
		if c.query != "" {
			path += "?" + c.query
		}
		h.Get(path, append(c.header, "X-Case", c.name)...)
	}
	es := h.Journal(decoy.DefaultProjectID, len(cases))
	for i, c := range cases {
		e := es[len(es)-1-i]
		b, _ := json.Marshal(e)
		if strings.Contains(string(b), secret) {
			t.Errorf("%s: the secret is in the entry: %s", c.name, b)
		}
		if e.Headers["X-Case"] != c.name {
			t.Fatalf("entry %d is of %q, want %q", i, e.Headers["X-Case"], c.name)
		}
		if c.query != "" {
			if e.Query != c.redacted {
				t.Errorf("%s: query %q, want %q", c.name, e.Query, c.redacted)
			}
			continue
		}
		if e.Headers[c.redacted] != "REDACTED" {
			t.Errorf("%s: headers %v, want %s REDACTED", c.name, e.Headers, c.redacted)
		}
	}
	// What is not secret stays.
	h.Get("/p/default/users?limit=1&tokens_left=3", "X-Request-Id", "abc", "Accept", "application/json")
	e := h.Journal(decoy.DefaultProjectID, len(cases)+1)[0]
	if e.Headers["X-Request-Id"] != "abc" || e.Headers["Accept"] != "application/json" || e.Query != "limit=1&tokens_left=REDACTED" {
		t.Errorf("an ordinary request: %q %v", e.Query, e.Headers)
	}
}

// --journal-size bounds each project's journal: the newest stay.
func TestJournalBound(t *testing.T) {
	h := servertest.New(t, withTeams, servertest.WithJournal(t, 5))
	u := h.Create(users, client.CreateOptions{Name: "users"})
	addRoute(t, h, "GET", "/users", u.ID)
	for i := range 8 {
		h.Get(fmt.Sprintf("/p/default/users?n=%d", i))
	}
	// The eighth is in once it is listed first.
	var es []*decoy.JournalEntry
	for range 500 {
		if es = h.Journal(decoy.DefaultProjectID, 5); es[0].Query == "n=7" {
			break
		}
	}
	var got []string
	for _, e := range es {
		got = append(got, e.Query)
	}
	if fmt.Sprint(got) != "[n=7 n=6 n=5 n=4 n=3]" {
		t.Errorf("listed %v, want the 5 newest", got)
	}
}

// The journal's drops are exported, zero while it keeps up.
func TestJournalMetrics(t *testing.T) {
	h := servertest.New(t, withTeams, servertest.WithJournal(t, 5))
	for _, reason := range []string{"queue", "store"} {
		if v := h.Metric(`decoy_journal_dropped_total{reason="` + reason + `"}`); v != "0" {
			t.Errorf("decoy_journal_dropped_total{reason=%q} = %q", reason, v)
		}
	}
	none := servertest.New(t, withTeams)
	if v := none.Metric(`decoy_journal_dropped_total{reason="queue"}`); v != "" {
		t.Errorf("a server without a journal exports its drops: %q", v)
	}
	if r := none.Send("GET", "/admin/v1/projects/"+decoy.DefaultProjectID+"/requests", "", ""); r.Status != http.StatusNotImplemented {
		t.Errorf("the journal of a server without one: %d %s", r.Status, r.Body)
	}
}
