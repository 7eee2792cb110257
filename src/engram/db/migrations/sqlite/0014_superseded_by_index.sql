-- Moving a memory (store move_many, the memory folder's hand moves) reads the memories it
-- supersedes, those whose superseded_by names it, to keep each able to see its successor: without
-- an index that read scanned the whole table once per memory moved. Partial: only superseded rows
-- are indexed (most are not), and a lookup of superseded_by = ? is one the index can answer.
CREATE INDEX memories_superseded_by ON memories (superseded_by) WHERE superseded_by IS NOT NULL;
