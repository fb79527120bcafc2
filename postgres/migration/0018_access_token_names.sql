-- Personal access tokens are listed and revoked by their users (§6): each
-- gets an id (a random UUID, never derived from the hash), a name, and its
-- last use, recorded in batches as an API key's is. Tokens made before are
-- named "token".
ALTER TABLE access_tokens ADD COLUMN id text;
ALTER TABLE access_tokens ADD COLUMN name text NOT NULL DEFAULT '';
ALTER TABLE access_tokens ADD COLUMN last_used_at timestamptz;
UPDATE access_tokens SET id = gen_random_uuid()::text, name = 'token';
ALTER TABLE access_tokens ALTER COLUMN id SET NOT NULL;
ALTER TABLE access_tokens ALTER COLUMN name DROP DEFAULT;
CREATE UNIQUE INDEX access_tokens_id ON access_tokens (id);
