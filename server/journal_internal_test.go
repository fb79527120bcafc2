package server

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/decoy-mock/decoy"
	"github.com/decoy-mock/decoy/journal"
)

// A project's request body is kept as the handler reads it: whole up to
// decoy.MaxJournalBody, cut and marked past it, and marked when the
// handler did not read it whole.
func TestJournalBody(t *testing.T) {
	ring := journal.NewRing(journal.RingConfig{Size: 100})
	j := journal.New(journal.Config{Store: ring})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { j.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	s := New(Config{Journal: j})
	big := strings.Repeat("é", decoy.MaxJournalBody) // two bytes each: twice the bound
	for _, tc := range []struct {
		name, path, body string
		chunked          bool
		read             int // bytes the handler reads; -1: all
		want             string
		cut              bool
	}{
		{"small, read", "/p/x/a", `{"name":"Ann"}`, false, -1, `{"name":"Ann"}`, false},
		{"small, chunked, read", "/p/x/a", `{"a":1}`, true, -1, `{"a":1}`, false},
		{"at the bound", "/p/x/a", strings.Repeat("a", decoy.MaxJournalBody), false, -1, strings.Repeat("a", decoy.MaxJournalBody), false},
		{"past the bound", "/p/x/a", big, false, -1, big[:decoy.MaxJournalBody], true},
		{"past the bound, chunked", "/p/x/a", big, true, -1, big[:decoy.MaxJournalBody], true},
		{"read in part", "/p/x/a", "0123456789", false, 4, "0123", true},
		{"not read", "/p/x/a", "0123456789", false, 0, "", true},
		{"read exactly, no EOF seen", "/p/x/a", "0123456789", false, 10, "0123456789", false},
		{"a read at /mock/, which reads no body", "/mock/x", "0123456789", false, -1, "", true},
		{"none", "/p/x/a", "", false, -1, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			project := tc.name
			h := s.observe(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				noteOf(w).project = project
				switch {
				case tc.read < 0:
					io.Copy(io.Discard, r.Body)
				case tc.read > 0:
					io.ReadFull(r.Body, make([]byte, tc.read))
				}
				w.WriteHeader(http.StatusTeapot)
			}))
			req := httptest.NewRequest("POST", tc.path, strings.NewReader(tc.body))
			if tc.chunked {
				req.ContentLength, req.TransferEncoding = -1, []string{"chunked"}
			}
			if tc.body == "" {
				req.ContentLength = 0
			}
			h.ServeHTTP(httptest.NewRecorder(), req)
			var es []*decoy.JournalEntry
			for deadline := time.Now().Add(5 * time.Second); len(es) == 0 && time.Now().Before(deadline); time.Sleep(time.Millisecond) {
				es, _, _ = ring.List(context.Background(), project, decoy.JournalFilter{}, "", 10)
			}
			if len(es) != 1 {
				t.Fatalf("%d entries", len(es))
			}
			e := es[0]
			if e.Body != tc.want || e.BodyCut != tc.cut || e.Status != http.StatusTeapot {
				t.Errorf("body of %d bytes, cut %v, status %d; want %d bytes, cut %v", len(e.Body), e.BodyCut, e.Status, len(tc.want), tc.cut)
			}
		})
	}
}
