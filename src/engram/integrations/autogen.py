"""AutoGen with engram: ``AssistantAgent(..., memory=[EngramMemory(mem)])``.

``EngramMemory`` is an AutoGen ``Memory`` (``autogen_core.memory``) over one engram agent's
memory: the agent of the engine (view) it is given, ``mem.for_agent("alice")`` for another, which
never sees this one's memories.

- **add**: a ``MemoryContent`` of ``text/plain``, ``text/markdown`` or ``application/json``
  becomes one memory of that agent (category ``knowledge``, source ``autogen``). Text is stored
  byte for byte; JSON content (a dict, as AutoGen's ChromaDB memory takes it) as its JSON text.
  The mime type and the content's ``metadata`` are kept in the memory's ``metadata["autogen"]``,
  so ``query`` hands back the content as it was added. Images and binary are refused
  (``ValidationError`` naming ``content.mime_type``), as is anything engram refuses (empty, too
  long, metadata that is not JSON: named ``content.content`` / ``content.metadata``); nothing is
  stored then. The same content added again is one memory (engram's duplicate rule), keeping the
  first one's metadata.
- **query**: engram's hybrid recall over the agent's memories (its own, its session's when the
  view has one, and global ones, as every engram recall), ``k`` results best first (5 by
  default; ``query(..., k=10)`` for one call). Each result's ``metadata`` is the content's own
  plus ``score`` and ``id`` (the engram memory id), the two keys AutoGen's ChromaDB memory sets.
  The content's own metadata is never overwritten: when it has a ``score`` or ``id`` of its own,
  that is kept and engram's goes under ``engram_score`` / ``engram_id`` (and is left out if the
  content has that key too). A memory stored another way (the CLI, MCP)
  comes back as ``text/plain``. The query is a string or a text/markdown/JSON ``MemoryContent``;
  a blank one finds nothing. Reading is a use of the memories (``recall.touch_on_recall``), as
  every adapter's automatic read and engram's own injection: what AutoGen puts before the model
  is what the agent uses, and the lifecycle jobs purge memories that stay unused.
- **update_context**: as AutoGen's own memories do, the latest user message's text is the
  query, and the memories found are added to the model context as one ``SystemMessage``
  ("Relevant memory content:" and a numbered list, JSON as its text); nothing is added when
  nothing is found or there is no user message with text.
- **clear** forgets every memory in the agent's own scope (and the view's session's), each
  with an audit record (reason ``autogen clear``), after the automatic backup engram takes
  before a bulk forget. Global memories belong to every agent and are left; so is every other
  agent's.
- **close** closes the store when this memory opened it (from a config); one it was given stays open.

Declarative configs (AutoGen Studio, ``dump_component`` / ``load_component``): the config holds
the engram home, agent, session and ``k``, and the backend and its file (``path``) when they are
not the defaults, so a store chosen in code (``Engram.from_settings(path=...)``) reopens as the
same store; never a PostgreSQL URL (it may hold a password). Built from a config, the memory opens
that store (``Engram.from_settings(home=..., agent=...)``: the home's config file and ``ENGRAM_*``
variables apply) on first use, in a worker thread, and closes it in ``close()``; without a
``home``, the configured one (``ENGRAM_HOME``, ``~/.engram``). A memory given an engine dumps
that engine's home, so it needs one opened from settings (``Engram.from_settings``); a store
built by hand cannot be named in a config and is refused with ``ValidationError`` naming ``engram``.

Every engine call runs in a worker thread, never blocking the event loop; an ``AsyncEngram`` may
be given too. A cancelled ``CancellationToken`` stops the await, not work a thread has started.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Self, TypeVar

from engram.aio import AsyncEngram
from engram.engine import Engram, Filters
from engram.errors import StorageError, ValidationError
from engram.integrations import checked_call, missing, refuse_unknown
from engram.model import MAX_RECALL_LIMIT, Hit, make_scope, parse_limit

try:
    from autogen_core import CancellationToken, Component
    from autogen_core.memory import Memory as AutoGenMemory
    from autogen_core.memory import MemoryContent, MemoryMimeType, MemoryQueryResult, UpdateContextResult
    from autogen_core.model_context import ChatCompletionContext
    from autogen_core.models import LLMMessage, SystemMessage, UserMessage
    from pydantic import BaseModel, ConfigDict
except ImportError as exc:  # pragma: no cover - the extra is installed in development
    raise missing("autogen", "autogen-core") from exc

ORIGIN = "autogen"
DEFAULT_K = 5
# What engram can hold: text. Images and binary have no text to store or search.
_TEXT_TYPES = (MemoryMimeType.TEXT, MemoryMimeType.MARKDOWN, MemoryMimeType.JSON)
_ALLOWED_TYPES = ", ".join(m.value for m in _TEXT_TYPES)
# Engram's own field names, as the MemoryContent that carried them calls them.
_CONTENT_FIELDS = {"content": "content.content", "metadata": "content.metadata"}
T = TypeVar("T")


# What opens a store, in the order a mistake is named.
_OPENING = ("home", "agent", "session", "backend", "path")


class EngramMemoryConfig(BaseModel):
    """What ``EngramMemory.load_component`` reopens: the engram home (None: the configured one),
    the backend and its file when not the configured ones (a store chosen in code:
    ``Engram.from_settings(path=..., backend=...)``), the agent (None: the configured one) and
    session, and how many memories a query returns."""

    model_config = ConfigDict(extra="forbid")  # a mistyped key ("limit") is refused, not ignored

    home: str | None = None
    backend: str | None = None
    path: str | None = None
    agent: str | None = None
    session: str | None = None
    k: int = DEFAULT_K

    # A config is checked before pydantic sees it, as engram's errors naming the key, by the rules
    # ``EngramMemory`` applies to the same arguments: pydantic read ``"k": "5"`` as 5 and refused
    # ``"k": "x"`` or a mistyped key in its own words. ``load_component`` validates the config
    # through ``model_validate``, code through the constructor.
    def __init__(self, **data: Any) -> None:
        _check_config(data)
        super().__init__(**data)

    @classmethod
    def model_validate(cls, obj: Any, **kwargs: Any) -> EngramMemoryConfig:
        if isinstance(obj, Mapping):
            _check_config(obj)
        return super().model_validate(obj, **kwargs)


def _check_config(data: Mapping[str, Any]) -> None:
    """Raises ``ValidationError`` naming a key of an ``EngramMemoryConfig`` it does not have, a
    ``k`` that is not 1 to 100, or a store argument that is not a string or None."""
    refuse_unknown("EngramMemoryConfig", data, EngramMemoryConfig.model_fields)
    if "k" in data:
        parse_limit(data["k"], MAX_RECALL_LIMIT, "k", paged=False)
    for name in _OPENING:
        if data.get(name) is not None and not isinstance(data[name], str):
            raise ValidationError(name, f"got {type(data[name]).__name__}", "a string, or None")


class EngramMemory(AutoGenMemory, Component[EngramMemoryConfig]):
    """AutoGen memory over one engram agent's memories: what an agent adds, and what is recalled
    into its model context before each model call."""

    component_type = "memory"
    component_provider_override = "engram.integrations.autogen.EngramMemory"
    component_config_schema = EngramMemoryConfig
    component_description = "Long-term memory kept in engram: what the agent adds, recalled before each model call."

    @checked_call("{owner}(mem), or {owner}(home=..., agent=...) to open a store")
    def __init__(self, engram: Engram | AsyncEngram | None = None, *, k: int = DEFAULT_K,
                 home: str | None = None, agent: str | None = None, session: str | None = None,
                 backend: str | None = None, path: str | None = None) -> None:
        """``engram``: the ``Engram`` or ``AsyncEngram`` (view) whose agent this memory is. Without
        one, ``home``, ``agent``, ``session``, ``backend`` and ``path`` (the store's file) say which
        store to open (``Engram.from_settings``, on first use; ``close()`` closes it); they are
        refused beside an engine. ``k``: how many memories a query returns (1 to 100). Raises
        ``ValidationError`` naming the argument."""
        self.k = parse_limit(k, MAX_RECALL_LIMIT, "k", paged=False)
        self._opening: dict[str, str] = {}
        self._engram: Engram | None = None
        self._owned = engram is None
        self._closed = False
        self._lock = threading.Lock()
        opening = tuple(zip(_OPENING, (home, agent, session, backend, path), strict=True))
        if engram is None:
            _check_config(dict(opening))
            if agent is not None or session is not None:
                make_scope(agent or "default", session)  # a bad name is refused now, not on first use
            self._opening = {name: value for name, value in opening if value is not None}
            return
        given = next((name for name, value in opening if value is not None), None)
        if given is not None:
            raise ValidationError(given, "opens a store, and an engine was given",
                                  "an engine (its view names the agent: mem.for_agent(...)), or "
                                  "home/agent/session/backend/path alone")
        if isinstance(engram, AsyncEngram):
            engram = engram.engram
        if not isinstance(engram, Engram):
            raise ValidationError("engram", f"got {type(engram).__name__}", "an Engram or AsyncEngram")
        # The same agent and session; changes made through AutoGen are recorded as its own.
        self._engram = engram.for_agent(engram.scope.agent or "default", engram.scope.session, origin=ORIGIN)

    # --- the engine -----------------------------------------------------------------------------
    @property
    def engram(self) -> Engram:
        """The engine this memory acts through (a view of the one given, or the store it opened,
        opened now if not yet). Raises ``StorageError`` once this memory is closed."""
        return self._engine()

    def _engine(self) -> Engram:
        """The engine, opened on first use when this memory was built from a config (in a worker
        thread: opening a store and loading an embedding model must not block the event loop)."""
        with self._lock:
            if self._closed:
                raise StorageError("this EngramMemory is closed: make a new one")
            if self._engram is None:
                self._engram = Engram.from_settings(origin=ORIGIN, **self._opening)  # type: ignore[arg-type]
            return self._engram

    async def _run(self, token: CancellationToken | None, work: Callable[..., T], *args: Any) -> T:
        task = asyncio.ensure_future(asyncio.to_thread(work, *args))
        if token is not None:
            token.link_future(task)
        return await task

    # --- AutoGen's memory -----------------------------------------------------------------------
    async def add(self, content: MemoryContent, cancellation_token: CancellationToken | None = None) -> None:
        item = _item(content)
        await self._run(cancellation_token, self._add, item)

    async def query(self, query: str | MemoryContent = "", cancellation_token: CancellationToken | None = None,
                    **kwargs: Any) -> MemoryQueryResult:
        """The memories most relevant to ``query``, best first. ``k`` may be given for this call;
        any other keyword is refused, naming it."""
        unknown = sorted(set(kwargs) - {"k"})
        if unknown:
            raise ValidationError(unknown[0], "is not a query option of EngramMemory", "k")
        k = parse_limit(kwargs.get("k", self.k), MAX_RECALL_LIMIT, "k", paged=False)
        text = _query_text(query)
        if not text.strip():
            return MemoryQueryResult(results=[])
        hits = await self._run(cancellation_token, self._recall, text, k)
        return MemoryQueryResult(results=[_content(hit) for hit in hits])

    async def update_context(self, model_context: ChatCompletionContext) -> UpdateContextResult:
        text = _latest_user_text(await model_context.get_messages())
        if not text.strip():
            return UpdateContextResult(memories=MemoryQueryResult(results=[]))
        hits = await asyncio.to_thread(self._recall, text, self.k)
        if hits:
            # As AutoGen's ChromaDB memory words it; a memory's text as stored (JSON as its text).
            listed = "\n".join(f"{i}. {hit.memory.content}" for i, hit in enumerate(hits, 1))
            await model_context.add_message(SystemMessage(content="\nRelevant memory content:\n" + listed))
        return UpdateContextResult(memories=MemoryQueryResult(results=[_content(hit) for hit in hits]))

    async def clear(self) -> None:
        await asyncio.to_thread(self._clear)

    async def close(self) -> None:
        """Close the store when this memory opened it; one it was given stays open."""
        with self._lock:
            if self._closed or not self._owned:
                return
            self._closed = True
            engram = self._engram
        if engram is not None:
            await asyncio.to_thread(engram.close)

    # --- in the worker thread -------------------------------------------------------------------
    def _add(self, item: dict[str, Any]) -> None:
        try:
            self._engine().remember(**item)
        except ValidationError as exc:
            raise ValidationError(_CONTENT_FIELDS.get(exc.field, exc.field), exc.problem, exc.allowed) from None

    def _recall(self, text: str, k: int) -> tuple[Hit, ...]:
        return self._engine().recall(text, limit=k).hits

    def _clear(self) -> None:
        self._engine().forget_own(filters=Filters(include_superseded=True), reason="autogen clear")

    # --- declarative config ---------------------------------------------------------------------
    def _to_config(self) -> EngramMemoryConfig:
        if not self._owned:
            assert self._engram is not None
            settings = self._engram.settings
            if settings is None:
                raise ValidationError("engram", "was not opened from settings, so a config cannot name its store",
                                      "an engine from Engram.from_settings(...), or EngramMemory(home=...)")
            # The store as its settings chose it: the home, and the backend and its file when not
            # the defaults (a file chosen in code, ``path=``, would otherwise reopen as the home's
            # ``memory.db``). Never ``database_url``: it may hold a password; PostgreSQL's comes
            # from the environment or the config file again.
            return EngramMemoryConfig(home=str(settings.home),
                                      backend=None if settings.backend == "sqlite" else settings.backend,
                                      path=None if settings.path is None else str(settings.path),
                                      agent=self._engram.scope.agent, session=self._engram.scope.session, k=self.k)
        return EngramMemoryConfig(**self._opening, k=self.k)

    @classmethod
    def _from_config(cls, config: EngramMemoryConfig) -> Self:
        return cls(k=config.k, home=config.home, agent=config.agent, session=config.session,
                   backend=config.backend, path=config.path)


def _mime(content: MemoryContent, field: str) -> MemoryMimeType:
    """The content's mime type if engram can hold it; ``ValidationError`` on ``field`` otherwise."""
    value = content.mime_type
    try:
        mime = value if isinstance(value, MemoryMimeType) else MemoryMimeType(value)
    except ValueError:
        mime = None
    if mime not in _TEXT_TYPES:
        shown = value.value if isinstance(value, MemoryMimeType) else value
        raise ValidationError(field, f"{shown!r} cannot be kept in engram, which holds text", _ALLOWED_TYPES)
    assert mime is not None
    return mime


def _text(content: MemoryContent, mime: MemoryMimeType, field: str) -> str:
    """The text a text, markdown or JSON content is stored (or searched) as."""
    value = content.content
    if mime is MemoryMimeType.JSON:
        if not isinstance(value, dict):
            raise ValidationError(field, f"got {type(value).__name__} for application/json", "a dict (a JSON object)")
        try:
            return json.dumps(value, ensure_ascii=False, allow_nan=False)
        except (TypeError, ValueError) as exc:
            raise ValidationError(field, f"is not JSON ({exc})", "a dict of JSON values") from None
    if not isinstance(value, str):
        raise ValidationError(field, f"got {type(value).__name__} for {mime.value}", "a string")
    return value


def _item(content: MemoryContent) -> dict[str, Any]:
    """``remember``'s arguments for ``content``; errors name the ``MemoryContent`` field."""
    if not isinstance(content, MemoryContent):
        raise ValidationError("content", f"got {type(content).__name__}", "an autogen_core.memory.MemoryContent")
    mime = _mime(content, "content.mime_type")
    text = _text(content, mime, "content.content")
    mine: dict[str, Any] = {"mime_type": mime.value}
    if content.metadata:
        mine["metadata"] = content.metadata
    return {"content": text, "metadata": {"autogen": mine}, "source": ORIGIN}


def _query_text(query: str | MemoryContent) -> str:
    if isinstance(query, str):
        return query
    if isinstance(query, MemoryContent):
        return _text(query, _mime(query, "query.mime_type"), "query.content")
    raise ValidationError("query", f"got {type(query).__name__}", "a string or a MemoryContent")


def _content(hit: Hit) -> MemoryContent:
    """A recalled memory as the ``MemoryContent`` that was added, its score and id in its metadata."""
    memory = hit.memory
    mine = memory.metadata.get("autogen")
    mine = mine if isinstance(mine, Mapping) else {}
    own = mine.get("metadata")
    metadata = dict(own) if isinstance(own, Mapping) else {}
    # AutoGen's ChromaDB memory sets "score" and "id"; the content's own keys of those names are
    # the user's data and are kept, engram's then going beside them (never over them).
    for name, value in (("score", hit.score), ("id", memory.id)):
        for slot in (name, f"engram_{name}"):
            if slot not in metadata:
                metadata[slot] = value
                break
    if mine.get("mime_type") == MemoryMimeType.JSON.value:
        try:
            value = json.loads(memory.content)
        except ValueError:
            value = None  # edited since into text that is not JSON: handed back as text
        if isinstance(value, dict):
            return MemoryContent(content=value, mime_type=MemoryMimeType.JSON, metadata=metadata)
    mime = MemoryMimeType.MARKDOWN if mine.get("mime_type") == MemoryMimeType.MARKDOWN.value else MemoryMimeType.TEXT
    return MemoryContent(content=memory.content, mime_type=mime, metadata=metadata)


def _latest_user_text(messages: Sequence[LLMMessage]) -> str:
    """The text of the latest user message (its text parts, images left out), or ``""``."""
    for message in reversed(messages):
        if isinstance(message, UserMessage):
            if isinstance(message.content, str):
                return message.content
            return "\n".join(part for part in message.content if isinstance(part, str))
    return ""
