package postgres_test

import (
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
