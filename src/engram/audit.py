"""The audit trail: every store, update, forget, link, unlink, import and move, with when, which
interface (``origin``), the acting scope and the reason when one was given; and every recall
(``recalled``: the query and the ids, keys and scores it returned), as ClawCode audits "all memory
access". Reads can be many, so their trail is one row per recall, switchable
(``lifecycle.audit_reads``) and bounded (``lifecycle.audit_max_reads``: the oldest read rows go first,
pruned every ``PRUNE_EVERY`` recalls through the ``(memory_id, at)`` index, as read rows have no memory id).

It is written by subscribing to the engine's events (``events.py``), so every interface and every
maintenance job is covered without calling it; a failed audit write is logged by the event bus
and never undoes the change. A forget records each removed memory whole (``detail``), so an
operator can see what went and restore it by hand. On SQLite the trail is the ``audit_log`` table
in the same file (migration 0004, included in backups), on PostgreSQL the ``audit_log`` table of the
shared database (every process writes one trail); other backends keep it in process
(in-memory) or in a JSON-lines file beside the JSON store. Which one is the backend's to say
(``Backend.audit_log``, ``engram.backends``).

Change rows are never pruned, so the trail is also engram's record of what was forgotten:
``AuditLog.forgotten`` answers, for a batch of memory ids in one indexed query, which of them a
forget removed; ``forgotten_from`` reads its answer per agent. ``Engram.forgotten`` asks it only
about what its own agent may see (another agent's forgets are that agent's business), and an
import asks about the agents its records join (and skips those rather than bring them back).
A memory moved to another scope (``moved``: one row, in the scope it went to, naming the scope it
left) was not forgotten: it is still stored under its id, and no forget row stands for it.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Protocol

from engram import jsondoc
from engram.db.sqlite import Database
from engram.drain import Drain
from engram.errors import StorageError, ValidationError
from engram.events import MemoryEvent, ReadEvent
from engram.model import Memory, Scope, changed_fields, parse_integer, usable_text

CHANGES = ("stored", "updated", "forgotten", "linked", "unlinked", "imported", "moved")
# Recalls arrive as ReadEvents only (ReadTrail), never as MemoryEvents; an erase's row is written by
# ``Engram.forget(erase=True)`` itself, after the rows it erased (``erase_rows``).
AUDITED = (*CHANGES, "recalled", "erased")
PRUNE_EVERY = 64
# The most rows one query returns (``AuditQuery.limit``).
MAX_QUERY_LIMIT = 100_000
# Rows committed together at most when concurrent changes are audited (see ``_SharedInserts``).
MAX_ROWS_PER_INSERT = 1_000
operations = logging.getLogger("engram.operations")


@dataclass(frozen=True, slots=True)
class AuditEntry:
    at: float
    action: str
    origin: str
    reason: str | None
    actor_scope: str
    memory_id: str | None
    memory_key: str | None
    memory_scope: str | None
    detail: dict[str, Any] | None = None
    seq: int = 0


@dataclass(frozen=True, slots=True)
class AuditQuery:
    action: str | None = None
    memory: str | None = None  # id or key
    origin: str | None = None
    since: float | None = None
    until: float | None = None
    limit: int = 100
    # Only entries about memories of these scopes (``str(Scope)``): what one agent may read.
    scopes: tuple[str, ...] | None = None


def entries_for(event: MemoryEvent) -> list[AuditEntry]:
    """The rows an event becomes: one per memory; a link's rows name the other end."""
    if event.kind not in CHANGES:
        return []
    rows = []
    for memory in event.memories:
        if event.kind == "forgotten":
            detail: dict[str, Any] | None = memory.to_dict()
        elif event.kind in ("linked", "unlinked"):  # a link event holds its two ends, never a bulk
            # The row is read by whoever reads this memory's scope (every agent, for a global one):
            # it names the other end only when they may read it too. An agent linking its memory
            # to a global one is recorded whole on its own memory's row; the global row, naming
            # nothing, is left out of every other agent's view (``visibility.without_others_links``).
            detail = {"with": [o.key for o in event.memories
                               if o.id != memory.id and o.scope in memory.scope.visible()]}
        elif event.kind == "moved":
            detail = _moved(memory, event.before(memory))
        else:
            detail = _written(memory, event.before(memory) if event.kind == "updated" else None)
        rows.append(AuditEntry(event.at, event.kind, event.origin, event.reason, str(event.scope), memory.id,
                               memory.key, str(memory.scope), detail))
    return rows


