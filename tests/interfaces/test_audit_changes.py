"""An ``updated`` audit entry names the fields that changed (and keeps the earlier content and
importance when those changed), whichever door made the change: the library, HTTP PATCH over a
real socket, MCP's update with the SDK client, ``engram update`` as a real process; ``engram
audit`` and ``GET /api/v1/audit`` show it, each agent only its own."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from mcp import Client

from tests.interfaces.conftest import Served
from tests.interfaces.test_mcp import _data, _http
from tests.unit.test_cli import engram


def test_library_update_and_supersede_name_what_changed(served: Served) -> None:
    lib = served.engram.for_agent("alice")
    lib.remember("Deploys run on Fridays", key="deploy", tags=["ops"], related_entity="ci")
    lib.update("deploy", clear=["tags"])
    lib.update("deploy", content="Deploys run on Mondays", importance=0.8, related_entity="jenkins")
    lib.remember("Deploys run continuously", key="deploy-now")
    lib.supersede("deploy", "deploy-now")
    newest_first = [e.detail for e in lib.audit_trail(action="updated", memory="deploy")]
    assert [d["changed"] for d in newest_first] == [
        ["valid_until", "superseded_by"], ["content", "importance", "related_entity"], ["tags"]]
    assert newest_first[1]["previous"] == {"content": "Deploys run on Fridays", "importance": 0.5}
    assert newest_first[1]["content"] == "Deploys run on Mondays" and newest_first[2]["previous"] == {}


def test_http_patch_and_mcp_update_are_audited_with_their_changes(served: Served) -> None:
    with served.client(served.alice) as c:
        assert c.post("/api/v1/memory", json={"content": "Deploys run on Fridays", "key": "deploy",
                                              "related_entity": "ci", "tags": ["ops"]}).status_code == 201
        assert c.patch("/api/v1/memory/deploy", json={"related_entity": None}).status_code == 200

    async def run() -> None:
        async with Client(_http(served, served.alice)) as alice:
            _data(await alice.call_tool("update", {"memory_id": "deploy", "source": "wiki", "clear": ["tags"]}))

    asyncio.run(run())
    with served.client(served.alice) as c:
        entries = c.get("/api/v1/audit", params={"action": "updated"}).json()["entries"]
        assert [(e["origin"], e["detail"]["changed"]) for e in entries] == [
            ("mcp", ["tags", "source"]), ("http", ["related_entity"])]
        assert entries[0]["detail"]["previous"] == {} and entries[0]["detail"]["content"] == "Deploys run on Fridays"
    with served.client(served.bob) as c:
        assert c.get("/api/v1/audit", params={"action": "updated"}).json()["entries"] == []


def test_cli_audit_shows_what_an_update_changed(isolated_home: Path) -> None:
    assert engram(isolated_home, "remember", "Deploys run on [bold]Fridays[/bold]", "--key", "deploy", "--tags", "ops",
                  "--entity", "ci").returncode == 0
    assert engram(isolated_home, "update", "deploy", "--clear", "tags", "--importance", "0.7").returncode == 0
    shown = engram(isolated_home, "audit", "--action", "updated")
    assert shown.returncode == 0, shown.stderr
    assert "changed tags, importance: Deploys run on [bold]Fridays[/bold]" in " ".join(shown.stdout.split()), shown.stdout
    (entry,) = json.loads(engram(isolated_home, "--json", "audit", "--action", "updated").stdout)
    assert entry["detail"]["changed"] == ["tags", "importance"] and entry["detail"]["previous"] == {"importance": 0.5}
    other = json.loads(engram(isolated_home, "--agent", "bob", "--json", "audit", "--action", "updated").stdout)
    assert other == []
