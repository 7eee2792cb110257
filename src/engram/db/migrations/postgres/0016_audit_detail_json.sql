-- The audit trail's detail (a forgotten memory whole, metadata included) is kept as the JSON text it
-- was written as (type JSON, not JSONB), as metadata is since 0009: JSONB reordered an object's keys
-- and printed 3.784434779949819e+16 back as the integer 37844347799498190, so the record of what a
-- forget removed no longer said what the memory held. Rows written before stay as JSONB printed them.
ALTER TABLE audit_log ALTER COLUMN detail TYPE JSON USING detail::json;
