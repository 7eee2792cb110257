-- memory_vectors gets its own increasing sequence: the approximate index beside the database
-- (store/ann.py) is keyed by it, so "vectors written since" is a range scan. A replaced vector
-- (INSERT OR REPLACE on memory_rowid) gets a new sequence number; AUTOINCREMENT never reuses one.
CREATE TABLE memory_vectors_seq (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    memory_rowid INTEGER NOT NULL REFERENCES memories (rowid) ON DELETE CASCADE,
    vector BLOB NOT NULL
);
INSERT INTO memory_vectors_seq (memory_rowid, vector) SELECT memory_rowid, vector FROM memory_vectors ORDER BY memory_rowid;
DROP TABLE memory_vectors;
ALTER TABLE memory_vectors_seq RENAME TO memory_vectors;
-- Named (not inline UNIQUE) so counting and listing sequence numbers can use it as a covering index.
CREATE UNIQUE INDEX memory_vectors_memory ON memory_vectors (memory_rowid);
