"""Conditions on a memory's metadata beyond ``key = value``: comparisons, lists, substrings,
presence, and ``AND``/``OR``/``NOT`` trees (``Filters(where=...)``).

The language is the one mem0 documents for its metadata filters, so its facade
(``engram.compat.mem0``) passes a mem0 filter through as it is:

- ``{"key": value}`` equal; ``{"key": "*"}`` the key is present, whatever its value;
- ``{"key": {"op": value, ...}}`` with ``eq``, ``ne``, ``gt``, ``gte``, ``lt``, ``lte``, ``in``,
  ``nin``, ``contains``, ``icontains`` (several operators on one key must all hold);
- ``{"AND": [cond, ...]}``, ``{"OR": [cond, ...]}``, ``{"NOT": [cond, ...]}`` (none of them holds);
  several keys in one mapping must all hold.

This module owns the language: ``parse_where`` checks it once (a ``ValidationError`` names the
place, e.g. ``where.AND[1].priority``, and what is allowed, and spells the value it refuses as JSON,
``got true``, ``got null``, as the CLI, HTTP and MCP caller wrote it: ``jsondoc.shown``) and ``Condition.matches`` is the
reference semantics, which the in-memory and JSON stores use directly and the SQL stores translate
(``store/where_sql.py``), pinned alike by the contract suite and ``tests/postgres``. The rules:

- Equality is engram's ``key = value`` equality with the value's type kept: a string equals the
  same string only, another value equals a stored value of the same JSON text (``true`` is not
  ``1``, ``2`` is not ``2.0``, objects compare whatever their key order).
- ``gt``/``gte``/``lt``/``lte`` compare a number with stored numbers (as doubles, never booleans)
  and a string with stored strings (by code point); a stored value of another kind never matches.
- ``contains`` holds for a stored string holding the text, or a stored list holding it as an
  element; ``icontains`` the same after Unicode full case folding of both sides (``fold_case``,
  Python's ``str.casefold``: "ÉCOLE" finds "école", "STRASSE" finds "Straße"), the same on every
  backend: SQLite's and PostgreSQL's own lower() differ beyond A-Z and by build and collation, so
  SQLite calls ``fold_case`` and PostgreSQL a function holding its table (migration 0017).
- A missing key fails every comparison, so ``ne``, ``nin`` and ``NOT`` let it through.

``Filters(metadata={key: value})`` (the CLI's ``--meta key=value``) is a shorthand over this
equality, stated once here (``metadata_condition``): it compares text forms, a string's being the
string and another value's its canonical JSON text, so ``5`` and ``"5"`` both match a stored ``5``
and a stored ``"5"``, and ``"true"`` a stored ``true``. A value typed at a text door carries no
type, and ``--meta n=5`` is meant to find the number. ``where`` keeps the type its JSON carries,
as mem0 does: ``{"n": 5}`` matches ``5`` only. Everything else is the same; ``metadata`` has no
operators, so ``"*"`` and ``AND`` there are a value and a key like any other.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from engram import jsondoc
from engram.errors import ValidationError

OPERATORS = ("eq", "ne", "gt", "gte", "lt", "lte", "in", "nin", "contains", "icontains")
LOGICAL = ("AND", "OR", "NOT")
WILDCARD = "*"
ALLOWED = [*OPERATORS, *LOGICAL, WILDCARD]
RANGES = ("gt", "gte", "lt", "lte")
# Bounds that keep a condition cheap to check and to turn into SQL (a filter is a request, not data).
MAX_DEPTH = 8
MAX_TERMS = 1000


def fold_case(text: str) -> str:
    """``text`` case-folded (Unicode full case folding): the case rule of ``icontains`` and of the
    ``related_entity`` filter (``MemoryFilter``), which SQLite and PostgreSQL apply in SQL alike."""
    return text.casefold()


def json_text(value: Any) -> str:
    """A non-string value's canonical JSON text, what equality compares (``model.metadata_text``)."""
    return json.dumps(value, sort_keys=True)


@dataclass(frozen=True, slots=True)
class Compare:
    """One test of the value under ``key``: ``op`` is ``eq``, ``in`` (``value`` a tuple),
    ``gt``/``gte``/``lt``/``lte``, ``contains``, ``icontains`` or ``exists``. ``within``: the keys,
    in turn, of the objects under ``key`` that lead to the value tested (``("id",)``: the ``id`` of
    the object under ``key``); a value not reached that way is missing. Never written in the
    language (a key there is one key, dots and all): made by engram's own code, as the mem0 facade
    finds a memory by the mem0 id kept at ``metadata["mem0"]["id"]``."""

    key: str
    op: str
    value: Any = None
    within: tuple[str, ...] = ()

    @property
    def keys(self) -> tuple[str, ...]:
        """``key`` and ``within``: the path from the metadata to the value tested."""
        return (self.key, *self.within)

    def matches(self, metadata: Mapping[str, Any]) -> bool:
        stored: Any = metadata
        for key in self.keys:
            if not isinstance(stored, Mapping) or key not in stored:
                return False
            stored = stored[key]
        if self.op == "exists":
            return True
        if self.op == "eq":
            return equal(stored, self.value)
        if self.op == "in":
            return any(equal(stored, v) for v in self.value)
        if self.op in RANGES:
            return _ordered(stored, self.op, self.value)
        fold = fold_case if self.op == "icontains" else (lambda text: text)
        if isinstance(stored, str):
            return fold(self.value) in fold(stored)
        return isinstance(stored, list) and any(isinstance(e, str) and fold(e) == fold(self.value) for e in stored)


