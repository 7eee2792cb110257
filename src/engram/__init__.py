"""engram: local-first long-term memory for LLM agents."""
