package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/decoy-mock/decoy"
	"github.com/decoy-mock/decoy/client"
	"github.com/decoy-mock/decoy/internal/servertest"
	"github.com/decoy-mock/decoy/server"
	"github.com/decoy-mock/decoy/sqlite"
)

// step is one request of a write test and what it must answer.
type step struct {
	name     string
	method   string
	path     string
	body     string
	status   int
	want     string // the body answered, exactly ("" with 204); a leading ~ makes it a regexp
	location string
	// data, when set, is the mock's data (GET /admin/v1/mocks/{id}/data)
	// after the step, exactly.
	data string
}

// run sends each step through the project and checks its answer and the
// data it leaves.
func runSteps(t *testing.T, h *servertest.Harness, mockID string, steps []step) {
	t.Helper()
	for _, st := range steps {
		r := h.Send(st.method, st.path, "application/json", st.body)
		if r.Status != st.status {
			t.Fatalf("%s: %s %s: status %d, want %d (%s)", st.name, st.method, st.path, r.Status, st.status, r.Body)
		}
		got := strings.TrimSuffix(r.Body, "\n")
		if re, ok := strings.CutPrefix(st.want, "~"); ok {
			if !regexp.MustCompile("^" + re + "$").MatchString(got) {
				t.Errorf("%s: body %s, want /%s/", st.name, got, re)
			}
		} else if got != st.want {
			t.Errorf("%s: body %s, want %s", st.name, got, st.want)
		}
		if loc := r.Header.Get("Location"); loc != st.location && st.location != "*" {
			t.Errorf("%s: Location %q, want %q", st.name, loc, st.location)
		}
		if st.data != "" {
			if d := h.Send("GET", "/admin/v1/mocks/"+mockID+"/data", "", ""); d.Body != st.data {
				t.Errorf("%s: data %s, want %s", st.name, d.Body, st.data)
			}
		}
	}
}

// CONTRACT §12.1: each write, its answer and what it leaves of the data,
// byte for byte; the errors, which change nothing.
func TestWrites(t *testing.T) {
	h := servertest.New(t, withTeams)
	const data = `[{"id":1,"name":"Ada"}, {"id":2,"name":"Linus"}]`
	u := h.Create(data, client.CreateOptions{Name: "users"})
	addRoute(t, h, "GET", "/users", u.ID)
	addRoute(t, h, "GET", "/users/{id}", u.ID)
	addRoute(t, h, "POST", "/users", u.ID)
	addRoute(t, h, "PUT", "/users/{id}", u.ID)
	addRoute(t, h, "PATCH", "/users/{id}", u.ID)
	addRoute(t, h, "DELETE", "/users/{id}", u.ID)
	runSteps(t, h, u.ID, []step{
		{name: "create assigns the next id, first", method: "POST", path: "/p/default/users", body: ` { "name" : "Grace" }` + "\n",
			status: 201, want: `{"id":3, "name" : "Grace" }`, location: "/p/default/users/3",
			data: `[{"id":1,"name":"Ada"}, {"id":2,"name":"Linus"}, {"id":3, "name" : "Grace" }]`},
		{name: "create keeps a given id", method: "POST", path: "/p/default/users", body: `{"name":"Edsger","id":10}`,
			status: 201, want: `{"name":"Edsger","id":10}`, location: "/p/default/users/10"},
		{name: "an id present", method: "POST", path: "/p/default/users", body: `{"id":3}`, status: 409, want: `{"error":"Record exists"}`},
		{name: "not an object", method: "POST", path: "/p/default/users", body: `[{"id":4}]`, status: 400, want: `{"error":"Body must be a JSON object"}`},
		{name: "not JSON", method: "POST", path: "/p/default/users", body: `{"id":`, status: 400, want: `{"error":"Body must be a JSON object"}`},
		{name: "no body", method: "POST", path: "/p/default/users", status: 400, want: `{"error":"Body must be a JSON object"}`},
		{name: "the next id after a given one", method: "POST", path: "/p/default/users", body: `{}`,
			status: 201, want: `{"id":11}`, location: "/p/default/users/11"},
		{name: "replace sets the id from the path", method: "PUT", path: "/p/default/users/2", body: `{"name":"Linus T"}`,
			status: 200, want: `{"id":2,"name":"Linus T"}`},
		{name: "replace with the path's id", method: "PUT", path: "/p/default/users/2", body: `{"name":"Linus","id":2}`,
			status: 200, want: `{"name":"Linus","id":2}`},
		{name: "replace with another id", method: "PUT", path: "/p/default/users/2", body: `{"id":5}`, status: 400, want: `{"error":"Id does not match the path"}`},
		{name: "replace of none", method: "PUT", path: "/p/default/users/99", body: `{}`, status: 404, want: `{"error":"Not found"}`},
		{name: "merge patch", method: "PATCH", path: "/p/default/users/1", body: `{"name":null,"age":36,"tags":{"a":1}}`,
			status: 200, want: `{"id":1,"age":36,"tags":{"a":1}}`},
		{name: "patch of none", method: "PATCH", path: "/p/default/users/99", body: `{}`, status: 404, want: `{"error":"Not found"}`},
		{name: "patch not an object", method: "PATCH", path: "/p/default/users/1", body: `3`, status: 400, want: `{"error":"Body must be a JSON object"}`},
		{name: "create not UTF-8", method: "POST", path: "/p/default/users", body: "{\"name\":\"\xff\"}", status: 400,
			want: `{"error":"The body must be UTF-8: byte 0xFF at line 1, column 10 is not"}`},
		{name: "patch not UTF-8", method: "PATCH", path: "/p/default/users/1", body: "\n {\"name\":\n  \"\xff\"}", status: 400,
			want: `{"error":"The body must be UTF-8: byte 0xFF at line 3, column 4 is not"}`},
		{name: "delete", method: "DELETE", path: "/p/default/users/3", status: 204,
			data: `[{"id":1,"age":36,"tags":{"a":1}}, {"name":"Linus","id":2}, {"name":"Edsger","id":10}, {"id":11}]`},
		{name: "delete of none", method: "DELETE", path: "/p/default/users/3", status: 404, want: `{"error":"Not found"}`},
		{name: "a read sees the writes", method: "GET", path: "/p/default/users/10", status: 200, want: `{"name":"Edsger","id":10}`},
		{name: "so does /mock/{id}", method: "GET", path: "/mock/" + u.ID + "?order_by=id&order_direction=desc&limit=1", status: 200, want: `[{"id":11}]`},
	})
}

