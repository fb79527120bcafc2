package route_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/decoy-mock/decoy"
	"github.com/decoy-mock/decoy/route"
)

// checkInvalid fails t unless err is a decoy.EINVALID error whose message
// starts with prefix and contains want.
func checkInvalid(t *testing.T, err error, prefix, want string) {
	t.Helper()
	var de *decoy.Error
	if !errors.As(err, &de) || de.Code != decoy.EINVALID {
		t.Fatalf("error %v, want an EINVALID error", err)
	}
	if !strings.HasPrefix(de.Message, prefix) || !strings.Contains(de.Message, want) {
		t.Fatalf("message %q, want %q…%q", de.Message, prefix, want)
	}
}

func TestParse(t *testing.T) {
	segments := func(n int) string { return strings.Repeat("/a", n) }
	tests := []struct {
		name   string
		path   string
		params []string
		item   bool
		err    string // part of the message after "Invalid path: "; "" for valid
	}{
		{name: "root", path: "/"},
		{name: "literal", path: "/users"},
		{name: "nested literals", path: "/api/v1/users"},
		{name: "item", path: "/users/{id}", params: []string{"id"}, item: true},
		{name: "parameter at the root", path: "/{slug}", params: []string{"slug"}, item: true},
		{name: "collection under an item", path: "/users/{user_id}/posts", params: []string{"user_id"}},
		{name: "two parameters", path: "/users/{uid}/posts/{post.id}", params: []string{"uid", "post.id"}, item: true},
		{name: "name with - and _", path: "/{-a}/{_b}/{c-1_2}", params: []string{"-a", "_b", "c-1_2"}, item: true},
		{name: "unicode name and literal", path: "/caf\u00e9/{\u540d\u524d}", params: []string{"\u540d\u524d"}, item: true},
		{name: "percent is a literal percent", path: "/100%"},
		{name: "escape-like literal", path: "/a%2Fb"},
		{name: "space", path: "/a b"},
		{name: "sub-delims", path: "/a:b;c=d,e+f@g!$&'()*~"},
		{name: "three dots", path: "/..."},
		{name: "dot inside", path: "/v1.2/.well-known"},
		{name: "32 segments", path: segments(32)},

		{name: "empty", path: "", err: "it must start with /"},
		{name: "no leading slash", path: "users", err: "it must start with /"},
		{name: "not UTF-8", path: "/\xff", err: "it is not UTF-8"},
		{name: "trailing slash", path: "/users/", err: "only the root path / ends with /"},
		{name: "double slash", path: "//", err: "only the root path / ends with /"},
		{name: "empty first segment", path: "//a", err: "segment 1 is empty"},
		{name: "empty segment", path: "/a//b", err: "segment 2 is empty"},
		{name: "33 segments", path: segments(33), err: "more than 32 segments"},
		{name: "no name", path: "/{}", err: "a parameter {} has no name"},
		{name: "name starts with a digit", path: "/{1a}", err: `parameter name "1a" starts with a digit`},
		{name: "name with a space", path: "/{a b}", err: `parameter name "a b" has a character other than`},
		{name: "name with a brace", path: "/{a{b}", err: `parameter name "a{b" has a character other than`},
		{name: "name with a slash-free symbol", path: "/{a$}", err: `parameter name "a$" has a character`},
		{name: "name starts with a dot", path: "/{.a}", err: `parameter name ".a" has an empty part between dots`},
		{name: "name ends with a dot", path: "/{a.}", err: `parameter name "a." has an empty part`},
		{name: "name with two dots", path: "/{a..b}", err: `parameter name "a..b" has an empty part`},
		{name: "name twice", path: "/u/{id}/v/{id}", err: "parameter {id} appears twice"},
		{name: "parameter with a prefix", path: "/a{b}", err: `segment "a{b}": a parameter {name} is a whole segment`},
		{name: "parameter with a suffix", path: "/{a}b", err: `segment "{a}b": a parameter`},
		{name: "unclosed", path: "/{a", err: `segment "{a": a parameter`},
		{name: "unopened", path: "/a}", err: `segment "a}": a parameter`},
		{name: "question mark", path: "/search?q", err: `segment "search?q": ? is not part of a path`},
		{name: "hash", path: "/a#b", err: `segment "a#b": # is not part of a path`},
		{name: "NUL", path: "/a\x00b", err: `segment "a\x00b" has a control character`},
		{name: "tab", path: "/a\tb", err: "has a control character"},
		{name: "DEL", path: "/a\x7f", err: "has a control character"},
		{name: "C1 control", path: "/a\u0085", err: "has a control character"},
		{name: "dot", path: "/a/.", err: "segment . is not allowed"},
		{name: "dot dot", path: "/../a", err: "segment .. is not allowed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tmpl, err := route.Parse(tt.path)
			if tt.err != "" {
				if tmpl != nil {
					t.Errorf("Parse(%q) returned a template with an error", tt.path)
				}
				checkInvalid(t, err, "Invalid path: ", tt.err)
				return
			}
			if err != nil {
				t.Fatalf("Parse(%q): %v", tt.path, err)
			}
			if got := tmpl.String(); got != tt.path {
				t.Errorf("String() = %q", got)
			}
			if got := tmpl.Params(); !slices.Equal(got, tt.params) {
				t.Errorf("Params() = %q, want %q", got, tt.params)
			}
			if got := tmpl.Item(); got != tt.item {
				t.Errorf("Item() = %v, want %v", got, tt.item)
			}
		})
	}
}

