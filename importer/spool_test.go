package importer_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/decoy-mock/decoy"
	"github.com/decoy-mock/decoy/importer"
)

// TestExportDirRoundTrip: a folder packed by ExportDir, as the CLI sends
// it, reads back as the folder does, whatever the size of its data (the
// limits are the server's); a data file that leads out of the folder is
// refused.
func TestExportDirRoundTrip(t *testing.T) {
	dir := t.TempDir()
	big := `["` + strings.Repeat("x", 1<<20) + `"]`
	const id1, id2 = "00000000-0000-4000-8000-000000000001", "00000000-0000-4000-8000-000000000002"
	manifest := `{"format":"decoy-export","version":1,"project":"p","slug":"shop","mocks":[
		{"id":"` + id1 + `","name":"big","content_type":"application/json","status":200},
		{"id":"` + id2 + `","name":"csv","content_type":"text/csv","status":201}],
		"routes":[{"method":"GET","path":"/big","mock_id":"` + id1 + `"}]}`
	os.MkdirAll(filepath.Join(dir, importer.DataDir), 0o755)
	os.WriteFile(filepath.Join(dir, importer.ManifestName), []byte(manifest), 0o644)
	os.WriteFile(filepath.Join(dir, importer.DataPath(id1)), []byte(big), 0o644)
	os.WriteFile(filepath.Join(dir, importer.DataPath(id2)), []byte("a,b\n"), 0o644)

	d, err := importer.OpenExportDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if m := d.Result().Mocks; len(m) != 2 || m[0].Size != int64(len(big)) || m[0].Data != nil {
		t.Fatalf("mocks %+v", m)
	}
	if _, err := d.ReadData(d.Result().Mocks[0], 1<<10); decoy.ErrorCode(err) != decoy.ETOOLARGE {
		t.Errorf("a document past the limit: %v", err)
	}
	var b bytes.Buffer
	if err := d.WriteTo(&b, time.Now()); err != nil {
		t.Fatal(err)
	}
	d.Close()
	res, err := importer.ReadExport(&b, importer.Limits{MaxDataBytes: 2 << 20})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Mocks) != 2 || string(res.Mocks[0].Data) != big || string(res.Mocks[1].Data) != "a,b\n" || res.Mocks[1].Status != 201 ||
		res.Slug != "shop" || len(res.Routes) != 1 || res.Routes[0].Path != "/big" {
		t.Errorf("read back: %d mocks, slug %q, routes %+v", len(res.Mocks), res.Slug, res.Routes)
	}

	outside := filepath.Join(t.TempDir(), "secret")
	os.WriteFile(outside, []byte("[]"), 0o644)
	os.Remove(filepath.Join(dir, importer.DataPath(id2)))
	if err := os.Symlink(outside, filepath.Join(dir, importer.DataPath(id2))); err != nil {
		t.Skip(err)
	}
	if _, err := importer.OpenExportDir(dir); err == nil {
		t.Error("a data file that leads out of the folder was taken")
	}
}
