"""Memory lifecycle: hygiene, decay and strengthening, retention, summaries, consolidation,
backups, and the scheduler that runs them (``engram maintain``)."""
