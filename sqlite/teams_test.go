package sqlite_test

import (
	"testing"

	"github.com/decoy-mock/decoy/storetest"
)

func TestTeamStore(t *testing.T) {
	storetest.RunTeams(t, func(t *testing.T) storetest.TeamBackend {
		db := open(t, t.TempDir())
		t.Cleanup(func() { db.Close() })
		return db
	})
}
