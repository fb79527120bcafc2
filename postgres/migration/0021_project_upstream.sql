-- Pass-through and recording (§14 of the contract): a project's upstream,
-- the base URL of the backend it stands in for ('' when none), and its
-- mode: mock (the default), passthrough or record.
ALTER TABLE projects
	ADD COLUMN upstream text NOT NULL DEFAULT '',
	ADD COLUMN mode text NOT NULL DEFAULT 'mock' CHECK (mode IN ('mock', 'passthrough', 'record'));
