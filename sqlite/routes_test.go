package sqlite_test

import (
	"testing"

	"github.com/decoy-mock/decoy/storetest"
)

func TestRouteStore(t *testing.T) {
	storetest.RunRoutes(t, func(t *testing.T) storetest.RouteBackend {
		db := open(t, t.TempDir())
		t.Cleanup(func() { db.Close() })
		return db
	})
}
