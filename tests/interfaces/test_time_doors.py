"""Valid time, superseding and time in recall through every door: the CLI as a real process, the
HTTP API over a real socket, MCP with the SDK's client over streamable HTTP."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

from mcp import Client

from tests.interfaces.conftest import Served
from tests.interfaces.test_mcp import _data, _error_text, _http


def _at(text: str) -> float:
    return datetime.fromisoformat(text).replace(tzinfo=UTC).timestamp()


def _cli(home: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "ENGRAM_HOME": str(home), "ENGRAM_TIME__ZONE": "UTC", "TZ": "UTC", "COLUMNS": "200"}
    return subprocess.run([sys.executable, "-m", "engram", *args], capture_output=True, text=True, env=env, timeout=120)


def test_cli_valid_time_supersede_and_time_in_recall(isolated_home: Path) -> None:
    def ok(*args: str) -> dict:
        done = _cli(isolated_home, "--json", *args)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)

    berlin = ok("remember", "User lives in Berlin", "--valid-from", "2020-03-01", "--key", "home-berlin")["memory"]
    assert berlin["valid_from"] == _at("2020-03-01T00:00:00")
    paris = ok("remember", "User lives in Paris", "--valid-from", "2024-06-01", "--key", "home-paris")["memory"]
    closed = ok("supersede", "home-berlin", "home-paris")
    assert closed["superseded_by"] == paris["id"] and closed["valid_until"] == _at("2024-06-01T00:00:00")
    then = ok("recall", "where does the user live", "--as-of", "2022-01-01")
    assert [h["memory"]["key"] for h in then["hits"]] == ["home-berlin"]
    now = ok("recall", "where does the user live")
    assert [h["memory"]["key"] for h in now["hits"]] == ["home-paris"]
    failed = ok("remember", "On 2025-03-10 the nightly migration failed")["memory"]
    assert failed["valid_from"] == _at("2025-03-10T00:00:00")
    found = ok("recall", "what failed on 2025-03-10")
    assert [h["memory"]["id"] for h in found["hits"]] == [failed["id"]]
    assert any("2025-03-10 00:00 to 2025-03-11 00:00" in note for note in found["notes"])
    assert ok("recall", "migration", "--when", "in 2019")["hits"] == []
    listed = ok("list", "--as-of", "2021-01-01")
    assert [m["key"] for m in listed] == ["home-berlin"]
    human = _cli(isolated_home, "get", "home-berlin")
    assert "valid_until" in human.stdout and "2024-06-01" in human.stdout
    for args, field in ((("recall", "x", "--when", "sometime soon"), "when"),
                        (("recall", "x", "--as-of", "yesterdayish"), "--as-of:"),  # the option typed
                        (("remember", "bad", "--valid-from", "2024-13-45"), "--valid-from:")):
        bad = _cli(isolated_home, *args)
        assert bad.returncode == 2 and field in bad.stderr, (args, bad.stderr)
    assert ok("count")["count"] == 2  # Paris and the failed migration (Berlin is superseded); nothing half-stored


def test_http_valid_time_supersede_and_time_in_recall(served: Served) -> None:
    with served.client(served.alice) as c:
        def store(content: str, **fields: object) -> dict:
            r = c.post("/api/v1/memory", json={"content": content, **fields})
            assert r.status_code == 201, r.text
            return r.json()["memory"]

        berlin = store("User lives in Berlin", key="home-berlin", valid_from="2020-03-01T00:00:00Z")
        paris = store("User lives in Paris", key="home-paris", valid_from=_at("2024-06-01T00:00:00"))
        r = c.post("/api/v1/memory/home-berlin/supersede", json={"by": "home-paris"})
        assert r.status_code == 200, r.text
        assert r.json()["superseded_by"] == paris["id"] and r.json()["valid_until"] == _at("2024-06-01T00:00:00")
        search = c.get("/api/v1/memory/search", params={"q": "where does the user live", "as_of": "2022-01-01T00:00Z"})
        assert [h["memory"]["id"] for h in search.json()["hits"]] == [berlin["id"]]
        assert [h["memory"]["id"] for h in c.get(
            "/api/v1/memory/search", params={"q": "user lives"}).json()["hits"]] == [paris["id"]]
        assert c.get("/api/v1/memory/search", params={"q": "user lives", "when": "in 2019"}).json()["hits"] == []
        noted = c.get("/api/v1/memory/search", params={"q": "user lives", "when": "last year"}).json()
        assert any(note.startswith("time: 'last year'") for note in noted["notes"])
        assert [m["id"] for m in c.get("/api/v1/memory", params={"as_of": "2021-01-01T00:00Z"}).json()["memories"]] \
            == [berlin["id"]]
        r = c.patch("/api/v1/memory/home-paris", json={"valid_until": "2030-01-01T00:00:00Z"})
        assert r.status_code == 200 and r.json()["memory"]["valid_until"] == _at("2030-01-01T00:00:00")
        for params, field in (({"q": "x", "when": "sometime soon"}, "when"), ({"q": "x", "known_at": "never"}, "known_at")):
            r = c.get("/api/v1/memory/search", params=params)
            assert r.status_code == 422 and r.json()["field"] == field
        r = c.post("/api/v1/memory", json={"content": "x", "valid_from": "2024-02-01", "valid_until": "2024-01-01"})
        assert r.status_code == 422 and r.json()["field"] == "valid_until"
        assert c.post("/api/v1/memory/home-paris/supersede", json={"by": "missing"}).status_code == 404
        assert c.get("/api/v1/stats").json()["memories"] == 1  # Paris (Berlin superseded); nothing half-stored
        assert c.get("/api/v1/memory/home-berlin").json()["superseded_by"] == paris["id"]  # kept
    with served.client(served.bob) as c:  # another agent can neither see nor supersede alice's memories
        assert c.post("/api/v1/memory/home-paris/supersede", json={"by": "home-berlin"}).status_code == 404


def test_mcp_valid_time_supersede_and_time_in_recall(served: Served) -> None:
    async def run() -> None:
        async with Client(_http(served, served.alice)) as alice:
            old = _data(await alice.call_tool("remember", {
                "content": "The team meets on Tuesdays", "key": "meeting-day", "valid_from": "2023-01-01T00:00:00Z"}))
            new = _data(await alice.call_tool("remember", {
                "content": "The team meets on Thursdays", "key": "meeting-day-2", "valid_from": "2025-01-01T00:00:00Z"}))
            closed = _data(await alice.call_tool("supersede", {"old": "meeting-day", "new": "meeting-day-2"}))
            assert closed["superseded_by"] == new["memory_id"] and closed["valid_until"] == _at("2025-01-01T00:00:00")
            then = _data(await alice.call_tool("recall", {"query": "when does the team meet", "as_of": "2024-01-01"}))
            assert [r["memory_id"] for r in then["results"]] == [old["memory_id"]]
            assert then["results"][0]["context"]["valid_until"].startswith("2025-01-01")
            now = _data(await alice.call_tool("recall", {"query": "when does the team meet"}))
            assert [r["memory_id"] for r in now["results"]] == [new["memory_id"]]
            empty = _data(await alice.call_tool("recall", {"query": "team meets", "when": "in 2019"}))
            assert empty["results"] == [] and any(n.startswith("time:") for n in empty["notes"])
            bad = await alice.call_tool("recall", {"query": "team", "when": "sometime soon"})
            assert bad.is_error and "when" in bad.content[0].text

    asyncio.run(run())


def test_list_and_recall_read_times_as_the_audit_trail_does(isolated_home: Path, served: Served) -> None:
    """``--since``/``--until``, ``--as-of`` and ``--known-at`` take what ``audit`` takes (epoch, ISO
    8601, a phrase), through the engine's one reader: ``--until`` a day keeps that whole day."""
    def keys(*args: str) -> list[str]:
        done = _cli(isolated_home, "--json", *args)
        assert done.returncode == 0, (args, done.stderr)
        shown = json.loads(done.stdout)
        if isinstance(shown, dict):  # a recall
            return [h["memory"]["key"] for h in shown["hits"]]
        return [m.get("key") or m["memory_key"] for m in shown]  # memories, or audit entries

    assert _cli(isolated_home, "remember", "noted today", "--key", "today").returncode == 0
    today = datetime.now(UTC).date().isoformat()
    assert keys("list", "--since", "today") == keys("list", "--since", today) == ["today"]
    assert keys("list", "--until", today) == keys("list", "--until", "today") == ["today"]
    assert keys("list", "--since", "last week", "--until", today) == keys("audit", "--since", "last week") == ["today"]
    assert keys("list", "--until", "yesterday") == keys("list", "--since", "4000000000") == []
    assert keys("recall", "noted", "--known-at", "yesterday") == []  # recorded since
    assert keys("recall", "noted", "--known-at", str(datetime.now(UTC).timestamp() + 60)) == ["today"]
    for args, field in ((("list", "--since", "whenever"), "since:"), (("recall", "x", "--as-of", "someday"), "--as-of:"),
                        (("list", "--since", "today", "--until", "yesterday"), "until:")):
        bad = _cli(isolated_home, *args)
        assert bad.returncode == 2 and field in bad.stderr, (args, bad.stderr)
    with served.client(served.alice) as c:
        assert c.post("/api/v1/memory", json={"content": "noted over HTTP", "key": "http"}).status_code == 201
        for params in ({"known_at": "yesterday"}, {"as_of": "last week"}):
            r = c.get("/api/v1/memory/search", params={"q": "noted", **params})
            assert r.status_code == 200 and r.json()["hits"] == [], r.text
        assert c.get("/api/v1/memory/search", params={"q": "noted", "known_at": "soonish"}).json()["field"] == "known_at"


