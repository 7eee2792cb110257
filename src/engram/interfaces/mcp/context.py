"""ClawCode's ``remember`` ``context`` read as engram's own fields.

ClawCode sends ``"context": {"session_id": "sess_123", "timestamp": "2026-02-09T10:30:00Z"}``
with a memory and later recalls it with ``filters.session_id``. In engram a session is a scope,
so ``session_id`` places the memory in that session of the connection's agent (the recall filter
reads the same session); ``timestamp`` is when the memory was made (its ``created_at``, which
recall shows as ``timestamp``); every other key is kept flat in the memory's metadata, which the
recall result's ``context`` shows again. Errors name the key as the client wrote it
(``context.timestamp``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from engram import jsondoc
from engram.engine import Engram
from engram.errors import ValidationError
from engram.interfaces.present import OWN_CONTEXT_FIELDS
from engram.model import recorded_at

ScopeName = Literal["agent", "session", "global"]


@dataclass(frozen=True, slots=True)
class Placed:
    """Where and as what a ``remember`` with a ``context`` is stored: through ``engram`` (a session
    view when the context names one), in ``scope``, made at ``created_at`` (None: now), with
    ``metadata`` (None: none given, so an update by key keeps what is stored)."""

    engram: Engram
    scope: ScopeName
    created_at: float | None
    metadata: dict[str, Any] | None


def place(engram: Engram, context: Mapping[str, Any] | None, scope: ScopeName | None) -> Placed:
    """``remember``'s ``context`` and ``scope`` as a ``Placed``; raises ``ValidationError`` naming
    ``context.session_id`` or ``context.timestamp`` for a value that cannot be read, a session
    with a scope that is not a session's, and ``context.<name>`` for a name recall's context
    gives one of the memory's own fields (``present.OWN_CONTEXT_FIELDS``)."""
    rest = dict(context or {})
    session_id, timestamp = rest.pop("session_id", None), rest.pop("timestamp", None)
    for name in rest:
        if name in OWN_CONTEXT_FIELDS:
            # Kept in metadata, it would never come back: recall's context shows the memory's own
            # field under that name (a context "category": "ops" was recalled as "knowledge").
            argument = OWN_CONTEXT_FIELDS[name]
            raise ValidationError(
                f"context.{name}", f"names the memory's own {name}, which recall's context shows in its place",
                (f"the argument {name} of remember, or " if argument else "") + "another name for this context entry")
    # Checked here too (``remember`` checks it again), so the error names the field the client sent.
    created_at = recorded_at(engram.time.instant(timestamp, "context.timestamp"), engram.clock(), "context.timestamp")
    if session_id is None:
        return Placed(engram, scope or "agent", created_at, rest or None)
    if scope not in (None, "session"):
        raise ValidationError("context.session_id", f"names a session, but scope is {jsondoc.shown(scope)}",
                              'scope "session" or left out with a session_id; no session_id with scope '
                              f"{jsondoc.shown(scope)}")
    try:
        view = engram.for_session(session_id)
    except ValidationError as exc:  # the view checks the name as a scope's, under its own field name
        raise ValidationError("context.session_id", exc.problem, exc.allowed) from None
    return Placed(view, "session", created_at, rest or None)
