"""An empty tag among the tags a caller gives (``["ok", ""]``, ``--tags "a,,b"``, a trailing comma)
is refused at every door, naming ``tags`` and which tag is empty, and nothing is stored: it was
dropped without a word, so the memory lacked a tag its caller meant to give. No tags at all is
still ``[]`` or blank text (``--tags ""``, which an update gives to clear them). Library, CLI (in
process), HTTP over a real socket, MCP with the SDK's client; importers keep dropping another
system's empty tags (tests/importers)."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import pytest
from mcp import Client

from engram.engine import Engram
from engram.errors import ValidationError
from engram.interfaces.cli.app import app
from tests.cli_in_process import cli_output, runner
from tests.interfaces.conftest import Served
from tests.interfaces.test_mcp import _data, _error_text, _http


@pytest.fixture
def mem(tmp_path: Path):
    with Engram.from_settings(home=tmp_path, embeddings={"provider": "none"}, files={"enabled": False}) as engram:
        yield engram


@pytest.mark.parametrize(("tags", "empty"), [
    (["ok", ""], 'tag 2 of ["ok", ""] is empty'), (["ok", "  "], "tag 2 of"), ([""], 'tag 1 of [""] is empty'),
    ("a,,b", 'tag 2 of "a,,b" is empty'), ("a,b,", 'tag 3 of "a,b," is empty'), (",a", 'tag 1 of ",a" is empty'),
])
def test_library_refuses_an_empty_tag_and_stores_nothing(mem: Engram, tags: object, empty: str) -> None:
    for write in (lambda: mem.remember("Ada drinks tea", tags=tags),
                  lambda: mem.remember_many([{"content": "Ada drinks tea", "tags": tags}])):
        with pytest.raises(ValidationError) as raised:
            write()
        assert raised.value.field.endswith("tags")  # (remember_many's: items[0].tags)
        assert empty in raised.value.problem, raised.value.problem
        assert "none empty" in raised.value.allowed
    assert mem.count() == 0


def test_library_update_refuses_an_empty_tag_and_keeps_the_stored_ones(mem: Engram) -> None:
    mem.remember("Ada drinks tea", key="tea", tags=["drink"])
    with pytest.raises(ValidationError) as raised:
        mem.update("tea", tags=["hot", ""])
    assert raised.value.field == "tags"
    assert mem.get("tea").tags == ("drink",)


def test_library_no_tags_is_still_an_empty_list_or_blank_text(mem: Engram) -> None:
    assert mem.remember("Ada drinks tea", key="tea", tags=["drink", "hot"]).memory.tags == ("drink", "hot")
    assert mem.remember("Ada drinks tea", key="tea", tags="").memory.tags == ()  # (a keyed update clears them)
    assert mem.remember("Bob rides a bike", tags=[]).memory.tags == ()
    assert mem.remember("Cy swims", tags="  ").memory.tags == ()


def test_cli_refuses_an_empty_tag_naming_the_option(tmp_path: Path) -> None:
    env = {"ENGRAM_EMBEDDINGS__PROVIDER": "none"}
    for tags, empty in ((["--tags", "a,,b"], 'tag 2 of "a,,b"'), (["--tags", "a,b,"], 'tag 3 of "a,b,"'),
                        (["--tags", "a", "--tag", " "], 'tag 2 of "a, "')):  # (repeated --tags are joined by commas)
        done = runner.invoke(app, ["--home", str(tmp_path), "remember", "Ada drinks tea", *tags], env=env)
        assert isinstance(done.exception, ValidationError), (tags, done.output)
        assert str(done.exception).startswith(f"--tags: {empty}") and "allowed:" in str(done.exception), done.exception
    assert cli_output(tmp_path, "count", env=env).strip() == "0"
    cli_output(tmp_path, "remember", "Ada drinks tea", "--key", "tea", "--tags", "drink", env=env)
    cli_output(tmp_path, "update", "tea", "--tags", "", env=env)  # blank: no tags (clears them)
    assert '"tags": []' in cli_output(tmp_path, "--json", "get", "tea", env=env)


def test_cli_process_exits_2_with_the_message(isolated_home: Path) -> None:
    env = {**os.environ, "ENGRAM_HOME": str(isolated_home), "ENGRAM_EMBEDDINGS__PROVIDER": "none"}
    done = subprocess.run([sys.executable, "-m", "engram", "remember", "Ada drinks tea", "--tags", "a,,b"],
                          capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert '--tags: tag 2 of "a,,b" is empty' in done.stderr, done.stderr


def test_http_refuses_an_empty_tag_naming_the_field(served: Served) -> None:
    with served.client(served.alice) as http:
        answer = http.post("/api/v1/memory", json={"content": "Ada drinks tea", "tags": ["ok", ""]})
        assert answer.status_code == 422, answer.text
        assert answer.json()["field"] == "tags" and "is empty" in answer.text, answer.text
        assert http.get("/api/v1/memory").json()["memories"] == []


def test_mcp_refuses_an_empty_tag_naming_the_argument(served: Served) -> None:
    async def run() -> None:
        async with Client(_http(served, served.alice)) as client:
            text = _error_text(await client.call_tool("remember", {"content": "Ada drinks tea", "tags": ["ok", " "]}))
            assert "tags" in text and "is empty" in text, text
            assert _data(await client.call_tool("list", {}))["memories"] == []

    asyncio.run(run())
