package server

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/decoy-mock/decoy/answer"
	"golang.org/x/sync/semaphore"
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
			if b, err := s.ruleBody(r); b != nil || err != nil {
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
	kept, _ := s.ruleBody(r)
	read := body.n
	got, err := s.writeBody(r)
	if err != nil || string(got) != `{"a":1}` || string(kept) != ` {"a":1} ` {
		t.Fatalf("rules read %q, the write %q, %v", kept, got, err)
	}
	if body.n != read || &got[0] != &kept[1] {
		t.Errorf("the write read the body again (%d bytes, then %d) or copied it", read, body.n)
	}
}

// The bodies held at once are bounded: a body that would pass the bound
// is refused (503) once what it sent would, and what a request held is
// given back when it is answered. A body is counted as it arrives, not by
// the length it declares.
func TestBodiesBound(t *testing.T) {
	sem := semaphore.NewWeighted(4 << 10)
	request := func(body string, declared int64) *http.Request {
		r := httptest.NewRequest("POST", "/p/default/users", io.NopCloser(strings.NewReader(body)))
		r.ContentLength = declared
		return r
	}
	first, releaseFirst := withBodyHold(request(strings.Repeat("a", 3000), 3000), sem)
	if b, err := readBody(first, 1<<20); err != nil || len(b) != 3000 {
		t.Fatalf("the first body: %d bytes, %v", len(b), err)
	}
	second, releaseSecond := withBodyHold(request(strings.Repeat("b", 3000), 3000), sem)
	if _, err := readBody(second, 1<<20); err != errBodiesBusy {
		t.Errorf("a second body past the bound: %v, want errBodiesBusy", err)
	}
	releaseSecond()
	small, releaseSmall := withBodyHold(request(`{"a":1}`, -1), sem)
	if b, err := readBody(small, 1<<20); err != nil || string(b) != `{"a":1}` {
		t.Errorf("a small body beside the first: %q, %v", b, err)
	}
	releaseSmall()
	releaseFirst()
	// A body that declares more than the bound but has sent little holds
	// what it sent.
	slow, releaseSlow := withBodyHold(request(`{"a":2}`, 1<<20), sem)
	if b, err := readBody(slow, 2<<20); err != nil || string(b) != `{"a":2}` {
		t.Errorf("a body declaring 1 MiB, of 7 bytes: %q, %v", b, err)
	}
	releaseSlow()
	if !sem.TryAcquire(4 << 10) {
		t.Error("what the requests held was not given back")
	}
}

// A chunked body past the bound that the rules read is refused by the
// write without being read, nor counted, again.
func TestBodyOverReadOnce(t *testing.T) {
	s := &Server{cfg: Config{MaxDataBytes: 64}}
	body := &countingReader{r: strings.NewReader(`{"a":"` + strings.Repeat("x", 1000) + `"}`)}
	r := httptest.NewRequest("POST", "/p/default/users", io.NopCloser(body))
	r.ContentLength = -1
	if b, err := s.ruleBody(r); b != nil || err != nil {
		t.Fatalf("the rules read %q, %v", b, err)
	}
	read := body.n
	_, err := s.writeBody(r)
	if e, ok := err.(*answer.Error); !ok || e.Status != http.StatusRequestEntityTooLarge || body.n != read {
		t.Errorf("the write: %v, %d bytes read after the rules' %d", err, body.n, read)
	}
}
