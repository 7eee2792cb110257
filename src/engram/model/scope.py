"""Where a memory lives (``Scope``) and the one check of the names that make it (``make_scope``).

``Scope.parse`` reads a scope's text form back through ``make_scope``, so a record and its
validation sit together here rather than in ``records`` (which would import the validators).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from engram import jsondoc
from engram.errors import ValidationError

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:@-]{0,127}$")


@dataclass(frozen=True, slots=True)
class Scope:
    """Where a memory lives: global (no agent), an agent, or a session of an agent.

    A recall from a session sees ``visible()``: the session, its agent and global.
    """

    agent: str | None = None
    session: str | None = None

    @property
    def kind(self) -> Literal["global", "agent", "session"]:
        if self.agent is None:
            return "global"
        return "agent" if self.session is None else "session"

    def visible(self) -> tuple[Scope, ...]:
        """This scope and every scope above it, most specific first."""
        chain: list[Scope] = [self]
        if self.session is not None:
            chain.append(Scope(self.agent))
        if self.agent is not None:
            chain.append(Scope())
        return tuple(chain)

    def __str__(self) -> str:
        if self.agent is None:
            return "global"
        if self.session is None:
            return f"agent:{self.agent}"
        return f"session:{self.agent}/{self.session}"

    @classmethod
    def parse(cls, text: str) -> Scope:
        """Inverse of ``str()``: ``global``, ``agent:NAME`` or ``session:AGENT/SESSION``."""
        if text == "global":
            return cls()
        kind, _, rest = text.partition(":")
        if kind == "agent" and rest:
            return make_scope(rest, None)
        if kind == "session" and "/" in rest:
            agent, _, session = rest.partition("/")
            return make_scope(agent, session)
        raise ValidationError("scope", f"cannot read {jsondoc.shown(text)}", "global, agent:NAME, session:AGENT/SESSION")


def make_scope(agent: str | None, session: str | None) -> Scope:
    """A validated scope; a session needs an agent."""
    for name, value in (("agent", agent), ("session", session)):
        if value is not None and (not isinstance(value, str) or not _NAME.match(value)):
            raise ValidationError(name, f"{jsondoc.shown(value)} is not a valid name",
                                  "letters, digits and . _ : @ -, 1-128 chars")
    if session is not None and agent is None:
        raise ValidationError("session", "a session scope needs an agent")
    return Scope(agent, session)
