-- The audit trail: one row per memory touched by a store, update, forget, link, unlink or import.
-- Forgotten rows keep what was removed (``detail``: the memory as JSON) so an operator can see it.
CREATE TABLE audit_log (
    seq INTEGER PRIMARY KEY,
    at REAL NOT NULL,
    action TEXT NOT NULL,
    origin TEXT NOT NULL,
    reason TEXT,
    actor_scope TEXT NOT NULL,
    memory_id TEXT,
    memory_key TEXT,
    memory_scope TEXT,
    detail TEXT
);
CREATE INDEX audit_log_at ON audit_log (at);
CREATE INDEX audit_log_memory ON audit_log (memory_id, at);
