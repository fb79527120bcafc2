package admin_test

import (
	"context"
	"testing"

	"github.com/decoy-mock/decoy"
	"github.com/decoy-mock/decoy/client"
	"github.com/decoy-mock/decoy/internal/servertest"
)

// A mock stored with a rate limit past MaxRateLimit (before the bound)
// exports the bound, as it counts, and its export imports again (it
// exported its own value, which the import refused; found by a review).
func TestExportOldRateLimit(t *testing.T) {
	h := servertest.New(t)
	ctx := context.Background()
	m := h.Create(`[{"id":1}]`, client.CreateOptions{Name: "old"})
	big := int64(5_000_000)
	if _, err := h.Store.UpdateMock(ctx, m.ID, decoy.MockUpdate{RateLimit: &decoy.LimitUpdate{Value: &big}}); err != nil {
		t.Fatal(err)
	}
	r := h.SendFile("GET", projectPath+"/export", nil)
	if r.Status != 200 {
		t.Fatal(r.Status)
	}
	if err := h.Admin.DeleteMock(ctx, m.ID); err != nil {
		t.Fatal(err)
	}
	imp := h.SendFile("POST", projectPath+"/import?format=decoy", []byte(r.Body))
	if imp.Status != 201 {
		t.Errorf("re-import of its own export: %d %s", imp.Status, imp.Body)
	}
}
