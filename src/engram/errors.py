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

from collections.abc import Mapping, Sequence
from typing import Any

from engram.about import install_hint


class EngramError(Exception):
    """Base class of every error engram raises on purpose."""


class ValidationError(EngramError, ValueError):
    """Input was refused. ``field`` names what was wrong; ``allowed`` says what would be accepted."""

    def __init__(self, field: str, problem: str, allowed: str | Sequence[str] | None = None) -> None:
        self.field = field
        self.problem = problem
        if allowed is not None and not isinstance(allowed, str):
            allowed = ", ".join(str(a) for a in allowed)
        self.allowed = allowed
        message = f"{field}: {problem}"
        if allowed:
            message += f" (allowed: {allowed})"
        super().__init__(message)


class SnapshotError(ValidationError):
    """A snapshot or import document could not be read; nothing was imported."""


class DimensionError(ValidationError):
    """A vector's size does not match the store's embedding identity."""


class NotFoundError(EngramError, LookupError):
    """The memory (or one end of a link) does not exist in the visible scopes."""

    def __init__(self, what: str, ref: str) -> None:
        self.what = what
        self.ref = ref
        super().__init__(f"{what} not found: {ref!r}")


class ConfigError(EngramError):
    """Settings that cannot be used as given."""


class MissingDependencyError(ConfigError, ImportError):
    """An optional part of engram needs a package that is not installed."""

    def __init__(self, feature: str, extra: str, package: str) -> None:
        self.feature = feature
        self.extra = extra
        self.package = package
        super().__init__(
            f"{feature} needs the package {package!r}: install it with {install_hint(extra)}"
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


def validation_message(error: Mapping[str, Any]) -> str:
    """One error of a pydantic ``ValidationError`` in engram's words: a validator's own
    ``ValueError`` reads as its text, without pydantic's "Value error, " in front (which told a
    user nothing and hid the start of the message)."""
    reason = (error.get("ctx") or {}).get("error")
    return str(reason) if error.get("type") == "value_error" and reason is not None else str(error.get("msg", ""))
