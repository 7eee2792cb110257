"""Where the interfaces meet engram's other parts: conversation history, the audit trail, the
operator memory file, the soul block and Clawless's semantic recall over conversations.

The interfaces (HTTP, MCP) call these and nothing else of those parts, so the shapes they answer
with are decided here, once.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from engram.audit import AuditEntry
from engram.engine import Engram, Filters
from engram.errors import EmbeddingError
from engram.history.keys import parse_conversation_key
from engram.history.service import History
from engram.interfaces.present import iso
from engram.model import Exchange, Memory

log = logging.getLogger("engram.interfaces")


def warm_up_in_background(engram: Engram,
                          on_done: Callable[[BaseException | None], None] | None = None) -> threading.Thread:
    """Load the embedding model in a daemon thread (servers, once they answer): the first recall
    then finds it loaded; then embed memories left without a vector. A failure here is logged
    (recall reports embedder errors itself) and handed to ``on_done``, which is called with
    ``None`` on success (a server's readiness)."""

    def warm() -> None:
        error: BaseException | None = None
        try:
            warm_up = getattr(engram.embedder, "warm_up", None)
            if warm_up is not None:
                warm_up()
            # Memories a crashed run stored without a vector are embedded now, not at the next reindex.
            healed = engram.embed_missing()
            if healed:
                log.info("embedded %d memories stored without a vector", healed)
            # embed_missing gives up quietly (a provider unreachable, another model's vectors in the
            # store: it logs why); memories it left without a vector are found by full text only.
            if engram.embedder is not None and engram.store.missing_vectors(limit=1):
                error = EmbeddingError("memories are left without a vector: the embedder could not embed them "
                                       "(the log says why); they are found by full text only until it can")
        except Exception as exc:  # the edge of a background thread: recall will say what is wrong
            log.warning("loading the embedding model in the background failed", exc_info=True)
            error = exc
        finally:
            if on_done is not None:
                on_done(error)

    thread = threading.Thread(target=warm, name="engram-warm-up", daemon=True)
    thread.start()
    return thread


def history(engram: Engram) -> History:
    """The conversation history of the engine's agent (``settings.history``)."""
    return engram.history


def conversations(engram: Engram) -> list[tuple[str, int]]:
    """The engine agent's conversations (history belongs to an agent), with their message counts."""
    store = engram.history
    return [(key, store.count(key)) for key in store.conversations()]


@dataclass(frozen=True, slots=True)
class AgentAudit:
    """The audit trail as one agent may see it: entries about memories in its visible scopes."""

    engram: Engram

    def entries(self, limit: int = 50, *, action: str | None = None, origin: str | None = None,
                since: float | str | None = None, until: float | str | None = None,
                memory: str | None = None) -> list[AuditEntry]:
        """``Engram.audit_trail``: newest first, narrowed by ``action``, ``origin``, ``since``/``until``
        (epoch seconds, ISO 8601 or a time phrase) and ``memory`` (id or key)."""
        return self.engram.audit_trail(limit, action=action, origin=origin, since=since, until=until, memory=memory)

    def recent(self, limit: int = 50, *, action: str | None = None, since: float | str | None = None,
               until: float | str | None = None, memory: str | None = None) -> list[dict[str, Any]]:
        """``entries`` as the HTTP API shows them."""
        mine = self.entries(limit, action=action, since=since, until=until, memory=memory)
        return [
            {"at": e.at, "action": e.action, "origin": e.origin, "reason": e.reason, "memory_id": e.memory_id,
             "memory_key": e.memory_key, "memory_scope": e.memory_scope, "detail": e.detail}
            for e in mine
        ]


def audit(engram: Engram) -> AgentAudit:
    return AgentAudit(engram)


def semantic_recall(engram: Engram, text: str, chat_id: str | None, top_k: int | None) -> dict[str, Any]:
    """Clawless's answer: matching exchanges oldest first, and a preformatted recap block; ``top_k``
    None is the history's ``recap_top_k``, else 1 to ``MAX_RECAP_TOP_K`` (``History.semantic_recall``
    checks it, for every door)."""
    found = engram.history.semantic_recall(text, key=chat_id, top_k=top_k)
    return {
        "entries": [
            _exchange_entry(exchange, score) for exchange, score in found.hits
        ],
        "recap": found.recap,
    }


def _exchange_entry(exchange: Exchange, score: float) -> dict[str, Any]:
    """Clawless's entry ``{userMessage, botResponse, chatId, platform, timestamp}``: the chat id and
    platform are the key's chat and channel parts; ``conversation`` is the whole engram key as the
    history recalls it (``telegram:7``, as users write it); the timestamp is ISO 8601 UTC with
    milliseconds (``2026-03-02T07:41:09.318Z``), as Clawless writes it in its history lines."""
    key = parse_conversation_key(exchange.conversation)
    return {"userMessage": exchange.user, "botResponse": exchange.assistant, "chatId": key.chat,
            "platform": key.channel, "conversation": exchange.conversation,
            "timestamp": iso(exchange.at, timespec="milliseconds"), "score": round(score, 6)}


def soul_block(engram: Engram) -> str:
    """The agent's identity block from its core memories (PtrClaw's build_soul_block)."""
    from engram.agent.soul import build_soul_block

    return build_soul_block(engram)


def core_memories(engram: Engram, limit: int = 200) -> list[Memory]:
    return engram.list(Filters(category="core"), order="importance", limit=limit)


def operator_memory(engram: Engram) -> str:
    """The operator's MEMORY.md (created when missing), up to ``chat.memory_max_chars``; "" for an
    engine built without settings (it has no home folder)."""
    from engram.files.memory_md import read_memory_md

    settings = engram.settings
    if settings is None:
        return ""
    return read_memory_md(settings.home, settings.chat.memory_max_chars)
