"""An error names the parameter the client sent, not the engine's field behind it: HTTP's ``?tag=``
(the engine's ``tags``), ``?entity=`` (``related_entity``), ``?q=`` (``query``), the path's
``conversation`` (the history store's ``key``), an import's ``text``/``files`` and ``kind`` (the
engine's ``source`` and ``from``); MCP recall's ``filters.tags``; forget's ``tag`` at every door.
Real server, real sockets."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from mcp import Client

from engram.engine import Engram
from engram.errors import ValidationError
from tests.interfaces.conftest import Served
from tests.interfaces.test_mcp import _error_text, _http

BAD_TAG = "a\x01b"  # not printable: refused by every door's tag check


@pytest.mark.parametrize(("method", "url", "sent", "field"), [
    ("GET", "/api/v1/memory", {"params": {"tag": BAD_TAG}}, "tag"),
    ("GET", "/api/v1/memory", {"params": {"entity": "a\x00"}}, "entity"),
    ("GET", "/api/v1/memory", {"params": {"entity": "e" * 201}}, "entity"),
    ("GET", "/api/v1/memory/search", {"params": {"q": "tea", "tag": BAD_TAG}}, "tag"),
    ("GET", "/api/v1/memory/search", {"params": {"q": "tea", "entity": "a\x00"}}, "entity"),
    ("GET", "/api/v1/memory/search", {"params": {"q": "tea\x00"}}, "q"),
    ("GET", "/api/v1/memory/search", {"params": {"q": " "}}, "q"),
    ("GET", "/api/v1/graph", {"params": {"q": "tea\x00"}}, "q"),
    ("POST", "/api/v1/memory/forget", {"json": {"tag": BAD_TAG}}, "tag"),
    ("GET", "/api/v1/history/no-channel", {}, "conversation"),
    ("POST", "/api/v1/history/no-channel", {"json": {"role": "user", "content": "hi"}}, "conversation"),
    ("POST", "/api/v1/history/no-channel/messages", {"json": {"messages": [{"role": "user", "content": "hi"}]}},
     "conversation"),
    ("GET", "/api/v1/history/no-channel/summary", {}, "conversation"),
    ("DELETE", "/api/v1/history/no-channel", {}, "conversation"),
    ("POST", "/api/v1/import/auto", {"json": {"text": "notes.json"}}, "text"),
    ("POST", "/api/v1/import/auto", {"json": {"files": {"a.md": "x"}}}, "files"),
    ("POST", "/api/v1/import/nonsense", {"json": {"text": "[]"}}, "kind"),
])
def test_http_errors_name_the_parameter_sent(served: Served, method: str, url: str, sent: dict[str, Any],
                                             field: str) -> None:
    with served.client(served.alice) as client:
        answer = client.request(method, url, **sent)
    assert answer.status_code == 422, answer.text
    problem = answer.json()
    assert problem["field"] == field
    assert problem["detail"].startswith(f"{field}: ")


def test_mcp_recall_filters_and_forget_tag_name_the_argument_sent(served: Served) -> None:
    async def run() -> list[str]:
        async with Client(_http(served, served.alice)) as client:
            return [_error_text(await client.call_tool(name, arguments)) for name, arguments in [
                ("recall", {"query": "tea", "filters": {"tags": [BAD_TAG]}}),
                ("recall", {"query": "tea", "filters": {"type": "Not A Word"}}),
                ("recall", {"query": "tea", "filters": {"session_id": "no spaces allowed"}}),
                ("forget", {"tag": BAD_TAG, "dry_run": True}),
            ]]

    texts = asyncio.run(run())
    fields = [text.split("invalid ", 1)[1].split(":", 1)[0] for text in texts]
    assert fields == ["filters.tags", "filters.type", "filters.session_id", "tag"], texts


def test_library_forget_names_its_tag_argument() -> None:
    engram = Engram.from_settings(backend="inmemory")
    with pytest.raises(ValidationError) as refused:
        engram.forget(tag=BAD_TAG)
    assert refused.value.field == "tag"
