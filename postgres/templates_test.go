package postgres_test

import (
	"testing"

	"github.com/decoy-mock/decoy/storetest"
)

func TestTemplateStore(t *testing.T) {
	baseURL(t)
	storetest.RunTemplates(t, func(t *testing.T) storetest.TemplateBackend {
		_, u := newSchema(t)
		return open(t, u)
	})
}
