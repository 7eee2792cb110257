"""Remembering: ``remember`` and its kin check a write on the caller's thread and hand it to the
single writer.

``_pending_write`` is where a write is made: content, search context and metadata screened by the
PII policy, the fields validated into a ``MemoryDraft`` (``model.make_draft``) in the scope
``_write_scope`` picks, ``valid_from`` read from a date the content states. What needs the store (a
link's target, an updated memory still being there, the tags and metadata a keyed update keeps) is
left to its ``settle``, which the writer runs just before the write; the queue, the batching and
the commit are ``engram.writes``'s. ``remember``, ``remember_soon``, ``check_remember`` and
``_remember_new`` differ in how they wait for the write; ``update`` and ``replace`` (``updating``)
make theirs here too. ``remember_many`` is the all-or-nothing bulk path: every item checked first
(``_bulk_drafts``), the texts embedded in batches, then one ``store.write_batch``.

A part of ``Engram``: a mixin composed in ``engine`` (``scoping`` says why the engine is built from mixins).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import Future
from dataclasses import replace
from typing import Any

from engram import jsondoc
from engram.errors import DimensionError, ValidationError
from engram.events import MemoryEvent
from engram.ids import key_from_content
from engram.model import Category, Layer, Memory, MemoryDraft, WriteResult, make_draft, parse_metadata, recorded_at
from engram.privacy import check_redacted_length
from engram.scoping import ScopeChoice
from engram.store.base import BatchWrite, check_all_or_nothing
from engram.writes import Announce, KeptByKey, PendingWrite, bulk_vectors, embed_missed, identity_warning, settle_bulk

# What one ``remember_many`` item may name: ``remember``'s arguments as ``make_draft`` takes them
# (its ``max_content_chars`` is the engine's) and ``links``, which the bulk path refuses by name.
BULK_ITEM_FIELDS = (*(name for name in inspect.signature(make_draft).parameters if name != "max_content_chars"), "links")


class _Remembering:
    """``Engram``'s writes of new memories (and upserts by key): one, soon, or many at once."""

    def remember(
        self,
        content: str,
        *,
        key: str | None = None,
        category: str | Category = Category.KNOWLEDGE,
        type: str | None = None,
        layer: str | Layer | None = None,
        tags: str | Iterable[str] | None = None,
        metadata: Mapping[str, Any] | str | None = None,
        importance: float = 0.5,
        related_entity: str | None = None,
        source: str | None = None,
        scope: ScopeChoice | None = None,
        links: Iterable[str] = (),
        created_at: float | None = None,
        search_context: str | None = None,
        valid_from: float | str | None = None,
        valid_until: float | str | None = None,
    ) -> WriteResult:
        """Store a memory, or update the one with ``key`` in its scope (upsert).

        Without a key one is made from the content; identical content already stored in the same
        scope is not stored twice (``action == "duplicate"``). ``links`` names keys or ids to link
        to afterwards. Updating by key replaces the fields given; ``tags`` and ``metadata`` that are
        not given (None) keep the stored ones, given ones (even empty) replace them.
        ``search_context`` is text that helps find the memory without being part of
        it (for a conversation turn: the turns around it): it is indexed for full text with a low
        weight and blended into the memory's vector. ``valid_from`` / ``valid_until`` bound when
        the fact held (open-ended when not given); content that states when it happened ("On
        2026-04-12 the migration failed") gets ``valid_from`` from that date.
        Raises ``ValidationError`` or ``NotFoundError`` for a link target that does not exist
        (nothing stored either way). Content with PII gets a warning, or
        is redacted before it is stored or embedded (``privacy.pii``).
        """
        self.writes.refuse_when_closed()
        # Stored with whatever other callers queued meanwhile: one embedding batch, one commit,
        # and the batch's events announced together once it is committed.
        return self.writes.write(self._pending_write(
            content, key=key, category=category, type=type, layer=layer, tags=tags, metadata=metadata,
            importance=importance, related_entity=related_entity, source=source, scope=scope, links=links,
            created_at=created_at, search_context=search_context, valid_from=valid_from, valid_until=valid_until))

    def check_remember(self, content: str, **fields: Any) -> None:
        """Raise the ``ValidationError`` ``remember`` (same arguments) would raise, storing nothing:
        for callers that store several memories all or nothing (an import checks every item first)."""
        self._pending_write(content, **_remember_arguments("check_remember", fields))

    def _remember_new(self, content: str, *, key: str, **fields: Any) -> WriteResult:
        """``remember`` (same arguments) of a new memory under ``key``: refused, nothing stored, with
        ``ValidationError`` naming ``key`` when a memory of the scope holds it, which ``remember``
        would update instead. The writer reads the key just before the write (as an update checks its
        memory is still there), so a memory that took the key meanwhile is not changed either. For an
        entry a person adds to the memory folder with a key of their own (``files.entry.store_entry``):
        adding an entry means a new memory, never a change to another one."""
        self.writes.refuse_when_closed()
        return self.writes.write(self._pending_write(content, key=key, new_key=True, **fields))

    def remember_soon(self, content: str, **fields: Any) -> Future[WriteResult]:
        """``remember`` (same arguments) without waiting for the store, for code that must not
        block, such as an asyncio event loop (``await asyncio.wrap_future(engram.remember_soon(...))``).
        The arguments are checked here (``ValidationError`` raised at once, nothing queued); the
        write joins the next batch and the future is answered after the commit that holds it, with
        ``remember``'s result or error. Cancelling the future before its batch starts stores nothing."""
        self.writes.refuse_when_closed()
        return self.writes.write_soon(self._pending_write(content, **_remember_arguments("remember_soon", fields)))

    def _pending_write(
        self,
        content: str,
        *,
        key: str | None = None,
        category: str | Category = Category.KNOWLEDGE,
        type: str | None = None,
        layer: str | Layer | None = None,
        tags: str | Iterable[str] | None = None,
        metadata: Mapping[str, Any] | str | None = None,
        importance: float = 0.5,
        related_entity: str | None = None,
        source: str | None = None,
        scope: ScopeChoice | None = None,
        links: Iterable[str] = (),
        created_at: float | None = None,
        search_context: str | None = None,
        valid_from: float | str | None = None,
        valid_until: float | str | None = None,
        derive_valid_from: bool = True,
        updating: Memory | None = None,
        new_key: bool = False,
    ) -> PendingWrite:
        """``remember``'s arguments checked and made a write for the queue, without reading the
        store: the reads it needs are its ``settle``, made by the writer. ``derive_valid_from=False``
        leaves ``valid_from`` empty when it is not given (an update that clears it). ``updating`` is
        the memory an update or replace changes (same key and scope): the write is refused, with
        ``NotFoundError`` naming it, unless it is still stored there (``_still_stored``). ``new_key``:
        the write makes a new memory under its key, refused when a memory holds it (``_remember_new``)."""
        screened, pii_warnings = self.privacy.screen(content)
        content = check_redacted_length("content", content, screened, self.max_content_chars)
        if isinstance(search_context, str):  # context is indexed and embedded: screened the same way
            screened, context_warnings = self.privacy.screen(search_context, field="search_context")
            search_context = check_redacted_length("search_context", search_context, screened, self.max_content_chars)
            pii_warnings = [*pii_warnings, *(w for w in context_warnings if w not in pii_warnings)]
        if metadata is not None and self.privacy.mode != "off":
            # Read first when given as JSON text, so its values are screened too (errors name metadata).
            metadata, metadata_warnings = self.privacy.screen_metadata(parse_metadata(metadata))
            pii_warnings = [*pii_warnings, *metadata_warnings]
        now = self.clock()  # (the writer stores the batch at the latest of its writes' times: never before)
        draft = make_draft(
            content, scope=self._write_scope(scope), max_content_chars=self.max_content_chars, key=key,
            category=category, type=type, layer=layer, tags=tags, metadata=metadata, importance=importance,
            related_entity=related_entity, source=source, created_at=recorded_at(created_at, now),
            search_context=search_context, valid_from=self._valid_from(valid_from, content, derive_valid_from),
            valid_until=self.time.instant(valid_until, "valid_until"),
        )
        keeps = (tags is None, metadata is None) if key is not None else (False, False)
        refs = tuple(links)
        link_targets: list[Memory] = []

        def settle(pending: PendingWrite, stored_under: KeptByKey) -> PendingWrite:
            if updating is not None:  # (the row read here is the one the writer's vector check reads)
                self._still_stored(updating, stored_under(pending.draft))
            if new_key:
                self._key_free(pending.draft, stored_under(pending.draft))
            link_targets[:] = [self._link_target(i, ref) for i, ref in enumerate(refs)]  # unknown ones refuse it
            draft = pending.draft
            # An update by key keeps the tags and metadata it was not given; given ones replace.
            if any(keeps) and (kept := stored_under(draft)) is not None:
                draft = replace(draft, tags=kept.tags if keeps[0] else draft.tags,
                                metadata=kept.metadata if keeps[1] else draft.metadata)
            return replace(pending, draft=draft, links=tuple(t.id for t in link_targets))

        def events(result: WriteResult) -> list[MemoryEvent]:
            made = []
            if result.action in ("created", "updated"):
                made.append(self._event("stored" if result.action == "created" else "updated", [result.memory],
                                        previous=[result.previous]))
            if link_targets:
                made.append(self._event("linked", [result.memory, *link_targets]))
            return made

        def answer(result: WriteResult) -> WriteResult:
            # Listeners (file sync, audit) are the operator's; the caller sees what it may read.
            return self._shown_results([result], [(*result.warnings, *pii_warnings)])[0]

        return PendingWrite(draft, key_from_content(draft.content), (), now, Announce(self.events, events),
                            settle=settle if refs or any(keeps) or updating is not None or new_key else None,
                            answer=answer)

    def remember_many(
        self, items: Iterable[Mapping[str, Any]], *, progress: Callable[[int, int], None] | None = None
    ) -> list[WriteResult]:
        """Store many memories, all or none (each item: ``remember``'s keyword arguments, with its
        meaning: a keyed item keeps the stored tags and metadata it does not give, as they are
        after the model ran, or those an earlier item of the call with its key gives). Every item is validated before anything is
        stored, so one bad item stores nothing (``ValidationError`` names it as ``items[i].field``).

        The texts are embedded first, 100 items a model call, with ``progress(done, total)`` after
        each 100 and ``(total, total)`` once all is stored; then every row, vector and event is
        written as one batch (``store.write_batch``, all or nothing: one transaction on SQLite and
        PostgreSQL). When the store fails part-way (a full disk, a constraint, a lost connection)
        its error is raised (``StorageError``) and nothing of the call is stored, vectors included:
        the store is as it was. When the model fails, the memories are stored all the same and each
        one left without its vector says so in its warnings (full text finds it; ``embed_missing``
        embeds it later), as ``remember`` does."""
        self.writes.refuse_when_closed()
        if isinstance(items, str | bytes | Mapping):  # (iterating one would read its letters or its names)
            raise ValidationError("items", f"got one {type(items).__name__}", "a list of items, each a mapping of remember()'s "
                                  "arguments ({'content': ...})")
        items = list(items)
        given, keeps, pii_warnings = self._bulk_drafts(items)
        check_all_or_nothing(self.store)  # before the model runs for a batch the store cannot take
        embedder = self.writes.embedder  # the writer's: None when the store keeps nothing
        drafts, fresh = settle_bulk(given, keeps, self.store, embedding=embedder is not None)
        vectors, warning = bulk_vectors(embedder, self.store, drafts, fresh, progress)
        if embedder is not None and any(fresh):
            # The model may have run for minutes: what a keyed item keeps (tags, metadata) and whether
            # its text is new are read again, so another writer's change meanwhile is kept, not undone,
            # and a text changed back gets its vector. (As remember: read just before the write.)
            drafts, fresh = settle_bulk(given, keeps, self.store, embedding=True)
            vectors, warning = embed_missed(embedder, drafts, fresh, vectors, warning)
        writes = [BatchWrite(d, key_from_content(d.content), vectors.get(i)) for i, d in enumerate(drafts)]
        now, identity = self.clock(), None if embedder is None else str(embedder.identity)
        try:
            stored = self.store.write_batch(writes, now=now, identity=identity, all_or_nothing=True)
        except DimensionError:
            # Another process switched models since the identity was looked up (the store refused
            # every vector): the batch goes in without them, with the warning the look-up would give.
            switched = None if embedder is None else identity_warning(self.store, embedder)
            if switched is None or not vectors:
                raise
            vectors, warning = {}, switched
            stored = self.store.write_batch([replace(w, vector=None) for w in writes], now=now, identity=None,
                                            all_or_nothing=True)
        results = [r for r in stored if isinstance(r, WriteResult)]
        if len(results) != len(writes):  # (a store keeping to the contract never answers so)
            raise next(r for r in stored if not isinstance(r, WriteResult))
        if progress and items:
            progress(len(items), len(items))
        for kind in ("created", "updated"):
            self._emit("stored" if kind == "created" else "updated", [r.memory for r in results if r.action == kind],
                       previous=[r.previous for r in results if r.action == kind])
        unembedded = () if warning is None else (warning,)
        return self._shown_results(results, [
            r.warnings + pii + (unembedded if fresh[i] and i not in vectors and r.action in ("created", "updated")
                                and r.memory.id else ())
            for i, (r, pii) in enumerate(zip(results, pii_warnings, strict=True))])

    def _bulk_drafts(self, items: Sequence[Mapping[str, Any]]) -> tuple[
            list[MemoryDraft], list[tuple[bool, bool]], list[tuple[str, ...]]]:
        """``remember_many``'s items checked, each screened for PII and made a draft; for each,
        whether it leaves tags and metadata to keep (a keyed update keeps the stored ones) and
        its PII warnings. Raises ``ValidationError`` naming ``items[i].field``, before any write."""
        drafts: list[MemoryDraft] = []
        keeps: list[tuple[bool, bool]] = []
        pii_warnings: list[tuple[str, ...]] = []
        now = self.clock()  # (the batch is stored after the model ran: at this time or later)
        for i, item in enumerate(items):
            if not isinstance(item, Mapping):
                raise ValidationError(f"items[{i}]", f"got {type(item).__name__}", "a mapping of remember()'s arguments")
            unknown = next((name for name in item if name not in BULK_ITEM_FIELDS), None)
            if unknown is not None:
                raise ValidationError(f"items[{i}].{unknown}", "is not an argument of remember()", ", ".join(BULK_ITEM_FIELDS))
            if "content" not in item:
                raise ValidationError(f"items[{i}].content", "is missing", f"1-{self.max_content_chars} characters")
            fields = dict(item)
            found: list[str] = []
            for name in ("content", "search_context"):
                if isinstance(fields.get(name), str):
                    try:
                        screened, more = self.privacy.screen(fields[name], field=name)
                        fields[name] = check_redacted_length(name, fields[name], screened, self.max_content_chars)
                    except ValidationError as exc:
                        raise ValidationError(f"items[{i}].{exc.field}", exc.problem, exc.allowed) from None
                    found += [w for w in more if w not in found]
            if fields.get("metadata") is not None and self.privacy.mode != "off":
                try:
                    fields["metadata"], more = self.privacy.screen_metadata(parse_metadata(fields["metadata"]))
                except ValidationError as exc:
                    raise ValidationError(f"items[{i}].{exc.field}", exc.problem, exc.allowed) from None
                found += more
            pii_warnings.append(tuple(found))
            if fields.get("links"):
                raise ValidationError(f"items[{i}].links", "links are not taken in bulk", "link() afterwards")
            fields.pop("links", None)
            scope = fields.pop("scope", None)
            try:
                fields["valid_from"] = self._valid_from(fields.get("valid_from"), fields.get("content"))
                fields["valid_until"] = self.time.instant(fields.get("valid_until"), "valid_until")
                fields["created_at"] = recorded_at(fields.get("created_at"), now)
                drafts.append(make_draft(scope=self._write_scope(scope), max_content_chars=self.max_content_chars, **fields))
            except ValidationError as exc:
                raise ValidationError(f"items[{i}].{exc.field}", exc.problem, exc.allowed) from None
            except TypeError as exc:
                raise ValidationError(f"items[{i}]", str(exc), "remember()'s keyword arguments") from None
            keeps.append((item.get("tags") is None, item.get("metadata") is None))
        return drafts, keeps, pii_warnings

    def _shown_results(self, results: Sequence[WriteResult], warnings: Sequence[tuple[str, ...]]) -> list[WriteResult]:
        """``results`` as this view may see them (``_shown``, in one pass: links narrowed, the
        memory before an update too), each with its ``warnings``."""
        shown = iter(self._shown([m for r in results for m in (r.memory, r.previous) if m is not None]))
        out = []
        for result, notes in zip(results, warnings, strict=True):
            memory = next(shown)
            out.append(WriteResult(memory, result.action, notes, None if result.previous is None else next(shown)))
        return out

    def _valid_from(self, given: float | str | None, content: Any, derive: bool = True) -> float | str | None:
        """An explicit valid_from wins; otherwise the date the content states, if any (when ``derive``)."""
        if given is not None or not derive or not isinstance(content, str):
            return self.time.instant(given, "valid_from")
        return self.time.stated(content)

    @staticmethod
    def _key_free(draft: MemoryDraft, under_key: Memory | None) -> None:
        """Raise ``ValidationError`` naming ``key`` when ``under_key`` (what the writer read under the
        draft's key in its scope, superseded ones included: ``KeptByKey``) holds it: the memory a new
        one of that key would update."""
        if under_key is not None:
            raise ValidationError("key", f"{jsondoc.shown(draft.key)} is held by another memory of {draft.scope} "
                                         f"({under_key.id})", "a key no memory of that scope holds, or none: one "
                                                               "is made from the content")


def _remember_arguments(method: str, fields: dict[str, Any]) -> dict[str, Any]:
    """``fields`` when each is one of ``remember``'s arguments, else Python's own ``TypeError``
    naming ``method``: passed on to ``_pending_write`` unchecked, a caller could give its private
    flags (``updating``, ``new_key``, ``derive_valid_from``), and a misspelt one was reported
    against ``_pending_write``, a name the caller never used."""
    for name in fields:
        if name not in _REMEMBER_ARGUMENTS:
            raise TypeError(f"{method}() got an unexpected keyword argument {name!r}")
    return fields


_REMEMBER_ARGUMENTS = frozenset(inspect.signature(_Remembering.remember).parameters) - {"self", "content"}
