package server_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"

	"github.com/decoy-mock/decoy"
	"github.com/decoy-mock/decoy/client"
	"github.com/decoy-mock/decoy/internal/servertest"
	"github.com/decoy-mock/decoy/server"
)

func withUpstreams(c *server.Config) {
	c.UpstreamAllow = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
}

// setMode sets the default project's upstream and mode.
func setMode(t *testing.T, h *servertest.Harness, upstream, mode string) {
	t.Helper()
	body := `{"upstream":"` + upstream + `","mode":"` + mode + `"}`
	if r := h.Send("PATCH", "/admin/v1/projects/"+decoy.DefaultProjectID, "application/json", body); r.Status != 200 {
		t.Fatalf("PATCH %s: %d %s", body, r.Status, r.Body)
	}
}

// CONTRACT §14: in mode passthrough a request no route answers goes to the
// upstream, a route wins, a preflight on a path with no route is answered
// with Decoy's CORS policy, and the journal marks what was forwarded; the
// answer is served sandboxed, with Decoy's CORS headers only.
func TestPassthrough(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Header().Set("Access-Control-Allow-Origin", "https://elsewhere.example")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		io.WriteString(w, "<p>"+r.Method+" "+r.URL.Path+"</p>")
	}))
	defer up.Close()
	h := servertest.New(t, withTeams, withUpstreams, servertest.WithJournal(t, 100))
	u := h.Create(users, client.CreateOptions{Name: "users"})
	addRoute(t, h, "GET", "/users", u.ID)
	setMode(t, h, up.URL+"/api", "passthrough")

	if r := h.Do("GET", "/p/default/users"); r.Status != 200 || !strings.HasPrefix(r.Body, "[") {
		t.Errorf("routed: %d %s", r.Status, r.Body)
	}
	r := h.Do("GET", "/p/default/pages/1", "Origin", "https://app.example")
	if r.Status != 200 || r.Body != "<p>GET /api/pages/1</p>" {
		t.Fatalf("forwarded: %d %s", r.Status, r.Body)
	}
	if got := r.Header.Values("Access-Control-Allow-Origin"); len(got) != 1 || got[0] != "*" {
		t.Errorf("Access-Control-Allow-Origin %q", got)
	}
	if got := r.Header.Values("X-Content-Type-Options"); len(got) != 1 {
		t.Errorf("X-Content-Type-Options %q", got)
	}
	if r.Header.Get("Content-Security-Policy") != "sandbox" {
		t.Errorf("Content-Security-Policy %q", r.Header.Get("Content-Security-Policy"))
	}
	pre := h.Do("OPTIONS", "/p/default/pages/1", "Origin", "https://app.example", "Access-Control-Request-Method", "PUT",
		"Access-Control-Request-Headers", "X-App")
	if pre.Status != 204 || !strings.Contains(pre.Header.Get("Access-Control-Allow-Methods"), "PUT") ||
		!strings.Contains(pre.Header.Get("Access-Control-Allow-Headers"), "X-App") {
		t.Errorf("preflight: %d %v", pre.Status, pre.Header)
	}
	es := h.Journal(decoy.DefaultProjectID, 3)
	byPath := map[string]*decoy.JournalEntry{}
	for _, e := range es {
		byPath[e.Method+" "+e.Path] = e
	}
	if e := byPath["GET /p/default/pages/1"]; e == nil || !e.Forwarded || e.Status != 200 || e.RouteID != "" {
		t.Errorf("forwarded entry %+v", e)
	}
	if e := byPath["GET /p/default/users"]; e == nil || e.Forwarded {
		t.Errorf("routed entry %+v", e)
	}
}

