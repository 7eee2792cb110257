-- API tokens (as SQLite's 0003_tokens): only a SHA-256 of each token is kept; each token acts
-- for exactly one agent. On PostgreSQL every engram server sharing the database shares them.
CREATE TABLE api_tokens (
    id TEXT PRIMARY KEY,
    agent TEXT NOT NULL,
    name TEXT NOT NULL DEFAULT '',
    token_hash TEXT NOT NULL UNIQUE,
    created_at DOUBLE PRECISION NOT NULL,
    last_used_at DOUBLE PRECISION,
    revoked_at DOUBLE PRECISION
);
CREATE INDEX api_tokens_agent ON api_tokens (agent);
