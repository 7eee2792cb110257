"""engram's records and their validation, defined once for every backend and interface.

Records are frozen dataclasses: backends build them from trusted rows without re-validating,
while everything that comes from a user goes through ``make_draft`` / ``make_filter`` first,
which raise ``ValidationError`` naming the field, the problem and what is allowed.
"""

from __future__ import annotations

import json
import math
import numbers
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Literal

import numpy as np

from engram import jsondoc
from engram.errors import ValidationError
from engram.temporal.instants import parse_time, parse_validity, shown_time
from engram.where import Condition, all_of, json_text, metadata_condition, parse_where


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


_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:@-]{0,127}$")
_TYPE_WORD = re.compile(r"^[a-z][a-z0-9_-]{0,39}$")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
# Keys and tags are names shown on one line (a memory file's entry heading, a table cell): no line
# breaks or tabs either.
_NOT_PRINTABLE = re.compile(r"[\x00-\x1f\x7f]")


@dataclass(frozen=True, slots=True)
class Scope:
    """Where a memory lives: global (no agent), an agent, or a session of an agent.

    A recall from a session sees ``visible()``: the session, its agent and global.
    """

    agent: str | None = None
    session: str | None = None

    @property
    def kind(self) -> Literal["global", "agent", "session"]:
        if self.agent is None:
            return "global"
        return "agent" if self.session is None else "session"

    def visible(self) -> tuple[Scope, ...]:
        """This scope and every scope above it, most specific first."""
        chain: list[Scope] = [self]
        if self.session is not None:
            chain.append(Scope(self.agent))
        if self.agent is not None:
            chain.append(Scope())
        return tuple(chain)

    def __str__(self) -> str:
        if self.agent is None:
            return "global"
        if self.session is None:
            return f"agent:{self.agent}"
        return f"session:{self.agent}/{self.session}"

    @classmethod
    def parse(cls, text: str) -> Scope:
        """Inverse of ``str()``: ``global``, ``agent:NAME`` or ``session:AGENT/SESSION``."""
        if text == "global":
            return cls()
        kind, _, rest = text.partition(":")
        if kind == "agent" and rest:
            return make_scope(rest, None)
        if kind == "session" and "/" in rest:
            agent, _, session = rest.partition("/")
            return make_scope(agent, session)
        raise ValidationError("scope", f"cannot read {jsondoc.shown(text)}", "global, agent:NAME, session:AGENT/SESSION")


def make_scope(agent: str | None, session: str | None) -> Scope:
    """A validated scope; a session needs an agent."""
    for name, value in (("agent", agent), ("session", session)):
        if value is not None and (not isinstance(value, str) or not _NAME.match(value)):
            raise ValidationError(name, f"{jsondoc.shown(value)} is not a valid name",
                                  "letters, digits and . _ : @ -, 1-128 chars")
    if session is not None and agent is None:
        raise ValidationError("session", "a session scope needs an agent")
    return Scope(agent, session)


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

    @property
    def event_time(self) -> float:
        """When this memory happened or began to hold: its valid_from, else when it was recorded."""
        return self.created_at if self.valid_from is None else self.valid_from

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


# The fields an upsert by key replaces (id, key, scope, times, counters and links are kept).
UPSERT_FIELDS = (
    "content", "category", "type", "layer", "tags", "metadata", "importance", "related_entity", "source",
    "search_context", "valid_from", "valid_until",
)


# The fields an update may clear: each has an empty value (no tags, no metadata, none). The other
# upsert fields always hold one (content, category, type, layer, importance), so they can only change.
CLEARABLE_FIELDS = ("tags", "metadata", "related_entity", "source", "search_context", "valid_from", "valid_until")