# The values a store or update row keeps, as it always has; the other fields an update changes are
# named, not copied (the row stays small; their values are the memory's, and a forget keeps it whole).
VALUED = ("content", "importance")


def _written(memory: Memory, before: Memory | None) -> dict[str, Any]:
    """A store's or update's detail: the content and importance written; for an update whose
    previous state is known, ``changed`` (the names of the fields that differ, ``changed_fields``)
    and ``previous`` (the earlier content and importance, those of them that changed). The values
    are the ones stored, so with ``privacy.pii = "redact"`` they are already redacted."""
    detail: dict[str, Any] = {"content": memory.content, "importance": memory.importance}
    if before is not None:
        changed = changed_fields(before, memory)
        detail["changed"] = list(changed)
        detail["previous"] = {name: getattr(before, name) for name in VALUED if name in changed}
    return detail


def _moved(memory: Memory, before: Memory | None) -> dict[str, Any]:
    """A move's detail: the scope it left (``from``) and the one it is in (``to``, the row's
    ``memory_scope``), and its earlier key when the new scope held that one (``previous_key``). The
    links a move dropped are not named: the row is read in the new scope, and they were another
    agent's memories."""
    detail: dict[str, Any] = {"from": None if before is None else str(before.scope), "to": str(memory.scope)}
    if before is not None and before.key != memory.key:
        detail["previous_key"] = before.key
    return detail


def read_entry(event: ReadEvent) -> AuditEntry:
    """The one row a recall becomes: its scope stands as the memory scope, so the agent sees it."""
    scope = str(event.scope)
    detail = {"query": event.query, "mode": event.mode,
              "results": [{"id": i, "key": k, "score": score} for i, k, score in event.hits]}
    return AuditEntry(event.at, "recalled", event.origin, None, scope, None, None, scope, detail)


def record_changes(trail: AuditLog, events: Sequence[MemoryEvent]) -> None:
    """``events``' rows inserted into ``trail`` together (a write batch's: one transaction)."""
    trail.insert([row for event in events for row in entries_for(event)])


def log_event(event: MemoryEvent) -> None:
    """A structured log line for every change (``engram.operations``, JSON in the message)."""
    if event.kind not in CHANGES:
        return
    operations.info(json.dumps({
        "event": event.kind, "origin": event.origin, "reason": event.reason, "scope": str(event.scope),
        "at": event.at, "memories": [{"id": m.id, "key": m.key, "scope": str(m.scope)} for m in event.memories],
    }, ensure_ascii=False))


def validate_query(query: AuditQuery) -> AuditQuery:
    """``query`` with its limit a whole number; raises ``ValidationError`` naming the field. An
    origin that is empty, not text or holds a NUL names none a row can have: it matched nothing,
    unsaid, and ``--origin ""`` answered "no entry matches" over a trail full of entries."""
    if query.action is not None and query.action not in AUDITED:
        raise ValidationError("action", f"unknown action {jsondoc.shown(query.action)}", AUDITED)
    if query.origin is not None:
        origins = "an origin: cli, library, mcp, http, maintenance, sync, ..."
        if not isinstance(query.origin, str):
            raise ValidationError("origin", f"got {jsondoc.shown(query.origin)} ({type(query.origin).__name__})", origins)
        if not query.origin.strip():
            raise ValidationError("origin", "must not be empty", origins)
        usable_text("origin", query.origin)
    return replace(query, limit=parse_integer(query.limit, "limit", 1, MAX_QUERY_LIMIT))


