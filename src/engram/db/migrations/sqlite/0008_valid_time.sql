-- Valid time beside record time: when a fact held in the world (NULL = open-ended), and when it
-- was superseded (record time). Facts superseded before this step are closed at their
-- successor's creation, the moment engram learned they stopped holding.
ALTER TABLE memories ADD COLUMN valid_from REAL;
ALTER TABLE memories ADD COLUMN valid_until REAL;
ALTER TABLE memories ADD COLUMN superseded_at REAL;
UPDATE memories SET
    superseded_at = COALESCE((SELECT s.created_at FROM memories s WHERE s.id = memories.superseded_by), updated_at),
    valid_until = COALESCE((SELECT s.created_at FROM memories s WHERE s.id = memories.superseded_by), updated_at)
WHERE superseded_by IS NOT NULL;
CREATE INDEX memories_event_time ON memories (COALESCE(valid_from, created_at));