// CONTRACT §14: in mode record every request goes to the upstream, routes
// or not, and a GET's JSON answer becomes a route at its path whose mock
// holds it; the journal names them.
func TestRecord(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"path":"`+r.URL.Path+`"}`)
	}))
	defer up.Close()
	h := servertest.New(t, withTeams, withUpstreams, servertest.WithJournal(t, 100), func(c *server.Config) { c.Versions = c.Store.(decoy.VersionStore) })
	u := h.Create(users, client.CreateOptions{Name: "users"})
	addRoute(t, h, "GET", "/users", u.ID)
	setMode(t, h, up.URL, "record")
	// The same answer again (/status) is recorded once: no version, no
	// entry in the audit log for each request (a review: anonymous
	// clients could flood both).
	for _, path := range []string{"/users", "/status?x=1", "/status", "/status?y=2"} {
		if r := h.Do("GET", "/p/default"+path); r.Status != 200 || !strings.HasPrefix(r.Body, `{"path":`) {
			t.Fatalf("GET %s: %d %s", path, r.Status, r.Body)
		}
	}
	setMode(t, h, up.URL, "mock")
	for path, want := range map[string]string{"/users": `{"path":"/users"}`, "/status": `{"path":"/status"}`} {
		if r := h.Do("GET", "/p/default"+path); r.Status != 200 || r.Body != want {
			t.Errorf("replay %s: %d %s, want %s", path, r.Status, r.Body, want)
		}
	}
	es := h.Journal(decoy.DefaultProjectID, 6)
	for _, e := range es {
		if e.Forwarded && e.MockID == "" {
			t.Errorf("a recorded request journaled without its mock: %+v", e)
		}
	}
	// §6.4: every change is in the audit log, a recording's too (it had
	// none), by the server recording for the project; its versions say so.
	var audit struct {
		Entries []decoy.AuditEntry `json:"entries"`
	}
	r := h.Send("GET", "/admin/v1/workspaces/"+decoy.DefaultWorkspaceID+"/audit", "", "")
	if err := json.Unmarshal([]byte(r.Body), &audit); err != nil {
		t.Fatalf("audit: %d %s", r.Status, r.Body)
	}
	recorded := map[string]int{}
	for _, e := range audit.Entries {
		if e.Action == "mock.record" && e.Actor.Label == "recording" && e.IP != "" {
			recorded[e.Target.ID]++
		}
	}
	if len(recorded) != 2 || recorded[u.ID] != 1 {
		t.Errorf("audit: mock.record entries %v, want one for users (%s) and one for the status mock: %s", recorded, u.ID, r.Body)
	}
	for id, n := range recorded {
		if n != 1 {
			t.Errorf("%d mock.record entries for %s, want 1", n, id)
		}
	}
	if vs := h.Send("GET", "/admin/v1/mocks/"+u.ID+"/versions", "", ""); !strings.Contains(vs.Body, `"actor":{"kind":"server_admin","id":"","label":"recording"}`) {
		t.Errorf("versions of a recorded mock: %s", vs.Body)
	}
}

// Recording never changes a mock that a route of another resource answers
// from too (a mock made by hand and routed at two paths): the answer is
// passed on, and the other route keeps its data (a newcomer's walk through
// the docs found GET /reviews answering /echo's recording). A route of
// the same resource (an item below it) does not stop it.
func TestRecordLeavesSharedMock(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `[{"id":1,"path":"`+r.URL.Path+`"}]`)
	}))
	defer up.Close()
	h := servertest.New(t, withTeams, withUpstreams)
	reviews := h.Create(`[{"id":1,"stars":5}]`, client.CreateOptions{Name: "reviews"})
	addRoute(t, h, "GET", "/reviews", reviews.ID)
	addRoute(t, h, "GET", "/echo", reviews.ID)
	books := h.Create(`[{"id":1,"title":"Old"}]`, client.CreateOptions{Name: "books"})
	addRoute(t, h, "GET", "/books", books.ID)
	addRoute(t, h, "GET", "/books/{id}", books.ID)
	setMode(t, h, up.URL, "record")
	for _, path := range []string{"/echo", "/books"} {
		if r := h.Do("GET", "/p/default"+path); r.Status != 200 || r.Body != `[{"id":1,"path":"`+path+`"}]` {
			t.Fatalf("GET %s: %d %s", path, r.Status, r.Body)
		}
	}
	setMode(t, h, up.URL, "mock")
	for path, want := range map[string]string{
		"/reviews": `[{"id":1,"stars":5}]`, "/echo": `[{"id":1,"stars":5}]`, // not recorded over
		"/books": `[{"id":1,"path":"/books"}]`, // recorded
	} {
		if r := h.Do("GET", "/p/default"+path); r.Status != 200 || r.Body != want {
			t.Errorf("replay %s: %d %s, want %s", path, r.Status, r.Body, want)
		}
	}
}

// CONTRACT §14: recorded mocks never keep Authorization, cookies or token
// headers, not even when the upstream echoes them in its answer.
func TestRecordKeepsNoCredential(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"headers":{"auth":"`+r.Header.Get("Authorization")+`","cookie":"`+r.Header.Get("Cookie")+`"}}`)
	}))
	defer up.Close()
	h := servertest.New(t, withTeams, withUpstreams)
	setMode(t, h, up.URL, "record")
	for _, header := range [][]string{
		{"Authorization", "Bearer app-secret-1234"},
		{"Cookie", "theme=dark; sid=s3cr3t-cookie"},
	} {
		if r := h.Do("GET", "/p/default/echo", header...); r.Status != 200 || !strings.Contains(r.Body, header[1][len(header[1])-6:]) {
			t.Fatalf("GET /echo with %s: %d %s", header[0], r.Status, r.Body)
		}
	}
	if r := h.Do("GET", "/p/default/echo"); r.Status != 200 {
		t.Fatal(r.Status)
	}
	r := h.Send("GET", "/admin/v1/projects/"+decoy.DefaultProjectID+"/routes", "", "")
	if !strings.Contains(r.Body, `"path":"/echo"`) {
		t.Fatalf("the answer without credentials is not recorded: %s\n%s", r.Body, h.Logs)
	}
	setMode(t, h, up.URL, "mock")
	if r := h.Do("GET", "/p/default/echo"); r.Body != `{"headers":{"auth":"","cookie":""}}` {
		t.Errorf("replay: %s", r.Body)
	}
}

