"""``json.loads`` for documents users hand in (request bodies, metadata text, imports, snapshots):
whatever is wrong with one is a ``json.JSONDecodeError`` saying what, never another exception.

Python's parser fails three ways besides ``JSONDecodeError``: a document nested past the recursion
limit (``[[[[...`` 5,000 deep) raises ``RecursionError``, a number of more than 4,300 digits
``ValueError`` (the interpreter's guard against slow integer conversion), and bytes that are not
UTF-8 ``UnicodeDecodeError``. Each reached HTTP clients as a 500, or as a 400 that named nothing,
and library callers as an exception outside engram's tree. ``unique_names`` also refuses an object
that gives one name twice (``{"content": "a", "content": "b"}``): the parser keeps the last and
drops the first without a word, so where the document is a request the sender's first value would
be lost; imports of other tools' files keep the lenient reading.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from typing import Any


class RepeatedName(json.JSONDecodeError):
    """A document whose object gives ``name`` twice (``loads`` with ``unique_names``): a
    ``JSONDecodeError`` like the others, told apart where a door answers it in its own words."""

    def __init__(self, name: str) -> None:
        # (the hook is not told where the object is: position 0)
        super().__init__(f"the name {shown(name)} is given twice in one object", "", 0)
        self.name = name


def _unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for name, value in pairs:
        if name in found:
            raise RepeatedName(name)
        found[name] = value
    return found


def loads(document: str | bytes, *, unique_names: bool = False) -> Any:
    """``json.loads(document)``; raises ``json.JSONDecodeError`` for a document nested too deeply,
    with a number too long to read, in bytes that are not UTF-8, or (``unique_names``) with an
    object giving one name twice (``RepeatedName``)."""
    text = document if isinstance(document, str) else ""
    try:
        return json.loads(document, object_pairs_hook=_unique if unique_names else None)
    except RecursionError:
        raise json.JSONDecodeError("nested too deeply", text, 0) from None
    except UnicodeDecodeError as exc:
        raise json.JSONDecodeError(f"not UTF-8 text (byte 0x{exc.object[exc.start]:02x})", text, exc.start) from None
    except json.JSONDecodeError:
        raise
    except ValueError:  # the int conversion guard, the only other ValueError json.loads raises
        raise json.JSONDecodeError(f"a number longer than {sys.get_int_max_str_digits()} digits", text, 0) from None


def lines(text: str) -> list[str]:
    """The lines of a JSON Lines document: split at ``\\n`` only (a ``\\r`` before it is JSON
    whitespace, left for the parser). ``str.splitlines`` also splits at U+2028, U+2029, U+0085 and
    other separators that may stand unescaped inside a JSON string (``json.dumps`` with
    ``ensure_ascii=False`` writes them so, as Node's ``JSON.stringify`` does), which cut such a
    record in two: a message holding one was unreadable, and skipped."""
    return text.split("\n")


def shown(value: Any, limit: int = 80) -> str:
    """``value`` spelled as JSON spells it (``true``, ``null``, ``"a"``, ``{"x": 1}``), cut to about
    ``limit`` characters, for an error message about a value the user gave in a JSON language
    (``engram.where``): at the CLI, HTTP and MCP they wrote JSON, so Python's ``True``, ``None``
    and ``'a'`` would spell back something they never typed. A value JSON cannot hold (bytes, a
    set, NaN: only a library caller can pass one) keeps Python's spelling. A lone surrogate
    (``"\\ud800"`` in a JSON body, undecodable bytes on a command line) is spelled as JSON escapes
    it: kept raw, the message could not be encoded where it was sent (the HTTP API answered
    ``type: "\\ud800"`` with a 500, printing the error raised UnicodeEncodeError)."""
    try:
        text = json.dumps(value, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError, RecursionError):
        text = repr(value)
    text = text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text if len(text) <= limit else text[:limit - 1] + "…"


def kind(value: Any) -> str:
    """What sort of JSON value ``value`` is, for an error about a document that gave it where
    another sort was wanted: ``null``, ``true (a boolean)``, ``5 (a number)`` (a scalar spelled as
    ``shown`` spells it), ``text``, ``a list``, ``an object``, in the words errors use for what is
    allowed ("allowed: a list"), so the two read alike; never Python's ``None``, ``list`` or
    ``dict``. A value JSON cannot hold (bytes: only a library caller can pass one) keeps its
    Python type's name."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"{shown(value)} (a boolean)"
    if isinstance(value, int | float):
        return f"{shown(value)} (a number)"
    if isinstance(value, str):
        return "text"
    if isinstance(value, list | tuple):
        return "a list"
    if isinstance(value, Mapping):
        return "an object"
    return type(value).__name__
