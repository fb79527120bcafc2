package admin

import (
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// Every route of the admin API is described in the OpenAPI document the
// server serves, and the document describes no admin route the API does
// not have: a route added to the table without its description fails here.
func TestRoutesDescribed(t *testing.T) {
	b, err := os.ReadFile("../server/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	placeholder := regexp.MustCompile(`\{[^}]*\}`)
	described := map[string]bool{}
	for path, item := range doc.Paths {
		rest, ok := strings.CutPrefix(path, "/admin/v1/")
		if !ok {
			continue
		}
		for method := range item {
			if slices.Contains([]string{"get", "post", "put", "patch", "delete"}, method) {
				described[strings.ToUpper(method)+" "+placeholder.ReplaceAllString(rest, "{}")] = true
			}
		}
	}
	routes := map[string]bool{}
	for _, rt := range adminRoutes {
		routes[rt.method+" "+placeholder.ReplaceAllString(rt.path, "{}")] = true
	}
	for r := range routes {
		if !described[r] {
			t.Errorf("%s is a route the OpenAPI document does not describe", r)
		}
	}
	for d := range described {
		if !routes[d] {
			t.Errorf("%s is described, but the admin API has no such route", d)
		}
	}
	if len(routes) < 40 {
		t.Errorf("only %d routes: the table was not read", len(routes))
	}
}
