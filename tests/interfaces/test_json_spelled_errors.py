"""A refused value is spelt back as JSON spells it, the language every door's input is written in
(a request body, an MCP call, a command line's words): ``got null``, ``got true (a boolean)``,
``unknown category "feelings"``, never Python's ``None``, ``True`` or ``'feelings'``, which the
user never typed. One bad input per message the engine words so; each through the library on a
real SQLite file, and the ones a command line can send through the CLI as a process, whose text is
the library's (the engine owns it; the CLI only presents it)."""

from __future__ import annotations

import asyncio
import math
import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from engram import Engram, Scope
from engram.engine import Filters
from engram.errors import NotFoundError, ValidationError
from tests.interfaces.conftest import Served
from tests.interfaces.test_mcp import _data, _error_text, _http

# Python's spellings of a value: its constants as words, and a value in single quotes (an
# apostrophe inside a word, "a memory's id", is not one).
PYTHON_SPELLING = re.compile(r"\b(None|True|False)\b|(?<!\w)'[^']*'(?!\w)")

Call = Callable[[Engram], Any]

# (name, the library call, the field named, what the message shows of the value, the CLI's words
# for the same input or None where a command line cannot send it: its options are typed)
CASES: list[tuple[str, Call, str, str, tuple[str | bytes, ...] | None]] = [
    ("scope text", lambda m: Scope.parse("nowhere"), "scope", 'cannot read "nowhere"', None),
    ("agent name", lambda m: m.for_agent("a b"), "agent", '"a b" is not a valid name', ("--agent", "a b", "list")),
    ("clear", lambda m: m.update("kept", clear=["colour"]), "clear", '"colour" is not a field of a memory',
     ("update", "kept", "--clear", "colour")),
    ("lone surrogate", lambda m: m.remember("bad \udcff byte"), "content", 'a lone surrogate ("\\udcff")',
     ("remember", b"bad \xff byte")),
    ("wrong type: text", lambda m: m.remember("a new memory", importance="0.5"), "importance", 'got "0.5" (text)', None),
    ("wrong type: null", lambda m: m.forget(tag="garden", dry_run=None), "dry_run", "got null", None),
    ("wrong type: boolean", lambda m: m.list(limit=True), "limit", "got true (a boolean)", None),
    ("wrong type: list", lambda m: m.remember("a new memory", importance=[0.5]), "importance", "got [0.5] (a list)", None),
    ("integer out of range", lambda m: m.list(limit=5000), "limit", "5000 is out of range", ("list", "--limit", "5000")),
    ("not a number", lambda m: m.remember("a new memory", importance=math.nan), "importance", "nan is not a number",
     ("remember", "a new memory", "--importance", "nan")),
    ("number out of range", lambda m: m.remember("a new memory", importance=3.0), "importance", "3.0 is out of range",
     ("remember", "a new memory", "--importance", "3")),
    ("category", lambda m: m.remember("a new memory", category="feelings"), "category", 'unknown category "feelings"',
     ("remember", "a new memory", "--category", "feelings")),
    ("layer", lambda m: m.remember("a new memory", layer="attic"), "layer", 'unknown layer "attic"',
     ("remember", "a new memory", "--layer", "attic")),
    ("type", lambda m: m.remember("a new memory", type="Not A Word!"), "type", '"Not A Word!" is not a type word',
     ("remember", "a new memory", "--type", "Not A Word!")),
    ("role", lambda m: m.history.append("cli:s1", "wizard", "hi"), "role", 'unknown role "wizard"',
     ("history", "append", "cli:s1", "hi", "--role", "wizard")),
    ("tool call not an object", lambda m: m.history.append("cli:s1", "assistant", "hi", tool_calls=[None]),
     "tool_calls", "got null, not an object", ("history", "append", "cli:s1", "hi", "--role", "assistant",
                                               "--tool-calls", "[null]")),
    ("tool call without a name", lambda m: m.history.append("cli:s1", "assistant", "hi", tool_calls=[{"id": "c1"}]),
     "tool_calls.name", 'tool call "c1" has no name', ("history", "append", "cli:s1", "hi", "--role", "assistant",
                                                        "--tool-calls", '[{"id": "c1"}]')),
    ("tool result without its call", lambda m: m.history.append("cli:s1", "tool", "42", tool_call_id="nope"),
     "tool_call_id", 'no tool call "nope" in this conversation', ("history", "append", "cli:s1", "42", "--role",
                                                                  "tool", "--tool-call-id", "nope")),
    # Beyond the record's own fields: the engine's arguments, conversation keys, times.
    ("order", lambda m: m.list(order="sideways"), "order", 'unknown order "sideways"', ("list", "--order", "sideways")),
    ("mode", lambda m: m.recall("tulips", mode="fuzzy"), "mode", 'unknown mode "fuzzy"', None),
    ("touch", lambda m: m.recall("tulips", touch="no"), "touch", 'got "no" (text)', None),
    ("tag", lambda m: m.forget(tag=" , "), "tag", '" , " names no tag', None),
    ("conversation key", lambda m: m.history.append("sess_123", "user", "hi"), "key",
     '"sess_123" names no channel: write where the conversation happens first, e.g. "cli:sess_123"',
     ("history", "append", "sess_123", "hi")),
    ("time", lambda m: m.list(filters=Filters(since="whenever")), "since", 'cannot read "whenever" as a time',
     ("list", "--since", "whenever")),
]