def parse_clear(names: str | Iterable[str], given: Iterable[str] = ()) -> frozenset[str]:
    """The field names an update is asked to clear; raises ``ValidationError`` naming a field that
    cannot be empty, one also given a new value, or a name that is not a field."""
    chosen = (names,) if isinstance(names, str) else tuple(names)
    given = set(given)
    for name in chosen:
        if not isinstance(name, str) or name not in UPSERT_FIELDS:
            raise ValidationError("clear", f"{jsondoc.shown(name)} is not a field of a memory", CLEARABLE_FIELDS)
        if name not in CLEARABLE_FIELDS:
            # Named as ``clear``, the argument that asked: ``content`` is another argument, which
            # the CLI names ``--content``, HTTP and MCP ``content``, none of them given. ``names``
            # carries it for a door that clears by the field itself (HTTP's ``"content": null``).
            raise ValidationError("clear", f"{jsondoc.shown(name)} cannot be cleared: every memory has one (give a new {name} "
                                  "instead)", CLEARABLE_FIELDS, names=name)
        if name in given:
            raise ValidationError(name, "is both given a value and cleared", "a value or clear, not both")
    return frozenset(chosen)


def _differs(name: str, old: Memory, new: Memory | MemoryDraft) -> bool:
    if name == "metadata":  # a mapping of another type holding the same pairs is the same
        return dict(getattr(old, name)) != dict(getattr(new, name))
    return bool(getattr(old, name) != getattr(new, name))


def draft_changes(old: Memory, draft: MemoryDraft) -> bool:
    """Whether upserting ``draft`` over ``old`` would change anything (every backend asks this)."""
    return any(_differs(name, old, draft) for name in UPSERT_FIELDS)


# What a change to a memory can touch, in the order the audit trail names them: the upsert fields
# and, when a newer memory supersedes it, ``superseded_by``.
CHANGEABLE_FIELDS = (*UPSERT_FIELDS, "superseded_by")


def changed_fields(old: Memory, new: Memory) -> tuple[str, ...]:
    """The names of the fields that differ between two states of one memory (``CHANGEABLE_FIELDS``)."""
    return tuple(name for name in CHANGEABLE_FIELDS if _differs(name, old, new))


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
    metadata, ``engram.where``, which ``Filters.metadata``'s key = value tests join; ``key``: the
    memory's key, exactly).

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
        if self.related_entity is not None and memory.related_entity != self.related_entity:
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
# Validation: the one place user input becomes records.


def usable_text(field_name: str, value: str) -> str:
    """``value`` if every backend, file and terminal can hold it; raises ``ValidationError``.

    Refused: a lone surrogate (``"\\ud800"``, which JSON escapes and undecodable command-line
    bytes produce, cannot be encoded as UTF-8 by any store) and NUL (PostgreSQL text cannot hold
    it; C strings end at it). Other control characters are kept: they are escaped on the way to a
    memory file or a terminal instead."""
    if "\x00" in value:
        raise ValidationError(field_name, f"contains a NUL character at position {value.index(chr(0))}",
                              "text without NUL (\\x00) characters")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ValidationError(field_name, f"contains a lone surrogate ({json.dumps(value[exc.start])}) at position {exc.start},"
                              " which is not valid Unicode", "valid Unicode text (encodable as UTF-8)") from None
    return value


def usable_json(field_name: str, value: Any) -> None:
    """Every key and string inside a JSON value passes ``usable_text``."""
    if isinstance(value, str):
        usable_text(field_name, value)
    elif isinstance(value, Mapping):
        for k, v in value.items():
            usable_text(field_name, str(k))
            usable_json(field_name, v)
    elif isinstance(value, list | tuple):
        for item in value:
            usable_json(field_name, item)


def parse_query(value: Any, field_name: str = "query") -> str:
    """A search text: non-empty, usable text; raises ``ValidationError`` (naming the type given
    when it is neither text nor None: a number is not an empty query)."""
    if value is not None and not isinstance(value, str):
        raise _wrong_type(field_name, value, "some text to search for")
    if not value or not value.strip():
        raise ValidationError(field_name, "must not be empty", "some text to search for")
    return usable_text(field_name, value)


def parse_ref(value: Any, field_name: str = "ref") -> str:
    """A memory id or key to look up, trimmed as a key is when stored (``parse_key``): the key
    ``"note\n"`` (read from a file) stored the memory as ``note`` and then found nothing. No id or
    key starts or ends with white space, so none is lost. Raises ``ValidationError``."""
    if value is not None and not isinstance(value, str):
        raise _wrong_type(field_name, value, "a memory id or key")
    if not value or not value.strip():
        raise ValidationError(field_name, "must not be empty", "a memory id or key")
    return usable_text(field_name, value).strip()