// §12.1 on a wrapped collection: only its array changes; ids that are not
// all integers get UUIDs; a route's bound field is the id.
func TestWritesWrapped(t *testing.T) {
	h := servertest.New(t, withTeams)
	const data = `{"links":{"self":"/teams"},
 "data":[{"slug":"a","n":1},{"slug":"b","n":2}] ,"meta":{"total":2}}`
	w := h.Create(data, client.CreateOptions{Name: "teams"})
	addRoute(t, h, "GET", "/teams/{slug}", w.ID, "items", `"data"`)
	addRoute(t, h, "POST", "/teams", w.ID, "items", `"data"`)
	addRoute(t, h, "PATCH", "/teams/{slug}", w.ID, "items", `"data"`)
	addRoute(t, h, "DELETE", "/teams/{slug}", w.ID, "items", `"data"`)
	info := h.Create(`{"a":1}`, client.CreateOptions{Name: "info"})
	addRoute(t, h, "POST", "/info", info.ID)
	empty := h.Create(`[ ]`, client.CreateOptions{Name: "empty"})
	addRoute(t, h, "POST", "/empty", empty.ID)
	runSteps(t, h, w.ID, []step{
		{name: "create with its bound id", method: "POST", path: "/p/default/teams", body: `{"slug":"c"}`,
			status: 201, want: `{"slug":"c"}`, location: "/p/default/teams/c",
			data: `{"links":{"self":"/teams"},
 "data":[{"slug":"a","n":1},{"slug":"b","n":2},{"slug":"c"}] ,"meta":{"total":2}}`},
		{name: "a UUID when ids are not integers", method: "POST", path: "/p/default/teams", body: `{"n":4}`,
			status: 201, want: `~\{"slug":"[0-9a-f-]{36}","n":4\}`, location: "*"},
		{name: "patch in the array", method: "PATCH", path: "/p/default/teams/a", body: `{"n":10}`, status: 200, want: `{"slug":"a","n":10}`},
		{name: "delete the first", method: "DELETE", path: "/p/default/teams/a", status: 204},
		{name: "not a collection", method: "POST", path: "/p/default/info", body: `{}`, status: 409, want: `{"error":"Data is not a collection"}`},
		{name: "the first of an empty array", method: "POST", path: "/p/default/empty", body: `{}`, status: 201, want: `{"id":1}`},
	})
	if d := h.Send("GET", "/admin/v1/mocks/"+empty.ID+"/data", "", ""); d.Body != `[{"id":1} ]` {
		t.Errorf("the empty array after a create: %s", d.Body)
	}
	var v struct {
		Data []map[string]any `json:"data"`
		Meta map[string]any   `json:"meta"`
	}
	d := h.Send("GET", "/admin/v1/mocks/"+w.ID+"/data", "", "")
	if err := json.Unmarshal([]byte(d.Body), &v); err != nil || len(v.Data) != 3 || v.Data[0]["slug"] != "b" || v.Meta["total"] != 2.0 {
		t.Errorf("wrapped data after writes: %s (%v)", d.Body, err)
	}
}

// §12.1: a body past --max-data-bytes is a 413, and changes nothing.
func TestWriteTooLarge(t *testing.T) {
	h := servertest.New(t, withTeams, func(c *server.Config) { c.MaxDataBytes = 64 })
	u := h.Create(`[]`, client.CreateOptions{Name: "users"})
	addRoute(t, h, "POST", "/users", u.ID)
	runSteps(t, h, u.ID, []step{
		{name: "too large", method: "POST", path: "/p/default/users", body: `{"name":"` + strings.Repeat("x", 64) + `"}`,
			status: 413, want: `{"error":"Body larger than 64 bytes (--max-data-bytes)"}`, data: `[]`},
	})
}

// Writes grow a mock's document no more than --max-data-bytes, the bound of
// an upload of it (a walkthrough grew one to three times the bound through
// a POST route; its export then could not be imported): a write past it is
// 413 and changes nothing; one that does not grow the document passes.
func TestWriteGrowsDataWithinBound(t *testing.T) {
	const maxData = 200
	h := servertest.New(t, withTeams, func(c *server.Config) { c.MaxDataBytes = maxData })
	u := h.Create(`[{"id":1}]`, client.CreateOptions{Name: "users", RateLimit: i64(0), MonthlyQuota: i64(0)})
	addRoute(t, h, "POST", "/users", u.ID)
	addRoute(t, h, "PATCH", "/users/{id}", u.ID)
	addRoute(t, h, "DELETE", "/users/{id}", u.ID)
	record := `{"name":"` + strings.Repeat("n", 50) + `"}`
	written := 0
	for range 10 {
		r := h.Send("POST", "/p/default/users", "application/json", record)
		if r.Status == 413 {
			if want := `{"error":"The mock's data would be larger than 200 bytes (--max-data-bytes)"}`; strings.TrimSpace(r.Body) != want {
				t.Errorf("refused write: %s, want %s", r.Body, want)
			}
			break
		}
		if r.Status != 201 {
			t.Fatalf("write: %d %s", r.Status, r.Body)
		}
		written++
	}
	d := h.Send("GET", "/admin/v1/mocks/"+u.ID+"/data", "", "")
	if written != 2 || len(d.Body) > maxData || strings.Count(d.Body, `"name"`) != written {
		t.Fatalf("%d writes acknowledged, data of %d bytes: %s", written, len(d.Body), d.Body)
	}
	if r := h.Send("PATCH", "/p/default/users/2", "application/json", `{"name":"short"}`); r.Status != 200 {
		t.Errorf("a PATCH that shrinks the data: %d %s", r.Status, r.Body)
	}
	// A body within the bound whose record takes the data past it.
	if r := h.Send("PATCH", "/p/default/users/3", "application/json", `{"name":"`+strings.Repeat("m", 150)+`"}`); r.Status != 413 || !strings.Contains(r.Body, "The mock's data would be larger") {
		t.Errorf("a PATCH that grows the data past the bound: %d %s", r.Status, r.Body)
	}
	// Data over the bound (a bound lowered since) takes the writes that
	// do not grow it, and no other.
	server.SetDocBound(h.Srv, 50)
	if r := h.Send("PATCH", "/p/default/users/3", "application/json", `{"name":"m"}`); r.Status != 200 {
		t.Errorf("a PATCH that shrinks data over the bound: %d %s", r.Status, r.Body)
	}
	if r := h.Send("POST", "/p/default/users", "application/json", `{}`); r.Status != 413 {
		t.Errorf("a POST into data over the bound: %d %s", r.Status, r.Body)
	}
	if r := h.Send("DELETE", "/p/default/users/3", "", ""); r.Status != 204 {
		t.Errorf("a DELETE: %d %s", r.Status, r.Body)
	}
}

// §12.2: reset goes back to the current version; POST …/versions saves the
// live data as a new one.
func TestWriteResetSnapshot(t *testing.T) {
	h := servertest.New(t, withTeams, func(c *server.Config) { c.Versions = c.Store.(decoy.VersionStore) })
	u := h.Create(`[{"id":1}]`, client.CreateOptions{Name: "users"})
	addRoute(t, h, "POST", "/users", u.ID)
	runSteps(t, h, u.ID, []step{
		{name: "create", method: "POST", path: "/p/default/users", body: `{}`, status: 201, want: `{"id":2}`, location: "", data: `[{"id":1},{"id":2}]`},
	})
	r := h.Send("POST", "/admin/v1/mocks/"+u.ID+"/reset", "", "")
	if r.Status != 200 || !strings.Contains(r.Body, `"id":"`+u.ID+`"`) {
		t.Fatalf("reset: %d %s", r.Status, r.Body)
	}
	if d := h.Send("GET", "/admin/v1/mocks/"+u.ID+"/data", "", ""); d.Body != `[{"id":1}]` {
		t.Errorf("data after reset: %s", d.Body)
	}
	if d := h.Send("GET", "/mock/"+u.ID, "", ""); d.Body != `[{"id":1}]` {
		t.Errorf("read after reset: %s", d.Body)
	}
	runSteps(t, h, u.ID, []step{
		{name: "create again", method: "POST", path: "/p/default/users", body: `{"a":1}`, status: 201, want: `{"id":2,"a":1}`},
	})
	r = h.Send("POST", "/admin/v1/mocks/"+u.ID+"/versions", "", "")
	if r.Status != 201 || !strings.Contains(r.Body, `"current":true`) {
		t.Fatalf("snapshot: %d %s", r.Status, r.Body)
	}
	vs := h.Send("GET", "/admin/v1/mocks/"+u.ID+"/versions", "", "")
	if strings.Count(vs.Body, `"version"`) != 2 {
		t.Errorf("versions after a snapshot: %s", vs.Body)
	}
	if d := h.Send("GET", "/admin/v1/mocks/"+u.ID+"/versions/2/data", "", ""); d.Body != `[{"id":1},{"id":2,"a":1}]` {
		t.Errorf("the snapshot's data: %s", d.Body)
	}
	// A reset now goes back to the snapshot.
	runSteps(t, h, u.ID, []step{{name: "create after", method: "POST", path: "/p/default/users", body: `{}`, status: 201, want: `{"id":3}`}})
	h.Send("POST", "/admin/v1/mocks/"+u.ID+"/reset", "", "")
	if d := h.Send("GET", "/admin/v1/mocks/"+u.ID+"/data", "", ""); d.Body != `[{"id":1},{"id":2,"a":1}]` {
		t.Errorf("data after a reset to the snapshot: %s", d.Body)
	}
	// An upload replaces the live data.
	runSteps(t, h, u.ID, []step{{name: "create", method: "POST", path: "/p/default/users", body: `{}`, status: 201, want: `{"id":3}`}})
	h.Send("PUT", "/admin/v1/mocks/"+u.ID+"/data", "application/json", `[{"id":7}]`)
	runSteps(t, h, u.ID, []step{{name: "after an upload", method: "POST", path: "/p/default/users", body: `{}`, status: 201, want: `{"id":8}`, data: `[{"id":7},{"id":8}]`}})
}

