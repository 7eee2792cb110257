"""Where the interfaces meet parts of engram built separately (history store, audit trail,
operator memory file, soul block, semantic conversation recall).

Each function asks the engine for the part and raises ``Unavailable`` when this build has none,
so the HTTP API answers 501 and MCP a tool error, instead of guessing. When a part lands, only
the function here changes.
"""

from __future__ import annotations

from typing import Any

from engram.engine import Engram
from engram.model import Category, Memory


class Unavailable(Exception):
    """A part of engram this build does not have (names the part)."""

    def __init__(self, part: str) -> None:
        self.part = part
        super().__init__(f"{part} is not available in this build of engram")


def _part(engram: Engram, name: str, label: str) -> Any:
    part = getattr(engram, name, None)
    if part is None:
        raise Unavailable(label)
    return part


def history(engram: Engram) -> Any:
    """The conversation history store (``engram.history``)."""
    return _part(engram, "history", "the conversation history store")


def audit(engram: Engram) -> Any:
    """The audit trail (``engram.audit``)."""
    return _part(engram, "audit", "the audit trail")


def semantic_recall(engram: Engram, text: str, chat_id: str | None, top_k: int) -> Any:
    """Clawless's on-demand semantic recall over conversation history (``engram.semantic_recall``)."""
    return _part(engram, "semantic_recall", "semantic conversation recall")(text, chat_id=chat_id, top_k=top_k)


SOUL_SECTIONS = (("soul:identity", "Your Identity"), ("soul:user", "About your human"),
                 ("soul:philosophy", "Interaction principles"))


def soul_block(engram: Engram) -> str:
    """The agent's identity block from its core memories (PtrClaw's build_soul_block)."""
    builder = getattr(engram, "soul_block", None)
    if builder is not None:
        return str(builder())
    parts = []
    for key, title in SOUL_SECTIONS:
        memory = engram.find(key)
        if memory is not None and memory.category is Category.CORE:
            parts.append(f"## {title}\n{memory.content}")
    return "\n\n".join(parts)


def core_memories(engram: Engram, limit: int = 200) -> list[Memory]:
    from engram.engine import Filters

    return engram.list(Filters(category="core"), order="importance", limit=limit)


def operator_memory(engram: Engram) -> str:
    """The operator's MEMORY.md text (``engram.operator_memory``)."""
    reader = _part(engram, "operator_memory", "the operator memory file (MEMORY.md)")
    return str(reader() if callable(reader) else reader)
