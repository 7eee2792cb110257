"""A read in a home with no database yet makes nothing on disk, with one database of every agent
(the default layout) as with one per agent (``tests/lifecycle/test_operator_makes_no_agents_database.py``):
it answers as the empty database would, and the first write makes the database.

Review: in a new home, ``engram -a nobody list`` (recall, get, count, stats, stats --all-agents,
history list, export, conflicts) and the launch of ``engram -a nobody mcp`` made ``~/.engram/``, its
``memory.db`` and its memory folder for a user who had only looked."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

import pytest

from engram.errors import NotFoundError
from tests.cli_in_process import app, cli_output, runner

FULL_TEXT = {"ENGRAM_EMBEDDINGS__PROVIDER": "none"}  # the files are under test, not the model


def _files(home: Path) -> list[str]:
    """Everything under ``home`` (nothing when it does not exist), as paths inside it."""
    return sorted(str(path.relative_to(home)) for path in home.rglob("*")) if home.exists() else []


@pytest.mark.parametrize("per_agent", [False, True], ids=["one-database", "per-agent"])
def test_cli_reads_in_a_new_home_answer_empty_and_make_nothing_until_the_first_write(tmp_path: Path, per_agent: bool) -> None:
    home = tmp_path / "home"
    env = {**FULL_TEXT, "ENGRAM_PER_AGENT_DATABASES": str(per_agent).lower()}
    database = home / "agents" / "nobody" / "memory.db" if per_agent else home / "memory.db"
    nobody = ("--agent", "nobody", "--json")
    reads: list[tuple[tuple[str, ...], object]] = [
        (("list",), []),
        (("recall", "hello"), []),
        (("count",), {"count": 0}),
        (("history", "list"), []),
        (("export",), []),
        (("conflicts",), []),  # made an empty memory folder (Folder made its root)
    ]
    for args, empty in reads:
        shown = json.loads(cli_output(home, *nobody, *args, env=env))
        answer = shown["hits"] if args[0] == "recall" else shown["memories"] if args[0] == "export" else shown
        assert answer == empty, args
        assert _files(home) == [], args
    for args in (("stats",), ("stats", "--all-agents")):
        shown = json.loads(cli_output(home, *nobody, *args, env=env))
        assert (shown["memories"], shown["location"]) == (0, str(database)), args
        assert _files(home) == [], args
    cli_output(home, *nobody, "export", str(tmp_path / "nobody.json"), env=env)
    assert json.loads(cli_output(home, "--json", "conflicts", "--all-agents", env=env)) == []
    assert _files(home) == []
    missing = runner.invoke(app, ["--home", str(home), *nobody, "get", "somekey"], env=env)
    assert isinstance(missing.exception, NotFoundError), missing.output
    assert _files(home) == []
    # The first write makes the database, and the reads then answer from it.
    cli_output(home, "--agent", "nobody", "remember", "nobody's first note", "--key", "first", env=env)
    assert database.is_file()
    assert [m["content"] for m in json.loads(cli_output(home, *nobody, "list", env=env))] == ["nobody's first note"]
    cli_output(home, "--agent", "nobody", "sync", env=env)  # a write: it makes the memory folder
    assert (home / "memory").is_dir()


def test_mcp_over_stdio_in_a_new_home_makes_nothing_until_its_first_write(tmp_path: Path) -> None:
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    from tests.interfaces.test_mcp import _data

    home = tmp_path / "home"
    env = {k: v for k, v in os.environ.items() if not k.startswith("ENGRAM_")}
    env.update(ENGRAM_HOME=str(home), **FULL_TEXT)
    launch = StdioServerParameters(command=sys.executable, env=env, args=[
        "-c", "from engram.interfaces.cli.app import main; main()", "--agent", "nobody", "mcp"])

    async def run() -> None:
        async with Client(launch) as nobody:
            assert _data(await nobody.call_tool("recall", {"query": "hello"}))["results"] == []
            assert _data(await nobody.call_tool("list", {}))["memories"] == []
            assert "not found" in (await nobody.call_tool("get", {"key": "somekey"})).content[0].text
            assert _files(home) == []
            assert _data(await nobody.call_tool("remember", {"content": "nobody's first note"}))["action"] == "created"
            assert (home / "memory.db").is_file()
            assert [m["content"] for m in _data(await nobody.call_tool("list", {}))["memories"]] == ["nobody's first note"]

    asyncio.run(run())
