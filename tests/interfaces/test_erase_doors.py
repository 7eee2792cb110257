"""``erase`` at every door: ``engram forget --erase`` (and ``--dry-run``) as a real process, HTTP's
``POST /memory/forget`` body and ``DELETE ?erase=true`` over a real socket, MCP's ``forget`` tool
with the SDK's client. Each leaves the memory's audit rows with ids only, and one agent's erase
never reaches another's memory."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

from mcp import Client

from engram.engine import Engram
from tests.interfaces.conftest import Served
from tests.interfaces.test_mcp import _data, _error_text, _http

SECRET = "Quixotrelliumz"


def _rows(engram: Engram, agent: str, memory_id: str) -> list[tuple[str, bool]]:
    """(action, holds any text) of each audit row about the memory, oldest first."""
    return [(r.action, r.detail is not None or r.memory_key is not None)
            for r in engram.for_agent(agent).audit_of(memory_id)]


def test_cli_erases_and_its_dry_run_lists_only(isolated_home: Path) -> None:
    env = {**os.environ, "ENGRAM_HOME": str(isolated_home), "ENGRAM_EMBEDDINGS__PROVIDER": "none"}

    def cli(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "engram", *args], capture_output=True, text=True, env=env, timeout=120)

    assert cli("remember", f"my hint is {SECRET}", "--key", "hint").returncode == 0
    dry = cli("--json", "forget", "--query", SECRET, "--erase", "--dry-run")
    assert dry.returncode == 0, dry.stderr
    answer = json.loads(dry.stdout)
    assert answer["dry_run"] is True and answer["erased"] is True and [m["key"] for m in answer["removed"]] == ["hint"]
    assert cli("get", "hint").returncode == 0
    hint_id = json.loads(cli("--json", "get", "hint").stdout)["id"]
    done = cli("forget", "hint", "--erase", "--reason", "user asked")
    assert done.returncode == 0 and done.stdout.strip() == f"erased 1 memory: {hint_id}", done.stdout + done.stderr
    # A key made from the content names its words: an erase's answer names the memory by id alone.
    assert cli("remember", f"my pin is {SECRET} 42").returncode == 0
    [pin_id] = [m["id"] for m in json.loads(cli("--json", "list").stdout)]
    erased = cli("--json", "forget", "--query", "pin", "--erase")
    assert erased.returncode == 0, erased.stderr
    assert json.loads(erased.stdout) == {"dry_run": False, "forgotten": [pin_id], "count": 1, "erased": True}
    forgot = cli("--json", "forget", "--query", "nothing-matches-this")
    assert json.loads(forgot.stdout) == {"dry_run": False, "removed": []}, "a plain forget answers as it did"
    trail = cli("--json", "audit", "-n", "10")
    assert trail.returncode == 0, trail.stderr
    assert SECRET not in trail.stdout and '"erased"' in trail.stdout, trail.stdout


def test_http_erases_by_body_and_by_query_parameter(served: Served) -> None:
    ids = {}
    with served.client(served.alice) as http:
        for key in ("one", "two"):
            answer = http.post("/api/v1/memory", json={"content": f"{key} {SECRET}", "key": key})
            assert answer.status_code == 201, answer.text
            ids[key] = served.engram.for_agent("alice").get(key).id
        with served.client(served.bob) as bob:
            theirs = bob.post("/api/v1/memory", json={"content": f"bob {SECRET}", "key": "one"})
            assert theirs.status_code == 201, theirs.text
        would = http.post("/api/v1/memory/forget", json={"query": "one", "erase": True, "dry_run": True})
        assert would.status_code == 200, would.text
        assert [m["key"] for m in would.json()["forgotten"]] == ["one"] and would.json()["erased"] is True
        erased = http.post("/api/v1/memory/forget", json={"query": "one", "erase": True})
        assert erased.status_code == 200, erased.text
        # Named by id alone: the memory whole (its content, its key) is not echoed back.
        assert erased.json() == {"forgotten": [ids["one"]], "count": 1, "dry_run": False, "erased": True}
        gone = http.delete("/api/v1/memory/two", params={"erase": "true", "reason": "asked"})
        assert gone.status_code == 200, gone.text
        assert gone.json() == {"forgotten": [ids["two"]], "count": 1, "reason": "asked", "erased": True}
        bad = http.delete("/api/v1/memory/by-key", params={"key": "x", "erase": "perhaps"})
        assert bad.status_code == 422, bad.text
    for memory_id in ids.values():
        assert _rows(served.engram, "alice", memory_id)[-1] == ("erased", False)
        assert not any(text for _, text in _rows(served.engram, "alice", memory_id))
    bobs = served.engram.for_agent("bob").list()
    assert [m.content for m in bobs] == [f"bob {SECRET}"]
    assert _rows(served.engram, "bob", bobs[0].id) == [("stored", True)]


def test_mcp_forget_tool_erases(served: Served) -> None:
    async def run() -> str:
        async with Client(_http(served, served.alice)) as client:
            _data(await client.call_tool("remember", {"content": f"my hint is {SECRET}", "key": "hint"}))
            memory_id = served.engram.for_agent("alice").get("hint").id
            would = _data(await client.call_tool("forget", {"key": "hint", "erase": True, "dry_run": True}))
            assert would["count"] == 1 and would["erased"] is True and would["dry_run"] is True
            assert _data(await client.call_tool("get", {"key": "hint"}))["key"] == "hint"
            assert would["keys"] == ["hint"], "a dry run lists what it would erase"
            done = _data(await client.call_tool("forget", {"key": "hint", "erase": True, "reason": "asked"}))
            # Named by id alone: a key is often made from the content, and this lands in the transcript.
            assert done == {"forgotten": [memory_id], "count": 1, "dry_run": False, "reason": "asked", "erased": True}
            _data(await client.call_tool("remember", {"content": f"plain {SECRET}", "key": "plain"}))
            plain = _data(await client.call_tool("forget", {"key": "plain"}))
            assert plain["keys"] == ["plain"] and "erased" not in plain, "a plain forget answers as it did"
            refused = _error_text(await client.call_tool("forget", {"key": "x", "erase": "perhaps"}))
            assert "erase" in refused, refused
            return memory_id

    memory_id = asyncio.run(run())
    rows = _rows(served.engram, "alice", memory_id)
    assert rows[-1] == ("erased", False) and not any(text for _, text in rows)
