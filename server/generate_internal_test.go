package server

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/decoy-mock/decoy"
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
	if e.Kept(q) != nil || !bytes.Equal(e.Data, doc) {
		t.Errorf("the always mock's cached entry holds a generated answer")
	}
}
