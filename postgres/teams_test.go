package postgres_test

import (
	"testing"

	"github.com/decoy-mock/decoy/storetest"
)

func TestTeamStore(t *testing.T) {
	baseURL(t)
	storetest.RunTeams(t, func(t *testing.T) storetest.TeamBackend {
		_, u := newSchema(t)
		return open(t, u)
	})
}
