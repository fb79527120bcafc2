package mockcache_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/decoy-mock/decoy"
	"github.com/decoy-mock/decoy/docfile"
	"github.com/decoy-mock/decoy/jsondoc"
	"github.com/decoy-mock/decoy/mockcache"
	"github.com/decoy-mock/decoy/query"
)

// entryOf returns an entry of data as stored, version 1, live data number
// seq.
func entryOf(t testing.TB, data string, seq int64) *mockcache.Entry {
	t.Helper()
	m := &decoy.Mock{ID: "m1", ContentType: "application/json", Status: 200, Size: int64(len(data)),
		ETag: jsondoc.ETag([]byte(data)), Version: 1, LiveSeq: seq}
	e, err := mockcache.NewEntry(m, docfile.FromBytes([]byte(data)))
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func create(seq int64, items, rec string) *decoy.Write {
	return &decoy.Write{Seq: seq, Op: decoy.WriteCreate, Items: items, Field: "id", Record: []byte(rec)}
}

func replace(seq int64, items, key, rec string) *decoy.Write {
	return &decoy.Write{Seq: seq, Op: decoy.WriteReplace, Items: items, Field: "id", Key: key, Record: []byte(rec)}
}

func remove(seq int64, items, key string) *decoy.Write {
	return &decoy.Write{Seq: seq, Op: decoy.WriteDelete, Items: items, Field: "id", Key: key}
}

func TestApply(t *testing.T) {
	three := `[{"id":1},{"id":2},{"id":3}]`
	spaced := "[ {\"id\":1} ,  {\"id\":2}\n,\t{\"id\":3} ]"
	pretty := "[\n  {\n    \"id\": 1\n  },\n  {\n    \"id\": 2\n  }\n]\n"
	wrapped := `{"data": [{"id":1}, {"id":2}], "links": {"next": null}}`
	tests := []struct {
		name, data string
		w          *decoy.Write
		want       string
		code       string
	}{
		{"create", three, create(1, "", `{"id":4}`), `[{"id":1},{"id":2},{"id":3},{"id":4}]`, ""},
		{"create empty", `[]`, create(1, "", `{"id":1}`), `[{"id":1}]`, ""},
		{"create empty spaced", "[\n]\n", create(1, "", `{"id":1}`), "[{\"id\":1}\n]\n", ""},
		{"create after one", "[\n  {\"id\":1}\n]", create(1, "", `{"id":2}`), "[\n  {\"id\":2}\n]"[:0] + "[\n  {\"id\":1},\n  {\"id\":2}\n]", ""},
		{"create compact one", `[{"id":1}]`, create(1, "", `{"id":2}`), `[{"id":1},{"id":2}]`, ""},
		{"create pretty", pretty, create(1, "", `{"id": 3}`), "[\n  {\n    \"id\": 1\n  },\n  {\n    \"id\": 2\n  },\n  {\"id\": 3}\n]\n", ""},
		{"create spaced", spaced, create(1, "", `{"id":4}`), "[ {\"id\":1} ,  {\"id\":2}\n,\t{\"id\":3}\n,\t{\"id\":4} ]", ""},
		{"create trims record", three, create(1, "", " {\"id\":4}\n"), `[{"id":1},{"id":2},{"id":3},{"id":4}]`, ""},
		{"replace first", three, replace(1, "", "1", `{"id":1,"a":true}`), `[{"id":1,"a":true},{"id":2},{"id":3}]`, ""},
		{"replace middle", spaced, replace(1, "", "2", `{ "id" : 2 }`), "[ {\"id\":1} ,  { \"id\" : 2 }\n,\t{\"id\":3} ]", ""},
		{"replace last", three, replace(1, "", "3", `{"id":3,"b":[1,2]}`), `[{"id":1},{"id":2},{"id":3,"b":[1,2]}]`, ""},
		{"update", three, &decoy.Write{Seq: 1, Op: decoy.WriteUpdate, Field: "id", Key: "2", Record: []byte(`{"id":2,"x":"y"}`)}, `[{"id":1},{"id":2,"x":"y"},{"id":3}]`, ""},
		{"delete first", spaced, remove(1, "", "1"), "[ {\"id\":2}\n,\t{\"id\":3} ]", ""},
		{"delete middle", spaced, remove(1, "", "2"), "[ {\"id\":1}\n,\t{\"id\":3} ]", ""},
		{"delete last", spaced, remove(1, "", "3"), "[ {\"id\":1} ,  {\"id\":2} ]", ""},
		{"delete only", "[\n  {\"id\":1}\n]\n", remove(1, "", "1"), "[]\n", ""},
		{"delete first pretty", pretty, remove(1, "", "1"), "[\n  {\n    \"id\": 2\n  }\n]\n", ""},
		{"first of duplicates", `[{"id":1,"n":1},{"id":1,"n":2}]`, remove(1, "", "1"), `[{"id":1,"n":2}]`, ""},
		{"string key", `[{"id":"a7"},{"id":"b8"}]`, remove(1, "", `"b8"`), `[{"id":"a7"}]`, ""},
		{"number key finds string", `[{"id":"42"}]`, replace(1, "", "42", `{"id":"42","v":1}`), `[{"id":"42","v":1}]`, ""},
		{"string key finds number", `[{"id":42}]`, remove(1, "", `"42"`), `[]`, ""},
		{"number spellings", `[{"id":30}]`, remove(1, "", `3e1`), `[]`, ""},
		{"escaped value", `[{"id":"\u00e9t\u00e9"}]`, remove(1, "", `"été"`), `[]`, ""},
		{"unicode field", `[{"名前":"太郎"},{"名前":"花子"}]`, &decoy.Write{Seq: 1, Op: decoy.WriteDelete, Field: "名前", Key: `"花子"`}, `[{"名前":"太郎"}]`, ""},
		{"nested field", `[{"meta":{"id":1}},{"meta":{"id":2}}]`, &decoy.Write{Seq: 1, Op: decoy.WriteDelete, Field: "meta.id", Key: "2"}, `[{"meta":{"id":1}}]`, ""},
		{"wrapped create", wrapped, create(1, "data", `{"id":3}`), `{"data": [{"id":1}, {"id":2}, {"id":3}], "links": {"next": null}}`, ""},
		{"wrapped replace", wrapped, replace(1, "data", "1", `{"id":1,"v":0}`), `{"data": [{"id":1,"v":0}, {"id":2}], "links": {"next": null}}`, ""},
		{"wrapped delete", wrapped, remove(1, "data", "1"), `{"data": [{"id":2}], "links": {"next": null}}`, ""},
		{"wrapped empty", `{"a":1,"data":[ ],"b":2}`, create(1, "data", `{"id":1}`), `{"a":1,"data":[{"id":1} ],"b":2}`, ""},
		{"deep items", `{"a":{"b":[{"id":1}]}}`, create(1, "a.b", `{"id":2}`), `{"a":{"b":[{"id":1},{"id":2}]}}`, ""},
		{"items index", `{"pages":[{"rows":[]}]}`, create(1, "pages.0.rows", `{"id":2}`), `{"pages":[{"rows":[{"id":2}]}]}`, ""},

		{"not an array", `{"id":1}`, create(1, "", `{"id":2}`), "", decoy.ECONFLICT},
		{"not objects", `[1,2]`, create(1, "", `{"id":2}`), "", decoy.ECONFLICT},
		{"some not objects", `[{"id":1},[]]`, create(1, "", `{"id":2}`), "", decoy.ECONFLICT},
		{"items missing", wrapped, create(1, "rows", `{"id":2}`), "", decoy.ECONFLICT},
		{"items not array", wrapped, create(1, "links", `{"id":2}`), "", decoy.ECONFLICT},
		{"not found", three, remove(1, "", "9"), "", decoy.ENOTFOUND},
		{"key object", three, remove(1, "", `{"a":1}`), "", decoy.ENOTFOUND},
		{"key not JSON", three, remove(1, "", `nope`), "", decoy.ENOTFOUND},
		{"record not object", three, create(1, "", `[1]`), "", decoy.EINVALID},
		{"record not JSON", three, create(1, "", `{"id":`), "", decoy.EINVALID},
		{"record two values", three, create(1, "", `{} {}`), "", decoy.EINVALID},
		{"unknown op", three, &decoy.Write{Seq: 1, Op: "merge", Field: "id", Key: "1"}, "", decoy.EINVALID},
		{"seq gap", three, create(2, "", `{"id":4}`), "", decoy.ECONFLICT},
		{"seq behind", three, create(0, "", `{"id":4}`), "", decoy.ECONFLICT},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := entryOf(t, tt.data, 0)
			defer e.Release()
			f, err := e.Apply(tt.w)
			if tt.code != "" {
				if decoy.ErrorCode(err) != tt.code {
					t.Fatalf("Apply = %v, want %s", err, tt.code)
				}
				return
			}
			if err != nil {
				t.Fatalf("Apply: %v", err)
			}
			defer f.Release()
			if got := string(f.Bytes()); got != tt.want {
				t.Errorf("data =\n%q\nwant\n%q", got, tt.want)
			}
			if got := string(e.Bytes()); got != tt.data {
				t.Errorf("entry applied to changed: %q", got)
			}
			checkEntry(t, f, tt.w.Items, 1)
		})
	}
}