// §12.2: writes pass a read's checks: the monthly quota counts them.
func TestWriteQuota(t *testing.T) {
	h := servertest.New(t, withTeams)
	u := h.Create(`[]`, client.CreateOptions{Name: "users"})
	addRoute(t, h, "POST", "/users", u.ID)
	if r := h.Send("PATCH", "/admin/v1/mocks/"+u.ID, "application/json", `{"monthly_quota":1}`); r.Status != 200 {
		t.Fatalf("quota: %d %s", r.Status, r.Body)
	}
	runSteps(t, h, u.ID, []step{
		{name: "within", method: "POST", path: "/p/default/users", body: `{}`, status: 201, want: `{"id":1}`},
		{name: "past the quota", method: "POST", path: "/p/default/users", body: `{}`, status: http.StatusTooManyRequests,
			want: `~\{"error":".*quota.*"\}`, data: `[{"id":1}]`},
	})
}

// The admin API's data tells live data that writes changed from the
// current version (Decoy-Live), for the Studio.
func TestWriteLiveHeader(t *testing.T) {
	h := servertest.New(t, withTeams)
	u := h.Create(`[]`, client.CreateOptions{Name: "users"})
	addRoute(t, h, "POST", "/users", u.ID)
	if d := h.Send("GET", "/admin/v1/mocks/"+u.ID+"/data", "", ""); d.Header.Get("Decoy-Live") != "version" {
		t.Errorf("before a write: Decoy-Live %q", d.Header.Get("Decoy-Live"))
	}
	h.Send("POST", "/p/default/users", "application/json", `{}`)
	if d := h.Send("GET", "/admin/v1/mocks/"+u.ID+"/data", "", ""); d.Header.Get("Decoy-Live") != "changed" {
		t.Errorf("after a write: Decoy-Live %q", d.Header.Get("Decoy-Live"))
	}
	h.Send("POST", "/admin/v1/mocks/"+u.ID+"/reset", "", "")
	if d := h.Send("GET", "/admin/v1/mocks/"+u.ID+"/data", "", ""); d.Header.Get("Decoy-Live") != "version" {
		t.Errorf("after a reset: Decoy-Live %q", d.Header.Get("Decoy-Live"))
	}
}

// FuzzWrites sends arbitrary bodies to each kind of route that writes, on
// a plain and a wrapped collection: no answer is a 5xx, every error is a
// JSON error, and the data stays valid JSON, its records objects, after
// every write.
func FuzzWrites(f *testing.F) {
	h := servertest.New(f, withTeams)
	plain := h.Create(`[{"id":1,"a":{"b":[1,"x"]}},{"id":"s","c":null}]`, client.CreateOptions{Name: "plain", RateLimit: i64(0)})
	wrapped := h.Create(`{"meta":{}, "data":[ {"k":"a"} ]}`, client.CreateOptions{Name: "wrapped", RateLimit: i64(0)})
	f.Add(0, "1", `{"a":null,"z":[]}`)
	f.Add(1, "", `{"id":1}`)
	f.Add(2, "s", `{"id":"s","x":"\u00e9"}`)
	f.Add(3, "1", ``)
	f.Add(4, "a", `{"k":"a","v":{"w":1}}`)
	f.Add(5, "", `  {"k" : 7 }  `)
	f.Add(0, "%2e%2e", `{"a":{"b":null}}`)
	for _, m := range []struct{ method, path, mock, items string }{
		{"PATCH", "/plain/{id}", plain.ID, ""},
		{"POST", "/plain", plain.ID, ""},
		{"PUT", "/plain/{id}", plain.ID, ""},
		{"DELETE", "/plain/{id}", plain.ID, ""},
		{"PATCH", "/wrapped/{k}", wrapped.ID, `"data"`},
		{"POST", "/wrapped", wrapped.ID, `"data"`},
	} {
		addRoute(f, h, m.method, m.path, m.mock, "items", orNull(m.items))
	}
	routes := []struct{ method, prefix, mock string }{
		{"PATCH", "/p/default/plain/", plain.ID}, {"POST", "/p/default/plain", plain.ID}, {"PUT", "/p/default/plain/", plain.ID},
		{"DELETE", "/p/default/plain/", plain.ID}, {"PATCH", "/p/default/wrapped/", wrapped.ID}, {"POST", "/p/default/wrapped", wrapped.ID},
	}
	f.Fuzz(func(t *testing.T, which int, key, body string) {
		rt := routes[uint(which)%uint(len(routes))]
		path := rt.prefix
		if strings.HasSuffix(path, "/") {
			if key == "" || strings.ContainsAny(key, "/?#") {
				return
			}
			path += key
		}
		req := httptest.NewRequest(rt.method, "http://decoy.test/", strings.NewReader(body))
		req.URL.Path, req.URL.RawPath = "", ""
		req.URL, _ = req.URL.Parse(path)
		if req.URL == nil {
			return
		}
		rec := httptest.NewRecorder()
		h.Srv.ServeHTTP(rec, req)
		if rec.Code >= 500 {
			t.Fatalf("%s %q %q: %d %s", rt.method, path, body, rec.Code, rec.Body)
		}
		if rec.Code >= 400 {
			var e struct{ Error string }
			if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil || e.Error == "" {
				t.Fatalf("%s %q: %d answer is not a JSON error: %q", rt.method, path, rec.Code, rec.Body)
			}
		}
		_, d, err := h.Admin.Data(t.Context(), rt.mock)
		if err != nil {
			t.Fatal(err)
		}
		var v any
		if err := json.Unmarshal(d, &v); err != nil {
			t.Fatalf("data after %s %q %q is not JSON: %v\n%s", rt.method, path, body, err, d)
		}
		if w, ok := v.(map[string]any); ok {
			v = w["data"]
		}
		for _, r := range v.([]any) {
			if _, ok := r.(map[string]any); !ok {
				t.Fatalf("a record that is not an object after %s %q %q: %s", rt.method, path, body, d)
			}
		}
	})
}

func orNull(s string) string {
	if s == "" {
		return "null"
	}
	return s
}

func i64(n int64) *int64 { return &n }

