package route_test

import (
	"errors"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/decoy-mock/decoy"
	"github.com/decoy-mock/decoy/route"
)

// The reference of the template syntax (§11.2), written apart from the
// parser: regular expressions for a segment, and the rules they cannot say.
var (
	refParam   = regexp.MustCompile(`^\{([\p{L}_\-][\p{L}0-9_.\-]*)\}$`)
	refLiteral = regexp.MustCompile(`^[^{}?#\p{Cc}]+$`)
)

// refTemplate returns the segments of a valid template and which are
// parameters; ok false when the template is invalid.
func refTemplate(path string) (segs []string, param []bool, ok bool) {
	if !utf8.ValidString(path) || !strings.HasPrefix(path, "/") {
		return nil, nil, false
	}
	if path == "/" {
		return nil, nil, true
	}
	segs = strings.Split(path[1:], "/")
	if len(segs) > route.MaxSegments {
		return nil, nil, false
	}
	param = make([]bool, len(segs))
	var names []string
	for i, s := range segs {
		if m := refParam.FindStringSubmatch(s); m != nil {
			name := m[1]
			if strings.HasSuffix(name, ".") || strings.Contains(name, "..") || slices.Contains(names, name) {
				return nil, nil, false
			}
			names = append(names, name)
			segs[i], param[i] = name, true
			continue
		}
		if !refLiteral.MatchString(s) || s == "." || s == ".." {
			return nil, nil, false
		}
	}
	return segs, param, true
}

// refSplit is the reference of how a request path is read (§11.3): its
// decoded segments, ok false when it can match nothing.
func refSplit(p string) ([]string, bool) {
	if p == "" || p == "/" {
		return nil, true
	}
	if !strings.HasPrefix(p, "/") {
		return nil, false
	}
	parts := strings.Split(strings.TrimSuffix(p, "/")[1:], "/")
	if len(parts) > route.MaxSegments {
		return nil, false
	}
	for i, s := range parts {
		d, err := url.PathUnescape(s)
		if s == "" || err != nil {
			return nil, false
		}
		parts[i] = d
	}
	return parts, true
}

type refRoute struct {
	r     *decoy.Route
	segs  []string
	param []bool
}

// matches reports whether the template matches the decoded segments.
func (rr refRoute) matches(segs []string) bool {
	if len(rr.segs) != len(segs) {
		return false
	}
	for i, s := range rr.segs {
		if !rr.param[i] && s != segs[i] {
			return false
		}
	}
	return true
}

// beats reports whether rr takes precedence over o: a literal where o has
// a parameter at the leftmost position where they differ.
func (rr refRoute) beats(o refRoute) bool {
	for i := range rr.param {
		if rr.param[i] != o.param[i] {
			return !rr.param[i]
		}
	}
	return false
}

var methodBits = map[string]route.Methods{"GET": route.GET, "HEAD": route.GET, "POST": route.POST, "PUT": route.PUT, "PATCH": route.PATCH, "DELETE": route.DELETE}

// parseRoutes reads fuzzed "METHOD /path" lines into at most 64 routes; a
// line with no method is a GET.
func parseRoutes(text string) []*decoy.Route {
	var rs []*decoy.Route
	for i, line := range strings.Split(text, "\n") {
		if i == 64 {
			break
		}
		method, path := "GET", line
		if m, p, ok := strings.Cut(line, " "); ok && !strings.HasPrefix(line, "/") {
			method, path = m, p
		}
		rs = append(rs, &decoy.Route{ID: line, Method: method, Path: path})
	}
	return rs
}

var seedRoutes = strings.Join([]string{
	"/", "/users", "POST /users", "/users/me", "/users/{id}", "PUT /users/{id}", "DELETE /users/{id}",
	"/users/{uid}/posts", "/a/{x}/c", "/{y}/b/c", "/b/lit/end", "/b/{p}/other", "/caf\u00e9/{n}", "/100%",
}, "\n")

