-- The mem0 facade (engram.compat.mem0) finds a memory by the id mem0 gave it, kept at
-- metadata["mem0"]["id"] (engram import, import_mem0): without an index that lookup read the JSON of
-- every row of the owners' scopes. The expression is the one the metadata condition compiles an
-- equality on that path to (store/where_sql.py: ->, then ->> for the last key, each key a literal),
-- so the planner matches it; partial: only memories that came from mem0 are indexed, and an
-- equality on the expression implies it is not null.
CREATE INDEX memories_mem0_id ON memories ((metadata::jsonb -> 'mem0' ->> 'id')) WHERE (metadata::jsonb -> 'mem0' ->> 'id') IS NOT NULL;
-- And the audit trail's record of a forgotten memory (its detail: the memory whole, metadata
-- included), by the same id: the facade's history of a memory deleted by its mem0 id finds the
-- engram id its rows are under (audit.PostgresAuditLog.forgotten_by_origin_id), without reading
-- every forget's JSON. Only forget rows hold metadata, so only they are indexed.
CREATE INDEX audit_log_mem0_id ON audit_log ((detail::jsonb -> 'metadata' -> 'mem0' ->> 'id')) WHERE (detail::jsonb -> 'metadata' -> 'mem0' ->> 'id') IS NOT NULL;
