package server

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/decoy-mock/decoy"
	"github.com/decoy-mock/decoy/docfile"
	"github.com/decoy-mock/decoy/jsondoc"
	"github.com/decoy-mock/decoy/mockcache"
	"github.com/decoy-mock/decoy/query"
)

// FuzzQuery runs the whole read of an array over arbitrary JSON and query
// strings, through the same code that writes answers: it never panics, and a
// 200 body is a JSON array whose elements are each the stored text of an
// element of the document, in an order and number the query allows.
func FuzzQuery(f *testing.F) {
	f.Add([]byte(`[{"a":1,"b":{"c":"x"}},{"a":"2"},[3],{"a":[1,2]}]`), "filters=a%3D1&order_by=b.c&limit=5", false)
	f.Add([]byte(`[ {"z": 30.0, "s":"caf\u00e9"} , 1, "x", null ]`), "order_by=z&order_direction=desc&offset=1", true)
	f.Add([]byte(`{"not":"an array"}`), "limit=-1", false)
	f.Add([]byte(`[]`), "filters=a%5B%24gt%5D%3D1", true)
	s := New(Config{})
	f.Fuzz(func(t *testing.T, doc []byte, rawQuery string, acceptGzip bool) {
		e, err := mockcache.NewEntry(&decoy.Mock{ContentType: "application/json", Status: 200, ETag: jsondoc.ETag(doc)}, docfile.FromBytes(doc))
		if err != nil {
			return // not JSON: refused at write time
		}
		var q *query.Query
		if e.IsArray() {
			if q, err = query.Compile(query.ParseParams(rawQuery)); err != nil {
				return // a 400
			}
		}
		req := httptest.NewRequest(http.MethodGet, "/mock/x", nil)
		if acceptGzip {
			req.Header.Set("Accept-Encoding", "gzip")
		}
		rec := httptest.NewRecorder()
		s.write(rec, req, e, e.Answer(q, "", acceptGzip, ""))
		if rec.Code != 200 {
			t.Fatalf("status %d", rec.Code)
		}
		body := rec.Body.Bytes()
		if rec.Header().Get("Content-Encoding") == "gzip" {
			zr, err := gzip.NewReader(bytes.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			if body, err = io.ReadAll(zr); err != nil {
				t.Fatal(err)
			}
		}
		if cl := rec.Header().Get("Content-Length"); cl != "" && cl != strconv.Itoa(rec.Body.Len()) {
			t.Fatalf("Content-Length %s for %d bytes", cl, rec.Body.Len())
		}
		if q == nil || !q.Processing() {
			if !bytes.Equal(body, doc) {
				t.Fatalf("unprocessed answer differs from the stored document")
			}
			return
		}
		var elems []json.RawMessage
		if err := json.Unmarshal(body, &elems); err != nil || body[0] != '[' {
			t.Fatalf("body %q is not a JSON array: %v", body, err)
		}
		total, _ := strconv.Atoi(rec.Header().Get("X-Total-Count"))
		if total > e.Doc.Len() || len(elems) > total {
			t.Fatalf("%d elements, total %d, document has %d", len(elems), total, e.Doc.Len())
		}
		if q.Limit >= 0 && int64(len(elems)) > q.Limit {
			t.Fatalf("%d elements past limit %d", len(elems), q.Limit)
		}
		seen := map[int]bool{}
		for _, el := range elems {
			found := false
			for i := 0; i < e.Doc.Len(); i++ {
				if !seen[i] && bytes.Equal(el, e.Doc.Record(i)) {
					seen[i], found = true, true
					break
				}
			}
			if !found {
				t.Fatalf("element %q is not a stored element of %q", el, doc)
			}
		}
	})
}
