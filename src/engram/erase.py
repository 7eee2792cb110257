"""Erasing: what ``Engram.forget(erase=True)`` does after the forget itself.

A forget takes a memory out of the store, its indexes, recall and the memory folder (its versions
and links go with it), but the audit trail keeps the memory whole, so an operator can see what
went. An erase is for the user who asks that what they told engram be gone: every audit row of
the erasing agent's scopes (its own, its sessions', global) that holds anything of the memories
is rewritten to keep only its action, time, origin, id and scopes (``audit.erased``); one
``erased`` row per memory records the erase, without content; the embedding cache drops the
vectors of their texts (it keeps hashes, which confirm a guessed text); and a SQLite file is
scrubbed (``FileCare.scrub``) so none of their bytes remain in it, its WAL or the vector index
saved beside it: after the first erase on a file (a VACUUM, once), at a cost that grows with the
full-text index, which each erase merges, not with the whole file. The ids stay: they are how an
import (``importers.apply``: the ``forgotten`` rows) and an engram snapshot (``without_erased``:
the ``erased`` rows) know not to bring the memory back. A recall row's query is the user's words,
not the memory, and is kept.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from engram.audit import AuditEntry, forgotten_from
from engram.errors import StorageError
from engram.model import Memory, Scope

if TYPE_CHECKING:
    from engram.engine import Engram
    from engram.store.base import MemoryStore


def texts_of(store: MemoryStore, memories: Sequence[Memory]) -> list[str]:
    """Every text of ``memories`` the embedder may have cached: content, content with its search
    context (``writes.embed_texts``), and each earlier version's content, alone and with the
    search context (a version does not keep the context it had: the present one is the likeliest).
    Read before the forget, which deletes the versions."""
    texts = []
    for memory in memories:
        for content in (memory.content, *(v.content for v in store.versions(memory.id))):
            texts.append(content)
            if memory.search_context:
                texts.append(f"{content}\n{memory.search_context}")
    return texts


def erase_traces(engram: Engram, removed: Sequence[Memory], reason: str | None, texts: Sequence[str]) -> None:
    """After ``engram`` forgot ``removed``: rewrite their audit rows, record the ``erased`` rows,
    drop ``texts`` from the embedding cache, scrub the SQLite file (see the module docstring).
    Only rows of ``engram``'s agent (its scope and sessions) and global are touched: another
    agent's trail is its own. Raises ``StorageError`` when a store cannot be written."""
    agent = engram.scope.agent
    mine = {str(m.scope) for m in removed} | {str(scope) for scope in engram.scope.visible()}
    scopes = {s for s in mine if Scope.parse(s).agent in (None, agent)}
    trail = engram.backend.audit_log()
    trail.erase([m.id for m in removed], {(str(m.scope), m.key) for m in removed}, scopes, sessions_of=agent)
    if engram.settings is None or engram.settings.lifecycle.audit:  # a bare engine: whoever wired the trail
        at = engram.clock()
        trail.insert([AuditEntry(at, "erased", engram.origin, reason, str(engram.scope), m.id, None, str(m.scope))
                      for m in removed])
    cache = getattr(engram.embedder, "cache", None)
    if cache is not None and hasattr(cache, "drop"):
        cache.drop(texts)
    care = getattr(engram.backend, "care", None)
    if care is not None:
        try:
            care.scrub()
        except StorageError as exc:  # VACUUM waits for no other process's long read: say what is left
            raise StorageError(f"the memories are erased, but the database file still holds their deleted bytes"
                               f" until `engram vacuum` runs: {exc}") from exc


def without_erased(engram: Engram, memories: list[Memory]) -> tuple[list[Memory], int]:
    """``memories`` (a snapshot's, as it would import them) but those ``engram``'s agent erased
    (its ``erased`` rows), with links to them dropped, and how many were left out. A snapshot
    restores a memory merely forgotten since it was taken; one erased stays erased."""
    agent = engram.scope.agent
    scopes = {str(scope) for scope in engram.scope.visible()} | {str(m.scope) for m in memories if m.scope.agent == agent}
    gone = {memory_id for memory_id, _ in forgotten_from(
        engram.backend.audit_log(), {(m.id, m.scope.agent) for m in memories}, scopes=scopes, action="erased")}
    if not gone:
        return memories, 0
    kept = [replace(m, links=tuple(i for i in m.links if i not in gone)) for m in memories if m.id not in gone]
    return kept, len(memories) - len(kept)
