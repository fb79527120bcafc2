package server

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/decoy-mock/decoy"
)

// templates is a TemplateStore of fixed templates, counting its reads.
type templates struct {
	decoy.TemplateStore
	bodies map[string]string
	reads  int
}

func (t *templates) FindTemplate(_ context.Context, id string) (*decoy.Template, error) {
	t.reads++
	return &decoy.Template{Mode: decoy.TemplateAlways, ContentType: "application/json", Body: []byte(t.bodies[id])}, nil
}

// TestTemplateCacheBound: the compiled templates kept hold at most maxBytes
// of template text; past it the cache starts again, and a template is
// compiled again only when its mock's version changed or it was dropped.
func TestTemplateCacheBound(t *testing.T) {
	body := `[` + strings.Repeat(`"{{ name }}",`, 30) + `1]` // 392 bytes
	store := &templates{bodies: map[string]string{}}
	c := &templateCache{maxBytes: 3 * len(body)}
	mock := func(i int, version int64) *decoy.Mock {
		return &decoy.Mock{ID: string(rune('a' + i)), Version: version, CreatedAt: time.Unix(0, 0)}
	}
	for i := range 3 {
		store.bodies[mock(i, 1).ID] = body
		if _, err := c.get(context.Background(), store, mock(i, 1)); err != nil {
			t.Fatal(err)
		}
	}
	if len(c.m) != 3 || c.bytes != 3*len(body) || store.reads != 3 {
		t.Fatalf("3 templates at the bound: %d kept, %d bytes, %d reads", len(c.m), c.bytes, store.reads)
	}
	// Kept: no store read. A new version of one: read again, same room.
	c.get(context.Background(), store, mock(0, 1))
	c.get(context.Background(), store, mock(1, 2))
	if len(c.m) != 3 || c.bytes != 3*len(body) || store.reads != 4 {
		t.Fatalf("a kept one and a new version: %d kept, %d bytes, %d reads", len(c.m), c.bytes, store.reads)
	}
	// A fourth passes the bound: the cache starts again with it alone.
	store.bodies[mock(3, 1).ID] = body
	c.get(context.Background(), store, mock(3, 1))
	if len(c.m) != 1 || c.bytes != len(body) {
		t.Fatalf("past the bound: %d kept, %d bytes", len(c.m), c.bytes)
	}
}

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
