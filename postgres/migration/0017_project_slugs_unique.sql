-- Every project has its slug (step 0016_project_slugs, in Go: see
-- slugs.go): from now on each has one, and no two share one.
ALTER TABLE projects
	ALTER COLUMN slug SET NOT NULL,
	ADD CONSTRAINT projects_slug_key UNIQUE (slug);
