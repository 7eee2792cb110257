"""A framework adapter's read for a user (or namespace) whose agent has no database yet, in a
home with one database per agent, answers empty and makes none; its first write makes it.

Review: each adapter's read took ``Engram.for_agent(agent)``, the view that opens the agent's
database to write, so ADK's ``search_memory``, Agno's ``recall``/``versions``, mem0's ``get_all``/
``search`` and LangGraph's ``get``/``search`` for a user who had stored nothing made
``agents/<agent>/memory.db``, which the operator's backups, maintenance and sync then took for a real
agent's. They take ``for_agent(..., reading=True)`` now, as an HTTP GET does."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from engram.aio import AsyncEngram
from engram.engine import Engram


def _files(home: Path) -> list[str]:
    return sorted(str(path.relative_to(home)) for path in home.rglob("*"))


@pytest.fixture
def engram(tmp_path: Path) -> Iterator[Engram]:
    # Full text only: the files are what is under test, not the model.
    with Engram.from_settings(home=tmp_path / "home", agent="app", per_agent_databases=True,
                              embeddings={"provider": "none"}) as engram:
        engram.remember("the application's own note")
        yield engram


def _database_of(engram: Engram, agent: str) -> Path:
    assert engram.settings is not None
    return engram.settings.database_path(agent)


def test_adk_search_memory_of_a_new_user_makes_no_database(engram: Engram) -> None:
    pytest.importorskip("google.adk", reason="the google-adk extra is not installed")
    from engram.integrations.google_adk import EngramMemoryService

    service = EngramMemoryService(engram)
    home, before = engram.settings.home, _files(engram.settings.home)  # type: ignore[union-attr]
    found = asyncio.run(service.search_memory(app_name="shop", user_id="nobody", query="the note"))
    assert found.memories == []
    assert _files(home) == before
    assert not _database_of(engram, service.agent_for("shop", "nobody")).exists()


@pytest.mark.parametrize("asynchronous", [False, True], ids=["sync", "async"])
def test_agno_reads_of_a_new_user_make_no_database(engram: Engram, asynchronous: bool) -> None:
    pytest.importorskip("agno", reason="the agno extra is not installed")
    from agno.exceptions import RetryAgentRun
    from agno.run import RunContext

    from engram.integrations.agno import EngramTools

    tools = EngramTools(AsyncEngram(engram) if asynchronous else engram, per_user=True)
    run = RunContext(run_id="r1", session_id="s1", user_id="nobody")
    home, before = engram.settings.home, _files(engram.settings.home)  # type: ignore[union-attr]
    recall = (lambda: asyncio.run(tools.arecall("the note", run_context=run))) if asynchronous else (
        lambda: tools.recall("the note", run_context=run))
    versions = (lambda: asyncio.run(tools.aversions(key="note", run_context=run))) if asynchronous else (
        lambda: tools.versions(key="note", run_context=run))
    assert json.loads(recall())["results"] == []
    with pytest.raises(RetryAgentRun, match="not found"):  # as for a key this user's database does not hold
        versions()
    assert _files(home) == before
    tools.remember("nobody likes tea", run_context=run)
    assert _database_of(engram, "agno:nobody").is_file()


def test_mem0_reads_of_a_new_user_make_no_database(engram: Engram) -> None:
    from engram.compat.mem0 import Memory

    memory = Memory(engram)
    home, before = engram.settings.home, _files(engram.settings.home)  # type: ignore[union-attr]
    assert memory.get_all(user_id="nobody") == {"results": []}
    assert memory.search("the note", user_id="nobody") == {"results": []}
    assert _files(home) == before
    memory.add("nobody likes tea", user_id="nobody", infer=False)
    assert _database_of(engram, "nobody").is_file()


def test_langgraph_reads_of_a_new_namespace_make_no_database(engram: Engram) -> None:
    pytest.importorskip("langgraph", reason="the langgraph extra is not installed")
    from engram.integrations.langgraph import EngramStore

    store = EngramStore(engram, agent_from_namespace=1)
    home, before = engram.settings.home, _files(engram.settings.home)  # type: ignore[union-attr]
    assert store.get(("users", "nobody"), "prefs") is None
    assert store.search(("users", "nobody")) == []
    assert _files(home) == before
    store.put(("users", "nobody"), "prefs", {"text": "nobody likes tea"})
    assert _database_of(engram, "lg:nobody").is_file()
