"""Validation of plain values: the checks every field's parser is built from (usable text, numbers,
flags, page bounds). Each raises ``ValidationError`` naming the field, the problem and what is
allowed.
"""

from __future__ import annotations

import json
import math
import numbers
from collections.abc import Collection, Mapping
from typing import Any

import numpy as np

from engram import jsondoc, text
from engram.errors import ValidationError


def given_arguments(arguments: Mapping[str, Any], required: Collection[str]) -> dict[str, Any]:
    """A tool call's ``arguments`` without the optional ones sent as null: a model often sends
    ``null`` for an argument it does not mean to set, so null for an optional argument means "not
    given" (its default), at every door that gives a model tools (MCP, the chat agent's tools).
    A ``required`` argument sent as null is kept, for the tool's own check to refuse naming it."""
    return {name: value for name, value in arguments.items() if value is not None or name in required}


def usable_text(field_name: str, value: str) -> str:
    """``value`` if every backend, file and terminal can hold it; raises ``ValidationError``.

    Refused: a lone surrogate (``"\\ud800"``, which JSON escapes and undecodable command-line
    bytes produce, cannot be encoded as UTF-8 by any store) and NUL (PostgreSQL text cannot hold
    it; C strings end at it). Other control characters are kept: they are escaped on the way to a
    memory file or a terminal instead."""
    if "\x00" in value:
        raise ValidationError(field_name, f"contains a NUL character at position {value.index(chr(0))}",
                              "text without NUL (\\x00) characters")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ValidationError(field_name, f"contains a lone surrogate ({json.dumps(value[exc.start])}) at position {exc.start},"
                              " which is not valid Unicode", "valid Unicode text (encodable as UTF-8)") from None
    return value


def usable_json(field_name: str, value: Any) -> None:
    """Every key and string inside a JSON value passes ``usable_text``."""
    if isinstance(value, str):
        usable_text(field_name, value)
    elif isinstance(value, Mapping):
        for k, v in value.items():
            usable_text(field_name, str(k))
            usable_json(field_name, v)
    elif isinstance(value, list | tuple):
        for item in value:
            usable_json(field_name, item)


def parse_query(value: Any, field_name: str = "query") -> str:
    """A search text: non-empty, usable text; raises ``ValidationError`` (naming the type given
    when it is neither text nor None: a number is not an empty query)."""
    if value is not None and not isinstance(value, str):
        raise _wrong_type(field_name, value, "some text to search for")
    if not value or not value.strip():
        raise ValidationError(field_name, "must not be empty", "some text to search for")
    return usable_text(field_name, value)


def parse_words(value: Any, field_name: str = "query") -> str:
    """A text whose words select memories (forget-by-query): a query (``parse_query``) holding at
    least one word; raises ``ValidationError``. One of punctuation alone ("*", "C++" is the word
    "c") would select nothing and was answered "nothing to forget", as if no memory held it."""
    query = parse_query(value, field_name)
    if not text.every_word(query):
        raise ValidationError(field_name, f"{jsondoc.shown(query)} holds no word to match",
                              "text holding a word (letters or digits)")
    return query


def parse_ref(value: Any, field_name: str = "ref") -> str:
    """A memory id or key to look up, trimmed as a key is when stored (``parse_key``): the key
    ``"note\n"`` (read from a file) stored the memory as ``note`` and then found nothing. No id or
    key starts or ends with white space, so none is lost. Raises ``ValidationError``."""
    if value is not None and not isinstance(value, str):
        raise _wrong_type(field_name, value, "a memory id or key")
    if not value or not value.strip():
        raise ValidationError(field_name, "must not be empty", "a memory id or key")
    return usable_text(field_name, value).strip()


# Bounds on how much one call returns (HTTP, MCP, CLI and library alike); more comes by paging
# with ``offset``. A recall ranks ``offset + limit`` hits, so its window is bounded too.
MAX_RECALL_LIMIT = 100
MAX_LINK_DEPTH = 3  # how many link hops a recall may follow (``depth``)
MAX_RECALL_WINDOW = 1000
MAX_LIST_LIMIT = 1000
# A page start past any store's size; a larger one overflowed the stores' 64-bit integers
# (SQLite's OverflowError reached MCP's ``list`` as an unexplained failure).
MAX_OFFSET = 1_000_000_000


# Values of the wrong type are refused, never converted: "0.5" is not a number, True is not 1 and
# "yes" is not True (each was taken, or refused as "out of range"). The text formats (the CLI's
# words, a memory file's fields) turn their text into a value first (``number_text``). A number is
# a number whatever its Python type: numpy's (a score a model gave) as a float, and a whole float
# (5.0, what a JSON client may send: JSON Schema's "integer" takes it) as an integer.


def _wrong_type(field_name: str, value: Any, allowed: str) -> ValidationError:
    # Spelt as JSON spells it (every door's input is JSON or text): ``got "0.5" (text)``, ``got
    # true (a boolean)``, ``got null``, never Python's ``got str '0.5'`` or ``got NoneType None``.
    # (``kind`` already holds a null, boolean or number; text, a list or an object is shown too.)
    sort = jsondoc.kind(value)
    given = sort if value is None or isinstance(value, bool | int | float) else f"{jsondoc.shown(value, 60)} ({sort})"
    return ValidationError(field_name, f"got {given}", allowed)


