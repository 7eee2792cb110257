"""A corpus of hostile inputs (tests/fuzz_inputs.py) through HTTP, MCP and the CLI with real
clients: each is stored and read back, refused with a field-naming 4xx / tool error / exit 2, or
searched without error; never a 5xx, a crash or a traceback, and nothing stored is lost."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from urllib.parse import quote

import pytest
from mcp import Client

from tests.fuzz_inputs import HOSTILE, UNSTORABLE, nested
from tests.interfaces.conftest import Served
from tests.interfaces.test_mcp import _data, _http

CORPUS = {**HOSTILE, **UNSTORABLE}


def test_http_corpus(served: Served) -> None:
    with served.client(served.alice) as client:
        kept = client.post("/api/v1/memory", json={"content": "a memory that must survive", "key": "keeper"})
        assert kept.status_code == 201
        for name, text in CORPUS.items():
            body = json.dumps({"content": text, "key": f"k-{name}", "tags": [text[:60]], "metadata": {"v": text}})
            stored = client.post("/api/v1/memory", content=body, headers={"Content-Type": "application/json"})
            assert stored.status_code < 500, (name, stored.text)
            if stored.status_code == 201:
                assert client.get(f"/api/v1/memory/k-{name}").json()["content"] == text
            else:
                assert stored.headers["content-type"].startswith("application/problem+json"), name
            raw = quote(text[:500].encode("utf-8", "surrogatepass"), safe="")  # bytes as a client may send them
            for path in ("/api/v1/memory/search", "/api/v1/memory"):
                assert client.get(f"{path}?q={raw}").status_code < 500, name
            assert client.get(f"/api/v1/memory/{raw[:300]}").status_code < 500, name
        deep_json = '{"a":' * 5000 + "{}" + "}" * 5000  # deeper than any JSON encoder recurses
        deep = client.post("/api/v1/memory", content='{"content": "deep", "metadata": ' + deep_json + "}",
                           headers={"Content-Type": "application/json"})
        assert deep.status_code < 500, deep.text[:300]
        shallow = client.post("/api/v1/memory", json={"content": "nested a little", "metadata": nested(50)})
        assert shallow.status_code < 500
        assert client.get("/api/v1/memory/keeper").json()["content"] == "a memory that must survive"


def test_mcp_corpus(served: Served) -> None:
    async def run() -> None:
        async with Client(_http(served, served.alice)) as client:
            # The MCP client cannot encode a lone surrogate at all (test_hostile_text sends NUL).
            for name, text in ((n, t) for n, t in CORPUS.items() if n != "lone surrogate"):
                stored = await client.call_tool("memory_store", {"key": f"m-{name}", "content": text})
                if not stored.is_error:
                    got = _data(await client.call_tool("get", {"memory_id": f"m-{name}"}))
                    assert got["content"] == text, name
                found = await client.call_tool("recall", {"query": text[:500]})
                assert found.is_error or "results" in _data(found), name

    asyncio.run(run())


@pytest.mark.parametrize("name", ["fts operators", "path traversal", "marker", "control characters", "markup"])
def test_cli_corpus(tmp_path: Path, name: str) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ENGRAM_")}
    env.update(ENGRAM_HOME=str(tmp_path), ENGRAM_EMBEDDINGS__PROVIDER="none")
    text = HOSTILE[name]

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "engram", *args], capture_output=True, text=True, env=env,
                              timeout=120)

    assert cli("remember", text, "--key", "hostile").returncode == 0
    shown = json.loads(cli("--json", "get", "hostile").stdout)
    assert shown["content"] == text
    found = cli("recall", text)
    assert found.returncode == 0 and "Traceback" not in found.stderr
    assert cli("get", text).returncode in (0, 3)  # looked up as a key: found or not found, never a crash
