"""Backends and providers by name: built-ins and plug-ins register the same way, imported lazily.

A target is ``"module:attribute"``; it is imported only when chosen, so an optional backend's
packages are needed only by those who use it. ``register`` lets a plug-in add its own.
"""

from __future__ import annotations

import importlib
from typing import Any

from engram import jsondoc
from engram.errors import ConfigError, ValidationError

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


# The setting that chooses each kind and what a name of it is, so a refusal names the key a user
# set (``backend = "mongo"`` in the config file, ``--backend``, ``ENGRAM_HISTORY__BACKEND``).
_CHOSEN_BY = {"backend": ("backend", "memory backend"), "history": ("history.backend", "history backend"),
              "embedding": ("embeddings.provider", "embedding provider"), "llm": ("llm.provider", "llm provider")}


def refuse_unknown(kind: str, name: str) -> None:
    """``ValidationError`` on the setting that chooses ``kind`` (``backend``) when nothing is
    registered as ``name``, listing what is: the settings' check of a name given anywhere, and a
    door's of its option (``--backend``: bad input, named as typed)."""
    if name not in _TARGETS.get(kind, {}):
        setting, label = _CHOSEN_BY.get(kind, (kind, kind))
        raise ValidationError(setting, f"unknown {label} {jsondoc.shown(name)}", names(kind))


def resolve(kind: str, name: str) -> Any:
    """The factory registered as ``name`` for ``kind``; ``ConfigError`` names the setting and
    lists what exists."""
    target = _TARGETS.get(kind, {}).get(name)
    if target is None:
        setting, label = _CHOSEN_BY.get(kind, (kind, kind))
        raise ConfigError(f"{setting}: unknown {label} {jsondoc.shown(name)} (allowed: {', '.join(names(kind))})")
    module_name, _, path = target.partition(":")
    found: Any = importlib.import_module(module_name)
    for attribute in path.split("."):
        found = getattr(found, attribute)
    return found
