"""Each named awkward content (tests/awkward_contents.py) round-trips byte for byte through every
door with real clients: HTTP over a socket (store, get by id and by key, list, search, update and
versions, history, export imported into a second server), MCP over HTTP and over a stdio
subprocess (both tool families), and the CLI (stdin, ``--json`` get and list, snapshot, memory
folder, mem0 and basic-memory exports imported into a fresh home, ``engram sync`` of the home's
own memory folder, and history). Each door's test walks the whole list and reports every content
that changed, by name. A summary no store can hold is refused by the CLI with exit 2 naming it,
and MCP keeps optional text arguments that look like JSON as text."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from engram.engine import Engram
from engram.interfaces.cli.app import app
from tests.awkward_contents import AWKWARD, MAX_CHARS, ONE_MB_LINE
from tests.cli_in_process import runner
from tests.interfaces.conftest import Served, serving
from tests.interfaces.test_mcp import _data, _http, _stdio


def _items(body: Any) -> list[dict[str, Any]]:
    return body if isinstance(body, list) else body["memories"]


def test_http_round_trip(tmp_path: Path) -> None:
    changed: list[str] = []
    with serving(tmp_path / "one") as served, served.client(served.alice) as client:
        for i, (name, text) in enumerate(AWKWARD.items()):
            stored = client.post("/api/v1/memory", json={"content": text, "key": f"k{i}", "metadata": {"v": text}})
            assert stored.status_code == 201, (name, stored.text)
            reads = [client.get(f"/api/v1/memory/{stored.json()['memory_id']}").json(), client.get(f"/api/v1/memory/k{i}").json(),
                     client.get("/api/v1/memory/by-key", params={"key": f"k{i}"}).json()]
            if any((r["content"], r["metadata"]) != (text, {"v": text}) for r in reads):
                changed.append(f"{name}: get")
            found = client.get("/api/v1/memory/search", params={"q": text[:500]})
            assert found.status_code == 200, (name, found.text)
            if any(h["memory"]["content"] != AWKWARD[list(AWKWARD)[int(h["memory"]["key"][1:])]] for h in found.json()["hits"]):
                changed.append(f"{name}: search")
            assert client.patch(f"/api/v1/memory/k{i}", json={"content": "changed"}).status_code == 200
            if [v["content"] for v in client.get(f"/api/v1/memory/k{i}/versions").json()["versions"]] != [text]:
                changed.append(f"{name}: versions")
            assert client.patch(f"/api/v1/memory/k{i}", json={"content": text}).status_code == 200
            assert client.post(f"/api/v1/history/web:{i}", json={"role": "user", "content": text,
                                                                 "metadata": {"v": text}}).status_code == 201
            said = _messages(client.get(f"/api/v1/history/web:{i}").json())[-1]
            if (said["content"], said["metadata"]) != (text, {"v": text}):
                changed.append(f"{name}: history")
        listed = {m["key"]: m["content"] for m in _items(client.get("/api/v1/memory", params={"limit": 100}).json())}
        changed += [f"{name}: list" for i, (name, text) in enumerate(AWKWARD.items()) if listed.get(f"k{i}") != text]
        snapshot = client.get("/api/v1/export")
        assert snapshot.status_code == 200
    with serving(tmp_path / "two") as other, other.client(other.alice) as client:
        imported = client.post("/api/v1/import", content=snapshot.content, headers={"Content-Type": "application/json"})
        assert imported.status_code == 200, imported.text
        for i, (name, text) in enumerate(AWKWARD.items()):
            back = client.get(f"/api/v1/memory/k{i}").json()
            if (back["content"], back["metadata"]) != (text, {"v": text}):
                changed.append(f"{name}: export and import")
    assert changed == []


def _messages(body: Any) -> list[dict[str, Any]]:
    return body if isinstance(body, list) else body["messages"]


async def _mcp_round_trip(client: Client, changed: list[str], door: str) -> None:
    for i, (name, text) in enumerate(AWKWARD.items()):
        for tool, key, args in (("remember", f"r{i}", {"content": text, "key": f"r{i}"}),
                                ("memory_store", f"s{i}", {"content": text, "key": f"s{i}"})):
            assert not (await client.call_tool(tool, args)).is_error, (door, tool, name)
            if _data(await client.call_tool("get", {"memory_id": key}))["content"] != text:
                changed.append(f"{name}: {door} {tool}")
        for hit in _data(await client.call_tool("recall", {"query": text[:500]}))["results"]:
            if hit["content"] not in AWKWARD.values():
                changed.append(f"{name}: {door} recall")


def test_mcp_round_trip_over_http(served: Served) -> None:
    changed: list[str] = []

    async def run() -> None:
        async with Client(_http(served, served.alice)) as client:
            await _mcp_round_trip(client, changed, "http")

    asyncio.run(run())
    assert changed == []


def test_mcp_round_trip_over_stdio(tmp_path: Path) -> None:
    changed: list[str] = []

    async def run() -> None:
        async with Client(_stdio(tmp_path, "alice")) as client:
            await _mcp_round_trip(client, changed, "stdio")

    asyncio.run(run())
    assert changed == []


def _cli(home: Path, *args: str, stdin: bytes | None = None) -> str:
    env = {"ENGRAM_EMBEDDINGS__PROVIDER": "none", "ENGRAM_MAX_CONTENT_CHARS": str(MAX_CHARS)}
    done = runner.invoke(app, ["--home", str(home), *args], input=stdin, env=env, catch_exceptions=False)
    assert done.exit_code == 0, (args, done.output)
    return done.stdout


@pytest.mark.parametrize("name", [*AWKWARD, "one mb line"])
def test_cli_round_trip(tmp_path: Path, name: str) -> None:
    text = AWKWARD.get(name, ONE_MB_LINE)
    home = tmp_path / "home"
    _cli(home, "remember", "-", "--key", "k1", stdin=text.encode())
    assert json.loads(_cli(home, "--json", "get", "k1"))["content"] == text
    assert [m["content"] for m in _items(json.loads(_cli(home, "--json", "list")))] == [text]
    for fmt, target in (("snapshot", tmp_path / "snapshot.json"), ("markdown", tmp_path / "md"),
                        ("yaml", tmp_path / "yaml"), ("json", tmp_path / "json"), ("mem0", tmp_path / "mem0.json"),
                        ("basic-memory", tmp_path / "notes")):
        _cli(home, "export", "--format", fmt, str(target))
        _cli(tmp_path / f"from-{fmt}", "import", str(target))
        with Engram.from_settings(home=tmp_path / f"from-{fmt}", files={"enabled": False},
                                  max_content_chars=MAX_CHARS) as imported:
            assert [m.content for m in imported.list()] == [text], fmt
    _cli(home, "sync")  # the home's own memory folder, written as the memory was stored, read back
    assert [m["content"] for m in _items(json.loads(_cli(home, "--json", "list")))] == [text]
    _cli(home, "history", "append", "chat:1", "--messages", "-",
         stdin=json.dumps([{"role": "user", "content": text}]).encode())
    assert _messages(json.loads(_cli(home, "--json", "history", "show", "chat:1")))[-1]["content"] == text
    if len(text) < 100_000:  # a command line holds about 128 KiB
        _cli(home, "history", "summary", "chat:1", "--set", text)
        assert json.loads(_cli(home, "--json", "history", "summary", "chat:1"))["summary"] == text


def test_cli_refuses_an_undecodable_summary_with_exit_2(tmp_path: Path) -> None:
    # Bytes that are not UTF-8 reach Python as lone surrogates: the summary failed to encode
    # (exit 1, "internal error: UnicodeEncodeError") instead of being refused naming it.
    env = {k: v for k, v in os.environ.items() if not k.startswith("ENGRAM_")}
    env["ENGRAM_HOME"] = str(tmp_path)
    done = subprocess.run([sys.executable, "-m", "engram", "history", "summary", "chat:1", "--set", b"bad \xff byte"],
                          capture_output=True, env=env, timeout=120)
    assert done.returncode == 2, done.stderr
    # Named as the option typed, as every other CLI error on an option's value is.
    assert done.stderr.startswith(b"error: --set: ") and b"surrogate" in done.stderr and b"Traceback" not in done.stderr


# Text that parses as JSON other than a string or a number: the SDK read such a value of an
# optional text argument (``str | None``) as the JSON it spells (python-sdk issue 3055), so
# ``update`` refused '{"a": 1}' as content ("Input should be a valid string") and took "null" as
# no content at all, and ``remember`` stored a memory keyed "null" under a key made from its content.
JSON_LOOKING = ['{"a": 1}', "[1, 2]", "null", "true", "[]", "{}"]


def test_mcp_optional_text_arguments_that_look_like_json_are_kept_as_text(served: Served) -> None:
    async def run() -> None:
        async with Client(_http(served, served.alice)) as client:
            for i, text in enumerate(JSON_LOOKING):
                stored = _data(await client.call_tool("remember", {"content": f"keyed {i}", "key": text,
                                                                    "source": text, "related_entity": text}))
                assert stored["key"] == text, (text, stored)
                got = _data(await client.call_tool("get", {"key": text}))
                assert (got["content"], got["source"], got["related_entity"]) == (f"keyed {i}", text, text)
                assert _data(await client.call_tool("get", {"memory_id": text}))["content"] == f"keyed {i}"
                updated = await client.call_tool("update", {"key": text, "content": text})
                assert not updated.is_error, (text, updated.content)
                assert _data(await client.call_tool("get", {"memory_id": stored["memory_id"]}))["content"] == text
                assert _data(await client.call_tool("versions", {"key": text}))["versions"][0]["content"] == f"keyed {i}"
            forgotten = _data(await client.call_tool("forget", {"memory_id": "[]", "reason": "{}"}))
            assert forgotten["count"] == 1

    asyncio.run(run())
