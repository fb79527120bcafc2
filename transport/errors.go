package transport

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"

	"github.com/decoy-mock/decoy"
)

// JSONErrors returns ln with each connection's writes watched for the
// plain-text answers net/http writes itself, before any handler runs, to
// requests it cannot parse (a bad escape in the target, a malformed header,
// a head over maxHeaderBytes): each is replaced by the same status with
// Decoy's JSON error body. Every other write passes through unchanged.
//
// maxHeaderBytes is the http.Server's MaxHeaderBytes, named in the 431
// answer. header are header lines ("Name: value") that each of those
// answers carries besides its own (see Reply): the server's CORS policy,
// so that a browser app reads the JSON error as it reads a handler's.
// Nothing here parses the request, so they cannot depend on it (on its
// Origin, say). Wrap the listener net/http serves: under TLS, the
// connections that carry HTTP/1.x (see TLS).
func JSONErrors(ln net.Listener, maxHeaderBytes int, header ...string) net.Listener {
	if maxHeaderBytes <= 0 {
		maxHeaderBytes = http.DefaultMaxHeaderBytes
	}
	return &jsonErrorsListener{Listener: ln, maxHeader: maxHeaderBytes, header: slices.Clone(header)}
}

type jsonErrorsListener struct {
	net.Listener
	maxHeader int
	header    []string
}

// Accept implements net.Listener.
func (l *jsonErrorsListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &errorConn{Conn: c, maxHeader: l.maxHeader, header: l.header}, nil
}

// errorConn rewrites net/http's fixed error answers as they are written.
// net/http writes each in one call to the connection (fmt.Fprintf on it,
// not through the response's buffer), so one Write holds one whole answer.
type errorConn struct {
	net.Conn
	maxHeader int
	// header are the extra header lines of a rewritten answer.
	header []string
	// gather is the answer being gathered (see Gather), nil when none.
	gather *gathering
}

// Write implements net.Conn.
func (c *errorConn) Write(p []byte) (int, error) {
	if c.gather != nil {
		return c.gatherWrite(p)
	}
	if reply, ok := Rewrite(p, c.maxHeader, c.header...); ok {
		if _, err := c.Conn.Write(reply); err != nil {
			return 0, err
		}
		return len(p), nil
	}
	return c.Conn.Write(p)
}

// ReadFrom lets net/http hand a response body to the connection's own
// ReadFrom (sendfile for a file), as it does on a *net.TCPConn. Bodies are
// never net/http's error answers, which it writes with Write.
func (c *errorConn) ReadFrom(r io.Reader) (int64, error) {
	if c.gather != nil {
		if err := c.sendGathered(); err != nil {
			return 0, err
		}
	}
	if rf, ok := c.Conn.(io.ReaderFrom); ok {
		return rf.ReadFrom(r)
	}
	return io.Copy(writerOnly{c.Conn}, r)
}