def is_number(value: Any) -> bool:
    """A real number (an int, a float, numpy's int64 or float32, a Fraction), and not a bool
    (which Python counts as an int; numpy's bool_ is no number)."""
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


# Bounds this far out are a storage type's limit (an int64 column), not a limit a person meets.
_NO_LIMIT = 2**63 - 1


def range_words(low: float | None, high: float | None, *, whole: bool, low_strict: bool = False,
                high_strict: bool = False) -> str:
    """What a value bounded by ``low`` and ``high`` (no bound when None; ``*_strict``: the bound
    itself excluded) takes, in the words every refusal of a number out of range uses: ``1 to 100``
    and ``0 or more`` for a whole number, ``a number from 0 to 1`` and ``a number, 0 or more`` else.
    A bound at or past SQLite's largest integer (2**63 - 1, ``sys.maxsize``) or an infinite one is
    no limit a person meets, and reads as none: ``1 or more``, not ``1 to 9223372036854775807``."""
    def bound(number: float) -> str:  # (an int whole: busy_timeout_ms's 2147483647, not 2.14748e+09)
        return str(number) if isinstance(number, int) else f"{number:g}"

    if high is not None and high >= _NO_LIMIT:
        high, high_strict = None, False
    if low is not None and low <= -_NO_LIMIT:
        low, low_strict = None, False
    if low is None and high is None:
        return "any whole number" if whole else "any number"
    if low is not None and high is not None and not (low_strict or high_strict):
        return f"{bound(low)} to {bound(high)}" if whole else f"a number from {bound(low)} to {bound(high)}"
    parts = []
    if low is not None:
        parts.append(f"more than {bound(low)}" if low_strict else f"{bound(low)} or more")
    if high is not None:
        parts.append(f"less than {bound(high)}" if high_strict else f"at most {bound(high)}")
    return ("" if whole else "a number, ") + " and ".join(parts)


def parse_integer(value: Any, field_name: str, low: int, high: int | None = None, *, allowed: str | None = None) -> int:
    """A whole number from ``low`` to ``high`` (no bound when None), as an int: an int, numpy's
    integers, or a float with nothing after the point (5.0); raises ``ValidationError`` naming the
    type for a value of another type (5.5, a bool, text), and ``allowed`` (default: the range)."""
    allowed = allowed or range_words(low, high, whole=True)
    if not is_number(value) or not (isinstance(value, numbers.Integral) or float(value).is_integer()):
        # (an ``allowed`` that already says "an integer ..." is not prefixed with it again)
        raise _wrong_type(field_name, value, allowed if allowed.startswith("an integer") else f"an integer, {allowed}")
    whole = int(value)
    if whole < low or (high is not None and whole > high):
        raise ValidationError(field_name, f"{jsondoc.shown(value)} is out of range", allowed)
    return whole


def parse_number(value: Any, field_name: str, allowed: str, low: float | None = None, high: float | None = None) -> float:
    """A real number (not a bool, not text; numpy's too) from ``low`` to ``high`` (NaN refused as
    not a number), as a float; raises ``ValidationError`` with ``allowed``."""
    if not is_number(value):
        raise _wrong_type(field_name, value, allowed)
    number = float(value)
    if math.isnan(number):  # (compares as neither below nor above a bound: "out of range" said too little)
        raise ValidationError(field_name, f"{jsondoc.shown(value)} is not a number", allowed)
    if (low is not None and number < low) or (high is not None and number > high):
        raise ValidationError(field_name, f"{jsondoc.shown(value)} is out of range", allowed)
    return number


def parse_flag(value: Any, field_name: str) -> bool:
    """True or False (numpy's too), nothing else (a truthy "no" would have said yes); raises
    ``ValidationError``."""
    if not isinstance(value, bool | np.bool_):
        raise _wrong_type(field_name, value, "true or false")
    return bool(value)


def number_text(value: Any) -> Any:
    """A number written as text (a memory file's ``importance: 0.8``) as that number; any other
    value as it is, for the ``parse_*`` functions to check."""
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return value
    return value


def parse_limit(value: Any, maximum: int, field_name: str = "limit", *, paged: bool = True) -> int:
    """A page size from 1 to ``maximum``; raises ``ValidationError`` naming the range, and the
    offset that pages for more where the caller has one (``paged``)."""
    return parse_integer(value, field_name, 1, maximum,
                         allowed=f"1 to {maximum} (page with offset for more)" if paged else f"1 to {maximum}")


def parse_relevance(value: Any, field_name: str = "min_relevance") -> float:
    """A relevance cut from 0 to 1, the range of recall's scores (a cut above 1 would silently
    drop everything); raises ``ValidationError``."""
    return parse_number(value, field_name, "a number from 0 to 1", 0, 1)


def parse_offset(value: Any, maximum: int = MAX_OFFSET, field_name: str = "offset") -> int:
    """A page start from 0 to ``maximum``; raises ``ValidationError``."""
    return parse_integer(value, field_name, 0, maximum)
