"""engram's error tree, in one place.

    EngramError
    ├── ValidationError          bad input: names the field, what was wrong and what is allowed
    │   ├── SnapshotError        a malformed snapshot/import document (nothing imported)
    │   └── DimensionError       a vector of the wrong size (refused before any write)
    ├── NotFoundError            a memory (or link end) that does not exist
    ├── ConfigError              settings that cannot be used
    │   ├── MissingDependencyError   an optional part whose package is not installed
    │   └── EncryptionKeyError   the encryption key does not open the database (also an IntegrityError)
    ├── StorageError             a backend failed (wraps the driver's exception with context)
    │   └── IntegrityError       the database file is damaged
    ├── EmbeddingError           an embedding provider failed after its retries
    └── ProviderError            a chat (LLM) provider failed after its retries

Backends translate their driver's exceptions into this tree in one place each, with
``raise ... from exc``; interfaces map the tree to exit codes / HTTP statuses / tool errors.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping, Sequence
from typing import Any

from engram import jsondoc
from engram.about import install_hint


class EngramError(Exception):
    """Base class of every error engram raises on purpose."""


class ValidationError(EngramError, ValueError):
    """Input was refused. ``field`` names what was wrong; ``allowed`` says what would be accepted.
    ``names``: where the refused value is itself a field's name (``clear=["content"]``), that field,
    so a door that takes the field another way (HTTP's ``"content": null``) names it without
    reading the message."""

    def __init__(self, field: str, problem: str, allowed: str | Sequence[str] | None = None, *,
                 names: str | None = None) -> None:
        self.field = field
        self.problem = problem
        if allowed is not None and not isinstance(allowed, str):
            allowed = ", ".join(str(a) for a in allowed)
        self.allowed = allowed
        self.names = names
        super().__init__(f"{field}: {self.reason}")

    @property
    def reason(self) -> str:
        """The message without the field's name in front: the problem, and what is allowed."""
        return f"{self.problem} (allowed: {self.allowed})" if self.allowed else self.problem


class SnapshotError(ValidationError):
    """A snapshot or import document could not be read; nothing was imported."""


class DimensionError(ValidationError):
    """A vector's size does not match the store's embedding identity."""


# How much of a ref a not-found message shows: a key (up to 200 characters) whole, with room for
# its escapes; anything longer names no memory anyway.
_REF_SHOWN = 300


class NotFoundError(EngramError, LookupError):
    """The memory (or one end of a link) does not exist in the visible scopes."""

    def __init__(self, what: str, ref: str, *, field: str | None = None, message: str | None = None) -> None:
        """``message``: the whole text, where "WHAT not found: REF" would mislead (a folder holding
        no backup is no backup of that name)."""
        self.what = what
        self.ref = ref
        # The field the ref came in (``links[0]``, ``key``), kept apart from ``what`` so a door
        # can name it as its caller typed it (``--link[0]``), as it does a ``ValidationError``'s.
        self.field = field
        named = what if field is None else f"{what} named by {field}"
        # Spelt as JSON, as every refused value is (``memory not found: "notes/today"``): the ref
        # came from a command line, a URL or a JSON body, never from Python's quotes.
        super().__init__(message or f"{named} not found: {jsondoc.shown(ref, _REF_SHOWN)}")


class ConfigError(EngramError):
    """Settings that cannot be used as given."""


class MissingDependencyError(ConfigError, ImportError):
    """An optional part of engram needs a package that is not installed."""

    def __init__(self, feature: str, extra: str, package: str) -> None:
        self.feature = feature
        self.extra = extra
        self.package = package
        super().__init__(
            f"{feature} needs the package {jsondoc.shown(package)}: install it with {install_hint(extra)}"
        )


class StorageError(EngramError):
    """A storage backend failed; the message says which operation and where."""


class IntegrityError(StorageError):
    """The database file is damaged."""


class EncryptionKeyError(ConfigError, IntegrityError):
    """The configured encryption key does not open the database file: a wrong key, or a key set
    for a file that is not encrypted. The user's configuration (exit code 4, as every
    ``ConfigError``), and, to code that handles an unreadable file (the embedding cache starts
    afresh), an ``IntegrityError`` as before."""


class EmbeddingError(EngramError):
    """An embedding provider failed after its retries."""


class ProviderError(EngramError):
    """A chat provider failed after its retries."""


__all__ = [
    "ConfigError",
    "DimensionError",
    "EmbeddingError",
    "EncryptionKeyError",
    "EngramError",
    "IntegrityError",
    "MissingDependencyError",
    "NotFoundError",
    "ProviderError",
    "SnapshotError",
    "StorageError",
    "ValidationError",
]


# A value in pydantic's list of what a literal or an enum takes (its ``expected``: Python's repr of
# each, ``'core', 'knowledge' or 'conversation'``): a quoted text or a bare number/constant.
_EXPECTED_VALUE = re.compile(r"""'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"|[^\s,]+""")


def _expected(text: str) -> list[str]:
    """The values in pydantic's ``expected`` as a person types them (``core``, ``3``)."""
    values = []
    for token in _EXPECTED_VALUE.findall(text):
        if token == "or":
            continue
        try:
            values.append(str(ast.literal_eval(token)))
        except (ValueError, SyntaxError):
            values.append(token)
    return values


def refusal(error: Mapping[str, Any], field: str | None = None) -> ValidationError:
    """One error of a pydantic ``ValidationError`` as engram's own, on ``field`` (as the door names
    it; default: its location joined with dots), so a refusal by a door's schema reads as the
    engine's refusal of the same value: a validator's ``ValueError`` reads as its text, without
    pydantic's "Value error, " in front (which told a user nothing and hid the start of the
    message); a value outside a literal or an enum (a schema's category, role, order) as
    ``unknown category "feelings"`` with the values allowed, as the engine says it, never pydantic's
    ``Input should be 'core', 'knowledge' or 'conversation'`` in Python's quotes; an error built
    with a ``problem`` and what is ``allowed`` keeps both apart. Needs the error's ``input``."""
    loc = error.get("loc") or ()
    field = field if field is not None else ".".join(str(part) for part in loc)
    kind = error.get("type")
    context = error.get("ctx") or {}
    reason = context.get("error")
    if kind == "value_error" and reason is not None:
        return ValidationError(field, str(reason))
    if kind in ("literal_error", "enum") and "input" in error and "expected" in context:
        name = re.split(r"[.\[]", field.rsplit(".", 1)[-1])[0] or "value"
        return ValidationError(field, f"unknown {name} {jsondoc.shown(error['input'])}", _expected(context["expected"]))
    if "problem" in context:
        return ValidationError(field, str(context["problem"]), context.get("allowed"))
    return ValidationError(field, str(error.get("msg", "")))


def validation_message(error: Mapping[str, Any], field: str | None = None) -> str:
    """One error of a pydantic ``ValidationError`` in engram's words (``refusal``), without the
    field's name in front."""
    return refusal(error, field).reason