def erased(entry: AuditEntry, ids: Collection[str], keys: Collection[tuple[str, str]]) -> AuditEntry | None:
    """``entry`` with nothing left of the memories ``ids`` (``keys``: each one's ``str(Scope)`` and
    key) but their ids, or None when it holds nothing of them. A row about one of them keeps its
    action, time, origin, scopes and memory id, and loses its key (often made from the content),
    reason and detail (content, metadata, the memory whole). A link row of another memory drops
    their keys from ``with``, each only where it can name that memory: ``with`` names the other
    end only when it is in a scope the row's memory sees (``entries_for``), so a global memory's
    link row never names an agent's memory, and an agent's key equal to another global memory's
    is that one's, recorded for whoever linked it (another agent included), and stays. A recall
    row keeps its query (the user's words) and its results' ids and scores, and drops their keys.
    The ids stay, so an import still knows the memory was forgotten and does not bring it back."""
    if entry.memory_id is not None and entry.memory_id in ids:
        if entry.memory_key is None and entry.reason is None and entry.detail is None:
            return None
        return replace(entry, memory_key=None, reason=None, detail=None)
    detail = entry.detail
    if not isinstance(detail, dict):
        return None
    if entry.action in ("linked", "unlinked") and isinstance(detail.get("with"), list):
        named = _keys_seen_from(entry.memory_scope, keys)
        kept = [k for k in detail["with"] if k not in named]
        return replace(entry, detail={**detail, "with": kept}) if len(kept) != len(detail["with"]) else None
    if entry.action == "recalled" and isinstance(detail.get("results"), list):
        results = detail["results"]
        hit = [isinstance(r, dict) and r.get("id") in ids and r.get("key") is not None for r in results]
        if not any(hit):
            return None
        kept = [{**r, "key": None} if h else r for r, h in zip(results, hit, strict=True)]
        return replace(entry, detail={**detail, "results": kept})
    return None


def _keys_seen_from(scope: str | None, keys: Collection[tuple[str, str]]) -> set[str]:
    """The keys of ``keys`` (``str(Scope)``, key) whose memory a memory of ``scope`` sees, so its
    link rows may name it."""
    try:
        visible = {str(s) for s in Scope.parse(scope).visible()} if scope is not None else set()
    except ValidationError:  # a row written otherwise than by engram: nothing of ours is named in it
        return set()
    return {key for where, key in keys if where in visible}


def erase_rows(rows: Iterable[AuditEntry], ids: Collection[str], keys: Collection[tuple[str, str]]) -> list[AuditEntry]:
    """The rows of ``rows`` that change when the memories ``ids`` (``keys``: their scopes and keys) are erased, as they become."""
    return [row for row in (erased(r, ids, keys) for r in rows) if row is not None]


class AuditLog(Protocol):
    def __call__(self, event: MemoryEvent) -> None: ...

    def insert(self, rows: list[AuditEntry]) -> None: ...

    def prune_reads(self, keep: int) -> None: ...

    def query(self, query: AuditQuery) -> list[AuditEntry]: ...

    def forgotten(self, ids: Sequence[str], action: str = "forgotten") -> set[tuple[str, str | None]]:
        """``(memory id, memory scope)`` of every ``forgotten`` row (or ``action``'s: ``erased``)
        about one of ``ids``, and no other row: which of them a forget removed (an erase erased),
        and from which scope."""
        ...

    def forgotten_by_origin_id(self, kind: str, origin_id: str) -> set[tuple[str, str | None]]:
        """``(memory id, memory scope)`` of every ``forgotten`` row whose memory (kept whole in its
        ``detail``) held the string ``origin_id`` at ``metadata[kind]["id"]``: the id an import from
        ``kind`` kept (mem0's, for the mem0 facade's ``history`` of a memory deleted by that id).
        Every agent's rows: the caller narrows. Indexed for ``mem0`` (``audit_log_mem0_id``, schema
        steps 0015 and 0020); another kind's is a scan."""
        ...

    def erase(self, ids: Sequence[str], keys: Collection[tuple[str, str]], scopes: Collection[str],
              sessions_of: str | None = None) -> int:
        """Rewrite the rows of ``scopes`` (``str(Scope)``), and of every session of the agent
        ``sessions_of``, that hold anything of the memories ``ids`` (``keys``: each one's
        ``str(Scope)`` and key) as ``erased`` makes them, in
        one transaction; how many changed. Rows of other scopes (another agent's) are never read
        nor touched."""
        ...


def forgotten_from(log: AuditLog, ids: Iterable[tuple[str, str | None]], *,
                   scopes: Collection[str] | None = None, action: str = "forgotten") -> set[tuple[str, str | None]]:
    """Of ``ids`` (each a memory id with the agent it belongs to, None for global), the pairs ``log``
    records as forgotten (``action``: or erased) from that agent (its agent scope or one of its
    sessions; global for None), counting only rows of ``scopes`` (``str(Scope)``) when given. One
    query for the batch; a row about the same id forgotten from another agent answers nothing."""
    asked = set(ids)
    if not asked:
        return set()
    found = log.forgotten(sorted({memory_id for memory_id, _ in asked}), action)
    agents_of = {(memory_id, None if scope is None else Scope.parse(scope).agent) for memory_id, scope in found
                 if scopes is None or scope in scopes}
    return asked & agents_of


