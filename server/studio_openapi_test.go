package server_test

import (
	"testing"

	"github.com/decoy-mock/decoy/client"
	"github.com/decoy-mock/decoy/internal/servertest"
)

// The usage history answers as the OpenAPI document describes it.
func TestOpenAPIUsageHistory(t *testing.T) {
	router := servertest.OpenAPIRouter(t)
	h := servertest.NewStudio(t)
	m := h.Create(`[1]`, client.CreateOptions{})
	h.Get("/mock/" + m.ID)
	for _, tc := range []struct {
		path, auth string
		status     int
	}{
		{"/admin/v1/mocks/" + m.ID + "/usage/history", "Bearer " + servertest.AdminToken, 200},
		{"/admin/v1/mocks/" + m.ID + "/usage/history", "Bearer wrong", 401},
		{"/admin/v1/mocks/0b9d7c8e-1d2f-4a3b-9c8d-7e6f5a4b3c2d/usage/history", "Bearer " + servertest.AdminToken, 404},
	} {
		h.CheckDocumented(t, router, "GET", tc.path, nil, tc.status, "Authorization", tc.auth)
	}
}
