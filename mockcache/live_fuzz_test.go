package mockcache

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"unsafe"

	"github.com/decoy-mock/decoy"
	"github.com/decoy-mock/decoy/docfile"
	"github.com/decoy-mock/decoy/jsondoc"
	"github.com/decoy-mock/decoy/query"
)

// spliced applies w to data as the contract reads, the plain way: the data
// parsed afresh, the record found in it, the bytes spliced (see
// jsondoc.Editor for where separators go). It is the model Apply is held
// to.
func spliced(data []byte, w *decoy.Write) ([]byte, error) {
	doc, err := jsondoc.Parse(data)
	if err != nil {
		return nil, err
	}
	v, ok := doc.Items(splitPath(w.Items))
	if !ok || !v.Objects() {
		return nil, errNotCollection()
	}
	n := v.Len()
	// The array's brackets, and the elements' starts and ends.
	var open, close int
	if before, after, ok := v.Outer(); ok {
		open, close = len(before), len(data)-len(after)-1
	} else {
		open = bytes.IndexByte(data, '[')
		close = bytes.LastIndexByte(data, ']')
	}
	start := func(i int) int { return int(spanOf(data, v, i)[0]) }
	end := func(i int) int { return int(spanOf(data, v, i)[1]) }
	splice := func(from, to int, with ...[]byte) []byte {
		out := append([]byte(nil), data[:from]...)
		for _, b := range with {
			out = append(out, b...)
		}
		return append(out, data[to:]...)
	}
	rec := bytes.Trim(w.Record, " \t\r\n")
	if w.Op == decoy.WriteCreate {
		switch {
		case n == 0:
			return splice(open+1, open+1, rec), nil
		case n == 1:
			return splice(end(0), end(0), []byte{','}, data[open+1:start(0)], rec), nil
		default:
			return splice(end(n-1), end(n-1), data[end(n-2):start(n-1)], rec), nil
		}
	}
	i, ok := query.FindRecord(v, splitPath(w.Field), []byte(w.Key))
	if !ok {
		return nil, errNotFound()
	}
	switch {
	case w.Op != decoy.WriteDelete:
		return splice(start(i), end(i), rec), nil
	case n == 1:
		return splice(open+1, close), nil
	case i == 0:
		return splice(start(0), start(1)), nil
	default:
		return splice(end(i-1), end(i)), nil
	}
}

// spanOf returns where record i of v lies in data.
func spanOf(data []byte, v *jsondoc.Document, i int) [2]int {
	rec := v.Record(i)
	off := int(uintptrDiff(data, rec))
	return [2]int{off, off + len(rec)}
}

// fuzzDocs are the data the fuzz target starts from.
var fuzzDocs = []struct{ data, items string }{
	{`[]`, ""},
	{`[{"id":1}]`, ""},
	{"[\n  {\"id\": 1, \"v\": \"a\"},\n  {\"id\": 2, \"v\": \"b\"},\n  {\"id\": 3}\n]\n", ""},
	{"[ {\"id\":\"1\"} ,{\"id\":2}\t, {\"id\":1}]", ""},
	{`{"data":[{"id":1},{"id":2}],"links":{"self":"/x"}}`, "data"},
	{"{\"a\": {\"rows\": [\n]}, \"b\": [1,2]}", "a.rows"},
}

// fuzzRecord returns a record of id k, shaped by b.
func fuzzRecord(k int, b byte) string {
	switch b % 4 {
	case 0:
		return fmt.Sprintf(`{"id":%d}`, k)
	case 1:
		return fmt.Sprintf(" {\"id\": %d, \"name\": \"n\\u00e9 %d\"}\n", k, b)
	case 2:
		return fmt.Sprintf(`{"id":"%d","tags":[%d]}`, k, b)
	}
	return fmt.Sprintf("{\n\t\"v\": %d,\n\t\"id\": %d\n}", b, k)
}

// fuzzWrites turns ops (three bytes a write) into writes, numbered from 1.
func fuzzWrites(ops []byte, items string) []*decoy.Write {
	var ws []*decoy.Write
	for len(ops) >= 3 {
		op, k, shape := ops[0], int(ops[1]%6), ops[2]
		ops = ops[3:]
		w := &decoy.Write{Items: items, Field: "id", Key: fmt.Sprint(k)}
		if shape&0x80 != 0 {
			w.Key = fmt.Sprintf("%q", fmt.Sprint(k))
		}
		switch op % 4 {
		case 0:
			w.Op, w.Record = decoy.WriteCreate, []byte(fuzzRecord(k, shape))
		case 1:
			w.Op, w.Record = decoy.WriteReplace, []byte(fuzzRecord(k, shape))
		case 2:
			w.Op, w.Record = decoy.WriteUpdate, []byte(fuzzRecord(k, shape+1))
		default:
			w.Op = decoy.WriteDelete
		}
		ws = append(ws, w)
	}
	return ws
}

