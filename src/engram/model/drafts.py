"""User input to records: ``make_draft`` validates what a store is given, ``make_filter`` what a
list or recall narrows by; both raise ``ValidationError`` naming the field.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from enum import StrEnum
from typing import Any

from engram import jsondoc
from engram.errors import ValidationError
from engram.model.fields import (
    parse_category,
    parse_content,
    parse_importance,
    parse_key,
    parse_layer,
    parse_metadata,
    parse_tags,
    parse_type,
)
from engram.model.records import Category, Layer, MemoryDraft, MemoryFilter, layer_for_type
from engram.model.scope import Scope
from engram.model.values import usable_text
from engram.temporal.instants import parse_time, parse_validity
from engram.where import all_of, metadata_condition, parse_where


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
        related_entity=parse_short_text("related_entity", related_entity),
        source=parse_short_text("source", source),
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
    text = parse_short_text(field_name, value)
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


def parse_short_text(field_name: str, value: str | None) -> str | None:
    """``related_entity`` or ``source``: text trimmed, up to 200 characters, blank as none; raises
    ``ValidationError``."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise ValidationError(field_name, f"got {type(value).__name__}", "text, up to 200 characters")
    text = usable_text(field_name, value).strip()
    if len(text) > 200:
        raise ValidationError(field_name, "is longer than 200 characters", "up to 200 characters")
    return text or None
