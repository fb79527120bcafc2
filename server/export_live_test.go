package server_test

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/decoy-mock/decoy"
	"github.com/decoy-mock/decoy/client"
	"github.com/decoy-mock/decoy/internal/servertest"
)

// An export holds a mock's live data, as every read sees it after writes
// through its routes (§12.2), not the version they left behind: an
// export then an import kept none of the writes (found by a black-box
// review). A mock never written exports its version as it is.
func TestExportHoldsLiveData(t *testing.T) {
	h := servertest.New(t, withTeams)
	written := h.Create(`[{"id":1}]`, client.CreateOptions{Name: "books"})
	untouched := h.Create(`[{"id":9}]`, client.CreateOptions{Name: "authors"})
	addRoute(t, h, "POST", "/books", written.ID)
	if r := send(t, h, "POST", "/p/default/books", `{"title":"Live"}`); r.Status != 201 {
		t.Fatalf("write: %d %s", r.Status, r.Body)
	}
	r := h.Send("GET", "/admin/v1/projects/"+decoy.DefaultProjectID+"/export", "", "")
	if r.Status != 200 {
		t.Fatalf("export: %d %s", r.Status, r.Body)
	}
	files := untar(t, r.Body)
	for id, want := range map[string]string{written.ID: `[{"id":1},{"id":2,"title":"Live"}]`, untouched.ID: `[{"id":9}]`} {
		if got := files["data/"+id+".json"]; got != want {
			t.Errorf("data/%s.json: %q, want %q", id, got, want)
		}
	}
}

// An export of written live data takes the mock's settings from the store,
// read with its data, not from the cache's entry, which another replica's
// change of settings leaves a second old on a shared store (found by a
// review: the manifest took the cache's).
func TestExportLiveTakesStoredSettings(t *testing.T) {
	h := servertest.New(t, withTeams)
	m := h.Create(`[{"id":1}]`, client.CreateOptions{Name: "books"})
	addRoute(t, h, "POST", "/books", m.ID)
	if r := send(t, h, "POST", "/p/default/books", `{"title":"Live"}`); r.Status != 201 {
		t.Fatalf("write: %d %s", r.Status, r.Body)
	}
	// Another replica renames it: this one's cache is not told.
	name := "renamed"
	if _, err := h.Store.UpdateMock(context.Background(), m.ID, decoy.MockUpdate{Name: &name}); err != nil {
		t.Fatal(err)
	}
	r := h.Send("GET", "/admin/v1/projects/"+decoy.DefaultProjectID+"/export", "", "")
	if r.Status != 200 {
		t.Fatalf("export: %d %s", r.Status, r.Body)
	}
	files := untar(t, r.Body)
	if got := files["data/"+m.ID+".json"]; got != `[{"id":1},{"id":2,"title":"Live"}]` {
		t.Errorf("data: %s", got)
	}
	var manifest struct{ Mocks []struct{ Name string } }
	if err := json.Unmarshal([]byte(files["decoy.json"]), &manifest); err != nil || len(manifest.Mocks) != 1 || manifest.Mocks[0].Name != "renamed" {
		t.Errorf("manifest (%v): %s", err, files["decoy.json"])
	}
}

// untar returns the files of a gzipped tar, by name.
func untar(t *testing.T, body string) map[string]string {
	t.Helper()
	zr, err := gzip.NewReader(strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	tr := tar.NewReader(zr)
	for {
		hd, err := tr.Next()
		if err == io.EOF {
			return files
		}
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(tr)
		files[hd.Name] = string(b)
	}
}
