package importer_test

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/decoy-mock/decoy"
	"github.com/decoy-mock/decoy/importer"
)

// fuzzLimits keep each input's work small.
var fuzzLimits = importer.Limits{MaxDataBytes: 1 << 20, MaxUnpackedBytes: 4 << 20, MaxMocks: 100}

// checkError fails on an error that is not a client's (*decoy.Error):
// every input gets an answer that says what is wrong with it.
func checkError(t *testing.T, err error) {
	if err != nil && decoy.ErrorCode(err) == decoy.EINTERNAL {
		t.Fatalf("internal error: %v", err)
	}
}

func FuzzOpenAPI(f *testing.F) {
	// The third-party descriptions are left out: with them as seeds, the
	// fuzzing engine spends its time in mutating and minimising large
	// inputs (a handful of executions a minute).
	for _, name := range []string{} {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"openapi":"3.1.0","info":{"title":"t","version":"1"},"paths":{"/a":{"get":{"responses":{"200":{"description":"x","content":{"application/json":{"examples":{"a":{"$ref":"#/components/examples/a"}}}}}}}}},"components":{"examples":{"a":{"value":[1]}}}}`))
	f.Add([]byte("openapi: 3.0.0\ninfo: {title: t, version: '1'}\nx: &a [*a]\npaths: {}\n"))
	f.Fuzz(func(t *testing.T, doc []byte) {
		r, err := importer.OpenAPI(doc, importer.Options{Limits: fuzzLimits})
		checkError(t, err)
		if err != nil {
			return
		}
		for _, m := range r.Mocks {
			if !json.Valid(m.Data) || m.Status < 200 || m.Status > 299 {
				t.Fatalf("mock %q: status %d, data %q", m.Name, m.Status, m.Data)
			}
		}
	})
}

func FuzzJSONServer(f *testing.F) {
	f.Add([]byte(`{"posts":[{"id":1,"title":"json-server"}],"profile":{"name":"typicode"}}`))
	f.Add([]byte(`{"a": 1.0 , "b":"\u00e9"}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, doc []byte) {
		r, err := importer.JSONServer(doc, fuzzLimits)
		checkError(t, err)
		if err != nil {
			return
		}
		if !json.Valid(doc) {
			t.Fatalf("invalid JSON accepted: %q", doc)
		}
		for _, m := range r.Mocks {
			if !json.Valid(m.Data) || !bytes.Contains(doc, m.Data) {
				t.Fatalf("mock %q: data %q is not the file's bytes", m.Name, m.Data)
			}
		}
	})
}

func FuzzReadExport(f *testing.F) {
	var b bytes.Buffer
	w := importer.NewExportWriter(&b, "default", time.Unix(0, 0))
	w.Add(importer.ManifestMock{ID: "00000000-0000-4000-8000-000000000001", Name: "a", ContentType: "application/json", Status: 200}, 3, bytes.NewReader([]byte("[1]")))
	w.Close()
	f.Add(b.Bytes())
	f.Add([]byte{0x1f, 0x8b, 0x08, 0x00})
	f.Fuzz(func(t *testing.T, file []byte) {
		r, err := importer.ReadExport(bytes.NewReader(file), fuzzLimits)
		checkError(t, err)
		if err != nil {
			return
		}
		for _, m := range r.Mocks {
			if int64(len(m.Data)) > fuzzLimits.MaxDataBytes {
				t.Fatalf("mock %s: %d bytes, past the limit", m.ID, len(m.Data))
			}
		}
	})
}
