package server

import (
	"net/http/httptest"
	"testing"
)

// The rule that answered is noted on the request's recorder, under the
// wrappers between observe and the handler, for the access log and the
// request journal to read.
func TestNoteRule(t *testing.T) {
	rec := &recorder{ResponseWriter: httptest.NewRecorder()}
	w := &unreadCloser{ResponseWriter: rec, body: &trackedBody{}}
	noteRule(w, "slow")
	setStatus(w, faultStatus)
	if rec.journal.note.rule != "slow" || rec.status != 444 {
		t.Errorf("noted rule %q, status %d", rec.journal.note.rule, rec.status)
	}
	noteRule(httptest.NewRecorder(), "x") // not observed: nothing to note, no panic
}
