// Package answer is what Decoy's HTTP handlers answer with, shared by the
// read endpoint and the admin API: Error, the error a handler returns to
// be answered with a status, a message and headers of its choosing; the
// one table from the codes of decoy.Error to HTTP statuses; and JSON, the
// writer of every JSON body that is not an error. The server writes every
// error answer, in one function (server.Server's writeError).
package answer

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/decoy-mock/decoy"
)

// Error is an error answer decided by a handler: its status, the message
// the client reads, and the headers that go with it (Retry-After, Allow).
// Handlers return it, or any other error, and the server answers.
type Error struct {
	Status int
	Msg    string
	Header http.Header
}

// Error implements error: the message, as a client reads it.
func (e *Error) Error() string { return e.Msg }

// New returns an *Error; header holds pairs of names and values.
func New(status int, msg string, header ...string) *Error {
	e := &Error{Status: status, Msg: msg}
	if len(header) > 0 {
		e.Header = http.Header{}
		for i := 0; i+1 < len(header); i += 2 {
			e.Header.Set(header[i], header[i+1])
		}
	}
	return e
}

// Answers that more than one part of the server gives.
var (
	ErrNotFound     = New(http.StatusNotFound, "Not found")
	ErrMockNotFound = New(http.StatusNotFound, "Mock api not found")
	// ErrNoTemplates answers the template calls of a server whose store
	// keeps no templates.
	ErrNoTemplates = New(http.StatusNotImplemented, "This server's store does not keep templates")
)

// statusOf maps the codes of decoy.Error to HTTP statuses: the one table.
var statusOf = map[string]int{
	decoy.ECONFLICT:     http.StatusConflict,
	decoy.EINTERNAL:     http.StatusInternalServerError,
	decoy.EINVALID:      http.StatusBadRequest,
	decoy.ENOTFOUND:     http.StatusNotFound,
	decoy.ETOOLARGE:     http.StatusRequestEntityTooLarge,
	decoy.EUNAUTHORIZED: http.StatusUnauthorized,
	decoy.EUNAVAILABLE:  http.StatusServiceUnavailable,
	decoy.ERATELIMIT:    http.StatusTooManyRequests,
	decoy.EMETHOD:       http.StatusMethodNotAllowed,
	decoy.EUNSUPPORTED:  http.StatusUnsupportedMediaType,
	decoy.EFORBIDDEN:    http.StatusForbidden,
	decoy.ENOSPACE:      http.StatusInsufficientStorage,
}

// StatusOf returns the HTTP status of a code of decoy.Error: 500 for an
// unknown one.
func StatusOf(code string) int {
	if st, ok := statusOf[code]; ok {
		return st
	}
	return http.StatusInternalServerError
}

// Of returns what err answers with: an *Error's status, message and
// headers; for any other error, the status of its code (StatusOf) and the
// message of decoy.ErrorMessage, generic unless it is a *decoy.Error.
func Of(err error) (status int, msg string, header http.Header) {
	var e *Error
	if errors.As(err, &e) {
		return e.Status, e.Msg, e.Header
	}
	return StatusOf(decoy.ErrorCode(err)), decoy.ErrorMessage(err), nil
}

// JSON writes v as a JSON body with status. A value that cannot be
// encoded answers 500.
func JSON(w http.ResponseWriter, status int, v any) {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		status = http.StatusInternalServerError
		b.Reset()
		b.WriteString(`{"error":"Internal server error"}` + "\n")
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(b.Len()))
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(b.String()))
}

// SetHeader sets a header under exactly the name given. net/http would
// write ETag as Etag and X-RateLimit-Limit as X-Ratelimit-Limit; header
// names are case-insensitive, but people read them.
func SetHeader(h http.Header, name, value string) {
	delete(h, http.CanonicalHeaderKey(name))
	h[name] = []string{value}
}

// DelHeader deletes a header set by SetHeader or Set.
func DelHeader(h http.Header, name string) {
	delete(h, name)
	delete(h, http.CanonicalHeaderKey(name))
}
