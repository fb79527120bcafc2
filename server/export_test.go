package server

// SetBodyBudget bounds the request bodies s holds at once at n bytes, and
// each client at n too: a test reaches the bound without sending 256 MiB.
func SetBodyBudget(s *Server, n int64) {
	s.bodies.mu.Lock()
	defer s.bodies.mu.Unlock()
	s.bodies.limit, s.bodies.share = n, n
}
