"""A memory, and a filter, holds at most ``MAX_TAGS`` (100) different tags: more is refused at every
door, naming ``tags`` (as the door spells it) and the whole allowed, and nothing stored changes.
100,000 tags were taken and stored, and a filter of over a thousand failed in SQLite ("Expression
tree is too large"). Tags are counted as kept (trimmed, lowercased, each once), so 150 repeats of
100 tags are 100. Library, CLI (in process), HTTP over a real socket, MCP with the SDK's client
over HTTP; as tests/interfaces/test_empty_tags.py checks an empty tag."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest
from mcp import Client

from engram.engine import Engram, Filters
from engram.errors import ValidationError
from engram.interfaces.cli.app import app
from engram.model import MAX_TAGS, TAGS_ALLOWED
from tests.cli_in_process import cli_output, runner
from tests.interfaces.conftest import Served
from tests.interfaces.test_mcp import _data, _error_text, _http

ALLOWED = "at most 100 different tags"
AT_MOST = [f"t{i}" for i in range(MAX_TAGS)]
ONE_TOO_MANY = [*AT_MOST, "t100"]


@pytest.fixture
def mem(tmp_path: Path):
    with Engram.from_settings(home=tmp_path, embeddings={"provider": "none"}, files={"enabled": False}) as engram:
        yield engram


@pytest.mark.parametrize("tags", [ONE_TOO_MANY, ",".join(ONE_TOO_MANY), [f"t{i}" for i in range(100_000)]])
def test_library_refuses_more_than_a_hundred_tags_and_stores_nothing(mem: Engram, tags: object) -> None:
    for write in (lambda: mem.remember("Ada drinks tea", tags=tags),
                  lambda: mem.remember_many([{"content": "Bob rides a bike"}, {"content": "Ada drinks tea", "tags": tags}])):
        with pytest.raises(ValidationError) as raised:
            write()
        assert raised.value.field in ("tags", "items[1].tags"), raised.value
        assert raised.value.problem.startswith("has more than 100 different tags ("), raised.value.problem
        assert raised.value.allowed == TAGS_ALLOWED
    assert mem.count() == 0


def test_library_counts_tags_as_kept_a_repeat_once(mem: Engram) -> None:
    # 150 given, 100 different once trimmed and lowercased: kept, in the order first given; one more is refused.
    given = [*AT_MOST, *(f" T{i} " for i in range(50))]
    assert mem.remember("Ada drinks tea", tags=given).memory.tags == tuple(AT_MOST)
    with pytest.raises(ValidationError) as raised:
        mem.remember("Bob rides a bike", tags=[*given, "T100"])
    assert raised.value.problem == "has more than 100 different tags (151 given)"
    assert mem.count() == 1


def test_library_update_refuses_more_and_keeps_the_stored_tags(mem: Engram) -> None:
    mem.remember("Ada drinks tea", key="tea", tags=["drink"])
    for change in (lambda: mem.update("tea", tags=ONE_TOO_MANY), lambda: mem.replace("tea", "Ada drinks tea", tags=ONE_TOO_MANY),
                   lambda: mem.remember("Ada drinks green tea", key="tea", tags=ONE_TOO_MANY)):
        with pytest.raises(ValidationError) as raised:
            change()
        assert raised.value.field == "tags" and raised.value.allowed == TAGS_ALLOWED
    kept = mem.get("tea")
    assert (kept.content, kept.tags, mem.versions("tea")) == ("Ada drinks tea", ("drink",), [])


def test_a_memory_stored_before_the_bound_with_more_stays_changeable(tmp_path: Path) -> None:
    # 150 tags, as a store written before MAX_TAGS may hold: an update that keeps them changes the
    # rest, tags kept as stored; one giving them again is refused, as any write of more than 100.
    settings = {"home": tmp_path, "embeddings": {"provider": "none"}, "files": {"enabled": False}}
    with Engram.from_settings(**settings) as engram:
        engram.remember("Ada drinks tea", key="tea", tags=["drink"])
    many = [f"t{i}" for i in range(150)]
    with closing(sqlite3.connect(tmp_path / "memory.db")) as db, db:
        db.execute("UPDATE memories SET tags = ? WHERE key = 'tea'", (json.dumps(many),))
    with Engram.from_settings(**settings) as engram:
        changed = engram.update("tea", content="Ada drinks green tea", importance=0.9).memory
        assert (changed.content, changed.importance, changed.tags) == ("Ada drinks green tea", 0.9, tuple(many))
        with pytest.raises(ValidationError) as raised:
            engram.update("tea", tags=many)
        assert raised.value.field == "tags"
        assert engram.update("tea", tags=many[:100]).memory.tags == tuple(many[:100])


def test_library_filters_take_a_hundred_tags_and_refuse_more(mem: Engram) -> None:
    stored = mem.remember("Ada drinks tea", tags=AT_MOST).memory
    assert [m.id for m in mem.list(Filters(tags=AT_MOST))] == [stored.id]
    with pytest.raises(ValidationError) as raised:  # (1,200 was SQLite's "Expression tree is too large")
        mem.list(Filters(tags=[f"t{i}" for i in range(1200)]))
    assert raised.value.field == "tags" and raised.value.allowed == TAGS_ALLOWED
    with pytest.raises(ValidationError) as raised:
        mem.recall("tea", filters=Filters(tags=ONE_TOO_MANY))
    assert raised.value.field == "tags"
    with pytest.raises(ValidationError) as raised:
        mem.forget(tag=ONE_TOO_MANY)
    assert raised.value.field == "tag" and raised.value.allowed == TAGS_ALLOWED
    assert mem.count() == 1


def test_cli_remember_and_update_refuse_more_naming_the_option(tmp_path: Path) -> None:
    env = {"ENGRAM_EMBEDDINGS__PROVIDER": "none"}
    cli_output(tmp_path, "remember", "Ada drinks tea", "--key", "tea", "--tags", "drink", env=env)
    many = ",".join(ONE_TOO_MANY)
    for command in (["remember", "Bob rides a bike", "--tags", many],
                    ["remember", "Bob rides a bike", *(word for tag in ONE_TOO_MANY for word in ("--tag", tag))],
                    ["update", "tea", "--tags", many]):
        done = runner.invoke(app, ["--home", str(tmp_path), *command], env=env)
        assert isinstance(done.exception, ValidationError), (command[:3], done.output)
        assert str(done.exception).startswith("--tags: has more than 100 different tags (101 given)"), done.exception
        assert f"allowed: {ALLOWED}" in str(done.exception), done.exception
    assert cli_output(tmp_path, "count", env=env).strip() == "1"
    assert '"tags": [\n    "drink"\n  ]' in cli_output(tmp_path, "--json", "get", "tea", env=env)


def test_http_post_and_patch_refuse_more_naming_the_field(served: Served) -> None:
    with served.client(served.alice) as http:
        kept = http.post("/api/v1/memory", json={"content": "Ada drinks tea", "tags": ["drink"]}).json()
        answer = http.post("/api/v1/memory", json={"content": "Bob rides a bike", "tags": ONE_TOO_MANY})
        assert answer.status_code == 422, answer.text
        assert answer.json()["field"] == "tags" and ALLOWED in answer.text, answer.text
        answer = http.patch(f"/api/v1/memory/{kept['memory_id']}", json={"tags": ONE_TOO_MANY, "content": "Ada drinks coffee"})
        assert answer.status_code == 422, answer.text
        assert answer.json()["field"] == "tags" and "more than 100" in answer.text, answer.text
        answer = http.get("/api/v1/memory", params=[("tag", tag) for tag in ONE_TOO_MANY])
        assert answer.status_code == 422 and answer.json()["field"] == "tag", answer.text
        [memory] = http.get("/api/v1/memory").json()["memories"]
        assert (memory["id"], memory["content"], memory["tags"]) == (kept["memory_id"], "Ada drinks tea", ["drink"])


def test_mcp_remember_and_update_refuse_more_naming_the_argument(served: Served) -> None:
    async def run() -> None:
        async with Client(_http(served, served.alice)) as client:
            stored = _data(await client.call_tool("remember", {"content": "Ada drinks tea", "tags": ["drink"]}))
            text = _error_text(await client.call_tool("remember", {"content": "Bob rides a bike", "tags": ONE_TOO_MANY}))
            assert "tags" in text and "more than 100 different tags" in text and ALLOWED in text, text
            text = _error_text(await client.call_tool("update", {"memory_id": stored["memory_id"], "tags": ONE_TOO_MANY}))
            assert "tags" in text and "more than 100 different tags" in text, text
            text = _error_text(await client.call_tool("recall", {"query": "tea", "filters": {"tags": ONE_TOO_MANY}}))
            assert "filters.tags" in text and "more than 100" in text, text
            [memory] = _data(await client.call_tool("list", {}))["memories"]
            assert (memory["memory_id"], memory["tags"]) == (stored["memory_id"], ["drink"]), memory

    asyncio.run(run())