# Bounds on how much one call returns (HTTP, MCP, CLI and library alike); more comes by paging
# with ``offset``. A recall ranks ``offset + limit`` hits, so its window is bounded too.
MAX_RECALL_LIMIT = 100
MAX_LINK_DEPTH = 3  # how many link hops a recall may follow (``depth``)
MAX_RECALL_WINDOW = 1000
MAX_LIST_LIMIT = 1000
# A page start past any store's size; a larger one overflowed the stores' 64-bit integers
# (SQLite's OverflowError reached MCP's ``list`` as an unexplained failure).
MAX_OFFSET = 1_000_000_000


# Values of the wrong type are refused, never converted: "0.5" is not a number, True is not 1 and
# "yes" is not True (each was taken, or refused as "out of range"). The text formats (the CLI's
# words, a memory file's fields) turn their text into a value first (``number_text``). A number is
# a number whatever its Python type: numpy's (a score a model gave) as a float, and a whole float
# (5.0, what a JSON client may send: JSON Schema's "integer" takes it) as an integer.


def _wrong_type(field_name: str, value: Any, allowed: str) -> ValidationError:
    # Spelt as JSON spells it (every door's input is JSON or text): ``got "0.5" (text)``, ``got
    # true (a boolean)``, ``got null``, never Python's ``got str '0.5'`` or ``got NoneType None``.
    # (``kind`` already holds a null, boolean or number; text, a list or an object is shown too.)
    sort = jsondoc.kind(value)
    given = sort if value is None or isinstance(value, bool | int | float) else f"{jsondoc.shown(value, 60)} ({sort})"
    return ValidationError(field_name, f"got {given}", allowed)


def is_number(value: Any) -> bool:
    """A real number (an int, a float, numpy's int64 or float32, a Fraction), and not a bool
    (which Python counts as an int; numpy's bool_ is no number)."""
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def parse_integer(value: Any, field_name: str, low: int, high: int | None = None, *, allowed: str | None = None) -> int:
    """A whole number from ``low`` to ``high`` (no bound when None), as an int: an int, numpy's
    integers, or a float with nothing after the point (5.0); raises ``ValidationError`` naming the
    type for a value of another type (5.5, a bool, text), and ``allowed`` (default: the range)."""
    allowed = allowed or (f"{low} or more" if high is None else f"{low} to {high}")
    if not is_number(value) or not (isinstance(value, numbers.Integral) or float(value).is_integer()):
        raise _wrong_type(field_name, value, f"an integer, {allowed}")
    whole = int(value)
    if whole < low or (high is not None and whole > high):
        raise ValidationError(field_name, f"{jsondoc.shown(value)} is out of range", allowed)
    return whole


def parse_number(value: Any, field_name: str, allowed: str, low: float | None = None, high: float | None = None) -> float:
    """A real number (not a bool, not text; numpy's too) from ``low`` to ``high`` (NaN refused as
    not a number), as a float; raises ``ValidationError`` with ``allowed``."""
    if not is_number(value):
        raise _wrong_type(field_name, value, allowed)
    number = float(value)
    if math.isnan(number):  # (compares as neither below nor above a bound: "out of range" said too little)
        raise ValidationError(field_name, f"{jsondoc.shown(value)} is not a number", allowed)
    if (low is not None and number < low) or (high is not None and number > high):
        raise ValidationError(field_name, f"{jsondoc.shown(value)} is out of range", allowed)
    return number


def parse_flag(value: Any, field_name: str) -> bool:
    """True or False (numpy's too), nothing else (a truthy "no" would have said yes); raises
    ``ValidationError``."""
    if not isinstance(value, bool | np.bool_):
        raise _wrong_type(field_name, value, "true or false")
    return bool(value)


def number_text(value: Any) -> Any:
    """A number written as text (a memory file's ``importance: 0.8``) as that number; any other
    value as it is, for the ``parse_*`` functions to check."""
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return value
    return value


def parse_limit(value: Any, maximum: int, field_name: str = "limit", *, paged: bool = True) -> int:
    """A page size from 1 to ``maximum``; raises ``ValidationError`` naming the range, and the
    offset that pages for more where the caller has one (``paged``)."""
    return parse_integer(value, field_name, 1, maximum,
                         allowed=f"1 to {maximum} (page with offset for more)" if paged else f"1 to {maximum}")


