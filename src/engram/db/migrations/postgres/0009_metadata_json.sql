-- Metadata is kept as the JSON text it was written as (type JSON, not JSONB). JSONB stores
-- numbers as numeric and prints 3.784434779949819e+16 back as the integer 37844347799498190, so
-- a float came back an int; JSON keeps the text, so metadata round-trips as on SQLite. Filters
-- cast to JSONB where they compare. Rows written before this migration stay as JSONB printed them.
ALTER TABLE memories ALTER COLUMN metadata DROP DEFAULT;
ALTER TABLE memories ALTER COLUMN metadata TYPE JSON USING metadata::json;
ALTER TABLE memories ALTER COLUMN metadata SET DEFAULT '{}';
ALTER TABLE history_messages ALTER COLUMN metadata DROP DEFAULT;
ALTER TABLE history_messages ALTER COLUMN metadata TYPE JSON USING metadata::json;
ALTER TABLE history_messages ALTER COLUMN metadata SET DEFAULT '{}';
