"""Consolidation: near-duplicate memories of one scope merged into one.

Two memories are near-duplicates when the cosine similarity of their stored vectors is at or
above ``threshold``; groups are the connected components of that relation (union-find) within a
slot: one scope and category, and the same attributes beside the text (type, related entity (case folded),
metadata other than this job's own) and the same numbers in the text. The same words with another
day or person in the metadata are another fact (a LangGraph item per day, say), and so are the same
words with another number: a sentence embedding barely tells "room 214" from "room 241" or "3 pm"
from "4 pm", so such pairs pass any useful threshold, while a reworded copy keeps its numbers.
Core memories and summaries are left alone; memories without a vector are not compared (run
``engram reindex`` first).

A memory whose key its writer chose (not the key engram derives from its text) is never merged
away: callers get and update it by that key. It may survive a group and absorb the others; a
group of several such memories merges only the rest into the first of them.

The survivor of a group is the most important member (then the most recalled, then the oldest).
It keeps: the union of the group's tags, the highest importance, the sum of recall counts in
``metadata.merged_recall_count``, every link of every member, and the history of the merged
contents in ``metadata.merged_from`` (id, key, content, created_at of each; screened for PII as
``remember`` screens metadata), and its own search context and valid time; its ``updated_at`` is
the group's last write (a merge is no new fact, so it does not make the survivor recent for
recall's recency). Its arrival (``received_at``) is the group's latest: a copy imported a moment
ago, merged into an older memory, would otherwise be purged with the old memory's age at the next
hygiene or retention run, which counts from the arrival. (A plug-in store without
``raise_received_at`` leaves such a group unmerged, logged, rather than lose the later arrival.)
The others are deleted with an audit reason naming the survivor. Re-running finds nothing new: idempotent.
A merge is one write (``MemoryStore.atomic``): one that fails part-way keeps nothing and tells no
listener, so the next run merges that group once, not its members a second time into a survivor
that already lists them. (A plug-in store without ``atomic`` writes it call by call, as before.)
That write reads its group again (``get_many_held``: on PostgreSQL the rows locked until it
commits) and merges what it read, so a change another process made after the comparison is kept;
a member deleted since, or whose text or slot changed, leaves the group to the next run.
"""

from __future__ import annotations

import json
import logging
import re
from collections import defaultdict
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import numpy as np

from engram.errors import ValidationError
from engram.events import MemoryEvent
from engram.ids import key_from_content
from engram.lifecycle.common import JobReport, announced_together, every_memory, forget_as_maintenance
from engram.lifecycle.settings import ConsolidationSettings
from engram.model import Category, Memory, MemoryDraft
from engram.where import fold_case

if TYPE_CHECKING:
    from engram.engine import Engram


# Rows of the similarity matrix computed at a time; progress is told after each block.
_BLOCK = 512
log = logging.getLogger("engram.lifecycle.consolidate")


