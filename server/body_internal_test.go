package server

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/decoy-mock/decoy/answer"
)

// countingReader counts the bytes read from it.
type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

// A body whose Content-Length passes --max-data-bytes is refused unread,
// by the rules and by the write; one the rules read whole is the write's,
// not read nor copied again (a 64 MiB body was held twice, and bodies of
// any declared size were read up to the bound before their 413).
func TestBodyReadOnce(t *testing.T) {
	s := &Server{cfg: Config{MaxDataBytes: 64}}
	for _, run := range []func(*http.Request) error{
		func(r *http.Request) error { _, err := s.writeBody(r); return err },
		func(r *http.Request) error {
			if s.ruleBody(r) != nil {
				t.Error("the rules read a body larger than the bound")
			}
			_, err := s.writeBody(r)
			return err
		},
	} {
		body := &countingReader{r: strings.NewReader(`{"a":"` + strings.Repeat("x", 1000) + `"}`)}
		r := httptest.NewRequest("POST", "/p/default/users", io.NopCloser(body))
		r.ContentLength = 1008
		err := run(r)
		if e, ok := err.(*answer.Error); !ok || e.Status != http.StatusRequestEntityTooLarge || body.n != 0 {
			t.Errorf("a declared 1,008 bytes: %v, %d bytes read", err, body.n)
		}
	}

	body := &countingReader{r: strings.NewReader(` {"a":1} `)}
	r := httptest.NewRequest("POST", "/p/default/users", io.NopCloser(body))
	r.ContentLength = -1 // chunked: read to learn its size
	kept := s.ruleBody(r)
	read := body.n
	got, err := s.writeBody(r)
	if err != nil || string(got) != `{"a":1}` || string(kept) != ` {"a":1} ` {
		t.Fatalf("rules read %q, the write %q, %v", kept, got, err)
	}
	if body.n != read || &got[0] != &kept[1] {
		t.Errorf("the write read the body again (%d bytes, then %d) or copied it", read, body.n)
	}
}
