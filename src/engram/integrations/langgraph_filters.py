"""What a LangGraph read selects, as pure functions of its arguments, for ``EngramStore``
(``langgraph.py``), which owns storing items as memories and everything that touches storage.

A search's ``filter`` is matched against each item's value here (``value_matches``), as
LangGraph's ``InMemoryStore`` reads one: equality or ``$eq $ne $gt $gte $lt $lte``, a nested
object by the fields it names, a list item by item. A namespace listing's match conditions are
checked on each namespace read (``namespace_matches``) and, so that fewer items are read at all,
turned into a ``where`` on the items' metadata (``namespace_where``) and the agent labels they pin
(``pinned_labels``). A read's ``offset`` and ``limit`` are checked by ``offset_and_limit``.
Nothing here reads or writes a store, and LangGraph is imported for its types only.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from engram import jsondoc
from engram.errors import ValidationError
from engram.model import parse_integer, usable_text

if TYPE_CHECKING:
    from langgraph.store.base import ListNamespacesOp, MatchCondition, SearchOp

# Tests a namespace listing asks the store for at most (``where.MAX_TERMS`` is 1,000); the rest are
# checked on the items read.
_MAX_PUSHED = 200
# The namespace lengths a suffix condition is asked of the store for, each on its own (a longer
# namespace is read whatever its labels).
_SUFFIX_LENGTHS = 16


def offset_and_limit(op: SearchOp | ListNamespacesOp) -> tuple[int, int]:
    """A read's (offset, limit), each a count from 0; else ``ValidationError`` naming it. LangGraph
    passes them on unchecked: a negative limit sliced off the last items, unsaid."""
    return parse_integer(op.offset, "offset", 0), parse_integer(op.limit, "limit", 0)


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


def value_matches(value: Mapping[str, Any], wanted: Mapping[str, Any] | None, where: str = "filter") -> bool:
    """Whether ``value`` has what ``wanted`` asks, field by field, as LangGraph's ``InMemoryStore``
    reads a filter (``_fits``)."""
    return all(_fits(value.get(field), condition, f"{where}.{field}") for field, condition in (wanted or {}).items())


def _fits(have: Any, condition: Any, where: str) -> bool:
    """``have`` against one filter ``condition`` as InMemoryStore compares them: an object with a
    ``$`` key is operators (every key must be one: else ``ValidationError`` naming ``where``); any
    other object matches an object holding the fields it names (containment, as Postgres' jsonb
    ``@>``; ``{}`` any object); a list matches a list of as many items, each fitting its own; else
    equality (a missing field is None: ``{"$ne": "x"}`` matches it)."""
    if isinstance(condition, Mapping):
        if any(isinstance(k, str) and k.startswith("$") for k in condition):
            for op, operand in condition.items():
                if op not in _OPS:
                    raise ValidationError(where, f"unknown operator {jsondoc.shown(op)}", sorted(_OPS))
                if not _OPS[op](have, operand):
                    return False
            return True
        return isinstance(have, Mapping) and all(
            _fits(have.get(k), v, f"{where}.{k}") for k, v in condition.items())
    if isinstance(condition, list | tuple):
        return (isinstance(have, list | tuple) and len(have) == len(condition)
                and all(_fits(h, c, where) for h, c in zip(have, condition, strict=True)))
    return have == condition


def namespace_matches(namespace: tuple[str, ...], condition: MatchCondition) -> bool:
    path = tuple(condition.path)
    if len(path) > len(namespace):
        return False
    part = namespace[: len(path)] if condition.match_type == "prefix" else namespace[len(namespace) - len(path):]
    return all(p == "*" or p == n for p, n in zip(path, part, strict=True))


def pinned_labels(conditions: Iterable[MatchCondition], position: int | None) -> frozenset[str]:
    """The labels that prefix ``conditions`` require at ``position`` (the label naming the agent,
    ``agent_from_namespace``); none when it is None or every condition leaves it open (``*``)."""
    if position is None:
        return frozenset()
    return frozenset(c.path[position] for c in conditions
                     if c.match_type == "prefix" and len(c.path) > position and c.path[position] != "*")


def namespace_where(conditions: Iterable[MatchCondition], now: float) -> dict[str, Any]:
    """The part of a namespace listing the store can select on the metadata, so it reads fewer
    items: not expired (``lg_expires_at`` > now, or none), at least as long as each condition's
    path (its last label ``lg_ns{n-1}`` present), a prefix condition's labels other than ``*``
    (``lg_ns{i}``), and a suffix condition's, counted from the end, for each namespace length up to
    ``_SUFFIX_LENGTHS`` (longer namespaces are all read). Every condition and ``max_depth`` stay
    checked on what is read (``namespace_matches``), so what is not pushed (a label the ``where``
    language refuses, a NUL, which no put stores; terms past ``_MAX_PUSHED``) only reads more."""
    terms: list[dict[str, Any]] = [{"NOT": [{"lg_expires_at": {"lte": now}}]}]
    for condition in conditions:
        path = tuple(condition.path)
        if not path:
            continue
        labels = [(i, label) for i, label in enumerate(path) if label != "*" and _usable_label(label)]
        if condition.match_type == "prefix":
            pushed = [{f"lg_ns{i}": label} for i, label in labels]
        else:  # one branch a length: exactly that long (lg_ns{n-1} present, lg_ns{n} not), labels from its end
            lengths = [{"AND": [{f"lg_ns{n - 1}": "*"}, {"NOT": [{f"lg_ns{n}": "*"}]},
                                *({f"lg_ns{n - len(path) + i}": label} for i, label in labels)]}
                       for n in range(len(path), _SUFFIX_LENGTHS + 1)]
            pushed = [{"OR": [*lengths, {f"lg_ns{_SUFFIX_LENGTHS}": "*"}]}] if labels and lengths else []
        for part in ([{f"lg_ns{len(path) - 1}": "*"}], pushed):
            if part and _terms(terms + part) <= _MAX_PUSHED:
                terms += part
    return {"AND": terms}


def _terms(where: Any) -> int:
    """The tests ``where`` holds, as ``where.parse_where`` counts them against its bound."""
    if isinstance(where, list):
        return sum(_terms(w) for w in where)
    return sum(_terms(v) if k in ("AND", "OR", "NOT") else 1 for k, v in where.items())


def _usable_label(label: Any) -> bool:
    if not isinstance(label, str):
        return False
    try:
        usable_text("namespace", label)
    except ValidationError:
        return False
    return True
