package studio_test

import (
	"os/exec"
	"testing"
)

// The committed bundle (dist/) is what the sources (web/) build to: rebuilt
// into a temporary folder and compared byte for byte. It needs Node and
// web/node_modules.
func TestDistMatchesSources(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		need(t, bundleTests, "node is not installed: apt-get install nodejs")
	}
	npmInstalled(t, bundleTests, "web", "esbuild")
	cmd := exec.Command(node, "build.mjs", "--check")
	cmd.Dir = "web"
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
}

// TestStudioUnits runs the unit tests of the Studio's scripts
// (web/test/*.test.mjs, with node's test runner): what a browser journey
// cannot time, such as a refusal that comes back after another.
func TestStudioUnits(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		need(t, bundleTests, "node is not installed: apt-get install nodejs")
	}
	cmd := exec.Command(node, "--test", "test/")
	cmd.Dir = "web"
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
}