@dataclass(frozen=True, slots=True)
class Logic:
    """``and``: every part holds; ``or``: one does; ``not``: none does."""

    op: str
    parts: tuple[Condition, ...]

    def matches(self, metadata: Mapping[str, Any]) -> bool:
        if self.op == "and":
            return all(p.matches(metadata) for p in self.parts)
        found = any(p.matches(metadata) for p in self.parts)
        return found if self.op == "or" else not found


Condition = Compare | Logic


def equal(stored: Any, value: Any) -> bool:
    if isinstance(value, str) or isinstance(stored, str):
        return isinstance(value, str) and isinstance(stored, str) and stored == value
    return json_text(stored) == json_text(value)


def is_json_number(value: Any) -> bool:
    """A JSON number: an int or a float, not a bool. Metadata holds JSON values only, so unlike
    ``model.is_number`` (which takes numpy's numbers from a caller) nothing else is one here."""
    return isinstance(value, int | float) and not isinstance(value, bool)


def _ordered(stored: Any, op: str, value: Any) -> bool:
    if is_json_number(value):
        if not is_json_number(stored):
            return False
        a, b = float(stored), float(value)  # as doubles, as the SQL stores compare them
    elif isinstance(stored, str):
        a, b = stored, value
    else:
        return False
    return a > b if op == "gt" else a >= b if op == "gte" else a < b if op == "lt" else a <= b


def metadata_condition(metadata: Mapping[str, Any] | None, field: str = "metadata") -> Condition | None:
    """``metadata``'s key = value tests as ``where`` equality (the module's note), or None for none:
    each value's text form, or that text or the JSON value it is the canonical text of (``"5"``:
    ``"5"`` or ``5``). Raises ``ValidationError`` naming ``metadata`` or ``metadata.<key>``."""
    if metadata is None:
        return None
    if not isinstance(metadata, Mapping):
        raise ValidationError(field, f"got {type(metadata).__name__}", "a mapping of metadata keys to values")
    parts: list[Condition] = []
    for key, value in metadata.items():
        name = _text(str(key), field)
        path = f"{field}.{name}"
        text = _text(value if isinstance(value, str) else json_text(_value(value, path)), path)
        same = _json_of(text)
        parts.append(Compare(name, "eq", text) if same is _NOT_JSON else Compare(name, "in", (text, same)))
    if not parts:
        return None
    return parts[0] if len(parts) == 1 else Logic("and", tuple(parts))


_NOT_JSON = object()


def _json_of(text: str) -> Any:
    """The value other than a string whose canonical JSON text ``text`` is (``true``, ``null``,
    ``[1, 2]``), or ``_NOT_JSON``: only such a value's text form is ``text``."""
    try:
        parsed = jsondoc.loads(text)
        canonical = json.dumps(parsed, sort_keys=True, allow_nan=False)  # NaN is no JSON value
    except ValueError:
        return _NOT_JSON
    return _NOT_JSON if isinstance(parsed, str) or canonical != text else parsed


def all_of(*conditions: Condition | None) -> Condition | None:
    """The conditions given (None: none) joined by AND, or None when there are none."""
    parts = tuple(c for c in conditions if c is not None)
    if not parts:
        return None
    return parts[0] if len(parts) == 1 else Logic("and", parts)


def parse_where(where: Mapping[str, Any] | str | None, field: str = "where") -> Condition | None:
    """The condition ``where`` states (a mapping, or its JSON text as the CLI and an HTTP query
    parameter pass it), or None for none; raises ``ValidationError`` naming the place
    (``where.AND[0].priority``) and what is allowed there."""
    if where is None:
        return None
    if isinstance(where, str):
        where = _json_document(where, field)
    if not isinstance(where, Mapping):
        raise ValidationError(field, f"got {jsondoc.shown(where)}", "an object of metadata keys to values or operators")
    if not where:
        return None
    terms = [0]
    return _mapping(where, field, 1, terms)


