-- Conversation history belongs to an agent (as SQLite's 0007_history_agent): messages, summaries
-- and indexed exchanges gain an ``agent`` column and every key is (agent, conversation). Who
-- wrote an existing conversation is not recorded, so it moves to the default agent, losing none.
ALTER TABLE history_messages ADD COLUMN agent TEXT COLLATE "C" NOT NULL DEFAULT 'default';
ALTER TABLE history_messages ALTER COLUMN agent DROP DEFAULT;
ALTER TABLE history_messages DROP CONSTRAINT history_messages_pkey;
ALTER TABLE history_messages ADD PRIMARY KEY (agent, conversation, seq);

ALTER TABLE history_summaries ADD COLUMN agent TEXT COLLATE "C" NOT NULL DEFAULT 'default';
ALTER TABLE history_summaries ALTER COLUMN agent DROP DEFAULT;
ALTER TABLE history_summaries DROP CONSTRAINT history_summaries_pkey;
ALTER TABLE history_summaries ADD PRIMARY KEY (agent, conversation);

ALTER TABLE history_exchanges ADD COLUMN agent TEXT COLLATE "C" NOT NULL DEFAULT 'default';
DROP INDEX history_exchanges_conversation;
CREATE INDEX history_exchanges_conversation ON history_exchanges (agent, conversation, created_at);
