package importer_test

import (
	"io"
	"os"
	"strings"
	"testing"

	"github.com/decoy-mock/decoy"
	"github.com/decoy-mock/decoy/importer"
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
		{"endless space", &endless{head: `{"a":1,`, fill: ' '}, decoy.ETOOLARGE, "A key of the db.json, with the space around it, is larger than 65536 bytes (--max-data-bytes)"},
		{"an endless key", &endless{head: `{"a":1,"`, fill: 'k'}, decoy.ETOOLARGE, "A key of the db.json, with the space around it, is larger than 65536 bytes (--max-data-bytes)"},
		{"a value one byte over", strings.NewReader(`{"a":` + value(max+1) + `}`), decoy.ETOOLARGE, `The value of "a" is larger than 65536 bytes (--max-data-bytes)`},
		{"a key past MaxMocks", &endless{head: `{"a":1,"b":2,"c":3,"d":"`, fill: 'x'}, decoy.ETOOLARGE, "The file makes more than 3 mocks"},
		{"a skipped key counts", strings.NewReader(`{"a":1,"b":2,"a b/{c}":3,"d":4}`), decoy.ETOOLARGE, "The file makes more than 3 mocks"},
		{"values at the total", strings.NewReader(`{"a":` + value(max) + `,"b":` + value(max) + `,"c":` + value(max/2) + `}` + "\n"), "", ""},
		{"values over the total", strings.NewReader(`{"a":` + value(max) + `,"b":` + value(max) + `,"c":` + value(max/2+1) + `}`), decoy.ETOOLARGE, "The db.json's values come to more than 163840 bytes"},
		{"a late openapi, guessed", strings.NewReader(`{"a":1,"openapi":"3.0.3"}`), decoy.EINVALID, `The file has a top-level "openapi" member after its first 1048576 bytes: if it is an OpenAPI description, import it with format=openapi`},
		{"a byte order mark", strings.NewReader("\xef\xbb\xbf{\"a\":[1]}"), "", ""},
		{"text after", strings.NewReader(`{"a":1} x`), decoy.EINVALID, "Invalid JSON: text after the db.json's object"},
		{"cut short", strings.NewReader(`{"a":[1,`), decoy.EINVALID, "Invalid JSON: the file ends early"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			res, err := importer.SpoolJSONServer(tc.r, importer.Options{Limits: l}, dir, strings.HasPrefix(tc.name, "a late"))
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
