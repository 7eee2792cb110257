"""The composition root: the one place where settings become a working engram.

Every door goes through here — the library (``Engram.from_settings``), the CLI, the HTTP and MCP
servers and ``engram chat`` — so the same settings behave the same everywhere. It opens the
configured backend once (``registry`` kind ``backend``), and from it, without asking any store
what it is made of: the engine with its embedder, audit trail, PII policy, metrics and automatic
backups; each agent's conversation history (in the same database when ``history.backend`` is the
one that database holds, else in a history backend of its own); the API token store; the
lifecycle scheduler; the memory-folder mirror. Settings are read here and in ``config.py`` only.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import os
import shlex
import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from engram.agent_databases import agents_with_databases, every_agents_engine
from engram.backends.base import Backend
from engram.config import Settings, load_settings
from engram.errors import ConfigError, StorageError
from engram.registry import resolve

if TYPE_CHECKING:
    from engram.agent_databases import EveryAgentsUpkeep
    from engram.auth import TokenStore
    from engram.db.transfer import Progress, TransferReport
    from engram.engine import Engram
    from engram.files.every_database import EveryDatabaseSync
    from engram.files.sync import FileSync
    from engram.history.compaction import CompactionResult, Purger
    from engram.history.semantic import ExchangeEmbedder
    from engram.history.service import History
    from engram.lifecycle.scheduler import Maintenance
    from engram.lifecycle.summaries import Summarizer
    from engram.metrics import LatencySummary
    from engram.model import Memory
    from engram.privacy import PiiPolicy
    from engram.store.base import StoreStats

log = logging.getLogger("engram.agents")


def open_backend(settings: Settings, agent: str | None = None) -> Backend:
    """The configured memory database (``settings.backend``), opened once. A plug-in's factory
    may return a bare memory store: it is wrapped so it still hands out an audit trail.
    Raises ``ConfigError``/``StorageError``/``IntegrityError``."""
    from engram.backends.simple import StoreBackend

    make_home(settings.home, written=writes_home(settings, agent or settings.agent))
    settle_agent_folder(settings, agent or settings.agent)
    made = resolve("backend", settings.backend)(settings, agent or settings.agent)
    return made if isinstance(made, Backend) else StoreBackend(made)


def writes_home(settings: Settings, agent: str) -> bool:
    """Whether this configuration keeps files in the home: a file database (SQLite's, the JSON
    store's) or the memory files there. A database elsewhere (``path``, PostgreSQL) with the memory
    files off or elsewhere writes nothing there at open, so a read-only home (a config mounted
    read-only) is a setup that works and is not refused."""
    home = settings.home.expanduser().absolute()
    inside = [settings.files.folder(settings.home)] if settings.files.enabled else []
    if settings.backend != "postgres":
        inside.append(settings.database_path(agent).parent)
    return any(folder.expanduser().absolute().is_relative_to(home) for folder in inside)


def make_home(home: Path, *, written: bool = True) -> None:
    """Create the engram home, readable by its owner only (0700), when it does not exist yet: it
    holds every memory, conversation, backup and token, and under the usual umask a folder made
    with the defaults is readable by every local user. An existing folder keeps the mode its
    owner gave it. Raises ``StorageError`` naming the folder when it cannot be created, or exists
    and cannot be written while engram is to keep files there (``written``, ``writes_home``):
    engram writes there on every command (its database, the history, the
    metrics), and a read-only home otherwise failed with SQLite's bare "unable to open database
    file" or an internal ``PermissionError``."""
    from engram.errors import StorageError

    if not home.exists():
        try:
            home.mkdir(parents=True, mode=0o700, exist_ok=True)
        except OSError as exc:
            raise StorageError(f"cannot create the engram home {home}: {exc.strerror or exc}") from exc
    elif written and not os.access(home, os.W_OK | os.X_OK):
        raise StorageError(f"the engram home {home} is not writable: engram keeps its database and history there "
                           "(check the folder's permissions, or whether its disk is mounted read-only)")


def settle_agent_folder(settings: Settings, agent: str) -> Path | None:
    """``agent``'s own folder (``Settings.agent_folder``, ``per_agent_databases``), after moving
    there the folder an earlier version named with the agent's name as it is (``agents/Claude/``
    is now ``agents/!claude/``), so an upgraded home keeps every memory and conversation; None
    without per-agent databases. Called before anything opens a file in it (``open_backend``,
    ``open_history``, ``agent_database_path``). Raises ``StorageError`` when the folder cannot be
    moved (on Windows, while a process of an earlier version has a file in it open)."""
    from engram.disk_names import left_beside, settle
    from engram.errors import StorageError

    if not settings.per_agent_databases:
        return None
    folder = settings.agent_folder(agent)
    earlier = folder.parent / agent
    try:
        settled = settle(earlier, folder)
    except OSError as exc:
        raise StorageError(f"cannot move agent {agent!r}'s folder {earlier} to {folder} (its name on every file "
                           f"system): {exc}; stop what has it open (an earlier version of engram) and try again") from exc
    if earlier not in _warned_left_beside and left_beside(earlier, folder):
        _warned_left_beside.add(earlier)  # once a process: every open of the agent's files comes here
        _warn_left_beside(settings, agent, earlier, folder)
    return settled


# The leftover folders already named in this process (``settle_agent_folder``).
_warned_left_beside: set[Path] = set()


def _warn_left_beside(settings: Settings, agent: str, earlier: Path, folder: Path) -> None:
    """Say that ``earlier`` (``agent``'s folder as an earlier version named it) was left beside its
    folder now, and is not read: ``settle`` moves it only while the new one is not there (an
    earlier version's process made it again after the move, or a copy was put back), and two
    databases cannot be merged by a rename. Its memories come over through a snapshot (ids kept,
    so one already there is skipped); its conversations stay readable by ``history.path``."""
    old = earlier / settings.database_path(agent).name
    log.warning(
        "agent %r's folder %s, named as an earlier version of engram named it, is beside %s, its folder now, and"
        " its database there is not read. Bring its memories over with `ENGRAM_PER_AGENT_DATABASES=false ENGRAM_PATH=%s"
        " engram -a %s export FILE.json`, then `engram -a %s import FILE.json` (ids are kept; history.path = %s"
        " reads its conversations), then move %s away to silence this",
        agent, earlier, folder, old, shlex.quote(agent), shlex.quote(agent), old, earlier)


def agent_database_path(settings: Settings, agent: str | None = None) -> Path:
    """``Settings.database_path`` of ``agent`` (the settings' own by default), after
    ``settle_agent_folder``: for the commands that open the file themselves, not through
    ``open_backend`` (backups, restore, migrate), so an upgraded home's file is found."""
    settle_agent_folder(settings, agent or settings.agent)
    return settings.database_path(agent or settings.agent)


def history_backend_name(settings: Settings) -> str:
    """``history.backend``; left at its default it follows a PostgreSQL memory backend, so that one
    ``database_url`` puts everything in the shared database, and memory turned off (``disabled``:
    no conversations kept either, as the reference's memory off keeps nothing; sclaw, reference 001)."""
    h = settings.history
    if "backend" not in h.model_fields_set and settings.backend in ("postgres", "disabled"):
        return settings.backend
    return h.backend


def open_history(settings: Settings, agent: str, backend: Backend | None = None, *,
                 embedder: ExchangeEmbedder | None = None, purge: Purger | None = None, warm: bool = True,
                 privacy: PiiPolicy | None = None) -> History:
    """``agent``'s conversation history: in ``backend``'s database when it holds the configured
    history backend, else in that history backend (opened here, closed with the history). With an
    embedder (and ``history.semantic``) exchanges are indexed beside the conversations. Without
    ``backend`` the configured one is opened for this history alone and closed with it.
    ``privacy`` is the engine's PII policy (``engine_options`` makes it from ``[privacy]``; made
    alike here when not given): every message and summary is screened by it before it is written."""
    from engram.history.service import HISTORY_OFF, MEMORY_OFF, History
    from engram.privacy import PiiPolicy

    if privacy is None:
        privacy = PiiPolicy.from_settings(settings.privacy)
    if backend is None:
        own = open_backend(settings, agent)
        try:
            history = open_history(settings, agent, own, embedder=embedder, purge=purge, warm=warm, privacy=privacy)
        except BaseException:
            own.close()
            raise
        history.close_with(own.close)
        return history
    h = settings.history
    name = history_backend_name(settings)
    if backend.history_name != name:
        settle_agent_folder(settings, agent)
    home: Backend = backend if backend.history_name == name else resolve("history", name)(settings, agent)
    store = home.history_store(agent)
    semantic = None
    if embedder is not None and h.semantic:
        semantic = home.exchange_index(embedder, agent, max_entries=h.semantic_max_entries,
                                       max_chars_per_entry=h.semantic_max_chars_per_entry,
                                       max_recap_chars=h.max_total_chars)
        if semantic is not None and warm:
            semantic.warm(store)
    return History(store, max_history_len=h.max_history_len, compaction=h.compaction, semantic=semantic,
                   purge=purge, recap_top_k=h.recap_top_k, on_close=None if home is backend else home.close,
                   enabled=h.enabled and name != "disabled", off_reason=MEMORY_OFF if name == "disabled" else HISTORY_OFF,
                   privacy=privacy,
                   unread=unread_clawless_history(settings, home.path if name == "jsonl" else None),
                   trims=name != "jsonl")  # the JSONL store keeps its own bound, Clawless's max_entries


def unread_clawless_history(settings: Settings, jsonl_file: Path | None) -> Callable[[], None] | None:
    """The hint a history read that comes back empty gives when Clawless's
    ``conversation-history.jsonl`` lies in the home (``AGENT_BRIDGE_HOME`` is ``~/.clawless``) and
    the history in use (``jsonl_file``: the JSON-lines file it reads, None for a database) is not
    that file (``foreign_settings.clawless_history_unread``); None else."""
    from engram.foreign_settings import clawless_history_unread
    from engram.importers.clawless import HISTORY

    found = settings.home / HISTORY
    if not found.is_file() or (jsonl_file is not None and jsonl_file.resolve() == found.resolve()):
        return None
    return lambda: clawless_history_unread(found)


def open_tokens(settings: Settings, backend: Backend | None = None) -> TokenStore:
    """API tokens: in the backend's database when it keeps them (a shared SQLite file, the
    PostgreSQL database), else in ``home/auth.db``. Opens the backend when none is given (the
    token commands); closing the token store then closes it."""
    from engram.auth import TokenStore
    from engram.backends.sqlite import keeps_tokens

    owned = backend is None
    if owned and settings.backend == "sqlite" and not keeps_tokens(settings):
        # Each agent's own file keeps none: no agent's database is opened (made) to reach home/auth.db.
        make_home(settings.home)
        return TokenStore.open(settings.home / "auth.db", busy_timeout_ms=settings.busy_timeout_ms)
    if backend is None:
        backend = open_backend(settings)
    tokens = backend.token_store()
    if tokens is not None:
        if owned:
            tokens.on_close(backend.close)
        return tokens
    if owned:
        backend.close()
    return TokenStore.open(settings.home / "auth.db", busy_timeout_ms=settings.busy_timeout_ms)


def sidecar(backend: Backend, suffix: str, settings: Settings | None = None) -> Path | None:
    """A file beside the backend's data (metrics, maintenance state). A database with no file
    (PostgreSQL) has one in the engram home named after the database its URL reaches (a digest: no
    password in a file name; see ``database_sidecar``), ``home/state/<backend>-<digest><suffix>``;
    else None. Without it every ``engram maintain`` ran every job and latency stats were always empty."""
    path = backend.path
    if path is not None:
        return path.with_name(path.name + suffix)
    if settings is None or not settings.database_url:
        return None
    return database_sidecar(settings.home, backend.name, settings.database_url, suffix)


def database_sidecar(home: Path, backend_name: str, database_url: str, suffix: str) -> Path:
    """Where ``sidecar`` keeps the file of the database at ``database_url`` (no file of its own):
    named after the database, not the URL's spelling (``database_identity``), so ``migrate --to
    postgres://db.host/x`` and ``ENGRAM_DATABASE_URL=postgresql://db.host:5432/x?sslmode=require``
    find one file. A file named after the spelling, as earlier versions named it, is renamed to it
    once (found, not left behind)."""
    from engram.db.postgres import database_identity, redact_dsn

    path = home / "state" / f"{backend_name}-{_digest(database_identity(database_url))}{suffix}"
    spelled = path.with_name(f"{backend_name}-{_digest(redact_dsn(database_url))}{suffix}")
    if spelled != path and spelled.is_file() and not path.exists():
        with contextlib.suppress(FileNotFoundError):  # another process renamed it first
            spelled.rename(path)
    return path


def _digest(text: str) -> str:
    import hashlib

    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


MAINTENANCE_STATE = ".maintenance.json"


def migration_target(settings: Settings, to: str | None) -> str:
    """The PostgreSQL database ``engram migrate`` copies into: ``to`` (``--to``) when given, else the
    configured ``database_url`` (``ENGRAM_DATABASE_URL``, the config file), the database engram uses
    once the copy is done. The copy back (``migrate_from_postgres``) names its file with ``--to``
    itself, so the setting names no other direction. Raises ``ValidationError`` (field ``--to``) when neither names one."""
    from engram.db.pg_settings import DSN_ALLOWED, credentials_problem, dsn_problem
    from engram.errors import ValidationError

    if to is not None:
        if not to.strip():  # `--to "$URL"` with the variable unset: not the configured database unsaid
            raise ValidationError("--to", "empty", "a PostgreSQL URL: postgresql://user:password@host/db")
        # Refused before anything is opened, as database_url is: a SQLite file given here (meant
        # as a copy back, which takes --from URL) was handed to libpq and came back as its "missing '='
        # after ... in connection info string", exit 1, naming no option.
        problem = dsn_problem(to)
        if problem and problem == credentials_problem(to):  # a PostgreSQL URL: no other direction to point to
            raise ValidationError("--to", problem, DSN_ALLOWED)
        if problem:
            raise ValidationError("--to", f"{problem}: --to names the PostgreSQL database to copy into (a copy back"
                                  " into a SQLite file is --from postgresql://… --to FILE)", DSN_ALLOWED)
        return to
    if settings.database_url:
        return settings.database_url
    raise ValidationError("--to", "no PostgreSQL database to copy into: --to is not given and database_url is not set",
                          "--to postgresql://user:password@host/db, or database_url set (ENGRAM_DATABASE_URL or the"
                          " config file)")


def migrate_to_postgres(settings: Settings, sqlite_path: Path, database_url: str,
                        progress: Progress | None = None, *, agent: str | None = None,
                        hand_over: bool = True, named: str | None = None) -> TransferReport:
    """``engram migrate``: copy the SQLite store at ``sqlite_path`` into PostgreSQL
    (``copy_sqlite_to_postgres``) and, once the copy verifies, carry its maintenance schedule to
    the place a store on ``database_url`` reads it from (``home/state``, see ``sidecar``), so the
    first ``engram maintain`` there runs only the jobs that are due, and hand the memory folder's
    sync state over to the PostgreSQL database (``hand_over_sync_state``; ``agent``: whose own
    database the file is, the configured agent by default; ``hand_over=False`` leaves it to the
    caller, see ``migrate_every_file``), so the first sync there sets no memory in conflict that
    nobody edited by hand. ``named``: where ``database_url`` was given, for the error reaching it
    (``--to``; by default ``database_url`` and where it was set, when it is the configured one).
    Raises what the copy raises, and ``StorageError`` when the schedule or the sync state cannot
    be written."""
    from engram.db.transfer import copy_sqlite_to_postgres

    if named is None and database_url == settings.database_url:
        named = settings.named("database_url")
    report = copy_sqlite_to_postgres(sqlite_path, database_url, settings=settings.postgres, progress=progress,
                                     key=settings.privacy.key(), named=named)
    if report.verified:
        _carry_after_copy(settings, report, Path(sqlite_path), database_url, up=True, agent=agent, hand_over=hand_over)
    return report


def migrate_from_postgres(settings: Settings, database_url: str, sqlite_path: Path | None = None,
                          progress: Progress | None = None, *, named: str | None = None) -> TransferReport:
    """``engram migrate --from URL``: copy the PostgreSQL database back into one SQLite file
    (``copy_postgres_to_sqlite``): ``sqlite_path`` (``--to``), else the configured shared file
    (``path``, else ``home/memory.db``), encrypted with ``privacy.encryption_key`` when one is set.
    Once the copy verifies, what the copy up carried comes back the same way: the database's
    maintenance schedule is carried beside the file and the memory folder's sync state is handed
    to it, so the first ``engram maintain`` and ``engram sync`` on the file go on from where they
    were on PostgreSQL (a second run finds both already there). Raises ``ValidationError`` (field
    ``per_agent_databases``) with one database per agent, whose agents' files a copy into one file
    would not fill, what the copy raises, and ``StorageError`` when the schedule or the sync state
    cannot be written."""
    from engram.db.transfer_back import copy_postgres_to_sqlite
    from engram.errors import ValidationError

    if settings.per_agent_databases:
        raise ValidationError("per_agent_databases", "is on: a copy back from PostgreSQL goes into one SQLite file"
                              " of every agent, which a home with one database per agent does not read",
                              "per_agent_databases off (ENGRAM_PER_AGENT_DATABASES=false) for the copy and after it")
    target = sqlite_path or settings.path or settings.home / "memory.db"
    if sqlite_path is None:
        make_home(settings.home)
    report = copy_postgres_to_sqlite(database_url, target, settings=settings.postgres, progress=progress,
                                     key=settings.privacy.key(), named=named)
    if report.verified:
        # A file of every agent (per_agent_databases is refused above): the shared state.
        _carry_after_copy(settings, report, Path(target), database_url, up=False, agent=None, hand_over=True)
    return report


def _carry_after_copy(settings: Settings, report: TransferReport, sqlite_path: Path, database_url: str, *,
                      up: bool, agent: str | None, hand_over: bool) -> None:
    """What follows a verified copy between the SQLite file at ``sqlite_path`` and the PostgreSQL
    database at ``database_url``, either way (``up``: into PostgreSQL): the maintenance schedule is
    carried from the source's place to the target's (``sidecar``: beside the file, and in the engram
    home for the database), and, when ``hand_over``, the memory folder's sync state handed over too.
    Both recorded in ``report``."""
    from engram.backends.postgres import PostgresBackend
    from engram.lifecycle.scheduler import carry_schedule

    file_schedule = sqlite_path.with_name(sqlite_path.name + MAINTENANCE_STATE)
    database_schedule = database_sidecar(settings.home, PostgresBackend.name, database_url, MAINTENANCE_STATE)
    source, target = (file_schedule, database_schedule) if up else (database_schedule, file_schedule)
    if carry_schedule(source, target):
        report.schedule = str(target)
    if hand_over:
        report.sync_state = _hand_over_sync_state(settings, sqlite_path, database_url, agent, up=up)


def _hand_over_sync_state(settings: Settings, sqlite_path: Path, database_url: str, agent: str | None, *,
                          up: bool) -> str | None:
    """Hand the memory folder's sync state from the SQLite file to the PostgreSQL database (``up``,
    the copy up) or back (the copy back), once the copy verified (``hand_over_sync_state``)."""
    from engram.db.postgres import redact_dsn
    from engram.files.state import database_identity
    from engram.files.wiring import hand_over_sync_state
    from engram.store.postgres import PostgresMemoryStore
    from engram.store.sqlite import SqliteMemoryStore

    # Each database named as its store's stats name it (location: the file; the DSN redacted).
    the_file = database_identity(SqliteMemoryStore.name, str(sqlite_path))
    the_database = database_identity(PostgresMemoryStore.name, redact_dsn(database_url))
    source, target = (the_file, the_database) if up else (the_database, the_file)
    try:
        handed = hand_over_sync_state(settings, source, target, agent)
    except OSError as exc:
        shown = redact_dsn(database_url) if up else str(sqlite_path)
        raise StorageError(f"could not hand the memory folder's sync state to {shown}: {exc}") from exc
    return None if handed is None else str(handed)


def migration_sources(settings: Settings) -> list[tuple[str | None, Path]]:
    """The SQLite files ``engram migrate`` copies when given no ``--from``, each with the agent
    whose own database it is (None: a file of every agent), in the order they are copied. With
    ``per_agent_databases``: every agent's database under ``home/agents/`` (by folder name), then
    the shared file (``path``, else ``home/memory.db``: what was written before the setting was
    switched on) and ``home/auth.db`` (the API tokens), those that exist; the agents' first, so
    where a memory was brought over into an agent's file and changed there, the agent's copy is
    the one copied and the shared file's older one is reported. Else the configured store alone."""
    if not settings.per_agent_databases:
        return [(None, agent_database_path(settings))]
    found: list[tuple[str | None, Path]] = [(agent, agent_database_path(settings, agent))
                                            for agent in agents_with_databases(settings)]
    shared = settings.path or settings.home / "memory.db"
    for path in (shared, settings.home / "auth.db"):
        if path.is_file():
            found.append((None, path))
    return found


def migrate_every_file(settings: Settings, database_url: str, progress: Progress | None = None,
                       on_file: Callable[[Path, int, int], None] | None = None, *,
                       named: str | None = None) -> list[TransferReport]:
    """``engram migrate`` without ``--from``: every file of ``migration_sources`` copied in turn
    (``migrate_to_postgres``; ``on_file(path, n, of)`` as each begins), each verified against its
    own rows. A file refused (its rows clash with the target's, another embedding model) is
    reported (``TransferReport.refused``) and the others still go. Once all are copied, the
    memory folder's sync state of each verified file is handed over, the shared file's first:
    the PostgreSQL database keeps its state where the shared file kept its own, so an agent's
    handed over first would take its place. ``named`` as for ``migrate_to_postgres``. Raises what
    the copy raises otherwise."""
    from engram.db.postgres import redact_dsn
    from engram.db.transfer import TransferReport
    from engram.errors import ValidationError

    sources = migration_sources(settings)
    if not sources:
        raise ValidationError("from", f"no SQLite file to migrate in {settings.home} (per_agent_databases is on and"
                              " home/agents/ holds no agent's memory.db)", "--from FILE")
    reports: list[TransferReport] = []
    for n, (agent, path) in enumerate(sources, 1):
        if on_file is not None:
            on_file(path, n, len(sources))
        try:
            report = migrate_to_postgres(settings, path, database_url, progress, agent=agent, hand_over=False,
                                         named=named)
        except ValidationError as exc:  # this file clashes or cannot go: the others still can
            report = TransferReport(source=str(path), target=redact_dsn(database_url), refused=str(exc))
        reports.append(report)
    owners = {path: agent for agent, path in sources}
    for report in sorted((r for r in reports if r.verified), key=lambda r: owners[Path(r.source)] is not None):
        report.sync_state = _hand_over_sync_state(settings, Path(report.source), database_url, owners[Path(report.source)],
                                                  up=True)
    return reports


def engine_options(settings: Settings, backend: Backend) -> dict[str, Any]:
    """Keyword arguments for ``Engram(...)``: strengthening, PII policy, metrics, audit, guard."""
    from engram.audit import ReadTrail, log_event, record_changes
    from engram.events import EventBus
    from engram.metrics import Metrics
    from engram.privacy import PiiPolicy

    life = settings.lifecycle
    events = EventBus()
    events.subscribe(log_event)
    if life.audit:
        trail = backend.audit_log()
        events.subscribe_batches(functools.partial(record_changes, trail))
        if life.audit_reads:
            events.subscribe_reads(ReadTrail(trail, life.audit_max_reads))
    guard = None
    care = backend.care
    if care is not None and life.backup.enabled and life.backup.before_risky:
        def guard(reason: str) -> None:
            care.backup(reason)
    return {
        "strengthen": life.strengthen,
        "privacy": PiiPolicy.from_settings(settings.privacy),
        "metrics": Metrics(sidecar(backend, ".metrics.json", settings), samples=life.metric_samples),
        "events": events,
        "guard": guard,
    }


def build_engram(settings: Settings | None = None, *, origin: str = "library", mirror: bool = True,
                 warm: bool = False, **overrides: Any) -> Engram:
    """The engine as configured (settings: arguments > environment > config file > defaults),
    with the memory-folder mirror attached when ``files.enabled`` (``mirror=False``: not).

    ``warm``: start loading the embedding model in a background thread before the store opens
    (``Embedder.warm_up_in_background``), for a process about to embed a query; whoever closes
    the engine then waits for it first (``engram.embedder.wait_warm_up()``)."""
    if settings is not None and any(value is not None for value in overrides.values()):
        # Dropped, from_settings(settings, agent="bob") opened the settings' agent, not bob's.
        given = ", ".join(name for name, value in overrides.items() if value is not None)
        raise ConfigError(f"invalid settings ({given}: given beside a Settings object, which holds every"
                          " setting; allowed: the Settings alone, or keyword settings alone)")
    settings = settings or load_settings(**overrides)
    engram = _build_engine(settings, origin, mirror, warm)
    if settings.per_agent_databases and engram.backend.path is not None:
        _open_agents_as_they_come(engram, settings, origin, mirror)
    return engram


def _build_engine(settings: Settings, origin: str, mirror: bool, warm: bool) -> Engram:
    from engram.embed import auto_fallback_note, create_embedder
    from engram.engine import Engram
    from engram.temporal.reader import TimeReader

    embedder = create_embedder(settings.embeddings, cache_path=settings.home / "embedding-cache.db",
                               cache_key=settings.privacy.key())  # encrypted like the store
    if warm and embedder is not None:
        embedder.warm_up_in_background()
    try:
        backend = open_backend(settings, settings.agent)
    except BaseException:
        if embedder is not None:
            embedder.wait_warm_up()
        raise
    warm_store = getattr(backend.memory, "warm_up_in_background", None) if warm else None
    if warm_store is not None:
        warm_store()  # a large store's vector index opens while the model loads
    try:
        engram = Engram(backend.memory, agent=settings.agent, session=settings.session, embedder=embedder,
                        recall_settings=settings.recall, max_content_chars=settings.max_content_chars,
                        time_reader=TimeReader.from_settings(settings.time), origin=origin, backend=backend,
                        **engine_options(settings, backend))
    except BaseException:
        backend.close()
        if embedder is not None:
            embedder.wait_warm_up()
        raise
    engram.settings = settings
    engram.embedding_note = auto_fallback_note(settings.embeddings, embedder)
    if mirror:
        from engram.files.sync import attach_from_settings

        attach_from_settings(engram, settings)  # every change also lands in the memory folder
    return engram


def _open_agents_as_they_come(engram: Engram, settings: Settings, origin: str, mirror: bool) -> None:
    """Give ``engram`` (the engine of ``settings.agent``'s own database) the other agents' engines,
    each opened as configured on first ``for_agent``: a server or import acting for several
    agents writes each one's memories and conversations into that agent's own file."""
    from engram.agent_databases import AgentDatabases

    def open_engine(agent: str) -> Engram:
        # The settings' session is the first agent's; for_agent names the view's own.
        return _build_engine(settings.model_copy(update={"agent": agent, "session": None}), origin, mirror, False)

    engram.agent_databases = AgentDatabases(settings.agent, engram, open_engine)


def preload_model(settings: Settings) -> threading.Thread | None:
    """Start loading the configured embedding model in a daemon thread, before anything else
    opens (``engram mcp`` from launch, ``engram import``); the loaded model is process-wide, so the
    engine's own embedder finds it ready. None when no model is configured; join the thread before
    exiting. A failure is left for the engine's embedder to raise."""
    from engram.embed import create_embedder

    embedder = create_embedder(settings.embeddings)  # no persistent cache: only the model is shared
    return None if embedder is None else embedder.warm_up_in_background()


def maintenance_for(engram: Engram, settings: Settings, summarizer: Summarizer | None = None, *,
                    store_wide: bool | None = None) -> Maintenance:
    """The lifecycle scheduler over an engine, with its backend's file care (backups, VACUUM).

    It maintains ``engram``'s agent's memories alone, or the whole store (every agent and global)
    when ``store_wide`` is true: an operator's run, which ``engram serve`` makes. Left at None,
    the run is store-wide only when the settings name neither an agent nor a session
    (``operators_run``: the operator's cron ``engram maintain``), so that a process acting as an
    agent, or as a session (of the default agent when no agent is named), never forgets or merges
    another agent's memories; ``folder_export_memories`` decides whose memories it writes alike."""
    from engram.lifecycle.scheduler import Maintenance

    if store_wide is None:
        store_wide = operators_run(settings)
    return Maintenance(engram, settings.lifecycle, care=engram.backend.care,
                       state_path=sidecar(engram.backend, MAINTENANCE_STATE, settings), summarizer=summarizer,
                       agent=None if store_wide else engram.scope.agent or "default")


def server_upkeep(engram: Engram, settings: Settings) -> Maintenance | EveryAgentsUpkeep:
    """What ``engram serve`` runs every ``maintenance_interval_s``: the store-wide pass over its
    database and, with one database per agent, over every agent's database in the home (each
    one's own database: its pass there is the store-wide one too)."""
    from engram.agent_databases import EveryAgentsUpkeep

    first = maintenance_for(engram, settings, store_wide=True)
    if engram.agent_databases is None:
        return first
    return EveryAgentsUpkeep(engram.agent_databases, first, functools.partial(_own_database_upkeep, settings=settings),
                             lambda: every_agents_engine(engram))


def _own_database_upkeep(other: Engram, settings: Settings) -> Maintenance:
    """The maintenance of another agent's own database (``per_agent_databases``): everything in it
    is that agent's or global, so its pass is the store-wide one."""
    return maintenance_for(other, other.settings or settings, store_wide=True)


def operators_run(settings: Settings, *, all_agents: bool = False) -> bool:
    """Whether a command reaches every agent's memories (the operator's run): ``all_agents``
    (``--all-agents``), or settings that name neither an agent (``--agent``, ``ENGRAM_AGENT``,
    ``agent`` in the config file) nor a session. ``maintain`` and the folder export decide alike."""
    return all_agents or not ({"agent", "session"} & settings.model_fields_set)


def reach_agent(settings: Settings, *, all_agents: bool = False) -> str:
    """The agent whose engine an operator's command (``backup``, ``vacuum``, ``maintain``,
    ``sync``/``watch``, ``conflicts``, ``stats --all-agents``, ``reindex``, the folder export, ``serve``) reaches
    every agent's database from (``every_agents_engine``): the configured agent's (``settings.agent``), except in the operator's
    run (``operators_run``) in a home with one database per agent where that agent has no database
    and another agent has: then the first of those (by folder). The reach is every database there
    either way, and opening the configured agent's made one (``agents/default/memory.db``) for an
    agent nobody used, which the run then backed up, maintained and synced. A command acting as the
    configured agent (``remember`` without ``--agent``) opens that agent's engine as it always did:
    this is only where the operator's reach starts from. With no agent's database in the home yet,
    the configured agent's, as ``agent_care.agent_backups`` lists it."""
    if not (settings.per_agent_databases and operators_run(settings, all_agents=all_agents)):
        return settings.agent
    agents = agents_with_databases(settings)
    return settings.agent if settings.agent in agents or not agents else agents[0]


def build_reading_engram(settings: Settings, *, origin: str = "library", warm: bool = False,
                         mirror: bool = True) -> Engram:
    """The engine of a command that only reads (``list``, ``recall``, ``count``, ``stats``, ``get``,
    ``neighbours``, ``export``, ``summaries``, a read of ``engram mcp``'s session): ``build_engram``'s,
    except for an agent with no database yet (``has_no_database_yet``: none of its own in a home with
    one per agent, none at all in a new home), answered from an empty engine (``empty_engine``) that
    makes none. A read made the file, which the operator's backups, maintenance and sync then took
    for a real agent's; the agent's first write makes it."""
    from engram.agent_databases import empty_engine, has_no_database_yet

    if has_no_database_yet(settings, settings.agent):
        return empty_engine(settings, settings.agent, settings.session, origin=origin)
    return build_engram(settings, origin=origin, warm=warm, mirror=mirror)


def build_reaching_engram(settings: Settings, *, all_agents: bool = False, origin: str = "library",
                          warm: bool = False) -> Engram | None:
    """The engine of ``reach_agent`` when that is not the configured agent (opened as
    ``engram -a AGENT`` would open it, its settings' session cleared; ``warm`` as ``build_engram``),
    else None: the caller's engine of the configured agent is the reach, opened as every command opens it."""
    agent = reach_agent(settings, all_agents=all_agents)
    if agent == settings.agent:
        return None
    return build_engram(settings.model_copy(update={"agent": agent, "session": None}), origin=origin, warm=warm)


def folder_export_memories(engram: Engram, settings: Settings, *,
                           all_agents: bool = False) -> tuple[Iterable[Memory], dict[str, Iterable[Memory]]]:
    """What ``engram export --format markdown|yaml|json`` writes (``files.export.export_folder``):
    the memories of ``engram``'s database or view, and those of other agents' own databases by
    agent. With ``all_agents``, or run as no agent or session (``operators_run``), the operator's
    copy: every memory in the store, as the memory folder mirrors them, and with one database per
    agent every agent's database in the home (each one's global memories are its own: the export
    keeps them apart). Otherwise only what ``engram``'s view reads (``Engram.visible_memories``:
    its agent's, global ones, its session's), so an export run as one agent never writes out
    another agent's memories, nor their ids in a global memory's links."""
    if operators_run(settings, all_agents=all_agents):
        first, *others = every_agents_engine(engram)
        by_agent = {other.scope.agent or "default": other.store.iter_all() for other in others}
        if first.agent_databases is not None and first.scope.agent != settings.agent:
            # The reach started from another agent's database (``reach_agent``): its global memories
            # are that agent's database's, not the configured agent's, and go back there on import.
            return (), {first.scope.agent or "default": first.store.iter_all(), **by_agent}
        return first.store.iter_all(), by_agent
    return engram.visible_memories(), {}


def folder_syncer(engram: Engram, settings: Settings, *, all_agents: bool = False) -> FileSync | EveryDatabaseSync:
    """What ``engram sync`` / ``watch`` (and ``conflicts resolve``'s closing pass) run: the memory
    folder's syncer of ``engram``'s database. With ``all_agents``, or run as no agent or session
    (``operators_run``), in a home with one database per agent, every agent's database there
    (``every_agents_engine``), each syncing its own part of the folder: the operator's sync reached
    the opened database alone, and a hand edit of ``agents/bob/`` reached none."""
    from engram.files.every_database import EveryDatabaseSync
    from engram.files.sync import FileSync

    def syncer_of(engine: Engram) -> FileSync:
        return FileSync.from_settings(engine, engine.settings or settings)

    databases = engram.agent_databases
    if databases is None or not operators_run(settings, all_agents=all_agents):
        return syncer_of(engram)
    # An agent with files in the folder and no database yet (agents/carol/ written by hand) gets one.
    return EveryDatabaseSync([syncer_of(engine) for engine in every_agents_engine(engram)],
                             open_syncer=lambda agent: syncer_of(databases.engine(agent)))


def maintenance_passes(engram: Engram, settings: Settings, *, all_agents: bool = False) -> list[tuple[str | None, Maintenance]]:
    """What ``engram maintain`` runs, each with the agent whose own database it maintains (None:
    the configured database). As ``maintenance_for`` decides for ``engram``; when that is the
    whole store in a home with one database per agent (``--all-agents``, or no agent chosen: the
    operator's cron), every agent's database is the store, and each is maintained in turn."""
    first = maintenance_for(engram, settings, store_wide=True if all_agents else None)
    if first.agent is not None or engram.agent_databases is None:
        return [(None, first)]
    # Each database named by its engine's own agent: the reach may start from another agent's (``reach_agent``).
    return [(engram.scope.agent, first), *((other.scope.agent, _own_database_upkeep(other, settings))
                                       for other in every_agents_engine(engram)[1:])]


def reindex_targets(engram: Engram, settings: Settings, *, all_agents: bool = False) -> list[tuple[str | None, Engram]]:
    """The engines ``engram reindex`` re-embeds, each with the agent whose own database it is (None:
    one database of every agent). Vectors and their model's identity are kept per database, so a
    reindex covers a whole database: in a shared database that is every agent's memories, whichever
    agent runs it. With one database per agent (``per_agent_databases``) an agent's run re-embeds its
    own database alone, and the operator's run (``--all-agents``, or no agent named: ``operators_run``)
    every agent's database in the home in turn (``every_agents_engine``), where it re-embedded the
    configured agent's alone. None for an engine over no database yet (``build_reading_engram``'s for
    an agent with none, or a new home): there is nothing to re-embed, and no database is made."""
    from engram.agent_databases import not_made_yet

    if not_made_yet(engram):
        return []
    if engram.agent_databases is None:
        return [(None, engram)]
    if not operators_run(settings, all_agents=all_agents):
        return [(engram.scope.agent, engram)]
    return [(engine.scope.agent, engine) for engine in every_agents_engine(engram)]


def store_stats_by_database(engram: Engram) -> list[tuple[str | None, StoreStats, list[LatencySummary]]]:
    """What ``engram stats --all-agents`` shows: the whole store's figures (``Engram.stats``) and the
    latency percentiles kept beside its database, each with the agent whose own database it is
    (None: a database of every agent). With one database per agent that is every agent's database
    in the home (``every_agents_engine``, from ``reach_agent``'s): the figures of the one database
    the run opened were shown as every agent's. Not summed: the memory folder's sync keeps each
    global memory in every agent's database, so a sum would count one memory once per database."""
    if engram.agent_databases is None:
        return [(None, engram.stats(), engram.metrics.summary())]
    return [(engine.scope.agent, engine.stats(), engine.metrics.summary()) for engine in every_agents_engine(engram)]


def compact_conversation(engram: Engram, settings: Settings, key: str, *, force: bool = False) -> CompactionResult:
    """Compact one stored conversation as the agent does (``History.compact``), with the configured
    LLM summariser and knowledge extractor (``[llm]``, ``[chat]``; the count summary and the rule
    extractor without an LLM). Raises ``ConfigError``, ``ValidationError``, ``StorageError``."""
    from engram.agent.loop import MemoryAgent
    from engram.llm import create_provider

    agent = MemoryAgent(engram, create_provider(settings.llm), settings.chat, history=engram.history,
                        conversation=key)
    try:
        return agent.compact(force=force)
    finally:
        agent.close()
