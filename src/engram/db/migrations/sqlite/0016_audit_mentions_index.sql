-- An erase rewrites the audit rows about the erased memories (the (memory_id, at) index finds them)
-- and the link and recall rows that may name them: without an index of those, it read the whole
-- trail, one row per memory ever stored or changed, so an erase cost more the larger the store.
-- Partial: only link and recall rows are indexed (recall rows are bounded: audit_max_reads).
CREATE INDEX audit_log_mentions ON audit_log (action) WHERE action IN ('linked', 'unlinked', 'recalled');
