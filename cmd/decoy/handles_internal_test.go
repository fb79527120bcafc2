package main

import (
	"net/url"
	"strings"
	"testing"
)

// pick finds the one thing a name stands for: an exact name first, else
// one in another case; none, or several, is an error that says which.
func TestPick(t *testing.T) {
	all := []named{
		{name: "api", id: "1", where: "workspace acme"},
		{name: "api", id: "2", where: "workspace globex"},
		{name: "Web", id: "3"},
		{name: "web", id: "4"},
		{name: "Shop", id: "5"},
	}
	for _, tc := range []struct {
		handle, id string
		err        []string
	}{
		{"Web", "3", nil},
		{"web", "4", nil},
		{"shop", "5", nil},
		{"api", "", []string{`2 projects are named "api"`, "  api  1  (workspace acme)", "  api  2  (workspace globex)"}},
		{"WEB", "", []string{`2 projects are named "WEB"`, "  Web  3", "  web  4"}},
		{"nope", "", []string{`no project named "nope"`}},
	} {
		id, err := pick("project", tc.handle, all)
		if tc.err == nil {
			if err != nil || id != tc.id {
				t.Errorf("pick %q = %q, %v; want %q", tc.handle, id, err, tc.id)
			}
			continue
		}
		for _, s := range tc.err {
			if err == nil || !strings.Contains(err.Error(), s) {
				t.Errorf("pick %q: error %v, want %q in it", tc.handle, err, s)
			}
		}
	}
}

// A reference holds any name, braces, colons and slashes included, and
// gives it back whole; an id is sent as it is.
func TestReferences(t *testing.T) {
	for _, tc := range []struct{ kind, handle, scope string }{
		{"ws", "acme", ""},
		{"project", "a:b{c}/d e", "ws:{x}"},
		{"mock", "users", "acme/api"},
	} {
		r := ref(tc.kind, tc.handle, tc.scope)
		path := "workspaces/" + r + "/members"
		m := reference.FindStringSubmatch(path)
		if m == nil || m[0] != r || m[1] != tc.kind {
			t.Fatalf("%q: no reference found in %q", tc.handle, path)
		}
		handle, _ := url.QueryUnescape(m[2])
		scope, _ := url.QueryUnescape(m[3])
		if handle != tc.handle || scope != tc.scope {
			t.Errorf("%q %q came back as %q %q", tc.handle, tc.scope, handle, scope)
		}
	}
	if ref("ws", "", "") != "" {
		t.Error("an empty handle made a reference")
	}
	for _, s := range []string{"0b9d7c8e-1d2f-4a3b-9c8d-7e6f5a4b3c2d", "0B9D7C8E-1D2F-4A3B-9C8D-7E6F5A4B3C2D"} {
		if !isID(s) {
			t.Errorf("%s is not taken for an id", s)
		}
	}
	for _, s := range []string{"users", "0b9d7c8e", "0b9d7c8e-1d2f-4a3b-9c8d-7e6f5a4b3c2dx"} {
		if isID(s) {
			t.Errorf("%s is taken for an id", s)
		}
	}
}
