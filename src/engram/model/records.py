"""engram's records, defined once for every backend and interface.

Records are frozen dataclasses: backends build them from trusted rows without re-validating,
while everything that comes from a user goes through ``make_draft`` / ``make_filter``
(``engram.model.drafts``) or ``make_message`` (``engram.model.messages``) first.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Literal

from engram.model.scope import Scope
from engram.where import Condition, fold_case, json_text


class Category(StrEnum):
    """The lifecycle of a memory (PtrClaw): core is permanent, knowledge decays, conversation expires."""

    CORE = "core"
    KNOWLEDGE = "knowledge"
    CONVERSATION = "conversation"


class Layer(StrEnum):
    EPISODIC = "episodic"
    SEMANTIC = "semantic"
    PROCEDURAL = "procedural"


KNOWN_TYPES = ("experience", "conversation", "learned", "social", "decision", "achievement")

# Where a type lives when no layer is given: things that happened are episodic, things known
# are semantic, how-to knowledge is procedural. Unknown words default to semantic.
_TYPE_LAYERS: dict[str, Layer] = {
    "experience": Layer.EPISODIC,
    "conversation": Layer.EPISODIC,
    "achievement": Layer.EPISODIC,
    "decision": Layer.EPISODIC,
    "learned": Layer.SEMANTIC,
    "social": Layer.SEMANTIC,
    "fact": Layer.SEMANTIC,
    "preference": Layer.SEMANTIC,
    "procedure": Layer.PROCEDURAL,
    "skill": Layer.PROCEDURAL,
    "howto": Layer.PROCEDURAL,
    "instruction": Layer.PROCEDURAL,
}


def layer_for_type(memory_type: str) -> Layer:
    """The layer a type is routed to when none is given (PHP entity's MemoryLayerManager)."""
    return _TYPE_LAYERS.get(memory_type, Layer.SEMANTIC)


@dataclass(frozen=True, slots=True)
class Memory:
    """One stored memory. ``links`` holds the ids of linked memories (bidirectional): every one
    as a store returns it, those its reader may read as ``Engram`` hands it out."""

    id: str
    key: str
    content: str
    category: Category = Category.KNOWLEDGE
    type: str = "learned"
    layer: Layer = Layer.SEMANTIC
    tags: tuple[str, ...] = ()
    metadata: Mapping[str, Any] = field(default_factory=dict)
    importance: float = 0.5
    related_entity: str | None = None
    source: str | None = None
    scope: Scope = Scope()
    created_at: float = 0.0
    updated_at: float = 0.0
    last_accessed: float | None = None
    recall_count: int = 0
    links: tuple[str, ...] = ()
    superseded_by: str | None = None
    # Text that helps find this memory without being part of it (e.g. the conversation turns
    # around it): indexed for full text (weighed lightly) and blended into its vector.
    search_context: str | None = None
    # Valid time: when the fact held in the world (None = open: since always / still). Record time
    # is created_at / updated_at (and versions); superseded_at is when it was superseded.
    valid_from: float | None = None
    valid_until: float | None = None
    superseded_at: float | None = None
    # When this store received the memory (its creation here, or the import or file that brought it;
    # a backend migration or engram's own snapshot carries it along). An import keeps the source's
    # record times, so the lifecycle jobs measure age from the later of the two (``written_here``,
    # ``used_here``, ``held_here_since``). None: stored before engram kept it, unknown.
    received_at: float | None = None

    @property
    def event_time(self) -> float:
        """When this memory happened or began to hold: its valid_from, else when it was recorded."""
        return self.created_at if self.valid_from is None else self.valid_from

    @property
    def held_here_since(self) -> float:
        """Since when this store holds the memory: its creation, or its arrival when later (a memory
        an import brought, created long before in its source). Decay's age."""
        return max(self.created_at, self.received_at or 0.0)

    @property
    def written_here(self) -> float:
        """Its last write as this store knows it: its last change (``updated_at``, else its creation),
        or its arrival when later. Retention's and hygiene's age of what is not measured by use."""
        return max(self.updated_at or self.created_at, self.received_at or 0.0)

    @property
    def used_here(self) -> float:
        """When it was last used as this store knows it: ``last_accessed`` (its last write when that is
        0/unset), or its arrival when later (an import keeps the source's access time too). The idle
        time of hygiene, and retention's age by access."""
        return max(self.last_accessed or self.updated_at or self.created_at, self.received_at or 0.0)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (the snapshot format); embeddings are never part of it."""
        return {
            "id": self.id,
            "key": self.key,
            "content": self.content,
            "category": self.category.value,
            "type": self.type,
            "layer": self.layer.value,
            "tags": list(self.tags),
            "metadata": dict(self.metadata),
            "importance": self.importance,
            "related_entity": self.related_entity,
            "source": self.source,
            "scope": str(self.scope),
            "created_at": self.created_at,
            "updated_at": self.updated_at,
            "last_accessed": self.last_accessed,
            "recall_count": self.recall_count,
            "links": list(self.links),
            "superseded_by": self.superseded_by,
            "search_context": self.search_context,
            "valid_from": self.valid_from,
            "valid_until": self.valid_until,
            "superseded_at": self.superseded_at,
            "received_at": self.received_at,
        }


@dataclass(frozen=True, slots=True)
class MemoryVersion:
    """A previous content of a memory, kept when an update changed it."""

    memory_id: str
    content: str
    replaced_at: float


@dataclass(frozen=True, slots=True)
class MemoryDraft:
    """Validated input for a store/upsert. ``key`` None means: generate one from the content."""

    content: str
    scope: Scope
    key: str | None = None
    category: Category = Category.KNOWLEDGE
    type: str = "learned"
    layer: Layer = Layer.SEMANTIC
    tags: tuple[str, ...] = ()
    metadata: Mapping[str, Any] = field(default_factory=dict)
    importance: float = 0.5
    related_entity: str | None = None
    source: str | None = None
    created_at: float | None = None
    search_context: str | None = None
    valid_from: float | None = None
    valid_until: float | None = None


WriteAction = Literal["created", "updated", "unchanged", "duplicate"]


@dataclass(frozen=True, slots=True)
class WriteResult:
    """What a store did: created a memory, updated one by key, found nothing to change, or
    found identical content already stored in the scope (``duplicate``: nothing written).
    ``previous`` is the memory as it was before an ``updated`` write (None otherwise), so what
    changed can be said (``changed_fields``)."""

    memory: Memory
    action: WriteAction
    warnings: tuple[str, ...] = ()
    previous: Memory | None = None


@dataclass(frozen=True, slots=True)
class ScoreParts:
    """The parts a hit's score is made of, so every ranking can be explained.

    ``text`` and ``vector`` are normalised to 0..1; ``fused`` combines them; ``recency`` and
    ``importance`` are the multipliers applied after fusion; ``link`` is the share inherited
    by a hit reached through a link rather than matched itself.
    """

    text: float = 0.0
    vector: float = 0.0
    fused: float = 0.0
    recency: float = 1.0
    importance: float = 1.0
    link: float = 0.0


@dataclass(frozen=True, slots=True)
class Hit:
    memory: Memory
    score: float
    parts: ScoreParts
    via: str | None = None  # id of the hit this one was reached from by a link


@dataclass(frozen=True, slots=True)
class RecallResult:
    """Hits best first, how they were found, and notes (fallbacks, or why nothing came back)."""

    hits: tuple[Hit, ...]
    mode: str = "text"
    notes: tuple[str, ...] = ()

    def __iter__(self) -> Iterator[Hit]:
        return iter(self.hits)

    def __len__(self) -> int:
        return len(self.hits)

    def __getitem__(self, index: int) -> Hit:
        return self.hits[index]

    @property
    def memories(self) -> list[Memory]:
        return [hit.memory for hit in self.hits]


Order = Literal["recent", "oldest", "importance", "accessed"]
ORDERS: tuple[str, ...] = ("recent", "oldest", "importance", "accessed")


@dataclass(frozen=True, slots=True)
class MemoryFilter:
    """Which memories an operation may see. ``scopes`` are the visible scopes; the other fields
    narrow further (``tags``: every listed tag must be present; ``where``: a condition on the
    metadata, ``engram.where``, which ``Filters.metadata``'s key = value tests join;
    ``related_entity``: the memory's, case ignored by Unicode full case folding (``engram.where.fold_case``:
    "alice" finds "Alice", "STRASSE" finds "Straße"; a name is the same name however it was typed,
    as the PHP entity's MySQL collation compared it); ``key``: the memory's key, exactly, an identifier).

    Time (``engram.temporal``): ``since``/``until`` bound the record time (created_at);
    ``happened_from``/``happened_before`` bound the event time (valid_from, else created_at),
    half-open; ``valid_at`` keeps facts valid at that instant ("as of": from their event time until
    ``valid_until``; superseded ones too, their validity closed); ``known_at`` keeps what was
    recorded by then and not yet superseded then. ``superseded_by``: the memories whose successor is
    that id, exactly (those it supersedes; set ``include_superseded`` too, or none is kept).
    """

    scopes: tuple[Scope, ...]
    categories: tuple[Category, ...] = ()
    types: tuple[str, ...] = ()
    layers: tuple[Layer, ...] = ()
    tags: tuple[str, ...] = ()
    related_entity: str | None = None
    since: float | None = None
    until: float | None = None
    include_superseded: bool = False
    happened_from: float | None = None
    happened_before: float | None = None
    valid_at: float | None = None
    known_at: float | None = None
    key: str | None = None
    where: Condition | None = None
    superseded_by: str | None = None

    def matches(self, memory: Memory) -> bool:
        """The reference semantics of a filter; SQL backends translate the same rules."""
        if memory.scope not in self.scopes:
            return False
        if self.categories and memory.category not in self.categories:
            return False
        if self.types and memory.type not in self.types:
            return False
        if self.layers and memory.layer not in self.layers:
            return False
        if self.tags and not set(self.tags).issubset(memory.tags):
            return False
        if self.related_entity is not None and (
            memory.related_entity is None or fold_case(memory.related_entity) != fold_case(self.related_entity)
        ):
            return False
        if self.key is not None and memory.key != self.key:
            return False
        if self.superseded_by is not None and memory.superseded_by != self.superseded_by:
            return False
        if self.where is not None and not self.where.matches(memory.metadata):
            return False
        if self.since is not None and memory.created_at < self.since:
            return False
        if self.until is not None and memory.created_at > self.until:
            return False
        return self._matches_time(memory)

    def _matches_time(self, memory: Memory) -> bool:
        if self.happened_from is not None and memory.event_time < self.happened_from:
            return False
        if self.happened_before is not None and memory.event_time >= self.happened_before:
            return False
        known = self.known_at
        if known is not None and memory.created_at > known:
            return False
        # Superseded after the record time asked about: it was not superseded yet, nor closed.
        superseded_then = memory.superseded_by is not None and (
            known is None or memory.superseded_at is None or memory.superseded_at <= known
        )
        if self.valid_at is not None:
            t = self.valid_at
            if memory.event_time > t:  # an unknown start counts from when it was recorded
                return False
            closed = memory.valid_until is not None and (known is None or memory.superseded_at is None
                                                         or memory.superseded_at <= known)
            if closed and memory.valid_until <= t:  # type: ignore[operator]
                return False
            # As of a valid time, a superseded fact counts while its validity is closed.
            return self.include_superseded or not superseded_then or closed
        return self.include_superseded or not superseded_then


def metadata_text(value: Any) -> str:
    """A metadata value's text form: a string as it is, another value as its canonical JSON text
    (what ``where`` equality compares other values by, ``engram.where``)."""
    return value if isinstance(value, str) else json_text(value)


# ---------------------------------------------------------------------------------------------
# Conversation history: messages (sclaw's LLMMessage) and exchanges (Clawless's JSONL entries).


class Role(StrEnum):
    SYSTEM = "system"
    USER = "user"
    ASSISTANT = "assistant"
    TOOL = "tool"


@dataclass(frozen=True, slots=True)
class ToolCall:
    """A tool call an assistant message asks for; ``arguments`` is JSON text, as providers send it."""

    id: str
    name: str
    arguments: str = "{}"

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "name": self.name, "arguments": self.arguments}


@dataclass(frozen=True, slots=True)
class Message:
    """One message of a conversation. A ``tool`` message answers the call named by ``tool_call_id``."""

    role: Role
    content: str
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)
    created_at: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"role": self.role.value, "content": self.content, "created_at": self.created_at}
        if self.tool_calls:
            data["tool_calls"] = [call.to_dict() for call in self.tool_calls]
        if self.tool_call_id is not None:
            data["tool_call_id"] = self.tool_call_id
        if self.metadata:
            data["metadata"] = dict(self.metadata)
        return data


@dataclass(frozen=True, slots=True)
class Appended:
    """What an append to a conversation did (``History.append_reported``/``append_many_reported``):
    the messages as stored (redacted under ``privacy.pii = "redact"``), whether they were stored
    (False when ``history.enabled`` is off), and the PII warnings (the kinds found, never the
    values), as ``WriteResult.warnings`` reports them for a memory."""

    messages: tuple[Message, ...]
    stored: bool
    warnings: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Exchange:
    """A user message and the answer to it, in one conversation (Clawless's history entry)."""

    conversation: str
    user: str
    assistant: str
    at: float
