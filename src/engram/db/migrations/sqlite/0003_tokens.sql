-- API tokens for the HTTP API and MCP over HTTP. Only a SHA-256 of each token is kept: the token
-- itself is shown once, when created. Each token acts for exactly one agent.
CREATE TABLE api_tokens (
    id TEXT PRIMARY KEY,
    agent TEXT NOT NULL,
    name TEXT NOT NULL DEFAULT '',
    token_hash TEXT NOT NULL UNIQUE,
    created_at REAL NOT NULL,
    last_used_at REAL,
    revoked_at REAL
);
CREATE INDEX api_tokens_agent ON api_tokens (agent);
