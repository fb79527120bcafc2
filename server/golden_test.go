package server_test

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/decoy-mock/decoy/client"
	"github.com/decoy-mock/decoy/internal/servertest"
	"github.com/decoy-mock/decoy/server"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// TestGoldenBodies runs realistic queries over the bundled examples and
// compares each answer with its golden file, byte for byte. After a change
// that is meant to alter answers, run go test ./server -run Golden -update
// and review the diff.
func TestGoldenBodies(t *testing.T) {
	h := servertest.New(t, func(c *server.Config) { c.DefaultRateLimit = 0 })
	ids := map[string]string{}
	for _, name := range []string{"users", "products", "orders"} {
		data, err := os.ReadFile(filepath.Join("..", "examples", name+".json"))
		if err != nil {
			t.Fatal(err)
		}
		ids[name] = h.Create(string(data), client.CreateOptions{Name: name}).ID
	}
	for _, tc := range []struct{ name, mock, query string }{
		{"users-paris-by-age-desc", "users", "filters=address.city%3DParis&order_by=age&order_direction=desc&limit=3"},
		{"users-active-admins-page-2", "users", "filters=status%5B%24eqi%5D%3DACTIVE%26role%3Dadmin&order_by=createdAt&offset=2&limit=2"},
		{"users-vip-not-in-france", "users", "filters=tags%3Dvip%26address.country%5B%24ne%5D%3DFR&limit=2"},
		{"users-never-logged-in-oldest", "users", "filters=lastLogin%3Dnull&order_by=createdAt&limit=2"},
		{"products-red-variant-cheapest", "products", "filters=variants.color%3Dred&order_by=price&limit=2"},
		{"products-first-variant-size-m", "products", "filters=variants.0.size%3DM&order_by=rating&order_direction=desc&limit=2"},
		{"orders-latest-delivered", "orders", "filters=status%3Ddelivered&order_by=createdAt&order_direction=desc&limit=2"},
		{"orders-with-coupon-by-total", "orders", "filters=coupon%5B%24ne%5D%3Dnull&order_by=total&order_direction=desc&limit=2"},
		{"orders-shipped-to-lyon", "orders", "filters=shipping.address.city%5B%24eqi%5D%3Dlyon%26paid%3Dtrue&order_by=id&limit=2"},
		{"error-unsupported-operator", "orders", "filters=total%5B%24gte%5D%3D100"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := h.Get("/mock/" + ids[tc.mock] + "?" + tc.query)
			path := filepath.Join("testdata", "golden", tc.name+".json")
			if *update {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(r.Body), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if r.Body != string(want) {
				t.Errorf("answer differs from %s:\n%s", path, r.Body)
			}
		})
	}
}
