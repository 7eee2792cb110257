-- When this store received each memory (its creation here, or the import that brought it): an import
-- keeps the source's created_at / updated_at / last_accessed, and the lifecycle jobs measure age from
-- the later of those and this. No backfill: NULL is a row stored before engram kept it (unknown), for
-- which the jobs measure as they did.
ALTER TABLE memories ADD COLUMN received_at REAL;
