"""A memory's earlier contents at the CLI and MCP doors, as HTTP's ``/versions`` gives them:
``engram versions REF`` (the CLI as a real process on a SQLite home; ``--json`` the HTTP route's
document) and MCP's ``versions`` tool (the SDK's client over streamable HTTP). Oldest first, by id,
key or ``--key``/``key``; an unknown key is not found as ``get`` says it, and one agent never reads
another's versions."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from mcp import Client

from tests.interfaces.conftest import Served
from tests.interfaces.test_key_doors import _json
from tests.interfaces.test_mcp import _data, _error_text, _http
from tests.unit.test_cli import engram


def test_cli_versions_oldest_first_as_http_gives_them(isolated_home: Path) -> None:
    mid = _json(isolated_home, "remember", "the deploy is on Monday", "--key", "deploy")["memory"]["id"]
    unchanged = engram(isolated_home, "--agent", "alice", "versions", "deploy")
    assert unchanged.returncode == 0 and unchanged.stdout == "", unchanged.stdout  # a note, not a row for a script
    assert unchanged.stderr == "deploy has no earlier versions (its content was never changed)\n", unchanged.stderr
    assert _json(isolated_home, "versions", "deploy") == {"versions": []}

    # Markup and a control character are stored text: shown as they are, never obeyed.
    _json(isolated_home, "update", "deploy", "--content", "the deploy is on [bold]Tuesday[/bold]\x07")
    _json(isolated_home, "update", "deploy", "--content", "the deploy is on Wednesday")
    shown = _json(isolated_home, "versions", "--key", "deploy")
    assert [v["content"] for v in shown["versions"]] == ["the deploy is on Monday",
                                                         "the deploy is on [bold]Tuesday[/bold]\x07"]
    assert set(shown["versions"][0]) == {"content", "replaced_at"}
    assert shown["versions"][0]["replaced_at"] <= shown["versions"][1]["replaced_at"]
    assert _json(isolated_home, "versions", mid) == shown  # by id too
    assert _json(isolated_home, "get", "deploy")["versions"] == shown["versions"]  # get --json gives them alike

    table = engram(isolated_home, "--agent", "alice", "versions", "deploy")
    assert table.returncode == 0, table.stderr
    out = table.stdout
    assert "earlier contents of deploy" in out and "[bold]Tuesday[/bold]\\x07" in out and "\x07" not in out
    assert out.index("on Monday") < out.index("Tuesday") and "Wednesday" not in out  # the current content is not a version

    # The engine's own reading, through the same library: what HTTP's route serves.
    from engram.engine import Engram
    from engram.interfaces.http.routes_memory import versions_of

    with Engram.from_settings(home=isolated_home, agent="alice") as eng:
        assert versions_of(eng, "deploy") == shown


def test_cli_versions_unknown_refs_and_other_agents_as_get(isolated_home: Path) -> None:
    _json(isolated_home, "remember", "alice's locker code is 1234", "--key", "locker")
    _json(isolated_home, "update", "locker", "--content", "alice's locker code is 5678")
    for agent, args in (("alice", ("--key", "no-such-key")), ("alice", ("no-such",)), ("bob", ("locker",)),
                        ("bob", ("--key", "locker"))):
        said = engram(isolated_home, "--agent", agent, "get", *args)
        done = engram(isolated_home, "--agent", agent, "versions", *args)
        assert (done.returncode, done.stderr) == (said.returncode, said.stderr), (agent, args, done.stderr)
        assert done.returncode == 3 and "not found" in done.stderr and "1234" not in done.stdout + done.stderr
    both = engram(isolated_home, "--agent", "alice", "versions", "locker", "--key", "locker")
    assert both.returncode == 2 and "versions: got" in both.stderr and "exactly one of ref, --key" in both.stderr
    assert [v["content"] for v in _json(isolated_home, "versions", "locker")["versions"]] == ["alice's locker code is 1234"]


def test_cli_versions_of_an_agent_with_no_database_makes_none(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    monkeypatch.setenv("ENGRAM_PER_AGENT_DATABASES", "true")
    monkeypatch.setenv("ENGRAM_EMBEDDINGS__PROVIDER", "none")
    assert engram(home, "--agent", "alice", "remember", "alice's note", "--key", "note").returncode == 0
    done = engram(home, "--agent", "carol", "versions", "note")  # alice's key: carol holds no such memory
    assert done.returncode == 3 and "not found" in done.stderr, done.stderr
    assert (home / "agents" / "alice").is_dir() and not (home / "agents" / "carol").exists()


def test_mcp_versions_tool(served: Served) -> None:
    async def run() -> None:
        async with Client(_http(served, served.alice)) as alice, Client(_http(served, served.bob)) as bob:
            tool = next(t for t in (await alice.list_tools()).tools if t.name == "versions")
            assert tool.title and tool.annotations.read_only_hint and not tool.annotations.destructive_hint
            mid = _data(await alice.call_tool("remember", {"content": "the boiler code is 1234", "key": "boiler"}))[
                "memory_id"]
            assert _data(await alice.call_tool("versions", {"key": "boiler"})) == {"versions": []}
            await alice.call_tool("update", {"key": "boiler", "content": "the boiler code is 5678"})
            await alice.call_tool("update", {"memory_id": mid, "content": "the boiler code is 9012"})
            got = _data(await alice.call_tool("versions", {"memory_id": mid}))
            assert [v["content"] for v in got["versions"]] == ["the boiler code is 1234", "the boiler code is 5678"]
            assert _data(await alice.call_tool("versions", {"memory_id": "boiler"})) == got  # an id, else a key
            with served.client(served.alice) as c:  # the HTTP route's document, word for word
                assert c.get(f"/api/v1/memory/{mid}/versions").json() == got

            for args in ({}, {"memory_id": mid, "key": "boiler"}):
                text = _error_text(await alice.call_tool("versions", args))
                assert "invalid versions:" in text and "exactly one of memory_id, key" in text, text
            assert "not found" in _error_text(await alice.call_tool("versions", {"key": "no-such-key"}))
            # bob holds neither alice's key nor her id: not found, as get says, and nothing of hers.
            for args in ({"key": "boiler"}, {"memory_id": mid}, {"memory_id": "boiler"}):
                said = _error_text(await bob.call_tool("get", args))
                text = _error_text(await bob.call_tool("versions", args))
                assert "not found" in text and "1234" not in text, text
                assert text.replace("tool versions", "tool get") == said

    asyncio.run(run())
