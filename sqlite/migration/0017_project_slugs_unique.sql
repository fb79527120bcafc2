-- Every project has its slug (step 0016_project_slugs, in Go: see
-- slugs.go): from now on no two share one, and none is empty, which the
-- column's default would otherwise let a project be created with.
CREATE UNIQUE INDEX projects_slug ON projects (slug);
CREATE TRIGGER projects_slug_insert BEFORE INSERT ON projects WHEN NEW.slug = '' BEGIN
	SELECT RAISE(ABORT, 'a project needs a slug');
END;
CREATE TRIGGER projects_slug_update BEFORE UPDATE OF slug ON projects WHEN NEW.slug = '' BEGIN
	SELECT RAISE(ABORT, 'a project needs a slug');
END;
