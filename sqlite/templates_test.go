package sqlite_test

import (
	"testing"

	"github.com/decoy-mock/decoy/storetest"
)

func TestTemplateStore(t *testing.T) {
	storetest.RunTemplates(t, func(t *testing.T) storetest.TemplateBackend {
		db := open(t, t.TempDir())
		t.Cleanup(func() { db.Close() })
		return db
	})
}
