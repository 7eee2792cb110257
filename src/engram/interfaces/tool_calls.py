"""What an agent's ``forget`` tool does, at every door that gives a model one (MCP, and the Agno,
Pydantic AI and Strands toolsets): exactly one selector in the tool's own argument names
(``memory_id`` — an id, else a key —, ``key``, ``query``, ``tag``, ``older_than_days``), the one
memory resolved as the engine resolves any (``Engram.named``, errors naming the tool's arguments),
then the forget, answered as ``present.tool_forget`` words it. Sync for an ``Engram``, awaited for
an ``AsyncEngram``; the two differ only in the awaits."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from engram.interfaces.present import forget_tool_selection, tool_forget

if TYPE_CHECKING:
    from engram.aio import AsyncEngram
    from engram.engine import Engram

_NAMES = ("memory_id", "key")


def forget(engram: Engram, memory_id: str | None, key: str | None, query: str | None, tag: str | None,
           older_than_days: float | None, reason: str | None, dry_run: bool) -> dict[str, Any]:
    """Forget what the tool's arguments select; raises ``ValidationError`` (on ``forget``, or the
    argument at fault) or ``NotFoundError``, for the door to hand the model as it does."""
    older_than_s = forget_tool_selection(memory_id, key, query, tag, older_than_days)
    one = None if memory_id is None and key is None else engram.named(memory_id, key, field="forget", names=_NAMES)
    removed = engram.forget(one, query=query, tag=tag, older_than_s=older_than_s, reason=reason, dry_run=dry_run)
    return tool_forget(removed, dry_run, reason)


async def aforget(engram: AsyncEngram, memory_id: str | None, key: str | None, query: str | None, tag: str | None,
                  older_than_days: float | None, reason: str | None, dry_run: bool) -> dict[str, Any]:
    """``forget`` through an ``AsyncEngram``'s reader and writer threads."""
    older_than_s = forget_tool_selection(memory_id, key, query, tag, older_than_days)
    one = None
    if memory_id is not None or key is not None:
        one = await engram.named(memory_id, key, field="forget", names=_NAMES)
    removed = await engram.forget(one, query=query, tag=tag, older_than_s=older_than_s, reason=reason,
                                  dry_run=dry_run)
    return tool_forget(removed, dry_run, reason)
