package mockcache

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/decoy-mock/decoy"
	"github.com/decoy-mock/decoy/generate"
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
	c := &Templates{maxBytes: 3 * len(body)}
	mock := func(i int, version int64) *decoy.Mock {
		return &decoy.Mock{ID: string(rune('a' + i)), Version: version, CreatedAt: time.Unix(0, 0)}
	}
	for i := range 3 {
		store.bodies[mock(i, 1).ID] = body
		if _, err := c.Get(context.Background(), store, mock(i, 1), generate.Limits{}); err != nil {
			t.Fatal(err)
		}
	}
	if len(c.m) != 3 || c.bytes != 3*len(body) || store.reads != 3 {
		t.Fatalf("3 templates at the bound: %d kept, %d bytes, %d reads", len(c.m), c.bytes, store.reads)
	}
	// Kept: no store read. A new version of one: read again, same room.
	c.Get(context.Background(), store, mock(0, 1), generate.Limits{})
	c.Get(context.Background(), store, mock(1, 2), generate.Limits{})
	if len(c.m) != 3 || c.bytes != 3*len(body) || store.reads != 4 {
		t.Fatalf("a kept one and a new version: %d kept, %d bytes, %d reads", len(c.m), c.bytes, store.reads)
	}
	// A fourth passes the bound: the cache starts again with it alone.
	store.bodies[mock(3, 1).ID] = body
	c.Get(context.Background(), store, mock(3, 1), generate.Limits{})
	if len(c.m) != 1 || c.bytes != len(body) {
		t.Fatalf("past the bound: %d kept, %d bytes", len(c.m), c.bytes)
	}
}
