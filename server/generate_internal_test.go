package server

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/decoy-mock/decoy"
	"github.com/decoy-mock/decoy/generate"
	"github.com/decoy-mock/decoy/inmem"
	"github.com/decoy-mock/decoy/secret"
	"github.com/decoy-mock/decoy/sqlite"
	"github.com/prometheus/client_golang/prometheus"
)

// TestGeneratedAnswersNotKept: the answers of a mock generating on every
// read are never kept as the stored data's (each read has its own data),
// while the same reads of a stored mock are.
func TestGeneratedAnswersNotKept(t *testing.T) {
	const stored, always = "00000000-0000-4000-8000-000000000001", "00000000-0000-4000-8000-000000000002"
	doc := users("x", 3000)
	s := boundedServer(t, map[string][]byte{stored: doc, always: doc})
	store := s.cfg.Store.(decoy.TemplateStore)
	s.cfg.Templates = store
	tpl := `{"$repeat":3000,"$item":{"id":"{{ index }}","tag":"x","age":"{{ number 0 89 }}","name":"{{ name }}"}}`
	if _, err := store.SetTemplate(context.Background(), always, decoy.Template{Mode: decoy.TemplateAlways, ContentType: "application/json", Body: []byte(tpl)}); err != nil {
		t.Fatal(err)
	}
	const q = "filters=tag%3Dx&order_by=age"
	bodies := map[string]bool{}
	for _, id := range []string{stored, always} {
		for range 4 {
			rec := httptest.NewRecorder()
			s.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/mock/"+id+"?"+q, nil))
			if rec.Code != 200 || rec.Header().Get("X-Total-Count") != "3000" {
				t.Fatalf("%s: %d %v", id, rec.Code, rec.Header())
			}
			if id == always {
				bodies[rec.Body.String()] = true
			}
		}
	}
	if len(bodies) != 4 {
		t.Errorf("4 reads of the always mock gave %d different answers", len(bodies))
	}
	if s.cache.Peek(stored).Kept(q) == nil {
		t.Fatalf("the stored mock's answer was not kept: the test proves nothing")
	}
	e := s.cache.Peek(always)
	if e.Kept(q) != nil || !bytes.Equal(e.Bytes(), doc) {
		t.Errorf("the always mock's cached entry holds a generated answer")
	}
}

// TestGeneratedReadBusy: a read of a mock generating on every read that
// finds no turn to generate (every turn taken, the queue full) answers 503
// with Retry-After, as JSON, and gives back its rate-limit slot: the load
// is not the client's doing. Once a turn is free, the same read is
// served.
func TestGeneratedReadBusy(t *testing.T) {
	const id = "00000000-0000-4000-8000-000000000001"
	s := boundedServer(t, map[string][]byte{id: []byte(`[]`)})
	store := s.cfg.Store.(decoy.TemplateStore)
	s.cfg.Templates, s.cfg.DefaultRateLimit = store, 2
	s.generation = generate.NewQueue(generate.QueueConfig{Workers: 1, Waiting: 1, Timeout: time.Minute, MaxBytes: 1 << 20})
	if _, err := store.SetTemplate(context.Background(), id, decoy.Template{Mode: decoy.TemplateAlways, ContentType: "application/json", Body: []byte(`[{"n":"{{ name }}"}]`)}); err != nil {
		t.Fatal(err)
	}
	read := func() *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/mock/"+id, nil))
		return rec
	}

	free := fillGeneration(t, s)
	for range 3 { // more than the rate limit
		wantBusy(t, read())
	}
	free()

	// The refused reads took nothing of the rate limit.
	for i := range 2 {
		if rec := read(); rec.Code != http.StatusOK {
			t.Fatalf("read %d once a turn is free: %d %v %s", i, rec.Code, rec.Header(), rec.Body)
		}
	}
	if rec := read(); rec.Code != http.StatusTooManyRequests {
		t.Errorf("a read past the rate limit: %d", rec.Code)
	}
}

