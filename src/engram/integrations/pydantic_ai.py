"""Pydantic AI with engram: memory tools for an agent, and its message history kept in engram.

``Agent(model, toolsets=[EngramToolset(mem)])`` gives the agent ``remember``, ``recall``,
``forget`` and ``versions`` (a memory's earlier contents; reads only) tools acting on ``mem``'s
agent (an ``AsyncEngram``; ``mem.for_agent("alice")`` for another agent), never on another
agent's memories. A bad argument is the engine's own error,
sent back to the model as a retry prompt naming the field and what is allowed (the text engram's
MCP tools give); a memory that is not there is a failed tool result telling the model to recall
first. Any other engram error (the store failed, settings unusable) is raised from the run: the
application, not the model, has to act on it.

``EngramMessageStore(engram)`` keeps a conversation's ``ModelMessage`` list in the history of the
engine's agent, conversation ``pydantic-ai:<conversation_id>``::

    history = store.messages("user-42")
    result = await agent.run(prompt, message_history=history)
    store.save("user-42", result.new_messages())

Each message is kept whole in its history message's metadata, as Pydantic AI's own
``ModelMessagesTypeAdapter`` writes it to JSON, and read back through the same adapter, so a
saved list loads equal to what was saved. The history message's text is the message's text (a
user prompt, a response's text) when it has some, else the message as JSON, so the conversation
reads naturally in ``engram history`` and on the page; it is cut at the history's message limit
(``integrations.history_text``), so a message of any size (an image's base64) is saved. ``save`` is all or nothing: the run's
messages are validated together and appended in one write (``History.append_many``), so a
refused message or a failed write leaves none of the run saved. History settings apply:
``history.max_history_len`` trims the oldest messages, and ``messages(limit=)`` reads the latest,
either of which can cut a tool call from its return: Pydantic AI repairs a history before each
request (it drops a return whose call is missing), so the pairing is left to it.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from engram.aio import AsyncEngram
from engram.engine import Engram, Filters
from engram.errors import NotFoundError, ValidationError
from engram.history.keys import PART_ALLOWED, conversation_key
from engram.integrations import checked_call, history_text, keywords, missing, refuse_unknown, tool_docs
from engram.interfaces import tool_calls
from engram.interfaces.present import error_text, tool_recall, tool_write
from engram.model import parse_integer, usable_json, usable_text

try:
    from pydantic_ai import FunctionToolset
    from pydantic_ai.exceptions import ModelRetry, ToolFailed
    from pydantic_ai.messages import ModelMessage, ModelMessagesTypeAdapter, ModelRequest, ModelResponse
    from pydantic_core import PydanticSerializationError
except ImportError as exc:  # pragma: no cover - the extra is installed in development
    raise missing("pydantic-ai", "pydantic-ai-slim") from exc

CHANNEL = "pydantic-ai"


@contextmanager
def _for_the_model() -> Iterator[None]:
    """Engram's errors that the model caused, as Pydantic AI tool results the model reads."""
    try:
        yield
    except ValidationError as exc:
        raise ModelRetry(error_text(exc)) from exc  # fix the argument and call again
    except NotFoundError as exc:
        raise ToolFailed(error_text(exc)) from exc  # the same call would fail again


