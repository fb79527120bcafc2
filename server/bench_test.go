package server_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/decoy-mock/decoy/client"
	"github.com/decoy-mock/decoy/internal/dataset"
	"github.com/decoy-mock/decoy/server"
)

// BenchmarkReadPath measures GET /mock/{id} through the whole handler
// (middleware, cache, limits, quota count in SQLite, query, answer) on a
// 10,000-record document, with the rate limit and quota set to unlimited.
func BenchmarkReadPath(b *testing.B) {
	h := newHarness(b, func(c *server.Config) {
		c.DefaultRateLimit, c.DefaultMonthlyQuota = 0, 0
		c.MaxDataBytes = 64 << 20
	})
	m, err := h.admin.CreateMock(context.Background(), bytes.NewReader(dataset.Users(10000)), client.CreateOptions{})
	if err != nil {
		b.Fatal(err)
	}
	tiny, err := h.admin.CreateMock(context.Background(), bytes.NewReader([]byte(`[{"a":1},{"a":2}]`)), client.CreateOptions{})
	if err != nil {
		b.Fatal(err)
	}
	srv := h.srv
	for _, bq := range []struct{ name, raw string }{
		{"tiny-document", "tiny"},
		{"whole-document", ""},
		{"filter+order+limit", "filters=status%5B%24eqi%5D%3Dactive&order_by=age&order_direction=desc&limit=10"},
		{"nested-equality", "filters=address.city%3DParis"},
		{"order+limit", "order_by=createdAt&limit=100"},
	} {
		req := httptest.NewRequest(http.MethodGet, "/mock/"+m.ID+"?"+bq.raw, nil)
		if bq.raw == "tiny" {
			req = httptest.NewRequest(http.MethodGet, "/mock/"+tiny.ID, nil)
		}
		srv.ServeHTTP(httptest.NewRecorder(), req) // load and build columns
		b.Run(bq.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				rec := httptest.NewRecorder()
				srv.ServeHTTP(rec, req)
				if rec.Code != 200 {
					b.Fatalf("status %d: %s", rec.Code, rec.Body)
				}
			}
		})
	}
}
