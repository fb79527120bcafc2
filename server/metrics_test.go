package server_test

import (
	"strings"
	"testing"

	"github.com/decoy-mock/decoy/client"
	"github.com/decoy-mock/decoy/internal/servertest"
)

func TestMetrics(t *testing.T) {
	h := servertest.New(t)
	m := h.Create(`[]`, client.CreateOptions{RateLimit: servertest.Ptr(int64(1))})
	h.Get("/mock/" + m.ID)
	h.Get("/mock/" + m.ID)
	r := h.Get("/metrics")
	for _, want := range []string{
		`decoy_http_requests_total{code="200",route="mock"} 1`,
		`decoy_http_requests_total{code="429",route="mock"} 1`,
		`decoy_http_requests_total{code="201",route="admin"} 1`,
		`decoy_refusals_total{reason="rate_limit"} 1`,
		`decoy_refusals_total{reason="quota"} 0`,
		`decoy_http_request_duration_seconds_bucket{route="mock",le="+Inf"} 2`,
	} {
		if !strings.Contains(r.Body, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
}
