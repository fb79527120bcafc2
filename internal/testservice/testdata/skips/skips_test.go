// Package skips is run by testservice's tests: a package whose one test
// skips through testservice.Skip unless WIDGET=1.
package skips

import (
	"os"
	"testing"
	"time"

	"github.com/decoy-mock/decoy/internal/testservice"
)

func TestMain(m *testing.M) { os.Exit(testservice.Main(m)) }

func TestWidget(t *testing.T) {
	if os.Getenv("WIDGET") != "1" {
		testservice.Skip(t, "widget", "set WIDGET=1")
	}
}

// TestLongRun, with LONG_RUN=1, ages the file Skip wrote to keep the run
// out of go test's cache, as a run that goes on long after its skip does.
func TestLongRun(t *testing.T) {
	if os.Getenv("LONG_RUN") == "1" {
		old := time.Now().Add(-time.Hour)
		os.Chtimes(".decoy-test-skipped", old, old)
	}
}
