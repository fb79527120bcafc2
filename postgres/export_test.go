package postgres

// SetAuditRetention sets how many audit entries of a workspace are kept and
// how often they are pruned, until the returned function restores them.
func SetAuditRetention(keep, every int64) (restore func()) {
	k, e := auditKeep, auditPruneEvery
	auditKeep, auditPruneEvery = keep, every
	return func() { auditKeep, auditPruneEvery = k, e }
}

// GoMigrations are the names of the migrations written in Go, applied
// among the files.
func GoMigrations() []string {
	var names []string
	for name := range goMigrations {
		names = append(names, name)
	}
	return names
}
