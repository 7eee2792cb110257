-- search_context: text that helps find a memory without being part of it (e.g. the turns around
-- a conversation turn). A third full-text column, weighed lightly by the ranking query.
ALTER TABLE memories ADD COLUMN search_context TEXT;
DROP TRIGGER memories_fts_insert;
DROP TRIGGER memories_fts_delete;
DROP TRIGGER memories_fts_update;
DROP TABLE memories_fts;
CREATE VIRTUAL TABLE memories_fts USING fts5 (
    key, content, search_context, content = 'memories', content_rowid = 'rowid', tokenize = 'porter unicode61'
);
CREATE TRIGGER memories_fts_insert AFTER INSERT ON memories BEGIN
    INSERT INTO memories_fts (rowid, key, content, search_context)
    VALUES (new.rowid, new.key, new.content, new.search_context);
END;
CREATE TRIGGER memories_fts_delete AFTER DELETE ON memories BEGIN
    INSERT INTO memories_fts (memories_fts, rowid, key, content, search_context)
    VALUES ('delete', old.rowid, old.key, old.content, old.search_context);
END;
CREATE TRIGGER memories_fts_update AFTER UPDATE OF key, content, search_context ON memories BEGIN
    INSERT INTO memories_fts (memories_fts, rowid, key, content, search_context)
    VALUES ('delete', old.rowid, old.key, old.content, old.search_context);
    INSERT INTO memories_fts (rowid, key, content, search_context)
    VALUES (new.rowid, new.key, new.content, new.search_context);
END;
INSERT INTO memories_fts (memories_fts) VALUES ('rebuild');
