package postgres_test

import (
	"path/filepath"
	"testing"

	"github.com/decoy-mock/decoy/storetest"
)

func TestStudioStore(t *testing.T) {
	baseURL(t)
	storetest.RunStudio(t, func(t *testing.T) storetest.StudioBackend {
		_, u := newSchema(t)
		return open(t, u)
	})
}

// migrationNames returns the names of the migration files, in the order
// they are applied.
func migrationNames(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("migration", "*.sql"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no migrations: %v", err)
	}
	var names []string
	for _, f := range files {
		names = append(names, filepath.Base(f))
	}
	return names
}