class EngramToolset(FunctionToolset[Any]):
    """``remember``, ``recall``, ``forget`` and ``versions`` tools over one engram agent's memory."""

    @checked_call("{owner}(AsyncEngram(mem))", engram="an AsyncEngram")
    def __init__(self, engram: AsyncEngram, *, id: str | None = "engram", max_retries: int | None = None,  # noqa: A002
                 **unknown: Any) -> None:
        """``engram``: the ``AsyncEngram`` (view) whose agent the tools act for. ``id`` names the
        toolset among an agent's toolsets; ``max_retries`` is how often the model may retry a
        call whose arguments were refused (None: the agent's default). Raises ``ValidationError``
        naming the argument (Pydantic AI took an ``id`` of 1 or ``max_retries="x"`` unchecked, to fail
        later), or any other keyword."""
        refuse_unknown("EngramToolset", unknown, keywords(EngramToolset.__init__))
        if not isinstance(engram, AsyncEngram):
            raise ValidationError("engram", f"got {type(engram).__name__}",
                                  "an AsyncEngram (AsyncEngram(engram) wraps an Engram)")
        if id is not None and (not isinstance(id, str) or not id.strip()):
            raise ValidationError("id", f"got {id!r}", "a non-empty toolset id, or None")
        if max_retries is not None:
            max_retries = parse_integer(max_retries, "max_retries", 0,
                                        allowed="a count of retries, 0 or more, or None (the agent's default)")
        self.engram = engram
        super().__init__([self.remember, self.recall, self.forget, self.versions], id=id, max_retries=max_retries,
                         docstring_format="google", require_parameter_descriptions=True)

    async def remember(self, content: str, key: str | None = None, tags: list[str] | None = None,
                       category: str = "knowledge", type: str | None = None,  # noqa: A002
                       importance: float = 0.5) -> dict[str, Any]:
        with _for_the_model():
            result = await self.engram.remember(content, key=key, tags=tags, category=category, type=type,
                                                importance=importance)
        return tool_write(result)

    async def recall(self, query: str, limit: int | None = None, min_relevance: float | None = None,
                     tags: list[str] | None = None) -> dict[str, Any]:
        with _for_the_model():
            result = await self.engram.recall(query, limit=limit, min_relevance=min_relevance,
                                              filters=None if tags is None else Filters(tags=tags))
        return tool_recall(result.hits, result.notes)

    async def forget(self, memory_id: str | None = None, key: str | None = None, query: str | None = None,
                     tag: str | None = None, older_than_days: float | None = None, reason: str | None = None,
                     dry_run: bool = False) -> dict[str, Any]:
        with _for_the_model():
            return await tool_calls.aforget(self.engram, memory_id, key, query, tag, older_than_days, reason, dry_run)

    async def versions(self, memory_id: str | None = None, key: str | None = None) -> dict[str, Any]:
        with _for_the_model():
            return await tool_calls.aversions(self.engram, memory_id, key)

    # What the model is shown (the same text as Agno's toolset).
    remember.__doc__, recall.__doc__, forget.__doc__ = tool_docs.REMEMBER, tool_docs.RECALL, tool_docs.FORGET
    versions.__doc__ = tool_docs.VERSIONS


def _text(message: ModelMessage) -> str:
    """The text a person reads of ``message``: its user prompts' text (a prompt given as a list,
    text beside an image, gives its strings) or its response's text parts."""
    kind = "user-prompt" if isinstance(message, ModelRequest) else "text"
    texts: list[str] = []
    for part in message.parts:
        if part.part_kind != kind:
            continue
        if isinstance(part.content, str):
            texts.append(part.content)
        elif kind == "user-prompt" and isinstance(part.content, Sequence):
            texts.extend(piece for piece in part.content if isinstance(piece, str))
    return "\n".join(texts)


def _readable(message: ModelMessage, whole: Any) -> str:
    """The history message's text: what a person reads of ``message`` as it was written (the
    conversation's text, byte for byte), or the whole message as JSON when it holds no text to
    read (a tool call or return)."""
    text = _text(message)
    return text if text.strip() else json.dumps(whole, ensure_ascii=False)


def _whole(message: ModelMessage, i: int) -> Any:
    """``message`` as the JSON its history message keeps (``metadata["message"]``). Raises
    ``ValidationError`` naming ``messages[i].content`` for a text no store holds (a NUL, a lone
    surrogate), else ``messages[i]`` for another part holding one (a tool call's arguments) or
    one that cannot be written as JSON: a lone surrogate there was pydantic's own serialization
    error, naming no message, and a NUL was named as the history's ``metadata``."""
    usable_text(f"messages[{i}].content", _text(message))
    try:
        whole = json.loads(ModelMessagesTypeAdapter.dump_json([message]))[0]
    except PydanticSerializationError as exc:
        raise ValidationError(f"messages[{i}]", f"cannot be written as JSON ({exc})",
                              "parts of valid Unicode text (no lone surrogate) and JSON values") from None
    usable_json(f"messages[{i}]", whole)
    return whole