// An answer that echoes a credential escaped as JSON escapes it ("&" as
// \u0026 by Go's encoding/json, "/" as \/ by PHP's) holds it all the
// same: not recorded (found by a black-box review; before, the mock kept
// it, open to anyone).
func TestRecordKeepsNoEscapedCredential(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		b, _ := json.Marshal(map[string]any{"headers": r.Header, "query": r.URL.Query()})
		if strings.HasSuffix(r.URL.Path, "/php") {
			b = bytes.ReplaceAll(b, []byte("/"), []byte(`\/`))
		}
		w.Write(b)
	}))
	defer up.Close()
	h := servertest.New(t, withTeams, withUpstreams)
	setMode(t, h, up.URL, "record")
	for _, tc := range []struct {
		path   string
		header []string
	}{
		{"/go", []string{"Authorization", "Bearer sk_live_abc&def<ghi>"}},
		{"/php", []string{"Authorization", "Bearer sk/live/abc/def"}},
		{"/go-cookie", []string{"Cookie", "sid=a<b>c&d=e"}},
		{"/go-query?auth_token=abc%26def%3Cg", nil},
	} {
		if r := h.Do("GET", "/p/default"+tc.path, tc.header...); r.Status != 200 {
			t.Fatalf("GET %s: %d %s", tc.path, r.Status, r.Body)
		}
	}
	if r := h.Do("GET", "/p/default/plain"); r.Status != 200 {
		t.Fatal(r.Status)
	}
	r := h.Send("GET", "/admin/v1/projects/"+decoy.DefaultProjectID+"/routes", "", "")
	if !strings.Contains(r.Body, `"path":"/plain"`) {
		t.Fatalf("the answer without credentials is not recorded: %s\n%s", r.Body, h.Logs)
	}
	for _, p := range []string{"/go", "/php", "/go-cookie", "/go-query"} {
		if strings.Contains(r.Body, `"path":"`+p+`"`) {
			t.Errorf("%s, whose answer echoes a credential escaped, was recorded: %s", p, r.Body)
		}
	}
}

// An item recorded next to a recorded collection becomes its record in the
// data the collection answers: its live data when writes through a route
// changed it, not the version they were made on (a review: the writes
// went to a version and were no longer served).
func TestRecordItemKeepsWrites(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":3,"title":"Recorded"}`)
	}))
	defer up.Close()
	h := servertest.New(t, withTeams, withUpstreams, func(c *server.Config) { c.Versions = c.Store.(decoy.VersionStore) })
	books := h.Create(`[{"id":1,"title":"Old"}]`, client.CreateOptions{Name: "books"})
	addRoute(t, h, "GET", "/books", books.ID)
	addRoute(t, h, "GET", "/books/{id}", books.ID)
	addRoute(t, h, "POST", "/books", books.ID)
	if r := send(t, h, "POST", "/p/default/books", `{"title":"Written"}`); r.Status != 201 {
		t.Fatalf("write: %d %s", r.Status, r.Body)
	}
	setMode(t, h, up.URL, "record")
	if r := h.Do("GET", "/p/default/books/3"); r.Status != 200 {
		t.Fatalf("GET /books/3: %d %s", r.Status, r.Body)
	}
	setMode(t, h, up.URL, "mock")
	want := `[{"id":1,"title":"Old"},{"id":2,"title":"Written"},{"id":3,"title":"Recorded"}]`
	if r := h.Do("GET", "/p/default/books"); r.Status != 200 || r.Body != want {
		t.Errorf("GET /books after recording an item: %d %s, want %s", r.Status, r.Body, want)
	}
	// The live data kept first, and the data recorded, are the
	// recorder's versions (a review: the first was the server admin's).
	var vs struct {
		Versions []struct {
			Version int         `json:"version"`
			Actor   decoy.Actor `json:"actor"`
		} `json:"versions"`
	}
	r := h.Send("GET", "/admin/v1/mocks/"+books.ID+"/versions", "", "")
	if err := json.Unmarshal([]byte(r.Body), &vs); err != nil || len(vs.Versions) != 3 {
		t.Fatalf("versions: %v %s", err, r.Body)
	}
	for _, v := range vs.Versions[:2] {
		if v.Actor.Label != "recording" {
			t.Errorf("version %d by %+v, want the recorder", v.Version, v.Actor)
		}
	}
}
