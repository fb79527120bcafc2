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
	sem := newBodies(4<<10, 4<<10) // a client's share: the whole bound
	request := func(body string, declared int64) *http.Request {
		r := httptest.NewRequest("POST", "/p/default/users", io.NopCloser(strings.NewReader(body)))
		r.ContentLength = declared
		return r
	}
	first, releaseFirst := withBodyHold(request(strings.Repeat("a", 3000), 3000), sem, "a")
	if b, err := readBody(first, 1<<20); err != nil || len(b) != 3000 {
		t.Fatalf("the first body: %d bytes, %v", len(b), err)
	}
	second, releaseSecond := withBodyHold(request(strings.Repeat("b", 3000), 3000), sem, "a")
	if _, err := readBody(second, 1<<20); err != errBodiesBusy {
		t.Errorf("a second body past the bound: %v, want errBodiesBusy", err)
	}
	releaseSecond()
	small, releaseSmall := withBodyHold(request(`{"a":1}`, -1), sem, "a")
	if b, err := readBody(small, 1<<20); err != nil || string(b) != `{"a":1}` {
		t.Errorf("a small body beside the first: %q, %v", b, err)
	}
	releaseSmall()
	releaseFirst()
	// A body that declares more than the bound but has sent little holds
	// what it sent.
	slow, releaseSlow := withBodyHold(request(`{"a":2}`, 1<<20), sem, "a")
	if b, err := readBody(slow, 2<<20); err != nil || string(b) != `{"a":2}` {
		t.Errorf("a body declaring 1 MiB, of 7 bytes: %q, %v", b, err)
	}
	releaseSlow()
	if sem.total != 0 || len(sem.byClient) != 0 {
		t.Errorf("what the requests held was not given back: %d bytes, %d clients", sem.total, len(sem.byClient))
	}
}

// One client holds at most its share of the bound: a few connections
// of one address cannot fill it for everyone.
func TestBodiesShare(t *testing.T) {
	b := newBodies(16<<10, 1<<10) // a share of 4 KiB
	hold := func(client string, n int) (func(), bool, error) {
		r := httptest.NewRequest("POST", "/p/default/users", io.NopCloser(strings.NewReader(strings.Repeat("a", n))))
		r.ContentLength = int64(n)
		r, release := withBodyHold(r, b, client)
		_, err := readBody(r, 8<<10)
		return release, forLoad(r, err), err
	}
	var releases []func()
	for i, c := range []struct {
		client string
		n      int
		busy   bool
		load   bool // refused for the server's load, not the client's share
	}{
		{"10.0.0.1", 3000, false, false},
		{"10.0.0.1", 1000, false, false},
		{"10.0.0.1", 1000, true, false}, // past its 4 KiB
		{"10.0.0.2", 4000, false, false},
		{"10.0.0.3", 4000, false, false},
		{"10.0.0.4", 4000, false, false}, // 15,003 held
		{"10.0.0.5", 2000, true, true},   // past the 16 KiB bound
	} {
		release, load, err := hold(c.client, c.n)
		if (err == errBodiesBusy) != c.busy || load != c.load {
			t.Errorf("%d: %d bytes from %s: %v, busy %v, for the load %v (want %v)", i, c.n, c.client, err, c.busy, load, c.load)
		}
		releases = append(releases, release)
	}
	for _, release := range releases {
		release()
	}
	if b.total != 0 || len(b.byClient) != 0 {
		t.Errorf("left held: %d bytes, %d clients", b.total, len(b.byClient))
	}
}

// A body of unknown length is held, and counted, at most a quarter past
// what it sent (it doubled before: up to twice).
func TestBodyGrowthBounded(t *testing.T) {
	for _, n := range []int{1, 511, 513, 1 << 20, 1<<20 + 1, 3 << 20, 5<<20 + 12345, 33 << 20} {
		b := newBodies(1<<30, 1<<30)
		r := httptest.NewRequest("POST", "/p/default/users", io.NopCloser(strings.NewReader(strings.Repeat("a", n))))
		r.ContentLength = -1
		r, release := withBodyHold(r, b, "a")
		got, err := readBody(r, 64<<20)
		if err != nil || len(got) != n {
			t.Fatalf("%d bytes: read %d, %v", n, len(got), err)
		}
		if held := b.total; held != int64(cap(got)) || held > int64(max(1024, n+n/4+1)) {
			t.Errorf("%d bytes: held %d (cap %d), want at most %d", n, held, cap(got), max(1024, n+n/4+1))
		}
		release()
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

// At the default --max-data-bytes, one client may hold three bodies of the
// largest size, and leaves a fourth to the others: its share is three
// quarters of the bound, not all of it (a review caught a share of four
// bodies' worth, the whole bound at the defaults).
func TestBodiesShareAtDefaults(t *testing.T) {
	const maxData = 64 << 20 // the default --max-data-bytes
	b := newBodies(bodyBudget(maxData), maxData)
	for i := range 3 {
		if ok, _ := b.take("203.0.113.7", maxData+1); !ok {
			t.Fatalf("body %d of one client refused", i+1)
		}
	}
	if ok, own := b.take("203.0.113.7", maxData+1); ok || !own {
		t.Errorf("a fourth body of the same client: ok %v, own %v; want refused for its share", ok, own)
	}
	if ok, _ := b.take("198.51.100.1", maxData+1); !ok {
		t.Errorf("another client's body refused (share %d of %d)", b.share, b.limit)
	}
}
