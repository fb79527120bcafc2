package mockcache

// SyncRemovals returns once the spilled files let go of so far are
// removed (see removeSoon).
func SyncRemovals() { syncRemovals() }
