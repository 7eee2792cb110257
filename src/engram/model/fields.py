"""Validation of a memory's fields, one parser each (category, type, tags, metadata, key, content,
created_at ...): the one place user input becomes the values a record holds. Each raises
``ValidationError`` naming the field, the problem and what is allowed.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

from engram import jsondoc
from engram.errors import ValidationError
from engram.model.records import KNOWN_TYPES, Category, Layer
from engram.model.values import _wrong_type, is_number, parse_number, usable_json, usable_text
from engram.temporal.instants import parse_time, shown_time

_TYPE_WORD = re.compile(r"^[a-z][a-z0-9_-]{0,39}$")
# Keys and tags are names shown on one line (a memory file's entry heading, a table cell): no line
# breaks or tabs either.
_NOT_PRINTABLE = re.compile(r"[\x00-\x1f\x7f]")


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


# How many different tags one memory (or one filter) may hold. Tags are labels to narrow by: the
# systems engram imports from give a handful (mem0's categories, a note's front-matter tags, the
# headings above a fact), so 100 is generous. Without a bound 100,000 were taken (seconds to parse,
# a memory file's tags line as long), and a filter built one SQL EXISTS a tag: past about a
# thousand, SQLite refused the query ("Expression tree is too large") with a storage error.
MAX_TAGS = 100
TAGS_ALLOWED = (f"at most {MAX_TAGS} different tags, each up to 64 printable characters, no commas, none empty "
                "([] or \"\" for no tags)")


def parse_tags(value: str | Iterable[str] | None, field: str = "tags", *, drop_empty: bool = False,
               bounded: bool = True) -> tuple[str, ...]:
    """Tags from a list or a comma-separated string: trimmed, lowercased, de-duplicated. ``field``
    names the argument in errors (``forget``'s is ``tag``).

    No tags is ``[]``, or text that is empty or white space (``--tags ""``, which an update's docs
    give to clear them), as blank text is no value for the other optional fields. An empty tag among
    others (``["ok", ""]``, ``"a,,b"``, ``"a,"``) is refused, naming it, rather than dropped: the
    caller meant some tag there and got a memory without it. ``drop_empty`` keeps the old dropping
    for what engram reads rather than is told (memory files, snapshots, other systems' exports).

    More than ``MAX_TAGS`` tags are refused, counted as kept (``"Ops, ops "`` is one tag), from what
    engram reads too; ``bounded=False`` reads any number (engram's JSON store reading back what it
    stored before there was a bound)."""
    if value is None:
        return ()
    if not isinstance(value, str) and (isinstance(value, Mapping) or not isinstance(value, Iterable)):
        raise ValidationError(field, f"got {type(value).__name__}", "a list of strings or comma-separated text")
    if isinstance(value, str) and not value.strip():
        return ()
    items = value.split(",") if isinstance(value, str) else list(value)
    tags: dict[str, None] = {}  # (a dict keeps the order given and finds a repeat at once)
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
        tags[tag] = None
        if bounded and len(tags) > MAX_TAGS:  # (refused at the first tag past the bound: the rest unread)
            raise ValidationError(field, f"has more than {MAX_TAGS} different tags ({len(items)} given)", TAGS_ALLOWED)
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
    if not isinstance(value, Mapping):  # named as JSON spells it: JSON text gave it ("got a list", not list)
        raise ValidationError("metadata", f"got {jsondoc.kind(value)}", "a JSON object")
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


# An id from outside (a snapshot's, an export's ``engram`` entry): engram's own are UUIDs. One holding
# white space or a control character was stored as given, and then no door reached it (a ref is
# trimmed, ``values.parse_ref``) and no memory file could carry it (a marker's id ends at a space; a
# YAML entry's id is trimmed), so the next sync forgot it from the database or failed.
MAX_ID_CHARS = 100
ID_ALLOWED = f"1-{MAX_ID_CHARS} characters without spaces or control characters (engram's ids are UUIDs)"
_NOT_IN_AN_ID = re.compile(r"[\s\x00-\x1f\x7f-\x9f]")


def parse_id(value: Any, field: str = "id") -> str:
    """A memory id given from outside engram, as it is; raises ``ValidationError`` naming ``field``."""
    if not isinstance(value, str):
        raise _wrong_type(field, value, ID_ALLOWED)
    usable_text(field, value)
    if not value or len(value) > MAX_ID_CHARS or _NOT_IN_AN_ID.search(value):
        raise ValidationError(field, f"{jsondoc.shown(value)} is not an id", ID_ALLOWED)
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
