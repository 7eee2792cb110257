-- An agent's stats count its memories by scope, category and type, and the ones not superseded
-- (agent_stats.gather, store count_by_kind): every column that count reads, so it can be an
-- index-only scan of the agent's part of the table rather than a read of every row.
CREATE INDEX memories_scope_kind ON memories (agent, session, category, type, superseded_by);
