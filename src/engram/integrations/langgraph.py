"""A LangGraph ``BaseStore`` over engram: ``graph.compile(store=EngramStore(engram))``.

Items become memories. Each namespace lives in an engram agent scope: the store's own agent, or,
with ``agent_from_namespace=i``, the agent named by ``agent_prefix`` (``lg:``) + the namespace's
i-th label (``("memories", user_id)`` with ``i=1`` gives every user their own scope, so users never
see each other's items). The prefix keeps a user's agent apart from the application's own: a user
called ``assistant`` is agent ``lg:assistant``, never the app's ``assistant``, whose recall (and a
LangChain retriever over it) would otherwise read that user's items. ``agent_prefix=""`` reads
the bare labels stores made before the prefix used; a label naming the store's own agent is then
refused.
The full namespace, its labels and the item's key and value are kept in the memory's metadata;
the memory's key is ``lg:`` + the percent-escaped namespace and key (its digest when longer than a
memory key may be), so an item is one memory.

``search`` with a ``query`` is engram's recall (full text and vectors, ``SearchItem.score`` is
engram's score); without one, the items newest first. ``filter`` matches value fields by equality
or with ``$eq $ne $gt $gte $lt $lte``, a nested object by the fields it names. What is indexed
for recall is the value's text at the store's ``index_fields`` (or the put's ``index``), else the
whole value as JSON; ``index=False`` indexes only the key. TTLs are not supported (``supports_ttl`` is False).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import operator
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote

from engram.engine import Engram, Filters
from engram.errors import ValidationError
from engram.integrations import DEFAULT_AGENT_PREFIX, missing
from engram.model import MAX_KEY_CHARS, MAX_RECALL_LIMIT, Memory, Scope, make_scope, usable_json, usable_text

try:
    from langgraph.store.base import (
        BaseStore,
        GetOp,
        Item,
        ListNamespacesOp,
        MatchCondition,
        Op,
        PutOp,
        Result,
        SearchItem,
        SearchOp,
    )
    from langgraph.store.base.embed import get_text_at_path
except ImportError as exc:  # pragma: no cover - the extra is installed in development
    raise missing("langgraph", "langgraph") from exc


def _is_agent_name(name: str) -> bool:
    try:
        make_scope(name, None)
    except ValidationError:
        return False
    return True


def _number(value: Any) -> float | int | None:
    """``value`` as the number LangGraph's InMemoryStore compares it as (``float(value)``): a
    number, a boolean or a numeric string (``"10"``); None for anything else."""
    if isinstance(value, int | float):
        return value
    if isinstance(value, str):
        for kind in (int, float):  # int first: a long integer string keeps every digit
            try:
                return kind(value)
            except ValueError:
                pass
    return None


def _ordered(compare: Callable[[Any, Any], bool]) -> Callable[[Any, Any], bool]:
    """An order operator as InMemoryStore's: numbers (numeric strings included) compare as numbers.
    Two other strings compare as text (ISO dates order so), where InMemoryStore raises; anything
    else (a missing field, a list) is no match."""
    def holds(have: Any, operand: Any) -> bool:
        a, b = _number(have), _number(operand)
        if a is not None and b is not None:
            return compare(a, b)
        try:
            return compare(have, operand) if isinstance(have, str) and isinstance(operand, str) else False
        except TypeError:
            return False
    return holds


_OPS: dict[str, Callable[[Any, Any], bool]] = {
    "$eq": operator.eq, "$ne": operator.ne, "$gt": _ordered(operator.gt), "$gte": _ordered(operator.ge),
    "$lt": _ordered(operator.lt), "$lte": _ordered(operator.le)}


def _when(ts: float) -> datetime:
    return datetime.fromtimestamp(ts, UTC)


def _matches(value: Mapping[str, Any], wanted: Mapping[str, Any] | None, where: str = "filter") -> bool:
    """Whether ``value`` has what ``wanted`` asks, as LangGraph's own stores read a filter: a nested
    object matches the fields it names (containment, as Postgres' jsonb ``@>``), not the whole object."""
    for field, condition in (wanted or {}).items():
        have = value.get(field)
        if isinstance(condition, Mapping) and condition and all(k.startswith("$") for k in condition):
            for op, operand in condition.items():
                if op not in _OPS:
                    raise ValidationError(f"{where}.{field}", f"unknown operator {op!r}", sorted(_OPS))
                if not _OPS[op](have, operand):
                    return False
        elif isinstance(condition, Mapping) and condition:
            if not isinstance(have, Mapping) or not _matches(have, condition, f"{where}.{field}"):
                return False
        elif have != condition:
            return False
    return True


def _namespace_matches(namespace: tuple[str, ...], condition: MatchCondition) -> bool:
    path = tuple(condition.path)
    if len(path) > len(namespace):
        return False
    part = namespace[: len(path)] if condition.match_type == "prefix" else namespace[len(namespace) - len(path):]
    return all(p == "*" or p == n for p, n in zip(path, part, strict=True))


class EngramStore(BaseStore):
    """LangGraph's store interface, kept in engram (see the module docstring)."""

    supports_ttl = False

    def __init__(self, engram: Engram, *, agent_from_namespace: int | None = None, agent_prefix: str = DEFAULT_AGENT_PREFIX,
                 index_fields: list[str] | None = None) -> None:
        """``agent_prefix`` goes before the label ``agent_from_namespace`` picks to name its agent;
        ``""`` is the layout of stores made before it existed (see the module docstring)."""
        if agent_from_namespace is not None and agent_from_namespace < 0:
            raise ValidationError("agent_from_namespace", f"{agent_from_namespace} is negative", "a label index >= 0")
        if not isinstance(agent_prefix, str) or (agent_prefix and not _is_agent_name(agent_prefix + "x")):
            raise ValidationError("agent_prefix", f"{agent_prefix!r} cannot start an agent name",
                                  'a letter or digit, then letters, digits and . _ : @ - (e.g. "lg:"), or "" for bare labels')
        self.engram = engram
        self.agent_from_namespace = agent_from_namespace
        self.agent_prefix = agent_prefix
        self.index_fields = index_fields

    # --- scopes -------------------------------------------------------------------------------
    def _view(self, namespace: tuple[str, ...], field: str = "namespace") -> Engram:
        i = self.agent_from_namespace
        if i is None:
            return self.engram
        if len(namespace) <= i:
            raise ValidationError(field, f"{namespace!r} does not reach label {i}, which names the agent",
                                  f"a namespace of at least {i + 1} labels")
        agent = self.agent_prefix + namespace[i]
        if not _is_agent_name(agent):
            raise ValidationError(field, f"label {i} ({namespace[i]!r}) cannot name an engram agent",
                                  "letters, digits and . _ : @ -, starting with a letter or digit")
        if agent == self.engram.scope.agent:
            # Its items would be the application's own memories, read by its recall and retrievers.
            raise ValidationError(field, f"label {i} ({namespace[i]!r}) names this store's own engram agent",
                                  f'another label; a store with agent_prefix (default "{DEFAULT_AGENT_PREFIX}") keeps '
                                  "every label apart from the application's agents")
        return self.engram.for_agent(agent, origin="langgraph")

    def _views(self) -> list[Engram]:
        """Every agent that may hold this store's items: for namespace listing across agents."""
        if self.agent_from_namespace is None:
            return [self.engram]
        agents = {Scope.parse(s).agent for s in self.engram.stats().by_scope if s.startswith("agent:")}
        mine = sorted(a for a in agents if a and a.startswith(self.agent_prefix) and a != self.engram.scope.agent)
        return [self.engram.for_agent(a, origin="langgraph") for a in mine]

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
                  "created_at": _when(memory.created_at), "updated_at": _when(memory.updated_at)}
        return SearchItem(**fields, score=score) if ranked else Item(**fields)

    # --- the operations -----------------------------------------------------------------------
    def _get(self, op: GetOp) -> Item | None:
        memory = self._view(op.namespace).find(self._ref(op.namespace, op.key))
        return None if memory is None else self._item(memory)

    def _put(self, op: PutOp) -> None:
        view = self._view(op.namespace)
        ref = self._ref(op.namespace, op.key)
        if op.value is None:
            if view.find(ref) is not None:
                view.forget(ref, reason="langgraph delete")
            return
        if not isinstance(op.value, Mapping):
            raise ValidationError("value", f"got {type(op.value).__name__}", "a dict (None deletes the item)")
        value = dict(op.value)
        # Checked here so the error names LangGraph's argument, not the metadata that carries it.
        usable_json("value", value)
        usable_text("key", op.key)
        for label in op.namespace:
            usable_text("namespace", label)
        fields = self.index_fields if op.index is None else op.index
        if fields is False:
            text = op.key
        elif fields:
            text = "\n".join(t for path in fields for t in get_text_at_path(value, path)) or op.key
        else:
            text = json.dumps(value, ensure_ascii=False, default=str)
        metadata = {"lg_item": "1", "lg_namespace": list(op.namespace), "lg_key": op.key, "lg_value": value,
                    **{f"lg_ns{i}": label for i, label in enumerate(op.namespace)}}
        view.remember(text, key=ref, metadata=metadata, source="langgraph")

    def _search(self, op: SearchOp) -> list[SearchItem]:
        view = self._view(op.namespace_prefix, "namespace_prefix")
        filters = self._prefix_filter(op.namespace_prefix)
        wanted = op.offset + op.limit
        if op.query:
            # Over-fetch: the value filter is applied after ranking.
            hits = view.recall(op.query, limit=min(max(wanted * 4, 20), MAX_RECALL_LIMIT), filters=filters)
            found = [(h.memory, h.score) for h in hits if _matches(h.memory.metadata["lg_value"], op.filter)]
        else:
            found, offset = [], 0
            while len(found) < wanted:
                page = view.list(filters, limit=500, offset=offset)
                found += [(m, None) for m in page if _matches(m.metadata["lg_value"], op.filter)]
                offset += len(page)
                if len(page) < 500:
                    break
        return [self._item(m, s, ranked=True) for m, s in found[op.offset:wanted]]  # type: ignore[misc]

    def _list_namespaces(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        seen: set[tuple[str, ...]] = set()
        for view in self._views():
            offset = 0
            while True:
                page = view.list(Filters(metadata={"lg_item": "1"}), limit=1000, offset=offset, scope="agent")
                seen.update(tuple(m.metadata["lg_namespace"]) for m in page)
                offset += len(page)
                if len(page) < 1000:
                    break
        found = [ns for ns in seen if all(_namespace_matches(ns, c) for c in op.match_conditions or ())]
        if op.max_depth is not None:
            found = list({ns[: op.max_depth] for ns in found})
        return sorted(found)[op.offset: op.offset + op.limit]

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        results: list[Result] = []
        for op in ops:
            if isinstance(op, GetOp):
                results.append(self._get(op))
            elif isinstance(op, PutOp):
                results.append(self._put(op))
            elif isinstance(op, SearchOp):
                results.append(self._search(op))
            elif isinstance(op, ListNamespacesOp):
                results.append(self._list_namespaces(op))
            else:
                raise ValidationError("op", f"unknown operation {type(op).__name__}",
                                      ["GetOp", "PutOp", "SearchOp", "ListNamespacesOp"])
        return results

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """``batch`` in a worker thread: the event loop is never blocked by storage or embedding."""
        return await asyncio.to_thread(self.batch, list(ops))
