"""What an agent's ``forget`` and ``versions`` tools do, at every door that gives a model them (MCP,
and the Agno, Pydantic AI, Strands and CrewAI toolsets). ``forget``:
exactly one selector in the tool's own argument names (``memory_id`` — an id, else a key —,
``key``, ``query``, ``tag``, ``older_than_days``), the one memory resolved as the engine resolves
any (``Engram.named``, errors naming the tool's arguments), then the forget, answered as
``present.tool_forget`` words it. ``versions``: the one memory ``memory_id`` or ``key`` names,
resolved the same way (so in the calling view's scopes only: another agent's memory is not
found), and its earlier contents as ``present.versions_dict`` gives them at every door. Sync for
an ``Engram``, awaited for an ``AsyncEngram``; the two differ only in the awaits."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from engram.engine import Filters, ScopeChoice
from engram.errors import ValidationError
from engram.interfaces.present import forget_tool_selection, tool_forget, versions_dict

if TYPE_CHECKING:
    from engram.aio import AsyncEngram
    from engram.engine import Engram

_NAMES = ("memory_id", "key")


def forget(engram: Engram, memory_id: str | None, key: str | None, query: str | None, tag: str | None,
           older_than_days: float | None, reason: str | None, dry_run: bool, erase: bool = False, *,
           session: str | None = None, filters: Filters | None = None) -> dict[str, Any]:
    """Forget what the tool's arguments select (``erase``: and erase it, ``Engram.forget``); raises
    ``ValidationError`` (on ``forget``, or the argument at fault) or ``NotFoundError``, for the door
    to hand the model as it does. ``session`` (MCP's ``filters.session_id``, as its ``recall``
    takes it): a query, tag or age selects that session's memories only, and a key is read from
    that session; an id reaches any of the agent's sessions without it. ``filters`` (tags,
    category, type) narrow a query, tag or age, and are refused beside one memory's id or key,
    which they would not narrow."""
    older_than_s = forget_tool_selection(memory_id, key, query, tag, older_than_days)
    view = engram if session is None else engram.for_session(session)
    one = None
    if _names_one(memory_id, key, filters):
        one = view.named(memory_id, key, field="forget", names=_NAMES)
    removed = view.forget(one, query=query, tag=tag, older_than_s=older_than_s, reason=reason, dry_run=dry_run,
                          erase=erase, filters=filters, scope=_scope(session))
    return tool_forget(removed, dry_run, reason, erase)


async def aforget(engram: AsyncEngram, memory_id: str | None, key: str | None, query: str | None, tag: str | None,
                  older_than_days: float | None, reason: str | None, dry_run: bool, erase: bool = False, *,
                  session: str | None = None, filters: Filters | None = None) -> dict[str, Any]:
    """``forget`` (the same arguments, answers and errors) through an ``AsyncEngram``'s reader and
    writer threads."""
    older_than_s = forget_tool_selection(memory_id, key, query, tag, older_than_days)
    view = engram if session is None else engram.for_session(session)
    one = None
    if _names_one(memory_id, key, filters):
        one = await view.named(memory_id, key, field="forget", names=_NAMES)
    removed = await view.forget(one, query=query, tag=tag, older_than_s=older_than_s, reason=reason,
                                dry_run=dry_run, erase=erase, filters=filters, scope=_scope(session))
    return tool_forget(removed, dry_run, reason, erase)


def _names_one(memory_id: str | None, key: str | None, filters: Filters | None) -> bool:
    """Whether the tool's arguments name one memory; ``filters`` beside one are refused, as they
    would not narrow it."""
    if memory_id is None and key is None:
        return False
    if filters is not None and filters != Filters():
        raise ValidationError("filters", "tags, category and type narrow query, tag or older_than_days, "
                              "not one memory", "session_id only, beside memory_id or key")
    return True


def _scope(session: str | None) -> ScopeChoice | None:
    """A session named: a query, tag or age selects that session's memories only."""
    return None if session is None else "session"


def versions(engram: Engram, memory_id: str | None, key: str | None) -> dict[str, Any]:
    """The earlier contents, oldest first, of the memory ``memory_id`` (an id, else a key) or
    ``key`` names; raises ``ValidationError`` (on ``versions``, or the argument at fault) or
    ``NotFoundError``, for the door to hand the model as it does. Reads only; changes nothing."""
    return versions_dict(engram.versions(engram.named(memory_id, key, field="versions", names=_NAMES)))


async def aversions(engram: AsyncEngram, memory_id: str | None, key: str | None) -> dict[str, Any]:
    """``versions`` through an ``AsyncEngram``'s reader thread."""
    memory = await engram.named(memory_id, key, field="versions", names=_NAMES)
    return versions_dict(await engram.versions(memory))
