-- A memory's time, as words ("May 8 2023", UTC), is searched like its content (weight B): see
-- the SQLite migration of the same name. Month names by CASE: to_char is not immutable.
DROP INDEX IF EXISTS memories_search_all;
ALTER TABLE memories DROP COLUMN search_all;
ALTER TABLE memories ADD COLUMN search_all TSVECTOR GENERATED ALWAYS AS (
    setweight(to_tsvector('english', key), 'A') || setweight(to_tsvector('english', content), 'B')
    || setweight(to_tsvector('english', coalesce(search_context, '')), 'C')
    || setweight(to_tsvector('english',
        CASE extract(month FROM to_timestamp(created_at) AT TIME ZONE 'UTC')::int
            WHEN 1 THEN 'January' WHEN 2 THEN 'February' WHEN 3 THEN 'March' WHEN 4 THEN 'April'
            WHEN 5 THEN 'May' WHEN 6 THEN 'June' WHEN 7 THEN 'July' WHEN 8 THEN 'August'
            WHEN 9 THEN 'September' WHEN 10 THEN 'October' WHEN 11 THEN 'November' ELSE 'December' END
        || ' ' || extract(day FROM to_timestamp(created_at) AT TIME ZONE 'UTC')::int::text
        || ' ' || extract(year FROM to_timestamp(created_at) AT TIME ZONE 'UTC')::int::text), 'B')
) STORED;
CREATE INDEX memories_search_all ON memories USING GIN (search_all);
