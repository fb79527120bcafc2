package admin

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/decoy-mock/decoy"
	"github.com/decoy-mock/decoy/secret"
)

// Without a store that creates mocks in one transaction, an import is
// refused before anything is read or stored: 501, not a half import.
func TestImportNeedsBatches(t *testing.T) {
	a := New(Config{AdminTokenHash: secret.Hash("admin")})
	req := httptest.NewRequest("POST", "/admin/v1/projects/"+decoy.DefaultProjectID+"/import", strings.NewReader(`{"users":[{"id":1}]}`))
	req.Header.Set("Authorization", "Bearer admin")
	err := a.Serve(httptest.NewRecorder(), req)
	if err != errNoImports {
		t.Fatalf("err = %v, want %v", err, errNoImports)
	}
	if errNoImports.Status != http.StatusNotImplemented {
		t.Errorf("status %d", errNoImports.Status)
	}
}
