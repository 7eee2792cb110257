"""Changing a stored memory: ``update`` (the fields given), ``replace`` (every field a user sets) and
``annotate`` (bookkeeping metadata kept beside it).

``update`` and ``replace`` name the memory as ``_held`` reads it (an id or key, or a ``Memory`` this
view handed out, then taken as stored) and make their write with ``remembering``'s
``_pending_write``, marked as ``updating`` it: the writer refuses it when the memory was forgotten
(or its key taken by another) since it was read (``_still_stored``), rather than storing it again.
``annotate`` is no change to the memory: it merges metadata keys in one store call
(``merge_metadata``, an expectation checked in the same write) and announces nothing.

A part of ``Engram``: a mixin composed in ``engine`` (``scoping`` says why the engine is built from mixins).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from typing import Any

from engram.errors import NotFoundError, ValidationError
from engram.model import UPSERT_FIELDS, Category, Layer, Memory, WriteResult, parse_clear, parse_metadata
from engram.store.base import merged_metadata
from engram.writes import PendingWrite


class _Updating:
    """``Engram``'s changes to a memory already stored."""

    def update(
        self,
        ref: str | Memory,
        *,
        content: str | None = None,
        category: str | Category | None = None,
        type: str | None = None,
        layer: str | Layer | None = None,
        tags: str | Iterable[str] | None = None,
        metadata: Mapping[str, Any] | str | None = None,
        importance: float | None = None,
        related_entity: str | None = None,
        source: str | None = None,
        search_context: str | None = None,
        valid_from: float | str | None = None,
        valid_until: float | str | None = None,
        clear: str | Iterable[str] = (),
    ) -> WriteResult:
        """Change the given fields of an existing memory (by id or key, or a ``Memory`` this view
        may read: the stored one is changed, under its stored key) and keep the others.

        A field left at None is kept (but for a ``valid_from`` read from the content, read again from
        new content: ``TimeReader.dated_by_content``); ``clear`` names fields to empty instead (any of
        ``CLEARABLE_FIELDS``: tags, metadata, related_entity, source, search_context, valid_from,
        valid_until). The previous content goes to the memory's versions. A new ``type`` without
        a ``layer`` re-routes the layer. Raises ``NotFoundError``, or ``ValidationError`` naming a
        field that cannot be cleared (content, category, type, layer, importance) or that is both
        given and cleared (nothing changed either way).
        """
        self.writes.refuse_when_closed()
        given = {name: value for name, value in (
            ("content", content), ("category", category), ("type", type), ("layer", layer), ("tags", tags),
            ("metadata", metadata), ("importance", importance), ("related_entity", related_entity),
            ("source", source), ("search_context", search_context), ("valid_from", valid_from),
            ("valid_until", valid_until)) if value is not None}
        cleared = parse_clear(clear, given)
        return self.writes.write(self._updating(self._held(ref, "update"), given, cleared))

    def _updating(self, old: Memory, given: Mapping[str, Any], cleared: Iterable[str] = ()) -> PendingWrite:
        """``update``'s write of ``given`` (and ``cleared``) over ``old``, checked and made as
        ``_pending_write`` makes it; an import makes its updates of a re-import with it too, and
        writes their drafts in its own transaction (``importers.apply``)."""
        cleared = tuple(cleared)
        fields: dict[str, Any] = {name: getattr(old, name) for name in UPSERT_FIELDS}
        if "type" in given:
            fields["layer"] = None  # routed from the new type unless a layer is given too
        fields.update(given)
        if "valid_from" not in given and fields["content"] != old.content and self.time.dated_by_content(old):
            fields["valid_from"] = None  # read again from the new content (``TimeReader.dated_by_content``)
        # Empty tags and metadata are given as empty: None would keep the stored ones.
        fields.update({name: {"tags": (), "metadata": {}}.get(name) for name in cleared})
        # Tags kept are kept as stored, not judged again: a memory stored before MAX_TAGS with more
        # stays changeable (its importance, its text) without giving fewer.
        keeps_tags = "tags" not in given and "tags" not in cleared
        if keeps_tags:
            fields["tags"] = ()
        pending = self._pending_write(
            fields.pop("content"), key=old.key, scope=old.scope, derive_valid_from="valid_from" not in cleared,
            updating=old, **fields)
        return dataclasses.replace(pending, draft=dataclasses.replace(pending.draft, tags=old.tags)) if keeps_tags else pending

    def replace(
        self,
        ref: str | Memory,
        content: str,
        *,
        category: str | Category = Category.KNOWLEDGE,
        type: str | None = None,
        layer: str | Layer | None = None,
        tags: str | Iterable[str] | None = None,
        metadata: Mapping[str, Any] | str | None = None,
        importance: float = 0.5,
        related_entity: str | None = None,
        source: str | None = None,
        search_context: str | None = None,
        valid_from: float | str | None = None,
        valid_until: float | str | None = None,
    ) -> WriteResult:
        """Replace every field a user sets on an existing memory (by id or key, or a ``Memory`` as
        ``update`` takes one): the ones not given
        get the values a fresh ``remember`` would give them (no tags, no metadata, importance 0.5,
        ``valid_from`` from a date the content states, ...), unlike ``update``, which keeps them.

        The memory keeps its id, key, scope, creation time, use counts and links; the previous
        content goes to its versions. Raises ``NotFoundError`` (also naming a memory forgotten since
        it was read, which is not stored again) or ``ValidationError`` (nothing changed).
        """
        self.writes.refuse_when_closed()
        old = self._held(ref, "replace")
        return self.writes.write(self._pending_write(
            content, key=old.key, scope=old.scope, category=category, type=type, layer=layer,
            tags=() if tags is None else tags, metadata={} if metadata is None else metadata,
            importance=importance, related_entity=related_entity, source=source, search_context=search_context,
            valid_from=valid_from, valid_until=valid_until, updating=old))

    def _held(self, ref: str | Memory, field: str) -> Memory:
        """The one memory ``ref`` names for ``update``, ``replace`` and ``versions``: for a ``Memory``
        this view may read (``named``), the stored record (its key, scope and fields as stored: a
        caller's record with another key wrote a second memory under it), else the memory with that
        id or key (``get``)."""
        if not isinstance(ref, Memory):
            return self.get(ref)
        return self._stored_records([self.named(ref, field=field)], [ref])[0]

    def _still_stored(self, memory: Memory, under_key: Memory | None) -> None:
        """Raise ``NotFoundError`` naming ``memory`` unless it is still the one stored under its key.
        ``under_key`` is what the writer read there (``KeptByKey``) just before an update by key:
        without this, an update of a memory forgotten since it was read would store it again, under
        a new id (or change another memory that took its key meanwhile)."""
        if under_key is not None:
            if under_key.id != memory.id:
                raise NotFoundError("memory", memory.id)
            return
        # KeptByKey reads an id first, so a key that is also another memory's id finds nothing
        # there: ask by id (keys do not change), loading no row.
        if not self.store.matching_ids([memory.id], self._reaching([memory])):
            raise NotFoundError("memory", memory.id)

    def annotate(self, memory: Memory, metadata: Mapping[str, Any], *,
                 expect: Mapping[str, Any] | None = None) -> Memory | None:
        """Set the keys of ``metadata`` in a stored memory's metadata (keeping its other keys) as
        bookkeeping kept beside it, not a change to it: its ``updated_at``, ``last_accessed``,
        content, versions and vector stay, no event is announced (no audit row; the memory folder
        takes it at the next full sync pass). For an adapter's own records, such as a LangGraph
        item's expiry moved by a read (``integrations.langgraph``); change a memory with ``update``.
        With ``expect`` (metadata keys and values), only when the stored metadata still holds them,
        checked in the same write: what changed since ``memory`` was read is never overwritten.
        Returns the memory as stored after, None when it is not stored (or is another agent's: a
        ``Memory`` is a record anyone can build), or an expectation does not hold (its values compared
        as JSON values: ``true`` is not ``1``). Raises ``ValidationError`` naming ``memory`` (not a
        ``Memory``: an id is not read), ``metadata`` or ``expect`` (nothing changed)."""
        self.writes.refuse_when_closed()
        values = parse_metadata(metadata)
        if expect is not None and not isinstance(expect, Mapping):
            raise ValidationError("expect", f"got {type(expect).__name__}", "metadata keys and the values they must hold")
        if self.privacy.mode != "off":
            values, _ = self.privacy.screen_metadata(values)
        if not isinstance(memory, Memory):
            # An id or key would be "not stored" below, without a word: the caller meant a memory.
            raise ValidationError("memory", f"got {type(memory).__name__}",
                                  "a Memory this view handed out (read it with get or find first)")
        if not self.store.matching_ids([memory.id], self._reaching([memory])):
            return None
        merge = getattr(self.store, "merge_metadata", None)
        if merge is not None:
            merged = merge(memory.id, values, expect=dict(expect or {}))
        else:  # a plug-in store written before merge_metadata: an update, which stamps the change time
            stored = self.store.get_many([memory.id])
            kept = None if not stored else merged_metadata(stored[0], values, expect)
            if kept is None:
                return None
            merged = self.update(stored[0], metadata=kept).memory
        return None if merged is None else self._shown([merged])[0]
