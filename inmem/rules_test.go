package inmem_test

import (
	"testing"

	"github.com/decoy-mock/decoy"
	"github.com/decoy-mock/decoy/inmem"
	"github.com/decoy-mock/decoy/storetest"
	"github.com/google/uuid"
)

func TestRuleCounter(t *testing.T) {
	storetest.RunRuleCounter(t, func(t *testing.T) (decoy.RuleCounter, func(t *testing.T) string) {
		return inmem.NewRuleCounter(), func(*testing.T) string { return uuid.NewString() }
	})
}