func TestDefaultAction(t *testing.T) {
	want := map[string][3]string{ // method: root, collection, item
		"GET":    {"read", "read", "read"},
		"POST":   {"create", "create", "read"},
		"PUT":    {"read", "read", "replace"},
		"PATCH":  {"read", "read", "update"},
		"DELETE": {"read", "read", "delete"},
		"HEAD":   {"read", "read", "read"},
	}
	for method, w := range want {
		for i, path := range []string{"/", "/users/{uid}/posts", "/users/{id}"} {
			tmpl, err := route.Parse(path)
			if err != nil {
				t.Fatal(err)
			}
			if got := tmpl.DefaultAction(method); got != w[i] {
				t.Errorf("DefaultAction(%s %s) = %s, want %s", method, path, got, w[i])
			}
			// The default always fits the shape.
			if err := tmpl.CheckAction(tmpl.DefaultAction(method)); err != nil {
				t.Errorf("%s %s: default action refused: %v", method, path, err)
			}
		}
	}
}

func TestCheckAction(t *testing.T) {
	tests := []struct {
		name, path, action string
		err                string // "" for valid
	}{
		{name: "read on a collection", path: "/users", action: "read"},
		{name: "read on an item", path: "/users/{id}", action: "read"},
		{name: "create on a collection", path: "/users", action: "create"},
		{name: "create on the root", path: "/", action: "create"},
		{name: "replace on an item", path: "/users/{id}", action: "replace"},
		{name: "update on an item", path: "/users/{id}", action: "update"},
		{name: "delete on an item", path: "/users/{id}", action: "delete"},
		{name: "create on an item", path: "/users/{id}", action: "create", err: "create needs a collection route"},
		{name: "replace on a collection", path: "/users", action: "replace", err: "replace needs an item route"},
		{name: "update on a collection", path: "/users/{id}/posts", action: "update", err: "update needs an item route"},
		{name: "delete on the root", path: "/", action: "delete", err: "delete needs an item route"},
		{name: "unknown", path: "/users", action: "list", err: `"list"`},
		{name: "empty", path: "/users", action: "", err: `""`},
		{name: "upper case", path: "/users", action: "READ", err: `"READ"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tmpl, err := route.Parse(tt.path)
			if err != nil {
				t.Fatal(err)
			}
			err = tmpl.CheckAction(tt.action)
			if tt.err == "" {
				if err != nil {
					t.Fatalf("CheckAction(%q) on %s: %v", tt.action, tt.path, err)
				}
				return
			}
			checkInvalid(t, err, "Invalid action: ", tt.err)
		})
	}
}

func TestValidate(t *testing.T) {
	items := func(s string) *string { return &s }
	tests := []struct {
		name   string
		route  decoy.Route
		prefix string // "" for valid
		err    string
	}{
		{name: "minimal", route: decoy.Route{Method: "GET", Path: "/users"}},
		{name: "everything", route: decoy.Route{Method: "PATCH", Path: "/orgs/{org}/users/{id}", Action: "update",
			Bind: map[string]string{"org": "org.id", "id": "uuid"}, Items: items("data.users")}},
		{name: "empty bind", route: decoy.Route{Method: "GET", Path: "/u/{id}", Bind: map[string]string{}}},
		{name: "items of one segment", route: decoy.Route{Method: "GET", Path: "/u", Items: items("data")}},
		{name: "empty action is the default", route: decoy.Route{Method: "POST", Path: "/u/{id}"}},

		{name: "unknown method", route: decoy.Route{Method: "OPTIONS", Path: "/u"}, prefix: "Invalid method: ", err: `"OPTIONS" (one of GET, POST, PUT, PATCH, DELETE)`},
		{name: "HEAD method", route: decoy.Route{Method: "HEAD", Path: "/u"}, prefix: "Invalid method: ", err: `"HEAD"`},
		{name: "lower-case method", route: decoy.Route{Method: "get", Path: "/u"}, prefix: "Invalid method: ", err: `"get"`},
		{name: "bad path", route: decoy.Route{Method: "GET", Path: "/u/"}, prefix: "Invalid path: ", err: "ends with /"},
		{name: "bind of no parameter", route: decoy.Route{Method: "GET", Path: "/u/{id}", Bind: map[string]string{"uid": "id"}},
			prefix: "Invalid bind: ", err: "{uid} is not a parameter of /u/{id}"},
		{name: "bind on a path without parameters", route: decoy.Route{Method: "GET", Path: "/u", Bind: map[string]string{"id": "id"}},
			prefix: "Invalid bind: ", err: "{id} is not a parameter of /u"},
		{name: "bind to an empty field", route: decoy.Route{Method: "GET", Path: "/u/{id}", Bind: map[string]string{"id": ""}},
			prefix: "Invalid bind: ", err: "{id}: the field path is empty"},
		{name: "bind to an empty segment", route: decoy.Route{Method: "GET", Path: "/u/{id}", Bind: map[string]string{"id": "a..b"}},
			prefix: "Invalid bind: ", err: `{id}: field path "a..b" has an empty segment`},
		{name: "bind to a leading dot", route: decoy.Route{Method: "GET", Path: "/u/{id}", Bind: map[string]string{"id": ".a"}},
			prefix: "Invalid bind: ", err: `{id}: field path ".a" has an empty segment`},
		{name: "bind errors in key order", route: decoy.Route{Method: "GET", Path: "/u/{a}/{b}", Bind: map[string]string{"b": "x.", "a": ".x"}},
			prefix: "Invalid bind: ", err: `{a}: field path ".x" has an empty segment`},
		{name: "empty items", route: decoy.Route{Method: "GET", Path: "/u", Items: items("")}, prefix: "Invalid items: ", err: "the field path is empty"},
		{name: "items with an empty segment", route: decoy.Route{Method: "GET", Path: "/u", Items: items("data..x")}, prefix: "Invalid items: ", err: `field path "data..x" has an empty segment`},
		{name: "items ending with a dot", route: decoy.Route{Method: "GET", Path: "/u", Items: items("data.")}, prefix: "Invalid items: ", err: `field path "data." has an empty segment`},
		{name: "unknown action", route: decoy.Route{Method: "GET", Path: "/u", Action: "list"}, prefix: "Invalid action: ", err: `"list"`},
		{name: "action of the wrong shape", route: decoy.Route{Method: "DELETE", Path: "/u", Action: "delete"}, prefix: "Invalid action: ", err: "delete needs an item route"},
		{name: "method before path", route: decoy.Route{Method: "X", Path: "x"}, prefix: "Invalid method: ", err: `"X"`},
		{name: "path before bind", route: decoy.Route{Method: "GET", Path: "x", Bind: map[string]string{"a": ""}}, prefix: "Invalid path: ", err: "start with /"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tmpl, err := route.Validate(&tt.route)
			if tt.prefix != "" {
				checkInvalid(t, err, tt.prefix, tt.err)
				return
			}
			if err != nil {
				t.Fatalf("Validate: %v", err)
			}
			if tmpl.String() != tt.route.Path {
				t.Errorf("template %q, want %q", tmpl, tt.route.Path)
			}
		})
	}
}

func TestExpand(t *testing.T) {
	tests := []struct {
		name, path string
		values     []string
		want       string
	}{
		{name: "root", path: "/", want: "/"},
		{name: "literals", path: "/a/b", want: "/a/b"},
		{name: "one parameter", path: "/users/{id}", values: []string{"42"}, want: "/users/42"},
		{name: "two parameters", path: "/u/{a}/p/{b}", values: []string{"x", "y"}, want: "/u/x/p/y"},
		{name: "slash in a value", path: "/files/{name}", values: []string{"a/b"}, want: "/files/a%2Fb"},
		{name: "percent in a value", path: "/files/{name}", values: []string{"100%"}, want: "/files/100%25"},
		{name: "query characters", path: "/files/{name}", values: []string{"a?b#c"}, want: "/files/a%3Fb%23c"},
		{name: "unicode", path: "/caf\u00e9/{n}", values: []string{"\u00fc"}, want: "/caf%C3%A9/%C3%BC"},
		{name: "space", path: "/a b/{n}", values: []string{"c d"}, want: "/a%20b/c%20d"},
		{name: "dot value", path: "/f/{n}", values: []string{"."}, want: "/f/%2E"},
		{name: "dot-dot value", path: "/f/{n}", values: []string{".."}, want: "/f/%2E%2E"},
		{name: "literal percent", path: "/100%/{n}", values: []string{"x"}, want: "/100%25/x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tmpl, err := route.Parse(tt.path)
			if err != nil {
				t.Fatal(err)
			}
			got := tmpl.Expand(tt.values)
			if got != tt.want {
				t.Fatalf("Expand(%q) = %q, want %q", tt.values, got, tt.want)
			}
			// The expanded path matches the template with the same values.
			r := &decoy.Route{ID: "r", Method: "GET", Path: tt.path}
			table, err := route.Compile([]*decoy.Route{r})
			if err != nil {
				t.Fatal(err)
			}
			m := table.Match("GET", got)
			if m.Route != r {
				t.Fatalf("Match(%q) found no route", got)
			}
			for i, p := range m.Params {
				if p.Value != tt.values[i] {
					t.Errorf("param %s = %q, want %q", p.Name, p.Value, tt.values[i])
				}
			}
		})
	}
}

func TestExpandPanicsOnCount(t *testing.T) {
	tmpl, err := route.Parse("/u/{id}")
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if recover() == nil {
			t.Fatal("Expand with no values did not panic")
		}
	}()
	tmpl.Expand(nil)
}
