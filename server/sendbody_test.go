package server_test

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/decoy-mock/decoy/client"
	"github.com/decoy-mock/decoy/server"
)

// Answers sent as spans (with writev, after a held head) are the same bytes,
// with the same headers, as answers written through net/http's buffer, on
// kept-alive and pipelined connections alike.
func TestAnswersAsSpans(t *testing.T) {
	h := newHarness(t, func(c *server.Config) { c.DefaultRateLimit = 0 })
	var doc strings.Builder
	doc.WriteString("[\n")
	for i := range 3000 {
		if i > 0 {
			doc.WriteString(",\n  ")
		}
		// Records of varied sizes, escapes and key orders, kept byte for byte.
		fmt.Fprintf(&doc, `{"id":%d, "g":"%s","n":%d.0,"s":"caf\u00e9 %s"}`, i, "abcdefghij"[i%10:i%10+1], i%7, strings.Repeat("x", i%300))
	}
	doc.WriteString("\n]")
	m := h.create(doc.String(), client.CreateOptions{})
	html := h.create(strings.Repeat("<p>hello</p>", 2000), client.CreateOptions{ContentType: "text/html"})

	targets := []string{
		"/mock/" + m.ID,                    // the whole document, stored bytes
		"/mock/" + m.ID + "?limit=3000",    // every record, joined by ','
		"/mock/" + m.ID + "?filters=g%3Dc", // a tenth of them, a few hundred KiB
		"/mock/" + m.ID + "?order_by=n&order_direction=desc&offset=7&limit=1200",
		"/mock/" + m.ID + "?order_by=s&limit=2", // under the spans threshold
		"/mock/" + m.ID + "?limit=0",
		"/mock/" + html.ID,
	}
	// Reference: the handler called directly, writing through a recorder.
	want := map[string]*httptest.ResponseRecorder{}
	for _, p := range targets {
		rec := httptest.NewRecorder()
		h.srv.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, p, nil))
		if rec.Code != 200 {
			t.Fatalf("%s: %d %s", p, rec.Code, rec.Body)
		}
		want[p] = rec
	}

	// Every target on one connection, pipelined: all requests first, then
	// the answers in order, with HEAD requests in between.
	c, err := net.Dial("tcp", strings.TrimPrefix(h.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var reqs bytes.Buffer
	for _, p := range targets {
		fmt.Fprintf(&reqs, "GET %s HTTP/1.1\r\nHost: x\r\n\r\nHEAD %s HTTP/1.1\r\nHost: x\r\n\r\n", p, p)
	}
	go c.Write(reqs.Bytes())
	br := bufio.NewReader(c)
	for _, p := range targets {
		for _, method := range []string{http.MethodGet, http.MethodHead} {
			resp, err := http.ReadResponse(br, &http.Request{Method: method})
			if err != nil {
				t.Fatalf("%s %s: %v", method, p, err)
			}
			body, err := io.ReadAll(resp.Body)
			if err != nil {
				t.Fatalf("%s %s: body: %v", method, p, err)
			}
			ref := want[p]
			if method == http.MethodHead {
				if len(body) != 0 {
					t.Errorf("HEAD %s: %d bytes of body", p, len(body))
				}
			} else if !bytes.Equal(body, ref.Body.Bytes()) {
				t.Errorf("GET %s: %d bytes differ from the %d written through net/http", p, len(body), ref.Body.Len())
			}
			if got := resp.Header.Get("Content-Length"); got != strconv.Itoa(ref.Body.Len()) {
				t.Errorf("%s %s: Content-Length %s, want %d", method, p, got, ref.Body.Len())
			}
			for _, k := range []string{"ETag", "X-Total-Count", "Content-Type"} {
				want := ref.Header().Get(k)
				if v, ok := ref.Header()[k]; ok { // set under its exact name
					want = v[0]
				}
				if resp.Header.Get(k) != want {
					t.Errorf("%s %s: %s %q, want %q", method, p, k, resp.Header.Get(k), want)
				}
			}
		}
	}
}
