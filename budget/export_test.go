package budget

// Kept reports whether k is kept, without using it (for tests, which
// would otherwise change the recency they check).
func (s *Set) Kept(k Key) bool {
	m := s.items.Load()
	if m == nil {
		return false
	}
	it := (*m)[k]
	return it != nil && it.ready.Load() && it.v != nil
}
