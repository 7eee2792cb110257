"""Where settings become lifecycle parts: called only by ``Engram.from_settings``, the store
factory and the interfaces' start-up (configuration is read in one place)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from engram.audit import AuditLog, ReadTrail, audit_log_for, log_event
from engram.config import Settings
from engram.errors import ConfigError
from engram.events import EventBus
from engram.lifecycle.backup import Backups, database_of
from engram.metrics import Metrics
from engram.privacy import PiiPolicy

if TYPE_CHECKING:
    from engram.engine import Engram
    from engram.lifecycle.scheduler import Maintenance
    from engram.lifecycle.summaries import Summarizer
    from engram.store.sqlite import SqliteMemoryStore


def backups_for(settings: Settings, db_path: Path) -> Backups:
    folder = settings.lifecycle.backup.folder
    where = Path(folder).expanduser() if folder else db_path.parent / "backups"
    return Backups(db_path, where, keep=settings.lifecycle.backup.keep, key=settings.privacy.key())


def open_sqlite_store(settings: Settings, agent: str) -> SqliteMemoryStore:
    """Open the SQLite store: integrity check first, backup before migrations, SQLCipher key."""
    from engram.store.sqlite import SqliteMemoryStore

    path = settings.database_path(agent)
    backups = backups_for(settings, path)
    backups.startup_check(settings.lifecycle.backup.startup_check)
    before = None
    if settings.lifecycle.backup.enabled and settings.lifecycle.backup.before_risky:
        def before(db: Any) -> None:
            backups.create("pre-migration", source=db)
    return SqliteMemoryStore(path, busy_timeout_ms=settings.busy_timeout_ms, key=settings.privacy.key(),
                             before_migrate=before, vector_index=settings.vector_index,
                             full_text=settings.full_text, after_close=backups.closed_cleanly)


def _sidecar(store: Any, suffix: str) -> Path | None:
    path = getattr(store, "path", None)
    return path.with_name(path.name + suffix) if isinstance(path, Path) else None


def engine_options(settings: Settings, store: Any) -> dict[str, Any]:
    """Keyword arguments for ``Engram(...)``: strengthening, PII policy, metrics, audit, guard."""
    life = settings.lifecycle
    db = database_of(store)
    if settings.privacy.key() and getattr(store, "path", None) is not None and not (db is not None and db.encrypted):
        raise ConfigError(f"privacy.encryption_key is set but the {settings.backend!r} backend cannot encrypt its file;"
                          " use backend = \"sqlite\" (or remove the key)")
    events = EventBus()
    events.subscribe(log_event)
    if life.audit:
        trail = audit_log_for(store)
        events.subscribe(trail)
        if life.audit_reads:
            events.subscribe_reads(ReadTrail(trail, life.audit_max_reads))
    guard = None
    if db is not None and life.backup.enabled and life.backup.before_risky:
        backups = backups_for(settings, Path(db.path))

        def guard(reason: str) -> None:
            backups.create(reason, source=db)
    return {
        "strengthen": life.strengthen,
        "privacy": PiiPolicy.from_settings(settings.privacy),
        "metrics": Metrics(_sidecar(store, ".metrics.json"), samples=life.metric_samples),
        "events": events,
        "guard": guard,
    }


def audit_of(engram: Engram) -> AuditLog:
    """The audit trail of an engine's store (for queries)."""
    return audit_log_for(engram.store)


def maintenance_for(engram: Engram, settings: Settings, summarizer: Summarizer | None = None) -> Maintenance:
    from engram.lifecycle.scheduler import Maintenance

    db = database_of(engram.store)
    backups = backups_for(settings, Path(db.path)) if db is not None else None
    return Maintenance(engram, settings.lifecycle, backups=backups, state_path=_sidecar(engram.store, ".maintenance.json"),
                       summarizer=summarizer)
