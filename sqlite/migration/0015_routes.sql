-- Routes (§11 of the contract): a project answers at its API's own paths,
-- under its slug.
--
-- slug is unique on the server once set: SQLite adds a column NOT NULL only
-- with a default, so it starts empty, the step 0016_project_slugs derives
-- every existing project's in Go (decoy.Slugify, in creation order: see
-- slugs.go) and 0017_project_slugs_unique.sql makes it unique.
-- routes_version advances with every change to the project's routes or
-- slug, so that a replica serving them from memory can tell whether its
-- copy is current.
ALTER TABLE projects ADD COLUMN slug TEXT NOT NULL DEFAULT '';
ALTER TABLE projects ADD COLUMN routes_version INTEGER NOT NULL DEFAULT 0;

-- A route ties a method and a path template to one of its project's mocks.
-- shape is the path with its parameters' names left out (decoy.PathShape):
-- two routes of a project may not share a method and a shape. A deleted mock
-- takes its routes with it. bind is a JSON object; items and
-- request_schema are NULL when the route has none. seq gives the listing
-- order. Times are Unix milliseconds.
CREATE TABLE routes (
	seq            INTEGER PRIMARY KEY AUTOINCREMENT,
	id             TEXT    NOT NULL UNIQUE,
	project_id     TEXT    NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
	method         TEXT    NOT NULL,
	path           TEXT    NOT NULL,
	shape          TEXT    NOT NULL,
	mock_id        TEXT    NOT NULL REFERENCES mocks (id) ON DELETE CASCADE,
	action         TEXT    NOT NULL,
	bind           TEXT    NOT NULL DEFAULT '{}',
	items          TEXT,
	request_schema BLOB,
	created_at     INTEGER NOT NULL,
	updated_at     INTEGER NOT NULL,
	UNIQUE (project_id, method, shape)
);
CREATE INDEX routes_project ON routes (project_id, seq);
CREATE INDEX routes_mock ON routes (mock_id);

-- Every change to a route advances its project's routes_version in the
-- statement that makes it, those of foreign keys included: the routes a
-- deleted mock takes with it count.
CREATE TRIGGER routes_insert AFTER INSERT ON routes BEGIN
	UPDATE projects SET routes_version = routes_version + 1 WHERE id = NEW.project_id;
END;
CREATE TRIGGER routes_update AFTER UPDATE ON routes BEGIN
	UPDATE projects SET routes_version = routes_version + 1 WHERE id IN (OLD.project_id, NEW.project_id);
END;
CREATE TRIGGER routes_delete AFTER DELETE ON routes BEGIN
	UPDATE projects SET routes_version = routes_version + 1 WHERE id = OLD.project_id;
END;
