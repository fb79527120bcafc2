package server

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/decoy-mock/decoy"
)

// Error is an error answer decided by a handler: its status, the message
// the client reads, and the headers that go with it (Retry-After, Allow).
// Handlers return it, or any other error, and writeError answers.
type Error struct {
	Status int
	Msg    string
	Header http.Header
}

// Error implements error: the message, as a client reads it.
func (e *Error) Error() string { return e.Msg }

// errorAnswer returns an *Error; header holds pairs of names and values.
func errorAnswer(status int, msg string, header ...string) *Error {
	e := &Error{Status: status, Msg: msg}
	if len(header) > 0 {
		e.Header = http.Header{}
		for i := 0; i+1 < len(header); i += 2 {
			e.Header.Set(header[i], header[i+1])
		}
	}
	return e
}

var (
	errNotFound     = errorAnswer(http.StatusNotFound, "Not found")
	errMockNotFound = errorAnswer(http.StatusNotFound, "Mock api not found")
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

// writeError writes err as a JSON error: every error answer of the server
// goes through it. An *Error answers as it says; a decoy.Error with the
// status of its code and its message; any other error is internal: logged,
// and answered with a generic message.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	status, msg := http.StatusInternalServerError, decoy.ErrorMessage(err)
	h := w.Header()
	var he *Error
	switch {
	case errors.As(err, &he):
		status, msg = he.Status, he.Msg
		for k, v := range he.Header {
			h[k] = v
		}
	default:
		code := decoy.ErrorCode(err)
		if st, ok := statusOf[code]; ok {
			status = st
		}
		switch code {
		case decoy.EINTERNAL:
			s.log.Error("internal error", "method", r.Method, "path", redactInvitation(r.URL.Path), "err", err)
		case decoy.ENOSPACE:
			// The answer names the cause, not which file could not grow.
			s.log.Warn("disk full", "method", r.Method, "path", redactInvitation(r.URL.Path), "err", err)
		}
	}
	// Headers set for a body that is not sent.
	h.Del("Content-Encoding")
	delHeader(h, "ETag")
	h.Set("Cache-Control", "no-store")
	body := decoy.ErrorJSON(msg)
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}