// The log's bytes bound it, not only the number of its writes: a record
// of 3 MiB replaced over and over is compacted within a few writes (a base
// at least every 8 MiB of them), never 2,000, and no write waits for one.
// Before, an anonymous client PUTting a large record filled the log by
// the gigabyte between two turns (found by an audit).
func TestWriteCompactsLargeRecords(t *testing.T) {
	h := servertest.New(t, withTeams, func(c *server.Config) { c.MaxDataBytes = 4 << 20 })
	u := h.Create(`[]`, client.CreateOptions{Name: "users", RateLimit: i64(0), MonthlyQuota: i64(0)})
	addRoute(t, h, "POST", "/users", u.ID)
	addRoute(t, h, "PUT", "/users/{id}", u.ID)
	if r := h.Send("POST", "/p/default/users", "application/json", `{"id":1}`); r.Status != 201 {
		t.Fatal(r.Status, r.Body)
	}
	var live decoy.LiveStore = h.Store
	var worst int64
	for i := range 12 {
		big := `{"id":1,"blob":"` + strings.Repeat(string(rune('a'+i)), 3<<20) + `"}`
		if r := h.Send("PUT", "/p/default/users/1", "application/json", big); r.Status != 200 {
			t.Fatalf("write %d: %d %.200s", i+1, r.Status, r.Body)
		}
		time.Sleep(50 * time.Millisecond) // compactions run in the background
		st, err := live.Live(t.Context(), u.ID)
		if err != nil {
			t.Fatal(err)
		}
		worst = max(worst, st.Seq-st.BaseSeq)
	}
	if worst > 4 {
		t.Errorf("the log held up to %d writes of 3 MiB past its base", worst)
	}
	st, _ := live.Live(t.Context(), u.ID)
	if st.BaseSeq == 0 {
		t.Fatalf("no compaction after 12 writes of 3 MiB: %+v", st)
	}
	r := h.Send("GET", "/mock/"+u.ID, "", "")
	if !strings.HasPrefix(r.Body, `[{"id":1,"blob":"llll`) || r.Header.Get("X-Total-Count") != "1" {
		t.Errorf("the record after the compactions: %.40s (%s)", r.Body, r.Header.Get("X-Total-Count"))
	}
}

// §12 item 3 of the issue: the log is folded into a new base in the
// background every 2,000 writes, and the data read stays the live data.
func TestWriteCompacts(t *testing.T) {
	h := servertest.New(t, withTeams)
	u := h.Create(`[]`, client.CreateOptions{Name: "users", RateLimit: i64(0), MonthlyQuota: i64(0)})
	addRoute(t, h, "POST", "/users", u.ID)
	for i := range 2000 {
		if r := h.Send("POST", "/p/default/users", "application/json", `{}`); r.Status != 201 {
			t.Fatalf("write %d: %d %s", i+1, r.Status, r.Body)
		}
	}
	var live decoy.LiveStore = h.Store
	deadline := time.Now().Add(30 * time.Second)
	for {
		st, err := live.Live(t.Context(), u.ID)
		if err != nil {
			t.Fatal(err)
		}
		if st.BaseSeq == 2000 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no compaction after 2,000 writes: %+v", st)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if ws, err := live.Writes(t.Context(), u.ID, 2000, 10); err != nil || len(ws) != 0 {
		t.Errorf("the log after the compaction: %d writes, %v", len(ws), err)
	}
	r := h.Send("GET", "/mock/"+u.ID+"?order_by=id&order_direction=desc&limit=1", "", "")
	if strings.TrimSpace(r.Body) != `[{"id":2000}]` {
		t.Errorf("the last record after the compaction: %s", r.Body)
	}
}

// A mock whose template runs on every read takes no writes (409): every
// read answers data generated then, so a write would be acknowledged and
// never seen (found by a black-box review: 201, then reads without it).
func TestWriteToGeneratedMock(t *testing.T) {
	h := servertest.New(t, withTeams)
	u := h.Create(`[]`, client.CreateOptions{Name: "generated"})
	if r := h.Send("PUT", "/admin/v1/mocks/"+u.ID+"/template?mode=always", "application/json", `{"$repeat":3,"$item":{"id":"{{ index }}"}}`); r.Status != 200 {
		t.Fatalf("template: %d %s", r.Status, r.Body)
	}
	addRoute(t, h, "POST", "/things", u.ID)
	addRoute(t, h, "PATCH", "/things/{id}", u.ID)
	for _, w := range [][2]string{{"POST", "/p/default/things"}, {"PATCH", "/p/default/things/1"}} {
		r := send(t, h, w[0], w[1], `{"x":1}`)
		if r.Status != 409 || !strings.Contains(r.Body, "generated on every read") {
			t.Errorf("%s %s: %d %s", w[0], w[1], r.Status, r.Body)
		}
	}
}

// A write the server refuses for its own load (503: too many bodies held,
// and the same for a log behind its compaction or a store down) gives
// back the caller's rate-limit slot, as a read refused for the server's
// sake does; one refused for the client's doing (400) uses it (found by a
// review: they used it up).
func TestWriteRefusedForLoadGivesSlotBack(t *testing.T) {
	h := servertest.New(t, withTeams)
	u := h.Create(`[]`, client.CreateOptions{Name: "users", RateLimit: i64(5), MonthlyQuota: i64(0)})
	addRoute(t, h, "POST", "/users", u.ID)
	addRoute(t, h, "PUT", "/users/{id}", u.ID, "rules", `[{"when":"body.x=1","status":418}]`)
	server.SetBodyBudget(h.Srv, 16)
	for _, path := range []string{"/p/default/users", "/p/default/users/1"} {
		method := map[bool]string{true: "POST", false: "PUT"}[path == "/p/default/users"]
		for range 3 {
			r := h.Send(method, path, "application/json", `{"id":1,"name":"a body of more than sixteen bytes"}`)
			if r.Status != 503 || r.Header.Get("Retry-After") == "" {
				t.Fatalf("%s %s past the bodies' bound: %d %s", method, path, r.Status, r.Body)
			}
		}
	}
	if r := h.Send("POST", "/p/default/users", "application/json", `{}`); r.Status != 201 || r.Header.Get("X-RateLimit-Remaining") != "4" {
		t.Errorf("a write after six refused: %d, %s remaining, want 201 and 4", r.Status, r.Header.Get("X-RateLimit-Remaining"))
	}
	if r := h.Send("POST", "/p/default/users", "application/json", `[]`); r.Status != 400 {
		t.Errorf("a write of a bad body: %d, want 400", r.Status)
	}
	if r := h.Send("POST", "/p/default/users", "application/json", `{}`); r.Status != 201 || r.Header.Get("X-RateLimit-Remaining") != "2" {
		t.Errorf("a write after a bad one: %d, %s remaining, want 201 and 2", r.Status, r.Header.Get("X-RateLimit-Remaining"))
	}
}

// A body a route's rules read is counted twice against the bodies'
// bound: once as read, once for the rules' copy of it in the request's
// document (it was counted once, and the copy held as much again).
func TestRuleBodyCopyCounted(t *testing.T) {
	h := servertest.New(t, withTeams)
	u := h.Create(`[]`, client.CreateOptions{Name: "users", RateLimit: i64(0), MonthlyQuota: i64(0)})
	addRoute(t, h, "POST", "/users", u.ID)
	addRoute(t, h, "PUT", "/users/{id}", u.ID, "rules", `[{"when":"body.x=1","status":418}]`)
	body := `{"id":1,"name":"` + strings.Repeat("n", 40) + `"}` // 58 bytes
	server.SetBodyBudget(h.Srv, 100)
	if r := h.Send("POST", "/p/default/users", "application/json", body); r.Status != 201 {
		t.Errorf("a body of %d bytes, no rules, under a bound of 100: %d %s", len(body), r.Status, r.Body)
	}
	if r := h.Send("PUT", "/p/default/users/1", "application/json", body); r.Status != 503 {
		t.Errorf("the same body read by rules, twice past the bound: %d %s", r.Status, r.Body)
	}
	server.SetBodyBudget(h.Srv, 200)
	if r := h.Send("PUT", "/p/default/users/1", "application/json", body); r.Status != 200 {
		t.Errorf("the same body read by rules, under a bound of 200: %d %s", r.Status, r.Body)
	}
}

