package mockcache

// SyncRemovals returns once the spilled files let go of so far are
// removed (see removeSoon).
func SyncRemovals() { syncRemovals() }

// MaxUnfit is maxUnfit, for tests.
const MaxUnfit = maxUnfit

// UnfitLen is how many mocks c.unfit names.
func UnfitLen(c *Cache) int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.unfit)
}
