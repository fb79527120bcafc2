-- Rules (§13.1 of the contract): a route's conditional answers, tried in
-- order, kept as the JSON array decoy.EncodeRules writes ('[]' for none).
ALTER TABLE routes ADD COLUMN rules text NOT NULL DEFAULT '[]';

-- The counts of rules with "times", shared by the replicas of the store
-- when no Redis counts them (see rules.go): one row per rule that held,
-- by its index in its route's rules. A route deleted takes its counts
-- with it; a change to its rules deletes them (the admin API resets them).
CREATE TABLE rule_counts (
	route_id text   NOT NULL REFERENCES routes (id) ON DELETE CASCADE,
	rule     integer NOT NULL,
	count    bigint NOT NULL,
	PRIMARY KEY (route_id, rule)
);
