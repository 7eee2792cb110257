-- When this store received each memory (see the SQLite step 0017_received_at): an import keeps the
-- source's times, and the lifecycle jobs measure age from the later of those and this. No backfill:
-- NULL is a row stored before engram kept it (unknown), for which the jobs measure as they did.
ALTER TABLE memories ADD COLUMN received_at DOUBLE PRECISION;
