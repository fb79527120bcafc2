package server

import (
	"bytes"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/decoy-mock/decoy"
)

// A decoy.Error of code ENOSPACE answers 507 with its message, and is
// logged with its cause.
func TestNoSpaceAnswers507(t *testing.T) {
	var logs bytes.Buffer
	s := New(Config{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	w := httptest.NewRecorder()
	r := httptest.NewRequest(http.MethodPost, "/admin/v1/mocks", nil)
	const msg = "Not enough disk space to receive this upload"
	cause := &os.PathError{Op: "write", Path: "/data/tmp/upload-1", Err: syscall.ENOSPC}
	s.writeError(w, r, fmt.Errorf("%w (write upload file: %w)", decoy.Errorf(decoy.ENOSPACE, msg), cause))
	want := `{"error":"` + msg + `"}` + "\n"
	if w.Code != http.StatusInsufficientStorage || w.Body.String() != want {
		t.Errorf("got %d %s, want 507 %s", w.Code, w.Body, want)
	}
	if !strings.Contains(logs.String(), "no space left on device") {
		t.Errorf("the cause is not logged: %s", logs.String())
	}
}
