package admin

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/decoy-mock/decoy"
	"github.com/decoy-mock/decoy/secret"
)

// Without a store that creates mocks in one transaction, an import is
// refused before anything is read or stored: 501, not a half import.
func TestImportNeedsBatches(t *testing.T) {
	a := New(Config{AdminTokenHash: secret.Hash("admin")})
	req := httptest.NewRequest("POST", "/admin/v1/projects/"+decoy.DefaultProjectID+"/import", strings.NewReader(`{"users":[{"id":1}]}`))
	req.Header.Set("Authorization", "Bearer admin")
	err := a.Serve(httptest.NewRecorder(), req)
	if err != errNoImports {
		t.Fatalf("err = %v, want %v", err, errNoImports)
	}
	if errNoImports.Status != http.StatusNotImplemented {
		t.Errorf("status %d", errNoImports.Status)
	}
}

// TestImportSlots: imports run one at a time per workspace and maxImports
// at a time on the server; one workspace's import never waits for another
// workspace's while a slot is free; an import whose request ends while it
// waits leaves the queue, and nothing is left behind.
func TestImportSlots(t *testing.T) {
	is := newImportSlots()
	ctx := context.Background()
	start := func(ws string) func() {
		t.Helper()
		done, err := is.start(ctx, ws)
		if err != nil {
			t.Fatalf("start %s: %v", ws, err)
		}
		return done
	}
	// runs reports whether an import of ws starts without waiting (for
	// long: 10 s is slack for a loaded machine), and ends it.
	runs := func(ws string) bool {
		t.Helper()
		started := make(chan func(), 1)
		go func() {
			done, err := is.start(ctx, ws)
			if err != nil {
				t.Error(err)
				done = func() {}
			}
			started <- done
		}()
		select {
		case done := <-started:
			done()
			return true
		case <-time.After(10 * time.Second):
			return false
		}
	}
	// waits reports whether an import of ws waits: it gives up when its
	// request ends, after 20 ms.
	waits := func(ws string) bool {
		t.Helper()
		ended, end := context.WithTimeout(ctx, 20*time.Millisecond)
		defer end()
		done, err := is.start(ended, ws)
		if err == nil {
			done()
			return false
		}
		if err != errImportEnded {
			t.Fatalf("start %s: %v", ws, err)
		}
		return true
	}

	a := start("a") // a long import of workspace a
	if !runs("b") {
		t.Fatalf("workspace b waited for workspace a's import")
	}
	if !waits("a") {
		t.Errorf("a second import of workspace a did not wait for the first")
	}
	b := start("b")
	if !waits("c") {
		t.Errorf("a third import ran beside %d", maxImports)
	}
	b()
	if !runs("c") {
		t.Fatalf("workspace c waited with a slot free")
	}
	a()
	if len(is.workspaces) != 0 || len(is.server) != 0 {
		t.Errorf("left behind: %d workspaces, %d slots", len(is.workspaces), len(is.server))
	}
}
