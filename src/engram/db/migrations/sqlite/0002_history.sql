-- Conversation history (sclaw): messages keyed by (conversation, seq), one summary per
-- conversation, and the semantic index of exchanges (Clawless) with their vectors.
CREATE TABLE history_messages (
    conversation TEXT NOT NULL,
    seq INTEGER NOT NULL,
    role TEXT NOT NULL,
    content TEXT NOT NULL,
    tool_calls TEXT NOT NULL DEFAULT '[]',
    tool_call_id TEXT,
    metadata TEXT NOT NULL DEFAULT '{}',
    created_at REAL NOT NULL,
    PRIMARY KEY (conversation, seq)
) WITHOUT ROWID;

CREATE TABLE history_summaries (
    conversation TEXT PRIMARY KEY,
    summary TEXT NOT NULL,
    updated_at REAL NOT NULL
);

CREATE TABLE history_exchanges (
    id INTEGER PRIMARY KEY,
    conversation TEXT NOT NULL,
    user_text TEXT NOT NULL,
    assistant_text TEXT NOT NULL,
    created_at REAL NOT NULL,
    fingerprint TEXT NOT NULL UNIQUE,
    identity TEXT,
    vector BLOB
);
CREATE INDEX history_exchanges_conversation ON history_exchanges (conversation, created_at);
