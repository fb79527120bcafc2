package postgres

// SetAuditRetention sets how many audit entries of a workspace are kept and
// how often they are pruned, until the returned function restores them.
func SetAuditRetention(keep, every int64) (restore func()) {
	k, e := auditKeep, auditPruneEvery
	auditKeep, auditPruneEvery = keep, every
	return func() { auditKeep, auditPruneEvery = k, e }
}
