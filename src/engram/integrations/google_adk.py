"""Google ADK with engram: ``Runner(agent=..., memory_service=EngramMemoryService(mem), ...)``.

``EngramMemoryService`` is an ADK ``BaseMemoryService``: what ADK's ``load_memory`` and
``preload_memory`` tools search, and what ``add_session_to_memory`` (``tool_context``'s, a
callback's, or ``adk api_server``'s) fills. Memory in ADK is per user of an app, so each
``(app_name, user_id)`` is its own engram agent, ``adk:<app_name>:<user_id>``: users never read or
delete each other's memories, and the prefix keeps them apart from the application's own agents.
Every call goes through that agent's view (``Engram.for_agent``), so with one database per agent
(``per_agent_databases``) a user's memories are written to and searched in that user's database.
Letters, digits and ``._-`` are kept; any other character is written ``@`` and the hex of its
UTF-8 bytes (``José`` is ``Jos@c3@a9``, ``ana@example.com`` is ``ana@40example.com``), and a name
past 128 characters ends in ``@@`` and a digest, so no two (app, user) pairs share an agent,
whatever ids an application lets its users choose.

What is stored. Each event of a session with text becomes one memory (its text parts, thoughts
left out, joined by a line break; category ``knowledge``, type ``conversation``; the event's time
as its time); events with no text (function calls and responses alone) and streaming fragments
(``partial``) are left out, as ADK's own SQLite service leaves them. The event's ``Content`` is kept
whole in ``metadata["adk"]`` with its author, session and event id, so a search hands back exactly
what was added. Writing goes through engram's import path: the events of one call are stored and
embedded together, all or none; an event already added (ADK adds the whole session again after
every turn) is skipped by its id, and one ``delete_memory`` removed is not added back (the audit
trail's record). An add of new events takes no backup (``before_risky``'s, which an import of a
file takes): one a turn would prune every older backup away; one that changes memories already
stored does. ``add_memory`` stores explicit ``MemoryEntry`` items the same way (type
``learned``). One with its own ``id`` is one memory per user and id: added again (another time,
text, author or metadata), it brings what changed to that memory (``Record.refresh``, the rule
Zep's rewritten facts follow; the text's digest kept at ``metadata["google-adk"]``), as ADK's
SQLite service upserts an event it holds; a text changed in engram since is kept, and one
``delete_memory`` removed is not added back, each said in a warning in the log. One without an
id is its text (and time). An event engram cannot store as it is (text longer than
``max_content_chars``; a NUL or a lone surrogate in its text, author, id or other parts) is left
out with a warning in the log naming it (``events[2].content.parts``) rather than failing the
agent's turn, never cut; an explicit item engram refuses raises ``ValidationError`` naming it
(``memories[1].content.parts``, ``memories[1].author``), storing none, and so does a call's
``app_name`` or ``session_id`` holding one (every memory of the call would keep it).

Why ``knowledge``: a past session is what a user expects the agent to remember, and engram's
hygiene expires ``conversation`` memories after seven days; ``knowledge`` stays while it is
recalled (idle for 30 days, it may decay). ``category="conversation"`` chooses the other.

``search_memory`` is engram's hybrid recall over that user's memories (``limit`` results, 10 by
default); a blank query finds nothing, as in ADK's services. Each ``MemoryEntry`` carries an id
``delete_memory`` takes: the entry's own for one added with an id (kept in ``metadata["adk"]``),
else the memory's engram id, which still names it too. Ids are per user: another user's, a key, a
global memory's never match. Added again as an entry's id, an engram id the user holds names that
memory (``Record.engram_id``).

ADK's service registry (``services.yaml`` beside the agents) can build it from a URI:
``engram://`` opens the configured store (``ENGRAM_HOME``, ``~/.engram``), ``engram:///path/to/home``
another data folder; ``adk web --memory_service_uri=engram://``.

Every call runs in a worker thread, never blocking the event loop.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import threading
from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlparse

from engram.aio import AsyncEngram
from engram.engine import Engram
from engram.errors import ValidationError
from engram.importers.apply import apply_plan
from engram.importers.base import Plan, Record, record_id
from engram.integrations import agent_for_ids, checked_call, checked_prefix, missing, refuse_unknown
from engram.model import Category, Memory, parse_content, parse_metadata, usable_json, usable_text
from engram.temporal.instants import python_isoformat

try:
    from google.adk.memory import BaseMemoryService
    from google.adk.memory.base_memory_service import SearchMemoryResponse
    from google.adk.memory.memory_entry import MemoryEntry
    from google.genai import types
except ImportError as exc:  # pragma: no cover - the extra is installed in development
    raise missing("google-adk", "google-adk") from exc

if TYPE_CHECKING:
    from google.adk.events.event import Event
    from google.adk.sessions.session import Session

log = logging.getLogger(__name__)

KIND = "google-adk"
DEFAULT_AGENT_PREFIX = "adk:"
_UNKNOWN_SESSION = "__unknown_session_id__"  # ADK's own services' name for events added without one
# The service's keywords: its own, and the one ADK's service registry passes beside ``uri``
# (google.adk.cli.utils.service_factory: ``create_memory_service(uri, agents_dir=...)``).
_KEYWORDS = ("engram", "uri", "agent_prefix", "limit", "category", "agents_dir")


class EngramMemoryService(BaseMemoryService):
    """ADK's memory service over engram: one engram agent per ``(app_name, user_id)``."""

    @checked_call("{owner}(mem), or {owner}(uri='engram://')")
    def __init__(self, engram: Engram | AsyncEngram | None = None, *, uri: str | None = None,
                 agent_prefix: str = DEFAULT_AGENT_PREFIX, limit: int = 10,
                 category: str = Category.KNOWLEDGE.value, agents_dir: str | None = None, **unknown: Any) -> None:
        """``engram``: the ``Engram`` or ``AsyncEngram`` whose store holds the memories (its own
        agent is not used: each user of each app gets ``agent_prefix`` + ``app_name:user_id``).
        Without one, ``uri`` (``engram://`` or ``engram:///path/to/home``, what ADK's service
        registry passes) opens the configured store, which ``close()`` closes. ``limit``: how many
        memories a search returns. ``category``: of the memories events become. ``agents_dir`` is
        what ADK's registry passes beside ``uri`` (the agents' folder), not used. Raises
        ``ValidationError`` naming the argument, and any other keyword (a mistyped ``limt=5``
        would otherwise leave ``limit`` at 10, unsaid)."""
        refuse_unknown("EngramMemoryService", unknown, _KEYWORDS)
        if engram is not None and uri is not None:  # one of them would be left unused, unsaid
            raise ValidationError("uri", "opens a store, and an engine was given",
                                  "an engine (EngramMemoryService(mem)), or uri='engram://...' alone")
        if engram is None:
            self.engram, self._owned = _open(uri), True
        elif isinstance(engram, AsyncEngram):
            self.engram, self._owned = engram.engram, False
        elif isinstance(engram, Engram):
            self.engram, self._owned = engram, False
        else:
            raise ValidationError("engram", f"got {type(engram).__name__}", "an Engram or AsyncEngram")
        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= 100:
            raise ValidationError("limit", f"got {limit!r}", "a whole number from 1 to 100")
        try:
            self.category = Category(category)
        except ValueError:
            raise ValidationError("category", f"got {category!r}",
                                  ", ".join(c.value for c in Category)) from None
        self.agent_prefix = checked_prefix("agent_prefix", agent_prefix, DEFAULT_AGENT_PREFIX)
        self.limit = limit
        # One write at a time: ADK may add the same session from two callbacks at once, and the
        # import path decides what is new by reading first.
        self._writing = threading.Lock()

    # --- whose memory -------------------------------------------------------------------------
    def agent_for(self, app_name: str, user_id: str) -> str:
        """The engram agent holding ``user_id``'s memories in ``app_name``: ``<prefix><app>:<user>``,
        written by ``integrations.agent_for_ids``, so two different pairs never share an agent.
        Raises ``ValidationError`` naming ``app_name`` or ``user_id`` when one is not a non-empty
        string, and ``app_name`` when, with an empty prefix, it does not start with a letter or digit."""
        return agent_for_ids(self.agent_prefix, app_name=app_name, user_id=user_id)

    def _view(self, app_name: str, user_id: str, *, reading: bool = False) -> Engram:
        # ``reading``: a search makes no database for a user with none yet (``Engram.for_agent``).
        return self.engram.for_agent(self.agent_for(app_name, user_id), origin=KIND, reading=reading)

    # --- ADK's memory service ------------------------------------------------------------------
    async def add_session_to_memory(self, session: Session) -> None:
        await self.add_events_to_memory(app_name=session.app_name, user_id=session.user_id,
                                        events=session.events, session_id=session.id)

    async def add_events_to_memory(self, *, app_name: str, user_id: str, events: Sequence[Event],
                                   session_id: str | None = None,
                                   custom_metadata: Mapping[str, object] | None = None) -> None:
        agent = self.agent_for(app_name, user_id)
        _check_metadata(custom_metadata)
        _check_kept_text("app_name", app_name)
        if session_id is not None:
            _check_kept_text("session_id", session_id)
        records = [record for i, event in enumerate(events)
                   if (record := self._event_record(event, i, agent, app_name, session_id, custom_metadata))]
        await asyncio.to_thread(self._store, app_name, user_id, records)

    async def add_memory(self, *, app_name: str, user_id: str, memories: Sequence[MemoryEntry],
                         custom_metadata: Mapping[str, object] | None = None) -> None:
        agent = self.agent_for(app_name, user_id)
        _check_metadata(custom_metadata)
        _check_kept_text("app_name", app_name)
        if isinstance(memories, str | bytes | MemoryEntry):  # iterated, a string is one-letter entries
            raise ValidationError("memories", f"got {type(memories).__name__}", "a list of MemoryEntry")
        memories = list(memories)
        for i, entry in enumerate(memories):
            if not isinstance(entry, MemoryEntry):  # was an AttributeError on .content
                raise ValidationError(f"memories[{i}]", f"got {type(entry).__name__}", "a google.adk MemoryEntry")
        records = [record for i, entry in enumerate(memories)
                   if (record := self._entry_record(entry, i, agent, app_name, custom_metadata))]
        # What an explicit write leaves out (an id delete_memory removed, a new text engram's own
        # edit keeps) is the caller's to know; a session added again leaves out deleted turns daily.
        await asyncio.to_thread(self._store, app_name, user_id, records, logging.WARNING)

    async def search_memory(self, *, app_name: str, user_id: str, query: str) -> SearchMemoryResponse:
        view = self._view(app_name, user_id, reading=True)
        if not isinstance(query, str):
            raise ValidationError("query", f"got {type(query).__name__}", "a string")
        if not query.strip():
            return SearchMemoryResponse()
        result = await asyncio.to_thread(view.recall, query, limit=self.limit)
        return SearchMemoryResponse(memories=[_entry(hit.memory) for hit in result.hits])

    async def delete_memory(self, *, app_name: str, user_id: str, memory_id: str | None = None) -> None:
        view = self._view(app_name, user_id)
        if not memory_id:
            return
        if not isinstance(memory_id, str):
            raise ValidationError("memory_id", f"got {type(memory_id).__name__}", "a memory's id, as search_memory gives it")
        await asyncio.to_thread(self._delete, view, memory_id)

    def close(self) -> None:
        """Close the store when this service opened it (from a URI); one it was given stays open."""
        if self._owned:
            self.engram.close()

    # --- records -------------------------------------------------------------------------------
    def _event_record(self, event: Event, i: int, agent: str, app_name: str, session_id: str | None,
                      custom_metadata: Mapping[str, object] | None) -> Record | None:
        if event.partial or event.content is None:
            return None
        text = _text(event.content)
        if not text:
            return None
        session = session_id or _UNKNOWN_SESSION
        # ADK's own services key an event without an id by its author, time and content alike.
        content_json = event.content.model_dump(mode="json", exclude_none=True)
        event_id = event.id or hashlib.sha256(
            f"{event.author}:{event.timestamp}:{event.content.model_dump_json(exclude_none=True)}".encode()
        ).hexdigest()[:32]
        adk: dict[str, Any] = {"app_name": app_name, "session_id": session, "event_id": event_id,
                               "author": event.author, "content": content_json}
        if custom_metadata:
            adk["custom_metadata"] = dict(custom_metadata)
        return self._record(f"events[{i}]", f"{session}/{event_id}", text, agent, adk, event.timestamp,
                            self.category, "conversation", id_field="id", lenient=True)

    def _entry_record(self, entry: MemoryEntry, i: int, agent: str, app_name: str,
                      custom_metadata: Mapping[str, object] | None) -> Record | None:
        text = _text(entry.content)
        if not text:
            raise ValidationError(f"memories[{i}].content", "has no text part", "a Content with a text part")
        adk: dict[str, Any] = {"app_name": app_name, "author": entry.author,
                               "content": entry.content.model_dump(mode="json", exclude_none=True)}
        merged = {**(custom_metadata or {}), **entry.custom_metadata}
        if merged:
            adk["custom_metadata"] = merged
        when = _parse_time(entry.timestamp, f"memories[{i}].timestamp")
        # Refused before the text and id are hashed (a lone surrogate was Python's UnicodeEncodeError there).
        problem = self._refusal(f"memories[{i}]", text, {**adk, "id": entry.id})
        if problem is not None:
            raise problem
        if not entry.id:  # the same text again (at the same time) is the same memory
            return self._record(f"memories[{i}]", f"memory-text/{hashlib.sha256(text.encode()).hexdigest()}", text,
                                agent, adk, when, Category.KNOWLEDGE, "learned", id_field=None)
        # An entry with its own id is that memory, whenever it is added again: its id is fixed by
        # the user's agent and the entry's id alone, not its time, and added again it brings its new
        # text, author, metadata and time (``refresh``), as ADK's SQLite service upserts an event it
        # holds. The time is kept here as given, since the memory's ``created_at`` is where it began.
        if when is not None:
            adk["timestamp"] = python_isoformat(when)
        # The id is the caller's, so a search returns it and delete_memory takes it; the id a
        # search gave (an engram id this user holds, of an event or an entry without one) names
        # that memory (``engram_id``).
        adk["id"] = entry.id
        record = self._record(f"memories[{i}]", _entry_source(entry.id), text, agent, adk, when, Category.KNOWLEDGE,
                              "learned", id_field="id")
        return replace(record, refresh=True, time_in_id=False, engram_id=entry.id) if record else None

    def _record(self, where: str, source_id: str, text: str, agent: str, adk: dict[str, Any],
                when: float | None, category: Category, type_: str, *, id_field: str | None,
                lenient: bool = False) -> Record | None:
        if lenient:
            # An event ADK adds on its own: one engram cannot store must not fail the agent's turn.
            problem = self._refusal(where, text, adk)
            if problem is not None:
                log.warning("google-adk: %s (%s) left out of memory: it %s (allowed: %s%s)", problem.field, source_id,
                            problem.problem, problem.allowed,
                            "; a longer limit: ENGRAM_MAX_CONTENT_CHARS" if len(text) > self.engram.max_content_chars else "")
                return None
        return Record(source_id=source_id, where=where, content=text, category=category, type=type_,
                      metadata={"adk": adk}, created_at=when, updated_at=when, agent=agent,
                      id_field=id_field, fields={"content": ".content.parts", "metadata": ".custom_metadata"})

    def _refusal(self, where: str, text: str, adk: Mapping[str, Any]) -> ValidationError | None:
        """The ``ValidationError`` naming what of an event or entry engram cannot store as it is:
        its text (too long, a NUL, a lone surrogate: ``parse_content``), else a NUL or lone
        surrogate in what its metadata keeps (author, id, whole content, custom metadata), which
        the import path stores as given (PostgreSQL's jsonb refuses a NUL). None when it can."""
        try:
            parse_content(text, self.engram.max_content_chars)
        except ValidationError as exc:
            return ValidationError(f"{where}.content.parts", exc.problem, exc.allowed)
        for name, field in (("author", "author"), ("event_id", "id"), ("id", "id"), ("content", "content"),
                            ("custom_metadata", "custom_metadata")):
            try:
                usable_json(f"{where}.{field}", adk.get(name))
            except ValidationError as exc:
                return exc
        return None

    # --- in the worker thread ------------------------------------------------------------------
    def _store(self, app_name: str, user_id: str, records: list[Record], level: int = logging.DEBUG) -> None:
        if not records:
            return
        # Through the user's own view, as search_memory and delete_memory read: with one database
        # per agent (``per_agent_databases``) that is the user's database, not the engine's agent's
        # (where a search would never find them). Every record of a call is that user's.
        view = self._view(app_name, user_id)
        # ADK adds the session after every turn: a backup before each add (``before_risky``, which an
        # import of a file takes) made one whole-database copy per turn, and with ``backup.keep`` of
        # them kept, a few turns pruned every older backup (the daily one) away. New memories only
        # add rows, as ``remember`` does (which takes none); a backup is taken when an add changes
        # memories already stored (an entry added again with a new text).
        with self._writing:
            summary = apply_plan(view, Plan(kind=KIND, source=KIND, records=records),
                                 keep_agents=True, operator_notes=False, backup_new=False)
        for warning in summary.warnings:
            log.log(level, "google-adk: %s", warning)

    @staticmethod
    def _delete(view: Engram, memory_id: str) -> None:
        """Forget the memory of this user that ``memory_id`` names: an entry's own id (its memory's
        id is derived from it and the user's agent, as ``add_memory`` stored it), else an engram id.
        Never a key, a global memory or another user's: as ADK's own services, an id this user
        does not hold deletes nothing."""
        agent = view.scope.agent
        try:
            usable_text("memory_id", memory_id)
        except ValidationError:
            return  # a NUL or lone surrogate: no memory holds such an id (hashing a surrogate would fail)
        for ref in (record_id(KIND, _entry_source(memory_id), None, agent), memory_id):
            try:
                memory = view.find(ref)
            except ValidationError:
                continue  # not an id engram could hold (a NUL, only spaces): the caller's own
            if memory is not None and memory.id == ref and memory.scope.agent == agent:
                view.forget(memory, reason="google-adk delete_memory")
                return


