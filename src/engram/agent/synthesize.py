"""Synthesis (PtrClaw): turn recent conversation into atomic notes, reconciled with memory.

``Synthesizer.run`` takes the last 10 user + assistant messages, strips ``[Memory context]``
blocks, shows the model the stored entries most related to them, and asks at temperature 0.3
for a JSON list of notes ``{key, content, links, supersedes}`` (validated, one repair retry).

``reconcile`` applies notes - from synthesis or from an extractor - so memory does not fill with
copies:

- the same fact again (same key and content, or the same words under another key) is not a
  second entry (``unchanged`` / ``same``);
- a changed fact (an existing key, new content) updates that entry; the store keeps the old
  content in its ``versions``; a global memory under that key is left as it is (every agent
  reads it) and the note is stored as the agent's own entry under the key;
- a contradicted fact (``supersedes`` names it) stays stored but is marked superseded by the
  new note via ``Engram.supersede`` (its valid time closed) - never silently deleted.

Given the conversation the notes came from (the chat loop's synthesis and extraction: sclaw's ``Fact.Source``),
each note created or updated records it in its metadata under ``conversation``, the key as
``History.conversations`` lists it; an update merges it into the metadata already stored (a
changed fact keeps what else its metadata held, and names the conversation that last changed it).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from pydantic import BaseModel, Field

from engram.agent import prompts
from engram.agent.enrich import strip_memory_context
from engram.agent.extract import Fact
from engram.agent.withhold import Withheld, shown
from engram.engine import Engram
from engram.errors import EngramError, NotFoundError
from engram.llm.base import ChatProvider, user_message
from engram.llm.structured import complete_json
from engram.model import Category, Memory, Message, Role
from engram.text import normalise, query_terms

log = logging.getLogger("engram.agent.synthesize")

SYNTHESIS_TEMPERATURE = 0.3
SYNTHESIS_WINDOW = 10
SAME_FACT_OVERLAP = 0.9  # share of significant words two contents must share to be the same fact
CONVERSATION_METADATA = "conversation"  # the metadata key naming the conversation a note came from


class Note(BaseModel):
    """One atomic note as the model proposes it."""

    key: str | None = Field(None, max_length=200)
    content: str = Field(min_length=1)
    links: list[str] = Field(default_factory=list)
    supersedes: list[str] = Field(default_factory=list)
    type: str = "learned"


Outcome = Literal["created", "updated", "unchanged", "same", "superseding", "skipped"]


@dataclass(frozen=True, slots=True)
class Applied:
    note: Note
    outcome: Outcome
    memory: Memory | None = None
    superseded: tuple[str, ...] = ()
    problem: str | None = None


@dataclass(slots=True)
class SynthesisReport:
    applied: list[Applied] = field(default_factory=list)

    def count(self, *outcomes: Outcome) -> int:
        return sum(1 for a in self.applied if a.outcome in outcomes)


def conversation_window(messages: Sequence[Message], window: int = SYNTHESIS_WINDOW) -> list[Message]:
    """The last ``window`` user + assistant messages with text, context blocks stripped."""
    chosen = [m for m in messages if m.role in (Role.USER, Role.ASSISTANT) and m.content.strip()][-window:]
    return [Message(m.role, strip_memory_context(m.content) if m.role is Role.USER else m.content) for m in chosen]


def notes_from_facts(facts: Sequence[Fact]) -> list[Note]:
    return [Note(key=f.key, content=f.content, type=f.type) for f in facts]


class Synthesizer:
    def __init__(self, engram: Engram, provider: ChatProvider, *, temperature: float = SYNTHESIS_TEMPERATURE) -> None:
        self.engram = engram
        self.provider = provider
        self.temperature = temperature

    def propose(self, messages: Sequence[Message]) -> list[Note]:
        """The model's notes for the recent conversation, without what the user asked not to keep
        (``engram.agent.withhold``, as the extractors); raises ``ProviderError``."""
        window = conversation_window(messages)
        if not window:
            return []
        said = [m.content for m in window if m.role is Role.USER]
        conversation = "\n".join(f"{m.role.value}: {shown(m.content) if m.role is Role.USER else m.content}"
                                 for m in window)
        existing = _related(self.engram, " ".join(shown(text) for text in said))
        listing = "\n".join(f"- {m.key}: {m.content}" for m in existing) or "(none)"
        prompt = prompts.render("synthesis", existing=listing, conversation=conversation)
        notes = complete_json(self.provider, [user_message(prompt)], list[Note], temperature=self.temperature)
        withheld = Withheld.said_in(*said)
        return [note for note in notes if withheld.allows(note.content)]

    def run(self, messages: Sequence[Message], *, source: str = "synthesis",
            conversation: str | None = None) -> SynthesisReport:
        """Propose notes and reconcile them with memory, each written note naming ``conversation``
        (the key the messages came from) in its metadata as an extracted fact does; raises
        ``ProviderError``."""
        return reconcile(self.engram, self.propose(messages), source=source, conversation=conversation)


def _related(engram: Engram, text: str, limit: int = 20) -> list[Memory]:
    if not query_terms(text):
        return []
    return [m for m in engram.recall(text, limit=limit, touch=False).memories if m.category is not Category.CORE]


def _same_words(a: str, b: str) -> bool:
    wa, wb = set(query_terms(a, 200)), set(query_terms(b, 200))
    if not wa or not wb:
        return normalise(a).lower() == normalise(b).lower()
    return len(wa & wb) / len(wa | wb) >= SAME_FACT_OVERLAP


def reconcile(engram: Engram, notes: Sequence[Note], *, source: str = "synthesis",
              conversation: str | None = None) -> SynthesisReport:
    """Apply notes to memory (rules in the module docstring). A note that cannot be stored is
    reported as ``skipped`` with the reason; the others still apply. ``conversation``: the key
    of the conversation the notes came from, recorded in each written note's metadata. Raises
    ``StorageError``."""
    report = SynthesisReport()
    keyed: dict[str, Memory] = {}
    for note in notes:
        try:
            report.applied.append(_apply(engram, note, source, keyed, conversation))
        except EngramError as exc:
            if not isinstance(exc, NotFoundError | ValueError):
                raise
            report.applied.append(Applied(note, "skipped", problem=str(exc)))
    # Links last, so notes may link to each other whatever their order.
    for applied in report.applied:
        if applied.memory is None:
            continue
        for ref in applied.note.links:
            target = keyed.get(ref) or engram.find(ref)
            if target is not None and target.id != applied.memory.id and target.id not in applied.memory.links:
                engram.link(applied.memory.id, target.id)
    return report


def _apply(engram: Engram, note: Note, source: str, keyed: dict[str, Memory], conversation: str | None) -> Applied:
    content = note.content.strip()
    key = engram.privacy.proposed_key(note.key)  # (None: keyed from the note as stored)
    existing = engram.find(key) if key else None
    if existing is not None and existing.category is Category.CORE:
        # Identity lives in core entries that only hatching writes.
        return Applied(note, "skipped", problem=f"{note.key} is a core entry")
    if existing is not None and existing.scope.agent != engram.scope.agent:
        # A global memory under the note's key: every agent reads it, so one agent's conversation
        # never rewrites it (as it never retires one); the note becomes this agent's own entry.
        if normalise(existing.content) == normalise(content):
            keyed[existing.key] = existing
            return Applied(note, "unchanged", existing)
        existing = None
    if existing is None:
        twin = next((m for m in _related(engram, content, limit=5) if _same_words(m.content, content)), None)
        if twin is not None:
            keyed[note.key or twin.key] = twin
            return Applied(note, "same", twin)
    if existing is not None and normalise(existing.content) == normalise(content):
        keyed[existing.key] = existing
        return Applied(note, "unchanged", existing)
    # Metadata given to remember replaces the stored metadata: the conversation is merged into it.
    metadata = None if conversation is None else {
        **(existing.metadata if existing is not None else {}), CONVERSATION_METADATA: conversation}
    result = engram.remember(
        content, key=key or None, type=note.type, source=source, metadata=metadata,
        scope=existing.scope if existing is not None else None,
    )
    memory = result.memory
    keyed[memory.key] = memory
    if note.key:  # (the key proposed: another note of the batch links to it by that)
        keyed[note.key] = memory
    superseded: list[str] = []
    for ref in note.supersedes:
        old = engram.find(ref)
        if (old is not None and old.id != memory.id and old.superseded_by is None and old.category is not Category.CORE
                and memory.scope in old.scope.visible()):  # (an agent's note never retires a global fact)
            engram.supersede(old.id, memory.id)  # closes its valid time, keeps it stored
            superseded.append(old.key)
    outcome: Outcome = {"created": "created", "updated": "updated"}.get(result.action, "same")  # type: ignore[assignment]
    if superseded:
        outcome = "superseding"
    return Applied(note, outcome, memory, tuple(superseded))
