"""An update clears the optional fields it is asked to, and refuses to clear one every memory has,
naming it - at every door that edits: the library, HTTP PATCH (null; see test_http_memory_keys),
MCP's update tool (``clear``, over HTTP with the SDK client) and ``engram update`` (``--clear``)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from mcp import Client

from engram.errors import ValidationError
from tests.interfaces.conftest import Served
from tests.interfaces.test_mcp import _data, _error_text, _http
from tests.unit.test_cli import engram

FULL = {"content": "Deploys run on Fridays", "key": "deploy", "tags": ["ops"], "related_entity": "ci",
        "source": "wiki", "valid_until": "2026-06-01"}


def test_library_update_clears_named_fields_and_keeps_the_rest(served: Served) -> None:
    lib = served.engram.for_agent("alice")
    lib.remember(**FULL)
    lib.update("deploy", clear=["valid_until", "related_entity"])
    got = lib.get("deploy")
    assert (got.valid_until, got.related_entity, got.source, got.tags) == (None, None, "wiki", ("ops",))
    # Each named as ``clear``, the argument that asked (``content`` is another argument, not given).
    for bad in (["content"], ["importance"], ["colour"]):
        with pytest.raises(ValidationError) as caught:
            lib.update("deploy", clear=bad)
        assert caught.value.field == "clear" and json.dumps(bad[0]) in str(caught.value)
        # The field a refused clear names travels on the error, for a door that clears by the field
        # itself (HTTP PATCH's null) to name it without reading the message; "colour" is no field.
        assert caught.value.names == (None if bad == ["colour"] else bad[0])
    with pytest.raises(ValidationError) as caught:
        lib.update("deploy", source="chat", clear=["source"])
    assert caught.value.field == "source" and lib.get("deploy").source == "wiki"


def test_mcp_update_clears_what_clear_names_and_keeps_what_is_null(served: Served) -> None:
    async def run() -> None:
        async with Client(_http(served, served.alice)) as alice:
            _data(await alice.call_tool("remember", {"content": FULL["content"], "key": "deploy", "tags": ["ops"],
                                                     "valid_until": "2026-06-01"}))
            # null is "leave it": a model fills optional arguments with null.
            _data(await alice.call_tool("update", {"memory_id": "deploy", "tags": None, "importance": 0.7}))
            kept = _data(await alice.call_tool("get", {"memory_id": "deploy"}))
            assert kept["tags"] == ["ops"] and kept["valid_until"] is not None
            _data(await alice.call_tool("update", {"memory_id": "deploy", "clear": ["valid_until", "tags"]}))
            now = _data(await alice.call_tool("get", {"memory_id": "deploy"}))
            assert now["valid_until"] is None and now["tags"] == [] and now["importance"] == 0.7
            refused = _error_text(await alice.call_tool("update", {"memory_id": "deploy", "clear": ["content"]}))
            assert 'invalid clear: "content" cannot be cleared' in refused, refused
            async with Client(_http(served, served.bob)) as bob:
                assert "not found" in _error_text(
                    await bob.call_tool("update", {"memory_id": "deploy", "clear": ["tags"]}))

    asyncio.run(run())
    assert served.engram.for_agent("alice").get("deploy").content == FULL["content"]


def test_cli_update_changes_given_fields_and_clears_named_ones(isolated_home: Path) -> None:
    made = engram(isolated_home, "remember", FULL["content"], "--key", "deploy", "--tags", "ops", "--entity", "ci",
                  "--source", "wiki", "--valid-until", "2026-06-01")
    assert made.returncode == 0, made.stderr
    changed = engram(isolated_home, "update", "deploy", "--importance", "0.8", "--clear", "valid_until",
                     "--clear", "related_entity")
    assert changed.returncode == 0, changed.stderr
    got = json.loads(engram(isolated_home, "--json", "get", "deploy").stdout)
    assert (got["valid_until"], got["related_entity"], got["source"], got["tags"], got["importance"]) == (
        None, None, "wiki", ["ops"], 0.8)
    refused = engram(isolated_home, "update", "deploy", "--clear", "content")
    assert refused.returncode != 0 and "content" in refused.stderr and "cannot be cleared" in refused.stderr
    assert json.loads(engram(isolated_home, "--json", "get", "deploy").stdout)["content"] == FULL["content"]


def test_mcp_update_sets_entity_source_and_valid_times_as_the_library_does(served: Served) -> None:
    async def run() -> None:
        async with Client(_http(served, served.alice)) as alice:
            _data(await alice.call_tool("remember", {"content": FULL["content"], "key": "deploy"}))
            _data(await alice.call_tool("update", {
                "memory_id": "deploy", "related_entity": "ci", "source": "wiki", "valid_from": "2026-01-01",
                "valid_until": "2026-06-01T00:00:00Z"}))
            got = _data(await alice.call_tool("get", {"memory_id": "deploy"}))
            assert (got["related_entity"], got["source"]) == ("ci", "wiki")
            assert got["valid_from"] < got["valid_until"] == served.engram.time.instant("2026-06-01T00:00:00Z", "x")
            for args, field in (({"valid_from": "2026-13-45"}, "valid_from"),
                                ({"valid_until": "2025-01-01"}, "valid_until"),  # before valid_from
                                ({"related_entity": "x" * 201}, "related_entity"),
                                ({"source": "wiki", "clear": ["source"]}, "source")):
                refused = _error_text(await alice.call_tool("update", {"memory_id": "deploy", **args}))
                assert f"invalid {field}:" in refused, (args, refused)
            assert _data(await alice.call_tool("get", {"memory_id": "deploy"})) == got  # nothing half-changed
            async with Client(_http(served, served.bob)) as bob:
                assert "not found" in _error_text(
                    await bob.call_tool("update", {"memory_id": "deploy", "related_entity": "bob"}))

    asyncio.run(run())
    assert served.engram.for_agent("alice").get("deploy").related_entity == "ci"


def test_mcp_remember_sets_entity_and_source_as_update_does(served: Served) -> None:
    async def run() -> None:
        async with Client(_http(served, served.alice)) as alice:
            _data(await alice.call_tool("remember", {"content": FULL["content"], "key": "deploy",
                                                     "related_entity": "ci", "source": "wiki"}))
            got = _data(await alice.call_tool("get", {"key": "deploy"}))
            assert (got["related_entity"], got["source"]) == ("ci", "wiki")
            refused = _error_text(await alice.call_tool("remember", {"content": "x", "related_entity": "x" * 201}))
            assert "invalid related_entity:" in refused, refused

    asyncio.run(run())
    assert [m.key for m in served.engram.for_agent("alice").list(limit=10)] == ["deploy"]  # the refused one stored nothing


def test_cli_update_sets_entity_source_and_valid_times_naming_a_bad_one(isolated_home: Path) -> None:
    assert engram(isolated_home, "remember", FULL["content"], "--key", "deploy").returncode == 0
    changed = engram(isolated_home, "update", "deploy", "--entity", "ci", "--source", "wiki",
                     "--valid-from", "2026-01-01", "--valid-until", "2026-06-01")
    assert changed.returncode == 0, changed.stderr
    got = json.loads(engram(isolated_home, "--json", "get", "deploy").stdout)
    assert (got["related_entity"], got["source"]) == ("ci", "wiki") and got["valid_from"] < got["valid_until"]
    # Each named by the option typed (the engine's valid_from, valid_until, related_entity).
    for args, field in ((("--valid-from", "2026-13-45"), "--valid-from:"), (("--valid-until", "2025-01-01"), "--valid-until:"),
                        (("--entity", "x" * 201), "--entity:")):
        refused = engram(isolated_home, "update", "deploy", *args)
        assert refused.returncode == 2 and field in refused.stderr, (args, refused.stderr)
    assert json.loads(engram(isolated_home, "--json", "get", "deploy").stdout) == got
