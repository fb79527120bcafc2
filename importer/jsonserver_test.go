package importer_test

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/decoy-mock/decoy"
	"github.com/decoy-mock/decoy/importer"
	"github.com/decoy-mock/decoy/internal/memtest"
)

// endless is a reader of head, then the byte fill for ever: a client that
// never stops sending. read counts what was taken from it.
type endless struct {
	head string
	fill byte
	read int64
}

func (e *endless) Read(p []byte) (int, error) {
	n := copy(p, e.head)
	e.head = e.head[n:]
	for i := n; i < len(p); i++ {
		p[i] = e.fill
	}
	e.read += int64(len(p))
	return len(p), nil
}

// TestSpoolJSONServerBounds: a db.json read as it arrives is refused as
// soon as a value, a key or all of its values pass their bound, having
// read about one bound's worth past what it kept, and leaves no file
// behind; a key past MaxMocks is refused before its value is read.
func TestSpoolJSONServerBounds(t *testing.T) {
	const max = 64 << 10
	l := importer.Limits{MaxDataBytes: max, MaxUnpackedBytes: 2*max + max/2, MaxMocks: 3}
	value := func(n int) string { return `"` + strings.Repeat("x", n-2) + `"` }
	for _, tc := range []struct {
		name string
		r    io.Reader
		code string
		msg  string
	}{
		{"an endless value", &endless{head: `{"a":[1],"b":"`, fill: 'x'}, decoy.ETOOLARGE, `The value of "b" is larger than 65536 bytes (--max-data-bytes)`},
		{"an endless number", &endless{head: `{"a":1`, fill: '1'}, decoy.ETOOLARGE, `The value of "a" is larger than 65536 bytes (--max-data-bytes)`},
		{"endless space", &endless{head: `{"a":1,`, fill: ' '}, decoy.ETOOLARGE, "A key of the db.json, or the space between its members, is larger than 65536 bytes (--max-data-bytes)"},
		{"endless space after", &endless{head: `{"a":1}`, fill: ' '}, decoy.ETOOLARGE, "A key of the db.json, or the space between its members, is larger than 65536 bytes (--max-data-bytes)"},
		{"an endless key", &endless{head: `{"a":1,"`, fill: 'k'}, decoy.ETOOLARGE, "A key of the db.json, or the space between its members, is larger than 65536 bytes (--max-data-bytes)"},
		{"space before a value at the bound", strings.NewReader(`{"a":` + strings.Repeat(" ", 5000) + value(max) + `}`), "", ""},
		{"a value one byte over", strings.NewReader(`{"a":` + value(max+1) + `}`), decoy.ETOOLARGE, `The value of "a" is larger than 65536 bytes (--max-data-bytes)`},
		{"a key past MaxMocks", strings.NewReader(`{"a":1,"b":2,"c":3,"d":4}`), decoy.ETOOLARGE, "The file makes more than 3 mocks"},
		{"a skipped key does not count", strings.NewReader(`{"a":1,"b":2,"` + strings.Repeat("k", 201) + `":3,"c":4}`), "", ""},
		{"skipped keys past MaxMocks", strings.NewReader(`{"` + strings.Repeat("k", 201) + `":1,"` + strings.Repeat("k", 202) + `":2,"` + strings.Repeat("k", 203) + `":3,"` + strings.Repeat("k", 204) + `":4}`), decoy.ETOOLARGE, "The file has more than 3 keys that are no mock's name"},
		{"a long key twice", strings.NewReader(`{"` + strings.Repeat("k", 201) + `":1,"` + strings.Repeat("k", 201) + `":2}`), decoy.EINVALID, `The key "` + strings.Repeat("k", 100) + `" appears twice in the db.json`},
		{"values at the total", strings.NewReader(`{"a":` + value(max) + `,"b":` + value(max) + `,"c":` + value(max/2) + `}` + "\n"), "", ""},
		{"values over the total", strings.NewReader(`{"a":` + value(max) + `,"b":` + value(max) + `,"c":` + value(max/2+1) + `}`), decoy.ETOOLARGE, "The db.json's values come to more than 163840 bytes"},
		{"a byte order mark", strings.NewReader("\xef\xbb\xbf{\"a\":[1]}"), "", ""},
		{"text after", strings.NewReader(`{"a":1} x`), decoy.EINVALID, "Invalid JSON: text after the db.json's object"},
		{"cut short", strings.NewReader(`{"a":[1,`), decoy.EINVALID, "Invalid JSON: the file ends early"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			res, err := importer.SpoolJSONServer(tc.r, importer.Options{Limits: l, Spool: dir})
			if tc.code == "" {
				if err != nil {
					t.Fatal(err)
				}
				defer res.Close()
				for _, m := range res.Mocks {
					if fi, err := os.Stat(m.Spool); err != nil || fi.Size() != m.Size {
						t.Errorf("mock %q: spool %v", m.Name, err)
					}
				}
				return
			}
			if decoy.ErrorCode(err) != tc.code || decoy.ErrorMessage(err) != tc.msg {
				t.Errorf("got %v, want %s %q", err, tc.code, tc.msg)
			}
			if e, ok := tc.r.(*endless); ok && e.read > 2*max+64<<10 {
				t.Errorf("read %d bytes of an endless file before refusing it, past %d", e.read, 2*max+64<<10)
			}
			if left, _ := os.ReadDir(dir); len(left) != 0 {
				t.Errorf("%d files left behind", len(left))
			}
		})
	}
}

// TestJSONServerKeysHeld: what a db.json's reading keeps of keys that
// make no mock is bounded, whatever their length: 40 keys of 256 KiB
// (10 MiB) once stayed held by the result's skipped list.
func TestJSONServerKeysHeld(t *testing.T) {
	var b strings.Builder
	b.WriteString("{")
	for i := range 40 {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `"%d%s":0`, i, strings.Repeat("k", 256<<10))
	}
	b.WriteString("}")
	doc := b.String()
	l := importer.Limits{MaxDataBytes: 1 << 20, MaxMocks: 100}
	before := memtest.LiveHeap()
	res, err := importer.SpoolJSONServer(strings.NewReader(doc), importer.Options{Limits: l, Spool: t.TempDir()})
	if err != nil || len(res.Skipped) != 40 || len(res.Mocks) != 0 {
		t.Fatalf("%v: %d skipped, %d mocks", err, len(res.Skipped), len(res.Mocks))
	}
	held := int64(memtest.LiveHeap()) - int64(before)
	runtime.KeepAlive(res)
	runtime.KeepAlive(doc)
	t.Logf("the result of 40 skipped keys of 256 KiB holds %d bytes", held)
	if held > 256<<10 {
		t.Errorf("the result of 40 skipped keys of 256 KiB holds %d bytes, past 256 KiB", held)
	}
}
