package server_test

import (
	"archive/tar"
	"compress/gzip"
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
	zr, err := gzip.NewReader(strings.NewReader(r.Body))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	tr := tar.NewReader(zr)
	for {
		hd, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(tr)
		files[hd.Name] = string(b)
	}
	for id, want := range map[string]string{written.ID: `[{"id":1},{"id":2,"title":"Live"}]`, untouched.ID: `[{"id":9}]`} {
		if got := files["data/"+id+".json"]; got != want {
			t.Errorf("data/%s.json: %q, want %q", id, got, want)
		}
	}
}
