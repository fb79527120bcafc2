package route_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/decoy-mock/decoy"
	"github.com/decoy-mock/decoy/route"
)

// routes makes routes from "METHOD /path" lines; each route's ID is its
// line.
func routes(lines ...string) []*decoy.Route {
	var rs []*decoy.Route
	for _, l := range lines {
		method, path, _ := strings.Cut(l, " ")
		rs = append(rs, &decoy.Route{ID: l, Method: method, Path: path})
	}
	return rs
}

var testRoutes = routes(
	"GET /",
	"GET /users",
	"POST /users",
	"GET /users/me",
	"GET /users/{id}",
	"PUT /users/{id}",
	"PATCH /users/{id}",
	"DELETE /users/{id}",
	"GET /users/{uid}/posts",
	"GET /a/{x}/c",
	"GET /{y}/b/c",
	"GET /b/lit/end",
	"GET /b/{p}/other",
	"GET /deep/{a}/x/y/z",
	"GET /deep/lit/x/y/{b}",
	"GET /caf\u00e9/{\u540d}",
	"GET /100%",
	"GET /a b",
	"POST /only-post",
	"GET /v1.2/{file.name}",
)

func TestMatch(t *testing.T) {
	table, err := route.Compile(testRoutes)
	if err != nil {
		t.Fatal(err)
	}
	all := route.GET | route.PUT | route.PATCH | route.DELETE
	tests := []struct {
		name, method, path string
		route              string // the ID of the route that answers; "" for none
		params             string // "name=value,…" of a hit
		allowed            route.Methods
	}{
		{name: "root", method: "GET", path: "/", route: "GET /"},
		{name: "empty path is the root", method: "GET", path: "", route: "GET /"},
		{name: "collection", method: "GET", path: "/users", route: "GET /users"},
		{name: "trailing slash", method: "GET", path: "/users/", route: "GET /users"},
		{name: "two trailing slashes", method: "GET", path: "/users//"},
		{name: "double slash is not the root", method: "GET", path: "//"},
		{name: "POST", method: "POST", path: "/users", route: "POST /users"},
		{name: "HEAD takes GET", method: "HEAD", path: "/users", route: "GET /users"},
		{name: "HEAD takes GET's parameters", method: "HEAD", path: "/users/7", route: "GET /users/{id}", params: "id=7"},
		{name: "405", method: "DELETE", path: "/users", allowed: route.GET | route.POST},
		{name: "405 on a HEAD with no GET", method: "HEAD", path: "/only-post", allowed: route.POST},
		{name: "OPTIONS is a 405", method: "OPTIONS", path: "/users", allowed: route.GET | route.POST},
		{name: "methods are case-sensitive", method: "get", path: "/users", allowed: route.GET | route.POST},
		{name: "unknown method", method: "BREW", path: "/users/1", allowed: all},
		{name: "literal beats parameter", method: "GET", path: "/users/me", route: "GET /users/me"},
		{name: "decoded literal", method: "GET", path: "/users/m%65", route: "GET /users/me"},
		{name: "parameter", method: "GET", path: "/users/42", route: "GET /users/{id}", params: "id=42"},
		{name: "other method takes the parameter", method: "DELETE", path: "/users/me", route: "DELETE /users/{id}", params: "id=me"},
		{name: "405 lists every matching path's methods", method: "POST", path: "/users/me", allowed: all},
		{name: "405 on an item", method: "POST", path: "/users/42", allowed: all},
		{name: "parameter then literal", method: "GET", path: "/users/42/posts", route: "GET /users/{uid}/posts", params: "uid=42"},
		{name: "escaped slash stays in the segment", method: "GET", path: "/users/a%2Fb", route: "GET /users/{id}", params: "id=a/b"},
		{name: "escaped slash in a middle segment", method: "GET", path: "/users/a%2fb/posts", route: "GET /users/{uid}/posts", params: "uid=a/b"},
		{name: "escaped dots", method: "GET", path: "/users/%2E%2E", route: "GET /users/{id}", params: "id=.."},
		{name: "plus stays plus", method: "GET", path: "/users/a+b", route: "GET /users/{id}", params: "id=a+b"},
		{name: "escaped space", method: "GET", path: "/users/a%20b", route: "GET /users/{id}", params: "id=a b"},
		{name: "escaped percent", method: "GET", path: "/users/%25", route: "GET /users/{id}", params: "id=%"},
		{name: "escape of a non-UTF-8 byte", method: "GET", path: "/users/%FF", route: "GET /users/{id}", params: "id=\xff"},
		{name: "invalid escape", method: "GET", path: "/users/%zz"},
		{name: "truncated escape", method: "GET", path: "/users/a%2"},
		{name: "lone percent", method: "GET", path: "/users/%"},
		{name: "invalid escape elsewhere", method: "GET", path: "/users/1/%zz"},
		{name: "empty segment", method: "GET", path: "/users//posts"},
		{name: "no leading slash", method: "GET", path: "users"},
		{name: "leftmost literal wins", method: "GET", path: "/a/b/c", route: "GET /a/{x}/c", params: "x=b"},
		{name: "only the second matches", method: "GET", path: "/z/b/c", route: "GET /{y}/b/c", params: "y=z"},
		{name: "backtracking", method: "GET", path: "/b/lit/other", route: "GET /b/{p}/other", params: "p=lit"},
		{name: "literal branch when it ends", method: "GET", path: "/b/lit/end", route: "GET /b/lit/end"},
		{name: "deep literal wins at position 2", method: "GET", path: "/deep/lit/x/y/z", route: "GET /deep/lit/x/y/{b}", params: "b=z"},
		{name: "deep backtracking", method: "GET", path: "/deep/lit/x/y/z/", route: "GET /deep/lit/x/y/{b}", params: "b=z"},
		{name: "deep parameter", method: "GET", path: "/deep/other/x/y/z", route: "GET /deep/{a}/x/y/z", params: "a=other"},
		{name: "unicode escaped", method: "GET", path: "/caf%C3%A9/%E5%90%8D", route: "GET /caf\u00e9/{\u540d}", params: "\u540d=\u540d"},
		{name: "unicode raw", method: "GET", path: "/caf\u00e9/x", route: "GET /caf\u00e9/{\u540d}", params: "\u540d=x"},
		{name: "no Unicode normalization", method: "GET", path: "/cafe%CC%81/x"},
		{name: "case-sensitive literal", method: "GET", path: "/USERS"},
		{name: "literal percent", method: "GET", path: "/100%25", route: "GET /100%"},
		{name: "literal space", method: "GET", path: "/a%20b", route: "GET /a b"},
		{name: "dotted names", method: "GET", path: "/v1.2/x.json", route: "GET /v1.2/{file.name}", params: "file.name=x.json"},
		{name: "no route", method: "GET", path: "/nope/x/y"},
		{name: "too deep for any route", method: "GET", path: "/users/1/posts/2"},
		{name: "more than 32 segments", method: "GET", path: strings.Repeat("/a", 33)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := table.Match(tt.method, tt.path)
			if tt.route == "" {
				if m.Route != nil {
					t.Fatalf("Match(%s %q) = %s, want none", tt.method, tt.path, m.Route.ID)
				}
				if m.Allowed != tt.allowed {
					t.Fatalf("Allowed = %q, want %q", m.Allowed, tt.allowed)
				}
				if got := table.Allowed(tt.path); got != tt.allowed {
					t.Fatalf("table.Allowed(%q) = %q, want %q", tt.path, got, tt.allowed)
				}
				return
			}
			if m.Route == nil {
				t.Fatalf("Match(%s %q) found none (allowed %q), want %s", tt.method, tt.path, m.Allowed, tt.route)
			}
			if m.Route.ID != tt.route {
				t.Fatalf("Match(%s %q) = %s, want %s", tt.method, tt.path, m.Route.ID, tt.route)
			}
			if m.Template == nil || m.Template.String() != m.Route.Path {
				t.Errorf("Template %v, want %s", m.Template, m.Route.Path)
			}
			var ps []string
			for _, p := range m.Params {
				ps = append(ps, p.Name+"="+p.Value)
			}
			if got := strings.Join(ps, ","); got != tt.params {
				t.Errorf("params %q, want %q", got, tt.params)
			}
			if m.Allowed != 0 {
				t.Errorf("Allowed %q on a hit", m.Allowed)
			}
			if !table.Allowed(tt.path).Has(tt.method) {
				t.Errorf("table.Allowed(%q) = %q lacks %s", tt.path, table.Allowed(tt.path), tt.method)
			}
		})
	}
}