// checkEntry checks what entry e, at live number seq, holds against the
// same data parsed afresh: its size, tag, the records of its collection
// at items, and the answers of a few queries over them.
func checkEntry(t *testing.T, e *mockcache.Entry, items string, seq int64) {
	t.Helper()
	data := e.Bytes()
	if e.Size() != int64(len(data)) || e.Mock.Size != int64(len(data)) {
		t.Errorf("Size() = %d, Mock.Size = %d, want %d", e.Size(), e.Mock.Size, len(data))
	}
	if e.LiveSeq() != seq || e.Mock.LiveSeq != seq {
		t.Errorf("LiveSeq() = %d, Mock.LiveSeq %d, want %d", e.LiveSeq(), e.Mock.LiveSeq, seq)
	}
	if e.Mock.ETag == jsondoc.ETag(data) && seq > 0 {
		t.Errorf("ETag %s is the stored data's", e.Mock.ETag)
	}
	fresh := entryOf(t, string(data), seq)
	defer fresh.Release()
	var path []string
	if items != "" {
		path = strings.Split(items, ".")
	}
	got, ok1 := e.Records(path)
	want, ok2 := fresh.Records(path)
	if ok1 != ok2 {
		t.Fatalf("Records ok = %v, afresh %v", ok1, ok2)
	}
	if !ok1 {
		return
	}
	if got.Len() != want.Len() {
		t.Fatalf("Len = %d, afresh %d", got.Len(), want.Len())
	}
	for i := range got.Len() {
		if !bytes.Equal(got.Record(i), want.Record(i)) {
			t.Errorf("record %d = %s, afresh %s", i, got.Record(i), want.Record(i))
		}
	}
	for _, raw := range []string{"", "order_by=id&order_direction=desc", "filters=id%3D2", "limit=1&offset=1", "order_by=n"} {
		cq := (&mockcache.Queries{}).Get(raw)
		if cq.Err != nil {
			t.Fatal(cq.Err)
		}
		q := cq.Query
		if q != nil {
			q = q.Within(query.Scope{Items: path})
		}
		if a, b := answerBody(e, q), answerBody(fresh, q); a != b {
			t.Errorf("answer of %q = %s, afresh %s", raw, a, b)
		}
	}
}

func answerBody(e *mockcache.Entry, q *query.Query) string {
	a := e.Answer(q, "", false, "")
	var b bytes.Buffer
	a.WriteBody(&b)
	return b.String()
}
