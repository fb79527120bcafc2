package admin

import (
	"testing"

	"github.com/decoy-mock/decoy"
)

func TestRoutePath(t *testing.T) {
	for _, c := range []struct {
		in, want string
		ok       bool
	}{
		{"/", "/", true},
		{"", "/", true},
		{"/users", "/users", true},
		{"/users/", "/users", true},
		{"/users/42", "/users/42", true},
		{"/caf%C3%A9/a%20b", "/café/a b", true},
		{"/a%2Fb", "", false}, // an encoded "/" is no route's segment
		{"/%7Bid%7D", "", false},
		{"/a//b", "", false},
		{"/a/%zz", "", false},
		{"/..", "", false},
	} {
		got, ok := routePath(c.in)
		if ok != c.ok || got != c.want {
			t.Errorf("routePath(%q) = %q, %v; want %q, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}

func TestCollectionOf(t *testing.T) {
	for _, c := range []struct {
		body  string
		items string
		ok    bool
	}{
		{`[{"id":1},{"id":2}]`, "", true},
		{` [] `, "", true},
		{`[{"id":1},2]`, "", false},
		{`[1,2]`, "", false},
		{`{"data":[{"id":1}],"links":{}}`, "data", true},
		{`{"data":[{"id":1}],"more":[{"id":2}]}`, "", false},
		{`{"a.b":[{"id":1}]}`, "", false},
		{`{"id":1}`, "", false},
		{`"text"`, "", false},
		{`null`, "", false},
	} {
		items, ok := collectionOf([]byte(c.body))
		got := ""
		if items != nil {
			got = *items
		}
		if ok != c.ok || got != c.items {
			t.Errorf("collectionOf(%s) = %q, %v; want %q, %v", c.body, got, ok, c.items, c.ok)
		}
	}
}

func TestWithRecord(t *testing.T) {
	data := "data"
	for _, c := range []struct {
		name, data string
		items      *string
		key, rec   string
		want       string
	}{
		{"replaced", `[{"id":1,"n":"a"}, {"id":2,"n":"b"}]`, nil, "2", `{"id":2,"n":"B"}`, `[{"id":1,"n":"a"},{"id":2,"n":"B"}]`},
		{"appended", `[{"id":1}]`, nil, "3", `{"id":3}`, `[{"id":1},{"id":3}]`},
		{"string ids", `[{"id":"a"}]`, nil, "a", `{"id":"a","x":1}`, `[{"id":"a","x":1}]`},
		{"wrapped, other bytes kept", `{"links" : {"next":null},"data":[{"id":1}] ,"n":1}`, &data, "1", `{"id":1,"v":2}`,
			`{"links" : {"next":null},"data":[{"id":1,"v":2}] ,"n":1}`},
		{"empty", `[]`, nil, "1", `{"id":1}`, `[{"id":1}]`},
	} {
		got, ok := withRecord([]byte(c.data), c.items, "id", c.key, []byte(c.rec))
		if !ok || string(got) != c.want {
			t.Errorf("%s: %s, %v; want %s", c.name, got, ok, c.want)
		}
	}
	if _, ok := withRecord([]byte(`{"x":1}`), &data, "id", "1", []byte(`{"id":1}`)); ok {
		t.Error("a record put where there is no collection")
	}
}

func TestFieldText(t *testing.T) {
	for _, c := range []struct {
		body, want string
		ok         bool
	}{
		{`{"id":42}`, "42", true},
		{`{"id":"abc"}`, "abc", true},
		{`{"id":1.5e3}`, "1.5e3", true},
		{`{"id":null}`, "", false},
		{`{"id":{"x":1}}`, "", false},
		{`{"other":1}`, "", false},
		{`[{"id":1}]`, "", false},
	} {
		got, ok := fieldText([]byte(c.body), "id")
		if ok != c.ok || got != c.want {
			t.Errorf("fieldText(%s) = %q, %v; want %q, %v", c.body, got, ok, c.want, c.ok)
		}
	}
}

// A recording at a path changes a mock only the resource at that path
// answers from: the path itself and its items, path/{param}; a route at
// another path, below it or not, and any at the root's literal paths, stop
// it (a review: the root counted every path as its own, and a path two
// segments below counted as an item).
func TestSharedElsewhere(t *testing.T) {
	routes := func(paths ...string) []*decoy.Route {
		rs := make([]*decoy.Route, len(paths))
		for i, p := range paths {
			rs[i] = &decoy.Route{Method: "GET", Path: p, MockID: "m"}
		}
		return rs
	}
	for _, tc := range []struct {
		path   string
		routes []*decoy.Route
		ok     bool
	}{
		{"/users", routes("/users", "/users/{id}"), true},
		{"/users", append(routes("/users"), &decoy.Route{Method: "GET", Path: "/admins", MockID: "other"}), true},
		{"/users", routes("/users", "/admins"), false},
		{"/users", routes("/users", "/users-archive"), false},
		{"/users", routes("/users", "/users/active"), false},
		{"/users", routes("/users", "/users/{id}/avatar"), false},
		{"/", routes("/", "/{id}"), true},
		{"/", routes("/", "/reviews"), false},
	} {
		err := sharedElsewhere(tc.routes, "m", tc.path)
		if (err == nil) != tc.ok {
			t.Errorf("%s among %d routes: %v, want ok %v", tc.path, len(tc.routes), err, tc.ok)
		}
	}
}