def parse_relevance(value: Any, field_name: str = "min_relevance") -> float:
    """A relevance cut from 0 to 1, the range of recall's scores (a cut above 1 would silently
    drop everything); raises ``ValidationError``."""
    return parse_number(value, field_name, "a number from 0 to 1", 0, 1)


def parse_offset(value: Any, maximum: int = MAX_OFFSET, field_name: str = "offset") -> int:
    """A page start from 0 to ``maximum``; raises ``ValidationError``."""
    return parse_integer(value, field_name, 0, maximum)


def parse_category(value: str | Category) -> Category:
    try:
        return Category(str(value).strip().lower())
    except ValueError:
        raise ValidationError("category", f"unknown category {jsondoc.shown(value)}", [c.value for c in Category]) from None


def parse_layer(value: str | Layer) -> Layer:
    try:
        return Layer(str(value).strip().lower())
    except ValueError:
        raise ValidationError("layer", f"unknown layer {jsondoc.shown(value)}", [layer.value for layer in Layer]) from None


def parse_type(value: str) -> str:
    word = str(value).strip().lower()
    if not _TYPE_WORD.match(word):
        raise ValidationError(
            "type", f"{jsondoc.shown(value)} is not a type word", f"{', '.join(KNOWN_TYPES)} or any lowercase word"
        )
    return word


TAGS_ALLOWED = "tags of up to 64 printable characters, no commas, none empty ([] or \"\" for no tags)"


def parse_tags(value: str | Iterable[str] | None, field: str = "tags", *, drop_empty: bool = False) -> tuple[str, ...]:
    """Tags from a list or a comma-separated string: trimmed, lowercased, de-duplicated. ``field``
    names the argument in errors (``forget``'s is ``tag``).

    No tags is ``[]``, or text that is empty or white space (``--tags ""``, which an update's docs
    give to clear them), as blank text is no value for the other optional fields. An empty tag among
    others (``["ok", ""]``, ``"a,,b"``, ``"a,"``) is refused, naming it, rather than dropped: the
    caller meant some tag there and got a memory without it. ``drop_empty`` keeps the old dropping
    for what engram reads rather than is told (memory files, snapshots, other systems' exports)."""
    if value is None:
        return ()
    if not isinstance(value, str) and (isinstance(value, Mapping) or not isinstance(value, Iterable)):
        raise ValidationError(field, f"got {type(value).__name__}", "a list of strings or comma-separated text")
    if isinstance(value, str) and not value.strip():
        return ()
    items = value.split(",") if isinstance(value, str) else list(value)
    tags: list[str] = []
    for number, item in enumerate(items, 1):
        # Named as JSON spells them (``got "a,b"``, ``got 5 (a number)``), as every door's input is
        # JSON or text and import errors read so: never Python's ``'a,b'`` or ``None``.
        if not isinstance(item, str):
            raise ValidationError(field, f"got {jsondoc.kind(item)} in the list", "tags as text")
        tag = usable_text(field, item).strip().lower()
        if not tag:
            if drop_empty:
                continue
            raise ValidationError(field, f"tag {number} of {jsondoc.shown(value if isinstance(value, str) else items, 72)} "
                                         "is empty", TAGS_ALLOWED)
        if len(tag) > 64 or "," in tag or _NOT_PRINTABLE.search(tag):
            raise ValidationError(field, f"got {jsondoc.shown(tag, 72)}, not a usable tag",
                                  "up to 64 printable characters, no commas")
        if tag not in tags:
            tags.append(tag)
    return tuple(tags)


# Deeper metadata was stored and then failed every read that serialised it (the HTTP answer, the
# audit trail: "maximum serialization depth exceeded"); no real metadata comes near it.
MAX_METADATA_DEPTH = 32