class EngramMessageStore:
    """Pydantic AI conversations (``ModelMessage`` lists) kept in an engram agent's history."""

    @checked_call("{owner}(mem)")
    def __init__(self, engram: Engram | AsyncEngram, **unknown: Any) -> None:
        """``engram``: the engine (or view) whose agent's history holds the conversations. Raises
        ``ValidationError`` naming ``engram``, or any other keyword."""
        refuse_unknown("EngramMessageStore", unknown, keywords(EngramMessageStore.__init__))
        if isinstance(engram, AsyncEngram):
            engram = engram.engram
        if not isinstance(engram, Engram):
            raise ValidationError("engram", f"got {type(engram).__name__}", "an Engram or AsyncEngram")
        self.engram = engram

    @staticmethod
    def key(conversation_id: str) -> str:
        """The engram history key of a conversation (``pydantic-ai:<conversation_id>``)."""
        try:
            return conversation_key(CHANNEL, conversation_id)
        except ValidationError as exc:
            raise ValidationError("conversation_id", exc.problem, PART_ALLOWED) from None

    def messages(self, conversation_id: str, *, limit: int | None = None) -> list[ModelMessage]:
        """The conversation's messages, oldest first (the latest ``limit`` when given); empty when
        nothing was saved: what ``agent.run(..., message_history=...)`` takes."""
        key = self.key(conversation_id)
        if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 0):
            raise ValidationError("limit", f"{limit!r} is not a count", "a count >= 0, or None for all")
        history = self.engram.history
        stored = history.all(key) if limit is None else history.recent(key, limit) if limit else []
        kept = [m.metadata["message"] for m in stored if "message" in m.metadata]
        return ModelMessagesTypeAdapter.validate_json(json.dumps(kept))

    def save(self, conversation_id: str, messages: Sequence[ModelMessage]) -> None:
        """Append ``messages`` (a run's ``result.new_messages()``) to the conversation, all or none:
        one that engram refuses (its text holds a NUL, say) raises ``ValidationError`` naming it
        (``messages[2].content``) and none of them is saved; so does a failed write."""
        key = self.key(conversation_id)
        messages = list(messages)
        if not messages:  # nothing new in the run: nothing to save (the history refuses an empty batch)
            return
        for i, message in enumerate(messages):
            # The adapter writes anything else as it can, with a warning: it would load as nothing.
            if not isinstance(message, ModelRequest | ModelResponse):
                raise ValidationError(f"messages[{i}]", f"got {type(message).__name__}",
                                      "Pydantic AI messages: ModelRequest or ModelResponse")
        whole = [_whole(message, i) for i, message in enumerate(messages)]
        # One batch: a message refused (``messages[2].content``) or a failed write saves none of the run.
        # Each at its own time (transcripts and the history's age show when it was said), else now.
        self.engram.history.append_many(key, [
            {"role": "user" if isinstance(message, ModelRequest) else "assistant",
             "content": history_text(_readable(message, item)),
             "metadata": {"message": item},
             "created_at": None if message.timestamp is None else message.timestamp.timestamp()}
            for message, item in zip(messages, whole, strict=True)
        ])

    def clear(self, conversation_id: str) -> None:
        """Delete the conversation's messages."""
        self.engram.history.purge(self.key(conversation_id))

    # The same, off the event loop, for async code.
    async def amessages(self, conversation_id: str, *, limit: int | None = None) -> list[ModelMessage]:
        return await asyncio.to_thread(self.messages, conversation_id, limit=limit)

    async def asave(self, conversation_id: str, messages: Sequence[ModelMessage]) -> None:
        await asyncio.to_thread(self.save, conversation_id, list(messages))

    async def aclear(self, conversation_id: str) -> None:
        await asyncio.to_thread(self.clear, conversation_id)