// A record an item route finds by one element of an array field (§1.3's
// equality: GET /n/4 answers {"id":[3,4]}) cannot be named by the log,
// which names a record by its id's value: a write to it is refused with a
// 409 saying so, and every other record stays writable. It was a 404
// while the GET of the same path answered the record (found by a
// black-box review).
func TestWriteRecordWithArrayID(t *testing.T) {
	h := servertest.New(t, withTeams)
	n := h.Create(`[{"id":[3,4],"v":0},{"id":5,"v":0}]`, client.CreateOptions{Name: "n", RateLimit: i64(0), MonthlyQuota: i64(0)})
	addRoute(t, h, "GET", "/n/{id}", n.ID)
	addRoute(t, h, "PATCH", "/n/{id}", n.ID)
	addRoute(t, h, "PUT", "/n/{id}", n.ID)
	addRoute(t, h, "DELETE", "/n/{id}", n.ID)
	if r := h.Send("GET", "/p/default/n/4", "", ""); r.Status != 200 || r.Body != `{"id":[3,4],"v":0}` {
		t.Fatalf("GET /n/4: %d %s", r.Status, r.Body)
	}
	for _, c := range []struct{ method, body string }{{"PATCH", `{"v":1}`}, {"PUT", `{"v":1}`}, {"DELETE", ""}} {
		r := h.Send(c.method, "/p/default/n/4", "application/json", c.body)
		if r.Status != 409 || strings.TrimSpace(r.Body) != `{"error":"The record's id field, which a write names it by, is not a single value: it cannot be written"}` {
			t.Errorf("%s /n/4: %d %s, want 409", c.method, r.Status, r.Body)
		}
	}
	if r := h.Send("PATCH", "/p/default/n/5", "application/json", `{"v":1}`); r.Status != 200 || r.Body != `{"id":5,"v":1}` {
		t.Errorf("PATCH /n/5: %d %s", r.Status, r.Body)
	}
	if r := h.Send("GET", "/mock/"+n.ID, "", ""); r.Body != `[{"id":[3,4],"v":0},{"id":5,"v":1}]` {
		t.Errorf("the data after: %s", r.Body)
	}
}

// A write whose record would have an array or object id is refused: the
// log names a record by one id value, and an array id answers to a path of
// any of its elements, so that two records could answer to one path (found
// by a review: POST {"id":[7,8]} was stored).
func TestWriteNonScalarIDRefused(t *testing.T) {
	h := servertest.New(t, withTeams)
	n := h.Create(`[{"id":5,"v":0}]`, client.CreateOptions{Name: "n", RateLimit: i64(0), MonthlyQuota: i64(0)})
	addRoute(t, h, "GET", "/n/{id}", n.ID)
	addRoute(t, h, "POST", "/n", n.ID)
	addRoute(t, h, "PATCH", "/n/{id}", n.ID)
	addRoute(t, h, "PUT", "/n/{id}", n.ID)
	for _, c := range []struct{ method, path, body string }{
		{"POST", "/p/default/n", `{"id":[7,8]}`},
		{"POST", "/p/default/n", `{"id":[5,6]}`},
		{"POST", "/p/default/n", `{"id":{"a":1}}`},
		{"PUT", "/p/default/n/5", `{"id":[5,6],"v":1}`},
		{"PATCH", "/p/default/n/5", `{"id":[5,6]}`},
		{"PATCH", "/p/default/n/5", `{"id":{"k":5}}`},
	} {
		r := h.Send(c.method, c.path, "application/json", c.body)
		if r.Status != 400 || strings.TrimSpace(r.Body) != `{"error":"Id must be a single value, not an array or object"}` {
			t.Errorf("%s %s %s: %d %s, want 400", c.method, c.path, c.body, r.Status, r.Body)
		}
	}
	if r := h.Send("GET", "/mock/"+n.ID, "", ""); r.Body != `[{"id":5,"v":0}]` {
		t.Errorf("the data after: %s", r.Body)
	}
	for _, c := range []struct{ method, path, body, want string }{
		{"POST", "/p/default/n", `{"id":"x7"}`, `{"id":"x7"}`},
		{"PATCH", "/p/default/n/5", `{"v":2}`, `{"id":5,"v":2}`},
		{"PUT", "/p/default/n/5", `{"id":5,"v":[1]}`, `{"id":5,"v":[1]}`},
	} {
		if r := h.Send(c.method, c.path, "application/json", c.body); r.Status/100 != 2 || r.Body != c.want {
			t.Errorf("%s %s %s: %d %s, want %s", c.method, c.path, c.body, r.Status, r.Body, c.want)
		}
	}
}

// A template rule's answer builds the whole request's document after the
// rules built theirs: a third copy of a body they read, counted too.
func TestRuleTemplateBodyCopyCounted(t *testing.T) {
	h := servertest.New(t, withTeams)
	u := h.Create(`[]`, client.CreateOptions{Name: "users", RateLimit: i64(0), MonthlyQuota: i64(0)})
	addRoute(t, h, "POST", "/users", u.ID, "rules", `[{"when":"body.name[$ne]=x","template":{"echo":"{{ request.body.name }}"}}]`)
	body := `{"id":1,"name":"` + strings.Repeat("n", 40) + `"}` // 58 bytes
	server.SetBodyBudget(h.Srv, 150)
	if r := h.Send("POST", "/p/default/users", "application/json", body); r.Status != 503 {
		t.Errorf("a body of 58 bytes copied twice by the rules under a bound of 150: %d %s", r.Status, r.Body)
	}
	server.SetBodyBudget(h.Srv, 200)
	if r := h.Send("POST", "/p/default/users", "application/json", body); r.Status != 200 || !strings.Contains(r.Body, `"echo":"nnnn`) {
		t.Errorf("the same under a bound of 200: %d %s", r.Status, r.Body)
	}
}

// A write route whose rules that held are used up makes the write (it
// answered 501, "this server's store does not keep writes"; found by a
// review).
func TestWriteAfterRulesUsedUp(t *testing.T) {
	h := servertest.New(t, withTeams)
	u := h.Create(`[]`, client.CreateOptions{Name: "users", RateLimit: i64(0), MonthlyQuota: i64(0)})
	addRoute(t, h, "POST", "/users", u.ID, "rules", `[{"times":1,"status":503}]`)
	if r := h.Send("POST", "/p/default/users", "application/json", `{"id":1}`); r.Status != 503 {
		t.Fatalf("the rule's one time: %d %s", r.Status, r.Body)
	}
	if r := h.Send("POST", "/p/default/users", "application/json", `{"id":1}`); r.Status != 201 || r.Body != `{"id":1}` {
		t.Errorf("after the rule was used up: %d %s, want 201", r.Status, r.Body)
	}
	if r := h.Send("GET", "/mock/"+u.ID, "", ""); r.Body != `[{"id":1}]` {
		t.Errorf("the data: %s", r.Body)
	}
}

// A template rule whose request body could not be read for the server's
// load answers 503, not its template over a request without a body.
func TestRuleTemplateBodyBusy(t *testing.T) {
	h := servertest.New(t, withTeams)
	u := h.Create(`[]`, client.CreateOptions{Name: "users", RateLimit: i64(0), MonthlyQuota: i64(0)})
	addRoute(t, h, "POST", "/users", u.ID, "rules", `[{"template":{"echo":"{{ request.body.name }}"}}]`)
	server.SetBodyBudget(h.Srv, 30)
	body := `{"id":1,"name":"` + strings.Repeat("n", 40) + `"}`
	if r := h.Send("POST", "/p/default/users", "application/json", body); r.Status != 503 {
		t.Errorf("a body past the bound read by a template: %d %s, want 503", r.Status, r.Body)
	}
}

// panicCompact is a store whose compactions panic.
type panicCompact struct{ *sqlite.DB }

func (panicCompact) Compact(context.Context, string, int64, decoy.Data) error {
	panic("compaction broke")
}