def test_http_list_and_search_take_since_until_and_entity_as_the_cli_does(served: Served) -> None:
    today = datetime.now(UTC).date().isoformat()
    with served.client(served.alice) as c:
        assert c.post("/api/v1/memory", json={"content": "met Ada at the bakery", "key": "ada",
                                              "related_entity": "Ada"}).status_code == 201
        assert c.post("/api/v1/memory", json={"content": "met Bo at the bakery", "key": "bo"}).status_code == 201

        def listed(**params: str) -> list[str]:
            r = c.get("/api/v1/memory", params=params)
            assert r.status_code == 200, r.text
            return sorted(m["key"] for m in r.json()["memories"])

        def found(**params: str) -> list[str]:
            r = c.get("/api/v1/memory/search", params={"q": "bakery", **params})
            assert r.status_code == 200, r.text
            return sorted(h["memory"]["key"] for h in r.json()["hits"])

        assert listed(since="today") == listed(until=today) == found(since="last week") == ["ada", "bo"]
        assert listed(until="yesterday") == found(since="4000000000") == []
        assert found(entity="Ada") == found(entity="ada") == listed(entity="ADA") == ["ada"]  # case ignored
        for path, params in (("/api/v1/memory", {"since": "whenever"}),
                             ("/api/v1/memory/search", {"q": "bakery", "until": "someday"})):
            bad = c.get(path, params=params)
            assert bad.status_code == 422 and bad.json()["field"] in ("since", "until"), bad.text


