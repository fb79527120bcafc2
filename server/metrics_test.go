package server_test

import (
	"net/http"
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

// The monitoring routes answer GET and HEAD; any other method is a 405
// naming them.
func TestMonitoringMethods(t *testing.T) {
	h := servertest.New(t)
	for _, path := range []string{"/healthz", "/readyz", "/metrics", "/openapi.json"} {
		for _, tc := range []struct {
			method string
			status int
		}{
			{http.MethodGet, 200},
			{http.MethodHead, 200},
			{http.MethodPost, 405},
			{http.MethodPut, 405},
			{http.MethodDelete, 405},
		} {
			resp := h.Do(tc.method, path)
			if resp.Status != tc.status {
				t.Errorf("%s %s: %d, want %d", tc.method, path, resp.Status, tc.status)
			}
			if tc.status == 405 && (resp.Header.Get("Allow") != "GET, HEAD" || !strings.Contains(resp.Body, "Method not allowed")) {
				t.Errorf("%s %s: Allow %q, body %s", tc.method, path, resp.Header.Get("Allow"), resp.Body)
			}
		}
	}
}
