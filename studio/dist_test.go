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
