package mockcache

import (
	"context"
	"sync"
	"time"

	"github.com/decoy-mock/decoy"
	"github.com/decoy-mock/decoy/generate"
)

// Templates keeps the templates of "always" mocks compiled, by mock
// and version: a change of template is a new version of the mock, which
// the cache of mocks learns of on every replica, so a template kept under
// an older version is never used. It is bounded: past maxTemplateBytes of
// template text, it starts again empty.
type Templates struct {
	mu    sync.Mutex
	m     map[string]compiledTemplate
	bytes int
	// maxBytes bounds the text of the templates kept (0: maxTemplateBytes).
	maxBytes int
}

type compiledTemplate struct {
	version int64
	created time.Time
	t       *generate.Template
	size    int
}

// maxTemplateBytes bounds the text of the templates kept compiled.
const maxTemplateBytes = 64 << 20

// Get returns mock m's template compiled, reading it from store (which
// must not be nil) and compiling it within lim when it is not kept for
// m's version.
func (c *Templates) Get(ctx context.Context, store decoy.TemplateStore, m *decoy.Mock, lim generate.Limits) (*generate.Template, error) {
	c.mu.Lock()
	ct, ok := c.m[m.ID]
	c.mu.Unlock()
	if ok && ct.version == m.Version && ct.created.Equal(m.CreatedAt) {
		return ct.t, nil
	}
	tpl, err := store.FindTemplate(ctx, m.ID)
	if err != nil {
		return nil, err
	}
	t, err := generate.Parse(tpl.ContentType, tpl.Body, lim)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	limit := c.maxBytes
	if limit <= 0 {
		limit = maxTemplateBytes
	}
	if c.m == nil || c.bytes+len(tpl.Body)-c.m[m.ID].size > limit {
		c.m, c.bytes = map[string]compiledTemplate{}, 0
	}
	c.bytes += len(tpl.Body) - c.m[m.ID].size
	c.m[m.ID] = compiledTemplate{version: m.Version, created: m.CreatedAt, t: t, size: len(tpl.Body)}
	return t, nil
}
