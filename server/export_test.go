package server

// KeptAnswers returns how many answers the mock id, if in memory, keeps
// (see built.go).
func KeptAnswers(s *Server, id string) int {
	e := s.cache.peek(id)
	if e == nil || e.built == nil {
		return 0
	}
	e.built.mu.RLock()
	defer e.built.mu.RUnlock()
	n := 0
	for _, ba := range e.built.m {
		if ba.body != nil {
			n++
		}
	}
	return n
}