class ReadTrail:
    """Writes a row per recall to an audit log and keeps at most ``max_entries`` of them."""

    def __init__(self, log: AuditLog, max_entries: int) -> None:
        self.log = log
        self.max_entries = max_entries
        self._count = 0
        self._lock = threading.Lock()

    def __call__(self, event: ReadEvent) -> None:
        self.log.insert([read_entry(event)])
        with self._lock:
            self._count += 1
            due = self._count % PRUNE_EVERY == 0
        if due:
            self.log.prune_reads(self.max_entries)


class _SharedInserts:
    """Rows of concurrent callers inserted in one transaction (``engram.drain``): a write batch's
    rows arrive together (``record_changes``), and changes made outside it (forget, link, the
    batches of other writers) join whatever insert is waiting, instead of each taking its turn on
    the database's write lock. Each caller returns only once its rows are committed, or with the error."""

    def __init__(self) -> None:
        self._inserts: Drain[list[AuditEntry], None] = Drain(self._insert_together, MAX_ROWS_PER_INSERT, len)

    def __call__(self, event: MemoryEvent) -> None:
        self.insert(entries_for(event))

    def insert(self, rows: list[AuditEntry]) -> None:
        if rows:
            self._inserts.submit(rows)

    def _insert_together(self, batches: list[list[AuditEntry]]) -> list[None]:
        self._insert_now([row for rows in batches for row in rows])
        return [None] * len(batches)

    def _insert_now(self, rows: list[AuditEntry]) -> None:  # pragma: no cover - abstract
        raise NotImplementedError


class SqliteAuditLog(_SharedInserts):
    """The ``audit_log`` table of a SQLite store."""

    def __init__(self, db: Database) -> None:
        super().__init__()
        self.db = db

    def _insert_now(self, rows: list[AuditEntry]) -> None:
        with self.db.write() as conn:
            conn.executemany(
                "INSERT INTO audit_log (at, action, origin, reason, actor_scope, memory_id, memory_key, memory_scope,"
                " detail) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [(r.at, r.action, r.origin, r.reason, r.actor_scope, r.memory_id, r.memory_key, r.memory_scope,
                  None if r.detail is None else json.dumps(r.detail, ensure_ascii=False)) for r in rows],
            )

    def prune_reads(self, keep: int) -> None:
        with self.db.write() as conn:
            conn.execute(_PRUNE_READS.replace("%s", "?"), (keep,))

    def query(self, query: AuditQuery) -> list[AuditEntry]:
        where, params = _where(validate_query(query), "?")
        with self.db.read() as conn:
            rows = conn.execute(
                f"SELECT {_SELECT} FROM audit_log WHERE {where} ORDER BY seq DESC LIMIT ?", [*params, query.limit]
            ).fetchall()
        return [_entry(r, json.loads(r[9]) if r[9] else None) for r in rows]

    def forgotten(self, ids: Sequence[str], action: str = "forgotten") -> set[tuple[str, str | None]]:
        if not ids:
            return set()
        # One statement, one parameter however many ids (an import may ask about thousands): the
        # ids drive the join (CROSS JOIN keeps that order), each one a lookup in the (memory_id, at) index.
        with self.db.read() as conn:
            rows = conn.execute(
                "SELECT DISTINCT a.memory_id, a.memory_scope FROM json_each(?) j"
                " CROSS JOIN audit_log a ON a.memory_id = j.value WHERE a.action = ?",
                (json.dumps(list(ids)), action),
            ).fetchall()
        return {(r[0], r[1]) for r in rows}

    def forgotten_by_origin_id(self, kind: str, origin_id: str) -> set[tuple[str, str | None]]:
        from engram.store.where_sql import sqlite_path, sqlite_value_at

        # The path as a literal, as the index is written (a bound path is another expression to the
        # planner); the type test keeps a number or a list at that path from matching a string.
        keys = ("metadata", kind, "id")
        with self.db.read() as conn:
            rows = conn.execute(
                f"SELECT DISTINCT memory_id, memory_scope FROM audit_log WHERE {sqlite_value_at('detail', keys)} = ?"
                " AND action = 'forgotten' AND json_type(detail, ?) = 'text'", (origin_id, sqlite_path(keys))).fetchall()
        return {(r[0], r[1]) for r in rows}

    def erase(self, ids: Sequence[str], keys: Collection[tuple[str, str]], scopes: Collection[str],
              sessions_of: str | None = None) -> int:
        if not ids or not scopes:
            return 0
        where, params = _erase_where(ids, scopes, sessions_of, "?")
        with self.db.write() as conn:
            rows = [_entry(r, json.loads(r[9]) if r[9] else None)
                    for r in conn.execute(f"SELECT {_SELECT} FROM audit_log WHERE {where}", params).fetchall()]
            changed = erase_rows(rows, set(ids), set(keys))
            conn.executemany("UPDATE audit_log SET memory_key = ?, reason = ?, detail = ? WHERE seq = ?",
                             [(r.memory_key, r.reason, None if r.detail is None else json.dumps(r.detail, ensure_ascii=False),
                               r.seq) for r in changed])
        return len(changed)


