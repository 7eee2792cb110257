"""engram: local-first long-term memory for LLM agents.

The one object to hold is ``Engram`` (``Engram.from_settings()`` opens the configured store).
"""

from engram.engine import Engram, Filters
from engram.errors import (
    ConfigError,
    EngramError,
    NotFoundError,
    SnapshotError,
    StorageError,
    ValidationError,
)
from engram.model import Category, Hit, Layer, Memory, RecallResult, Scope, ScoreParts, WriteResult

__all__ = [
    "Category",
    "ConfigError",
    "Engram",
    "EngramError",
    "Filters",
    "Hit",
    "Layer",
    "Memory",
    "NotFoundError",
    "RecallResult",
    "Scope",
    "ScoreParts",
    "SnapshotError",
    "StorageError",
    "ValidationError",
    "WriteResult",
]