func FuzzLive(f *testing.F) {
	f.Add(uint8(0), []byte{0, 1, 0, 0, 2, 1, 1, 1, 2, 3, 2, 0})
	f.Add(uint8(2), []byte{3, 1, 0, 3, 2, 0x80, 3, 3, 0, 0, 4, 1, 2, 4, 3})
	f.Add(uint8(3), []byte{3, 1, 0x80, 1, 2, 3, 3, 1, 0, 3, 1, 0})
	f.Add(uint8(4), []byte{0, 3, 0, 3, 1, 0, 3, 2, 0, 3, 3, 0, 0, 5, 1})
	f.Add(uint8(5), []byte{0, 1, 1, 0, 2, 2, 3, 1, 0, 0, 3, 3})
	f.Add(uint8(0x82), []byte{1, 1, 1, 1, 2, 1, 1, 3, 1, 1, 1, 2, 0, 4, 3, 1, 4, 1, 2, 4, 2, 3, 2, 1})
	f.Fuzz(func(t *testing.T, which uint8, ops []byte) {
		if len(ops) > 300 {
			return
		}
		if which&0x80 != 0 {
			old := compactSlack
			compactSlack = 64 // arenas parsed again every few writes
			defer func() { compactSlack = old }()
		}
		start := fuzzDocs[int(which)%len(fuzzDocs)]
		ws := fuzzWrites(ops, start.items)
		// The model, write by write; writes that fail change nothing and
		// take no number.
		data := []byte(start.data)
		e := liveTestEntry(t, start.data)
		defer func() { e.Release() }()
		var done []*decoy.Write
		for _, w := range ws {
			w.Seq = int64(len(done)) + 1
			want, werr := spliced(data, w)
			next, err := e.Apply(w)
			if decoy.ErrorCode(err) != decoy.ErrorCode(werr) || (err == nil) != (werr == nil) {
				t.Fatalf("write %+v: Apply = %v, model %v", w, err, werr)
			}
			if err != nil {
				continue
			}
			if !bytes.Equal(next.Bytes(), want) {
				t.Fatalf("after %s %s: Apply gave\n%s\nmodel\n%s", w.Op, w.Key, next.Bytes(), want)
			}
			if len(done)%2 == 0 {
				next.Doc.CarryOver() // as the cache does; else built when asked
			}
			e.Release()
			e, data = next, want
			done = append(done, w)
			checkLive(t, e, start.items)
		}
		// The same writes at once, as a load applies them.
		if len(done) > 0 {
			base := liveTestEntry(t, start.data)
			defer base.Release()
			all, err := base.applyBatch(done)
			if err != nil {
				t.Fatalf("applyBatch: %v", err)
			}
			defer all.Release()
			if !bytes.Equal(all.Bytes(), data) {
				t.Fatalf("applyBatch gave\n%s\nwant\n%s", all.Bytes(), data)
			}
			checkLive(t, all, start.items)
		}
	})
}

func liveTestEntry(t testing.TB, data string) *Entry {
	m := &decoy.Mock{ID: "m", ContentType: "application/json", Status: 200, ETag: jsondoc.ETag([]byte(data)), Size: int64(len(data)), Version: 1}
	e, err := NewEntry(m, docfile.FromBytes([]byte(data)))
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// checkLive checks the records of e's collection, and a query's answer,
// against its data parsed afresh.
func checkLive(t *testing.T, e *Entry, items string) {
	t.Helper()
	fresh := liveTestEntry(t, string(e.Bytes()))
	defer fresh.Release()
	if e.Size() != int64(len(e.Bytes())) {
		t.Fatalf("Size %d, data %d bytes", e.Size(), len(e.Bytes()))
	}
	path := splitPath(items)
	got, _ := e.Records(path)
	want, _ := fresh.Records(path)
	if got.Len() != want.Len() {
		t.Fatalf("Len %d, afresh %d", got.Len(), want.Len())
	}
	for i := range got.Len() {
		if !bytes.Equal(got.Record(i), want.Record(i)) {
			t.Fatalf("record %d: %s, afresh %s", i, got.Record(i), want.Record(i))
		}
	}
	for k := range 7 {
		for _, key := range []string{fmt.Sprint(k), fmt.Sprintf("%q", fmt.Sprint(k))} {
			i, ok := query.FindRecord(got, []string{"id"}, []byte(key))
			j, ok2 := query.FindRecord(want, []string{"id"}, []byte(key))
			if i != j || ok != ok2 {
				t.Fatalf("FindRecord(%s) = %d %v, afresh %d %v", key, i, ok, j, ok2)
			}
		}
	}
	for _, f := range [][]string{{"id"}, {"v"}} {
		n, ok := query.NextIntID(got, f)
		n2, ok2 := query.NextIntID(want, f)
		if n != n2 || ok != ok2 {
			t.Fatalf("NextIntID(%s) = %d %v, afresh %d %v", f, n, ok, n2, ok2)
		}
	}
	q, err := query.Compile(query.Params{OrderBy: "id", OrderDirection: "desc", Filters: "id[$ne]=2&name[$eqi]=NÉ 1"})
	if err != nil {
		t.Fatal(err)
	}
	q = q.Within(query.Scope{Items: path})
	var a, b strings.Builder
	ga, fa := e.Answer(q, "", false, ""), fresh.Answer(q, "", false, "")
	ga.WriteBody(&a)
	fa.WriteBody(&b)
	if a.String() != b.String() || ga.ETag != fa.ETag {
		t.Fatalf("answer %s (%s), afresh %s (%s)", a.String(), ga.ETag, b.String(), fa.ETag)
	}
}

// uintptrDiff returns where sub, a slice of data, starts in it.
func uintptrDiff(data, sub []byte) uintptr {
	return uintptr(unsafe.Pointer(unsafe.SliceData(sub))) - uintptr(unsafe.Pointer(unsafe.SliceData(data)))
}