func TestMethods(t *testing.T) {
	tests := []struct {
		m    route.Methods
		want string
	}{
		{0, ""},
		{route.GET, "GET, HEAD"},
		{route.POST, "POST"},
		{route.DELETE | route.GET, "GET, HEAD, DELETE"},
		{route.PATCH | route.PUT | route.POST, "POST, PUT, PATCH"},
		{route.GET | route.POST | route.PUT | route.PATCH | route.DELETE, "GET, HEAD, POST, PUT, PATCH, DELETE"},
	}
	for _, tt := range tests {
		if got := tt.m.String(); got != tt.want {
			t.Errorf("%08b: String() = %q, want %q", uint8(tt.m), got, tt.want)
		}
		for _, method := range []string{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"} {
			want := strings.Contains(", "+tt.want+",", ", "+method+",")
			if got := tt.m.Has(method); got != want {
				t.Errorf("%q.Has(%s) = %v", tt.m, method, got)
			}
		}
		if tt.m.Has("OPTIONS") || tt.m.Has("") {
			t.Errorf("%q has OPTIONS or the empty method", tt.m)
		}
	}
}

func TestCompileLeavesOut(t *testing.T) {
	rs := routes(
		"GET /u/{a}",
		"GET /u/{b}",     // same shape as the first
		"POST /u/{b}",    // another method: kept
		"HEAD /h",        // not a route method
		"GET /bad/",      // invalid path
		"GET /ok",        //
		"GET /u/{a}/{a}", // invalid path
	)
	rs = append(rs, nil)
	table, err := route.Compile(rs)
	if err == nil {
		t.Fatal("Compile: no error")
	}
	for _, want := range []string{
		"route GET /u/{b} left out: GET /u/{b} has the shape of route GET /u/{a} (/u/{a})",
		`route HEAD /h left out: invalid method "HEAD"`,
		"route GET /bad/ left out: Invalid path: only the root path / ends with /",
		"route GET /u/{a}/{a} left out: Invalid path: parameter {a} appears twice",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	if got := table.Len(); got != 3 {
		t.Errorf("Len() = %d, want 3", got)
	}
	if m := table.Match("GET", "/u/1"); m.Route != rs[0] || m.Params[0].Name != "a" {
		t.Errorf("GET /u/1 matched %+v, want the first route", m)
	}
	if m := table.Match("POST", "/u/1"); m.Route != rs[2] || m.Params[0].Name != "b" {
		t.Errorf("POST /u/1 matched %+v, want the POST route with its own name", m)
	}
	if m := table.Match("GET", "/ok"); m.Route != rs[5] {
		t.Errorf("GET /ok matched %+v", m)
	}
}

func TestEmptyTable(t *testing.T) {
	for name, table := range map[string]*route.Table{"nil": nil, "no routes": mustCompile(t, nil)} {
		t.Run(name, func(t *testing.T) {
			if m := table.Match("GET", "/"); m.Route != nil || m.Allowed != 0 {
				t.Errorf("Match = %+v", m)
			}
			if a := table.Allowed("/x"); a != 0 {
				t.Errorf("Allowed = %q", a)
			}
			if n := table.Len(); n != 0 {
				t.Errorf("Len = %d", n)
			}
		})
	}
}

// TestManyLiterals covers a node whose literal children pass from a slice
// to a map.
func TestManyLiterals(t *testing.T) {
	var rs []*decoy.Route
	for i := range 40 {
		rs = append(rs, &decoy.Route{ID: fmt.Sprint(i), Method: "GET", Path: fmt.Sprintf("/r%d/{id}", i)})
		if i%2 == 0 {
			rs = append(rs, &decoy.Route{ID: fmt.Sprintf("%d-x", i), Method: "GET", Path: fmt.Sprintf("/r%d/x", i)})
		}
	}
	table := mustCompile(t, rs)
	for i := range 40 {
		if m := table.Match("GET", fmt.Sprintf("/r%d/x", i)); m.Route == nil {
			t.Errorf("/r%d/x: no match", i)
		} else if want := fmt.Sprint(i) + map[bool]string{true: "-x"}[i%2 == 0]; m.Route.ID != want {
			t.Errorf("/r%d/x matched %s, want %s", i, m.Route.ID, want)
		}
	}
	if m := table.Match("GET", "/r40/x"); m.Route != nil || m.Allowed != 0 {
		t.Errorf("/r40/x matched %+v", m)
	}
}

func TestMatchAllocations(t *testing.T) {
	table := mustCompile(t, testRoutes)
	tests := []struct {
		name, path string
		want       float64
	}{
		{"literal route", "/users/me", 0},
		{"root", "/", 0},
		{"parameters", "/users/42/posts", 1},
		{"parameters and escapes", "/users/a%2Fb/posts", 2},
		{"escapes, no parameters", "/100%25", 1},
		{"miss", "/nope", 0},
		{"405", "/only-post", 0},
	}
	for _, tt := range tests {
		got := testing.AllocsPerRun(100, func() { table.Match("GET", tt.path) })
		if got != tt.want {
			t.Errorf("%s: %v allocations, want %v", tt.name, got, tt.want)
		}
	}
}

func mustCompile(t testing.TB, rs []*decoy.Route) *route.Table {
	t.Helper()
	table, err := route.Compile(rs)
	if err != nil {
		t.Fatal(err)
	}
	return table
}
