-- Teams (§6 of the contract): users, their access tokens, workspaces with
-- their members, invitations, projects, API keys and audit log. Mocks move
-- into projects; those made before this migration go to the default
-- workspace and its project "default", whose ids are fixed (see
-- decoy.DefaultWorkspaceID). Times are timestamptz holding whole
-- milliseconds (see DB.now). seq columns give listing orders and cursors,
-- as mocks.seq does.

-- email_key is the email folded for comparison (decoy.EmailKey): emails are
-- unique whatever their case.
CREATE TABLE users (
	seq           bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	id            text        NOT NULL UNIQUE,
	email         text        NOT NULL,
	email_key     text        NOT NULL UNIQUE,
	name          text        NOT NULL DEFAULT '',
	server_admin  boolean     NOT NULL DEFAULT false,
	password_hash bytea,
	created_at    timestamptz NOT NULL
);

-- Personal access tokens, by the SHA-256 of their secret.
CREATE TABLE access_tokens (
	hash       bytea       NOT NULL PRIMARY KEY,
	user_id    text        NOT NULL REFERENCES users (id) ON DELETE CASCADE,
	created_at timestamptz NOT NULL,
	expires_at timestamptz NOT NULL
);
CREATE INDEX access_tokens_user ON access_tokens (user_id, created_at);
CREATE INDEX access_tokens_expires ON access_tokens (expires_at);

-- A NULL limit is no limit. Writes that a limit or the last-owner rule
-- decides lock the workspace's row (FOR NO KEY UPDATE, see teams.go).
CREATE TABLE workspaces (
	seq           bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	id            text        NOT NULL UNIQUE,
	name          text        NOT NULL,
	max_mocks     bigint,
	max_bytes     bigint,
	monthly_reads bigint,
	created_at    timestamptz NOT NULL
);

-- The rule that a workspace keeps an owner is the store's (teams.go): it
-- spans rows.
CREATE TABLE members (
	workspace_id text NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
	user_id      text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
	role         text NOT NULL CHECK (role IN ('owner', 'editor', 'viewer')),
	PRIMARY KEY (workspace_id, user_id)
);
CREATE INDEX members_user ON members (user_id);

-- Pending invitations, by the SHA-256 of the secret in their link.
CREATE TABLE invitations (
	hash         bytea       NOT NULL PRIMARY KEY,
	workspace_id text        NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
	email        text        NOT NULL,
	email_key    text        NOT NULL,
	role         text        NOT NULL CHECK (role IN ('owner', 'editor', 'viewer')),
	created_at   timestamptz NOT NULL,
	expires_at   timestamptz NOT NULL
);
CREATE INDEX invitations_workspace ON invitations (workspace_id, email_key);
CREATE INDEX invitations_expires ON invitations (expires_at);

CREATE TABLE projects (
	seq          bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	id           text        NOT NULL UNIQUE,
	workspace_id text        NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
	name         text        NOT NULL,
	created_at   timestamptz NOT NULL,
	UNIQUE (workspace_id, name),
	UNIQUE (workspace_id, id)
);

-- A key limited to a project goes with it: it must never widen to the
-- whole workspace.
CREATE TABLE api_keys (
	seq          bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	id           text        NOT NULL UNIQUE,
	workspace_id text        NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
	project_id   text        REFERENCES projects (id) ON DELETE CASCADE,
	name         text        NOT NULL DEFAULT '',
	role         text        NOT NULL CHECK (role IN ('editor', 'viewer')),
	hash         bytea       NOT NULL UNIQUE,
	expires_at   timestamptz,
	created_at   timestamptz NOT NULL,
	last_used_at timestamptz,
	revoked_at   timestamptz
);
CREATE INDEX api_keys_workspace ON api_keys (workspace_id, seq);
CREATE INDEX api_keys_project ON api_keys (project_id);

-- The audit log, paged newest first per workspace by seq. An entry of no
-- workspace (users, made by server admins) has a NULL workspace_id.
CREATE TABLE audit_log (
	seq          bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	workspace_id text        REFERENCES workspaces (id) ON DELETE CASCADE,
	at           timestamptz NOT NULL,
	actor_kind   text        NOT NULL,
	actor_id     text        NOT NULL DEFAULT '',
	actor_label  text        NOT NULL DEFAULT '',
	action       text        NOT NULL,
	target_kind  text        NOT NULL DEFAULT '',
	target_id    text        NOT NULL DEFAULT '',
	target_name  text        NOT NULL DEFAULT '',
	ip           text        NOT NULL DEFAULT ''
);
CREATE INDEX audit_log_workspace ON audit_log (workspace_id, seq);

INSERT INTO workspaces (id, name, created_at)
VALUES ('2e6ecac9-ec3b-5885-a9fc-df77758708ee', 'default', date_trunc('milliseconds', now()));
INSERT INTO projects (id, workspace_id, name, created_at)
VALUES ('a46aab13-8714-5241-b061-dbe8a7f1fe99', '2e6ecac9-ec3b-5885-a9fc-df77758708ee', 'default', date_trunc('milliseconds', now()));

-- Every existing mock moves to the default project. The foreign key holds a
-- mock's workspace and project together, and keeps a project that holds
-- mocks from being deleted (DeleteProject empties it first).
ALTER TABLE mocks
	ADD COLUMN workspace_id text,
	ADD COLUMN project_id text;
UPDATE mocks SET workspace_id = '2e6ecac9-ec3b-5885-a9fc-df77758708ee', project_id = 'a46aab13-8714-5241-b061-dbe8a7f1fe99';
ALTER TABLE mocks
	ALTER COLUMN workspace_id SET NOT NULL,
	ALTER COLUMN project_id SET NOT NULL,
	ADD FOREIGN KEY (workspace_id, project_id) REFERENCES projects (workspace_id, id);
CREATE INDEX mocks_workspace ON mocks (workspace_id, seq);
CREATE INDEX mocks_project ON mocks (project_id, seq);