def _entry_source(entry_id: str) -> str:
    """The source id of a ``MemoryEntry`` with its own id: with the user's agent, its memory's id."""
    return f"memory/{entry_id}"


def _open(uri: str | None) -> Engram:
    if uri is None:
        raise ValidationError("engram", "neither an engram nor a uri was given",
                              "EngramMemoryService(Engram.from_settings()) or uri='engram://'")
    parsed = urlparse(uri) if isinstance(uri, str) else None
    if parsed is None or parsed.scheme != "engram" or parsed.netloc or parsed.query or parsed.fragment:
        raise ValidationError("uri", f"got {uri!r}", "engram:// (the configured store) or engram:///path/to/home")
    home = unquote(parsed.path)
    return Engram.from_settings(home=home) if home not in ("", "/") else Engram.from_settings()


def _check_metadata(custom_metadata: Mapping[str, object] | None) -> None:
    """The call's ``custom_metadata`` is kept with each memory, so it is refused here, naming it,
    by the rule every memory's metadata follows (``parse_metadata``)."""
    try:
        parse_metadata(custom_metadata)
    except ValidationError as exc:
        raise ValidationError("custom_metadata", exc.problem, exc.allowed) from None


def _check_kept_text(field: str, value: object) -> None:
    """A call's ``app_name`` or ``session_id``, kept in every memory's metadata, as text every
    store can hold (``usable_text``); ``agent_for`` checks it is a string. Raises ``ValidationError``."""
    if isinstance(value, str):
        usable_text(field, value)


