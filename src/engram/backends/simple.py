"""Backends without a database connection: JSON files, process memory, and memory turned off.

None of them can hold API tokens or back up a file; the composition root keeps tokens in
``home/auth.db`` for them. Conversations: in process memory for the in-memory backend (shared by
its agents), elsewhere (``history.backend``) for the others. Their audit trail is a JSON-lines
file beside the JSON file, or kept in process.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

from engram.errors import ConfigError

if TYPE_CHECKING:
    from engram.audit import AuditLog
    from engram.auth import TokenStore
    from engram.backends.base import FileCare
    from engram.config import Settings
    from engram.history.base import HistoryStore
    from engram.history.semantic import ExchangeEmbedder, ExchangeIndex
    from engram.store.base import MemoryStore


class StoreBackend:
    """A memory store alone (``Engram(store)``, or a backend with no database): its audit trail in
    process (or in ``audit_path``), no history of its own, no tokens, no file care."""

    name = "store"
    history_name: str | None = None
    care: FileCare | None = None

    def __init__(self, memory: MemoryStore, *, path: Path | None = None, audit_path: Path | None = None) -> None:
        self._memory = memory
        self.path = path
        self._audit_path = audit_path
        self._audit: AuditLog | None = None

    @property
    def memory(self) -> MemoryStore:
        return self._memory

    def history_store(self, agent: str) -> HistoryStore:
        raise ConfigError(f"the {self.name} backend keeps no conversation history; set history.backend")

    def exchange_index(self, embedder: ExchangeEmbedder, agent: str, **options: Any) -> ExchangeIndex | None:
        return None

    def audit_log(self) -> AuditLog:
        from engram.audit import MemoryAuditLog

        if self._audit is None:
            self._audit = MemoryAuditLog(self._audit_path)
        return self._audit

    def token_store(self) -> TokenStore | None:
        return None

    def warm(self) -> None:
        pass

    def close(self) -> None:
        self._memory.close()


class InMemoryBackend(StoreBackend):
    """Everything in process memory: memories, every agent's conversations (one shared set of
    shelves), the exchange index (an in-memory SQLite database), the audit trail."""

    name = "inmemory"
    history_name = "inmemory"

    def __init__(self, memory: MemoryStore | None = None) -> None:
        from engram.history.inmemory import InMemoryHistoryStore
        from engram.store.inmemory import InMemoryMemoryStore

        super().__init__(memory or InMemoryMemoryStore())
        self._history = InMemoryHistoryStore()
        self._index_db: Any = None

    @classmethod
    def open(cls, settings: Settings, agent: str = "default") -> InMemoryBackend:
        return cls()

    def history_store(self, agent: str) -> HistoryStore:
        return self._history.for_agent(agent)

    def exchange_index(self, embedder: ExchangeEmbedder, agent: str, **options: Any) -> ExchangeIndex | None:
        from engram.db.migrate import migrate
        from engram.db.sqlite import Database
        from engram.history.semantic import ExchangeIndex

        if self._index_db is None:
            self._index_db = Database(":memory:")
            migrate(self._index_db)
        return ExchangeIndex(self._index_db, embedder, agent=agent, **options)

    def close(self) -> None:
        super().close()
        if self._index_db is not None:
            self._index_db.close()


class JsonFileBackend(StoreBackend):
    """Memories in one JSON file; the audit trail in ``<file>.audit.jsonl`` beside it."""

    name = "jsonfile"

    @classmethod
    def open(cls, settings: Settings, agent: str) -> JsonFileBackend:
        from engram.model import Scope
        from engram.store.jsonfile import JsonFileMemoryStore

        path = settings.database_path(agent)
        if settings.privacy.key():
            raise ConfigError("privacy.encryption_key is set but the 'jsonfile' backend cannot encrypt its file;"
                              " use backend = \"sqlite\" (or remove the key)")
        store = JsonFileMemoryStore(path, max_content_chars=settings.max_content_chars, owner=Scope(agent))
        return cls(store, path=path, audit_path=path.with_name(path.name + ".audit.jsonl"))


class DisabledBackend(StoreBackend):
    """Memory turned off: nothing is stored, nothing fails. Its conversations too, unless
    ``history.backend`` names a store (``root.history_backend_name``): sqlite's made a
    ``memory.db`` (an agent's own with ``per_agent_databases``) for an agent that stores nothing."""

    name = "disabled"
    history_name = "disabled"

    @classmethod
    def open(cls, settings: Settings, agent: str) -> DisabledBackend:
        from engram.store.disabled import DisabledMemoryStore

        return cls(DisabledMemoryStore())

    def history_store(self, agent: str) -> HistoryStore:
        from engram.history.disabled import DisabledHistoryStore

        return DisabledHistoryStore(agent=agent)


class JsonlHistoryBackend(StoreBackend):
    """Conversations in a JSON-lines file (Clawless's format), shared by every agent; their
    exchange index in a SQLite file of engram's home (``exchange_index_path``), opened when first
    asked for."""

    name = "jsonl"
    history_name = "jsonl"

    def __init__(self, path: Path, *, options: dict[str, Any], unowned_agent: str, index_path: Path,
                 busy_timeout_ms: int = 30_000) -> None:
        from engram.store.disabled import DisabledMemoryStore

        super().__init__(DisabledMemoryStore(), path=path)
        self.index_path = index_path
        self._options = options
        self._unowned = unowned_agent
        self._busy_timeout_ms = busy_timeout_ms
        self._index_db: Any = None

    @classmethod
    def open(cls, settings: Settings, agent: str) -> JsonlHistoryBackend:
        h = settings.history
        if settings.privacy.encrypted:
            # Both the JSON lines and the exchange index beside them would hold every message in clear.
            raise ConfigError("privacy.encryption_key is set but the 'jsonl' history backend cannot encrypt its"
                              " file; use history.backend = \"sqlite\" (the encrypted database) or remove the key")
        own_file = settings.per_agent_databases and h.path is None
        folder = settings.agent_folder(agent) if settings.per_agent_databases else settings.home
        path = Path(h.path) if h.path is not None else folder / "conversation-history.jsonl"
        options = {"max_entries": h.max_entries, "max_chars_per_entry": h.max_chars_per_entry,
                   "max_total_chars": h.max_total_chars}
        options |= {"lock_path": jsonl_side_path(settings.home, path, ".lock"),
                    "summaries_path": jsonl_side_path(settings.home, path, ".summaries.json")}
        return cls(path, options=options, unowned_agent=agent if own_file else "default",
                   index_path=exchange_index_path(settings.home, path), busy_timeout_ms=settings.busy_timeout_ms)

    def history_store(self, agent: str) -> HistoryStore:
        from engram.history.jsonl import JsonlHistoryStore

        assert self.path is not None
        return JsonlHistoryStore(self.path, agent=agent, unowned_agent=self._unowned, **self._options)

    def exchange_index(self, embedder: ExchangeEmbedder, agent: str, **options: Any) -> ExchangeIndex | None:
        from engram.db.migrate import migrate
        from engram.db.sqlite import Database
        from engram.history.semantic import ExchangeIndex

        if self._index_db is None:
            self._index_db = Database(self.index_path, busy_timeout_ms=self._busy_timeout_ms)
            migrate(self._index_db)
        return ExchangeIndex(self._index_db, embedder, agent=agent, **options)

    def close(self) -> None:
        if self._index_db is not None:
            self._index_db.close()


def exchange_index_path(home: Path, history_file: Path) -> Path:
    """Where the exchange index of the JSONL history ``history_file`` is kept (``jsonl_side_path``).
    The index is engram's derived data: an index an earlier version made beside the file stays in
    use, so the exchanges it holds (older ones the file's FIFO dropped included) stay searchable;
    delete it to have the next open build one in the home from the file."""
    return jsonl_side_path(home, history_file, ".exchanges.db")


def jsonl_side_path(home: Path, history_file: Path, suffix: str) -> Path:
    """Where engram keeps a file of its own for the JSONL history ``history_file`` (``suffix``:
    ``.exchanges.db`` the exchange index, ``.lock`` the write lock, ``.summaries.json`` the
    summaries): in the engram home, ``state/jsonl-<digest of the file's resolved path><suffix>``
    (the folder that keeps the files of a database with no folder of engram's,
    ``root.database_sidecar``). The JSONL file may be another program's (Clawless's
    ``~/.clawless/conversation-history.jsonl``; Clawless keeps no lock or summaries beside it, so
    no other program shares these files), and engram's files made beside it littered that
    program's folder. A file an earlier version made there (``<file><suffix>``) is still used where
    it is: summaries are kept, and a still-running earlier version locks the same file as this one."""
    beside = history_file.with_name(history_file.name + suffix)
    if beside.exists():
        return beside
    digest = hashlib.sha256(str(history_file.resolve()).encode("utf-8")).hexdigest()[:16]
    return home / "state" / f"jsonl-{digest}{suffix}"
