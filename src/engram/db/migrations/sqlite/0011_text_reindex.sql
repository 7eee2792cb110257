-- Rows whose full-text document changed in a way neither memory_versions nor memory_vectors shows:
-- moved to another scope (the document is filed under its scope and key), or only its search
-- context changed. The Tantivy index beside the file (store/sqlite_text.py) indexes the rows with
-- a higher seq than it has seen again at its next catch-up, in whichever process that happens, so
-- a one-shot command that changes a row and exits leaves nothing stale behind. One row a memory
-- (a later change replaces it with a higher seq; AUTOINCREMENT never reuses one), gone with it.
CREATE TABLE memory_reindex (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    memory_rowid INTEGER NOT NULL UNIQUE REFERENCES memories (rowid) ON DELETE CASCADE
);
