"""ClawCode (reference 002) behaviours, checked at the doors a ClawCode user reaches: the ``engram``
command on a real SQLite file, HTTP over a socket, MCP with the SDK client."""

from __future__ import annotations

import json
from pathlib import Path

from tests.unit.test_cli import engram


def test_cli_forget_keeps_the_reason_in_the_audit_trail(isolated_home: Path) -> None:
    # ClawCode: forget takes {"memory_id": ..., "reason": "Outdated preference"}, and
    # "5. Log deletion for audit trail".
    assert engram(isolated_home, "remember", "User prefers Perl", "--key", "lang").returncode == 0
    gone = engram(isolated_home, "--json", "forget", "lang", "--reason", "Outdated preference")
    assert gone.returncode == 0, gone.stderr
    assert [m["key"] for m in json.loads(gone.stdout)["removed"]] == ["lang"]
    trail = json.loads(engram(isolated_home, "--json", "audit", "--action", "forgotten").stdout)
    assert [(e["memory_key"], e["reason"]) for e in trail] == [("lang", "Outdated preference")]


def _stdio_session(home: Path, extra_env: dict[str, str] | None = None) -> None:
    import asyncio

    from mcp import Client

    from tests.interfaces.test_mcp import _data, _stdio

    params = _stdio(home, "default")
    params.env.update(extra_env or {})

    async def run() -> None:
        async with Client(params) as client:
            _data(await client.call_tool("remember", {"content": "The user prefers Python", "key": "lang"}))
            found = _data(await client.call_tool("recall", {"query": "which language does the user prefer"}))
            assert found["results"]
            _data(await client.call_tool("recall", {"query": "quantum chromodynamics"}))

    asyncio.run(run())


def test_mcp_writes_and_recalls_are_in_the_audit_trail_with_origin_mcp(tmp_path: Path) -> None:
    # ClawCode: "Audit Log: Track all memory access and modifications"; "Search Queries: Log
    # queries and results".
    _stdio_session(tmp_path)
    trail = json.loads(engram(tmp_path, "--json", "audit").stdout)
    assert {(e["action"], e["origin"]) for e in trail} == {("stored", "mcp"), ("recalled", "mcp")}
    reads = [e["detail"] for e in trail if e["action"] == "recalled"]
    assert [r["query"] for r in reads] == ["quantum chromodynamics", "which language does the user prefer"]
    assert reads[0]["results"] == [] and reads[1]["results"][0]["key"] == "lang"
    assert reads[1]["results"][0]["score"] > 0
    # The CLI's own recalls are recorded as the CLI's.
    assert engram(tmp_path, "recall", "python").returncode == 0
    newest = json.loads(engram(tmp_path, "--json", "audit", "--action", "recalled", "-n", "1").stdout)[0]
    assert newest["origin"] == "cli" and newest["detail"]["query"] == "python"


def test_the_read_trail_can_be_switched_off(tmp_path: Path) -> None:
    _stdio_session(tmp_path, {"ENGRAM_LIFECYCLE__AUDIT_READS": "false"})
    trail = json.loads(engram(tmp_path, "--json", "audit").stdout)
    assert [e["action"] for e in trail] == ["stored"]
