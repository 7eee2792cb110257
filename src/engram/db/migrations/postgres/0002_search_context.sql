-- search_context: text that helps find a memory without being part of it. Ranking uses
-- search_all (key A, content B, context C); forget-by-query keeps using search (key + content).
ALTER TABLE memories ADD COLUMN search_context TEXT;
ALTER TABLE memories ADD COLUMN search_all TSVECTOR GENERATED ALWAYS AS (
    setweight(to_tsvector('english', key), 'A') || setweight(to_tsvector('english', content), 'B')
    || setweight(to_tsvector('english', coalesce(search_context, '')), 'C')
) STORED;
CREATE INDEX memories_search_all ON memories USING GIN (search_all);
