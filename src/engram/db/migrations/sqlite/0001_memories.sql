-- Memories, their full-text index, links, previous versions and vectors.
-- Scope: agent '' is global; session '' is the agent scope itself.
CREATE TABLE memories (
    rowid INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    agent TEXT NOT NULL DEFAULT '',
    session TEXT NOT NULL DEFAULT '',
    key TEXT NOT NULL,
    content TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    category TEXT NOT NULL,
    type TEXT NOT NULL,
    layer TEXT NOT NULL,
    tags TEXT NOT NULL DEFAULT '[]',
    metadata TEXT NOT NULL DEFAULT '{}',
    importance REAL NOT NULL DEFAULT 0.5,
    related_entity TEXT,
    source TEXT,
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL,
    last_accessed REAL,
    recall_count INTEGER NOT NULL DEFAULT 0,
    superseded_by TEXT,
    UNIQUE (agent, session, key)
);
CREATE INDEX memories_scope_hash ON memories (agent, session, content_hash);
CREATE INDEX memories_created ON memories (created_at);
CREATE INDEX memories_category ON memories (category, created_at);

CREATE VIRTUAL TABLE memories_fts USING fts5 (
    key, content, content = 'memories', content_rowid = 'rowid', tokenize = 'porter unicode61'
);
CREATE TRIGGER memories_fts_insert AFTER INSERT ON memories BEGIN
    INSERT INTO memories_fts (rowid, key, content) VALUES (new.rowid, new.key, new.content);
END;
CREATE TRIGGER memories_fts_delete AFTER DELETE ON memories BEGIN
    INSERT INTO memories_fts (memories_fts, rowid, key, content) VALUES ('delete', old.rowid, old.key, old.content);
END;
CREATE TRIGGER memories_fts_update AFTER UPDATE OF key, content ON memories BEGIN
    INSERT INTO memories_fts (memories_fts, rowid, key, content) VALUES ('delete', old.rowid, old.key, old.content);
    INSERT INTO memories_fts (rowid, key, content) VALUES (new.rowid, new.key, new.content);
END;

CREATE TABLE memory_links (
    from_id TEXT NOT NULL,
    to_id TEXT NOT NULL,
    PRIMARY KEY (from_id, to_id)
) WITHOUT ROWID;
CREATE INDEX memory_links_to ON memory_links (to_id);

CREATE TABLE memory_versions (
    memory_id TEXT NOT NULL,
    content TEXT NOT NULL,
    replaced_at REAL NOT NULL
);
CREATE INDEX memory_versions_memory ON memory_versions (memory_id, replaced_at);

-- One float32 vector per memory for the store's current embedding identity (see engram_meta).
CREATE TABLE memory_vectors (
    memory_rowid INTEGER PRIMARY KEY REFERENCES memories (rowid) ON DELETE CASCADE,
    vector BLOB NOT NULL
);

CREATE TABLE engram_meta (
    name TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
