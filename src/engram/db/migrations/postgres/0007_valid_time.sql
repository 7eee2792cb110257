-- Valid time beside record time (see the SQLite step 0008_valid_time): when a fact held in the
-- world (NULL = open-ended) and when it was superseded; facts superseded before this step are
-- closed at their successor's creation.
ALTER TABLE memories ADD COLUMN valid_from DOUBLE PRECISION;
ALTER TABLE memories ADD COLUMN valid_until DOUBLE PRECISION;
ALTER TABLE memories ADD COLUMN superseded_at DOUBLE PRECISION;
UPDATE memories m SET
    superseded_at = COALESCE(s.created_at, m.updated_at),
    valid_until = COALESCE(s.created_at, m.updated_at)
FROM (SELECT id, created_at FROM memories) s
WHERE m.superseded_by IS NOT NULL AND s.id = m.superseded_by;
UPDATE memories SET superseded_at = updated_at, valid_until = updated_at
WHERE superseded_by IS NOT NULL AND superseded_at IS NULL;
CREATE INDEX memories_event_time ON memories ((COALESCE(valid_from, created_at)));
