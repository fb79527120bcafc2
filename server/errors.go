package server

import (
	"context"
	"errors"
	"net/http"
	"strconv"

	"github.com/decoy-mock/decoy"
	"github.com/decoy-mock/decoy/admin"
	"github.com/decoy-mock/decoy/answer"
)

// writeError writes err as a JSON error: every error answer of the server,
// the admin API's included, goes through it. An *answer.Error answers as
// it says; a decoy.Error with the status of its code and its message; any
// other error is internal: logged, and answered with a generic message. A
// request whose body was cut for its pace answers 408 (see body.go). Every
// error answer but the Studio's carries CORS headers (see cors.go).
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	if slow := tooSlow(r); slow != nil {
		err = slow // the body's read failed for its pace, whatever the handler made of it
	}
	status, msg, header := answer.Of(err)
	if status >= 500 && errors.Is(r.Context().Err(), context.Canceled) {
		// The client left, and the work stopped for it: nobody reads an
		// answer, and the request is counted and logged as 499, not as a
		// failure of the server.
		return
	}
	h := w.Header()
	s.setErrorCORS(h, r)
	for k, v := range header {
		h[k] = v
	}
	var decided *answer.Error // by a handler, which knows the cause: not logged
	if !errors.As(err, &decided) {
		switch decoy.ErrorCode(err) {
		case decoy.EINTERNAL:
			s.log.Error("internal error", "method", r.Method, "path", admin.RedactPath(r.URL.Path), "err", err)
		case decoy.ENOSPACE:
			// The answer names the cause, not which file could not grow.
			s.log.Warn("disk full", "method", r.Method, "path", admin.RedactPath(r.URL.Path), "err", err)
		}
	}
	// Headers set for a body that is not sent.
	h.Del("Content-Encoding")
	answer.DelHeader(h, "ETag")
	h.Set("Cache-Control", "no-store")
	body := decoy.ErrorJSON(msg)
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}
