"""engram: local-first long-term memory for LLM agents.

The one object to hold is ``Engram`` (``Engram.from_settings()`` opens the configured store).

Names are imported on first use (PEP 562): ``import engram.interfaces.cli.app`` must not pay for
the engine, numpy and pydantic before it knows the command needs them (``engram --help`` does not).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
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

_HOMES = {
    "__version__": "engram.about",
    "Engram": "engram.engine", "Filters": "engram.engine",
    "ConfigError": "engram.errors", "EngramError": "engram.errors", "NotFoundError": "engram.errors",
    "SnapshotError": "engram.errors", "StorageError": "engram.errors", "ValidationError": "engram.errors",
    "Category": "engram.model", "Hit": "engram.model", "Layer": "engram.model", "Memory": "engram.model",
    "RecallResult": "engram.model", "Scope": "engram.model", "ScoreParts": "engram.model",
    "WriteResult": "engram.model",
}

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


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'engram' has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