def _nesting(value: Any) -> int:
    """How deep lists and objects nest in ``value`` (1 for a flat object), counted without recursion."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, depth = stack.pop()
        deepest = max(deepest, depth)
        if deepest > MAX_METADATA_DEPTH:
            return deepest
        children = item.values() if isinstance(item, Mapping) else item if isinstance(item, list | tuple) else ()
        stack.extend((child, depth + 1) for child in children if isinstance(child, Mapping | list | tuple))
    return deepest


def parse_metadata(value: Mapping[str, Any] | str | None) -> dict[str, Any]:
    """Metadata as a JSON object (a dict, or its JSON text)."""
    if value is None:
        return {}
    if isinstance(value, str):
        try:  # (a name given twice is refused: json.loads would keep only the last value)
            value = jsondoc.loads(value, unique_names=True)
        except json.JSONDecodeError as exc:
            where = f" at char {exc.pos}" if exc.pos else ""
            raise ValidationError("metadata", f"malformed JSON ({exc.msg}{where})", "a JSON object") from None
    if not isinstance(value, Mapping):
        raise ValidationError("metadata", f"got {type(value).__name__}", "a JSON object")
    if (depth := _nesting(value)) > MAX_METADATA_DEPTH:
        raise ValidationError("metadata", f"is nested {depth} levels deep",
                              f"a JSON object nested at most {MAX_METADATA_DEPTH} levels")
    usable_json("metadata", value)
    try:  # (NaN and infinities are not JSON: an export holding them would not parse)
        return json.loads(json.dumps(dict(value), allow_nan=False))
    except (TypeError, ValueError) as exc:
        raise ValidationError("metadata", f"not JSON-serialisable: {exc}",
                              "JSON values (finite numbers, text, true/false, null, lists, objects)") from None


# The words every door uses for importance's range (the HTTP API's, MCP's and the library's alike).
IMPORTANCE_ALLOWED = "a number from 0 to 1"


def parse_importance(value: float | int) -> float:
    """A number from 0 to 1 (an int or a float: not text, not a bool); raises ``ValidationError``."""
    if not is_number(value):
        raise _wrong_type("importance", value, IMPORTANCE_ALLOWED)
    return parse_number(value, "importance", IMPORTANCE_ALLOWED, 0.0, 1.0)


MAX_KEY_CHARS = 200

# Why a memory was forgotten, kept in the audit trail with each memory it removed: a sentence, not
# a document (the HTTP API's ``?reason=`` allowed 500 characters while its body, MCP, the CLI and
# the library took any length, a megabyte copied into the trail once per memory).
MAX_REASON_CHARS = 500


def parse_reason(value: str | None) -> str | None:
    """A forget's reason: text every store can hold (``usable_text``), up to ``MAX_REASON_CHARS``;
    raises ``ValidationError``."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise ValidationError("reason", f"got {type(value).__name__}", f"text, up to {MAX_REASON_CHARS} characters")
    usable_text("reason", value)
    if len(value) > MAX_REASON_CHARS:
        raise ValidationError("reason", f"is {len(value)} characters", f"up to {MAX_REASON_CHARS} characters")
    return value


def parse_key(value: str) -> str:
    """A key: text, trimmed; raises ``ValidationError``. A number is refused, not turned into text
    (HTTP and MCP refuse it too); a format whose keys can be numbers (YAML) converts them itself."""
    if not isinstance(value, str):
        raise _wrong_type("key", value, f"text, 1-{MAX_KEY_CHARS} printable characters")
    key = usable_text("key", value).strip()
    if not key:
        raise ValidationError("key", "must not be empty", f"1-{MAX_KEY_CHARS} characters")
    if len(key) > MAX_KEY_CHARS or _NOT_PRINTABLE.search(key):
        raise ValidationError("key", "too long or has control characters", f"1-{MAX_KEY_CHARS} printable characters")
    return key


def parse_content(value: str, max_chars: int) -> str:
    """The content as given, byte for byte (whitespace at either end included): only refused,
    never changed. Raises ``ValidationError``."""
    if not isinstance(value, str):
        raise ValidationError("content", f"got {type(value).__name__}", "text")
    content = usable_text("content", value)
    if not content.strip():
        raise ValidationError("content", "must not be empty", f"1-{max_chars} characters")
    if len(content) > max_chars:
        raise ValidationError(
            "content", f"is {len(content)} characters; the maximum is {max_chars}", f"1-{max_chars} characters"
        )
    return content


# How far past the engine's clock a given ``created_at`` may be: another machine's clock (an MCP
# client's ``context.timestamp``) may run a little ahead of this one's.
CREATED_AT_LEEWAY_S = 300.0


