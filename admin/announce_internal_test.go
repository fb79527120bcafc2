package admin

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/decoy-mock/decoy"
	"github.com/decoy-mock/decoy/mockcache"
	"github.com/decoy-mock/decoy/secret"
	"github.com/decoy-mock/decoy/sqlite"
)

// deafBus is an Invalidator whose announcements all fail.
type deafBus struct{}

func (deafBus) Invalidate(context.Context, string) error {
	return decoy.Errorf(decoy.EUNAVAILABLE, "redis down")
}
func (deafBus) Listen(context.Context, decoy.InvalidationHandler) {}

// A change whose announcement fails is made all the same; each failure is
// logged with its mock and counted.
func TestAnnounceFailureLoggedAndCounted(t *testing.T) {
	store, err := sqlite.Open(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	var logs bytes.Buffer
	counted := map[string]int{}
	a := New(Config{
		Store: store, Quota: store, Invalidator: deafBus{},
		CountSharedFailure: func(use string) { counted[use]++ },
		Cache:              mockcache.New(mockcache.Config{Store: store}),
		AdminTokenHash:     secret.Hash("admin"),
		MaxDataBytes:       1 << 20,
		Logger:             slog.New(slog.NewTextHandler(&logs, nil)),
	})
	const id = "00000000-0000-4000-8000-0000000000a1"
	for _, req := range []*http.Request{
		httptest.NewRequest("POST", "/admin/v1/mocks?id="+id, strings.NewReader(`[1]`)),
		httptest.NewRequest("PATCH", "/admin/v1/mocks/"+id, strings.NewReader(`{"name":"n"}`)),
	} {
		req.Header.Set("Authorization", "Bearer admin")
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		if err := a.Serve(rec, req); err != nil || rec.Code >= 300 {
			t.Fatalf("%s: %d %v %s", req.Method, rec.Code, err, rec.Body)
		}
	}
	if counted["invalidation"] != 2 {
		t.Errorf("counted %v, want 2 invalidation failures", counted)
	}
	if n := strings.Count(logs.String(), "could not announce a change to other replicas"); n != 2 || !strings.Contains(logs.String(), "mock="+id) {
		t.Errorf("%d warnings, want 2 naming the mock:\n%s", n, logs.String())
	}
}
