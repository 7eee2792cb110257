"""MCP's ranged numbers (importance, min_relevance, older_than_days) say what is wrong as every
other door says it. A client may write NaN and Infinity as JSON words (Python's json does), and
the server reads them: pydantic's bounds told NaN it "should be less than or equal to 1", and NaN
days reached the engine as NaN seconds, refused naming ``older_than_s``, an argument the tool has
not. The engine's check now names the argument, calls NaN not a number and gives the range, and
nothing is stored. A raw JSON-RPC client on stdio, as the SDK's own client sends NaN as null."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from engram.engine import Engram

ALLOWED_0_1 = "(allowed: a number from 0 to 1)"


class RawClient:
    """``engram --agent alice mcp`` spoken to line by line, arguments written as raw JSON text."""

    def __init__(self, home: Path) -> None:
        env = {k: v for k, v in os.environ.items() if not k.startswith("ENGRAM_")}
        env.update(ENGRAM_HOME=str(home), ENGRAM_EMBEDDINGS__PROVIDER="none")
        self.process = subprocess.Popen([sys.executable, "-m", "engram", "--agent", "alice", "mcp"], env=env, text=True,
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.next_id = 0
        self.request("initialize", '{"protocolVersion": "2025-06-18", "capabilities": {}, '
                                   '"clientInfo": {"name": "raw", "version": "1"}}')
        self._send('{"jsonrpc": "2.0", "method": "notifications/initialized"}')

    def _send(self, line: str) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(line + "\n")
        self.process.stdin.flush()

    def request(self, method: str, params: str) -> dict:
        self.next_id += 1
        self._send(f'{{"jsonrpc": "2.0", "id": {self.next_id}, "method": "{method}", "params": {params}}}')
        assert self.process.stdout is not None
        answer = json.loads(self.process.stdout.readline())
        assert answer["id"] == self.next_id, answer
        return answer["result"]

    def call(self, tool: str, arguments: str) -> tuple[bool, str]:
        result = self.request("tools/call", f'{{"name": "{tool}", "arguments": {arguments}}}')
        return result.get("isError", False), result["content"][0]["text"]

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait(timeout=60)


@pytest.fixture
def raw(tmp_path: Path):
    client = RawClient(tmp_path)
    try:
        yield client
    finally:
        client.close()


@pytest.mark.parametrize(("tool", "arguments", "said"), [
    ("remember", '{"content": "odd", "importance": NaN}', "invalid importance: nan is not a number " + ALLOWED_0_1),
    ("remember", '{"content": "odd", "importance": Infinity}', "invalid importance: inf is out of range " + ALLOWED_0_1),
    ("remember", '{"content": "odd", "importance": -0.5}', "invalid importance: -0.5 is out of range " + ALLOWED_0_1),
    ("update", '{"key": "kept", "importance": NaN}', "invalid importance: nan is not a number " + ALLOWED_0_1),
    ("recall", '{"query": "kept", "min_relevance": NaN}', "invalid min_relevance: nan is not a number " + ALLOWED_0_1),
    ("recall", '{"query": "kept", "min_relevance": 1.5}', "invalid min_relevance: 1.5 is out of range " + ALLOWED_0_1),
    ("forget", '{"older_than_days": NaN}', "invalid older_than_days: nan is not a number (allowed: a number, 0 or more)"),
    ("forget", '{"older_than_days": -1}', "invalid older_than_days: -1.0 is out of range (allowed: a number, 0 or more)"),
])
def test_ranged_numbers_are_refused_naming_the_argument_and_the_range(
        raw: RawClient, tmp_path: Path, tool: str, arguments: str, said: str) -> None:
    assert raw.call("remember", '{"content": "already stored", "key": "kept", "importance": 0.7}')[0] is False
    failed, text = raw.call(tool, arguments)
    assert failed, text
    assert text == f"Error executing tool {tool}: {said}", text
    raw.close()
    with Engram.from_settings(home=tmp_path, agent="alice", embeddings={"provider": "none"}) as engram:
        assert [(m.key, m.content, m.importance) for m in engram.list()] == [("kept", "already stored", 0.7)]


def test_the_schemas_still_show_the_ranges(raw: RawClient) -> None:
    tools = {t["name"]: t["inputSchema"]["properties"] for t in raw.request("tools/list", "{}")["tools"]}
    assert tools["remember"]["importance"]["minimum"] == 0 and tools["remember"]["importance"]["maximum"] == 1
    assert tools["remember"]["importance"]["description"]
    bounds = [{"minimum": 0, "maximum": 1}, {"type": "null"}]
    assert [{k: v for k, v in option.items() if k != "type"} or option for option in tools["recall"]["min_relevance"][
        "anyOf"]] == bounds
    assert tools["forget"]["older_than_days"]["anyOf"][0]["minimum"] == 0
    assert tools["update"]["importance"]["anyOf"][0]["maximum"] == 1


def test_list_takes_the_engines_maximum_as_every_door_does(raw: RawClient) -> None:
    # The tool's schema allowed at most 100 while HTTP and the CLI list up to the engine's 1000.
    from engram.model import MAX_LIST_LIMIT

    listed = raw.request("tools/list", "{}")
    schema = next(tool for tool in listed["tools"] if tool["name"] == "list")["inputSchema"]
    assert schema["properties"]["limit"]["maximum"] == MAX_LIST_LIMIT
    assert raw.call("remember", '{"content": "one memory"}')[0] is False
    error, text = raw.call("list", '{"limit": 500}')
    assert error is False and "one memory" in text, text
    error, text = raw.call("list", f'{{"limit": {MAX_LIST_LIMIT + 1}}}')
    assert error is True and "limit" in text, text
