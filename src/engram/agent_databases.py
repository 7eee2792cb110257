"""The engines of a home with one database per agent (``per_agent_databases``): one engine per
agent, each on that agent's own file, opened on first use and closed with the engine that opened
the first.

A process acting for several agents reaches each through ``Engram.for_agent``: ``engram serve``
with tokens of several agents, MCP over HTTP, an import naming several users, a framework adapter
with a namespace per agent. With one database per agent, that view has to stand on the agent's
own file. On the file of the agent the process opened, the other agent's memories, conversations
and backups landed in the wrong file, and the agent's own process (``engram -a bob ...``) did not
see them. Opened lazily and kept until the first engine closes, as OpenClaw's multi-agent factory
keeps one history store per agent (reference 001, "Lazy Store Opening").
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from engram.config import Settings
    from engram.engine import Engram
    from engram.lifecycle.scheduler import Maintenance
    from engram.metrics import ObservedLatency

log = logging.getLogger("engram.lifecycle")


class AgentDatabases:
    """Each agent's engine in a per-agent home. ``first`` is the engine the process opened (for
    ``first_agent``, whose file it is); ``open_engine(agent)`` opens another agent's as configured.
    Thread-safe: an HTTP server's requests ask from several threads at once."""

    def __init__(self, first_agent: str, first: Engram, open_engine: Callable[[str], Engram]) -> None:
        self._first = first
        self._engines: dict[str, Engram] = {first_agent: first}
        self._opened: list[Engram] = []
        self._open_engine = open_engine
        self._lock = threading.Lock()
        self._opening: dict[str, threading.Lock] = {}  # agent -> held while its file opens
        self._closed = False

    @property
    def first(self) -> Engram:
        """The engine the process opened, whose agent's file it is."""
        return self._first

    def is_open(self, agent: str) -> bool:
        """Whether ``agent``'s engine is open already (asking for it then opens nothing)."""
        with self._lock:
            found = self._engines.get(agent)
            return found is not None and not found.closed

    def engine(self, agent: str) -> Engram:
        """``agent``'s engine, opened on first use (its file's integrity check and migrations, its
        folder mirror as configured). Raises what opening its database raises."""
        with self._lock:
            found = self._open_or_none(agent)
            if found is not None:
                return found
            opening = self._opening.setdefault(agent, threading.Lock())
        # One lock per agent while its file opens: two requests of a new agent must not open it
        # twice, but an integrity check of a large file must not hold up every other agent's requests.
        with opening:
            with self._lock:
                found = self._open_or_none(agent)
            if found is not None:
                return found
            found = self._open_engine(agent)
            found.agent_databases = self
            with self._lock:
                closed = self._closed
                if not closed:
                    self._engines[agent] = found
                    self._opened.append(found)
            if closed:  # the first engine closed while this one opened: nothing would close it later
                found.close()
                return self._first
            return found

    def _open_or_none(self, agent: str) -> Engram | None:
        """(Under the lock.) The engine to answer without opening one: ``agent``'s open engine, or
        the closed first one once closed (its calls fail as every closed engine's do)."""
        if self._closed:
            return self._first
        found = self._engines.get(agent)
        return found if found is not None and not found.closed else None

    def engine_for_reads(self, agent: str) -> Engram:
        """``agent``'s engine for a caller that only reads (``Engram.for_agent(..., reading=True)``):
        its engine (``engine``) when open or its database exists, else an empty read-only engine
        (``empty_engine``) that makes no file. Opened to read, an agent's engine made its database
        (``agents/default/memory.db`` for the page token's first GET), which the operator's backups,
        maintenance and sync then took for a real agent's."""
        settings = self._first.settings
        if self.is_open(agent) or settings is None or not has_no_database_yet(settings, agent):
            return self.engine(agent)
        return empty_engine(settings, agent)

    def opened(self) -> list[Engram]:
        """The other agents' engines opened so far (not the first), the open ones."""
        with self._lock:
            return [engine for engine in self._opened if not engine.closed]

    def closing(self, engine: Engram) -> None:
        """``engine`` is closing: when it is the first engine (or a view of it), every engine
        opened here closes too, after their queued writes are committed."""
        if engine.writes is not self._first.writes:
            return
        with self._lock:
            self._closed = True
            opened, self._opened = self._opened, []
        for other in opened:
            other.close()


def agents_with_databases(settings: Settings) -> list[str]:
    """With ``per_agent_databases``: each agent whose own SQLite database is in ``home/agents/``
    (by folder name, ``disk_names.name_of``), in folder order, once; else none. Once: a folder an
    earlier version named as is (``agents/Claude/``) is left where the agent's own now is
    (``agents/!claude/``), and both are Claude's, whose database is the latter; listed twice, the
    operator's ``backup --list`` showed each of Claude's backups twice, ``restore NAME`` refused
    it as "a backup of several agents", and ``backup`` took two of one database."""
    from engram.disk_names import name_of

    folders = settings.home / "agents"
    if not settings.per_agent_databases or not folders.is_dir():
        return []
    return list(dict.fromkeys(agent for folder in sorted(folders.iterdir())
                              if (agent := name_of(folder.name)) is not None and (folder / "memory.db").is_file()))


