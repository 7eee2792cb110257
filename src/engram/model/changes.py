"""What an update may change or clear, and whether it changed anything (every backend asks).
"""

from __future__ import annotations

from collections.abc import Iterable

from engram import jsondoc
from engram.errors import ValidationError
from engram.model.records import Memory, MemoryDraft

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