# What a record time later than now is refused for: a memory's, a message's.
_RECORDED_ALLOWED = ("a time up to now: when engram learned the memory (when the fact holds in the world, a future time"
                     " too, is valid_from)")
_SENT_ALLOWED = "a time up to now: when the message was sent"


def recorded_at(value: Any, now: float, field_name: str = "created_at", allowed: str = _RECORDED_ALLOWED) -> float | None:
    """The ``created_at`` a new memory is given (None: now, the write's time). It is record time,
    when engram learned the memory, so never later than ``now`` (the engine's clock): a time within
    ``CREATED_AT_LEEWAY_S`` ahead (a clock running fast) is ``now``, and one further ahead is refused,
    as every later change (stamped with the clock) would come before it. When the fact holds in the
    world, a future one included, is ``valid_from``. A conversation message's ``created_at`` is read
    the same way (``make_message``; ``allowed`` says what it takes). Raises ``ValidationError`` naming
    ``field_name``."""
    at = parse_time(value, field_name)
    if at is None or at <= now:
        return at
    if at <= now + CREATED_AT_LEEWAY_S:
        return now
    raise ValidationError(field_name, f"{shown_time(at)} is later than now ({shown_time(now)})", allowed)


def sent_at(value: Any, now: float, field_name: str = "created_at") -> float | None:
    """A conversation message's ``created_at``, read as ``recorded_at`` reads a memory's: when it
    was sent, never more than ``CREATED_AT_LEEWAY_S`` later than ``now``. Raises ``ValidationError``
    naming ``field_name``."""
    return recorded_at(value, now, field_name, _SENT_ALLOWED)


def make_draft(
    content: str,
    *,
    scope: Scope,
    max_content_chars: int,
    key: str | None = None,
    category: str | Category = Category.KNOWLEDGE,
    type: str | None = None,
    layer: str | Layer | None = None,
    tags: str | Iterable[str] | None = None,
    metadata: Mapping[str, Any] | str | None = None,
    importance: float = 0.5,
    related_entity: str | None = None,
    source: str | None = None,
    created_at: float | None = None,
    search_context: str | None = None,
    valid_from: float | None = None,
    valid_until: float | None = None,
) -> MemoryDraft:
    """Validate everything a user may pass to a store; raises ``ValidationError``."""
    parsed_category = parse_category(category)
    if type is None:
        type = "conversation" if parsed_category is Category.CONVERSATION else "learned"
    parsed_type = parse_type(type)
    return MemoryDraft(
        content=parse_content(content, max_content_chars),
        scope=scope,
        key=None if key is None else parse_key(key),
        category=parsed_category,
        type=parsed_type,
        layer=layer_for_type(parsed_type) if layer is None else parse_layer(layer),
        tags=parse_tags(tags),
        metadata=parse_metadata(metadata),
        importance=parse_importance(importance),
        related_entity=_optional_text("related_entity", related_entity),
        source=_optional_text("source", source),
        created_at=parse_time(created_at, "created_at"),
        search_context=parse_search_context(search_context, max_content_chars),
        **parse_validity(valid_from, valid_until),
    )


