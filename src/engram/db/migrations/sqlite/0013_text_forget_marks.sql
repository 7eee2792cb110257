-- memory_reindex also records forgotten rows, so the Tantivy index beside the file drops their
-- documents at its next catch-up in whichever process comes next (store/sqlite_text.py), not only
-- in the process that forgot them. Its marks therefore no longer go with their memory (no
-- ON DELETE CASCADE); the writes that add marks drop those the index has already taken, so the
-- table stays small. Rows and the sequence (the highest number ever given) are kept as they were.
CREATE TABLE memory_reindex_next (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    memory_rowid INTEGER NOT NULL UNIQUE
);
INSERT INTO memory_reindex_next (seq, memory_rowid) SELECT seq, memory_rowid FROM memory_reindex ORDER BY seq;
DELETE FROM sqlite_sequence WHERE name = 'memory_reindex_next';
INSERT INTO sqlite_sequence (name, seq) SELECT 'memory_reindex_next', seq FROM sqlite_sequence WHERE name = 'memory_reindex';
DROP TABLE memory_reindex;
ALTER TABLE memory_reindex_next RENAME TO memory_reindex;
