package server

// SetBodyBudget bounds the request bodies s holds at once at n bytes: a
// test reaches the bound without sending 256 MiB. Each client's share
// stays as it was, so that the bound of all is what refuses.
func SetBodyBudget(s *Server, n int64) {
	s.bodies.mu.Lock()
	defer s.bodies.mu.Unlock()
	s.bodies.limit = n
}

// SetBodyShare bounds the request bodies of each client at n bytes.
func SetBodyShare(s *Server, n int64) {
	s.bodies.mu.Lock()
	defer s.bodies.mu.Unlock()
	s.bodies.share = n
}

// SetBodyBounds bounds the request bodies s holds at once at n bytes, and
// each client's share as the server derives it from n and
// --max-data-bytes.
func SetBodyBounds(s *Server, n int64) {
	b := newBodies(n, s.bodyLimit())
	s.bodies.mu.Lock()
	defer s.bodies.mu.Unlock()
	s.bodies.limit, s.bodies.share = b.limit, b.share
}

// SetDocBound lets writes grow a mock's document to n bytes, past
// --max-data-bytes, for a test of the bounds of bodies.
func SetDocBound(s *Server, n int64) { s.docBound = n }