def has_no_database_yet(settings: Settings, agent: str) -> bool:
    """Whether ``agent``'s SQLite database, which also keeps its conversations, is not made yet
    (its first write makes it): in a home with one database per agent, none of the agent's own; in
    a home with one database of every agent, no file at ``path`` (a fresh home). Then a read
    answers from ``empty_engine``, and opening its engine would make one: ``engram list`` in a new
    home made ``~/.engram/memory.db`` and its memory folder. False with the conversations kept
    elsewhere (``history.backend``, ``history.path``): they may hold the agent's already, which the
    empty engine would not show, so its engine opens as before."""
    from engram.root import history_backend_name

    history_inside = history_backend_name(settings) == "sqlite" and settings.history.path is None
    if settings.backend != "sqlite" or not history_inside:
        return False
    if settings.per_agent_databases:
        return agent not in agents_with_databases(settings)
    return not settings.database_path().exists()


def empty_engine(settings: Settings, agent: str, session: str | None = None, *, origin: str = "library") -> Engram:
    """An engine of ``agent`` (and ``session``) over no database: every read answers as ``agent``'s
    database, not made yet (``has_no_database_yet``), would answer (nothing stored, an unknown
    memory ``NotFoundError``), and a write raises (``NotMadeYetStore``). No settings: its
    conversation history is in memory, empty, and nothing is written in the home."""
    from engram.engine import Engram
    from engram.root import unread_clawless_history
    from engram.store.disabled import NotMadeYetStore

    store = NotMadeYetStore(settings.backend, str(settings.database_path(agent)))
    engram = Engram(store, agent=agent, session=session, recall_settings=settings.recall,
                    max_content_chars=settings.max_content_chars, origin=origin)
    # Its history is in memory and empty, but whether history is on is the configured answer: a
    # door's "no conversations" says why when it is off (``history.enabled = false``).
    engram.history.enabled = settings.history.enabled
    engram.history.unread = unread_clawless_history(settings, None)  # (only with history in the database)
    return engram


def not_made_yet(engram: Engram) -> bool:
    """Whether ``engram`` is an ``empty_engine``: its agent has no database yet (its reads answer
    empty; its first write, through the agent's own engine, makes the database)."""
    from engram.store.disabled import NotMadeYetStore

    return isinstance(engram.store, NotMadeYetStore)


def every_agents_engine(engram: Engram) -> list[Engram]:
    """The operator's reach over a home with one database per agent: ``engram`` and the engine of
    every other agent with a database there (opened through ``engram.agent_databases``, closed
    with ``engram``); ``[engram]`` for a database of every agent."""
    databases = engram.agent_databases
    if databases is None or engram.settings is None:
        return [engram]
    others = [agent for agent in agents_with_databases(engram.settings) if agent != engram.settings.agent]
    return [engram, *(databases.engine(agent) for agent in others)]


def held_in_other_databases(engram: Engram, ids: Sequence[str]) -> dict[str, str | None]:
    """With one database per agent (``per_agent_databases``): the agent holding each of ``ids`` in
    another agent's database of ``engram``'s home (None for a global memory there); else nothing.
    Keeping such an id (a snapshot import, an agent's own memory-folder sync) put one id in two
    databases, which ``engram migrate`` then refused (one table, the id its key) and the mem0
    facade could not tell apart."""
    if not ids or engram.agent_databases is None:
        return {}
    found: dict[str, str | None] = {}
    for engine in every_agents_engine(engram):
        missing = [i for i in ids if i not in found]
        if engine.store is engram.store or not missing:
            continue
        found.update((m.id, m.scope.agent) for m in engine.store.get_many(missing))
    return found