def _open(home: Path) -> Engram:
    return Engram.from_settings(home=home, embeddings={"provider": "none"}, files={"enabled": False})


def _refused(home: Path, call: Call) -> ValidationError:
    with _open(home) as mem:
        if not mem.list():
            mem.remember("the tulip bulbs are in the shed", key="kept", tags=["garden"])
        with pytest.raises(ValidationError) as refused:
            call(mem)
        assert [m.key for m in mem.list()] == ["kept"] and mem.history.recent("cli:s1") == []  # nothing written
    return refused.value


def _cli(home: Path, *args: str | bytes) -> subprocess.CompletedProcess[bytes]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ENGRAM_")}
    env.update(ENGRAM_HOME=str(home), ENGRAM_EMBEDDINGS__PROVIDER="none", ENGRAM_FILES__ENABLED="false",
               COLUMNS="400")  # (no folding inside a message)
    return subprocess.run([sys.executable, "-m", "engram", *args], capture_output=True, env=env, timeout=120)


@pytest.mark.parametrize(("call", "field", "shown"), [pytest.param(c, f, s, id=n) for n, c, f, s, _ in CASES])
def test_the_library_spells_a_refused_value_as_json(tmp_path: Path, call: Call, field: str, shown: str) -> None:
    refused = _refused(tmp_path, call)
    message = str(refused)
    assert refused.field.endswith(field) and message.startswith(f"{refused.field}: "), message
    assert refused.allowed and f"(allowed: {refused.allowed})" in message, message  # says what is allowed
    assert shown in refused.problem, message
    assert not PYTHON_SPELLING.search(message), message


@pytest.mark.parametrize(("call", "args"), [pytest.param(c, a, id=n) for n, c, _, _, a in CASES if a is not None])
def test_the_cli_shows_the_librarys_text(tmp_path: Path, call: Call, args: tuple[str | bytes, ...]) -> None:
    refused = _refused(tmp_path, call)
    done = _cli(tmp_path, *args)
    said = done.stderr.decode("utf-8", "replace")
    assert done.returncode == 2 and "Traceback" not in said, said
    assert refused.problem in said and refused.allowed in said, said
    assert not PYTHON_SPELLING.search(said), said
    with _open(tmp_path) as mem:
        assert [m.key for m in mem.list()] == ["kept"] and mem.history.recent("cli:s1") == []


# The engine's words reach an HTTP client as they are (``detail``, with ``field`` and ``allowed``);
# the fields HTTP's own schema types (category, layer, role, order: JSON Schema's enums) are refused
# by it before the engine is asked, in the engine's words for the same value (``errors.refusal``),
# never pydantic's "Input should be 'core', 'knowledge' or 'conversation'".
HTTP_CASES: list[tuple[str, Call, str, str, dict[str, Any]]] = [
    ("type", lambda m: m.remember("a new memory", type="Not A Word!"),
     "POST", "/api/v1/memory", {"json": {"content": "a new memory", "type": "Not A Word!"}}),
    ("tag", lambda m: m.forget(tag=" , "), "POST", "/api/v1/memory/forget", {"json": {"tag": " , "}}),
    ("tool result without its call", lambda m: m.history.append("cli:s1", "tool", "42", tool_call_id="nope"),
     "POST", "/api/v1/history/cli:s1", {"json": {"role": "tool", "content": "42", "tool_call_id": "nope"}}),
    ("category", lambda m: m.remember("a new memory", category="feelings"),
     "POST", "/api/v1/memory", {"json": {"content": "a new memory", "category": "feelings"}}),
    ("layer", lambda m: m.remember("a new memory", layer="attic"),
     "POST", "/api/v1/memory", {"json": {"content": "a new memory", "layer": "attic"}}),
    ("role", lambda m: m.history.append("cli:s1", "wizard", "hi"),
     "POST", "/api/v1/history/cli:s1", {"json": {"role": "wizard", "content": "hi"}}),
    ("order", lambda m: m.list(order="sideways"), "GET", "/api/v1/memory", {"params": {"order": "sideways"}}),
    ("mode", lambda m: m.recall("tulips", mode="fuzzy"), "GET", "/api/v1/memory/search",
     {"params": {"q": "tulips", "mode": "fuzzy"}}),
]