def parse_search_context(value: str | None, max_chars: int) -> str | None:
    """Optional text indexed beside the content; at most twice the content limit."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise ValidationError("search_context", f"got {type(value).__name__}", "text")
    text = usable_text("search_context", value).strip()
    if len(text) > 2 * max_chars:
        raise ValidationError("search_context", f"is {len(text)} characters", f"up to {2 * max_chars} characters")
    return text or None


def make_filter(
    scopes: Sequence[Scope],
    *,
    category: str | Category | Sequence[str | Category] | None = None,
    type: str | Sequence[str] | None = None,
    layer: str | Layer | Sequence[str | Layer] | None = None,
    tags: str | Iterable[str] | None = None,
    related_entity: str | None = None,
    metadata: Mapping[str, Any] | None = None,
    since: float | None = None,
    until: float | None = None,
    include_superseded: bool = False,
    happened_from: float | None = None,
    happened_before: float | None = None,
    valid_at: Any = None,
    known_at: Any = None,
    where: Mapping[str, Any] | str | None = None,
) -> MemoryFilter:
    """Validate list/recall filters; raises ``ValidationError`` naming the filter."""
    return MemoryFilter(
        scopes=tuple(scopes),
        categories=tuple(parse_category(c) for c in _as_list(category)),
        types=tuple(parse_type(t) for t in _as_list(type)),
        layers=tuple(parse_layer(v) for v in _as_list(layer)),
        tags=_filter_tags(tags),
        related_entity=_filter_text("related_entity", related_entity),
        since=since,
        until=until,
        include_superseded=include_superseded,
        happened_from=parse_time(happened_from, "happened_from"),
        happened_before=parse_time(happened_before, "happened_before"),
        valid_at=parse_time(valid_at, "as_of"),
        known_at=parse_time(known_at, "known_at"),
        # metadata's key = value is where's equality on text forms (engram.where states both).
        where=all_of(metadata_condition(metadata), parse_where(where)),
    )


def _filter_tags(value: str | Iterable[str] | None) -> tuple[str, ...]:
    """A filter's tags, each a memory must have. Tags that name nothing (``""``, ``[" "]``: a blank
    ``?tag=`` or ``--tag ""``) are refused, as ``forget``'s ``tag`` refuses them: read as no tags,
    they narrowed nothing, and a recall or list asked for one tag answered with every memory."""
    if value is not None and not isinstance(value, str | Mapping) and isinstance(value, Iterable):
        value = list(value)  # (read twice below: a generator would be empty the second time)
    tags = parse_tags(value, drop_empty=True)  # (all of them empty: refused below, as naming no tag)
    if not tags and value is not None and (isinstance(value, str) or len(value) > 0):
        shown = value if isinstance(value, str) or len(value) != 1 else value[0]  # (--tag "" is [""])
        raise ValidationError("tags", f"got {jsondoc.shown(shown)}, which names no tag",
                              "a tag (non-empty text), or no tag filter at all")
    return tags


def _filter_text(field_name: str, value: str | None) -> str | None:
    """A filter's text (``related_entity``): blank text is refused, not read as no filter (which
    answered with every memory)."""
    text = _optional_text(field_name, value)
    if text is None and value is not None:
        raise ValidationError(field_name, f"got {jsondoc.shown(value)}, which names nothing",
                              "non-empty text, or no filter at all")
    return text


def _as_list(value: Any) -> list[Any]:
    if value is None:
        return []
    if isinstance(value, str | StrEnum) or not isinstance(value, Iterable):
        return [value]  # (one value, of whatever type: its parser names the field when it is wrong)
    return list(value)


def _optional_text(field_name: str, value: str | None) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise ValidationError(field_name, f"got {type(value).__name__}", "text, up to 200 characters")
    text = usable_text(field_name, value).strip()
    if len(text) > 200:
        raise ValidationError(field_name, "is longer than 200 characters", "up to 200 characters")
    return text or None


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


MAX_MESSAGE_CHARS = 1_000_000


def parse_role(value: str | Role) -> Role:
    try:
        return Role(str(value).strip().lower())
    except ValueError:
        raise ValidationError("role", f"unknown role {jsondoc.shown(value)}", [r.value for r in Role]) from None


def parse_tool_calls(value: Any) -> tuple[ToolCall, ...]:
    """Tool calls as ``ToolCall``s, engram dicts ``{id, name, arguments}``, OpenAI dicts
    ``{id, function: {name, arguments}}`` or their JSON text."""
    if value is None:
        return ()
    if isinstance(value, str):
        try:
            value = jsondoc.loads(value)
        except json.JSONDecodeError as exc:
            raise ValidationError("tool_calls", f"malformed JSON ({exc.msg})", "a JSON list of tool calls") from None
    if not isinstance(value, list | tuple):
        raise ValidationError("tool_calls", f"got {type(value).__name__}", "a list of {id, name, arguments}")
    calls: list[ToolCall] = []
    for item in value:
        if isinstance(item, ToolCall):
            calls.append(item)
            continue
        if not isinstance(item, Mapping):
            raise ValidationError("tool_calls", f"got {jsondoc.shown(item)}, not an object", "{id, name, arguments}")
        function = item.get("function") if isinstance(item.get("function"), Mapping) else item
        call_id, name, arguments = item.get("id"), function.get("name"), function.get("arguments", "{}")
        if not isinstance(call_id, str) or not call_id.strip():
            raise ValidationError("tool_calls.id", "every tool call needs a non-empty id", "a string")
        usable_json("tool_calls", [call_id, name, arguments])
        if not isinstance(name, str) or not name.strip():
            raise ValidationError("tool_calls.name", f"tool call {jsondoc.shown(call_id)} has no name", "a string")
        if not isinstance(arguments, str):
            try:
                # As sent, as closely as JSON text allows: names in the caller's order, text unescaped,
                # compact (as JSON.stringify and OpenAI write arguments). Nothing compares this text
                # but the response cache, where a different spelling is only a miss.
                arguments = json.dumps(arguments, ensure_ascii=False, separators=(",", ":"))
            except (TypeError, ValueError):
                raise ValidationError("tool_calls.arguments", "not JSON-serialisable", "JSON") from None
        calls.append(ToolCall(call_id.strip(), name.strip(), arguments))
    ids = [c.id for c in calls]
    if len(set(ids)) != len(ids):
        raise ValidationError("tool_calls.id", "tool call ids repeat within one message", "distinct ids")
    return tuple(calls)


def make_message(
    role: str | Role,
    content: str,
    *,
    tool_calls: Any = None,
    tool_call_id: str | None = None,
    metadata: Mapping[str, Any] | str | None = None,
    created_at: float | None = None,
    max_chars: int = MAX_MESSAGE_CHARS,
    now: float | None = None,
) -> Message:
    """Validate a message; raises ``ValidationError`` naming the field.

    With ``now`` (the engine's clock: every append gives it), ``created_at`` is read as a memory's
    is (``recorded_at``): when the message was sent, so a time more than ``CREATED_AT_LEEWAY_S``
    later than ``now`` is refused and one within it is ``now``; a message dated in the future
    would sort after every later one and outlive them in trimming.

    Only assistant messages carry tool calls and only tool messages a ``tool_call_id``; system
    and user messages need content (an assistant message that only calls tools may be empty).
    """
    parsed_role = parse_role(role)
    if not isinstance(content, str):
        raise ValidationError("content", f"got {type(content).__name__}", "text")
    usable_text("content", content)
    if tool_call_id is not None and isinstance(tool_call_id, str):
        usable_text("tool_call_id", tool_call_id)
    if len(content) > max_chars:
        raise ValidationError("content", f"is {len(content)} characters; the maximum is {max_chars}",
                              f"up to {max_chars} characters")
    calls = parse_tool_calls(tool_calls)
    if calls and parsed_role is not Role.ASSISTANT:
        raise ValidationError("tool_calls", f"a {parsed_role.value} message cannot call tools", "assistant messages")
    if parsed_role is Role.TOOL:
        if not isinstance(tool_call_id, str) or not tool_call_id.strip():
            raise ValidationError("tool_call_id", "a tool message must name the call it answers", "the id of a tool call")
        tool_call_id = tool_call_id.strip()
    elif tool_call_id is not None:
        raise ValidationError("tool_call_id", f"a {parsed_role.value} message cannot answer a tool call", "tool messages")
    if parsed_role in (Role.SYSTEM, Role.USER) and not content.strip():
        raise ValidationError("content", "must not be empty", f"1-{max_chars} characters")
    if parsed_role is Role.ASSISTANT and not calls and not content.strip():
        raise ValidationError("content", "an assistant message needs content or tool calls", "text")
    at = parse_time(created_at, "created_at") if now is None else sent_at(created_at, now)
    return Message(parsed_role, content, calls, tool_call_id, parse_metadata(metadata), 0.0 if at is None else at)


def message_from_dict(data: Any, max_chars: int = MAX_MESSAGE_CHARS) -> Message:
    """A message from its ``to_dict`` form (or an OpenAI-style dict); raises ``ValidationError``."""
    if not isinstance(data, Mapping):
        raise ValidationError("message", f"got {type(data).__name__}", "an object with role and content")
    return make_message(
        data.get("role", ""), data.get("content") or "", tool_calls=data.get("tool_calls"),
        tool_call_id=data.get("tool_call_id"), metadata=data.get("metadata"),
        created_at=data.get("created_at"), max_chars=max_chars,
    )