// A panic in a compaction, which runs in the background outside any
// request, is logged and counted as a failure: the server goes on (it had
// no recover, so a panic there ended the process; found by a review).
func TestCompactionPanicRecovered(t *testing.T) {
	h := servertest.New(t, withTeams, func(c *server.Config) {
		c.MaxDataBytes = 4 << 20
		c.Store = panicCompact{c.Store.(*sqlite.DB)}
	})
	u := h.Create(`[]`, client.CreateOptions{Name: "users", RateLimit: i64(0), MonthlyQuota: i64(0)})
	addRoute(t, h, "POST", "/users", u.ID)
	addRoute(t, h, "PUT", "/users/{id}", u.ID)
	if r := h.Send("POST", "/p/default/users", "application/json", `{"id":1}`); r.Status != 201 {
		t.Fatal(r.Status, r.Body)
	}
	for i := range 3 { // 9 MiB of writes: past a compaction's turn
		big := `{"id":1,"blob":"` + strings.Repeat(string(rune('a'+i)), 3<<20) + `"}`
		if r := h.Send("PUT", "/p/default/users/1", "application/json", big); r.Status != 200 {
			t.Fatalf("write %d: %d %.200s", i+1, r.Status, r.Body)
		}
	}
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(h.Logs.String(), "panic compacting a mock's writes") {
		if time.Now().After(deadline) {
			t.Fatal("no compaction's panic logged")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if got := h.Metric("decoy_panics_total"); got != "1" {
		t.Errorf("decoy_panics_total %q, want 1", got)
	}
	if r := h.Send("GET", "/mock/"+u.ID, "", ""); r.Status != 200 || !strings.HasPrefix(r.Body, `[{"id":1,"blob":"ccc`) {
		t.Errorf("a read after the panic: %d %.40s", r.Status, r.Body)
	}
}

// A write refused because its client holds its whole share of the bodies'
// bound is its own doing: it uses up its rate-limit slot, where one refused
// for the bound of all gives it back (every such 503 gave it back, so that
// a client could send past its rate; found by a review).
func TestWriteRefusedForOwnShareKeepsSlot(t *testing.T) {
	h := servertest.New(t, withTeams)
	u := h.Create(`[]`, client.CreateOptions{Name: "users", RateLimit: i64(5), MonthlyQuota: i64(0)})
	addRoute(t, h, "POST", "/users", u.ID)
	server.SetBodyShare(h.Srv, 16)
	for range 3 {
		if r := h.Send("POST", "/p/default/users", "application/json", `{"name":"a body of more than sixteen bytes"}`); r.Status != 503 {
			t.Fatalf("past the client's share: %d %s", r.Status, r.Body)
		}
	}
	if r := h.Send("POST", "/p/default/users", "application/json", `{}`); r.Status != 201 || r.Header.Get("X-RateLimit-Remaining") != "1" {
		t.Errorf("a write after three refused for the client's share: %d, %s remaining, want 201 and 1", r.Status, r.Header.Get("X-RateLimit-Remaining"))
	}
}

// A write to a mock whose log waits for a compaction is refused before its
// body is read: it was read whole first, in vain.
func TestWriteLogBehindRefusedUnread(t *testing.T) {
	h := servertest.New(t, withTeams, func(c *server.Config) {
		c.MaxDataBytes = 4 << 20
		c.Store = panicCompact{c.Store.(*sqlite.DB)} // compactions fail: the log grows
	})
	u := h.Create(`[]`, client.CreateOptions{Name: "users", RateLimit: i64(0), MonthlyQuota: i64(0)})
	addRoute(t, h, "POST", "/users", u.ID)
	addRoute(t, h, "PUT", "/users/{id}", u.ID)
	if r := h.Send("POST", "/p/default/users", "application/json", `{"id":1}`); r.Status != 201 {
		t.Fatal(r.Status, r.Body)
	}
	big := `{"id":1,"blob":"` + strings.Repeat("b", 3<<20) + `"}`
	behind := false
	for i := 0; i < 20 && !behind; i++ {
		r := h.Send("PUT", "/p/default/users/1", "application/json", big)
		switch {
		case r.Status == 503 && strings.Contains(r.Body, "waiting to be compacted"):
			behind = true
		case r.Status != 200:
			t.Fatalf("write %d: %d %.200s", i+1, r.Status, r.Body)
		}
	}
	if !behind {
		t.Fatal("the log never fell behind, 60 MiB of writes without a compaction")
	}
	server.SetBodyBudget(h.Srv, 16) // a body read would be refused for it
	if r := h.Send("PUT", "/p/default/users/1", "application/json", big); r.Status != 503 || !strings.Contains(r.Body, "waiting to be compacted") {
		t.Errorf("a write to a log behind: %d %.200s, want its 503 before the body is read", r.Status, r.Body)
	}
}

// The record a write makes anew counts against the bodies' bound beside
// the body: a PATCH of a few bytes merges into a copy of a record of any
// size (it was not counted).
func TestWriteRecordCopyCounted(t *testing.T) {
	h := servertest.New(t, withTeams)
	big := `{"id":1,"blob":"` + strings.Repeat("b", 300) + `"}`
	u := h.Create(`[`+big+`]`, client.CreateOptions{Name: "users", RateLimit: i64(0), MonthlyQuota: i64(0)})
	addRoute(t, h, "PATCH", "/users/{id}", u.ID)
	addRoute(t, h, "PUT", "/users/{id}", u.ID)
	server.SetBodyBudget(h.Srv, 200)
	if r := h.Send("PATCH", "/p/default/users/1", "application/json", `{"v":1}`); r.Status != 503 {
		t.Errorf("a PATCH of 7 bytes merged into a record of 318 under a bound of 200: %d %.100s", r.Status, r.Body)
	}
	if r := h.Send("PUT", "/p/default/users/1", "application/json", `{"id":1,"v":2}`); r.Status != 200 {
		t.Errorf("a PUT whose record is its body, under the same bound: %d %s", r.Status, r.Body)
	}
	// A body of 311 bytes (312 held, to see its end) and its merge.
	patch := `{"blob":"` + strings.Repeat("c", 300) + `"}`
	merged := `{"id":1,"v":2,"blob":"` + strings.Repeat("c", 300) + `"}`
	held := int64(len(patch) + 1 + len(merged))
	server.SetBodyBudget(h.Srv, held-1)
	if r := h.Send("PATCH", "/p/default/users/1", "application/json", patch); r.Status != 503 {
		t.Errorf("a PATCH holding %d bytes with its merge under a bound of %d: %d %.100s", held, held-1, r.Status, r.Body)
	}
	server.SetBodyBudget(h.Srv, held)
	if r := h.Send("PATCH", "/p/default/users/1", "application/json", patch); r.Status != 200 || r.Body != merged {
		t.Errorf("the same under a bound of %d: %d %.100s", held, r.Status, r.Body)
	}
}

// A write of the largest body, read by its route's rules and made into a
// record with an id added, fits what one client may hold on an idle
// server: the rules let their copy of the body go when none of them
// answers, before the record is made. Found by a review: the body, the
// rules' copy and the record passed a share of three bodies' worth, and
// were refused 503 ("try again") on every try. A record too large to fit
// with its body at all is 413, not 503.
func TestWriteLargestBodyFits(t *testing.T) {
	const maxData = 1000
	h := servertest.New(t, withTeams, func(c *server.Config) { c.MaxDataBytes = maxData })
	u := h.Create(`[]`, client.CreateOptions{Name: "users", RateLimit: i64(0), MonthlyQuota: i64(0)})
	addRoute(t, h, "POST", "/users", u.ID, "rules", `[{"when":"body.x=1","status":418}]`)
	addRoute(t, h, "PATCH", "/users/{id}", u.ID)
	server.SetBodyBounds(h.Srv, 8*maxData) // a quarter of it is less than a client's share
	server.SetDocBound(h.Srv, 8*maxData)   // records past --max-data-bytes, as a lowered bound leaves them
	body := `{"name":"` + strings.Repeat("n", maxData-11) + `"}`
	if r := h.Send("POST", "/p/default/users", "application/json", body); r.Status != 201 {
		t.Fatalf("a body of %d bytes, read by rules, with an id added: %d %.100s", len(body), r.Status, r.Body)
	}
	// Patches of the largest body grow the record: one fits with it, a
	// second would pass what a client may hold with the record it makes.
	patch := func(i int) string { return fmt.Sprintf(`{"f%d":"%s"}`, i, strings.Repeat("f", maxData-20)) }
	for i := range 1 {
		if r := h.Send("PATCH", "/p/default/users/1", "application/json", patch(i)); r.Status != 200 {
			t.Fatalf("patch %d: %d %.100s", i, r.Status, r.Body)
		}
	}
	r := h.Send("PATCH", "/p/default/users/1", "application/json", patch(1))
	if r.Status != 413 || !strings.Contains(r.Body, "more than one client may hold at once (3003 bytes)") {
		t.Errorf("a PATCH whose record can never fit with its body: %d %.200s, want 413", r.Status, r.Body)
	}
	if r := h.Send("PATCH", "/p/default/users/1", "application/json", `{"v":1}`); r.Status != 200 {
		t.Errorf("a small PATCH of the same record: %d %.100s", r.Status, r.Body)
	}
}

// A rule of a write route that answers with the write's normal body plans
// the record, which counts against the bodies' bound as the write's own
// record does (found by a review: a PATCH of 7 bytes to a record of 318
// was 503 under a bound of 200 without the rule, and served with it).
func TestRuleWriteBodyRecordCounted(t *testing.T) {
	h := servertest.New(t, withTeams)
	big := `{"id":1,"blob":"` + strings.Repeat("b", 300) + `"}`
	u := h.Create(`[`+big+`]`, client.CreateOptions{Name: "users", RateLimit: i64(0), MonthlyQuota: i64(0)})
	addRoute(t, h, "PATCH", "/users/{id}", u.ID, "rules", `[{"status":202}]`)
	server.SetBodyBudget(h.Srv, 200)
	if r := h.Send("PATCH", "/p/default/users/1", "application/json", `{"v":1}`); r.Status != 503 {
		t.Errorf("a rule answering the record of 325 bytes a PATCH of 7 makes, under a bound of 200: %d %.60s", r.Status, r.Body)
	}
	server.SetBodyBudget(h.Srv, 400)
	if r := h.Send("PATCH", "/p/default/users/1", "application/json", `{"v":1}`); r.Status != 202 || !strings.Contains(r.Body, `"v":1`) {
		t.Errorf("the same under a bound of 400: %d %.60s", r.Status, r.Body)
	}
}

// A rule of a write route that answers with the write's normal body, on an
// idle server, for the largest body read by the route's rules: the write
// itself is 201 (TestWriteLargestBodyFits), and so is the record the rule
// answers, once the rules let their copy go (found by a review: 413 "more
// than one client may hold").
func TestRuleNormalBodyOfTheLargestWrite(t *testing.T) {
	const maxData = 1000
	h := servertest.New(t, withTeams, func(c *server.Config) { c.MaxDataBytes = maxData })
	u := h.Create(`[]`, client.CreateOptions{Name: "users", RateLimit: i64(0), MonthlyQuota: i64(0)})
	addRoute(t, h, "POST", "/users", u.ID, "rules", `[{"when":"body.x=1","status":418},{"status":202}]`)
	server.SetBodyBounds(h.Srv, 8*maxData) // share 3003, as in TestWriteLargestBodyFits
	body := `{"name":"` + strings.Repeat("n", maxData-11) + `"}`
	r := h.Send("POST", "/p/default/users", "application/json", body)
	if r.Status != 202 || !strings.Contains(r.Body, `"id":`) {
		t.Errorf("a rule answering the write's normal body for a body of %d bytes: %d %.200s; want 202 and the record the write would make (201 without the rule)", len(body), r.Status, r.Body)
	}
}

// The same for a PATCH well inside the bound: the write itself is 200
// (body 551 + merged record ~1950 = ~2500 of a share of 3003), and so is
// its rule, which counted the rules' copy on top and answered the 413
// error before.
func TestRuleNormalBodyOfAPatch(t *testing.T) {
	const maxData = 1000
	h := servertest.New(t, withTeams, func(c *server.Config) { c.MaxDataBytes = maxData })
	u := h.Create(`[]`, client.CreateOptions{Name: "users", RateLimit: i64(0), MonthlyQuota: i64(0)})
	addRoute(t, h, "POST", "/users", u.ID)
	addRoute(t, h, "PATCH", "/users/{id}", u.ID)
	addRoute(t, h, "PATCH", "/try/{id}", u.ID, "rules", `[{"when":"body.x=1","status":418},{"status":202}]`)
	server.SetBodyBounds(h.Srv, 8*maxData) // share 3003
	server.SetDocBound(h.Srv, 8*maxData)   // a record past --max-data-bytes, as a lowered bound leaves it
	if r := h.Send("POST", "/p/default/users", "application/json", `{"a":"`+strings.Repeat("a", 890)+`"}`); r.Status != 201 {
		t.Fatal(r.Status, r.Body)
	}
	if r := h.Send("PATCH", "/p/default/users/1", "application/json", `{"b":"`+strings.Repeat("b", 490)+`"}`); r.Status != 200 {
		t.Fatal(r.Status, r.Body)
	}
	patch := `{"c":"` + strings.Repeat("c", 540) + `"}`
	r := h.Send("PATCH", "/p/default/try/1", "application/json", patch)
	if r.Status != 202 || !strings.Contains(r.Body, `"c":"ccc`) {
		t.Errorf("a rule answering a PATCH the write itself makes: %d %.160s", r.Status, r.Body)
	}
	if r := h.Send("PATCH", "/p/default/users/1", "application/json", patch); r.Status != 200 {
		t.Errorf("the write itself: %d %.160s", r.Status, r.Body)
	}
}

// refusedAppends is a store that refuses every write to the log while
// refuse is set, as one whose clients left or whose disk is full does.
type refusedAppends struct {
	*sqlite.DB
	refuse *atomic.Bool
}

func (s refusedAppends) AppendWrite(ctx context.Context, id string, w *decoy.Write, size int64) error {
	if s.refuse.Load() {
		return decoy.Errorf(decoy.EUNAVAILABLE, "refused by the test")
	}
	return s.DB.AppendWrite(ctx, id, w, size)
}

// A write applied and then not committed gives its record's room back:
// the writes after it extend the live data in place rather than each
// copying the whole collection (32 PATCHes whose clients left at once,
// on 23 MiB, allocated 900 MiB and took RSS from 120 to 260 MiB in the
// bench). What the refused writes did is nowhere in the data.
func TestRefusedWritesDoNotCopyTheData(t *testing.T) {
	refuse := &atomic.Bool{}
	h := servertest.New(t, withTeams, func(c *server.Config) {
		c.MaxDataBytes = 16 << 20
		c.Store = refusedAppends{c.Store.(*sqlite.DB), refuse}
	})
	var data strings.Builder
	data.WriteByte('[')
	const n = 8000
	for i := range n {
		if i > 0 {
			data.WriteByte(',')
		}
		fmt.Fprintf(&data, `{"id":%d,"name":"user %d","bio":"%s"}`, i, i, strings.Repeat("x", 200))
	}
	data.WriteByte(']')
	size := data.Len()
	u := h.Create(data.String(), client.CreateOptions{Name: "users", RateLimit: i64(0), MonthlyQuota: i64(0)})
	addRoute(t, h, "PATCH", "/users/{id}", u.ID)
	addRoute(t, h, "GET", "/users/{id}", u.ID)
	if r := h.Send("PATCH", "/p/default/users/1", "application/json", `{"age":1}`); r.Status != 200 {
		t.Fatal(r.Status, r.Body)
	}
	refuse.Store(true)
	const refused = 20
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for i := range refused {
		if r := h.Send("PATCH", "/p/default/users/2", "application/json", fmt.Sprintf(`{"age":%d}`, 100+i)); r.Status != 503 {
			t.Fatalf("refused write %d: %d %s", i, r.Status, r.Body)
		}
	}
	runtime.ReadMemStats(&after)
	if got := after.TotalAlloc - before.TotalAlloc; got > uint64(size)*refused/4 {
		t.Errorf("%d refused writes to %d KiB of data allocated %d KiB: the data copied at each", refused, size>>10, got>>10)
	}
	refuse.Store(false)
	if r := h.Send("PATCH", "/p/default/users/3", "application/json", `{"age":3}`); r.Status != 200 {
		t.Fatal(r.Status, r.Body)
	}
	for id, want := range map[int]string{1: `"age":1`, 2: `"bio":"` + strings.Repeat("x", 200) + `"}`, 3: `"age":3`} {
		if r := h.Get(fmt.Sprintf("/p/default/users/%d", id)); r.Status != 200 || !strings.HasSuffix(r.Body, want+"}") && !strings.HasSuffix(r.Body, want) {
			t.Errorf("user %d: %d %.80s…%s", id, r.Status, r.Body, r.Body[max(0, len(r.Body)-40):])
		}
	}
	for _, q := range []string{"filters=age%3D100", "filters=age%3D119"} {
		if r := h.Get("/mock/" + u.ID + "?" + q); r.Body != "[]" {
			t.Errorf("a refused write's record is in the data (%s): %.200s", q, r.Body)
		}
	}
	if r := h.Get("/mock/" + u.ID + "?limit=1"); r.Header.Get("X-Total-Count") != strconv.Itoa(n) {
		t.Errorf("records after the refused writes: %s, want %d", r.Header.Get("X-Total-Count"), n)
	}
}

// §9: a data write keeps the data it replaces, and what a mock written
// through its routes answered was its live data, which no version held: an
// upload, a restore and an import that gives the mock new data each keep
// the live data as a version first (an import of an export over the
// project it came from dropped the writes made since, for good: found by a
// newcomer's walk through the docs). Data no write changed is not kept
// twice.
func TestDataWriteKeepsLiveData(t *testing.T) {
	h := servertest.New(t, withTeams, func(c *server.Config) { c.Versions = c.Store.(decoy.VersionStore) })
	u := h.Create(`[{"id":1}]`, client.CreateOptions{Name: "users"})
	addRoute(t, h, "POST", "/users", u.ID)
	versions := func() int {
		return strings.Count(h.Send("GET", "/admin/v1/mocks/"+u.ID+"/versions", "", "").Body, `"version"`)
	}
	version := func(v int) string {
		return h.Send("GET", fmt.Sprintf("/admin/v1/mocks/%s/versions/%d/data", u.ID, v), "", "").Body
	}
	write := func(body string) {
		t.Helper()
		if r := send(t, h, "POST", "/p/default/users", body); r.Status != 201 {
			t.Fatalf("write %s: %d %s", body, r.Status, r.Body)
		}
	}

	write(`{"w":"before the upload"}`)
	if r := h.Send("PUT", "/admin/v1/mocks/"+u.ID+"/data", "application/json", `[{"id":7}]`); r.Status != 200 {
		t.Fatalf("upload: %d %s", r.Status, r.Body)
	}
	if n, got := versions(), version(2); n != 3 || got != `[{"id":1},{"id":2,"w":"before the upload"}]` {
		t.Errorf("after an upload over written data: %d versions, version 2 %s", n, got)
	}
	if d := h.Send("GET", "/admin/v1/mocks/"+u.ID+"/data", "", ""); d.Body != `[{"id":7}]` {
		t.Errorf("data after the upload: %s", d.Body)
	}
	if r := h.Send("PUT", "/admin/v1/mocks/"+u.ID+"/data", "application/json", `[{"id":8}]`); r.Status != 200 || versions() != 4 {
		t.Errorf("an upload over data no write changed: %d, %d versions, want 4", r.Status, versions())
	}

	write(`{"w":"before the restore"}`)
	if r := h.Send("POST", "/admin/v1/mocks/"+u.ID+"/versions/1/restore", "", ""); r.Status != 200 {
		t.Fatalf("restore: %d %s", r.Status, r.Body)
	}
	if n, got := versions(), version(5); n != 6 || got != `[{"id":8},{"id":9,"w":"before the restore"}]` {
		t.Errorf("after a restore over written data: %d versions, version 5 %s", n, got)
	}

	// The project's export, imported back with new ids: the route's mock
	// gets the export's data (§11.5), and the write made since stays as a
	// version.
	exp := h.Send("GET", "/admin/v1/projects/"+decoy.DefaultProjectID+"/export", "", "")
	if exp.Status != 200 {
		t.Fatalf("export: %d %s", exp.Status, exp.Body)
	}
	write(`{"w":"after the export"}`)
	r := h.Send("POST", "/admin/v1/projects/"+decoy.DefaultProjectID+"/import?format=decoy&new_ids=true", "application/gzip", exp.Body)
	if r.Status != 201 || !strings.Contains(r.Body, `"updated":[{"id":"`+u.ID+`"`) {
		t.Fatalf("import: %d %s", r.Status, r.Body)
	}
	if n, got := versions(), version(7); n != 8 || got != `[{"id":1},{"id":2,"w":"after the export"}]` {
		t.Errorf("after an import over written data: %d versions, version 7 %s", n, got)
	}
	if d := h.Send("GET", "/admin/v1/mocks/"+u.ID+"/data", "", ""); d.Body != `[{"id":1}]` {
		t.Errorf("data after the import: %s", d.Body)
	}
}

// Nothing acknowledged is lost (§9, §12.2): writes through a route while
// uploads replace the mock's data each end in the live data or in a
// version, whichever upload came after them, and every upload succeeds (a
// route's write between a snapshot and its replace makes both be taken
// again). Found by a review's race test.
func TestUploadsRaceWrites(t *testing.T) {
	h := servertest.New(t, withTeams, func(c *server.Config) { c.Versions = c.Store.(decoy.VersionStore) })
	u := h.Create(`[{"id":0}]`, client.CreateOptions{Name: "users", RateLimit: i64(0), MonthlyQuota: i64(0)})
	addRoute(t, h, "POST", "/users", u.ID)
	var mu sync.Mutex
	var acked []string
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := range 40 {
				tag := fmt.Sprintf("w%d-%d", w, i)
				r := send(t, h, "POST", "/p/default/users", `{"tag":"`+tag+`"}`)
				if r.Status != 201 {
					t.Errorf("write %s: %d %s", tag, r.Status, r.Body)
				} else {
					mu.Lock()
					acked = append(acked, tag)
					mu.Unlock()
				}
			}
		})
	}
	const uploads = 8 // fewer than --max-versions' 20 with their snapshots: none pruned
	wg.Go(func() {
		for i := range uploads {
			if r := h.Send("PUT", "/admin/v1/mocks/"+u.ID+"/data", "application/json", fmt.Sprintf(`[{"id":%d}]`, 1000+i)); r.Status != 200 {
				t.Errorf("upload %d: %d %s", i, r.Status, r.Body)
			}
		}
	})
	wg.Wait()
	all := h.Send("GET", "/admin/v1/mocks/"+u.ID+"/data", "", "").Body
	for v := 1; v <= 2*uploads+1; v++ {
		if r := h.Send("GET", fmt.Sprintf("/admin/v1/mocks/%s/versions/%d/data", u.ID, v), "", ""); r.Status == 200 {
			all += r.Body
		}
	}
	for _, tag := range acked {
		if !strings.Contains(all, `"`+tag+`"`) {
			t.Errorf("the acknowledged write %s is in no version and not in the live data", tag)
		}
	}
	if len(acked) != 160 {
		t.Errorf("%d of 160 writes acknowledged", len(acked))
	}
}
