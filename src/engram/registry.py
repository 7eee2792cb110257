"""Backends and providers by name: built-ins and plug-ins register the same way, imported lazily.

A target is ``"module:attribute"``; it is imported only when chosen, so an optional backend's
packages are needed only by those who use it. ``register`` lets a plug-in add its own.
"""

from __future__ import annotations

import importlib
from typing import Any

from engram.errors import ConfigError

_TARGETS: dict[str, dict[str, str]] = {
    # kind -> name -> "module:attribute".
    # backend: the memory database, factory(settings, agent) -> Backend (engram.backends.base).
    "backend": {
        "sqlite": "engram.backends.sqlite:SqliteBackend.open",
        "jsonfile": "engram.backends.simple:JsonFileBackend.open",
        "inmemory": "engram.backends.simple:InMemoryBackend.open",
        "disabled": "engram.backends.simple:DisabledBackend.open",
        "postgres": "engram.backends.postgres:PostgresBackend.open",
    },
    # history: conversations kept apart from the memory database, factory(settings, agent) -> Backend.
    "history": {
        "sqlite": "engram.backends.sqlite:SqliteHistoryBackend.open",
        "jsonl": "engram.backends.simple:JsonlHistoryBackend.open",
        "inmemory": "engram.backends.simple:InMemoryBackend.open",
        "postgres": "engram.backends.postgres:PostgresBackend.open",
    },
    # embedding: provider classes (engram.embed.base.EmbeddingProvider).
    "embedding": {
        "local": "engram.embed.local:LocalProvider",
        "openai": "engram.embed.openai:OpenAIProvider",
        "gemini": "engram.embed.gemini:GeminiProvider",
        "ollama": "engram.embed.ollama:OllamaProvider",
    },
    # llm: chat provider classes (engram.llm.base.ChatProvider).
    "llm": {
        "openai": "engram.llm.openai:OpenAIChat",
        "ollama": "engram.llm.openai:OllamaChat",
        "vllm": "engram.llm.openai:VllmChat",
        "llamacpp": "engram.llm.openai:LlamaCppChat",
        "anthropic": "engram.llm.anthropic:AnthropicChat",
        "gemini": "engram.llm.gemini:GeminiChat",
    },
}


def register(kind: str, name: str, target: str) -> None:
    """Make ``target`` (``"module:attribute[.attribute]"``) available as ``name`` of ``kind``;
    the settings then accept ``name`` wherever that kind is chosen."""
    _TARGETS.setdefault(kind, {})[name] = target


def names(kind: str) -> list[str]:
    return sorted(_TARGETS.get(kind, {}))


def resolve(kind: str, name: str) -> Any:
    """The factory registered as ``name`` for ``kind``; ``ConfigError`` lists what exists."""
    target = _TARGETS.get(kind, {}).get(name)
    if target is None:
        label = {"backend": "memory"}.get(kind, kind)
        raise ConfigError(f"unknown {label} backend {name!r} (available: {', '.join(names(kind))})")
    module_name, _, path = target.partition(":")
    found: Any = importlib.import_module(module_name)
    for attribute in path.split("."):
        found = getattr(found, attribute)
    return found
