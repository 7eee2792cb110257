-- A memory's time, as words ("May 8 2023", UTC), is searched like its own words: "what did we
-- decide in March" or "what happened on 13 October" finds what was said then, and ranking knows
-- when a memory was said as well as what it says. A fourth full-text column, weighed like
-- content (it is a fact about this memory, unlike search_context, which is other text).
ALTER TABLE memories ADD COLUMN time_words TEXT GENERATED ALWAYS AS (
    CASE CAST(strftime('%m', created_at, 'unixepoch') AS INTEGER)
        WHEN 1 THEN 'January' WHEN 2 THEN 'February' WHEN 3 THEN 'March' WHEN 4 THEN 'April'
        WHEN 5 THEN 'May' WHEN 6 THEN 'June' WHEN 7 THEN 'July' WHEN 8 THEN 'August'
        WHEN 9 THEN 'September' WHEN 10 THEN 'October' WHEN 11 THEN 'November' ELSE 'December' END
    || ' ' || CAST(strftime('%d', created_at, 'unixepoch') AS INTEGER)
    || ' ' || strftime('%Y', created_at, 'unixepoch')
) VIRTUAL;
DROP TRIGGER memories_fts_insert;
DROP TRIGGER memories_fts_delete;
DROP TRIGGER memories_fts_update;
DROP TABLE memories_fts;
CREATE VIRTUAL TABLE memories_fts USING fts5 (
    key, content, search_context, time_words,
    content = 'memories', content_rowid = 'rowid', tokenize = 'porter unicode61'
);
CREATE TRIGGER memories_fts_insert AFTER INSERT ON memories BEGIN
    INSERT INTO memories_fts (rowid, key, content, search_context, time_words)
    VALUES (new.rowid, new.key, new.content, new.search_context, new.time_words);
END;
CREATE TRIGGER memories_fts_delete AFTER DELETE ON memories BEGIN
    INSERT INTO memories_fts (memories_fts, rowid, key, content, search_context, time_words)
    VALUES ('delete', old.rowid, old.key, old.content, old.search_context, old.time_words);
END;
CREATE TRIGGER memories_fts_update AFTER UPDATE OF key, content, search_context, created_at ON memories BEGIN
    INSERT INTO memories_fts (memories_fts, rowid, key, content, search_context, time_words)
    VALUES ('delete', old.rowid, old.key, old.content, old.search_context, old.time_words);
    INSERT INTO memories_fts (rowid, key, content, search_context, time_words)
    VALUES (new.rowid, new.key, new.content, new.search_context, new.time_words);
END;
INSERT INTO memories_fts (memories_fts) VALUES ('rebuild');