@pytest.mark.parametrize(("call", "method", "path", "sent"), [pytest.param(c, m, p, s, id=n) for n, c, m, p, s in HTTP_CASES])
def test_http_answers_the_librarys_text(tmp_path: Path, served: Served, call: Call, method: str, path: str,
                                        sent: dict[str, Any]) -> None:
    refused = _refused(tmp_path / "library", call)
    with served.client(served.alice) as http:
        answer = http.request(method, path, **sent)
        problem = answer.json()
        assert answer.status_code == 422 and problem["field"] == refused.field, answer.text
        assert problem["detail"] == str(refused) and not PYTHON_SPELLING.search(problem["detail"]), answer.text
        assert problem["allowed"] == refused.allowed, answer.text
        assert http.get("/api/v1/memory").json()["total"] == 0, "nothing was written"


# The same at MCP (over streamable HTTP, the SDK's own client): the tools' schemas type category,
# order and link's action; a refusal is the library's text under the tool's argument name.
MCP_CASES: list[tuple[str, Call, str, dict[str, Any], str]] = [
    ("category", lambda m: m.remember("a new memory", category="feelings"),
     "remember", {"content": "a new memory", "category": "feelings"}, "category"),
    ("filters.category", lambda m: m.recall("tulips", filters=Filters(category="feelings")),
     "recall", {"query": "tulips", "filters": {"category": "feelings"}}, "filters.category"),
    ("order", lambda m: m.list(order="sideways"), "list", {"order": "sideways"}, "order"),
    ("ptrclaw category", lambda m: m.remember("a new memory", category="feelings"),
     "memory_store", {"key": "k", "content": "a new memory", "category": "feelings"}, "category"),
]


@pytest.mark.parametrize(("call", "tool", "arguments", "wire"),
                         [pytest.param(c, t, a, w, id=n) for n, c, t, a, w in MCP_CASES])
def test_mcp_answers_the_librarys_text(tmp_path: Path, served: Served, call: Call, tool: str,
                                       arguments: dict[str, Any], wire: str) -> None:
    refused = _refused(tmp_path / "library", call)

    async def ask() -> str:
        async with Client(_http(served, served.alice)) as client:
            text = _error_text(await client.call_tool(tool, arguments))
            assert _data(await client.call_tool("list", {}))["count"] == 0, "nothing was written"
            return text

    text = asyncio.run(ask())
    assert text == f"Error executing tool {tool}: invalid {wire}: {refused.reason}", text
    assert not PYTHON_SPELLING.search(text), text


def test_a_ref_that_names_no_memory_is_spelt_as_json_at_every_door(tmp_path: Path, served: Served) -> None:
    # 'memory not found: "no-such"' at each door (was Python's 'no-such'); the ref is the key sent.
    said = 'memory not found: "no-such"'
    with _open(tmp_path / "library") as mem, pytest.raises(NotFoundError) as missing:
        mem.get("no-such")
    assert str(missing.value) == said and missing.value.ref == "no-such"

    done = _cli(tmp_path / "cli", "get", "no-such")
    assert done.returncode == 3 and said in done.stderr.decode(), done.stderr

    with served.client(served.alice) as http:
        answer = http.get("/api/v1/memory/no-such")
        assert answer.status_code == 404 and answer.json()["detail"] == said and answer.json()["ref"] == "no-such"

    async def ask() -> str:
        async with Client(_http(served, served.alice)) as client:
            return _error_text(await client.call_tool("get", {"memory_id": "no-such"}))

    assert asyncio.run(ask()) == f"Error executing tool get: {said}; recall first to find the right memory_id or key"
