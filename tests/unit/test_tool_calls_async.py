"""The async forget tool helper (``tool_calls.aforget``, used by the Agno, Pydantic AI and Strands
async toolsets) takes what the sync ``tool_calls.forget`` takes: ``erase``, ``session`` and
``filters``, with the same answers and refusals."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from engram.aio import AsyncEngram
from engram.engine import Engram, Filters
from engram.errors import NotFoundError, ValidationError
from engram.interfaces import tool_calls
from engram.store.sqlite import SqliteMemoryStore


def test_async_forget_takes_session_filters_and_erase_as_the_sync_one_does(tmp_path: Path) -> None:
    engine = Engram(SqliteMemoryStore(tmp_path / "memory.db"), agent="alice")
    s1 = engine.for_session("s1")
    session_note = s1.remember("scratch for session one", tags=["scratch"], scope="session", type="experience")
    session_other = s1.remember("scratch of another type", tags=["scratch"], scope="session", type="social")
    agent_note = s1.remember("scratch for the agent", tags=["scratch"], type="experience")

    async def scenario() -> None:
        mem = AsyncEngram(engine)
        # AsyncEngram.forget itself takes the engine's arguments (scope, filters, erase) unchanged.
        bulk = {"tag": "scratch", "scope": "session", "filters": Filters(type="experience"), "dry_run": True}
        assert [m.id for m in await mem.for_session("s1").forget(**bulk, erase=True)] == [session_note.memory.id]
        assert [m.id for m in s1.forget(**bulk)] == [session_note.memory.id]
        # The sync helper's dry run and the async one's answer alike.
        narrowed = {"session": "s1", "filters": Filters(type="experience")}
        sync_dry = tool_calls.forget(engine, None, None, None, "scratch", None, None, True, **narrowed)
        async_dry = await tool_calls.aforget(mem, None, None, None, "scratch", None, None, True, **narrowed)
        assert async_dry == sync_dry and async_dry["forgotten"] == [session_note.memory.id]
        # Beside one memory's id, filters are refused as the sync helper refuses them.
        with pytest.raises(ValidationError) as refused:
            await tool_calls.aforget(mem, agent_note.memory.id, None, None, None, None, None, False,
                                     filters=Filters(type="experience"))
        assert refused.value.field == "filters"
        erased = await tool_calls.aforget(mem, None, None, None, "scratch", None, "done", False, True, **narrowed)
        assert erased["erased"] is True and erased["forgotten"] == [session_note.memory.id]
        assert "keys" not in erased
        with pytest.raises(NotFoundError):
            await mem.get(session_note.memory.id)
        # The session's other memory (another type) and the agent's own (another scope) stay.
        assert (await mem.get(session_other.memory.id)).content == "scratch of another type"
        assert (await mem.get(agent_note.memory.id)).content == "scratch for the agent"
        await mem.close()

    asyncio.run(scenario())
