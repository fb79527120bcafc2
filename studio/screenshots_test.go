package studio_test

import (
	"os"
	"path/filepath"
	"testing"
)

// docScreenshots are the screenshots the docs show (README.md once, now
// docs/studio.md), each a look that e2e/pages.spec.mjs saves: the docs'
// file by the name of the screenshot it is a copy of.
var docScreenshots = map[string]string{
	"studio-mocks-light.png":     "mocks-1280-light.png",
	"studio-data-phone-dark.png": "mock-data-375-dark.png",
}

// updateDocScreenshots checks that the pages journey, whose screenshots
// are in artifacts, saved every look the docs show, and with
// DECOY_UPDATE_SCREENSHOTS=1 copies them over the docs' files, so that
// the docs show the Studio as it is:
//
//	DECOY_TEST_BROWSER=1 DECOY_UPDATE_SCREENSHOTS=1 go test ./studio -run 'TestBrowser/pages'
func updateDocScreenshots(t *testing.T, artifacts string) {
	t.Helper()
	update := os.Getenv("DECOY_UPDATE_SCREENSHOTS") == "1"
	for doc, shot := range docScreenshots {
		png, err := os.ReadFile(filepath.Join(artifacts, shot))
		if err != nil {
			t.Errorf("docs/%s is a copy of the pages journey's %s, which it did not save: %v", doc, shot, err)
			continue
		}
		if !update {
			continue
		}
		if err := os.WriteFile(filepath.Join("..", "docs", doc), png, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("docs/%s updated from %s", doc, shot)
	}
}
