package sqlite_test

import (
	"testing"

	"github.com/decoy-mock/decoy/storetest"
)

func TestStudioStore(t *testing.T) {
	storetest.RunStudio(t, func(t *testing.T) storetest.StudioBackend {
		db := open(t, t.TempDir())
		t.Cleanup(func() { db.Close() })
		return db
	})
}