def groups(memories: list[Memory], vectors: dict[str, np.ndarray], threshold: float,
           progress: Callable[[int], None] | None = None) -> list[list[Memory]]:
    """Groups (size >= 2) of memories whose vectors are connected by similarity >= ``threshold``;
    ``progress(rows)`` after each block of rows compared with all the others."""
    have = [m for m in memories if m.id in vectors]
    if len(have) < 2:
        return []
    matrix = np.stack([vectors[m.id] for m in have]).astype(np.float32)
    matrix /= np.maximum(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-12)
    parent = list(range(len(have)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    # Blocks of rows keep the similarity matrix small for large scopes.
    for start in range(0, len(have), _BLOCK):
        sims = matrix[start:start + _BLOCK] @ matrix.T
        rows, cols = np.nonzero(sims >= threshold - 1e-6)
        for r, c in zip(rows.tolist(), cols.tolist(), strict=True):
            a, b = root(start + r), root(c)
            if a != b:
                parent[max(a, b)] = min(a, b)
        if progress:
            progress(min(start + _BLOCK, len(have)))
    found: dict[int, list[Memory]] = defaultdict(list)
    for i, memory in enumerate(have):
        found[root(i)].append(memory)
    return [g for g in found.values() if len(g) > 1]


# What this job writes into a survivor's metadata: not an attribute that tells facts apart.
_OWN_METADATA = frozenset({"merged_from", "merged_recall_count"})


_NUMBER = re.compile(r"\d+")


def _numbers(text: str) -> str:
    """The numbers a text holds, in order of value's text (leading zeros dropped: "07" is "7")."""
    return " ".join(sorted(n.lstrip("0") or "0" for n in _NUMBER.findall(text)))


def _slot(memory: Memory) -> tuple[str, ...]:
    attributes = {k: v for k, v in memory.metadata.items() if k not in _OWN_METADATA}
    # The related entity as its filter compares it (case folded: "Alice" is "alice"); the survivor's spelling stays.
    return (str(memory.scope), memory.category.value, memory.type, fold_case(memory.related_entity or ""),
            json.dumps(attributes, sort_keys=True), _numbers(memory.content))


def named(memory: Memory) -> bool:
    """Whether the memory's key was chosen by its writer rather than derived from its text (the
    derived key, or it with the ``-N`` that keeps it unique)."""
    derived = key_from_content(memory.content)
    return memory.key != derived and re.fullmatch(re.escape(derived) + r"-\d+", memory.key) is None


def _fact(memory: Memory) -> tuple[object, ...]:
    """What a memory's place in a group of near-duplicates was decided on: its text (so its vector)
    and slot, and that it is still current (not superseded, not core, not a summary)."""
    return (memory.content, _slot(memory), memory.superseded_by, memory.category is Category.CORE,
            memory.type == "summary")


def _as_stored(group: list[Memory], read: Callable[[Sequence[str]], list[Memory]]) -> list[Memory] | None:
    """``group`` as stored now (``read``), or None when a member is gone or its fact changed since
    the group was found (its text, slot, supersession): the group is then left for the next run to
    find again from what is stored, rather than merged on a comparison no longer true. A member's
    other changes (tags, importance, recalls, links, arrival) are merged as they now stand."""
    stored = read([m.id for m in group])
    if len(stored) != len(group) or any(_fact(now) != _fact(then) for now, then in zip(stored, group, strict=True)):
        log.info("near-duplicates of %s not merged: a member was changed or deleted since they were compared;"
                 " the next run compares them again", group[0].key)
        return None
    return stored


def merge(engram: Engram, group: list[Memory], *, now: float,
          announce: Callable[[MemoryEvent], None] | None = None) -> tuple[Memory, tuple[Memory, ...]] | None:
    """Merge ``group`` into its survivor; returns the updated survivor and the removed memories,
    or None when every member but the survivor is named (nothing may be removed), or when PII
    redaction would make two names of its metadata one, or when the survivor would lose a later
    arrival to a store without ``raise_received_at`` (both logged; nothing is changed).

    The group is read again in the merge's own write (``MemoryStore.get_many_held`` inside
    ``atomic``: on PostgreSQL its rows locked until the commit), and the merge is computed from
    that read: another process changing a member after the group was found (between ``run``'s
    comparison and this write) is neither overwritten nor undone. A member deleted since, or whose
    text or slot changed (``_as_stored``), leaves the group unmerged this run (logged); the next
    run compares what is stored then. Its writes are one: all kept, or none when one fails (its
    error raised). Its two events (the others forgotten, the survivor updated) are then emitted, or
    handed to ``announce``."""
    raise_received_at = getattr(engram.store, "raise_received_at", None)  # a plug-in store may predate it

    def write(tell: Callable[[MemoryEvent], None], members: list[Memory]) -> tuple[Memory, tuple[Memory, ...]] | None:
        ordered = sorted(members, key=lambda m: (not named(m), -m.importance, -m.recall_count, m.created_at, m.id))
        survivor, others = ordered[0], [m for m in ordered[1:] if not named(m)]
        if not others:
            return None
        merged = [survivor, *others]
        # The group's latest arrival, when it is later than the survivor's own (None, an arrival unknown
        # because stored before engram kept them, is no later than any).
        later = max((o.received_at for o in others if o.received_at is not None
                     and (survivor.received_at is None or o.received_at > survivor.received_at)), default=None)
        if later is not None and raise_received_at is None:
            log.warning("near-duplicates of %s not merged: the %s store cannot give it their later arrival"
                        " (it has no raise_received_at)", survivor.key, getattr(engram.store, "name", "plug-in"))
            return None
        tags = list(survivor.tags)
        for other in others:
            tags.extend(t for t in other.tags if t not in tags)
        metadata = dict(survivor.metadata)
        history = list(metadata.get("merged_from", []))
        history.extend({"id": o.id, "key": o.key, "content": o.content, "created_at": o.created_at} for o in others)
        metadata["merged_from"] = history
        metadata["merged_recall_count"] = sum(m.recall_count for m in merged)
        # The merged texts are written again here, past ``remember``: screened as it screens metadata, so
        # under ``redact`` a text stored before redact was set is not copied in clear. (Under ``warn`` its
        # kinds were reported when it was stored; a copy is not reported again.)
        try:
            metadata, _ = engram.privacy.screen_metadata(metadata)
        except ValidationError as exc:  # two of its names redacted into one: left unmerged rather than one value lost
            log.warning("near-duplicates of %s not merged: %s", survivor.key, exc)
            return None
        draft = MemoryDraft(
            content=survivor.content, scope=survivor.scope, key=survivor.key, category=survivor.category,
            type=survivor.type, layer=survivor.layer, tags=tuple(tags), metadata=metadata,
            importance=max(m.importance for m in merged), related_entity=survivor.related_entity,
            source=survivor.source,
            # An upsert replaces these too: the survivor's own, or the merge would clear them.
            search_context=survivor.search_context, valid_from=survivor.valid_from, valid_until=survivor.valid_until,
        )
        # Written at the group's last write, not now: the merge changes tags and metadata, not the fact,
        # and recall's recency counts age from updated_at. It stays in use from now (hygiene).
        written = max(m.updated_at or m.created_at for m in merged)
        engram.store.upsert(draft, proposed_key=survivor.key, now=written)
        engram.store.touch([survivor.id], now, recall=False)
        if later is not None and raise_received_at is not None:  # before the others go: a failure leaves them stored
            raise_received_at(survivor.id, later)
        for other in others:
            for linked in other.links:
                if linked != survivor.id and linked not in {o.id for o in others}:
                    engram.store.link(survivor.id, linked)
        removed = forget_as_maintenance(engram, others, f"consolidated into {survivor.key} ({survivor.id})", now, tell)
        updated = engram.store.get_many([survivor.id])[0]
        tell(MemoryEvent("updated", (updated,), engram.scope, "maintenance",
                         f"consolidated {len(removed)} near-duplicates", now, previous=(survivor,)))
        return updated, removed

    announce = announce or engram.events.emit
    atomic = getattr(engram.store, "atomic", None)  # a plug-in store may predate it
    if atomic is None:  # each write its own, each change told as it is made (as before ``atomic``)
        members = _as_stored(group, engram.store.get_many)
        return None if members is None else write(announce, members)
    # One write, all or nothing: a failure part-way left the survivor claiming memories still stored,
    # which the next run merged again (listed twice in ``merged_from``, their recalls counted twice).
    # Its events are told once it is kept, never for a merge undone (listeners write too: the audit trail).
    held: list[MemoryEvent] = []
    read = getattr(engram.store, "get_many_held", engram.store.get_many)  # a plug-in store may predate it

    def once() -> tuple[Memory, tuple[Memory, ...]] | None:
        held.clear()  # PostgreSQL runs it again after a deadlock: only the events of the run it kept
        members = _as_stored(group, read)
        return None if members is None else write(held.append, members)

    done = atomic(once)
    for event in held:
        announce(event)
    return done


def run(engram: Engram, settings: ConsolidationSettings, *, now: float, agent: str | None = None,
        progress: Callable[[str, int, int], None] | None = None) -> JobReport:
    """Merge every group of near-duplicates in each scope and category: ``agent``'s scopes, or
    with ``agent=None`` every scope in the store. ``progress(phase, done, total)`` follows the
    two phases: ``comparing`` (memories compared) and ``merging`` (groups merged)."""
    tell = progress or (lambda phase, done, total: None)
    by_slot: dict[tuple[str, ...], list[Memory]] = defaultdict(list)
    for memory in every_memory(engram, agent=agent):
        if memory.category is Category.CORE or memory.type == "summary" or memory.superseded_by:
            continue
        by_slot[_slot(memory)].append(memory)
    # Every slot is compared before any is merged (the slots share no memory, so the groups are
    # the same), which lets the merging be counted too.
    total = sum(len(memories) for memories in by_slot.values())
    found: list[list[Memory]] = []
    compared = told = 0
    tell("comparing", 0, total)
    for memories in by_slot.values():
        vectors = engram.store.vectors_for([m.id for m in memories])
        within = (lambda rows, base=compared: tell("comparing", base + rows, total)) if len(memories) > _BLOCK else None
        found += groups(memories, vectors, settings.threshold, progress=within)
        compared += len(memories)
        if compared - told >= _BLOCK or compared == total:  # many small slots: told every block's worth
            tell("comparing", compared, total)
            told = compared
    removed: tuple[Memory, ...] = ()
    merged = 0
    with announced_together(engram) as announce:
        for n, group in enumerate(found, 1):
            done = merge(engram, group, now=now, announce=announce)
            if done is not None:
                removed += done[1]
                merged += 1
            tell("merging", n, len(found))
    return JobReport("consolidate", removed, merged, (f"merged groups {merged}",) if merged else ())
