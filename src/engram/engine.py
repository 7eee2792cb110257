"""``Engram``: the one object a user holds. It validates input, picks scopes, and wires the store,
the embedder and recall together; interfaces (CLI, MCP, HTTP) call it and nothing else.

Scopes: an ``Engram`` acts for one agent (``default`` unless told) and optionally one session.
Writes go to the agent's scope unless ``scope="global"`` or ``scope="session"`` is asked for;
reads see the session, the agent and global, ranked together. ``for_agent`` / ``for_session``
give views on the same store for other agents or sessions.

The class is assembled here from its parts, one concern each, as mixins (``scoping`` says why):
``scoping`` (the scope a call writes to or reads; ``Filters``), ``remembering`` (``remember``,
``remember_soon``, ``remember_many``), ``updating`` (``update``, ``replace``, ``annotate``),
``reads`` (``find``, ``get``, ``named``, ``list``, ``count``, ``versions``), ``recalling``
(``recall``, ``mark_used``), ``links`` (``link``, ``unlink``, ``neighbours``, ``supersede``, ``supersedes``),
``forgetting`` (``forget``, ``forget_own``), ``transfer`` (snapshots, imports), ``reindexing``
(``reindex``, ``embed_missing``), ``reports`` (``stats``, the audit trail) and ``conversations``
(``history``). This module keeps what holds them together: construction, the views on other
agents and sessions (``for_agent``), the events a change announces, and ``close``.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

from engram.config import RecallSettings, Settings
from engram.conversations import _Conversations
from engram.events import EventBus, EventKind, Listener, MemoryEvent
from engram.forgetting import _Forgetting
from engram.lifecycle.settings import StrengthenSettings
from engram.links import _Linking
from engram.metrics import Metrics, TimedEmbedder
from engram.model import Memory, MemoryFilter, make_scope
from engram.privacy import PiiPolicy
from engram.reads import _Reading
from engram.recall_cache import RecallCache
from engram.recalling import _Recalling
from engram.reindexing import _Reindexing
from engram.remembering import _Remembering
from engram.reports import _Reporting
from engram.scoping import Filters, ScopeChoice, _Scoping, one_selector
from engram.search import TextEmbedder
from engram.store.base import MemoryStore
from engram.temporal.reader import TimeReader
from engram.transfer import _Transferring
from engram.updating import _Updating
from engram.writes import WriteQueue

if TYPE_CHECKING:
    from engram.agent_databases import AgentDatabases
    from engram.backends.base import Backend
    from engram.history.service import History

# Filters, ScopeChoice and one_selector are defined in engram.scoping and named from here, as ever.
__all__ = ["CLOSE_WAIT_S", "Engram", "Filters", "ScopeChoice", "one_selector"]

log = logging.getLogger("engram.engine")

# How long closing waits for the writes already queued (a stuck embedding provider must not hang exit).
CLOSE_WAIT_S = 60.0


class Engram(_Scoping, _Remembering, _Updating, _Reading, _Recalling, _Linking, _Forgetting, _Transferring,
             _Reindexing, _Reporting, _Conversations):
    """Long-term memory for one agent (and optionally one session of it)."""

    def __init__(
        self,
        store: MemoryStore,
        *,
        agent: str = "default",
        session: str | None = None,
        embedder: TextEmbedder | None = None,
        recall_settings: RecallSettings | None = None,
        max_content_chars: int = 8000,
        clock: Callable[[], float] = time.time,
        origin: str = "library",
        events: EventBus | None = None,
        strengthen: StrengthenSettings | None = None,
        privacy: PiiPolicy | None = None,
        metrics: Metrics | None = None,
        guard: Callable[[str], None] | None = None,
        recall_cache: RecallCache | None = None,
        time_reader: TimeReader | None = None,
        backend: Backend | None = None,
        writes: WriteQueue | None = None,
    ) -> None:
        """``backend`` is the database ``store`` lives in (``engram.root`` passes it); without one the
        store stands alone: audit trail and conversation history in process memory. ``writes`` is
        the single writer concurrent ``remember`` calls share (a view shares its engine's)."""
        from engram.backends.simple import StoreBackend

        self.store = store
        self.backend: Backend = backend if backend is not None else StoreBackend(store)
        self.time = time_reader or TimeReader()
        self.origin = origin
        self.events = events or EventBus()
        self.scope = make_scope(agent, session)
        # What this view reads: the memories whose links it is shown (engram.visibility). By id it
        # also reaches its agent's other sessions (``visibility.reaches``, ``_reaching``).
        self._readable = MemoryFilter(scopes=self.scope.visible(), include_superseded=True)
        self.metrics = metrics or Metrics()
        # Recall and embedding latencies are recorded for `engram stats`.
        self.writes = writes or WriteQueue(store, None)
        self.embedder = embedder
        self.strengthen = strengthen or StrengthenSettings()
        self.privacy = privacy if privacy is not None else PiiPolicy()
        # Called with a reason before risky work (bulk forget, import): the automatic backup.
        self.guard = guard
        self.recall_settings = recall_settings or RecallSettings()
        self.recall_cache = recall_cache or RecallCache(self.recall_settings.cache_ttl_s)
        self.max_content_chars = max_content_chars
        self.clock = clock
        self.settings: Settings | None = None  # set by from_settings; the history opens from it
        # Added to every recall's notes: why recall runs on full text (embeddings.provider auto
        # found no local model), so the fallback is never silent.
        self.embedding_note: str | None = None
        self._history: History | None = None
        # Threads (AsyncEngram's readers, a server's) may make the first use at once: one opens it.
        self._history_lock = threading.Lock()
        # A view made by for_agent takes its history from the engine it came from (same storage):
        # one per agent, kept by that engine and closed with it (``_agent_history``).
        self._history_root: Engram | None = None
        self._agent_histories: dict[str, History] = {}
        self._agent_histories_lock = threading.Lock()
        # With one database per agent (``per_agent_databases``) each agent's engine, opened on first
        # use: ``for_agent`` stands another agent's view on its own file (set by ``engram.root``).
        self.agent_databases: AgentDatabases | None = None
        # Set on a view made by ``for_agent``: its listeners hear only what that view may read
        # (``subscribe``); the engine's own listeners (audit, file mirror) hear every view.
        self._view_of_agent = False

    @property
    def embedder(self) -> TextEmbedder | None:
        return self._embedder

    @embedder.setter
    def embedder(self, embedder: TextEmbedder | None) -> None:
        # Recall and embedding latencies are recorded for `engram stats`; the writer embeds with it.
        if embedder is not None and not isinstance(embedder, TimedEmbedder):
            embedder = TimedEmbedder(embedder, self.metrics)
        self._embedder = self.writes.embedder = embedder

    @classmethod
    def from_settings(cls, settings: Settings | None = None, **overrides: Any) -> Engram:
        """Open the configured backend (settings: arguments > environment > config file > defaults)
        through the composition root (``engram.root``), as every interface does: same settings,
        same engine, memory-folder mirror included when ``files.enabled``."""
        from engram.root import build_engram

        return build_engram(settings, **overrides)


    def for_agent(self, agent: str, session: str | None = None, *, origin: str | None = None,
                  reading: bool = False) -> Engram:
        """A view for another agent (or session) on the same store, sharing its event listeners.
        With one database per agent (``per_agent_databases``) the view stands on that agent's own
        database, its engine opened on first use and closed with this one. ``reading``: the caller
        only reads (an HTTP GET), so an agent with no database yet is answered from an empty view
        and none is made for it (``AgentDatabases.engine_for_reads``); a write through it raises.
        Without it, the agent's database opens to write, and so is made."""
        base = self
        if self.agent_databases is not None:
            make_scope(agent, session)  # a bad name is refused before it names a database folder
            databases = self.agent_databases
            base = databases.engine_for_reads(agent) if reading else databases.engine(agent)
        view = Engram(
            base.store, agent=agent, session=session, embedder=base.embedder,
            recall_settings=base.recall_settings, max_content_chars=base.max_content_chars, clock=self.clock,
            origin=origin or self.origin, events=base.events, strengthen=base.strengthen, privacy=base.privacy,
            metrics=base.metrics, guard=base.guard, recall_cache=base.recall_cache, time_reader=base.time,
            backend=base.backend, writes=base.writes,
        )
        view.settings = base.settings
        view._history_root = base._history_root or base
        view.embedding_note = base.embedding_note
        view.agent_databases = self.agent_databases
        view._view_of_agent = True
        return view

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Call ``listener`` with a ``MemoryEvent`` after every change; returns an unsubscribe function.
        Subscribed on the engine (``from_settings``), it hears every change made through it and its
        views, every agent's (the operator's view, as the audit trail's). Subscribed on a view from
        ``for_agent``/``for_session``, it hears only the memories that view may read (its agent's,
        in any of its sessions, and global ones, links narrowed to readable memories): one agent
        never hears another's memories, as it never reads them, nor its name: another agent's
        change of a global memory is heard with the scope ``visibility.ANOTHER_AGENT_SCOPE``
        (``visibility.narrow_event``)."""
        if not self._view_of_agent:
            return self.events.subscribe(listener)
        from engram.visibility import narrow_event

        store, viewer, readable = self.store, self.scope, self._readable

        def heard(event: MemoryEvent) -> None:
            narrowed = narrow_event(store, viewer, readable, event)
            if narrowed is not None:
                listener(narrowed)

        return self.events.subscribe(heard)

    def _event(self, kind: EventKind, memories: Sequence[Memory], reason: str | None = None,
               previous: Iterable[Memory | None] = ()) -> MemoryEvent:
        before = tuple(m for m in previous if m is not None)
        return MemoryEvent(kind, tuple(memories), self.scope, self.origin, reason, self.clock(), before)

    def _emit(self, kind: EventKind, memories: Sequence[Memory], reason: str | None = None,
              previous: Iterable[Memory | None] = ()) -> None:
        if memories:
            self.events.emit(self._event(kind, memories, reason, previous))

    def for_session(self, session: str | None) -> Engram:
        return self.for_agent(self.scope.agent or "default", session)

    def __enter__(self) -> Engram:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def closed(self) -> bool:
        """True once this engine (or any view of it, or the engine it came from) was closed: its
        store is then shut and every call that reads or writes it fails. Background work holding
        an engine (a LangGraph TTL sweeper) asks this to stop by itself."""
        return self.writes.closed

    def close(self) -> None:
        """Close the store (and conversation history), once the writes already accepted are
        committed: a ``remember_soon`` whose future nobody awaited is still stored, not failed."""
        # Histories first: closing one finishes its transcript indexing, which still writes memories.
        if self._history_root is not None:  # a view: its history is its engine's, closed there
            self._history = None
        with self._agent_histories_lock:
            opened, self._agent_histories = list(self._agent_histories.values()), {}
        for history in opened:
            history.close()
        if self._history is not None:
            self._history.close()
            self._history = None
        if not self.writes.close(CLOSE_WAIT_S):
            log.warning("closing before every queued write was committed (waited up to %.0f s, or closed "
                        "from a listener of a write in progress): the writes left fail", CLOSE_WAIT_S)
        self.metrics.save()
        self.backend.close()
        # The embedding cache's file too, not left to a finaliser: a process that exits without
        # collecting the engine (``engram mcp`` freezes its heap at exit: interfaces/heap.py) left
        # its WAL beside it, unmerged.
        close_embedder = getattr(self._embedder, "close", None)
        if close_embedder is not None:
            close_embedder()
        if self.agent_databases is not None:
            self.agent_databases.closing(self)


