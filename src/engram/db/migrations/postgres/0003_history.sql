-- Conversation history: messages keyed by (conversation, seq), one summary per conversation,
-- and the semantic index of exchanges with their vectors (as SQLite's 0002_history).
-- seq is taken under a per-conversation advisory lock (history/postgres.py), so it follows
-- commit order and two writers never get the same one.
CREATE TABLE history_messages (
    conversation TEXT COLLATE "C" NOT NULL,
    seq BIGINT NOT NULL,
    role TEXT NOT NULL,
    content TEXT NOT NULL,
    tool_calls JSONB NOT NULL DEFAULT '[]',
    tool_call_id TEXT,
    metadata JSONB NOT NULL DEFAULT '{}',
    created_at DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (conversation, seq)
);

CREATE TABLE history_summaries (
    conversation TEXT COLLATE "C" PRIMARY KEY,
    summary TEXT NOT NULL,
    updated_at DOUBLE PRECISION NOT NULL
);

-- Vectors are float32 bytes, unit length: recall ranks a few hundred rows of one conversation
-- exactly in numpy, so no vector index is needed (see history/semantic.py).
CREATE TABLE history_exchanges (
    id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    conversation TEXT COLLATE "C" NOT NULL,
    user_text TEXT NOT NULL,
    assistant_text TEXT NOT NULL,
    created_at DOUBLE PRECISION NOT NULL,
    fingerprint TEXT NOT NULL UNIQUE,
    identity TEXT,
    vector BYTEA
);
CREATE INDEX history_exchanges_conversation ON history_exchanges (conversation, created_at);
