"""One database per agent (``per_agent_databases``) in a process acting for several agents: each
agent's memories and conversations land in that agent's own file, as its own process opens it.

Before, ``for_agent`` stood every agent's view on the file of the agent the process opened: a
server started as alice stored bob's memories (sent with bob's token) in alice's database, where
``engram -a bob`` never saw them and alice's backups held them."""

from __future__ import annotations

import math
import sqlite3
from pathlib import Path
from typing import Any

import httpx
import pytest

from engram.config import load_settings
from engram.engine import Engram
from engram.errors import ValidationError
from engram.interfaces.http.app import create_app
from engram.interfaces.http.serve import BackgroundServer
from engram.interfaces.settings import ServerSettings
from engram.root import open_tokens


def _open(home: Path, agent: str) -> Engram:
    # Full text only: the files are what is under test, not the model.
    return Engram.from_settings(home=home, agent=agent, per_agent_databases=True, embeddings={"provider": "none"})


def _agents_in(db: Path) -> set[str]:
    with sqlite3.connect(db) as conn:
        memories = {agent for (agent,) in conn.execute("SELECT DISTINCT agent FROM memories")}
        conversations = {agent for (agent,) in conn.execute("SELECT DISTINCT agent FROM history_messages")}
    return memories | conversations


def test_another_agents_view_stores_in_that_agents_own_file(tmp_path: Path) -> None:
    with _open(tmp_path, "alice") as alice:
        alice.remember("alice keeps the release notes")
        bob = alice.for_agent("bob", "s1")
        bob.remember("bob reviews the database schema", key="schema", scope="agent")
        bob.history.append("cli:c1", "user", "bob asks about the schema")
        assert [m.content for m in bob.list()] == ["bob reviews the database schema"]
        assert [m.content for m in alice.list()] == ["alice keeps the release notes"]
    assert bob.closed  # closed with the engine that opened it, its writes committed first
    assert _agents_in(tmp_path / "agents" / "alice" / "memory.db") == {"alice"}
    assert _agents_in(tmp_path / "agents" / "bob" / "memory.db") == {"bob"}
    with _open(tmp_path, "bob") as own:  # bob's own process finds what alice's stored for bob
        assert own.get("schema").content == "bob reviews the database schema"
        assert own.history.conversations() == ["cli:c1"]


def test_an_agents_database_opening_holds_up_neither_other_agents_nor_opens_twice(tmp_path: Path) -> None:
    """While bob's file opens (its integrity check can take seconds on a large file), carol's
    requests are answered; a second request of bob's waits for the same opening."""
    import threading

    with _open(tmp_path, "alice") as alice:
        databases = alice.agent_databases
        assert databases is not None
        real_open, opened, bob_may_finish = databases._open_engine, [], threading.Event()

        def slow_for_bob(agent: str) -> Engram:
            opened.append(agent)
            if agent == "bob":
                assert bob_may_finish.wait(30)
            return real_open(agent)

        databases._open_engine = slow_for_bob
        bobs: list[Engram] = []
        first_bob = threading.Thread(target=lambda: bobs.append(alice.for_agent("bob")))
        first_bob.start()
        while "bob" not in opened:
            first_bob.join(0.01)
        second_bob = threading.Thread(target=lambda: bobs.append(alice.for_agent("bob")))
        second_bob.start()
        carols: list[Engram] = []
        carol = threading.Thread(target=lambda: carols.append(alice.for_agent("carol")))
        carol.start()
        carol.join(20)  # (a bound, not a speed: before, carol waited for bob's opening, forever here)
        assert len(carols) == 1 and bobs == []  # carol answered while bob's file is still opening
        carols[0].remember("carol's memory")
        bob_may_finish.set()
        first_bob.join(30)
        second_bob.join(30)
        assert opened == ["bob", "carol"]
        assert len(bobs) == 2 and bobs[0].writes is bobs[1].writes
    assert (tmp_path / "agents" / "bob" / "memory.db").is_file()


def test_a_bad_agent_name_is_refused_before_it_names_a_folder(tmp_path: Path) -> None:
    with _open(tmp_path, "alice") as alice:
        with pytest.raises(ValidationError) as refused:
            alice.for_agent("../bob")
        assert refused.value.field == "agent"
    assert sorted(p.name for p in (tmp_path / "agents").iterdir()) == ["alice"]