// TestAdminGenerationBusy: the admin API's generations take their turns
// among the read endpoint's: with none to be had, a preview, a template
// set, a regeneration and an import that generates answer 503 with
// Retry-After, and nothing is stored; an import that generates nothing
// goes on.
func TestAdminGenerationBusy(t *testing.T) {
	ctx := context.Background()
	store, err := sqlite.Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	const token = "admin-token"
	s := New(Config{Store: store, Quota: store, Templates: store, Routes: store, QuotaInMemory: true, Limiter: inmem.NewLimiter(), AuthFailures: inmem.NewLimiter(),
		AdminTokenHash: secret.Hash(token), MaxDataBytes: 1 << 20, UploadDir: t.TempDir(), Registry: prometheus.NewRegistry()})
	s.generation = generate.NewQueue(generate.QueueConfig{Workers: 1, Waiting: 1, Timeout: time.Minute, MaxBytes: 1 << 20})
	do := func(method, path, body string) *httptest.ResponseRecorder {
		t.Helper()
		r := httptest.NewRequest(method, path, strings.NewReader(body))
		r.Header.Set("Authorization", "Bearer "+token)
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, r)
		return rec
	}
	rec := do(http.MethodPost, "/admin/v1/mocks", `[]`)
	var m decoy.Mock
	if err := json.Unmarshal(rec.Body.Bytes(), &m); err != nil || rec.Code != http.StatusCreated {
		t.Fatalf("create: %d %s", rec.Code, rec.Body)
	}
	const tpl = `[{"n":"{{ name }}"}]`
	if rec := do(http.MethodPut, "/admin/v1/mocks/"+m.ID+"/template?mode=once", tpl); rec.Code != http.StatusOK {
		t.Fatalf("PUT template: %d %s", rec.Code, rec.Body)
	}
	data := do(http.MethodGet, "/admin/v1/mocks/"+m.ID+"/data", "").Body.String()

	free := fillGeneration(t, s)
	wantBusy(t, do(http.MethodPost, "/admin/v1/generate", tpl))
	wantBusy(t, do(http.MethodPut, "/admin/v1/mocks/"+m.ID+"/template?mode=always", tpl))
	wantBusy(t, do(http.MethodPost, "/admin/v1/mocks/"+m.ID+"/regenerate", ""))
	importPath := "/admin/v1/projects/" + decoy.DefaultProjectID + "/import"
	wantBusy(t, do(http.MethodPost, importPath+"?format=openapi", `{"openapi":"3.1.0","info":{"title":"t","version":"1"},"paths":{"/n":{"get":{"responses":{"200":{"description":"ok","content":{"application/json":{"schema":{"type":"integer"}}}}}}}}}`))
	if rec := do(http.MethodPost, importPath+"?format=json-server", `{"kept":[1]}`); rec.Code != http.StatusCreated {
		t.Errorf("an import that generates nothing, busy: %d %s", rec.Code, rec.Body)
	}
	free()
	var listed struct{ Mocks []decoy.Mock }
	if err := json.Unmarshal(do(http.MethodGet, "/admin/v1/mocks", "").Body.Bytes(), &listed); err != nil || len(listed.Mocks) != 2 {
		t.Errorf("mocks after the refused import: %d (%v), want 2", len(listed.Mocks), err)
	}

	if got := do(http.MethodGet, "/admin/v1/mocks/"+m.ID+"/template", ""); got.Header().Get("Decoy-Template-Mode") != "once" {
		t.Errorf("a refused PUT changed the template: %v", got.Header())
	}
	if got := do(http.MethodGet, "/admin/v1/mocks/"+m.ID+"/data", "").Body.String(); got != data {
		t.Errorf("a refused regeneration changed the data")
	}
	if rec := do(http.MethodPost, "/admin/v1/generate", tpl); rec.Code != http.StatusOK {
		t.Errorf("a preview once a turn is free: %d %s", rec.Code, rec.Body)
	}
}

// fillGeneration takes every turn to generate of s (whose queue has one)
// and the one place to wait for it, and returns the function that frees
// them.
func fillGeneration(t *testing.T, s *Server) (free func()) {
	t.Helper()
	_, end, err := s.generation.Start(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	waiting, leave := context.WithCancel(context.Background())
	left := make(chan error, 1)
	go func() {
		_, _, err := s.generation.Start(waiting, 0)
		left <- err
	}()
	for s.generation.Waiting() == 0 {
		time.Sleep(time.Millisecond) // until it waits: a state, not a window
	}
	return func() {
		leave()
		<-left
		end()
	}
}

// wantBusy checks the answer of a generation that found no turn.
func wantBusy(t *testing.T, rec *httptest.ResponseRecorder) {
	t.Helper()
	if rec.Code != http.StatusServiceUnavailable || rec.Header().Get("Retry-After") != "60" ||
		rec.Body.String() != `{"error":"The server is busy generating data for other requests; try again shortly"}`+"\n" {
		t.Fatalf("busy: %d %v %s", rec.Code, rec.Header(), rec.Body)
	}
}