class PostgresAuditLog(_SharedInserts):
    """The ``audit_log`` table of the shared PostgreSQL database (migration ``postgres/0004_audit``):
    every engram process on the database writes to and reads from the same trail."""

    def __init__(self, db: Any) -> None:
        super().__init__()
        self.db = db  # an ``engram.db.postgres.PgDatabase``

    def _insert_now(self, rows: list[AuditEntry]) -> None:
        from psycopg.types.json import Json

        # JSON, not JSONB (migration postgres/0016): the detail comes back as it was written.
        params = [(r.at, r.action, r.origin, r.reason, r.actor_scope, r.memory_id, r.memory_key, r.memory_scope,
                   None if r.detail is None else Json(r.detail)) for r in rows]

        def work(conn: Any) -> None:
            with conn.cursor() as cur:
                cur.executemany(
                    "INSERT INTO audit_log (at, action, origin, reason, actor_scope, memory_id, memory_key,"
                    " memory_scope, detail) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)", params,
                )

        self.db.transact(work)

    def prune_reads(self, keep: int) -> None:
        self.db.transact(lambda conn: conn.execute(_PRUNE_READS, (keep,)))

    def query(self, query: AuditQuery) -> list[AuditEntry]:
        where, params = _where(validate_query(query), "%s")
        with self.db.read() as conn:
            rows = conn.execute(
                f"SELECT {_SELECT} FROM audit_log WHERE {where} ORDER BY seq DESC LIMIT %s", [*params, query.limit]
            ).fetchall()
        return [_entry(r, r[9]) for r in rows]

    def forgotten(self, ids: Sequence[str], action: str = "forgotten") -> set[tuple[str, str | None]]:
        if not ids:
            return set()
        # One array parameter however many ids, each looked up in the (memory_id, at) index.
        with self.db.read(statements_alone=True) as conn:
            rows = conn.execute(
                "SELECT DISTINCT memory_id, memory_scope FROM audit_log WHERE memory_id = ANY(%s)"
                " AND action = %s", (list(ids), action),
            ).fetchall()
        return {(r[0], r[1]) for r in rows}

    def forgotten_by_origin_id(self, kind: str, origin_id: str) -> set[tuple[str, str | None]]:
        from engram.store.where_sql import postgres_text_at

        # The keys as literals, as the index is written; the type test keeps a number's or a list's
        # text at that path from matching a string.
        keys = ["metadata", kind, "id"]
        with self.db.read(statements_alone=True) as conn:
            rows = conn.execute(
                f"SELECT DISTINCT memory_id, memory_scope FROM audit_log WHERE {postgres_text_at('detail::jsonb', keys)} = %s"
                " AND action = 'forgotten' AND jsonb_typeof(detail::jsonb #> %s::text[]) = 'string'",
                (origin_id, keys)).fetchall()
        return {(r[0], r[1]) for r in rows}

    def erase(self, ids: Sequence[str], keys: Collection[tuple[str, str]], scopes: Collection[str],
              sessions_of: str | None = None) -> int:
        if not ids or not scopes:
            return 0
        from psycopg.types.json import Json

        where, params = _erase_where(ids, scopes, sessions_of, "%s")
        count = 0

        def work(conn: Any) -> None:
            nonlocal count
            rows = [_entry(r, r[9]) for r in conn.execute(
                f"SELECT {_SELECT} FROM audit_log WHERE {where} FOR UPDATE", params).fetchall()]
            changed = erase_rows(rows, set(ids), set(keys))
            with conn.cursor() as cur:
                cur.executemany("UPDATE audit_log SET memory_key = %s, reason = %s, detail = %s WHERE seq = %s",
                                [(r.memory_key, r.reason, None if r.detail is None else Json(r.detail), r.seq)
                                 for r in changed])
            count = len(changed)

        self.db.transact(work)
        return count


