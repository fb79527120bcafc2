-- Teams (§6 of the contract): users, their access tokens, workspaces with
-- their members, invitations, projects, API keys and audit log. Mocks move
-- into projects; those made before this migration go to the default
-- workspace and its project "default", whose ids are fixed (see
-- decoy.DefaultWorkspaceID). Times are Unix milliseconds. seq columns give
-- listing orders and cursors, as mocks.seq does.

-- email_key is the email folded for comparison (decoy.EmailKey): emails are
-- unique whatever their case.
CREATE TABLE users (
	seq           INTEGER PRIMARY KEY AUTOINCREMENT,
	id            TEXT    NOT NULL UNIQUE,
	email         TEXT    NOT NULL,
	email_key     TEXT    NOT NULL UNIQUE,
	name          TEXT    NOT NULL DEFAULT '',
	server_admin  INTEGER NOT NULL DEFAULT 0,
	password_hash BLOB,
	created_at    INTEGER NOT NULL
);

-- Personal access tokens, by the SHA-256 of their secret.
CREATE TABLE access_tokens (
	hash       BLOB    NOT NULL PRIMARY KEY,
	user_id    TEXT    NOT NULL REFERENCES users (id) ON DELETE CASCADE,
	created_at INTEGER NOT NULL,
	expires_at INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX access_tokens_user ON access_tokens (user_id, created_at);
CREATE INDEX access_tokens_expires ON access_tokens (expires_at);

-- A NULL limit is no limit.
CREATE TABLE workspaces (
	seq           INTEGER PRIMARY KEY AUTOINCREMENT,
	id            TEXT    NOT NULL UNIQUE,
	name          TEXT    NOT NULL,
	max_mocks     INTEGER,
	max_bytes     INTEGER,
	monthly_reads INTEGER,
	created_at    INTEGER NOT NULL
);

-- The rule that a workspace keeps an owner is the store's (teams.go): it
-- spans rows.
CREATE TABLE members (
	workspace_id TEXT NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
	user_id      TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
	role         TEXT NOT NULL CHECK (role IN ('owner', 'editor', 'viewer')),
	PRIMARY KEY (workspace_id, user_id)
) WITHOUT ROWID;
CREATE INDEX members_user ON members (user_id);

-- Pending invitations, by the SHA-256 of the secret in their link.
CREATE TABLE invitations (
	hash         BLOB    NOT NULL PRIMARY KEY,
	workspace_id TEXT    NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
	email        TEXT    NOT NULL,
	email_key    TEXT    NOT NULL,
	role         TEXT    NOT NULL CHECK (role IN ('owner', 'editor', 'viewer')),
	created_at   INTEGER NOT NULL,
	expires_at   INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX invitations_workspace ON invitations (workspace_id, email_key);
CREATE INDEX invitations_expires ON invitations (expires_at);

CREATE TABLE projects (
	seq          INTEGER PRIMARY KEY AUTOINCREMENT,
	id           TEXT    NOT NULL UNIQUE,
	workspace_id TEXT    NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
	name         TEXT    NOT NULL,
	created_at   INTEGER NOT NULL,
	UNIQUE (workspace_id, name)
);

-- A key limited to a project goes with it: it must never widen to the
-- whole workspace.
CREATE TABLE api_keys (
	seq          INTEGER PRIMARY KEY AUTOINCREMENT,
	id           TEXT    NOT NULL UNIQUE,
	workspace_id TEXT    NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
	project_id   TEXT    REFERENCES projects (id) ON DELETE CASCADE,
	name         TEXT    NOT NULL DEFAULT '',
	role         TEXT    NOT NULL CHECK (role IN ('editor', 'viewer')),
	hash         BLOB    NOT NULL UNIQUE,
	expires_at   INTEGER,
	created_at   INTEGER NOT NULL,
	last_used_at INTEGER,
	revoked_at   INTEGER
);
CREATE INDEX api_keys_workspace ON api_keys (workspace_id, seq);

-- The audit log, paged newest first per workspace by seq. An entry of no
-- workspace (users, made by server admins) has a NULL workspace_id.
CREATE TABLE audit_log (
	seq          INTEGER PRIMARY KEY AUTOINCREMENT,
	workspace_id TEXT    REFERENCES workspaces (id) ON DELETE CASCADE,
	at           INTEGER NOT NULL,
	actor_kind   TEXT    NOT NULL,
	actor_id     TEXT    NOT NULL DEFAULT '',
	actor_label  TEXT    NOT NULL DEFAULT '',
	action       TEXT    NOT NULL,
	target_kind  TEXT    NOT NULL DEFAULT '',
	target_id    TEXT    NOT NULL DEFAULT '',
	target_name  TEXT    NOT NULL DEFAULT '',
	ip           TEXT    NOT NULL DEFAULT ''
);
CREATE INDEX audit_log_workspace ON audit_log (workspace_id, seq);

INSERT INTO workspaces (id, name, created_at)
VALUES ('2e6ecac9-ec3b-5885-a9fc-df77758708ee', 'default', CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER));
INSERT INTO projects (id, workspace_id, name, created_at)
VALUES ('a46aab13-8714-5241-b061-dbe8a7f1fe99', '2e6ecac9-ec3b-5885-a9fc-df77758708ee', 'default',
	CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER));

-- Every existing mock moves to the default project, by the columns'
-- defaults. SQLite adds no foreign key to an existing table, and rebuilding
-- mocks would cascade into its counts: the store checks the project of a
-- new mock, and that a project it deletes is empty, under its write lock
-- (teams.go).
ALTER TABLE mocks ADD COLUMN workspace_id TEXT NOT NULL DEFAULT '2e6ecac9-ec3b-5885-a9fc-df77758708ee';
ALTER TABLE mocks ADD COLUMN project_id TEXT NOT NULL DEFAULT 'a46aab13-8714-5241-b061-dbe8a7f1fe99';
CREATE INDEX mocks_workspace ON mocks (workspace_id, seq);
CREATE INDEX mocks_project ON mocks (project_id, seq);
