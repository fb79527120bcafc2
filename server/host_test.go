package server_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/decoy-mock/decoy/client"
	"github.com/decoy-mock/decoy/internal/servertest"
	"github.com/decoy-mock/decoy/secret"
	"github.com/decoy-mock/decoy/server"
)

// On a loopback address the Studio and the admin API answer loopback names
// and the allowed ones only (DNS rebinding); reads of mocks answer any Host,
// and so does everything on a server reached over a network.
func TestHostCheck(t *testing.T) {
	h := servertest.New(t, func(c *server.Config) {
		c.AllowedHosts = []string{"decoy.internal"}
		c.PublicURL = "https://mocks.example.com"
	})
	m := h.Create(`[1]`, client.CreateOptions{})
	for _, tc := range []struct {
		host, path string
		refused    bool
	}{
		{"127.0.0.1:8080", "/admin/v1/mocks", false},
		{"localhost:8080", "/admin/v1/mocks", false},
		{"LOCALHOST", "/admin/v1/mocks", false},
		{"app.localhost", "/admin/v1/mocks", false},
		{"[::1]:8080", "/admin/v1/mocks", false},
		{"decoy.internal:8080", "/admin/v1/mocks", false},
		{"mocks.example.com", "/admin/v1/mocks", false},
		{"attacker.example:8080", "/admin/v1/mocks", true},
		{"attacker.example", "/", true},
		{"attacker.example", "/studio/session", true},
		{"10.0.0.1", "/admin/v1/mocks", true},
		{"attacker.example", "/mock/" + m.ID, false},
	} {
		t.Run(tc.host+tc.path, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodGet, h.URL+tc.path, nil)
			req.Host = tc.host
			req.Header.Set("Authorization", "Bearer "+servertest.AdminToken)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if refused := resp.StatusCode == http.StatusForbidden; refused != tc.refused {
				t.Errorf("status %d, want refused: %v", resp.StatusCode, tc.refused)
			}
		})
	}

	// Listening on every address: any Host.
	open := server.New(server.Config{Addr: "0.0.0.0:8080", Store: h.Store, Quota: h.Store, AdminTokenHash: secret.Hash(servertest.AdminToken)})
	req := httptest.NewRequest(http.MethodGet, "/admin/v1/mocks", nil)
	req.Host = "attacker.example"
	req.Header.Set("Authorization", "Bearer "+servertest.AdminToken)
	rec := httptest.NewRecorder()
	open.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		t.Errorf("not on loopback: %d %s", rec.Code, rec.Body)
	}
}