// FuzzMatch compiles fuzzed routes and matches a fuzzed request against
// them, checking the table against a brute-force reference: every route
// tried, the winner chosen by the precedence rule. It checks too that
// parsing accepts exactly what the reference accepts, that a match's
// parameters put back into its template give the decoded path, and that
// the path Expand makes of them matches the same route again.
func FuzzMatch(f *testing.F) {
	for _, c := range []struct{ method, path string }{
		{"GET", "/users/me"}, {"DELETE", "/users/me"}, {"GET", "/users/a%2Fb/posts"}, {"HEAD", "/a/b/c"},
		{"GET", "/b/lit/other"}, {"POST", "/users/1"}, {"GET", "/caf%C3%A9/%2E%2E/"}, {"GET", "/100%25"},
		{"OPTIONS", ""}, {"GET", "//"}, {"GET", "/users/%zz"},
	} {
		f.Add(seedRoutes, c.method, c.path)
	}
	f.Fuzz(func(t *testing.T, text, method, path string) {
		rs := parseRoutes(text)
		table, _ := route.Compile(rs)

		// The reference table: the routes that parse, the first of each
		// method and shape.
		var ref []refRoute
		seen := map[string]bool{}
		for _, r := range rs {
			tmpl, err := route.Parse(r.Path)
			segs, param, ok := refTemplate(r.Path)
			if (err == nil) != ok {
				t.Fatalf("Parse(%q): error %v, reference says valid=%v", r.Path, err, ok)
			}
			if err != nil {
				var de *decoy.Error
				if !errors.As(err, &de) || de.Code != decoy.EINVALID || !strings.HasPrefix(de.Message, "Invalid path: ") {
					t.Fatalf("Parse(%q): error %v is not an EINVALID Invalid path", r.Path, err)
				}
				continue
			}
			if tmpl.Item() != (len(param) > 0 && param[len(param)-1]) {
				t.Fatalf("Parse(%q).Item() = %v", r.Path, tmpl.Item())
			}
			if methodBits[r.Method] == 0 || r.Method == "HEAD" || seen[r.Shape()] {
				continue
			}
			seen[r.Shape()] = true
			ref = append(ref, refRoute{r, segs, param})
		}
		if table.Len() != len(ref) {
			t.Fatalf("table of %d routes, reference %d", table.Len(), len(ref))
		}

		m := table.Match(method, path)
		segs, ok := refSplit(path)
		var want *refRoute
		var allowed route.Methods
		for i, rr := range ref {
			if !ok || !rr.matches(segs) {
				continue
			}
			allowed |= methodBits[rr.r.Method]
			if methodBits[rr.r.Method] == methodBits[method] && (want == nil || rr.beats(*want)) {
				want = &ref[i]
			}
		}
		if got := table.Allowed(path); got != allowed {
			t.Fatalf("Allowed(%q) = %q, reference %q", path, got, allowed)
		}
		if want == nil {
			if m.Route != nil {
				t.Fatalf("%s %q matched %q, reference none", method, path, m.Route.ID)
			}
			if m.Allowed != allowed {
				t.Fatalf("%s %q: Allowed %q, reference %q", method, path, m.Allowed, allowed)
			}
			return
		}
		if m.Route != want.r {
			got := "none"
			if m.Route != nil {
				got = m.Route.ID
			}
			t.Fatalf("%s %q matched %q, reference %q", method, path, got, want.r.ID)
		}

		// The parameters put back into the template give the decoded path.
		var values []string
		rebuilt := slices.Clone(want.segs)
		k := 0
		for i, isParam := range want.param {
			if !isParam {
				continue
			}
			p := m.Params[k]
			if p.Name != want.segs[i] {
				t.Fatalf("parameter %d named %q, want %q", k, p.Name, want.segs[i])
			}
			rebuilt[i] = p.Value
			values = append(values, p.Value)
			k++
		}
		if k != len(m.Params) {
			t.Fatalf("%d parameters, template has %d", len(m.Params), k)
		}
		if got, want := "/"+strings.Join(rebuilt, "/"), "/"+strings.Join(segs, "/"); got != want {
			t.Fatalf("parameters put back give %q, decoded path %q", got, want)
		}

		// Expand gives a path that matches the same route, with the same
		// values.
		again := table.Match(method, m.Template.Expand(values))
		if again.Route != m.Route || !slices.Equal(again.Params, m.Params) {
			t.Fatalf("Expand(%q) = %q matched %+v, want %+v", values, m.Template.Expand(values), again, m)
		}
	})
}

// FuzzParse checks the template parser against the reference on any
// input, and that a valid template matches the path it expands to with any
// values.
func FuzzParse(f *testing.F) {
	for _, p := range []string{"/", "/users/{id}", "/u/{a}/p/{b.c}", "/a{b}", "/{1}", "/{a..b}", "/a//b", "/a/", "/%zz", "/..", "/caf\u00e9", "/a?b"} {
		f.Add(p, "v/1%")
	}
	f.Fuzz(func(t *testing.T, path, value string) {
		tmpl, err := route.Parse(path)
		segs, param, ok := refTemplate(path)
		if (err == nil) != ok {
			t.Fatalf("Parse(%q): error %v, reference says valid=%v", path, err, ok)
		}
		if err != nil {
			var de *decoy.Error
			if !errors.As(err, &de) || de.Code != decoy.EINVALID || !strings.HasPrefix(de.Message, "Invalid path: ") {
				t.Fatalf("Parse(%q): error %v is not an EINVALID Invalid path", path, err)
			}
			return
		}
		if tmpl.String() != path {
			t.Fatalf("String() = %q", tmpl.String())
		}
		var names []string
		for i, s := range segs {
			if param[i] {
				names = append(names, s)
			}
		}
		if !slices.Equal(tmpl.Params(), names) {
			t.Fatalf("Params() = %q, reference %q", tmpl.Params(), names)
		}
		if value == "" {
			return // an empty value makes an empty segment
		}
		values := make([]string, len(names))
		for i := range values {
			values[i] = value
		}
		r := &decoy.Route{Method: "GET", Path: path}
		table, err := route.Compile([]*decoy.Route{r})
		if err != nil {
			t.Fatal(err)
		}
		expanded := tmpl.Expand(values)
		m := table.Match("GET", expanded)
		if m.Route != r {
			t.Fatalf("Expand(%q) = %q: no match", values, expanded)
		}
		for _, p := range m.Params {
			if p.Value != value {
				t.Fatalf("Expand(%q) = %q: %s=%q", values, expanded, p.Name, p.Value)
			}
		}
	})
}
