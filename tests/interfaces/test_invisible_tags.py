"""A tag with no visible character (a pasted zero-width space, a direction mark, a lone combining
mark) is refused at every door, naming ``tags`` and what a tag may be, and nothing is stored; a tag
with at least one visible character is kept as given. Library on a real SQLite file, the CLI as a
real process, HTTP over a real socket, MCP with the SDK's client over streamable HTTP."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from mcp import Client

from engram.engine import Engram
from engram.errors import ValidationError
from tests.interfaces.conftest import Served
from tests.interfaces.test_mcp import _error_text, _http
from tests.unit.test_cli import engram

INVISIBLE = ["\u200b", "\u200b\u200d", "\u2060\ufeff", "\u200e", "\u00ad", "\u0301", "\u200b\u3000\u200b"]
# Each has something that shows: a letter beside a zero-width space, a decomposed letter, a
# private-use glyph, an emoji with its variation selector.
VISIBLE = ["a\u200b", "e\u0301", "\ue000", "\u2764\ufe0f", "日本"]
ALLOWED = "up to 64 printable characters, at least one of them visible, no commas"


@pytest.fixture
def mem(tmp_path: Path):
    with Engram.from_settings(home=tmp_path, embeddings={"provider": "none"}, files={"enabled": False}) as engine:
        engine.remember("already stored", key="kept", tags=["garden"])
        yield engine


@pytest.mark.parametrize("tag", INVISIBLE)
def test_the_library_refuses_a_tag_nobody_can_see(mem: Engram, tag: str) -> None:
    for call in (lambda: mem.remember("a new memory", tags=[tag]),
                 lambda: mem.remember("a new memory", tags=f"fine,{tag}"),
                 lambda: mem.update("kept", tags=["garden", tag])):
        with pytest.raises(ValidationError) as refused:
            call()
        assert refused.value.field == "tags" and refused.value.allowed == ALLOWED, str(refused.value)
        assert "no visible character" in refused.value.problem
    assert [(m.key, m.tags) for m in mem.list()] == [("kept", ("garden",))]


def test_a_tag_with_something_visible_is_kept_as_given(mem: Engram) -> None:
    stored = mem.remember("a new memory", tags=VISIBLE).memory
    assert stored.tags == tuple(VISIBLE)
    assert mem.get(stored.id).tags == tuple(VISIBLE)


def test_the_cli_refuses_it_naming_the_option_field(isolated_home: Path) -> None:
    refused = engram(isolated_home, "remember", "a new memory", "--tags", "fine,\u200b")
    assert refused.returncode == 2, refused.stderr
    # (the tag shown escaped, so the message says what was refused)
    assert "--tags: '\\u200b' has no visible character" in refused.stderr and ALLOWED in refused.stderr, refused.stderr
    assert json.loads(engram(isolated_home, "--json", "list").stdout) == []


def test_http_and_mcp_refuse_it_naming_tags(served: Served) -> None:
    with served.client(served.alice) as http:
        answer = http.post("/api/v1/memory", json={"content": "a new memory", "tags": ["\u200b"]})
        assert answer.status_code == 422 and answer.json()["field"] == "tags", answer.text
        assert ALLOWED in answer.text

    async def run() -> None:
        async with Client(_http(served, served.alice)) as client:
            text = _error_text(await client.call_tool("remember", {"content": "a new memory", "tags": ["\u2060"]}))
            assert "tags" in text and "no visible character" in text and ALLOWED in text, text

    asyncio.run(run())
    assert served.engram.for_agent("alice").count() == 0