def _json_document(text: str, field: str) -> Any:
    try:  # (a name given twice is refused: json.loads would keep only the last condition)
        return jsondoc.loads(text, unique_names=True)
    except json.JSONDecodeError as exc:
        at = f" at char {exc.pos}" if exc.pos else ""
        raise ValidationError(field, f"malformed JSON ({exc.msg}{at})",
                              'a JSON object of conditions, e.g. {"priority": {"gte": 2}}') from None


def _mapping(where: Mapping[str, Any], path: str, depth: int, terms: list[int]) -> Condition:
    if depth > MAX_DEPTH:
        raise ValidationError(path, f"nests conditions more than {MAX_DEPTH} deep", f"at most {MAX_DEPTH} levels")
    parts: list[Condition] = []
    for key, value in where.items():
        if key in LOGICAL:
            parts.append(_logic(key, value, f"{path}.{key}", depth, terms))
            continue
        if not isinstance(key, str) or not key:
            raise ValidationError(path, f"{jsondoc.shown(key)} is not a metadata key", "a non-empty string key, or AND, OR, NOT")
        name = _text(key, path)
        where_key = f"{path}.{key}"
        if isinstance(value, Mapping):
            if not value:
                raise ValidationError(where_key, "names no operator", ALLOWED[:len(OPERATORS)])
            parts.extend(_operator(name, str(op), arg, where_key, terms) for op, arg in value.items())
        elif isinstance(value, str) and value == WILDCARD:
            parts.append(_count(Compare(name, "exists"), terms, where_key))
        else:
            parts.append(_count(Compare(name, "eq", _value(value, where_key)), terms, where_key))
    return parts[0] if len(parts) == 1 else Logic("and", tuple(parts))


def _logic(name: str, value: Any, path: str, depth: int, terms: list[int]) -> Condition:
    if isinstance(value, Mapping):  # one condition given without its list
        value = [value]
    if not isinstance(value, Sequence) or isinstance(value, str | bytes | bytearray) or not value:
        raise ValidationError(path, f"got {jsondoc.shown(value)}", f"a non-empty list of conditions ({name}: [{{...}}, ...])")
    parts = []
    for i, item in enumerate(value):
        if not isinstance(item, Mapping) or not item:
            raise ValidationError(f"{path}[{i}]", f"got {jsondoc.shown(item)}", "a non-empty mapping of conditions")
        parts.append(_mapping(item, f"{path}[{i}]", depth + 1, terms))
    return Logic(name.lower(), tuple(parts))


def _operator(key: str, op: str, arg: Any, path: str, terms: list[int]) -> Condition:
    if op not in OPERATORS:
        raise ValidationError(path, f"unknown operator {jsondoc.shown(op)}", list(OPERATORS))
    where = f"{path}.{op}"
    if op in ("eq", "ne"):
        found: Condition = Compare(key, "eq", _value(arg, where))
    elif op in ("in", "nin"):
        # Text and bytes are sequences too, of characters and of small ints: neither is a list.
        if not isinstance(arg, Sequence) or isinstance(arg, str | bytes | bytearray):
            raise ValidationError(where, f"got {jsondoc.shown(arg)}", "a list of values")
        if len(arg) > MAX_TERMS:
            raise ValidationError(where, f"lists {len(arg)} values", f"at most {MAX_TERMS}")
        found = Compare(key, "in", tuple(_value(v, f"{where}[{i}]") for i, v in enumerate(arg)))
    elif op in RANGES:
        if not (is_json_number(arg) or isinstance(arg, str)):
            raise ValidationError(where, f"got {jsondoc.shown(arg)}", "a number or a string")
        found = Compare(key, op, _value(arg, where))
    else:
        if not isinstance(arg, str):
            raise ValidationError(where, f"got {jsondoc.shown(arg)}", "a string")
        found = Compare(key, op, _text(arg, where))
    if op in ("ne", "nin"):
        found = Logic("not", (found,))
    return _count(found, terms, path)


def _count(found: Condition, terms: list[int], path: str) -> Condition:
    terms[0] += len(found.value) if isinstance(found, Compare) and found.op == "in" else 1
    if terms[0] > MAX_TERMS:
        raise ValidationError(path, f"the filter holds more than {MAX_TERMS} tests", f"at most {MAX_TERMS}")
    return found


def _text(value: str, path: str) -> str:
    from engram.model import usable_text

    return usable_text(path, value)


def _value(value: Any, path: str) -> Any:
    """A JSON value a stored value can equal; refuses what JSON cannot hold (NaN, sets...)."""
    if isinstance(value, str):
        return _text(value, path)
    if isinstance(value, float) and not math.isfinite(value):
        raise ValidationError(path, f"{value!r} is not a JSON number", "a finite number")
    try:
        text = json.dumps(value, sort_keys=True, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise ValidationError(path, f"not a JSON value: {exc}", "a string, number, boolean, null, list or object") from None
    _text(text, path)
    return value
