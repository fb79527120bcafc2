package admin_test

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/decoy-mock/decoy"
	"github.com/decoy-mock/decoy/importer"
	"github.com/decoy-mock/decoy/internal/memtest"
	"github.com/decoy-mock/decoy/internal/servertest"
	"github.com/decoy-mock/decoy/server"
)

// heapStore measures the live heap, after a collection, when an import
// reaches the store and as the store loads each of its documents: the
// most the import holds while it writes.
type heapStore struct {
	batchStore
	mu         sync.Mutex
	base, most uint64
	samples    int
}

func (h *heapStore) sample() {
	h.reading()
	h.mu.Lock()
	h.samples++
	h.mu.Unlock()
}

// reading measures the live heap as the import reads its file (called by
// the file's writer before each document), not counted as a sample.
func (h *heapStore) reading() {
	live := memtest.LiveHeap()
	h.mu.Lock()
	h.most = max(h.most, live)
	h.mu.Unlock()
}

func (h *heapStore) WriteImport(ctx context.Context, b decoy.ImportBatch) (*decoy.ImportWritten, error) {
	h.sample()
	if load := b.Load; load != nil {
		b.Load = func(ctx context.Context, i int) (decoy.Data, func(), error) {
			d, release, err := load(ctx, i)
			h.sample()
			return d, release, err
		}
	}
	return h.batchStore.WriteImport(ctx, b)
}

// streamedExport writes, as it is read, an export of n JSON mocks of size
// bytes each (mock i's data starts with i), and a route on each: the
// test holds none of it. each, when not nil, is called before each mock.
func streamedExport(n, size int, each func()) io.Reader {
	pr, pw := io.Pipe()
	go func() {
		ew := importer.NewExportWriter(pw, "big", time.Now())
		for i := range n {
			if each != nil {
				each()
			}
			data := bigDoc(i, size)
			id := fmt.Sprintf("00000000-0000-4000-8000-%012d", i+1)
			if err := ew.Add(importer.ManifestMock{ID: id, Name: fmt.Sprint("m", i), ContentType: "application/json", Status: 200},
				int64(len(data)), strings.NewReader(data)); err != nil {
				pw.CloseWithError(err)
				return
			}
			ew.AddRoute(importer.ManifestRoute{Method: "GET", Path: fmt.Sprint("/m", i), MockID: id, Action: decoy.ActionRead})
		}
		pw.CloseWithError(ew.Close())
	}()
	return pr
}

// streamedDBJSON writes, as it is read, a json-server db.json of n keys
// m0, m1, … whose values are the documents of streamedExport. each, when
// not nil, is called before each key.
func streamedDBJSON(n, size int, each func()) io.Reader {
	pr, pw := io.Pipe()
	go func() {
		_, err := io.WriteString(pw, "{")
		for i := 0; i < n && err == nil; i++ {
			if each != nil {
				each()
			}
			sep := ","
			if i == 0 {
				sep = ""
			}
			_, err = fmt.Fprintf(pw, "%s\n  \"m%d\": %s", sep, i, bigDoc(i, size))
		}
		if err == nil {
			_, err = io.WriteString(pw, "\n}\n")
		}
		pw.CloseWithError(err)
	}()
	return pr
}

// generatedOpenAPI is an OpenAPI description of n operations GET /m0,
// GET /m1, …, whose data is generated from their schema: an array of one
// string, size bytes in all. each is called once, before the file is
// sent: the file is small, its mocks' data is not.
func generatedOpenAPI(n, size int, each func()) io.Reader {
	if each != nil {
		each()
	}
	var b strings.Builder
	fmt.Fprintf(&b, `{"openapi":"3.0.3","info":{"title":"big","version":"1"},"components":{"schemas":{"Big":{"type":"array","minItems":1,"maxItems":1,"items":{"type":"string","minLength":%d,"maxLength":%d}}}},"paths":{`, size-4, size-4)
	for i := range n {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `"/m%d":{"get":{"operationId":"m%d","responses":{"200":{"description":"x","content":{"application/json":{"schema":{"$ref":"#/components/schemas/Big"}}}}}}}`, i, i)
	}
	b.WriteString("}}")
	return strings.NewReader(b.String())
}

// bigDoc is the document of mock i of streamedExport.
func bigDoc(i, size int) string {
	head := fmt.Sprintf(`[%d,"`, i)
	return head + strings.Repeat("x", size-len(head)-2) + `"]`
}

