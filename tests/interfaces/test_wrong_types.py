"""A value of the wrong type is refused, naming the field and the type allowed, never converted:
the library took importance="0.5", HTTP read "dry_run": "yes" as true and true as 1 day, MCP
read "5" as a limit, and a limit of the wrong type was called "out of range". Library on a real
SQLite file, HTTP over a real socket, MCP with the SDK's client over streamable HTTP; the CLI
reads words, and turns them into values before they reach the engine."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from mcp import Client

from engram.engine import Engram
from engram.errors import ValidationError
from tests.interfaces.conftest import Served
from tests.interfaces.test_mcp import _error_text, _http


@pytest.fixture
def mem(tmp_path: Path):
    with Engram.from_settings(home=tmp_path, embeddings={"provider": "none"}, files={"enabled": False}) as engram:
        engram.remember("the tulip bulbs are in the shed", key="kept", tags=["garden"])
        yield engram


@pytest.mark.parametrize(("call", "field", "allowed"), [
    (lambda m: m.remember("a new memory", importance="0.5"), "importance", "a number from 0 to 1"),
    (lambda m: m.remember("a new memory", importance=[0.5]), "importance", "a number from 0 to 1"),
    (lambda m: m.update("kept", importance="0.9"), "importance", "a number from 0 to 1"),
    (lambda m: m.recall("tulip", limit="5"), "limit", "an integer, 1 to 100"),
    (lambda m: m.list(limit=5.5), "limit", "an integer, 1 to 1000"),
    (lambda m: m.recall("tulip", depth=1.5), "depth", "an integer, 0 to 3"),
    (lambda m: m.forget(tag="garden", dry_run=np.float64(0)), "dry_run", "true or false"),
    (lambda m: m.list(limit=True), "limit", "an integer, 1 to 1000"),
    (lambda m: m.list(offset="1"), "offset", "an integer, 0 to 1000000000"),
    (lambda m: m.recall("tulip", min_relevance="0.1"), "min_relevance", "a number from 0 to 1"),
    (lambda m: m.recall("tulip", depth="1"), "depth", "an integer, 0 to 3"),
    (lambda m: m.forget(tag="garden", dry_run="no"), "dry_run", "true or false"),
    (lambda m: m.forget(older_than_s="5"), "older_than_s", "a number of seconds, 0 or more"),
    (lambda m: m.forget(older_than_s=True), "older_than_s", "a number of seconds, 0 or more"),
    (lambda m: m.recall(5), "query", "some text to search for"),  # was "must not be empty"
    (lambda m: m.get(5), "ref", "a memory id or key"),
    (lambda m: m.remember("a new memory", key=5), "key", "text, 1-200 printable characters"),  # was stored as "5"
    (lambda m: m.remember_many([{"content": "a new memory", "key": 5.0}]), "items[0].key", "text, 1-200"),
])
def test_the_library_refuses_a_wrong_type_naming_the_field_and_the_type(
        mem: Engram, call: Callable[[Engram], Any], field: str, allowed: str) -> None:
    with pytest.raises(ValidationError) as refused:
        call(mem)
    assert refused.value.field == field and refused.value.allowed.startswith(allowed), str(refused.value)
    # Not a value out of range, nor an empty one: not a value of the type.
    assert "out of range" not in str(refused.value) and "empty" not in str(refused.value)
    assert mem.get("kept").importance == 0.5 and mem.count() == 1  # nothing changed ("no" was a forget)


def test_a_number_of_the_right_type_still_passes(mem: Engram) -> None:
    assert mem.remember("an int importance", importance=1).memory.importance == 1.0
    assert mem.forget(tag="garden", dry_run=True)[0].key == "kept"
    assert [h.memory.key for h in mem.recall("tulip", limit=5, depth=1, min_relevance=0)] == ["kept"]


def test_a_number_is_a_number_whatever_its_python_type(mem: Engram) -> None:
    # A whole float is an integer (JSON Schema's "integer" takes 5.0, and MCP and HTTP read it so),
    # and numpy's numbers are numbers (a score a model gave): each was refused as "got float",
    # "got int64", "got float32", or "got bool np.True_ (allowed: true or false)".
    assert [m.key for m in mem.list(limit=5.0, offset=0.0)] == ["kept"]
    assert [h.memory.key for h in mem.recall("tulip", limit=np.int64(5), depth=1.0,
                                             min_relevance=np.float32(0))] == ["kept"]
    stored = mem.remember("a numpy importance", importance=np.float32(0.25)).memory
    assert stored.importance == 0.25 and type(stored.importance) is float
    assert mem.remember("a numpy int importance", importance=np.int64(1)).memory.importance == 1.0
    assert [m.key for m in mem.forget(tag="garden", dry_run=np.bool_(True))] == ["kept"]
    assert mem.forget(older_than_s=np.int64(10**9), dry_run=True) == []
    assert mem.count() == 3


@pytest.mark.parametrize(("path", "body", "field"), [
    ("/api/v1/memory/forget", {"tag": "garden", "dry_run": "yes"}, "dry_run"),
    ("/api/v1/memory/forget", {"tag": "garden", "dry_run": 1}, "dry_run"),
    ("/api/v1/memory/forget", {"older_than_days": True, "dry_run": True}, "older_than_days"),
    ("/api/v1/memory/forget", {"older_than_days": "3"}, "older_than_days"),
    ("/api/v1/memory", {"content": "a new memory", "key": 5}, "key"),
])
def test_http_refuses_a_wrong_type_naming_the_field_and_the_type(served: Served, path: str, body: dict,
                                                                  field: str) -> None:
    with served.client(served.alice) as http:
        assert http.post("/api/v1/memory", json={"content": "the tulip bulbs are in the shed",
                                                 "tags": ["garden"]}).status_code == 201
        answer = http.post(path, json=body)
        assert answer.status_code == 422, answer.text
        problem = answer.json()
        assert problem["field"] == field and "Input should be a valid" in problem["detail"], problem
        assert [m["content"] for m in http.get("/api/v1/memory").json()["memories"]] == [
            "the tulip bulbs are in the shed"]  # nothing stored, nothing forgotten


def test_mcp_refuses_a_wrong_type_naming_the_argument_and_the_type(served: Served) -> None:
    async def run() -> None:
        async with Client(_http(served, served.alice)) as client:
            _ = await client.call_tool("remember", {"content": "the tulip bulbs are in the shed", "tags": ["garden"]})
            for name, arguments, said in (
                    ("forget", {"tag": "garden", "dry_run": "yes"}, "invalid dry_run: Input should be a valid boolean"),
                    ("forget", {"older_than_days": True}, "invalid older_than_days: Input should be a valid number"),
                    ("recall", {"query": "tulips", "limit": "5"}, "invalid limit: Input should be a valid integer"),
                    ("list", {"limit": True}, "invalid limit: Input should be a valid integer"),
                    ("list", {"limit": 5.5}, "invalid limit: Input should be a valid integer"),
                    ("remember", {"content": "a new memory", "key": 5}, "invalid key: Input should be a valid string")):
                text = _error_text(await client.call_tool(name, arguments))
                assert text == f"Error executing tool {name}: {said}", text
            listed = await client.call_tool("list", {})
            assert [m["content"] for m in listed.structured_content["memories"]] == ["the tulip bulbs are in the shed"]
            # A whole number sent as a float is the integer: the tool's schema says "integer", which takes 5.0.
            assert len((await client.call_tool("list", {"limit": 5.0, "offset": 0.0})).structured_content["memories"]) == 1
            assert not (await client.call_tool("recall", {"query": "tulips", "limit": 5.0, "depth": 1.0})).is_error
            # A list sent as JSON text (as some clients send them) is still read.
            assert not (await client.call_tool("recall", {"query": "tulips", "filters": '{"tags": ["garden"]}'})).is_error

    asyncio.run(run())


def test_http_reads_a_whole_float_as_an_integer(served: Served) -> None:
    # As the library and MCP do (JSON Schema's "integer" takes 5.0); 5.5 is still refused.
    with served.client(served.alice) as http:
        assert http.post("/api/v1/memory", json={"content": "my puppy is called Rex"}).status_code == 201
        found = http.post("/api/memory/semantic-recall", json={"input": "puppy", "topK": 2.0})
        assert found.status_code == 200, found.text
        refused = http.post("/api/memory/semantic-recall", json={"input": "puppy", "topK": 2.5})
        assert refused.status_code == 422 and refused.json()["field"] == "topK", refused.text
        assert http.get("/api/v1/memory", params={"limit": "5.0"}).status_code == 200
