-- The template of a mock (§7 of the contract): its mode ('once' or
-- 'always', NULL when the mock has none), its content type and its body.
-- The mode is read with the mock; the body only when the template is.
ALTER TABLE mocks ADD COLUMN template_mode text CHECK (template_mode IN ('once', 'always'));
ALTER TABLE mocks ADD COLUMN template_type text;
ALTER TABLE mocks ADD COLUMN template bytea;
