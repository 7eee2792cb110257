-- An agent's stats count its memories by scope, category and type, and the ones not superseded
-- (agent_stats.gather, store count_by_kind): every column that count reads, so it reads this
-- index alone, never the rows (~85 -> ~10 ms for an agent's 50,000 of 100,000 memories).
CREATE INDEX memories_scope_kind ON memories (agent, session, category, type, superseded_by);
