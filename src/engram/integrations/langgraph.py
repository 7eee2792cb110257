"""A LangGraph ``BaseStore`` over engram: ``graph.compile(store=EngramStore(engram))``.

Items become memories. Each namespace lives in an engram agent scope: the store's own agent, or,
with ``agent_from_namespace=i``, the agent named by ``agent_prefix`` (``lg:``) + the namespace's
i-th label (``("memories", user_id)`` with ``i=1`` gives every user their own scope, so users never
see each other's items). The prefix keeps a user's agent apart from the application's own: a user
called ``assistant`` is agent ``lg:assistant``, never the app's ``assistant``, whose recall (and a
LangChain retriever over it) would otherwise read that user's items. ``agent_prefix=""`` reads
the bare labels stores made before the prefix used; a label naming the store's own agent is then
refused. Any label names an agent (``label_agent``): one that is no agent name as it is (``José``,
``user 42``, a long one) is written as one (``lg:id.Jos@c3@a9``) that no other label names, which
is why a put's label with "." (that LangGraph's own ``put`` refuses) is refused in a batch too.
A store lists, sweeps and reads only the items whose label names, under its own prefix, the agent
holding them (``EngramStore._holds``): every name starts with ``""``, and ``lg:x``'s agents start
with ``lg:``, so stores on one engram whose prefixes overlap would otherwise list (their users'
labels) and sweep each other's items.
The full namespace, its labels and the item's key and value are kept in the memory's metadata;
the memory's key is ``lg:`` + the percent-escaped namespace and key (its digest when longer than a
memory key may be), so an item is one memory.

``search`` with a ``query`` (not blank) is engram's recall (full text and vectors, ``SearchItem.score`` is
engram's score); without one, the items last put first (``updated_at``, as LangGraph's SqliteStore
and PostgresStore order them). ``filter`` matches value fields by equality
or with ``$eq $ne $gt $gte $lt $lte``, a nested object by the fields it names, a list item by item,
as LangGraph's ``InMemoryStore`` does (a missing field is None: ``$ne`` matches it; a key with a dot
is one field's name, as InMemoryStore reads it, where SqliteStore reads a path). What is indexed
for recall is the value's text at the store's ``index_fields`` (or the put's ``index``), else the
whole value as JSON; ``index=False`` indexes only the key (cut at ``max_content_chars``: the value
itself is kept whole, of any length).

``langgraph_filters`` reads what a read selects (a ``filter``, a listing's match conditions and
the metadata ``where`` made of them, an ``offset`` and ``limit``), as pure functions; this module
owns storing items as memories, scopes, TTLs and the batch.

TTLs as LangGraph's own stores keep them (``TTLConfig``, ``put(..., ttl=minutes)``): an item put with a
ttl keeps it and its expiry (the engine's clock + ttl) in its metadata (``lg_ttl``, ``lg_expires_at``);
a put again sets both anew, one without a ttl has none. An item past its expiry is gone for ``get``,
``search`` and ``list_namespaces`` at once (LangGraph's SqliteStore and PostgresStore return it until
their sweep; InMemoryStore keeps no TTLs); ``sweep_ttl`` (or the ``start_ttl_sweeper`` thread)
forgets it, with the reason ``langgraph ttl`` in the audit trail. Neither reads every item: the
store selects (``where`` on the metadata) the expired items for the sweep, and for a namespace
listing the unexpired items of the namespaces that can match, of the one agent a prefix names.
A read with ``refresh_ttl`` (``refresh_on_read``, default True) moves the expiry of each item it
returns that has a ttl: one write of its expiry per such item, none for the others.
``lg_updated_at`` keeps each put's time for ``Item.updated_at``: every put moves it (one of an
unchanged value too, as in LangGraph's stores, where engram would find nothing to write). A
refresh moves only the expiry, as LangGraph's stores do: it is bookkeeping, not a change to the
memory (``Engram.annotate``: its ``updated_at``, versions and audit trail stay).

Every read that returns items (``get``, ``search`` with or without a query) is a use of them
(``recall.touch_on_recall``), as every adapter's automatic read: engram's lifecycle jobs purge
knowledge that looks unused, and a graph reads by key or lists far more than it searches.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import dataclasses
import hashlib
import itertools
import json
import logging
import math
import threading
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime
from typing import Any, Literal
from urllib.parse import quote

from engram import jsondoc
from engram.aio import AsyncEngram
from engram.engine import Engram, Filters
from engram.errors import NotFoundError, ValidationError
from engram.integrations import (
    DEFAULT_AGENT_PREFIX,
    agent_part,
    checked_call,
    checked_prefix,
    fitted_name,
    flag_option,
    keywords,
    missing,
    refuse_unknown,
)
from engram.integrations.langgraph_filters import (
    namespace_matches,
    namespace_where,
    offset_and_limit,
    pinned_labels,
    value_matches,
)
from engram.model import (
    MAX_KEY_CHARS,
    MAX_RECALL_LIMIT,
    MAX_RECALL_WINDOW,
    Memory,
    Scope,
    make_scope,
    parse_integer,
    usable_json,
    usable_text,
)

try:
    from langgraph.store.base import (
        BaseStore,
        GetOp,
        Item,
        ListNamespacesOp,
        Op,
        PutOp,
        Result,
        SearchItem,
        SearchOp,
        TTLConfig,
    )
    from langgraph.store.base.embed import get_text_at_path
except ImportError as exc:  # pragma: no cover - the extra is installed in development
    raise missing("langgraph", "langgraph") from exc

log = logging.getLogger(__name__)
TTL_REASON = "langgraph ttl"
# LangGraph's SqliteStore and PostgresStore sweep every 5 minutes when no interval is configured.
DEFAULT_SWEEP_MINUTES = 5.0
_TTL_KEYS = ("default_ttl", "refresh_on_read", "sweep_interval_minutes")
# The bounds (seconds back from now) of the bands of put time a search without a query reads one
# after the other, each only while those before hold too few items (``EngramStore._last_put``).
_PUT_BANDS = (3600.0, 86400.0, 30 * 86400.0)
_PAGE = 1000  # items a listing asks for at once: fewer re-scans of a band's first rows (OFFSET)


def _index_fields(value: Any, field: str) -> list[str] | Literal[False] | None:
    """What a put indexes: value paths, False (the key only) or None (the default). A string is
    refused: read as a list of one-letter paths, it would index nothing of the value, unsaid."""
    if value is None or value is False:
        return value
    if isinstance(value, list | tuple) and all(isinstance(path, str) for path in value):
        return list(value)
    raise ValidationError(field, f"got {jsondoc.shown(value)}",
                          'a list of value paths such as ["text"], False (the key only), or None (the whole value)')


def _minutes(value: Any, field: str, *, allow_none: bool = True) -> float | None:
    """``value`` as a positive, finite number of minutes (None when allowed); else ``ValidationError``
    naming ``field``. A bool is not a number here, as ``ttl=True`` is a mistake, not one minute."""
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not (0 < value < math.inf):
        raise ValidationError(field, f"{value!r} is not a number of minutes",
                              "a finite number of minutes > 0" + (", or None for no expiry" if allow_none else ""))
    return float(value)


def _ttl_config(ttl: Any) -> TTLConfig | None:
    """The store's ``TTLConfig`` checked once, so a bad one fails at construction, not at a put."""
    if ttl is None:
        return None
    if not isinstance(ttl, Mapping):
        raise ValidationError("ttl", f"got {type(ttl).__name__}", "a TTLConfig (dict) or None")
    refuse_unknown("TTLConfig", ttl, _TTL_KEYS, within="ttl")
    if "refresh_on_read" in ttl:
        ttl = {**ttl, "refresh_on_read": flag_option("ttl.refresh_on_read", ttl["refresh_on_read"])}
    _minutes(ttl.get("default_ttl"), "ttl.default_ttl")
    _minutes(ttl.get("sweep_interval_minutes"), "ttl.sweep_interval_minutes")
    return TTLConfig(**ttl)  # type: ignore[typeddict-item]