def _erase_where(ids: Sequence[str], scopes: Collection[str], sessions_of: str | None,
                 mark: str) -> tuple[str, list[Any]]:
    """The rows an erase of ``ids`` reads: those about them, and the link and recall rows that may
    name them, of ``scopes`` and the sessions of agent ``sessions_of`` only. One parameter per list
    however many ids (a bulk erase)."""
    if mark == "?":
        among, params = "IN (SELECT value FROM json_each(?))", [json.dumps(sorted(scopes))]
        prefix = "substr(memory_scope, 1, ?) = ?"  # not LIKE: a name may hold "_", LIKE's wildcard
    else:
        among, params = "= ANY(%s)", [sorted(scopes)]
        prefix = "left(memory_scope, %s) = %s"
    where = f"memory_scope {among}"
    if sessions_of is not None:
        session = _session_prefix(sessions_of)
        where = f"({where} OR {prefix})"
        params += [len(session), session]
    params.append(json.dumps(list(ids)) if mark == "?" else list(ids))
    if mark == "?":
        # Each part through its index ((memory_id, at); the partial audit_log_mentions, migration
        # 0016): an OR of the two read the whole trail.
        return (f"{where} AND seq IN (SELECT seq FROM audit_log WHERE memory_id {among} UNION"
                f" SELECT seq FROM audit_log WHERE action IN ('linked', 'unlinked', 'recalled'))"), params
    return f"{where} AND (memory_id {among} OR action IN ('linked', 'unlinked', 'recalled'))", params


def _session_prefix(agent: str) -> str:
    """What ``str(Scope)`` of every session of ``agent`` starts with."""
    return str(Scope(agent, "s"))[: -len("s")]


_SELECT = "seq, at, action, origin, reason, actor_scope, memory_id, memory_key, memory_scope, detail"
# Read rows have no memory id: the (memory_id, at) index finds them, newest first, without a scan.
_PRUNE_READS = (
    "DELETE FROM audit_log WHERE memory_id IS NULL AND action = 'recalled' AND at <= ("
    "SELECT at FROM audit_log WHERE memory_id IS NULL AND action = 'recalled' ORDER BY at DESC LIMIT 1 OFFSET %s)"
)


def _where(query: AuditQuery, mark: str) -> tuple[str, list[Any]]:
    """The WHERE clause of an audit query, with ``mark`` as the driver's placeholder."""
    clauses, params = ["1 = 1"], []
    for column, value in (("action", query.action), ("origin", query.origin)):
        if value is not None:
            clauses.append(f"{column} = {mark}")
            params.append(value)
    if query.memory is not None:
        clauses.append(f"(memory_id = {mark} OR memory_key = {mark})")
        params.extend([query.memory, query.memory])
    if query.since is not None:
        clauses.append(f"at >= {mark}")
        params.append(query.since)
    if query.until is not None:
        clauses.append(f"at <= {mark}")
        params.append(query.until)
    if query.scopes is not None:
        clauses.append(f"memory_scope IN ({', '.join([mark] * len(query.scopes))})" if query.scopes else "1 = 0")
        params.extend(query.scopes)
    return " AND ".join(clauses), params


def _entry(row: Any, detail: dict[str, Any] | None) -> AuditEntry:
    return AuditEntry(row[1], row[2], row[3], row[4], row[5], row[6], row[7], row[8], detail, row[0])


