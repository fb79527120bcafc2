package mockcache

import (
	"sync"

	"github.com/decoy-mock/decoy/query"
)

// Queries remembers what recent query strings parse and compile to:
// apps poll the same URLs, and parsing and compiling a query was a tenth
// of the cost of a small read. A compiled query is never changed, so it is
// shared. A query string with a token in it is never kept.
type Queries struct {
	mu sync.RWMutex
	m  map[string]*Compiled
}

// Compiled is a query string parsed and compiled.
type Compiled struct {
	Params query.Params
	// Query is the compiled query, or nil with Err when the parameters
	// are not valid.
	Query *query.Query
	Err   error
}

// maxCachedQueries bounds the cache; past it, it starts again empty.
const maxCachedQueries = 1024

// maxCachedQueryLen is the longest query string kept: with the entries'
// number, it bounds the cache's memory (a request line may be 64 KiB long),
// and apps poll with short ones.
const maxCachedQueryLen = 2 << 10

// Get returns the parameters of raw and their compiled query (or the error
// that compiling them gave).
func (c *Queries) Get(raw string) *Compiled {
	c.mu.RLock()
	cq := c.m[raw]
	c.mu.RUnlock()
	if cq != nil {
		return cq
	}
	cq = &Compiled{Params: query.ParseParams(raw)}
	cq.Query, cq.Err = query.Compile(cq.Params)
	if cq.Params.AuthToken != "" || len(raw) > maxCachedQueryLen {
		return cq // secrets are not kept, nor long strings
	}
	c.mu.Lock()
	if len(c.m) >= maxCachedQueries || c.m == nil {
		c.m = make(map[string]*Compiled, maxCachedQueries)
	}
	c.m[raw] = cq
	c.mu.Unlock()
	return cq
}
