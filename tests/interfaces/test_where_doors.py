"""``where`` (metadata conditions in mem0's filter language, ``engram.where``) at every door: the
CLI as a real process (``--where`` JSON), the HTTP API over a real socket (a JSON query parameter),
MCP with the SDK's client over streamable HTTP (an object argument). Each reaches the engine, which
reads it and names the place it cannot read (``where.priority.gte``) and what is allowed there."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from mcp import Client

from tests.interfaces.conftest import Served
from tests.interfaces.test_mcp import _data, _error_text, _http

ROWS = {"urgent": {"priority": 3, "status": "open"}, "later": {"priority": 1, "status": "open"},
        "done": {"priority": 5, "status": "closed"}, "word": {"priority": "3"}}
AT_LEAST_2 = {"priority": {"gte": 2}}
OPEN_AND_2 = {"AND": [{"status": "open"}, {"priority": {"gte": 2}}]}
BAD = {"priority": {"gte": True}}  # a bool is no number to compare with
# Each refused value is spelt back as the JSON the caller wrote (true, null), not as Python's True, None.
SPELT = ((BAD, "got true"), ({"OR": [None]}, "got null"), ({"a": {"in": {"x": None}}}, 'got {"x": null}'),
         ({"a": {"lt": [False]}}, "got [false]"), ({"a": {"bogus": 1}}, 'unknown operator "bogus"'))
PYTHON = ("True", "False", "None", "'")


def _cli(home: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "ENGRAM_HOME": str(home), "COLUMNS": "200"}
    return subprocess.run([sys.executable, "-m", "engram", *args], capture_output=True, text=True, env=env, timeout=120)


def test_cli_list_and_recall_take_where_as_json(isolated_home: Path) -> None:
    def ok(*args: str) -> Any:
        done = _cli(isolated_home, "--json", *args)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)

    for key, metadata in ROWS.items():
        ok("remember", f"task {key} for the release", "--key", key, "--metadata", json.dumps(metadata))
    assert sorted(m["key"] for m in ok("list", "--where", json.dumps(AT_LEAST_2))) == ["done", "urgent"]
    assert [m["key"] for m in ok("list", "--where", json.dumps(OPEN_AND_2))] == ["urgent"]
    # --meta compares text forms (3 and "3" alike); --where keeps the type.
    assert sorted(m["key"] for m in ok("list", "--meta", "priority=3")) == ["urgent", "word"]
    assert [m["key"] for m in ok("list", "--where", '{"priority": 3}')] == ["urgent"]
    hits = ok("recall", "task for the release", "--where", json.dumps(OPEN_AND_2))["hits"]
    assert [h["memory"]["key"] for h in hits] == ["urgent"]
    for where, place in ((json.dumps(BAD), "where.priority.gte"), ('{"priority": ', "where"),
                         ('{"priority": {"like": 1}}', "where.priority")):
        for command in (("list",), ("recall", "task")):
            bad = _cli(isolated_home, *command, "--where", where)
            assert bad.returncode == 2 and f"{place}:" in bad.stderr, (command, where, bad.stderr)
    assert "a number or a string" in _cli(isolated_home, "list", "--where", json.dumps(BAD)).stderr
    assert "icontains" in _cli(isolated_home, "list", "--where", '{"priority": {"like": 1}}').stderr
    for where, spelt in SPELT:
        said = _cli(isolated_home, "list", "--where", json.dumps(where)).stderr
        assert spelt in said and not any(p in said for p in PYTHON), (where, said)
    said = _cli(isolated_home, "list", "--where", "[1, null]").stderr
    assert "where: got [1, null]" in said and "an object" in said, said


def test_http_list_and_search_take_where_as_a_json_query_parameter(served: Served) -> None:
    with served.client(served.alice) as c:
        for key, metadata in ROWS.items():
            assert c.post("/api/v1/memory", json={"content": f"task {key} for the release", "key": key,
                                                  "metadata": metadata}).status_code == 201
        listed = c.get("/api/v1/memory", params={"where": json.dumps(AT_LEAST_2)})
        assert listed.status_code == 200, listed.text
        assert sorted(m["key"] for m in listed.json()["memories"]) == ["done", "urgent"]
        assert listed.json()["total"] == 2
        found = c.get("/api/v1/memory/search", params={"q": "task for the release", "where": json.dumps(OPEN_AND_2)})
        assert [h["memory"]["key"] for h in found.json()["hits"]] == ["urgent"], found.text
        for path, params in (("/api/v1/memory", {}), ("/api/v1/memory/search", {"q": "task"})):
            for where, place, allowed in ((json.dumps(BAD), "where.priority.gte", "a number or a string"),
                                          ('{"priority": ', "where", "JSON object"),
                                          ('{"priority": {"like": 1}}', "where.priority", "icontains")):
                bad = c.get(path, params={**params, "where": where})
                assert bad.status_code == 422 and bad.json()["field"] == place, (path, where, bad.text)
                assert allowed in json.dumps(bad.json()["allowed"]), bad.text
            for where, spelt in SPELT:
                said = c.get(path, params={**params, "where": json.dumps(where)}).text
                assert spelt.replace('"', '\\"') in said and not any(p in said for p in PYTHON), (where, said)


def test_mcp_recall_and_list_take_where_as_an_object(served: Served) -> None:
    async def run() -> None:
        async with Client(_http(served, served.alice)) as alice:
            schemas = {t.name: t.input_schema for t in (await alice.list_tools()).tools}
            for tool in ("recall", "list"):
                assert "object" in json.dumps(schemas[tool]["properties"]["where"]), schemas[tool]["properties"]["where"]
            for key, metadata in ROWS.items():
                _data(await alice.call_tool("remember", {"content": f"task {key} for the release", "key": key,
                                                         "context": metadata}))  # kept as its metadata
            listed = _data(await alice.call_tool("list", {"where": AT_LEAST_2}))
            assert sorted(m["key"] for m in listed["memories"]) == ["done", "urgent"]
            found = _data(await alice.call_tool("recall", {"query": "task for the release", "where": OPEN_AND_2}))
            assert [r["context"]["key"] for r in found["results"]] == ["urgent"]
            for tool, args in (("list", {}), ("recall", {"query": "task"})):
                refused = _error_text(await alice.call_tool(tool, {**args, "where": BAD}))
                assert "where.priority.gte" in refused and "a number or a string" in refused, refused
                refused = _error_text(await alice.call_tool(tool, {**args, "where": {"priority": {"like": 1}}}))
                assert "where.priority" in refused and "icontains" in refused, refused
                for where, spelt in SPELT:
                    refused = _error_text(await alice.call_tool(tool, {**args, "where": where}))
                    assert spelt in refused and not any(p in refused for p in PYTHON), (where, refused)
                # Not an object: refused by the engine in the words of the other doors (and of the
                # other places in where), not as pydantic's "valid dictionary"; text is read as JSON.
                refused = _error_text(await alice.call_tool(tool, {**args, "where": [1, None]}))
                assert "invalid where: got [1, null] (allowed: an object of metadata keys" in refused, refused
                refused = _error_text(await alice.call_tool(tool, {**args, "where": "priority >= 2"}))
                assert "invalid where: malformed JSON" in refused and '{"priority": {"gte": 2}}' in refused, refused
                found = _data(await alice.call_tool(tool, {**args, "where": json.dumps(OPEN_AND_2)}))
                assert "urgent" in json.dumps(found), found

    asyncio.run(run())


def test_where_never_reaches_another_agents_memories(served: Served) -> None:
    # A condition is on the metadata only: OR and NOT widen within the agent's own scopes, never beyond.
    with served.client(served.alice) as alice:
        assert alice.post("/api/v1/memory", json={"content": "alice's secret plan", "key": "secret",
                                                  "metadata": {"owner": "alice", "priority": 9}}).status_code == 201
    widest = [{"owner": "*"}, {"OR": [{"owner": "alice"}, {"NOT": [{"owner": "alice"}]}]},
              {"NOT": [{"priority": {"gte": 0}}]}, {"OR": [{"priority": {"gte": 0}}, {"priority": {"nin": [9]}}]}]
    with served.client(served.bob) as bob:
        for where in widest:
            listed = bob.get("/api/v1/memory", params={"where": json.dumps(where)})
            assert listed.status_code == 200 and listed.json()["memories"] == [] and listed.json()["total"] == 0, where
            found = bob.get("/api/v1/memory/search", params={"q": "secret plan", "where": json.dumps(where)})
            assert found.status_code == 200 and found.json()["hits"] == [], where
    with served.client(served.alice) as alice:  # the same conditions do find it for its owner
        seen = alice.get("/api/v1/memory", params={"where": json.dumps(widest[1])}).json()["memories"]
        assert [m["key"] for m in seen] == ["secret"]
