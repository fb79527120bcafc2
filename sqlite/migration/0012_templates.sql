-- The template of a mock (§7 of the contract): its mode ('once' or
-- 'always', NULL when the mock has none), its content type and its body.
-- The mode is read with the mock; the body only when the template is.
ALTER TABLE mocks ADD COLUMN template_mode TEXT;
ALTER TABLE mocks ADD COLUMN template_type TEXT;
ALTER TABLE mocks ADD COLUMN template BLOB;