class EveryAgentsUpkeep:
    """A per-agent server's periodic maintenance (``root.server_upkeep``): ``first`` over the
    first engine's database, then every other agent's, its ``Maintenance`` made by ``upkeep_of``
    when first seen."""

    def __init__(self, databases: AgentDatabases, first: Maintenance,
                 upkeep_of: Callable[[Engram], Maintenance], every_engine: Callable[[], list[Engram]]) -> None:
        self._databases = databases
        self._upkeep_of = upkeep_of
        self._every_engine = every_engine
        self._passes: list[tuple[Engram, Maintenance]] = [(databases.first, first)]

    def run(self) -> None:
        """One pass over each database: every agent's in the home (``every_engine``: a new agent's
        folder appears between passes) and any other opened since. A failing one is logged, the
        others still run, and the first failure is raised at the end (a server's readiness names it)."""
        known = {id(engine) for engine, _ in self._passes}
        for engine in [*self._every_engine(), *self._databases.opened()]:
            if id(engine) not in known:
                known.add(id(engine))
                self._passes.append((engine, self._upkeep_of(engine)))
        failed: BaseException | None = None
        for engine, upkeep in self._passes:
            if engine.closed:
                continue
            try:
                upkeep.run()
            except Exception as exc:  # one agent's failing file must not stop the others' upkeep
                log.exception("maintenance of agent %s's database failed", engine.scope.agent)
                failed = failed or exc
        if failed is not None:
            raise failed


@dataclass(frozen=True, slots=True)
class StoreWideFigures:
    """The whole home's figures ``/metrics`` shows (``StoreWide``): ``memories`` each once,
    ``size_bytes`` every database's size added up (each the ``size`` ``engram stats --all-agents``
    shows; databases share no file), ``latency`` each timed operation over every database's samples."""

    memories: int
    size_bytes: int
    latency: list[ObservedLatency]
    # How long ago ``memories`` and ``size_bytes`` were counted (``StoreWide.max_age_s``); 0 when
    # counted for this call.
    age_s: float = 0.0


class StoreWide:
    """Every agent's database in the home together: ``/metrics``' figures.

    Counted at most once every ``max_age_s`` (``server.metrics_max_age_s``): counting reads every
    row (``stats()``' COUNTs: about 0.2 s at a million memories on SQLite, holding a read of the
    database), and Prometheus asks every 15 s or so. A call within ``max_age_s`` of the last count
    is answered from it, with its age (``age_s``); 0 counts at every call. The latency figures are
    in memory and always current.

    Memories: a global memory is kept in every agent's database (``per_agent_databases``), so each
    database's own memories (its agent's and its sessions') are summed and its global ones counted
    by id, once however many databases hold them. The global ids of a database are read again only
    when its ``change_token`` has changed since (or it cannot tell), so a count costs one
    ``stats()`` per database in between: its counts, and its size, which ``stats()`` takes from the
    files' sizes (SQLite: a stat of the database, its -wal and -shm; a JSON file: a stat) or the
    catalogue (PostgreSQL: ``pg_total_relation_size``), never by reading them. Latency: each
    database's kept samples (``Engram.metrics``), as ``engram stats`` shows them. A home with one
    database: that database's figures."""

    PAGE = 10_000

    def __init__(self, engram: Engram, *, max_age_s: float = 0.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._engram = engram
        self._global_ids: dict[int, tuple[object, frozenset[str]]] = {}  # id(engine) -> (change token, ids)
        self._lock = threading.Lock()
        self.max_age_s = max_age_s
        self._clock = clock
        self._counted: tuple[float, int, int] | None = None  # (when, memories, size_bytes)

    def __call__(self) -> StoreWideFigures:
        from engram.metrics import observed

        engines = every_agents_engine(self._engram)
        latency = observed([engine.metrics for engine in engines])
        with self._lock:  # one count at a time: scrapes that overlap one wait for it, not count again
            now = self._clock()
            if self._counted is None or now - self._counted[0] >= self.max_age_s:
                self._counted = (now, *self._count(engines))
            when, memories, size = self._counted
        return StoreWideFigures(memories, size, latency, age_s=max(0.0, now - when))

    def _count(self, engines: list[Engram]) -> tuple[int, int]:
        """(Under the lock.) Memories, each once, and the size of every database."""
        if len(engines) == 1:
            stats = engines[0].stats()
            return stats.memories, stats.size_bytes
        own = size = 0
        global_ids: set[str] = set()
        for engine in engines:
            stats = engine.stats()
            held = stats.by_scope.get("global", 0)
            own += stats.memories - held
            size += stats.size_bytes
            if held:
                global_ids |= self._globals_of(engine)
        return own + len(global_ids), size

    def _globals_of(self, engine: Engram) -> frozenset[str]:
        """(Under the lock.) The ids of ``engine``'s database's global memories, superseded ones too."""
        from engram.model import MemoryFilter, Scope

        token = engine.store.change_token()
        kept = self._global_ids.get(id(engine))
        if token is not None and kept is not None and kept[0] == token:
            return kept[1]
        everything_global = MemoryFilter(scopes=(Scope(),), include_superseded=True)
        ids: set[str] = set()
        offset = 0
        while page := engine.store.list(everything_global, limit=self.PAGE, offset=offset):
            ids.update(m.id for m in page)
            offset += len(page)
        self._global_ids[id(engine)] = (token, frozenset(ids))
        return self._global_ids[id(engine)][1]
