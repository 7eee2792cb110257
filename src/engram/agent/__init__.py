"""The context engine: enrichment, identity, synthesis, extraction, injection, cache, sessions,
agent tools, and the loop that ties them together (``MemoryAgent``)."""