def _is_agent_name(name: str) -> bool:
    try:
        make_scope(name, None)
    except ValidationError:
        return False
    return True


# Starts the part of the agent name written for a label that is no agent name as it is. It holds
# ".", which LangGraph refuses in a namespace label (``store.put``; ``EngramStore.batch`` refuses it
# too), so no label a graph can store under is read as such a name.
_ESCAPED = "id."


def label_agent(prefix: str, label: str) -> str:
    """The engram agent a namespace label names under ``prefix`` (``EngramStore``'s
    ``agent_from_namespace``). A label that makes an agent name as it is keeps it (``lg:u-42``),
    so items stored before any label was escaped stay where they are. Any other label, and one
    starting with ``id.`` (which, holding ".", no put stores), is written by ``agent_part`` after
    ``id.`` and cut past an agent name's length with its digest (``José`` is ``lg:id.Jos@c3@a9``,
    ``user 42`` ``lg:id.user@2042``). So two different labels never name one agent: an as-is name
    never starts with ``id.``, every written one does, and written names differ as their labels."""
    if not label.startswith(_ESCAPED) and _is_agent_name(prefix + label):
        return prefix + label
    return fitted_name(prefix + _ESCAPED + agent_part(label), [label])


def _refused_label(namespace: tuple[str, ...]) -> None:
    """Raise ``ValidationError`` naming ``namespace`` for a label LangGraph's ``store.put`` refuses
    (``InvalidNamespaceError``): one with "." or an empty one. ``batch`` is called without that
    check (a ``PutOp`` of the caller's own), and "." is what keeps ``label_agent``'s written names
    apart from every label a graph can store under."""
    for i, label in enumerate(namespace):
        if isinstance(label, str) and ("." in label or not label):
            problem = f"label {i} ({label!r}) holds a '.'" if label else f"label {i} is empty"
            raise ValidationError("namespace", problem, "non-empty labels without '.', as LangGraph's store.put takes them")


