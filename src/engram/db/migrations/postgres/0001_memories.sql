-- Memories, their full-text index, links, previous versions and vectors (PostgreSQL + pgvector).
-- Scope: agent '' is global; session '' is the agent scope itself (as in the SQLite schema).
-- Identifier columns use the "C" collation so ordering matches SQLite's byte order on any server.
CREATE EXTENSION IF NOT EXISTS vector;

CREATE TABLE memories (
    seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id TEXT COLLATE "C" NOT NULL UNIQUE,
    agent TEXT COLLATE "C" NOT NULL DEFAULT '',
    session TEXT COLLATE "C" NOT NULL DEFAULT '',
    key TEXT COLLATE "C" NOT NULL,
    content TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    category TEXT NOT NULL,
    type TEXT NOT NULL,
    layer TEXT NOT NULL,
    tags TEXT[] NOT NULL DEFAULT '{}',
    metadata JSONB NOT NULL DEFAULT '{}',
    importance DOUBLE PRECISION NOT NULL DEFAULT 0.5,
    related_entity TEXT,
    source TEXT,
    created_at DOUBLE PRECISION NOT NULL,
    updated_at DOUBLE PRECISION NOT NULL,
    last_accessed DOUBLE PRECISION,
    recall_count INTEGER NOT NULL DEFAULT 0,
    superseded_by TEXT COLLATE "C",
    -- Key words weigh A, content B: ts_rank_cd weights below make a key hit count twice.
    search TSVECTOR GENERATED ALWAYS AS (
        setweight(to_tsvector('english', key), 'A') || setweight(to_tsvector('english', content), 'B')
    ) STORED,
    UNIQUE (agent, session, key)
);
CREATE INDEX memories_scope_hash ON memories (agent, session, content_hash);
CREATE INDEX memories_created ON memories (created_at);
CREATE INDEX memories_category ON memories (category, created_at);
CREATE INDEX memories_search ON memories USING GIN (search);
CREATE INDEX memories_tags ON memories USING GIN (tags);

-- Both directions are stored; the foreign keys remove links with their memories and make a
-- link to a memory being deleted by another process fail instead of dangling.
CREATE TABLE memory_links (
    from_id TEXT COLLATE "C" NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
    to_id TEXT COLLATE "C" NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
    PRIMARY KEY (from_id, to_id)
);
CREATE INDEX memory_links_to ON memory_links (to_id);

CREATE TABLE memory_versions (
    seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    memory_id TEXT COLLATE "C" NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
    content TEXT NOT NULL,
    replaced_at DOUBLE PRECISION NOT NULL
);
CREATE INDEX memory_versions_memory ON memory_versions (memory_id, replaced_at);

-- One vector per memory for the store's current embedding identity (engram_meta). The column
-- has no fixed size; the HNSW index is an expression index on embedding::vector(dims), created
-- when the first identity is recorded (see store/postgres.py).
CREATE TABLE memory_vectors (
    memory_id TEXT COLLATE "C" PRIMARY KEY REFERENCES memories (id) ON DELETE CASCADE,
    embedding VECTOR NOT NULL
);

CREATE TABLE engram_meta (
    name TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
