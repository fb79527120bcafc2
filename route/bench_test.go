package route_test

import (
	"fmt"
	"testing"

	"github.com/decoy-mock/decoy"
	"github.com/decoy-mock/decoy/route"
)

// benchRoutes makes n routes (n a multiple of 5) of an API of n/5
// resources, each with a collection, an item and a nested collection.
func benchRoutes(n int) []*decoy.Route {
	rs := make([]*decoy.Route, 0, n)
	for k := range n / 5 {
		base := fmt.Sprintf("/api/v1/res%d", k)
		for _, mp := range [][2]string{
			{"GET", base}, {"POST", base}, {"GET", base + "/{id}"}, {"PATCH", base + "/{id}"}, {"GET", base + "/{id}/comments"},
		} {
			rs = append(rs, &decoy.Route{ID: mp[0] + " " + mp[1], Method: mp[0], Path: mp[1]})
		}
	}
	return rs
}

// BenchmarkMatch compares matching in projects of 10, 1,000 and 10,000
// routes (§11.3: the cost is the same). Between 10 and the others, one
// node's literal children pass from a slice to a map (a hash instead of a
// scan of at most 8 strings); past that, nothing changes with the number.
func BenchmarkMatch(b *testing.B) {
	requests := []struct{ name, method, path string }{
		{"collection", "GET", "/api/v1/res1"},
		{"item", "GET", "/api/v1/res1/42"},
		{"nested", "GET", "/api/v1/res1/42/comments/"},
		{"escaped", "GET", "/api/v1/res1/a%20b"},
		{"405", "DELETE", "/api/v1/res1"},
		{"404", "GET", "/api/v1/nope/1"},
	}
	for _, n := range []int{10, 1000, 10000} {
		table, err := route.Compile(benchRoutes(n))
		if err != nil {
			b.Fatal(err)
		}
		for _, r := range requests {
			b.Run(fmt.Sprintf("routes=%d/%s", n, r.name), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					table.Match(r.method, r.path)
				}
			})
		}
	}
}

// BenchmarkCompile is the cost of a change to a project of 10,000 routes.
func BenchmarkCompile(b *testing.B) {
	rs := benchRoutes(10000)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := route.Compile(rs); err != nil {
			b.Fatal(err)
		}
	}
}