// TestImportStreamsMemory: an export, and a json-server db.json, of a
// project many times larger than --max-data-bytes (and than the four
// times of it an import once held whole) is imported whole, and the
// import's live heap stays within a fixed amount plus the largest
// document, however many documents it writes: measured after a collection
// before each document of the file is sent, as the import reaches the
// store, and as each document is loaded (a count of bytes held, not a
// timing).
func TestImportStreamsMemory(t *testing.T) {
	const (
		maxData = 64 << 10
		size    = 48 << 10 // read into the heap when loaded (below docfile.MinMapSize)
		n       = 200      // 9.4 MiB: 150 times --max-data-bytes
		fixed   = 4 << 20
	)
	for _, tc := range []struct {
		format string
		file   func(n, size int, each func()) io.Reader
		routes int // a mock
	}{
		{importer.FormatDecoy, streamedExport, 1},
		{importer.FormatJSONServer, streamedDBJSON, 6},
		{"", streamedDBJSON, 6}, // guessed from its first MiB
		{importer.FormatOpenAPI, generatedOpenAPI, 1},
	} {
		t.Run(cmp.Or(tc.format, "guessed"), func(t *testing.T) {
			hs := &heapStore{}
			h := servertest.New(t, func(c *server.Config) {
				c.MaxDataBytes = maxData
				c.GenerateTimeout = time.Minute // all of it generated, however slow the machine
				hs.batchStore = c.Store.(batchStore)
				c.Store, c.Routes = hs, hs
			})
			req, _ := http.NewRequest("POST", h.URL+projectPath+"/import?format="+tc.format, tc.file(n, size, hs.reading))
			req.Header.Set("Authorization", "Bearer "+servertest.AdminToken)
			hs.base = memtest.LiveHeap()
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 201 {
				t.Fatalf("import: %d %s", resp.StatusCode, body)
			}
			var a routedImport
			if err := json.Unmarshal(body, &a); err != nil || len(a.Created) != n || len(a.Routes) != n*tc.routes {
				t.Fatalf("import: %d created, %d routes (%v)", len(a.Created), len(a.Routes), err)
			}
			if hs.samples != n+1 {
				t.Errorf("%d samples, want %d: the store did not load the documents one at a time", hs.samples, n+1)
			}
			grew := int64(hs.most) - int64(hs.base)
			t.Logf("an import of %d documents of %d KiB (%.1f MiB): live heap grew by at most %.2f MiB", n, size>>10, float64(n*size)/(1<<20), float64(grew)/(1<<20))
			if grew > fixed+maxData {
				t.Errorf("the import held %d bytes more than before it, past %d (a fixed %d and the largest document)", grew, fixed+maxData, fixed)
			}
			for _, i := range []int{0, n / 2, n - 1} {
				r := h.Get(fmt.Sprintf("/p/default/m%d", i))
				if tc.format == importer.FormatOpenAPI {
					// Generated: a string of exactly the size.
					var v []string
					if r.Status != 200 || json.Unmarshal([]byte(r.Body), &v) != nil || len(v) != 1 || len(v[0]) != size-4 {
						t.Errorf("mock %d after the import: %d, %d bytes", i, r.Status, len(r.Body))
					}
					continue
				}
				if r.Status != 200 || r.Body != bigDoc(i, size) {
					t.Errorf("mock %d after the import: %d, %d bytes", i, r.Status, len(r.Body))
				}
			}
			if bytes.Contains(body, []byte(`"skipped":[{`)) {
				t.Errorf("skipped: %s", body)
			}
		})
	}
}

// TestImportStreamsLeavesNoSpool: the files an export's data is spooled to
// are gone once its import ends: a dry run (which stores nothing), a
// refused import, and one stored (whose files the store took or copied).
func TestImportStreamsLeavesNoSpool(t *testing.T) {
	uploads := t.TempDir()
	h := servertest.New(t, func(c *server.Config) { c.UploadDir = uploads })
	spooled := func(what string) {
		t.Helper()
		if left, _ := os.ReadDir(uploads); len(left) != 0 {
			t.Errorf("%d files left in the upload folder after %s", len(left), what)
		}
	}
	send := func(query string) (int, string) {
		req, _ := http.NewRequest("POST", h.URL+projectPath+"/import?format=decoy"+query, streamedExport(5, 70<<10, nil))
		req.Header.Set("Authorization", "Bearer "+servertest.AdminToken)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if status, body := send("&dry_run=true"); status != 200 || strings.Count(body, `"size":71680`) != 5 {
		t.Errorf("dry run: %d %s", status, body)
	}
	spooled("a dry run")
	if n := mockCount(h); n != 0 {
		t.Errorf("a dry run stored %d mocks", n)
	}
	if status, body := send(""); status != 201 {
		t.Errorf("import: %d %s", status, body)
	}
	spooled("an import")
	if status, body := send(""); status != 409 {
		t.Errorf("import again, every id taken: %d %s", status, body)
	}
	spooled("a refused import")
	if n := mockCount(h); n != 5 {
		t.Errorf("%d mocks after the imports, want 5", n)
	}
	// The same of a db.json and of an OpenAPI description, whose mocks'
	// data is spooled too.
	for _, tc := range []struct {
		format string
		file   func() io.Reader
		status int
	}{
		{"json-server", func() io.Reader { return streamedDBJSON(5, 70<<10, nil) }, 201},
		{"json-server", func() io.Reader { return io.LimitReader(streamedDBJSON(5, 70<<10, nil), 200<<10) }, 400},
		{"openapi", func() io.Reader { return generatedOpenAPI(5, 70<<10, nil) }, 201},
		{"openapi", func() io.Reader { return strings.NewReader(`{"openapi":"3.0.3","paths":{"/a":`) }, 400},
	} {
		for _, query := range []string{"&dry_run=true", ""} {
			req, _ := http.NewRequest("POST", h.URL+projectPath+"/import?format="+tc.format+query, tc.file())
			req.Header.Set("Authorization", "Bearer "+servertest.AdminToken)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if want := map[bool]int{true: 200, false: tc.status}[query != "" && tc.status == 201]; resp.StatusCode != want {
				t.Errorf("%s%s: %d %.200s, want %d", tc.format, query, resp.StatusCode, b, want)
			}
			spooled(tc.format + query)
		}
	}
}
