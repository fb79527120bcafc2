-- The public reads of a workspace's mocks per UTC month ("YYYY-MM"),
-- counted against its monthly_reads limit (§6.2) by the QuotaCounter that
-- counts quota_usage: a key of the counter is a mock's id or a
-- workspace's (see quota.go), never both.
CREATE TABLE workspace_reads (
	workspace_id TEXT    NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
	month        TEXT    NOT NULL,
	used         INTEGER NOT NULL,
	PRIMARY KEY (workspace_id, month)
) WITHOUT ROWID;

-- The user a Studio session signed in (§6); NULL for the server admin,
-- signed in with the admin token. A user's sessions end with the user.
ALTER TABLE studio_sessions ADD COLUMN user_id TEXT REFERENCES users (id) ON DELETE CASCADE;
CREATE INDEX studio_sessions_user ON studio_sessions (user_id);
