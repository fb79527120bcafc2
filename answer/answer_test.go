package answer_test

import (
	"errors"
	"fmt"
	"net/http"
	"testing"

	"github.com/decoy-mock/decoy"
	"github.com/decoy-mock/decoy/answer"
)

func TestOf(t *testing.T) {
	limited := answer.New(http.StatusTooManyRequests, "Slow down", "Retry-After", "3")
	for _, tc := range []struct {
		name       string
		err        error
		status     int
		msg, retry string
	}{
		{"an answer with headers", limited, 429, "Slow down", "3"},
		{"an answer, wrapped", fmt.Errorf("serving: %w", limited), 429, "Slow down", "3"},
		{"a decoy error", decoy.Errorf(decoy.ENOTFOUND, "Mock api not found"), 404, "Mock api not found", ""},
		{"a full disk", fmt.Errorf("write: %w", decoy.Errorf(decoy.ENOSPACE, "Disk full")), 507, "Disk full", ""},
		{"any other error", errors.New("db: connection reset"), 500, "Internal server error", ""},
	} {
		status, msg, header := answer.Of(tc.err)
		if status != tc.status || msg != tc.msg || header.Get("Retry-After") != tc.retry {
			t.Errorf("%s: %d %q %v, want %d %q Retry-After %q", tc.name, status, msg, header, tc.status, tc.msg, tc.retry)
		}
	}
}
