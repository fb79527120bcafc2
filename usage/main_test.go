package usage_test

import (
	"os"
	"testing"

	"github.com/decoy-mock/decoy/internal/testservice"
)

// This package is the last that go test ./... runs (the last of go list
// ./...): it ends the run with the one line of what the whole run
// skipped, and how to enable each group (testservice.MainLast). A package
// whose path sorts after it takes these two over.
func TestMain(m *testing.M) { os.Exit(testservice.MainLast(m)) }

// TestNotCached keeps this package's result out of go test's cache, so
// that the line is printed by every go test ./....
func TestNotCached(t *testing.T) { testservice.NotCached(t) }
