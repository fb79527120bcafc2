package server

import (
	"sync"

	"github.com/decoy-mock/decoy/query"
)

// queryCache remembers what recent query strings parse and compile to:
// apps poll the same URLs, and parsing and compiling a query was a tenth
// of the cost of a small read. A compiled query is never changed, so it is
// shared. A query string with a token in it is never kept.
type queryCache struct {
	mu sync.RWMutex
	m  map[string]*compiledQuery
}

type compiledQuery struct {
	params query.Params
	q      *query.Query
	err    error
}

// maxCachedQueries bounds the cache; past it, it starts again empty.
const maxCachedQueries = 1024

// get returns the parameters of raw and their compiled query (or the error
// that compiling them gave).
func (c *queryCache) get(raw string) *compiledQuery {
	c.mu.RLock()
	cq := c.m[raw]
	c.mu.RUnlock()
	if cq != nil {
		return cq
	}
	cq = &compiledQuery{params: query.ParseParams(raw)}
	cq.q, cq.err = query.Compile(cq.params)
	if cq.params.AuthToken != "" {
		return cq // secrets are not kept
	}
	c.mu.Lock()
	if len(c.m) >= maxCachedQueries || c.m == nil {
		c.m = make(map[string]*compiledQuery, maxCachedQueries)
	}
	c.m[raw] = cq
	c.mu.Unlock()
	return cq
}
