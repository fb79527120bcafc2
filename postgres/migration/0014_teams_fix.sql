-- The public reads of a workspace's mocks per UTC month ("YYYY-MM"),
-- counted against its monthly_reads limit (§6.2) by the QuotaCounter that
-- counts quota_usage: a key of the counter is a mock's id or a
-- workspace's (see ReserveQuota), never both. The foreign key takes a KEY
-- SHARE lock, which the writes that lock a workspace's row (FOR NO KEY
-- UPDATE) do not wait for.
CREATE TABLE workspace_reads (
	workspace_id text   NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
	month        text   NOT NULL,
	used         bigint NOT NULL CHECK (used >= 0),
	PRIMARY KEY (workspace_id, month)
);

-- The user a Studio session signed in (§6); NULL for the server admin,
-- signed in with the admin token. A user's sessions end with the user.
ALTER TABLE studio_sessions ADD COLUMN user_id text REFERENCES users (id) ON DELETE CASCADE;
CREATE INDEX studio_sessions_user ON studio_sessions (user_id);