def _usable_address(namespace: tuple[str, ...], key: str | None, field: str = "namespace") -> None:
    """Raise ``ValidationError`` naming ``field`` (a label) or ``key`` for text no item can be stored
    under (a NUL, a lone surrogate: ``usable_text``), as a put refuses it: a get, a delete or a
    search by it was None, or, for a lone surrogate, Python's own UnicodeEncodeError (the memory
    key is its UTF-8, percent-escaped)."""
    for label in namespace:
        if isinstance(label, str):
            usable_text(field, label)
    if isinstance(key, str):
        usable_text("key", key)


def _when(ts: float) -> datetime:
    return datetime.fromtimestamp(ts, UTC)


def _put_at(memory: Memory) -> float:
    """The time of the item's last put: ``lg_updated_at``, else (an item stored before every put
    kept it) the memory's own update time."""
    put_at = memory.metadata.get("lg_updated_at")
    return put_at if isinstance(put_at, int | float) else (memory.updated_at or memory.created_at)


def _expired(memory: Memory, now: float) -> bool:
    expires = memory.metadata.get("lg_expires_at")
    return isinstance(expires, int | float) and expires <= now


class EngramStore(BaseStore):
    """LangGraph's store interface, kept in engram (see the module docstring)."""

    supports_ttl = True

    @checked_call("{owner}(mem)")
    def __init__(self, engram: Engram | AsyncEngram, *, agent_from_namespace: int | None = None,
                 agent_prefix: str = DEFAULT_AGENT_PREFIX,
                 index_fields: list[str] | None = None, ttl: TTLConfig | None = None, **unknown: Any) -> None:
        """``agent_prefix`` goes before the label ``agent_from_namespace`` picks to name its agent;
        ``""`` is the layout of stores made before it existed (see the module docstring). ``ttl`` is
        LangGraph's ``TTLConfig``: ``default_ttl`` (minutes) for puts that give none,
        ``refresh_on_read`` (default True), ``sweep_interval_minutes`` for ``start_ttl_sweeper``.
        Raises ``ValidationError`` naming the argument (``ttl.default_ttl``, ...), or any other
        keyword. ``engram`` may be an ``AsyncEngram``: its engine is used (LangGraph's ``abatch``
        runs it in a worker thread)."""
        refuse_unknown("EngramStore", unknown, keywords(EngramStore.__init__))
        if isinstance(engram, AsyncEngram):  # its methods are coroutines: a put was an AttributeError
            engram = engram.engram
        if not isinstance(engram, Engram):
            raise ValidationError("engram", f"got {type(engram).__name__}", "an Engram or AsyncEngram")
        if agent_from_namespace is not None:
            agent_from_namespace = parse_integer(agent_from_namespace, "agent_from_namespace", 0,
                                                 allowed="a label index >= 0, or None")
        self.engram = engram
        self.agent_from_namespace = agent_from_namespace
        self.agent_prefix = checked_prefix("agent_prefix", agent_prefix, DEFAULT_AGENT_PREFIX)
        self.index_fields = _index_fields(index_fields, "index_fields")
        self.ttl_config = _ttl_config(ttl)
        self._sweeper: threading.Thread | None = None
        self._sweeper_future: concurrent.futures.Future[None] | None = None
        self._sweeper_stop = threading.Event()

    # --- scopes -------------------------------------------------------------------------------
    def _view(self, namespace: tuple[str, ...], field: str = "namespace", *, reading: bool = False) -> Engram:
        i = self.agent_from_namespace
        if i is None:
            return self.engram
        if len(namespace) <= i:
            raise ValidationError(field, f"{namespace!r} does not reach label {i}, which names the agent",
                                  f"a namespace of at least {i + 1} labels")
        if not isinstance(namespace[i], str):
            raise ValidationError(field, f"label {i} is a {type(namespace[i]).__name__}", "labels that are strings")
        agent = label_agent(self.agent_prefix, namespace[i])
        if agent == self.engram.scope.agent:
            # Its items would be the application's own memories, read by its recall and retrievers.
            raise ValidationError(field, f"label {i} ({namespace[i]!r}) names this store's own engram agent",
                                  f'another label; a store with agent_prefix (default "{DEFAULT_AGENT_PREFIX}") keeps '
                                  "every label apart from the application's agents")
        # ``reading``: a get or search makes no database for a namespace's agent with none yet
        # (``Engram.for_agent``); one with a database is read, and its TTL refreshed, as before.
        return self.engram.for_agent(agent, origin="langgraph", reading=reading)

    def _views(self, labels: frozenset[str] = frozenset()) -> list[Engram]:
        """Every agent that may hold this store's items: for namespace listing across agents. With
        ``labels`` (the agent's namespace label a listing requires: ``pinned_labels``) only the
        agent they all name, so a listing of one user's namespaces reads that user's items only."""
        if self.agent_from_namespace is None:
            return [self.engram]
        agents = {Scope.parse(s).agent for s in self.engram.stats().by_scope if s.startswith("agent:")}
        # A label that is no string names no agent (None): a namespace of strings cannot match it.
        named = {label_agent(self.agent_prefix, label) if isinstance(label, str) else None for label in labels}
        mine = sorted(a for a in agents if a and a.startswith(self.agent_prefix) and a != self.engram.scope.agent
                      and all(a == name for name in named))
        return [self.engram.for_agent(a, origin="langgraph") for a in mine]

    def _holds(self, memory: Memory) -> bool:
        """Whether ``memory`` is an item of this store: an item (``lg_item``) whose namespace's
        agent label names, under this store's ``agent_prefix``, the agent holding it. Every agent
        whose name starts with the prefix is listed and swept (``_views``), and another store's
        prefix may start with this one's (``lg:`` and ``lg:x``; ``""`` starts every name): its
        items are in agents this store lists, but their labels name other agents here (``u1`` of
        ``lg:x`` is in ``lg:xu1``, which ``lg:`` names for the label ``xu1``), so neither store
        lists, sweeps or reads the other's."""
        meta = memory.metadata
        if meta.get("lg_item") != "1" or not isinstance(meta.get("lg_namespace"), list):
            return False
        i = self.agent_from_namespace
        if i is None:
            return True
        namespace = meta["lg_namespace"]
        return (len(namespace) > i and isinstance(namespace[i], str)
                and label_agent(self.agent_prefix, namespace[i]) == memory.scope.agent)

    @staticmethod
    def _ref(namespace: tuple[str, ...], key: str) -> str:
        """The memory key of an item; one past engram's key length is its digest instead (LangGraph
        puts no bound on keys; the item's own namespace and key stay in its metadata)."""
        ref = "lg:" + "/".join(quote(part, safe="") for part in (*namespace, key))
        if len(ref) <= MAX_KEY_CHARS:
            return ref
        return "lg#" + hashlib.sha256(ref.encode()).hexdigest()

    @staticmethod
    def _prefix_filter(prefix: tuple[str, ...]) -> Filters:
        return Filters(metadata={f"lg_ns{i}": label for i, label in enumerate(prefix)} | {"lg_item": "1"})

    @staticmethod
    def _item(memory: Memory, score: float | None = None, *, ranked: bool = False) -> Item:
        meta = memory.metadata
        fields = {"namespace": tuple(meta["lg_namespace"]), "key": meta["lg_key"], "value": dict(meta["lg_value"]),
                  "created_at": _when(memory.created_at),
                  "updated_at": _when(_put_at(memory))}
        return SearchItem(**fields, score=score) if ranked else Item(**fields)

    # --- the operations -----------------------------------------------------------------------
    def _get(self, op: GetOp) -> Item | None:
        view = self._view(op.namespace, reading=True)
        memory = view.find(self._ref(op.namespace, op.key))
        if memory is None or not self._holds(memory) or _expired(memory, view.clock()):
            return None
        view.mark_used([memory])
        if op.refresh_ttl:
            self._refresh(view, [memory])
        return self._item(memory)

    def _refresh(self, view: Engram, memories: Iterable[Memory]) -> None:
        """Move the expiry of each of ``memories`` that has a ttl to now + its ttl (LangGraph's
        refresh on read): one write of ``lg_expires_at`` each, nothing for items without a ttl.
        Only the expiry moves, as LangGraph's stores set only ``expires_at``: not the item's put
        time, nor the memory's ``updated_at``, versions or audit trail (``Engram.annotate``)."""
        now = view.clock()
        for memory in memories:
            if not isinstance(memory.metadata.get("lg_ttl"), int | float):
                continue
            # Read again, just before the write: an item put since this read's listing (another
            # thread or process) is refreshed by its own ttl, as LangGraph's stores refresh the row
            # as stored; and written only while it still holds that put (its time and ttl, checked in
            # the write), so a put in between keeps the expiry it set and a deleted item stays gone.
            current = view.find(memory.id)
            ttl = None if current is None else current.metadata.get("lg_ttl")
            if current is None or not isinstance(ttl, int | float):
                continue  # deleted, or put again without a ttl, since it was read
            held = {k: current.metadata[k] for k in ("lg_ttl", "lg_updated_at") if k in current.metadata}
            view.annotate(current, {"lg_expires_at": now + ttl * 60}, expect=held)

    def _check_put(self, op: PutOp) -> None:
        """Raise ``ValidationError`` naming what ``op`` cannot store (``namespace``, ``value``,
        ``ttl``, ``key``, ``index``): checked here so the error names LangGraph's argument, not the metadata that
        carries it, and before a batch writes anything."""
        if op.value is not None:  # LangGraph's delete checks no label, nor does this
            _refused_label(op.namespace)
        _usable_address(op.namespace, op.key)
        self._view(op.namespace)
        if op.value is None:  # a delete: its ttl (LangGraph passes the default one) means nothing
            return
        if not isinstance(op.value, Mapping):
            raise ValidationError("value", f"got {type(op.value).__name__}", "a dict (None deletes the item)")
        usable_json("value", dict(op.value))
        _minutes(op.ttl, "ttl")
        _index_fields(op.index, "index")

    def _put(self, op: PutOp) -> None:
        """Write ``op`` (checked by ``_check_put``): a delete when its value is None."""
        view = self._view(op.namespace)
        ref = self._ref(op.namespace, op.key)
        if op.value is None:
            found = view.find(ref)
            if found is not None and self._holds(found):  # as a get reads it: only this store's item
                view.forget(found, reason="langgraph delete")
            return
        value = dict(op.value)
        ttl = _minutes(op.ttl, "ttl")
        fields = self.index_fields if op.index is None else _index_fields(op.index, "index")
        if fields is False:
            text = op.key
        elif fields:
            text = "\n".join(t for path in fields for t in get_text_at_path(value, path)) or op.key
        else:
            text = json.dumps(value, ensure_ascii=False, default=str)
        # The memory's text is what recall reads: past the engine's limit it is cut there, as
        # LangGraph bounds no value or key (the item itself is kept whole in the metadata).
        text = text[: view.max_content_chars]
        now = view.clock()
        # Every put's time, for ``Item.updated_at``: a put of an unchanged value moves it too (LangGraph's
        # stores stamp every put), and a ttl refresh does not.
        metadata = {"lg_item": "1", "lg_namespace": list(op.namespace), "lg_key": op.key, "lg_value": value,
                    "lg_updated_at": now, **{f"lg_ns{i}": label for i, label in enumerate(op.namespace)}}
        if ttl is not None:
            metadata |= {"lg_ttl": ttl, "lg_expires_at": now + ttl * 60}
        # Type ``item``: the lifecycle jobs leave it alone by default (lifecycle.settings.PROTECTED_TYPES),
        # as LangGraph keeps an item until it is deleted or its ttl ends.
        view.remember(text, key=ref, metadata=metadata, source="langgraph", type="item")

    def _search(self, op: SearchOp) -> list[SearchItem]:
        view = self._view(op.namespace_prefix, "namespace_prefix", reading=True)
        filters = self._prefix_filter(op.namespace_prefix)
        start, limit = offset_and_limit(op)
        wanted = start + limit
        now = view.clock()

        def kept(memory: Memory) -> bool:
            return self._holds(memory) and not _expired(memory, now) and value_matches(memory.metadata["lg_value"], op.filter)

        # A blank query is no query, as "" is (LangGraph's stores answer either with items; recall refuses one).
        if op.query and op.query.strip():
            found = self._ranked(view, op.query, filters, kept, wanted)
        else:
            found = [(m, None) for m in self._last_put(view, filters, kept, wanted)]
        returned = found[start:wanted]
        view.mark_used([m for m, _ in returned])  # what is returned, not what was read to find it
        if op.refresh_ttl:
            self._refresh(view, [m for m, _ in returned])
        return [self._item(m, s, ranked=True) for m, s in returned]  # type: ignore[misc]

    @staticmethod
    def _ranked(view: Engram, query: str, filters: Filters, kept: Callable[[Memory], bool],
                wanted: int) -> list[tuple[Memory, float | None]]:
        """The first ``wanted`` hits of engram's recall for ``query`` that ``kept`` keeps, best first.
        One recall call gives at most ``MAX_RECALL_LIMIT`` hits, and the value filter (and expiry)
        applies after ranking, so recall is read page after page (the first over-fetching, four
        times ``wanted``) until enough are kept, recall has no more, or its window
        (``MAX_RECALL_WINDOW`` hits) is read. Recall does not count them as used (``touch=False``):
        the search counts what it returns."""
        found: list[tuple[Memory, float | None]] = []
        read, size = 0, min(max(wanted * 4, 20), MAX_RECALL_LIMIT)
        while len(found) < wanted and read < MAX_RECALL_WINDOW:
            size = min(size, MAX_RECALL_WINDOW - read)
            hits = view.recall(query, limit=size, offset=read, filters=filters, touch=False)
            found += [(h.memory, h.score) for h in hits if kept(h.memory)]
            if len(hits) < size:
                break
            read, size = read + size, MAX_RECALL_LIMIT
        return found

    @staticmethod
    def _last_put(view: Engram, filters: Filters, kept: Callable[[Memory], bool], wanted: int) -> list[Memory]:
        """The ``wanted`` items of ``filters`` that ``kept`` keeps, last put first, as LangGraph's
        SqliteStore and PostgresStore order a search without a query (``updated_at``; ties keep
        engram's newest-first order). Engram lists by creation, and the put time is metadata
        (``lg_updated_at``), so the store is asked for the items put within the last hour, then
        (while fewer than ``wanted`` are kept) those put in the day before it, and so on back
        (``_PUT_BANDS``): every item not read yet was put before every item read, so the first
        ``wanted`` of those read are the answer, and each item is read at most once. An item
        without a numeric ``lg_updated_at`` (stored before every put kept it; ``_put_at``) is read
        with the first band."""
        now = view.clock()
        bounds = [now - span for span in _PUT_BANDS]
        bands: list[Any] = [{"OR": [{"lg_updated_at": {"gte": bounds[0]}}, {"NOT": [{"lg_updated_at": {"gte": -1e300}}]}]}]
        bands += [{"lg_updated_at": {"gte": lo, "lt": hi}} for hi, lo in itertools.pairwise(bounds)]
        bands.append({"lg_updated_at": {"lt": bounds[-1]}})
        found: list[Memory] = []
        for band in bands:
            window = dataclasses.replace(filters, where=band)
            listed = 0
            while True:
                page = view.list(window, limit=_PAGE, offset=listed)
                listed += len(page)
                found += [m for m in page if kept(m)]
                if len(page) < _PAGE:
                    break
            if len(found) >= wanted:
                break
        found.sort(key=_put_at, reverse=True)
        return found[:wanted]

    def _list_namespaces(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        start, limit = offset_and_limit(op)
        conditions = tuple(op.match_conditions or ())
        seen: set[tuple[str, ...]] = set()
        now = self.engram.clock()
        where = namespace_where(conditions, now)
        for view in self._views(pinned_labels(conditions, self.agent_from_namespace)):
            seen.update(tuple(m.metadata["lg_namespace"]) for m in self._items_of(view, where)
                        if self._holds(m) and not _expired(m, now))
        found = [ns for ns in seen if all(namespace_matches(ns, c) for c in conditions)]
        if op.max_depth is not None:
            found = list({ns[: op.max_depth] for ns in found})
        return sorted(found)[start: start + limit]

    @staticmethod
    def _items_of(view: Engram, where: Mapping[str, Any] | None = None) -> list[Memory]:
        """Every item in ``view``'s own agent scope that ``where`` (on the metadata) selects."""
        items: list[Memory] = []
        while True:
            page = view.list(Filters(metadata={"lg_item": "1"}, where=where), limit=_PAGE, offset=len(items), scope="agent")
            items += page
            if len(page) < _PAGE:
                return items

    # --- TTL sweeping -------------------------------------------------------------------------
    def sweep_ttl(self) -> int:
        """Forget every expired item of every agent this store covers (``_views``), with the reason
        ``langgraph ttl``; returns how many. Reads already skip them: this frees the space."""
        swept = 0
        for view in self._views():
            now = view.clock()
            # The store selects the expired items (``lg_expires_at`` <= now): the others are not read.
            for memory in self._items_of(view, {"lg_expires_at": {"lte": now}}):
                if not self._holds(memory) or not _expired(memory, now):
                    continue
                # Read again: a put or a refresh since the listing keeps the item.
                current = view.find(memory.id)
                if current is None or not _expired(current, view.clock()):
                    continue
                try:
                    view.forget(current, reason=TTL_REASON)
                except NotFoundError:
                    continue  # deleted meanwhile
                swept += 1
        return swept

    def start_ttl_sweeper(self, sweep_interval_minutes: float | None = None) -> concurrent.futures.Future[None]:
        """Run ``sweep_ttl`` every ``sweep_interval_minutes`` (else the config's
        ``sweep_interval_minutes``, else 5, as LangGraph's stores) in a daemon thread, first after
        one interval; a failed sweep is logged and the next one runs. It stops by itself (one info
        line in the log) once the engram is closed. Returns a future that is done when the sweeper
        stops (cancelling it stops it); a sweeper already running is kept.
        Raises ``ValidationError`` naming ``sweep_interval_minutes``."""
        if sweep_interval_minutes is None:
            sweep_interval_minutes = (self.ttl_config or {}).get("sweep_interval_minutes") or DEFAULT_SWEEP_MINUTES
        seconds = 60 * (_minutes(sweep_interval_minutes, "sweep_interval_minutes", allow_none=False) or 0.0)
        if self._sweeper is not None and self._sweeper.is_alive() and self._sweeper_future is not None:
            log.info("the LangGraph TTL sweeper is already running")
            return self._sweeper_future  # the running one's: done when it stops, cancelling stops it
        future: concurrent.futures.Future[None] = concurrent.futures.Future()
        future.add_done_callback(lambda f: self._sweeper_stop.set() if f.cancelled() else None)
        self._sweeper_future = future
        self._sweeper_stop.clear()

        def loop() -> None:
            while not self._sweeper_stop.wait(seconds):
                if self.engram.closed:
                    log.info("the LangGraph TTL sweeper stops: its engram was closed")
                    break
                try:
                    swept = self.sweep_ttl()
                except Exception:  # the thread's edge: one failed sweep must not end the sweeper
                    if self.engram.closed:  # closed during this sweep: that is why it failed
                        log.info("the LangGraph TTL sweeper stops: its engram was closed")
                        break
                    log.exception("LangGraph TTL sweep failed")
                else:
                    if swept:
                        log.info("LangGraph TTL sweep forgot %d expired items", swept)
            try:
                future.set_result(None)
            except concurrent.futures.InvalidStateError:
                pass  # cancelled: how it was stopped

        self._sweeper = threading.Thread(target=loop, name="engram-langgraph-ttl-sweeper", daemon=True)
        self._sweeper.start()
        return future

    def stop_ttl_sweeper(self, timeout: float | None = None) -> bool:
        """Stop the sweeper thread, waiting up to ``timeout`` seconds (None: until it stops); True
        when it is stopped or was not running, False when the timeout came first."""
        thread = self._sweeper
        if thread is None or not thread.is_alive():
            return True
        self._sweeper_stop.set()
        thread.join(timeout)
        if thread.is_alive():
            return False
        self._sweeper = None
        return True

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """The ops' results in their order, as LangGraph's own stores run a batch (``InMemoryStore``,
        ``SqliteStore``, ``PostgresStore``): every read (get, search, list_namespaces) sees the store
        as it was before the batch, then the puts are written, the last one of each (namespace, key)
        only. Every op is checked first: an unknown op, a bad put, a read's bad ``limit`` or
        ``offset``, or a key or label no item can be stored under (a NUL, a lone surrogate) raises
        ``ValidationError`` before anything is read or written."""
        ops = list(ops)
        puts: dict[tuple[tuple[str, ...], str], PutOp] = {}
        for op in ops:
            if isinstance(op, PutOp):
                self._check_put(op)
                puts[(op.namespace, op.key)] = op
            elif isinstance(op, SearchOp | ListNamespacesOp):
                offset_and_limit(op)
                if isinstance(op, SearchOp):
                    _usable_address(op.namespace_prefix, None, "namespace_prefix")
            elif isinstance(op, GetOp):
                _usable_address(op.namespace, op.key)
            else:
                raise ValidationError("op", f"unknown operation {type(op).__name__}",
                                      ["GetOp", "PutOp", "SearchOp", "ListNamespacesOp"])
        results: list[Result] = []
        for op in ops:
            if isinstance(op, GetOp):
                results.append(self._get(op))
            elif isinstance(op, SearchOp):
                results.append(self._search(op))
            elif isinstance(op, ListNamespacesOp):
                results.append(self._list_namespaces(op))
            else:
                results.append(None)
        for op in puts.values():
            self._put(op)
        return results

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """``batch`` in a worker thread: the event loop is never blocked by storage or embedding."""
        return await asyncio.to_thread(self.batch, list(ops))