def test_a_server_stores_each_tokens_memories_in_its_agents_own_file(tmp_path: Path) -> None:
    engram = _open(tmp_path, "alice")
    tokens = open_tokens(load_settings(home=tmp_path, agent="alice", per_agent_databases=True), engram.backend)
    try:
        bob_token, _ = tokens.create("bob", "test")
        alice_token, _ = tokens.create("alice", "test")
        server = BackgroundServer(create_app(engram, tokens, ServerSettings(mcp_tools="both"))).start()
        try:
            for token, content in ((bob_token, "bob's deploy runs on Fridays"), (alice_token, "alice's runs daily")):
                with httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {token}"}, timeout=30) as http:
                    made = http.post("/api/v1/memory", json={"content": content})
                    assert made.status_code == 201, made.text
            with httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {bob_token}"}, timeout=30) as http:
                listed = http.get("/api/v1/memory").json()
            assert [m["content"] for m in listed["memories"]] == ["bob's deploy runs on Fridays"]
        finally:
            server.stop()
    finally:
        tokens.close()
        engram.close()
    assert _agents_in(tmp_path / "agents" / "alice" / "memory.db") == {"alice"}
    with _open(tmp_path, "bob") as bob:
        assert [m.content for m in bob.list()] == ["bob's deploy runs on Fridays"]



def test_a_servers_upkeep_covers_every_agents_database_it_opened(tmp_path: Path) -> None:
    from engram.root import server_upkeep

    with _open(tmp_path, "alice") as alice:
        alice.for_agent("bob").remember("bob's memory")
        upkeep = server_upkeep(alice, alice.settings)
        alice.for_agent("carol").remember("carol's, opened after the upkeep was made")
        upkeep.run()
    for agent in ("alice", "bob", "carol"):  # each database's pass recorded beside it
        assert (tmp_path / "agents" / agent / "memory.db.maintenance.json").is_file(), agent


