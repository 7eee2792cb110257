"""Strands Agents with engram: ``Agent(model=..., tools=[EngramTools(mem)])``.

``EngramTools`` is a Strands ``ToolProvider`` (the interface Strands gives a package that ships a
set of tools, as its MCP client does) handing the agent ``remember``, ``recall``, ``forget`` and
``versions`` (a memory's earlier contents; reads only) tools over one engram agent's memory: the
agent of the engine (view) it is given, ``mem.for_agent("support-bot")`` for another, which never
sees this one's memories. The tools are Strands' own ``@tool`` function tools, so their docstrings
(``tool_docs``) and parameters are what the model is shown; results are JSON text, the shapes
engram's MCP tools return.

Given an ``Engram`` the tools are synchronous, and Strands runs them in a worker thread (it does
so for any sync tool); given an ``AsyncEngram`` they are coroutines, awaited on the agent's loop,
going through the ``AsyncEngram``'s writer and reader threads (remembers made together share one
batch). Strands runs ``agent(...)`` and ``invoke_async`` through the same async tool executor, so
one kind per toolkit serves both.

Errors. A Strands function tool answers with a result whose ``status`` is ``success`` or
``error``. An argument engram refuses, or a memory that is not there, is returned as an
``error`` result in engram's MCP tool words (``invalid importance: ...``, ``memory not found:
...; recall first ...``), with nothing stored: the model reads it as a failed call it can
correct, and nothing is raised or logged. Any other engram error (the store failed) is left to
Strands, which also shows the model an ``error`` result (``Error: StorageError - ...``) and hands
the exception to the application's ``AfterToolCallEvent`` hooks (``event.exception``).

Per user. Strands has no user of its own: no run carries a user id that Strands fills and the
model cannot set (``invocation_state`` is a free dict of the application's, with no user key).
So nothing is mapped: one toolkit is one engram agent, chosen where it is built
(``EngramTools(mem.for_agent(agent_for_ids("strands:", user_id=user_id)))``, one agent per id
whatever it holds, beside the per-user ``Agent`` that holds that user's conversation anyway).

Strands' sessions (``RepositorySessionManager`` over a ``SessionRepository``) are not kept in
engram: a repository updates its records in place (the agent's state on every sync, a message a
guardrail redacts), and engram's conversation history only appends.

Strands' own memory (``strands.memory``: ``MemoryManager`` with its ``search_memory`` and
``add_memory`` tools, injection and extraction) takes ``EngramMemoryStore`` instead, importable
from here and kept in ``strands_memory.py``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from engram.aio import AsyncEngram
from engram.engine import Engram, Filters
from engram.errors import NotFoundError, ValidationError
from engram.integrations import checked_call, keywords, missing, refuse_unknown, tool_docs
from engram.integrations.strands_memory import EngramMemoryStore  # Strands' own memory, in its own module
from engram.interfaces import tool_calls
from engram.interfaces.present import error_text, tool_recall, tool_write

try:
    from strands.tools import ToolProvider, tool
    from strands.types.tools import AgentTool
except ImportError as exc:  # pragma: no cover - the extra is installed in development
    raise missing("strands", "strands-agents") from exc

__all__ = ["EngramMemoryStore", "EngramTools"]

NAMES = ("remember", "recall", "forget", "versions")
# What the model caused and can correct: returned to it, never raised.
_REFUSED = (ValidationError, NotFoundError)


def _refused(exc: ValidationError | NotFoundError) -> dict[str, Any]:
    """Strands' ``error`` tool result, in engram's MCP tool words: the model reads it as a failed
    call (the tool's ``toolUseId`` is filled in by Strands)."""
    return {"status": "error", "content": [{"text": error_text(exc)}]}


def _json(value: dict[str, Any]) -> str:
    # Strands sends a string result to the model as it is: JSON, the MCP tools' shapes.
    return json.dumps(value, ensure_ascii=False)


class EngramTools(ToolProvider):
    """``remember``, ``recall``, ``forget`` and ``versions`` tools over one engram agent's memory."""

    @checked_call("{owner}(mem)")
    def __init__(self, engram: Engram | AsyncEngram, **unknown: Any) -> None:
        """``engram``: the ``Engram`` (synchronous tools) or ``AsyncEngram`` (async tools) whose
        agent the tools act for. Raises ``ValidationError`` naming ``engram``, or any other keyword."""
        refuse_unknown("EngramTools", unknown, keywords(EngramTools.__init__))
        if isinstance(engram, AsyncEngram):
            functions: tuple[Callable[..., Any], ...] = (self.aremember, self.arecall, self.aforget, self.aversions)
        elif isinstance(engram, Engram):
            functions = (self.remember, self.recall, self.forget, self.versions)
        else:
            raise ValidationError("engram", f"got {type(engram).__name__}", "an Engram or AsyncEngram")
        self.engram = engram
        self.tools: list[AgentTool] = [tool(name=name)(f) for name, f in zip(NAMES, functions, strict=True)]

    # --- Strands' ToolProvider: the tools, and consumers (nothing to open or close: the engine is
    # the application's, closed where it was opened) ----------------------------------------------
    async def load_tools(self, **kwargs: Any) -> Sequence[AgentTool]:
        return list(self.tools)

    def add_consumer(self, consumer_id: Any, **kwargs: Any) -> None:
        pass

    def remove_consumer(self, consumer_id: Any, **kwargs: Any) -> None:
        pass

    # --- the tools (docstrings and parameters are what the model is shown) ----------------------
    def _sync(self) -> Engram:
        assert isinstance(self.engram, Engram)  # the sync tools are registered only with one
        return self.engram

    def _async(self) -> AsyncEngram:
        assert isinstance(self.engram, AsyncEngram)
        return self.engram

    def remember(self, content: str, key: str | None = None, tags: list[str] | None = None,
                 category: str = "knowledge", type: str | None = None,  # noqa: A002
                 importance: float = 0.5) -> str | dict[str, Any]:
        try:
            result = self._sync().remember(content, key=key, tags=tags, category=category, type=type,
                                           importance=importance)
        except _REFUSED as exc:
            return _refused(exc)
        return _json(tool_write(result))

    def recall(self, query: str, limit: int | None = None, min_relevance: float | None = None,
               tags: list[str] | None = None) -> str | dict[str, Any]:
        try:
            result = self._sync().recall(query, limit=limit, min_relevance=min_relevance,
                                         filters=None if tags is None else Filters(tags=tags))
        except _REFUSED as exc:
            return _refused(exc)
        return _json(tool_recall(result.hits, result.notes))

    def forget(self, memory_id: str | None = None, key: str | None = None, query: str | None = None,
               tag: str | None = None, older_than_days: float | None = None, reason: str | None = None,
               dry_run: bool = False) -> str | dict[str, Any]:
        try:
            return _json(tool_calls.forget(self._sync(), memory_id, key, query, tag, older_than_days, reason, dry_run))
        except _REFUSED as exc:
            return _refused(exc)

    def versions(self, memory_id: str | None = None, key: str | None = None) -> str | dict[str, Any]:
        try:
            return _json(tool_calls.versions(self._sync(), memory_id, key))
        except _REFUSED as exc:
            return _refused(exc)

    # --- the same, awaited (an AsyncEngram's); shown the model the same docstrings (below) -----
    async def aremember(self, content: str, key: str | None = None, tags: list[str] | None = None,
                        category: str = "knowledge", type: str | None = None,  # noqa: A002
                        importance: float = 0.5) -> str | dict[str, Any]:
        try:
            result = await self._async().remember(content, key=key, tags=tags, category=category, type=type,
                                                  importance=importance)
        except _REFUSED as exc:
            return _refused(exc)
        return _json(tool_write(result))

    async def arecall(self, query: str, limit: int | None = None, min_relevance: float | None = None,
                      tags: list[str] | None = None) -> str | dict[str, Any]:
        try:
            result = await self._async().recall(query, limit=limit, min_relevance=min_relevance,
                                                filters=None if tags is None else Filters(tags=tags))
        except _REFUSED as exc:
            return _refused(exc)
        return _json(tool_recall(result.hits, result.notes))

    async def aforget(self, memory_id: str | None = None, key: str | None = None, query: str | None = None,
                      tag: str | None = None, older_than_days: float | None = None, reason: str | None = None,
                      dry_run: bool = False) -> str | dict[str, Any]:
        try:
            return _json(await tool_calls.aforget(self._async(), memory_id, key, query, tag, older_than_days,
                                                  reason, dry_run))
        except _REFUSED as exc:
            return _refused(exc)

    async def aversions(self, memory_id: str | None = None, key: str | None = None) -> str | dict[str, Any]:
        try:
            return _json(await tool_calls.aversions(self._async(), memory_id, key))
        except _REFUSED as exc:
            return _refused(exc)

    # What the model is shown, one text for both variants (and for the other frameworks' toolsets).
    remember.__doc__ = aremember.__doc__ = tool_docs.REMEMBER
    recall.__doc__ = arecall.__doc__ = tool_docs.RECALL
    forget.__doc__ = aforget.__doc__ = tool_docs.FORGET
    versions.__doc__ = aversions.__doc__ = tool_docs.VERSIONS