def test_an_api_route_refuses_a_query_parameter_it_does_not_take_naming_it(served: Served) -> None:
    # FastAPI ignores an unknown query parameter: a misspelt filter answered for everything.
    with served.client(served.alice) as c:
        assert c.post("/api/v1/memory", json={"content": "tagged work", "tags": ["work"]}).status_code == 201
        for path, params, wrong in (("/api/v1/memory", {"tags": "home"}, "tags"),
                                    ("/api/v1/memory/search", {"q": "work", "sinse": "today"}, "sinse"),
                                    ("/api/v1/stats", {"all": "1"}, "all")):
            r = c.get(path, params=params)
            assert r.status_code == 422, r.text
            assert r.json()["field"] == wrong, r.text
        allowed = c.get("/api/v1/memory", params={"tags": "home"}).json()["allowed"]
        assert "tag" in allowed and "limit" in allowed
        assert [m["content"] for m in c.get("/api/v1/memory", params={"tag": "work"}).json()["memories"]] == ["tagged work"]


def test_an_api_route_refuses_a_one_value_parameter_given_twice_naming_it(served: Served) -> None:
    # FastAPI read the last of ``?limit=1&limit=2``; a parameter taking a list still repeats.
    with served.client(served.alice) as c:
        for content, tags in (("tagged work", ["work", "urgent"]), ("other work", ["work"])):
            assert c.post("/api/v1/memory", json={"content": content, "tags": tags}).status_code == 201
        for path, params, twice in (("/api/v1/memory", [("limit", "1"), ("limit", "2")], "limit"),
                                    ("/api/v1/memory/search", [("q", "work"), ("q", "other")], "q"),
                                    ("/api/v1/memory", [("tag", "work"), ("since", "today"), ("since", "2020-01-01")],
                                     "since")):
            r = c.get(path, params=params)
            assert r.status_code == 422, r.text
            problem = r.json()
            assert problem["field"] == twice and "is given twice" in problem["detail"], r.text
        both = c.get("/api/v1/memory", params=[("tag", "work"), ("tag", "urgent")])
        assert [m["content"] for m in both.json()["memories"]] == ["tagged work"], both.text
        assert len(c.get("/api/v1/memory", params={"limit": "1"}).json()["memories"]) == 1


