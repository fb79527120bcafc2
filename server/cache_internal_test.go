package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/decoy-mock/decoy"
	"github.com/decoy-mock/decoy/docfile"
	"github.com/decoy-mock/decoy/inmem"
	"github.com/decoy-mock/decoy/jsondoc"
	"github.com/decoy-mock/decoy/secret"
	"github.com/decoy-mock/decoy/sqlite"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// users returns a JSON array of n records, each tagged with tag.
func users(tag string, n int) []byte {
	var b bytes.Buffer
	b.WriteByte('[')
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"id":%d,"tag":%q,"age":%d,"name":"user %d of %s"}`, i, tag, (i*37)%90, i, tag)
	}
	b.WriteByte(']')
	return b.Bytes()
}

// boundedServer returns a server on a new SQLite store holding docs under
// their ids, with a cache bound too large to drop anything (tests lower it).
func boundedServer(t *testing.T, docs map[string][]byte) *Server {
	t.Helper()
	ctx := context.Background()
	store, err := sqlite.Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	for id, doc := range docs {
		if _, err := store.CreateMock(ctx, &decoy.Mock{ID: id, ContentType: "application/json", Status: 200, ETag: jsondoc.ETag(doc)}, decoy.Data{Bytes: doc}); err != nil {
			t.Fatal(err)
		}
	}
	return New(Config{Store: store, Quota: store, QuotaInMemory: true, Limiter: inmem.NewLimiter(), AuthFailures: inmem.NewLimiter(),
		MaxDataBytes: 1 << 20, MaxCacheBytes: 1 << 40, Registry: prometheus.NewRegistry()})
}

// With --max-cache-bytes, the mocks least recently read leave memory when
// another comes in or a document grows past the bound; a dropped mock is
// loaded again, unchanged, on its next read; one larger than the bound is
// still served, and not kept.
func TestCacheBound(t *testing.T) {
	idOf := func(tag string) string {
		return "00000000-0000-4000-8000-00000000000" + map[string]string{"a": "1", "b": "2", "c": "3"}[tag]
	}
	docs := map[string][]byte{}
	stored := map[string][]byte{}
	for _, tag := range []string{"a", "b", "c"} {
		docs[tag] = users(tag, 300)
		stored[idOf(tag)] = docs[tag]
	}
	s := boundedServer(t, stored)
	get := func(tag, query string) *httptest.ResponseRecorder {
		t.Helper()
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/mock/"+idOf(tag)+query, nil))
		if rec.Code != http.StatusOK {
			t.Fatalf("GET %s%s: %d %s", tag, query, rec.Code, rec.Body)
		}
		return rec
	}
	cached := func() string {
		var in []string
		for _, tag := range []string{"a", "b", "c"} {
			if s.cache.Peek(idOf(tag)) != nil {
				in = append(in, tag)
			}
		}
		return strings.Join(in, ",")
	}
	evictions := func() float64 {
		var m dto.Metric
		if err := s.metrics.cacheEvictions.Write(&m); err != nil {
			t.Fatal(err)
		}
		return m.GetCounter().GetValue()
	}

	get("a", "")
	get("b", "")
	fa, fb := s.cache.Peek(idOf("a")).Footprint(), s.cache.Peek(idOf("b")).Footprint()
	if fa < int64(len(docs["a"])) || fb < int64(len(docs["b"])) {
		t.Fatalf("footprints %d and %d, less than the documents (%d, %d)", fa, fb, len(docs["a"]), len(docs["b"]))
	}
	// Room for two of the three: c coming in drops a, read least recently.
	s.cache.SetMaxBytes(fa + fb + fb/2)
	get("c", "")
	if got := cached(); got != "b,c" {
		t.Errorf("cached after reading a, b, c within two: %s, want b,c", got)
	}
	if evictions() != 1 {
		t.Errorf("decoy_cache_evictions_total = %v, want 1", evictions())
	}

	// c grows (a column and a sort order over "age"), past the bound, with
	// b and c both read since c came in: the next read of c drops b.
	get("b", "")
	get("c", "")
	s.cache.SetMaxBytes(s.cache.Footprint() + 16)
	before := s.cache.Peek(idOf("c")).Footprint()
	get("c", "?order_by=age&limit=5")
	if after := s.cache.Peek(idOf("c")).Footprint(); after <= before+16 {
		t.Fatalf("c's footprint went from %d to %d with a sort order: not counted", before, after)
	}
	get("c", "")
	if got := cached(); got != "c" {
		t.Errorf("cached after c grew: %s, want c", got)
	}

	// a, dropped, is read again whole.
	if rec := get("a", ""); !bytes.Equal(rec.Body.Bytes(), docs["a"]) {
		t.Errorf("a read again after it was dropped: %d bytes, want %d", rec.Body.Len(), len(docs["a"]))
	}

	// A bound smaller than any document: every mock is still served, and
	// none is kept.
	s.cache.SetMaxBytes(1)
	for _, q := range []string{"?limit=2", "?order_by=age&limit=2", "?filters=age%3D3", ""} {
		if rec := get("b", q); !strings.Contains(rec.Body.String(), `"tag":"b"`) {
			t.Errorf("b%s over the bound answered %.100s", q, rec.Body)
		}
	}
	if got := cached(); got != "" {
		t.Errorf("cached with a bound of 1 byte: %s, want none", got)
	}
	if fp := s.cache.Footprint(); fp != 0 {
		t.Errorf("cache footprint %d with a bound of 1 byte", fp)
	}
}

// A gzipped copy made for a client counts as growth too.
func TestCacheBoundCountsGzip(t *testing.T) {
	ids := []string{"00000000-0000-4000-8000-000000000001", "00000000-0000-4000-8000-000000000002"}
	s := boundedServer(t, map[string][]byte{ids[0]: users("0", 300), ids[1]: users("1", 300)})
	get := func(id string, header ...string) {
		t.Helper()
		r := httptest.NewRequest(http.MethodGet, "/mock/"+id, nil)
		if len(header) == 2 {
			r.Header.Set(header[0], header[1])
		}
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, r)
		if rec.Code != http.StatusOK {
			t.Fatalf("GET %s: %d", id, rec.Code)
		}
	}
	get(ids[0])
	get(ids[1])
	s.cache.SetMaxBytes(s.cache.Footprint() + 64)
	before := s.cache.Peek(ids[1]).Footprint()
	get(ids[1], "Accept-Encoding", "gzip")
	if n := s.cache.Peek(ids[1]).Footprint() - before; n <= 64 {
		t.Fatalf("gzipped copy of %d bytes", n)
	}
	get(ids[1])
	if s.cache.Peek(ids[0]) != nil || s.cache.Peek(ids[1]) == nil {
		t.Errorf("after b's gzipped copy passed the bound: a cached %v, b cached %v, want only b",
			s.cache.Peek(ids[0]) != nil, s.cache.Peek(ids[1]) != nil)
	}
}

// A deleted mock's document leaves at once: its file is removed, and the
// cache's mapping of it goes with the delete (no read holds it), so that
// nothing of it is left open or mapped and its space is free. So does a
// document replaced by new data.
func TestDeleteFreesDocument(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc/self")
	}
	ctx := context.Background()
	dir := t.TempDir()
	store, err := sqlite.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	uploads := filepath.Join(dir, "tmp")
	if err := os.Mkdir(uploads, 0o700); err != nil {
		t.Fatal(err)
	}
	const token = "admin-token"
	s := New(Config{Store: store, Quota: store, QuotaInMemory: true, Limiter: inmem.NewLimiter(), AuthFailures: inmem.NewLimiter(),
		AdminTokenHash: secret.Hash(token), MaxDataBytes: 1 << 20, MaxCacheBytes: 1 << 30, MaxOpenDocuments: 8,
		UploadDir: uploads, Registry: prometheus.NewRegistry()})
	do := func(method, path string, body []byte) *httptest.ResponseRecorder {
		t.Helper()
		r := httptest.NewRequest(method, path, bytes.NewReader(body))
		r.Header.Set("Authorization", "Bearer "+token)
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, r)
		return rec
	}
	docs := filepath.Join(dir, sqlite.DocsDir)
	mapped := func() int {
		b, err := os.ReadFile("/proc/self/maps")
		if err != nil {
			t.Fatal(err)
		}
		return strings.Count(string(b), " "+docs+"/")
	}
	doc := users("big", 2000) // over docfile.MinMapSize: mapped
	if len(doc) < int(docfile.MinMapSize) {
		t.Fatalf("document of %d bytes: too small to be mapped", len(doc))
	}
	rec := do(http.MethodPost, "/admin/v1/mocks", doc)
	if rec.Code != http.StatusCreated {
		t.Fatalf("create: %d %s", rec.Code, rec.Body)
	}
	var m decoy.Mock
	if err := json.Unmarshal(rec.Body.Bytes(), &m); err != nil {
		t.Fatal(err)
	}
	if rec := do(http.MethodGet, "/mock/"+m.ID, nil); rec.Code != http.StatusOK || !bytes.Equal(rec.Body.Bytes(), doc) {
		t.Fatalf("read: %d, %d bytes", rec.Code, rec.Body.Len())
	}
	// Counted in this test's folder: the process-wide count moves with
	// what other tests' documents do meanwhile.
	if n := mapped(); n != 1 {
		t.Fatalf("%d mappings of documents after a read, want 1", n)
	}
	// New data: the old document's mapping goes with its file.
	doc = users("bigger", 2000)
	if rec := do(http.MethodPut, "/admin/v1/mocks/"+m.ID+"/data", doc); rec.Code != http.StatusOK {
		t.Fatalf("replace: %d %s", rec.Code, rec.Body)
	}
	if rec := do(http.MethodGet, "/mock/"+m.ID, nil); rec.Code != http.StatusOK || !bytes.Equal(rec.Body.Bytes(), doc) {
		t.Fatalf("read: %d, %d bytes", rec.Code, rec.Body.Len())
	}
	if n := mapped(); n != 1 {
		t.Fatalf("%d mappings of documents after new data, want 1", n)
	}
	if rec := do(http.MethodDelete, "/admin/v1/mocks/"+m.ID, nil); rec.Code != http.StatusNoContent {
		t.Fatalf("delete: %d %s", rec.Code, rec.Body)
	}
	if n := mapped(); n != 0 {
		t.Errorf("%d mappings of documents right after the delete, want none", n)
	}
	if files, _ := os.ReadDir(docs); len(files) != 0 {
		t.Errorf("%d files left in %s after the delete", len(files), docs)
	}
	if rec := do(http.MethodGet, "/mock/"+m.ID, nil); rec.Code != http.StatusNotFound {
		t.Errorf("read after delete: %d", rec.Code)
	}
}
