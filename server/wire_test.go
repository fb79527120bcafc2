package server_test

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/decoy-mock/decoy/client"
	"github.com/decoy-mock/decoy/internal/dataset"
	"github.com/decoy-mock/decoy/internal/servertest"
	"github.com/decoy-mock/decoy/server"
)

// Every read answer, as it arrives over one kept-alive connection, is the
// answer the handler gives: the same status and bytes whether it was built
// from the records (the first time), kept (from the second), gathered with
// its head into one write (see transport.Gather) or not, gzipped or not,
// small or large, for GET and HEAD. A body sent after its handler's writes
// returned must not have changed meanwhile.
func TestWireAnswers(t *testing.T) {
	h := servertest.New(t, func(c *server.Config) {
		c.DefaultRateLimit, c.DefaultMonthlyQuota = 0, 0
		c.MaxDataBytes = 64 << 20
	})
	m := h.Create(string(dataset.Users(3000)), client.CreateOptions{})
	conn, err := net.Dial("tcp", strings.TrimPrefix(h.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	br := bufio.NewReader(conn)
	queries := []string{
		"",                              // the stored bytes, 700 KiB
		"?limit=1",                      // under 1 KiB: never gzipped
		"?limit=14",                     // about 3 KiB: around net/http's buffer
		"?limit=20",                     // about 4.6 KiB
		"?filters=address.city%3DParis", // scattered records
		"?order_by=createdAt&limit=100",
		"?order_by=age&order_direction=desc", // every record, reordered
		"?auth_token=x&order_by=age",         // never kept
	}
	for _, q := range queries {
		for _, gz := range []bool{false, true} {
			for round := range 3 {
				for _, method := range []string{http.MethodGet, http.MethodHead} {
					header := ""
					if gz {
						header = "Accept-Encoding: gzip, deflate, br\r\n"
					}
					got := wireGet(t, conn, br, method, "/mock/"+m.ID+q, header)
					r := httptest.NewRequest(method, "/mock/"+m.ID+q, nil)
					if gz {
						r.Header.Set("Accept-Encoding", "gzip, deflate, br")
					}
					want := httptest.NewRecorder()
					h.Srv.ServeHTTP(want, r)
					if got.status != want.Code || !bytes.Equal(got.body, want.Body.Bytes()) {
						t.Fatalf("%s %q gzip=%v round %d: %d, %d bytes; the handler gives %d, %d bytes", method, q, gz, round, got.status, len(got.body), want.Code, want.Body.Len())
					}
					if gz && method == http.MethodGet && got.header.Get("Content-Encoding") == "gzip" {
						zr, err := gzip.NewReader(bytes.NewReader(got.body))
						if err != nil {
							t.Fatal(err)
						}
						if _, err := io.Copy(io.Discard, zr); err != nil {
							t.Fatalf("%q round %d: the gzipped body does not decompress: %v", q, round, err)
						}
					}
				}
			}
		}
	}
}

type wireAnswer struct {
	status int
	header http.Header
	body   []byte
}

// wireGet sends one request on conn and reads its answer from br.
func wireGet(t *testing.T, conn net.Conn, br *bufio.Reader, method, target, header string) wireAnswer {
	t.Helper()
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(conn, method+" "+target+" HTTP/1.1\r\nHost: test\r\n"+header+"\r\n"); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(br, &http.Request{Method: method})
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: %v", method, target, err)
	}
	return wireAnswer{resp.StatusCode, resp.Header, b}
}

// A request's head may be MaxHeaderBytes long, request line and final
// blank line included; a byte more is a 431 in JSON naming the cap.
func TestHeadAtTheBound(t *testing.T) {
	h := servertest.New(t)
	for _, tc := range []struct {
		size   int
		status int
	}{
		{server.MaxHeaderBytes, 200},
		{server.MaxHeaderBytes + 1, 431},
	} {
		const start, end = "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Pad: ", "\r\n\r\n"
		head := start + strings.Repeat("a", tc.size-len(start)-len(end)) + end
		conn, err := net.Dial("tcp", strings.TrimPrefix(h.URL, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		conn.SetDeadline(time.Now().Add(10 * time.Second))
		go io.WriteString(conn, head)
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatalf("head of %d bytes: %v", len(head), err)
		}
		body, _ := io.ReadAll(resp.Body)
		conn.Close()
		if resp.StatusCode != tc.status {
			t.Errorf("head of %d bytes: %d %s", len(head), resp.StatusCode, body)
		}
		if tc.status == 431 && (resp.Header.Get("Content-Type") != "application/json" || !strings.Contains(string(body), "at most 64 KiB")) {
			t.Errorf("431: %q %s", resp.Header.Get("Content-Type"), body)
		}
	}
}

// After a request whose body was read whole (an upload, chunked or not),
// the connection stays open for the next; after an answer given without
// reading the body (an upload refused for its token, a body sent to a
// read), it is closed rather than read to the end.
func TestBodyKeepsConnection(t *testing.T) {
	h := servertest.New(t)
	m := h.Create(`[{"a":1}]`, client.CreateOptions{})
	conn, err := net.Dial("tcp", strings.TrimPrefix(h.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	br := bufio.NewReader(conn)
	send := func(req string) *http.Response {
		t.Helper()
		if _, err := io.WriteString(conn, req); err != nil {
			t.Fatal(err)
		}
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp
	}
	const body = `[{"b":2}]`
	auth := "Authorization: Bearer " + servertest.AdminToken + "\r\n"
	for _, tc := range []struct {
		name, req string
		status    int
		closed    bool
	}{
		{"upload", "POST /admin/v1/mocks?name=x HTTP/1.1\r\nHost: localhost\r\n" + auth + "Content-Type: application/json\r\nContent-Length: 9\r\n\r\n" + body, 201, false},
		{"chunked upload", "PUT /admin/v1/mocks/" + m.ID + "/data HTTP/1.1\r\nHost: localhost\r\n" + auth + "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n9\r\n" + body + "\r\n0\r\n\r\n", 200, false},
		{"read after them", "GET /mock/" + m.ID + " HTTP/1.1\r\nHost: localhost\r\n\r\n", 200, false},
		{"upload refused for its token", "POST /admin/v1/mocks?name=x HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer wrong\r\nContent-Type: application/json\r\nContent-Length: 9\r\n\r\n" + body, 401, true},
	} {
		resp := send(tc.req)
		if resp.StatusCode != tc.status || resp.Close != tc.closed {
			t.Errorf("%s: %d, closed %v; want %d, closed %v", tc.name, resp.StatusCode, resp.Close, tc.status, tc.closed)
		}
	}

	// A large upload refused before its body is read: the client, still
	// sending, reads the 401 rather than a reset connection (net/http
	// half-closes and waits for a body it closed early).
	for range 3 {
		req, _ := http.NewRequest(http.MethodPost, h.URL+"/admin/v1/mocks?name=big", strings.NewReader(`[`+strings.Repeat(`{"a":1},`, 1<<18)+`{"a":1}]`))
		req.Header.Set("Authorization", "Bearer wrong")
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("large upload refused for its token: %v", err)
		}
		resp.Body.Close()
		if resp.StatusCode != 401 || !resp.Close {
			t.Errorf("large upload refused for its token: %d, closed %v", resp.StatusCode, resp.Close)
		}
	}

	// A body sent to a read is not read: the answer closes.
	conn2, err := net.Dial("tcp", strings.TrimPrefix(h.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn2.Close()
	conn2.SetDeadline(time.Now().Add(10 * time.Second))
	io.WriteString(conn2, "GET /mock/"+m.ID+" HTTP/1.1\r\nHost: localhost\r\nContent-Length: 9\r\n\r\n"+body)
	resp, err := http.ReadResponse(bufio.NewReader(conn2), nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 || !resp.Close {
		t.Errorf("read with a body: %d, closed %v; want 200, closed", resp.StatusCode, resp.Close)
	}
}
