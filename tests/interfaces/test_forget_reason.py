"""A forget's reason is one sentence for the audit trail, checked by the engine at every door: over
500 characters it is refused naming ``reason`` and the limit, and nothing is forgotten. The HTTP
API's ``?reason=`` stopped at 500 while its body, MCP, the CLI and the library took any length (a
megabyte was copied into the trail once per memory removed). Library, CLI as a real process, HTTP
over a real socket, MCP with the SDK's client."""

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
from engram.model import MAX_REASON_CHARS
from tests.interfaces.conftest import Served
from tests.interfaces.test_mcp import _data, _error_text, _http

TOO_LONG = "because " * 63  # 504 characters
ALLOWED = f"up to {MAX_REASON_CHARS} characters"


def test_library_refuses_a_reason_too_long_and_forgets_nothing(tmp_path: Path) -> None:
    with Engram.from_settings(home=tmp_path, embeddings={"provider": "none"}, files={"enabled": False}) as engram:
        engram.remember("Ada drinks tea", key="tea", tags=["drink"])
        for forget in (lambda: engram.forget("tea", reason=TOO_LONG), lambda: engram.forget(tag="drink", reason=TOO_LONG),
                       lambda: engram.forget(query="tea", reason=TOO_LONG, dry_run=True)):
            with pytest.raises(ValidationError) as raised:
                forget()
            assert raised.value.field == "reason" and raised.value.allowed == ALLOWED
        assert [m.key for m in engram.list()] == ["tea"]
        assert [m.key for m in engram.forget("tea", reason="x" * MAX_REASON_CHARS)] == ["tea"]
        assert engram.audit_trail(1)[0].reason == "x" * MAX_REASON_CHARS


def test_http_refuses_a_reason_too_long_in_the_body_and_the_query_alike(served: Served) -> None:
    with served.client(served.alice) as http:
        assert http.post("/api/v1/memory", json={"content": "Ada drinks tea", "key": "tea"}).status_code == 201
        for answer in (http.post("/api/v1/memory/forget", json={"query": "tea", "reason": TOO_LONG}),
                       http.delete("/api/v1/memory/tea", params={"reason": TOO_LONG}),
                       http.delete("/api/v1/memory/by-key", params={"key": "tea", "reason": TOO_LONG})):
            assert answer.status_code == 422, answer.text
            assert answer.json()["field"] == "reason" and answer.json()["allowed"] == ALLOWED, answer.text
        assert http.get("/api/v1/memory/tea").status_code == 200
        schema = http.get("/openapi.json").json()["paths"]["/api/v1/memory/{ref}"]["delete"]["parameters"]
        assert next(p for p in schema if p["name"] == "reason")["schema"]["maxLength"] == MAX_REASON_CHARS


def test_mcp_refuses_a_reason_too_long(served: Served) -> None:
    async def run() -> None:
        async with Client(_http(served, served.alice)) as client:
            _data(await client.call_tool("remember", {"content": "Ada drinks tea", "key": "tea"}))
            text = _error_text(await client.call_tool("forget", {"key": "tea", "reason": TOO_LONG}))
            assert text.endswith(f"invalid reason: is {len(TOO_LONG)} characters (allowed: {ALLOWED})"), text
            assert _data(await client.call_tool("get", {"key": "tea"}))["content"] == "Ada drinks tea"

    asyncio.run(run())


def test_cli_refuses_a_reason_too_long(isolated_home: Path) -> None:
    env = {**os.environ, "ENGRAM_HOME": str(isolated_home), "ENGRAM_EMBEDDINGS__PROVIDER": "none"}

    def cli(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "engram", *args], capture_output=True, text=True, env=env, timeout=120)

    assert cli("remember", "Ada drinks tea", "--key", "tea").returncode == 0
    refused = cli("forget", "tea", "--reason", TOO_LONG)
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert "--reason:" in refused.stderr and ALLOWED in refused.stderr, refused.stderr
    assert cli("get", "tea").returncode == 0