def _text(content: types.Content | None) -> str:
    """A content's text parts, thoughts left out, joined by line breaks (each kept as it is)."""
    if content is None or not content.parts:
        return ""
    return "\n".join(part.text for part in content.parts if part.text and not part.thought)


def _parse_time(value: str | None, field: str) -> float | None:
    if value is None:
        return None
    try:
        when = datetime.fromisoformat(value)
    except (TypeError, ValueError):
        raise ValidationError(field, f"got {value!r}", "an ISO 8601 time such as 2026-05-04T10:00:00+00:00") from None
    return (when if when.tzinfo else when.replace(tzinfo=UTC)).timestamp()


def _entry(memory: Memory) -> MemoryEntry:
    """A memory as ADK's ``MemoryEntry``: the content as it was added (``metadata["adk"]``) while
    the memory holds its text, else the memory's text (as a user's for one stored otherwise)."""
    adk = memory.metadata.get("adk") if isinstance(memory.metadata.get("adk"), Mapping) else {}
    stored = adk.get("content")
    content = types.Content.model_validate(stored) if isinstance(stored, Mapping) else None
    if content is None or _text(content) != memory.content:
        # Changed in engram since (``engram update``; a rewrite added again keeps that edit): the
        # agent is shown what engram holds, not the text it replaced.
        content = types.Content(role=content.role if content else "user", parts=[types.Part(text=memory.content)])
    custom = adk.get("custom_metadata")
    when, own_id = adk.get("timestamp"), adk.get("id")
    return MemoryEntry(content=content, id=own_id if isinstance(own_id, str) else memory.id, author=adk.get("author"),
                       custom_metadata=dict(custom) if isinstance(custom, Mapping) else {},
                       timestamp=when if isinstance(when, str) else python_isoformat(memory.created_at))
