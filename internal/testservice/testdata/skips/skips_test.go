// Package skips is run by testservice's tests: a package whose one test
// skips through testservice.Skip unless WIDGET=1.
package skips

import (
	"os"
	"testing"

	"github.com/decoy-mock/decoy/internal/testservice"
)

func TestMain(m *testing.M) { os.Exit(testservice.Main(m)) }

func TestWidget(t *testing.T) {
	if os.Getenv("WIDGET") != "1" {
		testservice.Skip(t, "widget", "set WIDGET=1")
	}
}