class MemoryAuditLog:
    """The trail kept in process (in-memory store), or appended to a JSON-lines file."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._rows: list[AuditEntry] = []

    def __call__(self, event: MemoryEvent) -> None:
        self.insert(entries_for(event))

    def insert(self, rows: list[AuditEntry]) -> None:
        if not rows:
            return
        with self._lock:
            self._rows.extend(rows)
            if self.path is not None:
                try:
                    with self.path.open("a", encoding="utf-8") as handle:
                        for row in rows:
                            handle.write(json.dumps(_row_dict(row), ensure_ascii=False) + "\n")
                except OSError as exc:
                    raise StorageError(f"cannot append to audit file {self.path}: {exc}") from exc

    def prune_reads(self, keep: int) -> None:
        with self._lock:
            rows = self._all()
            reads = [r for r in rows if r.action == "recalled"]
            if len(reads) <= keep:
                return
            dropped = {id(r) for r in reads[: len(reads) - keep]}
            self._rewrite([r for r in rows if id(r) not in dropped])

    def erase(self, ids: Sequence[str], keys: Collection[tuple[str, str]], scopes: Collection[str],
              sessions_of: str | None = None) -> int:
        wanted, keys = set(ids), set(keys)
        session = None if sessions_of is None else _session_prefix(sessions_of)

        def ours(scope: str | None) -> bool:
            return scope in scopes or (session is not None and scope is not None and scope.startswith(session))

        with self._lock:
            rows = self._all()
            changed = 0
            kept = []
            for row in rows:
                new = erased(row, wanted, keys) if ours(row.memory_scope) else None
                changed += new is not None
                kept.append(row if new is None else new)
            if not changed:
                return 0
            self._rewrite(kept)
        return changed

    def _rewrite(self, rows: list[AuditEntry]) -> None:
        """Keep ``rows`` in place of every row: the file replaced whole (written aside, then moved)."""
        if self.path is None:
            self._rows = rows
            return
        tmp = self.path.with_name(self.path.name + ".tmp")
        try:
            tmp.write_text("".join(json.dumps(_row_dict(r), ensure_ascii=False) + "\n" for r in rows), "utf-8")
            tmp.replace(self.path)
        except OSError as exc:
            raise StorageError(f"cannot rewrite audit file {self.path}: {exc}") from exc

    def _all(self) -> list[AuditEntry]:
        if self.path is None or not self.path.exists():
            return list(self._rows)
        out = []
        for n, line in enumerate(jsondoc.lines(self.path.read_text("utf-8")), start=1):
            try:
                out.append(AuditEntry(**{**json.loads(line), "seq": n}))
            except (ValueError, TypeError):
                continue  # a torn last line from a crash is skipped, not fatal
        return out

    def query(self, query: AuditQuery) -> list[AuditEntry]:
        query = validate_query(query)
        with self._lock:
            rows = self._all()
        picked = [
            r for r in rows
            if (query.action is None or r.action == query.action)
            and (query.origin is None or r.origin == query.origin)
            and (query.memory is None or query.memory in (r.memory_id, r.memory_key))
            and (query.since is None or r.at >= query.since)
            and (query.until is None or r.at <= query.until)
            and (query.scopes is None or r.memory_scope in query.scopes)
        ]
        return list(reversed(picked))[: query.limit]

    def forgotten(self, ids: Sequence[str], action: str = "forgotten") -> set[tuple[str, str | None]]:
        wanted = set(ids)
        if not wanted:
            return set()
        with self._lock:
            rows = self._all()
        return {(r.memory_id, r.memory_scope) for r in rows
                if r.action == action and r.memory_id is not None and r.memory_id in wanted}

    def forgotten_by_origin_id(self, kind: str, origin_id: str) -> set[tuple[str, str | None]]:
        with self._lock:
            rows = self._all()
        out = set()
        for r in rows:
            origin = ((r.detail or {}).get("metadata") or {}).get(kind) if r.action == "forgotten" else None
            if r.memory_id is not None and isinstance(origin, dict) and origin.get("id") == origin_id:
                out.add((r.memory_id, r.memory_scope))
        return out


def _row_dict(row: AuditEntry) -> dict[str, Any]:
    return {"at": row.at, "action": row.action, "origin": row.origin, "reason": row.reason,
            "actor_scope": row.actor_scope, "memory_id": row.memory_id, "memory_key": row.memory_key,
            "memory_scope": row.memory_scope, "detail": row.detail}
