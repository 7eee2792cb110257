"""A filter that names nothing (a blank tag, a blank related entity) is refused at every door,
naming the filter as that door spells it: read as no filter, ``?tag=`` or ``--tag ""`` answered a
recall or a list with every memory, as if the one tag asked for were on all of them. Forget by a
blank tag was refused already; recall, list and count now agree with it. An empty list of tags
still means no tag filter. Library, CLI, HTTP over a real socket, MCP with the SDK's client."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import pytest
from mcp import Client

from engram.engine import Engram, Filters
from engram.errors import ValidationError
from tests.interfaces.conftest import Served
from tests.interfaces.test_mcp import _data, _error_text, _http


@pytest.fixture
def mem(tmp_path: Path):
    with Engram.from_settings(home=tmp_path, embeddings={"provider": "none"}, files={"enabled": False}) as engram:
        engram.remember("Ada drinks tea", key="tea", tags=["drink"], related_entity="Ada")
        engram.remember("Bob rides a bike", key="bike")
        yield engram


@pytest.mark.parametrize(("filters", "field"), [
    (Filters(tags=[""]), "tags"), (Filters(tags=" "), "tags"), (Filters(tags=", "), "tags"),
    (Filters(tags=("  ",)), "tags"), (Filters(related_entity=""), "related_entity"),
    (Filters(related_entity="  "), "related_entity"),
])
def test_library_refuses_a_filter_naming_nothing(mem: Engram, filters: Filters, field: str) -> None:
    for read in (lambda: mem.list(filters), lambda: mem.count(filters), lambda: mem.recall("tea", filters=filters)):
        with pytest.raises(ValidationError) as raised:
            read()
        assert raised.value.field == field
        assert "names no" in raised.value.problem or "names nothing" in raised.value.problem
        assert raised.value.allowed


def test_library_filters_that_name_something_still_filter(mem: Engram) -> None:
    assert [m.key for m in mem.list(Filters(tags=["drink"]))] == ["tea"]
    assert [m.key for m in mem.list(Filters(tags=iter(["drink"])))] == ["tea"]  # a generator is read once
    assert [m.key for m in mem.list(Filters(related_entity="Ada"))] == ["tea"]
    assert sorted(m.key for m in mem.list(Filters(tags=[]))) == ["bike", "tea"]  # no tags: no tag filter


def _cli(home: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "ENGRAM_HOME": str(home), "ENGRAM_EMBEDDINGS__PROVIDER": "none"}
    return subprocess.run([sys.executable, "-m", "engram", *args], capture_output=True, text=True, env=env, timeout=120)


def test_cli_refuses_a_blank_tag_or_entity_naming_the_option(isolated_home: Path) -> None:
    assert _cli(isolated_home, "remember", "Ada drinks tea", "--tags", "drink").returncode == 0
    for args, option in ((["recall", "tea", "--tag", ""], "--tag"), (["list", "--tag", " "], "--tag"),
                         (["count", "--tag", ""], "--tag"), (["list", "--entity", ""], "--entity")):
        done = _cli(isolated_home, *args)
        assert done.returncode == 2, (args, done.stdout, done.stderr)
        assert f'{option}: got "' in done.stderr and "allowed:" in done.stderr, done.stderr


def test_http_refuses_a_blank_tag_or_entity_naming_the_parameter(served: Served) -> None:
    with served.client(served.alice) as http:
        assert http.post("/api/v1/memory", json={"content": "Ada drinks tea", "tags": ["drink"]}).status_code == 201
        assert http.post("/api/v1/memory", json={"content": "Bob rides a bike"}).status_code == 201
        for path, params, field in (("/api/v1/memory/search", {"q": "tea", "tag": ""}, "tag"),
                                    ("/api/v1/memory", {"tag": " "}, "tag"),
                                    ("/api/v1/memory", {"entity": ""}, "entity")):
            answer = http.get(path, params=params)
            assert answer.status_code == 422, answer.text
            assert answer.json()["field"] == field, answer.text
        listed = http.get("/api/v1/memory", params={"tag": "drink"}).json()
        assert [m["content"] for m in listed["memories"]] == ["Ada drinks tea"]


def test_mcp_refuses_a_blank_tag_filter_naming_the_argument(served: Served) -> None:
    async def run() -> None:
        async with Client(_http(served, served.alice)) as client:
            _data(await client.call_tool("remember", {"content": "Ada drinks tea", "tags": ["drink"]}))
            _data(await client.call_tool("remember", {"content": "Bob rides a bike"}))
            text = _error_text(await client.call_tool("recall", {"query": "tea", "filters": {"tags": [""]}}))
            assert "filters.tags" in text and "names no tag" in text, text
            text = _error_text(await client.call_tool("list", {"tags": [" "]}))
            assert "tags" in text and "names no tag" in text, text
            found = _data(await client.call_tool("list", {"tags": ["drink"]}))
            assert [m["content"] for m in found["memories"]] == ["Ada drinks tea"]

    asyncio.run(run())