def test_mcp_recall_and_list_take_since_and_until_as_the_other_doors_do(served: Served) -> None:
    """``since``/``until`` on MCP's recall and list: read by the engine as the library, CLI and HTTP
    read them (epoch, ISO 8601 or a phrase), refused with the library's own words; bob sees nothing of alice's."""
    from engram.engine import Filters
    from engram.errors import ValidationError

    today = datetime.now(UTC).date().isoformat()
    library = served.engram.for_agent("alice")
    try:
        library.list(Filters(since="whenever"))
    except ValidationError as exc:
        unreadable = exc.problem
    else:
        raise AssertionError("the library read 'whenever' as a time")

    async def run() -> None:
        async with Client(_http(served, served.alice)) as alice:
            _data(await alice.call_tool("remember", {"content": "met Ada at the bakery", "key": "ada"}))

            async def recalled(**times: str) -> list[str]:
                found = _data(await alice.call_tool("recall", {"query": "bakery", **times}))
                return [r["context"]["key"] for r in found["results"]]

            async def listed(**times: str) -> list[str]:
                return [m["key"] for m in _data(await alice.call_tool("list", times))["memories"]]

            assert await recalled(since="today") == await recalled(until=today) == ["ada"]
            assert await listed(since="last week", until=today) == await listed(since=today) == ["ada"]
            assert await recalled(until="yesterday") == await recalled(since="4000000000") == []
            assert await listed(until="yesterday") == []
            for tool, args, field in (("recall", {"query": "bakery", "since": "whenever"}, "since"),
                                      ("list", {"until": "someday"}, "until"),
                                      ("list", {"since": "today", "until": "yesterday"}, "until")):
                refused = _error_text(await alice.call_tool(tool, args))
                assert f"invalid {field}:" in refused, refused
            assert unreadable in _error_text(await alice.call_tool("list", {"since": "whenever"}))
        async with Client(_http(served, served.bob)) as bob:
            assert _data(await bob.call_tool("recall", {"query": "bakery", "since": "last week"}))["results"] == []
            assert _data(await bob.call_tool("list", {"since": "last week"}))["memories"] == []

    asyncio.run(run())



def test_cli_reads_hour_and_minute_phrases(isolated_home: Path) -> None:
    now = time.time()
    if 3600 - now % 3600 < 90:  # the phrases read clock hours: keep the whole test inside one hour
        time.sleep(3600 - now % 3600 + 1)
        now = time.time()
    two_hours_back = now - now % 3600 - 2 * 3600 + 1800  # the middle of the clock hour 2 hours back (UTC)

    def ok(*args: str) -> object:
        done = _cli(isolated_home, "--json", *args)
        assert done.returncode == 0, (args, done.stderr)
        return json.loads(done.stdout)

    ok("remember", "deployed the parser", "--key", "deploy", "--valid-from", str(two_hours_back))
    found = ok("recall", "parser", "--when", "2 hours ago")
    assert [h["memory"]["key"] for h in found["hits"]] == ["deploy"], found
    assert ok("recall", "parser", "--when", "an hour ago")["hits"] == []
    assert [m["key"] for m in ok("list", "--since", "90 minutes ago")] == ["deploy"]  # created just now
    assert ok("list", "--until", "an hour ago") == []
    bad = _cli(isolated_home, "recall", "parser", "--when", "2 fortnights ago")
    assert bad.returncode == 2 and "when" in bad.stderr and "hours" in bad.stderr, bad.stderr
