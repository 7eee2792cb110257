"""``Entry``: one memory as a file holds it, the validation every parse goes through, and the
hash the sync state compares.

A format's parser produces raw fields (strings, lists, numbers as the text had them);
``build_entry`` validates them with the same rules as every other input (``engram.model``), so a
file can hold nothing the engine would refuse. A problem becomes a ``Problem`` with file and
line; the rest of the file is still read.

Times: the visible date of an entry (``(2026-02-09)`` or an ISO timestamp) is what a person
edits; the exact times travel in the entry's marker. When both agree (same UTC day, or within a
second for a full timestamp) the exact time is kept, so a round trip gives equal times.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from engram import jsondoc
from engram.errors import ValidationError
from engram.ids import key_from_content, new_id
from engram.model import (
    Category,
    Layer,
    Memory,
    Scope,
    layer_for_type,
    number_text,
    parse_category,
    parse_content,
    parse_id,
    parse_importance,
    parse_key,
    parse_layer,
    parse_metadata,
    parse_search_context,
    parse_tags,
    parse_type,
)
from engram.temporal.instants import iso, parse_time, parse_validity, record_times  # (iso: a file's dates, re-exported)

if TYPE_CHECKING:
    from engram.engine import Engram
    from engram.model import WriteResult
    from engram.privacy import PiiPolicy

from .paths import text_hash

# Metadata key shown as a markdown subheading instead of inside the metadata line.
SECTION_KEY = "section"


@dataclass(frozen=True, slots=True)
class Problem:
    """Something in a file that was not imported (or a refused file), or a warning about an entry
    that was (``warning: ...``: PII found by ``privacy.pii``), with where it is."""

    path: str
    line: int
    message: str
    # Another memory file the message names (a repeated id's other place), and the message told
    # without it: one agent's view never hears where in another agent's folder an entry is
    # (``SyncReport.seen_by``).
    names_file: str = ""
    message_unnamed: str = ""
    # False for a note on an entry that was taken all the same (PII found, a moved entry's new key):
    # the CLI says "note:" for it, not "skipped:".
    skipped: bool = True

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.message}" if self.line else f"{self.path}: {self.message}"


@dataclass(frozen=True, slots=True)
class Entry:
    """A validated memory entry read from (or to be written to) a file."""

    content: str
    id: str | None = None
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
    updated_at: float | None = None
    last_accessed: float | None = None
    recall_count: int = 0
    links: tuple[str, ...] = ()
    superseded_by: str | None = None
    search_context: str | None = None
    valid_from: float | None = None
    valid_until: float | None = None
    superseded_at: float | None = None
    line: int = 0
    text: str = ""  # the entry's source text, kept for .conflict files

    def digest(self) -> str:
        """The hash the sync state keeps: what a person can edit, not bookkeeping like access times,
        links or keys, which the database owns."""
        return text_hash(json.dumps([
            self.content, self.category.value, self.type, self.layer.value, list(self.tags),
            dict(self.metadata), self.importance, self.related_entity, self.source, self.search_context,
            *([self.valid_from, self.valid_until] if self.valid_from is not None or self.valid_until is not None else []),
        ], sort_keys=True, ensure_ascii=False))

    def stored_key(self, privacy: PiiPolicy) -> str:
        """The key this entry is stored under: its own, else one made from its content as ``privacy``
        stores it (redacted under ``redact``), as ``remember`` makes one. Made from the content as
        written, an entry written by hand without a key (``the admin is ops@example.com``) was stored
        as ``admin-ops-example-com``: the key column, the audit trail and the folder's marker kept what
        ``redact`` masked in its text. Content whose redaction is refused (two names of a JSON object
        made one) is not imported; its key is made from it screened as text, holding no finding all the same."""
        if self.key:
            return self.key
        try:
            content = privacy.screen(self.content)[0]
        except ValidationError:
            content = privacy.screen(self.content, as_json=False)[0]
        return key_from_content(content)

    def times(self, now: float) -> tuple[float, float, str | None]:
        """The creation and update times this entry's memory gets, and a warning when the file
        contradicts itself: the rule of every import (``record_times``). An entry with an update time
        but no creation (written by hand, or its date and ``created`` taken out) is created at that
        update, not at ``now``, after it; one created later than its update (its date edited by hand
        to a later day, or a memory engram was told was created in the future and changed since) is
        created at the earlier, its update kept, and the warning says so (the sync's report, or
        ``engram import``'s, gives it as a note on the entry's file and line, as it gives PII found:
        the entry is taken all the same). Both in order, as engram writes them: kept exactly."""
        return record_times(self.created_at, self.updated_at, now, ("created", "updated"))

    def to_memory(self, scope: Scope, now: float, privacy: PiiPolicy) -> Memory:
        """A ``Memory`` for importing this entry with its id, key (``stored_key``) and times (``times``;
        ``now`` when it has none). Its content is as written: the import screens it."""
        created, updated, _ = self.times(now)
        return Memory(
            id=self.id or new_id(), key=self.stored_key(privacy), content=self.content,
            category=self.category, type=self.type, layer=self.layer, tags=self.tags, metadata=dict(self.metadata),
            importance=self.importance, related_entity=self.related_entity, source=self.source, scope=scope,
            created_at=created, updated_at=updated, last_accessed=self.last_accessed, recall_count=self.recall_count,
            links=self.links, superseded_by=self.superseded_by, search_context=self.search_context,
            valid_from=self.valid_from, valid_until=self.valid_until, superseded_at=self.superseded_at,
        )


def from_memory(memory: Memory) -> Entry:
    return Entry(
        content=memory.content, id=memory.id, key=memory.key, category=memory.category, type=memory.type,
        layer=memory.layer, tags=memory.tags, metadata=dict(memory.metadata), importance=memory.importance,
        related_entity=memory.related_entity, source=memory.source, created_at=memory.created_at,
        updated_at=memory.updated_at, last_accessed=memory.last_accessed, recall_count=memory.recall_count,
        links=memory.links, superseded_by=memory.superseded_by, search_context=memory.search_context,
        valid_from=memory.valid_from, valid_until=memory.valid_until, superseded_at=memory.superseded_at,
    )


def store_entry(view: Engram, entry: Entry, scope: Scope) -> WriteResult:
    """An entry written by hand (no id yet) stored through the engine in ``scope``, with every field
    the file gives it; raises what ``Engram.remember`` raises. Its creation is ``Entry.times``' (an
    entry giving only an update time is created then, not now); a new memory is updated when created.

    An entry giving a key (YAML ``key:``, a marker's ``key:`` with an empty ``id:``) is stored under it.
    Adding an entry means a new memory: when another memory of ``scope`` holds the key, the entry is
    refused (``ValidationError`` naming ``key``, said with the entry's file and line by the caller, the
    entry left as written for the person to rename) rather than given to ``remember``, whose upsert
    by key would overwrite that memory with it."""
    created = entry.created_at if entry.updated_at is None else entry.times(0.0)[0]  # (0.0: never used, a time given)
    fields: dict[str, Any] = dict(
        category=entry.category, type=entry.type, layer=entry.layer, tags=entry.tags,
        metadata=dict(entry.metadata), importance=entry.importance, related_entity=entry.related_entity,
        source=entry.source, scope=scope, created_at=created, search_context=entry.search_context,
        valid_from=entry.valid_from, valid_until=entry.valid_until,
    )
    if entry.key:
        return view._remember_new(entry.content, key=entry.key, **fields)
    return view.remember(entry.content, **fields)


def memory_digest(memory: Memory) -> str:
    return from_memory(memory).digest()


def hashes_as_but_for_importance(entry: Entry, importance: float, digest: str) -> bool:
    """Whether ``entry``, given ``importance`` (the other side's, as the last sync hashed it),
    hashes as ``digest``: it changed only its importance since. The engine changes importance on
    its own (a recall strengthens a memory, decay lowers it), so such a change says nothing of an
    edit (``reconcile._one_side_only_importance``, ``moves.moved_here``)."""
    return replace(entry, importance=importance).digest() == digest


def default_type(category: Category) -> str:
    return "conversation" if category is Category.CONVERSATION else "learned"


def build_entry(raw: Mapping[str, Any], *, max_content_chars: int, line: int = 0, text: str = "") -> Entry:
    """Validate raw fields from a file into an ``Entry``; raises ``ValidationError`` naming the field.

    Recognised fields: content, id, key, category, type, layer, tags, metadata, importance,
    related_entity, source, date (the visible date), created_at, updated_at, last_accessed,
    recall_count, links, superseded_by, valid_from, valid_until, superseded_at. The six times read
    alike (``_time``): epoch seconds, ISO 8601 text, or a date/datetime YAML made of an unquoted one.
    """
    category = parse_category(raw.get("category") or Category.KNOWLEDGE)
    memory_type = parse_type(raw.get("type") or default_type(category))
    layer = parse_layer(raw["layer"]) if raw.get("layer") else layer_for_type(memory_type)
    entry_id = raw.get("id")
    if entry_id is not None:
        # Trimmed (a hand edit's spaces around it), then an id as every import takes one (``parse_id``):
        # one with a space inside would be stored and then named by no door.
        try:
            entry_id = parse_id(entry_id.strip() if isinstance(entry_id, str) else entry_id)
        except ValidationError:
            raise ValidationError("id", f"{jsondoc.shown(raw['id'])} is not an id",
                                  "the id engram wrote, or none for a new entry") from None
    precise = _time(raw.get("created_at"), "created_at")
    return Entry(
        content=parse_content(raw.get("content", ""), max_content_chars),
        id=entry_id,
        key=parse_key(raw["key"]) if raw.get("key") else None,
        category=category,
        type=memory_type,
        layer=layer,
        tags=parse_tags(raw.get("tags"), drop_empty=True),  # (a file kept so far still syncs)
        metadata=parse_metadata(raw.get("metadata")),
        importance=parse_importance(number_text(raw.get("importance", 0.5))),  # (markdown's fields are text)
        related_entity=_text(raw.get("related_entity"), "related_entity", one_line=False),
        source=_text(raw.get("source"), "source", one_line=False),
        created_at=resolve_date(raw.get("date"), precise),
        updated_at=_time(raw.get("updated_at"), "updated_at"),
        last_accessed=_time(raw.get("last_accessed"), "last_accessed"),
        recall_count=_count(raw.get("recall_count"), "recall_count"),
        links=tuple(str(link) for link in raw.get("links") or ()),
        superseded_by=_text(raw.get("superseded_by"), "superseded_by"),
        search_context=parse_search_context(raw.get("search_context"), max_content_chars),
        **parse_validity(_instant(raw.get("valid_from")), _instant(raw.get("valid_until"))),
        superseded_at=_time(raw.get("superseded_at"), "superseded_at"),
        line=line,
        text=text,
    )


def resolve_date(value: Any, precise: float | None) -> float | None:
    """The creation time from a visible date and the exact time in the marker (see module doc)."""
    if value is None or value == "":
        return precise
    if isinstance(value, dt.datetime):
        moment = value if value.tzinfo else value.replace(tzinfo=dt.UTC)
        return _closest(moment.timestamp(), precise, 1.0)
    if isinstance(value, dt.date):
        return _same_day(value, precise)
    text = str(value).strip()
    try:
        if len(text) == 10:
            return _same_day(dt.date.fromisoformat(text), precise)
        moment = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise ValidationError("date", f"{jsondoc.shown(text)} is not a valid date",
                              "YYYY-MM-DD or an ISO 8601 timestamp") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=dt.UTC)
    return _closest(moment.timestamp(), precise, 1.0)


def _same_day(day: dt.date, precise: float | None) -> float:
    if precise is not None and utc(precise).date() == day:
        return precise
    return dt.datetime(day.year, day.month, day.day, tzinfo=dt.UTC).timestamp()


def _closest(seen: float, precise: float | None, tolerance: float) -> float:
    return precise if precise is not None and abs(precise - seen) < tolerance else seen


def utc(ts: float) -> dt.datetime:
    return dt.datetime.fromtimestamp(ts, dt.UTC)


def _instant(value: Any) -> Any:
    """A date or datetime a YAML loader made of an unquoted time, as epoch seconds (a date: its
    midnight UTC; naive: UTC, as ``parse_time`` reads ISO text without an offset); else ``value``."""
    if isinstance(value, dt.datetime):
        return (value if value.tzinfo else value.replace(tzinfo=dt.UTC)).timestamp()
    if isinstance(value, dt.date):
        return dt.datetime(value.year, value.month, value.day, tzinfo=dt.UTC).timestamp()
    return value


def show_instant(value: float) -> str:
    """A valid time as a person reads and edits it: ISO 8601 UTC, or the exact number when it has
    fractions of a second (so it round-trips)."""
    if value != int(value):
        return repr(value)
    return iso(value)


def _time(value: Any, name: str) -> float | None:
    """A time field of a file (``created_at``, ``updated_at``, ``last_accessed``, ``superseded_at``),
    read as ``valid_from`` is: epoch seconds (what engram writes, kept exactly), ISO 8601 text, or
    a YAML date/datetime, since a person editing a file by hand writes dates. Empty: none."""
    if value is None or value == "":
        return None
    return parse_time(_instant(value), name)


def _count(value: Any, name: str) -> int:
    number = _number(value, name)
    if number is None:
        return 0
    if not number.is_integer() or number < 0:
        raise ValidationError(name, f"{jsondoc.shown(value)} is not a count", "a whole number, 0 or more")
    return int(number)


def _number(value: Any, name: str) -> float | None:
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        raise ValidationError(name, f"{jsondoc.shown(value)} is not a number", "a whole number, 0 or more")
    try:
        return float(value)
    except (TypeError, ValueError, OverflowError):  # (OverflowError: a YAML int beyond any float)
        raise ValidationError(name, f"{jsondoc.shown(value)[:40]} is not a number", "a whole number, 0 or more") from None


def _text(value: Any, name: str, *, one_line: bool = True) -> str | None:
    """A short text field. ``one_line=False`` for ``related_entity`` and ``source``: the model takes
    line breaks in them (any text but NUL), so a file must give back what the database wrote to it."""
    if value is None:
        return None
    if not isinstance(value, str | int | float) or isinstance(value, bool):
        raise ValidationError(name, f"{jsondoc.shown(value)} is not text", "a short text")
    text = str(value).strip()
    if not one_line:
        if len(text) > 200:
            raise ValidationError(name, "is longer than 200 characters", "up to 200 characters")
        return text or None
    if len(text) > 200 or "\n" in text:
        raise ValidationError(name, "is longer than 200 characters or has line breaks", "one line, up to 200 characters")
    return text or None


def with_position(entry: Entry, line: int, text: str) -> Entry:
    return replace(entry, line=line, text=text)
