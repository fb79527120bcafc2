-- Routes (§11 of the contract): a project answers at its API's own paths,
-- under its slug.
--
-- slug is unique on the server: it starts NULL, the step
-- 0016_project_slugs derives every existing project's in Go
-- (decoy.Slugify, in creation order: see slugs.go), and
-- 0017_project_slugs_unique.sql makes it NOT NULL and unique. Slugs are
-- ASCII, compared byte by byte whatever the database's collation, so that
-- the slugs that start with a prefix are one range of its index.
-- routes_version advances with every change to the project's routes or
-- slug, so that a replica serving them from memory can tell whether its
-- copy is current.
ALTER TABLE projects
	ADD COLUMN slug text COLLATE "C",
	ADD COLUMN routes_version bigint NOT NULL DEFAULT 0;

-- A route ties a method and a path template to one of its project's mocks.
-- shape is the path with its parameters' names left out (decoy.PathShape):
-- two routes of a project may not share a method and a shape. A deleted
-- mock takes its routes with it. bind is a JSON object; items and
-- request_schema are NULL when the route has none. seq gives the listing
-- order. Times are timestamptz holding whole milliseconds (see DB.now).
CREATE TABLE routes (
	seq            bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	id             text        NOT NULL UNIQUE,
	project_id     text        NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
	method         text        NOT NULL,
	path           text        NOT NULL,
	shape          text        NOT NULL,
	mock_id        text        NOT NULL REFERENCES mocks (id) ON DELETE CASCADE,
	action         text        NOT NULL,
	bind           text        NOT NULL DEFAULT '{}',
	items          text,
	request_schema bytea,
	created_at     timestamptz NOT NULL,
	updated_at     timestamptz NOT NULL,
	UNIQUE (project_id, method, shape)
);
CREATE INDEX routes_project ON routes (project_id, seq);
CREATE INDEX routes_mock ON routes (mock_id);

-- Every change to a route advances its project's routes_version in the
-- statement that makes it, those of foreign keys included: the routes a
-- deleted mock takes with it count. The update locks the project's row: a
-- write of routes locks it first (see routes.go), so that every
-- transaction takes the project before the routes and mocks.
CREATE FUNCTION routes_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	IF TG_OP = 'DELETE' THEN
		UPDATE projects SET routes_version = routes_version + 1 WHERE id = OLD.project_id;
	ELSE
		UPDATE projects SET routes_version = routes_version + 1 WHERE id = NEW.project_id;
	END IF;
	RETURN NULL;
END
$$;
CREATE TRIGGER routes_changed AFTER INSERT OR UPDATE OR DELETE ON routes
	FOR EACH ROW EXECUTE FUNCTION routes_changed();
