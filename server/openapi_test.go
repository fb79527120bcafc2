package server_test

import (
	"testing"

	"github.com/decoy-mock/decoy/client"
	"github.com/decoy-mock/decoy/internal/servertest"
	"github.com/decoy-mock/decoy/server"
)

func TestOpenAPIDocument(t *testing.T) {
	doc := servertest.LoadOpenAPI(t)
	if doc.OpenAPI != "3.1.0" {
		t.Errorf("openapi = %q, want 3.1.0", doc.OpenAPI)
	}
	if op := doc.Paths.Find("/mock/{mockApiId}").Get; op == nil || op.OperationID != "getMockData" {
		t.Error("getMockData is not GET /mock/{mockApiId}")
	}
	for path, methods := range map[string][]string{
		"/mock/{mockApiId}":               {"GET", "HEAD", "OPTIONS"},
		"/api/{mockApiId}":                {"GET", "HEAD", "OPTIONS"},
		"/admin/v1/mocks":                 {"GET", "POST"},
		"/admin/v1/mocks/{id}":            {"GET", "PATCH", "DELETE"},
		"/admin/v1/mocks/{id}/data":       {"GET", "PUT"},
		"/admin/v1/mocks/{id}/token":      {"POST"},
		"/admin/v1/mocks/{id}/usage":      {"GET"},
		"/admin/v1/mocks/{id}/template":   {"GET", "PUT", "DELETE"},
		"/admin/v1/mocks/{id}/regenerate": {"POST"},
		"/admin/v1/generate":              {"POST"},
		"/admin/v1/generate/functions":    {"GET"},
		"/healthz":                        {"GET"},
		"/readyz":                         {"GET"},
		"/metrics":                        {"GET"},
		"/openapi.json":                   {"GET"},
	} {
		item := doc.Paths.Find(path)
		if item == nil {
			t.Errorf("%s is not described", path)
			continue
		}
		for _, m := range methods {
			if item.GetOperation(m) == nil {
				t.Errorf("%s %s is not described", m, path)
			}
		}
	}
}

// TestOpenAPIMatchesResponses sends real requests and validates the answers
// against the document.
func TestOpenAPIMatchesResponses(t *testing.T) {
	router := servertest.OpenAPIRouter(t)
	h := servertest.New(t)
	m := h.Create(`[{"a":1},{"a":2}]`, client.CreateOptions{Name: "x", RateLimit: servertest.Ptr(int64(2))})
	priv := h.Create(`{"a":1}`, client.CreateOptions{Private: true})
	tm := h.Create(`[]`, client.CreateOptions{})
	auth := "Bearer " + servertest.AdminToken
	for _, tc := range []struct {
		method, path, body string
		header             []string
		status             int
	}{
		{"GET", "/mock/" + m.ID + "?filters=a%3D1&order_by=a&order_direction=desc&limit=1", "", nil, 200},
		{"GET", "/api/" + priv.ID + "?auth_token=" + priv.Token, "", nil, 200},
		{"GET", "/mock/" + m.ID + "?limit=-1", "", nil, 400},
		{"GET", "/mock/" + priv.ID, "", nil, 401},
		{"GET", "/mock/0b9d7c8e-1d2f-4a3b-9c8d-7e6f5a4b3c2d", "", nil, 404},
		{"GET", "/mock/" + m.ID, "", nil, 429},
		{"GET", "/admin/v1/mocks?limit=1", "", []string{"Authorization", auth}, 200},
		{"POST", "/admin/v1/mocks?name=n&private=true", `[1]`, []string{"Authorization", auth, "Content-Type", "application/json"}, 201},
		{"GET", "/admin/v1/mocks/" + m.ID, "", []string{"Authorization", auth}, 200},
		{"PATCH", "/admin/v1/mocks/" + m.ID, `{"rate_limit":null}`, []string{"Authorization", auth, "Content-Type", "application/json"}, 200},
		{"POST", "/admin/v1/mocks/" + priv.ID + "/token", "", []string{"Authorization", auth}, 200},
		{"GET", "/admin/v1/mocks/" + m.ID + "/usage", "", []string{"Authorization", auth}, 200},
		{"GET", "/admin/v1/mocks/" + m.ID, "", []string{"Authorization", "Bearer wrong"}, 401},
		{"POST", "/admin/v1/generate?seed=1", `{"$repeat":2,"$item":"{{ name }}"}`, []string{"Authorization", auth, "Content-Type", "application/json"}, 200},
		{"POST", "/admin/v1/generate", `"{{ nmae }}"`, []string{"Authorization", auth, "Content-Type", "application/json"}, 400},
		{"GET", "/admin/v1/generate/functions", "", []string{"Authorization", auth}, 200},
		{"PUT", "/admin/v1/mocks/" + tm.ID + "/template?mode=always", `{"$repeat":2,"$item":"{{ index }}"}`, []string{"Authorization", auth, "Content-Type", "application/json"}, 200},
		{"GET", "/admin/v1/mocks/" + tm.ID + "/template", "", []string{"Authorization", auth}, 200},
		{"GET", "/mock/" + tm.ID + "?limit=1", "", []string{"Decoy-Seed", "3"}, 200},
		{"POST", "/admin/v1/mocks/" + tm.ID + "/regenerate", "", []string{"Authorization", auth}, 409},
		{"DELETE", "/admin/v1/mocks/" + tm.ID + "/template", "", []string{"Authorization", auth}, 204},
		{"GET", "/readyz", "", nil, 200},
	} {
		t.Run(tc.method+" "+tc.path, func(t *testing.T) {
			h.CheckDocumented(t, router, tc.method, tc.path, []byte(tc.body), tc.status, tc.header...)
		})
	}
}

func TestOpenAPIServed(t *testing.T) {
	h := servertest.New(t)
	r := h.Get("/openapi.json")
	if r.Status != 200 || r.Body != string(server.OpenAPI()) || r.Header.Get("Content-Type") != "application/json" {
		t.Errorf("GET /openapi.json: %d %s", r.Status, r.Header.Get("Content-Type"))
	}
}
