package main_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestDocsPassthrough runs docs/passthrough.md, "Mock part of an API",
// against a shop backend the test starts on loopback in place of the
// page's http://127.0.0.1:9000. The backend must see only the requests the
// page forwards: none once the project replays, and no Decoy secret.
func TestDocsPassthrough(t *testing.T) {
	var log upstreamLog
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		log.add(r)
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/api/products":
			io.WriteString(w, `[{"id":1,"name":"Lamp","price":25},{"id":2,"name":"Desk","price":120}]`)
		case "/api/products/2":
			io.WriteString(w, `{"id":2,"name":"Desk","price":120}`)
		case "/api/account":
			if r.Header.Get("Authorization") != "Bearer shop-key" {
				w.WriteHeader(http.StatusUnauthorized)
				io.WriteString(w, `{"message":"Sign in"}`)
				return
			}
			io.WriteString(w, `{"name":"Ann"}`)
		default:
			w.WriteHeader(http.StatusNotFound)
			io.WriteString(w, `{"message":"Not found"}`)
		}
	}))
	defer backend.Close()
	runDocWith(t, "docs/passthrough.md", docSetup{
		args:    []string{"--upstream-allow", "127.0.0.0/8"},
		replace: []string{"127.0.0.1:9000", strings.TrimPrefix(backend.URL, "http://")},
	})
	var paths []string
	for _, s := range log.all() {
		paths = append(paths, s.Method+" "+s.Path+"?"+s.Query)
		for name := range s.Header {
			if v := s.Header.Get(name); strings.Contains(v, "dcy_") {
				t.Errorf("the backend saw a Decoy secret: %s: %s", name, v)
			}
		}
	}
	want := "GET /api/products? GET /api/account? GET /api/account? GET /api/products? GET /api/products/2? GET /api/products?page=2"
	if got := strings.Join(paths, " "); got != want {
		t.Errorf("the backend saw:\n%s\nwant:\n%s", got, want)
	}
}
