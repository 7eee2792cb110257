-- Conversation history belongs to an agent: messages, summaries and indexed exchanges gain an
-- ``agent`` column and every key is (agent, conversation). A database does not record who wrote
-- its conversations, so existing ones move to the default agent, losing none (a per-agent
-- database hands its own to its agent when that agent opens it: history/sqlite.py ``adopt``).
CREATE TABLE history_messages_v7 (
    agent TEXT NOT NULL,
    conversation TEXT NOT NULL,
    seq INTEGER NOT NULL,
    role TEXT NOT NULL,
    content TEXT NOT NULL,
    tool_calls TEXT NOT NULL DEFAULT '[]',
    tool_call_id TEXT,
    metadata TEXT NOT NULL DEFAULT '{}',
    created_at REAL NOT NULL,
    PRIMARY KEY (agent, conversation, seq)
) WITHOUT ROWID;
INSERT INTO history_messages_v7 (agent, conversation, seq, role, content, tool_calls, tool_call_id, metadata, created_at)
    SELECT 'default', conversation, seq, role, content, tool_calls, tool_call_id, metadata, created_at
    FROM history_messages;
DROP TABLE history_messages;
ALTER TABLE history_messages_v7 RENAME TO history_messages;

CREATE TABLE history_summaries_v7 (
    agent TEXT NOT NULL,
    conversation TEXT NOT NULL,
    summary TEXT NOT NULL,
    updated_at REAL NOT NULL,
    PRIMARY KEY (agent, conversation)
);
INSERT INTO history_summaries_v7 (agent, conversation, summary, updated_at)
    SELECT 'default', conversation, summary, updated_at FROM history_summaries;
DROP TABLE history_summaries;
ALTER TABLE history_summaries_v7 RENAME TO history_summaries;

ALTER TABLE history_exchanges ADD COLUMN agent TEXT NOT NULL DEFAULT 'default';
DROP INDEX history_exchanges_conversation;
CREATE INDEX history_exchanges_conversation ON history_exchanges (agent, conversation, created_at);