def test_the_operators_maintain_covers_every_agents_database(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.importers.test_import_cli import as_json

    for agent in ("alice", "bob"):
        with _open(tmp_path, agent) as engram:
            engram.remember(f"{agent}'s memory")
    monkeypatch.setenv("ENGRAM_PER_AGENT_DATABASES", "true")
    monkeypatch.setenv("ENGRAM_EMBEDDINGS__PROVIDER", "none")
    shown = as_json(tmp_path, "maintain", "--job", "hygiene", "--force")
    # Every agent's database, and none made for the default agent nobody used (the run names no agent).
    assert shown["store_wide"] and sorted(d["database_of"] for d in [shown, *shown["agent_databases"]]) == ["alice", "bob"]
    assert not (tmp_path / "agents" / "default").exists()
    for agent in ("alice", "bob"):  # each database's pass recorded beside it
        assert (tmp_path / "agents" / agent / "memory.db.maintenance.json").is_file(), agent
    one = as_json(tmp_path, "--agent", "bob", "maintain", "--job", "hygiene", "--force")
    assert one["agent"] == "bob" and "agent_databases" not in one  # an agent's own run stays its own


def test_a_token_made_for_an_agent_opens_no_agents_database(tmp_path: Path) -> None:
    import json

    from typer.testing import CliRunner

    from engram.interfaces.cli.app import app

    made = CliRunner().invoke(app, ["--home", str(tmp_path), "--json", "token", "create", "--agent", "bob"],
                              env={"ENGRAM_PER_AGENT_DATABASES": "true"}, catch_exceptions=False)
    assert made.exit_code == 0, made.output
    # Straight to the home's token file: the default agent's database was made just to be closed.
    assert (tmp_path / "auth.db").is_file() and not (tmp_path / "agents").exists()
    with _open(tmp_path, "alice") as engram:  # what a server of the home reads
        tokens = open_tokens(load_settings(home=tmp_path, agent="alice", per_agent_databases=True), engram.backend)
        try:
            found = tokens.verify(json.loads(made.stdout)["token"])
        finally:
            tokens.close()
    assert found is not None and found.agent == "bob"


def test_the_operators_serve_makes_no_database_for_an_agent_until_its_token_is_used(tmp_path: Path) -> None:
    # Review: `engram serve` run as no agent opened the default agent's database at start, making
    # agents/default/memory.db (then backed up and maintained) in a home where only alice and bob
    # had written. Each request acts for its token's agent, whose database opens on first use.
    import os
    import signal
    import subprocess
    import sys

    from tests.interfaces.test_serve_command import read_page

    for agent in ("alice", "bob"):
        with _open(tmp_path, agent) as engram:
            engram.remember(f"{agent}'s memory")
    tokens = open_tokens(load_settings(home=tmp_path, per_agent_databases=True))
    try:
        bob_token, _ = tokens.create("bob", "test")
    finally:
        tokens.close()
    env = {**os.environ, "ENGRAM_HOME": str(tmp_path), "ENGRAM_PER_AGENT_DATABASES": "true",
           "ENGRAM_EMBEDDINGS__PROVIDER": "none"}
    proc = subprocess.Popen([sys.executable, "-m", "engram", "serve", "--port", "0"], env=env,
                            stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
    try:
        base, page_token, printed = read_page(proc)  # printed once the store is open
        assert "serving agent default's memory" in printed
        with httpx.Client(base_url=base, headers={"Authorization": f"Bearer {bob_token}"}, timeout=60) as bob:
            assert bob.post("/api/v1/memory", json={"content": "bob's second memory"}).status_code == 201
            listed = bob.get("/api/v1/memory").json()["memories"]
        assert sorted(m["content"] for m in listed) == ["bob's memory", "bob's second memory"]
        assert sorted(p.name for p in (tmp_path / "agents").iterdir()) == ["alice", "bob"]
        # The page's token acts for the default agent, who has no database: its reads answer as an
        # empty one would and make none (the operator's backups took a file made so for an agent's);
        # its first write makes it.
        default_db = tmp_path / "agents" / "default" / "memory.db"
        with httpx.Client(base_url=base, headers={"Authorization": f"Bearer {page_token}"}, timeout=60) as page:
            assert page.get("/api/v1/memory").json()["memories"] == []
            assert page.get("/api/v1/memory/search", params={"q": "memory"}).json()["hits"] == []
            assert page.get("/api/v1/export").json()["memories"] == []
            assert page.get("/api/v1/stats").json()["memories"] == 0
            assert page.get("/api/v1/memory/nothing").status_code == 404
            assert page.get("/api/v1/audit").status_code == 200
            assert page.get("/api/v1/history").status_code == 200
            dry = page.post("/api/v1/memory/forget", json={"query": "memory", "reason": "tidy", "dry_run": True})
            assert dry.json() == {"forgotten": [], "count": 0, "dry_run": True}
            assert not default_db.exists()
            assert page.post("/api/v1/memory", json={"content": "the page's first note"}).status_code == 201
            assert default_db.is_file()
            assert [m["content"] for m in page.get("/api/v1/memory").json()["memories"]] == ["the page's first note"]
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=30)


def test_the_metrics_memory_count_is_every_agents_databases_each_memory_once(tmp_path: Path) -> None:
    """``engram_memories`` counts every agent's database in the home, a global memory once however
    many databases keep it (the folder sync keeps one in each). It counted the server's first
    database alone: here alice's 2, not the 4 memories the home holds."""
    with _open(tmp_path, "bob") as bob:
        bob.remember("bob's deploy runs on Fridays", key="deploy")
        bob.for_session("s1").remember("bob's scratch for this session", key="scratch", scope="session")
        shared = bob.remember("the office closes at six", key="office", scope="global").memory
    engram = _open(tmp_path, "alice")
    engram.remember("alice's runs daily", key="runs")
    assert engram.store.import_memories([shared]).imported == 1  # as the sync of global/ keeps it in hers too
    tokens = open_tokens(load_settings(home=tmp_path, agent="alice", per_agent_databases=True), engram.backend)
    try:
        scraper, _ = tokens.create("metrics", "prometheus")
        # Counted at every scrape (metrics_max_age_s=0), so the writes below show at the next.
        server = BackgroundServer(create_app(engram, tokens, ServerSettings(mcp_tools="both", metrics_max_age_s=0))).start()
        try:
            with httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {scraper}"}, timeout=30) as http:
                assert "\nengram_memories 4.0\n" in http.get("/metrics").text
                engram.for_agent("bob").remember("bob's second note", key="second")
                engram.remember("a global note of alice's", key="alices-global", scope="global")
                assert "\nengram_memories 6.0\n" in http.get("/metrics").text
        finally:
            server.stop()
    finally:
        tokens.close()
        engram.close()


def test_the_metrics_storage_size_and_latency_are_every_agents_databases(tmp_path: Path) -> None:
    """With one database per agent, ``engram_storage_bytes`` is every database's size added up (each
    the size ``engram stats --all-agents`` shows for it) and the latency summaries count every
    agent's recalls, not the server's first database's alone."""
    from prometheus_client.parser import text_string_to_metric_families

    from engram.root import store_stats_by_database

    with _open(tmp_path, "bob") as bob:
        bob.remember("bob's deploy runs on Fridays", key="deploy")
    engram = _open(tmp_path, "alice")
    engram.remember("alice's runs daily", key="runs")
    engram.recall("runs")
    engram.for_agent("bob").recall("deploy")
    engram.for_agent("bob").recall("Fridays")
    tokens = open_tokens(load_settings(home=tmp_path, agent="alice", per_agent_databases=True), engram.backend)
    try:
        scraper, _ = tokens.create("metrics", "prometheus")
        server = BackgroundServer(create_app(engram, tokens, ServerSettings(mcp_tools="both"))).start()
        try:
            with httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {scraper}"}, timeout=30) as http:
                text = http.get("/metrics").text
        finally:
            server.stop()
        found = {(s.name, tuple(s.labels.items())): s.value
                 for family in text_string_to_metric_families(text) for s in family.samples}
        every = store_stats_by_database(engram)
        assert sorted(agent for agent, _, _ in every) == ["alice", "bob"]
        sizes = [stats.size_bytes for _, stats, _ in every]
        assert all(size > 0 for size in sizes) and found[("engram_storage_bytes", ())] == sum(sizes)
        assert found[("engram_recall_seconds_count", ())] == 3  # alice's one and bob's two
        assert sum(item.count for _, _, latency in every for item in latency if item.name == "recall") == 3
        # Full text only: nothing was embedded, and the quantiles say so (NaN) rather than 0 s.
        assert found[("engram_embedding_seconds_count", ())] == 0
        assert math.isnan(found[("engram_embedding_seconds", (("quantile", "0.5"),))])
    finally:
        tokens.close()
        engram.close()


def test_a_reading_view_of_an_agent_with_no_database_answers_empty_and_makes_none(tmp_path: Path) -> None:
    """``for_agent(..., reading=True)`` (an HTTP GET): carol has no database, and reading made one,
    which the operator's backups, maintenance and sync then took for a real agent's."""
    from engram.errors import NotFoundError, StorageError

    carol_db = tmp_path / "agents" / "carol" / "memory.db"
    with _open(tmp_path, "alice") as alice:
        alice.remember("alice keeps the release notes", key="notes")
        carol = alice.for_agent("carol", "s1", reading=True)
        assert carol.list() == [] and carol.count() == 0 and carol.recall("release notes").hits == ()
        assert carol.visible_stats().memories == 0 and carol.visible_stats().location == str(carol_db)
        for read in (carol.get, carol.versions, carol.neighbours):
            with pytest.raises(NotFoundError):
                read("notes")
        assert '"memories": []' in carol.export_snapshot()
        assert carol.history.conversations() == []
        with pytest.raises(StorageError, match="only reads"):  # a write is never dropped silently
            carol.remember("carol's note")
        assert not carol_db.exists() and not carol_db.parent.exists()
        # Her first write (a view that may write) makes her database; a reading view then reads it.
        alice.for_agent("carol").remember("carol's first note", key="first")
        assert carol_db.is_file()
        assert [m.content for m in alice.for_agent("carol", reading=True).list()] == ["carol's first note"]


async def _reads_make_no_database_until_the_first_write(carol: Any, carol_db: Path) -> None:
    """Over an MCP session of carol (no database yet, ``alice``'s notes stored): her read tools and a
    dry-run forget answer empty and make no database; ``remember`` makes it, and ``list`` reads it."""
    from tests.interfaces.test_mcp import _data

    assert _data(await carol.call_tool("recall", {"query": "release notes"}))["results"] == []
    assert _data(await carol.call_tool("memory_recall", {"query": "release notes"}))["entries"] == []
    assert _data(await carol.call_tool("list", {}))["memories"] == []
    dry = _data(await carol.call_tool("forget", {"query": "release notes", "reason": "tidy", "dry_run": True}))
    assert (dry["forgotten"], dry["dry_run"]) == ([], True)
    assert not carol_db.exists()
    assert _data(await carol.call_tool("remember", {"content": "carol's first note"}))["action"] == "created"
    assert carol_db.is_file()
    assert [m["content"] for m in _data(await carol.call_tool("list", {}))["memories"]] == ["carol's first note"]


def test_mcp_reads_over_http_of_an_agent_with_no_database_make_none_until_its_first_write(tmp_path: Path) -> None:
    """MCP's read tools and resources (``annotations.READ``) over HTTP, with the token of carol, who
    has no database: they answer as her empty database would and make none; ``remember`` makes it."""
    import asyncio
    import json

    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client


    carol_db = tmp_path / "agents" / "carol" / "memory.db"
    engram = _open(tmp_path, "alice")
    engram.remember("alice keeps the release notes", key="notes")
    tokens = open_tokens(load_settings(home=tmp_path, agent="alice", per_agent_databases=True), engram.backend)
    try:
        carol_token, _ = tokens.create("carol", "test")
        server = BackgroundServer(create_app(engram, tokens, ServerSettings(mcp_tools="both"))).start()

        async def run() -> None:
            http = create_mcp_http_client(headers={"Authorization": f"Bearer {carol_token}"})
            async with Client(streamable_http_client(f"{server.url}/mcp", http_client=http)) as carol:
                assert (await carol.call_tool("get", {"key": "notes"})).is_error
                assert "not found" in (await carol.call_tool("versions", {"key": "notes"})).content[0].text  # alice's
                assert json.loads((await carol.read_resource("engram://core")).contents[0].text) == []
                await carol.read_resource("engram://soul")
                await _reads_make_no_database_until_the_first_write(carol, carol_db)

        try:
            asyncio.run(run())
        finally:
            server.stop()
    finally:
        tokens.close()
        engram.close()


def test_mcp_over_stdio_of_an_agent_with_no_database_makes_none_until_its_first_write(tmp_path: Path) -> None:
    """``engram --agent carol mcp`` opened carol's engine at launch, making her database for a
    session that only read. Read tools, a dry-run forget and the launch make none; ``remember``
    makes it, and the session then reads from it."""
    import asyncio
    import os
    import sys

    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    from tests.interfaces.test_mcp import _data

    with _open(tmp_path, "alice") as alice:
        alice.remember("alice keeps the release notes", key="notes")
    carol_db = tmp_path / "agents" / "carol" / "memory.db"
    env = {k: v for k, v in os.environ.items() if not k.startswith("ENGRAM_")}
    env.update(ENGRAM_HOME=str(tmp_path), ENGRAM_PER_AGENT_DATABASES="true", ENGRAM_EMBEDDINGS__PROVIDER="none",
               ENGRAM_SERVER__MCP_TOOLS="both")
    launch = StdioServerParameters(command=sys.executable, env=env, args=[
        "-c", "from engram.interfaces.cli.app import main; main()", "--agent", "carol", "mcp"])

    async def run() -> None:
        async with Client(launch) as carol:
            assert {"recall", "remember", "list"} <= {tool.name for tool in (await carol.list_tools()).tools}
            await _reads_make_no_database_until_the_first_write(carol, carol_db)
        async with Client(launch) as carol:  # kept, and read from her database at the next launch
            assert [m["content"] for m in _data(await carol.call_tool("list", {}))["memories"]] == ["carol's first note"]

    asyncio.run(run())
    assert {folder.name for folder in (tmp_path / "agents").iterdir()} == {"alice", "carol"}
