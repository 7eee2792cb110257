"""Text no store can hold (lone surrogates, NUL) is refused with a field-naming error at every
door, and control characters or markup in stored text never reach a terminal raw (issue 15)."""

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
from tests.interfaces.test_mcp import _error_text, _http


@pytest.mark.parametrize(("field", "call"), [
    ("content", lambda e: e.remember("lone \ud800 surrogate")),
    ("content", lambda e: e.remember("nul \x00 byte")),
    ("key", lambda e: e.remember("fine", key="k\udfff")),
    ("tags", lambda e: e.remember("fine", tags=["t\ud800"])),
    ("metadata", lambda e: e.remember("fine", metadata={"nested": ["\ud800"]})),
    ("metadata", lambda e: e.remember("fine", metadata={"k\x00": 1})),
    ("related_entity", lambda e: e.remember("fine", related_entity="\ud800")),
    ("search_context", lambda e: e.remember("fine", search_context="\ud800")),
    ("query", lambda e: e.recall("\ud800")),
    ("query", lambda e: e.forget(query="\ud800")),
    ("ref", lambda e: e.get("\ud800")),
    ("related_entity", lambda e: e.list(Filters(related_entity="\ud800"))),
    ("content", lambda e: e.history.append("cli:1", "user", "\ud800")),
    # The reason goes to the audit trail (PostgreSQL refuses a NUL): refused before the memory goes.
    ("reason", lambda e: e.forget("kept", reason="gone \x00 now")),
    ("reason", lambda e: e.forget(tag="t", reason="\ud800")),
])
def test_library_refuses_unstorable_text_naming_the_field(tmp_path: Path, field: str, call) -> None:
    with Engram.from_settings(home=tmp_path) as engram:
        engram.remember("kept", key="kept")
        with pytest.raises(ValidationError) as raised:
            call(engram)
        assert raised.value.field == field
        assert [m.key for m in engram.list()] == ["kept"]  # nothing stored changed


def _cli(home: Path, *args: str | bytes) -> subprocess.CompletedProcess[bytes]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ENGRAM_")}
    env["ENGRAM_HOME"] = str(home)
    env["COLUMNS"] = "400"  # no folding inside a word
    return subprocess.run([sys.executable, "-m", "engram", *args], capture_output=True, env=env, timeout=120)


def test_cli_refuses_undecodable_argument_bytes_with_exit_2(tmp_path: Path) -> None:
    # Bytes that are not UTF-8 reach Python as lone surrogates (surrogateescape).
    result = _cli(tmp_path, "remember", b"bad \xff byte")
    assert result.returncode == 2, result.stderr
    assert b"content" in result.stderr and b"surrogate" in result.stderr and b"Traceback" not in result.stderr
    result = _cli(tmp_path, "recall", b"\xfe\xff")
    assert result.returncode == 2 and b"query" in result.stderr


def test_cli_never_sends_control_characters_or_markup_to_the_terminal(tmp_path: Path) -> None:
    with Engram.from_settings(home=tmp_path) as engram:
        engram.remember("red \x1b[31mALERT\x1b[0m title \x1b]0;owned\x07 csi \x9b2J closing [/red] tag", key="k1",
                        tags="t")
    for args in (["list"], ["get", "k1"], ["recall", "alert"], ["--json", "get", "k1"], ["--json", "list"]):
        result = _cli(tmp_path, *args)
        assert result.returncode == 0, (args, result.stderr)
        for raw in (b"\x1b", b"\x07", "\x9b".encode()):
            assert raw not in result.stdout and raw not in result.stderr, (args, raw)
        assert b"ALERT" in result.stdout  # shown, with its escapes made visible
    assert b"[/red]" in _cli(tmp_path, "get", "k1").stdout


def test_http_answers_4xx_naming_the_field(served: Served) -> None:
    with served.client(served.alice) as client:
        bodies = {
            "content": '{"content": "lone \\ud800 surrogate"}',
            "key": '{"content": "fine", "key": "\\udfff"}',
            "metadata": '{"content": "fine", "metadata": {"a": "\\u0000"}}',
        }
        for field, body in bodies.items():
            response = client.post("/api/v1/memory", content=body, headers={"Content-Type": "application/json"})
            assert 400 <= response.status_code < 500, (field, response.status_code, response.text)
            assert field in response.text
        search = client.get("/api/v1/memory/search?q=%ED%A0%80")  # the UTF-8 bytes of a surrogate
        assert search.status_code < 500, search.text  # decoded as U+FFFD: an ordinary query
        kept = client.post("/api/v1/memory", json={"content": "kept over HTTP", "key": "kept-http"})
        assert kept.status_code in (200, 201), kept.text
        forget = client.delete("/api/v1/memory/kept-http?reason=a%00b")
        assert forget.status_code == 422 and "reason" in forget.text, forget.text
        assert client.get("/api/v1/memory/kept-http").status_code == 200  # still there
        history = client.post("/api/v1/history/web:1", content='{"role": "user", "content": "\\ud800"}',
                              headers={"Content-Type": "application/json"})
        assert 400 <= history.status_code < 500 and "content" in history.text
        assert client.get("/api/v1/memory").status_code == 200  # nothing half-stored breaks listing


def test_mcp_tool_error_names_the_field(served: Served) -> None:
    async def run() -> None:
        async with Client(_http(served, served.alice)) as client:
            text = _error_text(await client.call_tool("remember", {"content": "nul \x00 byte"}))
            assert "content" in text and "NUL" in text
            text = _error_text(await client.call_tool("memory_store", {"key": "k", "content": "ok\x00"}))
            assert "content" in text

    asyncio.run(run())
