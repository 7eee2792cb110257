-- memory_versions gets a sequence that only rises (AUTOINCREMENT, kept in sqlite_sequence), as
-- memory_vectors (0005) and memory_reindex (0011) have: the Tantivy index beside the file
-- (store/sqlite_text.py) reads "how far the database has gone" from these sequences. Read as
-- max(rowid), forgetting the memory holding the newest version lowered it, and the index took the
-- database for one restored from an older backup and rebuilt itself whole. Existing rows keep
-- their rowids (the order of a memory's versions as stored); the sequence starts at the highest.
CREATE TABLE memory_versions_seq (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    memory_id TEXT NOT NULL,
    content TEXT NOT NULL,
    replaced_at REAL NOT NULL
);
INSERT INTO memory_versions_seq (seq, memory_id, content, replaced_at)
    SELECT rowid, memory_id, content, replaced_at FROM memory_versions ORDER BY rowid;
DROP TABLE memory_versions;
ALTER TABLE memory_versions_seq RENAME TO memory_versions;
CREATE INDEX memory_versions_memory ON memory_versions (memory_id, replaced_at);
