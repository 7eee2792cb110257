"""Memory lifecycle: hygiene, decay and strengthening, retention, summaries, consolidation,
backups, and the scheduler that runs them (``engram maintain``)."""

# The jobs ``engram maintain`` runs, in the order it runs them: the one list (the scheduler runs
# and checks by it, ``engram maintain --job``'s help names it), here, where reading it imports no job.
JOBS: tuple[str, ...] = ("backup", "summaries", "hygiene", "decay", "retention", "consolidate", "vacuum")
