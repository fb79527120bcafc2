-- Personal access tokens are listed and revoked by their users (§6): each
-- gets an id (a random UUID, never derived from the hash), a name, and its
-- last use, recorded in batches as an API key's is. Tokens made before are
-- named "token".
ALTER TABLE access_tokens ADD COLUMN id TEXT NOT NULL DEFAULT '';
ALTER TABLE access_tokens ADD COLUMN name TEXT NOT NULL DEFAULT '';
ALTER TABLE access_tokens ADD COLUMN last_used_at INTEGER;
UPDATE access_tokens SET name = 'token', id =
	lower(hex(randomblob(4))) || '-' || lower(hex(randomblob(2))) || '-4' || substr(lower(hex(randomblob(2))), 2) || '-'
	|| substr('89ab', 1 + (abs(random()) % 4), 1) || substr(lower(hex(randomblob(2))), 2) || '-' || lower(hex(randomblob(6)));
CREATE UNIQUE INDEX access_tokens_id ON access_tokens (id);