// CloseWrite lets net/http half-close the connection, as on *net.TCPConn:
// it does so after a 431, so that the client reads the answer.
func (c *errorConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// NetConn returns the connection underneath.
func (c *errorConn) NetConn() net.Conn { return c.Conn }

func (c *errorConn) gatherer() *errorConn { return c }

// direct returns the connection underneath, under this package's own
// wraps: a *net.TCPConn, whose writes of net.Buffers are one writev.
func (c *errorConn) direct() net.Conn {
	if lc, ok := c.Conn.(*limitedConn); ok {
		return lc.Conn
	}
	return c.Conn
}

// writerOnly hides every method of a writer but Write, so that io.Copy
// copies through it rather than calling ReadFrom again.
type writerOnly struct{ io.Writer }

// net/http's error answers, as net/http 1.22 and later write them: a status
// line, these headers, then a short text.
const (
	errorHeaders = "\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n"
	// maxErrorAnswer bounds what is taken for an error answer: net/http's
	// texts are a few dozen bytes.
	maxErrorAnswer = 512
	// expectationFailed and expectationEnd frame net/http's answer, with
	// no body, to an Expect header other than 100-continue: after
	// "HTTP/1.x", then the Date header's value.
	expectationFailed = " 417 Expectation Failed\r\nConnection: close\r\nDate: "
	expectationEnd    = "\r\nContent-Length: 0\r\n\r\n"
)

const genericMalformed = "Malformed request: the request line or a header cannot be parsed (is every % in the URL followed by two hex digits?)"

// Rewrite returns the JSON answer that replaces p when p is one of
// net/http's plain-text error answers, whole; else it returns false. The
// answer carries the header lines given (see Reply).
func Rewrite(p []byte, maxHeaderBytes int, header ...string) ([]byte, bool) {
	if len(p) > maxErrorAnswer || !bytes.HasPrefix(p, []byte("HTTP/1.")) {
		return nil, false
	}
	if isExpectationFailed(p) {
		return Reply(http.StatusExpectationFailed, "Unsupported Expect header: only 100-continue is supported", header...), true
	}
	// "HTTP/1.1 NNN Text[: detail]" errorHeaders body
	line, body, ok := bytes.Cut(p, []byte(errorHeaders))
	if !ok || len(line) < len("HTTP/1.1 NNN ") || !bytes.HasPrefix(line, []byte("HTTP/1.1 ")) || line[12] != ' ' {
		return nil, false
	}
	status, err := strconv.Atoi(string(line[9:12]))
	text := http.StatusText(status)
	if err != nil || status < 400 || text == "" || !bytes.HasPrefix(line[13:], []byte(text)) {
		return nil, false
	}
	detail := string(line[13+len(text):])
	switch {
	case detail == "" && string(body) == string(line[9:]):
	case detail == "" && status == http.StatusNotImplemented && string(body) == "Unsupported transfer encoding":
	case len(detail) > 2 && detail[:2] == ": " && string(body) == string(line[9:]):
		detail = detail[2:]
	default:
		return nil, false
	}
	return Reply(status, errorMessage(status, detail, maxHeaderBytes), header...), true
}

// isExpectationFailed reports whether p is net/http's answer to an
// unsupported Expect header. No handler of Decoy's writes that head: its
// answers all carry a Content-Type.
func isExpectationFailed(p []byte) bool {
	if len(p) < len("HTTP/1.x") || p[7] != '0' && p[7] != '1' {
		return false
	}
	rest, ok := bytes.CutPrefix(p[len("HTTP/1.x"):], []byte(expectationFailed))
	if !ok {
		return false
	}
	date, ok := bytes.CutSuffix(rest, []byte(expectationEnd))
	if !ok {
		return false
	}
	_, err := http.ParseTime(string(date))
	return err == nil
}

// errorMessage is the message of the JSON answer that replaces net/http's
// answer of status, whose text went on with detail.
func errorMessage(status int, detail string, maxHeaderBytes int) string {
	switch status {
	case http.StatusRequestHeaderFieldsTooLarge:
		return "Request headers too large (at most " + byteSize(maxHeaderBytes) + ")"
	case http.StatusHTTPVersionNotSupported:
		return "HTTP version not supported"
	case http.StatusNotImplemented:
		return "Unsupported Transfer-Encoding: only chunked is supported"
	}
	if detail == "" {
		// net/http gives no reason for these: a target that is not a
		// URL (a bad %-escape, a control byte), a method, version or
		// header line it cannot read.
		return genericMalformed
	}
	return "Malformed request: " + detail
}

// Reply is a whole HTTP/1.1 answer carrying a JSON error, for answers
// written on a connection rather than through net/http, with extra header
// lines ("Retry-After: 1"). The connection is closed after it.
func Reply(status int, msg string, header ...string) []byte {
	body := decoy.ErrorJSON(msg)
	b := fmt.Appendf(nil, "HTTP/1.1 %d %s\r\n"+
		"Content-Type: application/json\r\n"+
		"Content-Length: %d\r\n"+
		"Cache-Control: no-store\r\n"+
		"X-Content-Type-Options: nosniff\r\n"+
		"Connection: close\r\n",
		status, http.StatusText(status), len(body))
	for _, h := range header {
		b = append(append(b, h...), "\r\n"...)
	}
	return append(append(b, "\r\n"...), body...)
}

// byteSize formats n for people: 64 KiB, 1 MiB, 1000 bytes.
func byteSize(n int) string {
	switch {
	case n%(1<<20) == 0:
		return strconv.Itoa(n>>20) + " MiB"
	case n%(1<<10) == 0:
		return strconv.Itoa(n>>10) + " KiB"
	}
	return strconv.Itoa(n) + " bytes"
}
