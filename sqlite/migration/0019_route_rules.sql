-- Rules (§13.1 of the contract): a route's conditional answers, tried in
-- order, kept as the JSON array decoy.EncodeRules writes ('[]' for none).
-- The counts of rules with "times" are kept in the server's memory (one
-- process owns an embedded store), not here.
ALTER TABLE routes ADD COLUMN rules TEXT NOT NULL DEFAULT '[]';
