"""Backends and providers by name: built-ins and plug-ins register the same way, imported lazily.

A target is ``"module:attribute"``; it is imported only when chosen, so an optional backend's
packages are needed only by those who use it. ``register`` lets a plug-in add its own.
"""

from __future__ import annotations

import importlib
from typing import Any

from engram.errors import ConfigError

_TARGETS: dict[str, dict[str, str]] = {
    # kind -> name -> "module:factory"; each factory takes (settings, agent).
    "memory": {
        "sqlite": "engram.store.factories:open_sqlite",
        "jsonfile": "engram.store.factories:open_jsonfile",
        "inmemory": "engram.store.factories:open_inmemory",
        "disabled": "engram.store.factories:open_disabled",
        "postgres": "engram.store.factories:open_postgres",
    },
    "history": {
        "sqlite": "engram.history.factories:open_sqlite",
        "jsonl": "engram.history.factories:open_jsonl",
        "inmemory": "engram.history.factories:open_inmemory",
        "postgres": "engram.history.factories:open_postgres",
    },
}


def register(kind: str, name: str, target: str) -> None:
    _TARGETS.setdefault(kind, {})[name] = target


def names(kind: str) -> list[str]:
    return sorted(_TARGETS.get(kind, {}))


def resolve(kind: str, name: str) -> Any:
    """The factory registered as ``name`` for ``kind``; ``ConfigError`` lists what exists."""
    target = _TARGETS.get(kind, {}).get(name)
    if target is None:
        raise ConfigError(f"unknown {kind} backend {name!r} (available: {', '.join(names(kind))})")
    module_name, _, attribute = target.partition(":")
    module = importlib.import_module(module_name)
    return getattr(module, attribute)
